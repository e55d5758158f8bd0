/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-hostile: a hog that hides, as a job's owner would, for the tests of
 * a daemon that must still see it and kill it.
 *
 *   oomkit-hostile [-t THREADS] [-x now|late] [-n NAME] [-s] [-r READY] MIB [STEP_KIB] [PAUSE_US]
 *
 *   -n NAME   takes NAME as its comm (prctl(PR_SET_NAME)) before anything
 *   -s        leads a session of its own (setsid())
 *   -t N      N threads allocate the MIB between them (default 0: the
 *             process itself does)
 *   -x now    the leader calls pthread_exit() as soon as the threads run:
 *             it is a zombie the whole time they allocate
 *   -x late   the leader exits once the threads have allocated half
 *   -r FILE   "ready" is written to FILE once the whole MIB is touched
 *
 * Memory is allocated in steps of STEP_KIB (default 1024), every page
 * touched, PAUSE_US microseconds between steps; then it waits for a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static size_t step_bytes = 1u << 20, share_bytes;
static useconds_t pause_us;
static unsigned n_threads;
static atomic_size_t allocated;
static size_t total_bytes;
static const char *ready_file;

static void touch(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t done = 0; done < bytes; done += step_bytes) {
		char *p = mmap(NULL, step_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			_exit(1);
		}
		for (size_t off = 0; off < step_bytes; off += (size_t)page)
			p[off] = 1;
		size_t now = atomic_fetch_add(&allocated, step_bytes) + step_bytes;
		if (ready_file && now >= total_bytes && now - step_bytes < total_bytes) {
			int fd = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || write(fd, "ready\n", 6) != 6)
				_exit(1);
			close(fd);
		}
		if (pause_us)
			usleep(pause_us);
	}
}

static void wait_forever(void)
{
	for (;;)
		pause();
}

static void *thread_main(void *arg)
{
	(void)arg;
	touch(share_bytes);
	wait_forever();
	return NULL;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-t THREADS] [-x now|late] [-n NAME] [-s] [-r READY] MIB [STEP_KIB] [PAUSE_US]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *leader_exit = NULL;
	int c;

	while ((c = getopt(argc, argv, "t:x:n:sr:")) != -1) {
		switch (c) {
		case 't':
			n_threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'x':
			leader_exit = optarg;
			if (strcmp(optarg, "now") != 0 && strcmp(optarg, "late") != 0)
				usage(argv[0]);
			break;
		case 'n':
			if (prctl(PR_SET_NAME, optarg) < 0) {
				perror("prctl");
				return 1;
			}
			break;
		case 's':
			if (setsid() < 0) {
				perror("setsid");
				return 1;
			}
			break;
		case 'r':
			ready_file = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind >= argc || (leader_exit && n_threads == 0))
		usage(argv[0]);
	total_bytes = strtoull(argv[optind], NULL, 10) << 20;
	if (optind + 1 < argc && strtoul(argv[optind + 1], NULL, 10) > 0)
		step_bytes = strtoul(argv[optind + 1], NULL, 10) << 10;
	if (optind + 2 < argc)
		pause_us = (useconds_t)strtoul(argv[optind + 2], NULL, 10);

	if (n_threads == 0) {
		touch(total_bytes);
		wait_forever();
	}
	share_bytes = total_bytes / n_threads;
	share_bytes -= share_bytes % step_bytes;
	total_bytes = share_bytes * n_threads;
	for (unsigned i = 0; i < n_threads; i++) {
		pthread_t t;
		int r = pthread_create(&t, NULL, thread_main, NULL);
		if (r != 0) {
			errno = r;
			perror("pthread_create");
			return 1;
		}
	}
	if (leader_exit && strcmp(leader_exit, "late") == 0)
		while (atomic_load(&allocated) < total_bytes / 2)
			usleep(1000);
	if (leader_exit)
		pthread_exit(NULL);
	wait_forever();
}
