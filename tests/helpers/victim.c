/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-victim: a process that allocates like the hog and answers the
 * shed and kill signals in one of several ways, for the tests of shedding and
 * graceful kills.
 *
 *   oomkit-victim MIB MODE [FILE]
 *
 * Allocates MIB mebibytes in 1 MiB steps, touching every page (1 ms apart),
 * then waits.  MODE says what it does with SIGUSR1 and SIGTERM:
 *
 *   shed     SIGUSR1 frees half of what it holds (the most recent half),
 *            writes "shed KIB\n" to FILE, and it allocates nothing more;
 *   ignore   SIGUSR1 and SIGTERM are ignored;
 *   deaf     SIGUSR1 and SIGTERM are caught, and nothing is done about them;
 *   term     SIGTERM writes "term\n" to FILE and exits 0;
 *   grow     like ignore, but it never stops allocating (1 MiB every 1 ms
 *            up to MIB, then again from the start: a leak).
 *
 * Everything a handler does is async-signal-safe: it sets a flag (shed), or
 * writes a file and exits (term).  The main loop does the freeing.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STEP (1u << 20)
#define MAX_STEPS 4096

static volatile sig_atomic_t shed_asked;
static const char *file;

static void put_file(const char *text)
{
	if (!file)
		return;
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	(void)!write(fd, text, strlen(text));
	close(fd);
}

static void on_usr1(int sig)
{
	(void)sig;
	shed_asked = 1;
}

static void on_nothing(int sig)
{
	(void)sig;
}

static void on_term(int sig)
{
	(void)sig;
	put_file("term\n");
	_exit(0);
}

static char *chunks[MAX_STEPS];
static size_t n_chunks;

static void touch(char *p)
{
	long page = sysconf(_SC_PAGESIZE);
	for (size_t off = 0; off < STEP; off += (size_t)page)
		p[off] = 1;
}

/* Frees the newer half of the chunks and says how much went. */
static void shed(void)
{
	size_t keep = n_chunks / 2;
	char text[64];

	for (size_t i = keep; i < n_chunks; i++)
		munmap(chunks[i], STEP);
	snprintf(text, sizeof(text), "shed %zu\n", (n_chunks - keep) * (STEP >> 10));
	n_chunks = keep;
	put_file(text);
}

static int allocate(size_t steps, int forever)
{
	for (size_t i = 0;; i++) {
		if (shed_asked) {
			shed();
			return 0;
		}
		if (i == steps) {
			if (!forever)
				return 0;
			for (size_t k = 0; k < n_chunks; k++)
				munmap(chunks[k], STEP);
			n_chunks = 0;
			i = 0;
		}
		char *p = mmap(NULL, STEP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		touch(p);
		chunks[n_chunks++] = p;
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s MIB shed|ignore|deaf|term|grow [FILE]\n", argv[0]);
		return 2;
	}
	size_t mib = strtoul(argv[1], NULL, 10);
	const char *mode = argv[2];
	file = argc > 3 ? argv[3] : NULL;
	if (mib == 0 || mib > MAX_STEPS)
		mib = MAX_STEPS;

	struct sigaction sa = {0};
	sigemptyset(&sa.sa_mask);
	if (strcmp(mode, "shed") == 0) {
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
	} else if (strcmp(mode, "term") == 0) {
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, NULL);
	} else if (strcmp(mode, "deaf") == 0) {
		sa.sa_handler = on_nothing;
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	} else if (strcmp(mode, "ignore") == 0 || strcmp(mode, "grow") == 0) {
		signal(SIGUSR1, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
	} else {
		fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], mode);
		return 2;
	}
	if (allocate(mib, strcmp(mode, "grow") == 0) != 0)
		return 1;
	for (;;) {
		pause();
		if (shed_asked && n_chunks) {
			shed_asked = 0;
			shed();
		}
	}
}
