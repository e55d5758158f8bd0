/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-reread: a program that rereads a file over and over, for the
 * file-cache thrashing check of the systemd guest.
 *
 *   oomkit-reread FILE
 *
 * Maps FILE and reads one byte of each page, from the first to the last and
 * again, until a signal ends it.  The map is advised MADV_RANDOM, so each
 * miss reads one page, not a window around it.  A file a little larger
 * than the page cache it gets is the page cache's worst case: each page is
 * thrown out shortly before it is needed again, every read misses, and the
 * kernel counts each wait for a page it threw out so recently (a refault
 * within the working set) as a memory stall (PSI), as it does for a
 * desktop's programs whose code was thrown out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	uint64_t pages, sum = 0;
	long page = sysconf(_SC_PAGESIZE);
	const volatile unsigned char *map;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: oomkit-reread FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < page) {
		fprintf(stderr, "oomkit-reread: %s: %s\n", argv[1], fd < 0 ? strerror(errno) : "too small");
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("oomkit-reread: mmap");
		return 1;
	}
	(void)madvise((void *)map, (size_t)st.st_size, MADV_RANDOM);
	pages = (uint64_t)st.st_size / (uint64_t)page;
	for (uint64_t i = 0;; i = (i + 1) % pages)
		sum += map[i * (uint64_t)page];
	return (int)sum;
}
