/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-hog: a process that allocates and touches memory, for tests, the demo
 * and the benchmarks.
 *
 *   oomkit-hog MIB [STEP_KIB] [PAUSE_US] [STAMP_FILE]
 *
 * Allocates MIB mebibytes in steps of STEP_KIB (default 1024), touching every
 * page, sleeping PAUSE_US microseconds between steps (default 0), then waits
 * for a signal forever.  With STAMP_FILE (a file of at least 16 bytes, shared
 * with the measuring process through mmap), the CLOCK_MONOTONIC time before
 * each page is touched and the number of pages touched so far are stored
 * there, so a benchmark can tell when the last touch happened.
 *
 * With OOMKIT_HOG_FILL=PCT in the environment, the first PCT percent of each
 * page is filled with pseudo-random bytes instead of one byte being written:
 * memory that zram compresses about as much as real data (50: to a little
 * over half) rather than to almost nothing.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct stamp {
	volatile uint64_t last_touch_ns;
	volatile uint64_t pages;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct stamp *map_stamp(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	void *p = mmap(NULL, sizeof(struct stamp), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MIB [STEP_KIB] [PAUSE_US] [STAMP_FILE]\n", argv[0]);
		return 2;
	}
	size_t mib = strtoul(argv[1], NULL, 10);
	size_t step_kib = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
	useconds_t pause_us = argc > 3 ? (useconds_t)strtoul(argv[3], NULL, 10) : 0;
	struct stamp *stamp = argc > 4 ? map_stamp(argv[4]) : NULL;
	long page = sysconf(_SC_PAGESIZE);
	if (step_kib == 0)
		step_kib = 1024;

	const char *fill_env = getenv("OOMKIT_HOG_FILL");
	size_t fill = fill_env ? (size_t)page * (strtoul(fill_env, NULL, 10) % 101) / 100 : 0;
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t total = mib << 20, step = step_kib << 10;
	for (size_t done = 0; done < total; done += step) {
		char *p = mmap(NULL, step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (size_t off = 0; off < step; off += (size_t)page) {
			if (stamp) {
				stamp->last_touch_ns = now_ns();
				stamp->pages++;
			}
			p[off] = 1;
			/* xorshift64: cheap, and nothing a compressor finds. */
			for (size_t i = 0; i + 8 <= fill; i += 8) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				memcpy(p + off + i, &x, 8);
			}
		}
		if (pause_us)
			usleep(pause_us);
	}
	for (;;)
		pause();
}
