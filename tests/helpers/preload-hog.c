/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * liboomkit-preload-hog.so: loaded with LD_PRELOAD into any program, it
 * allocates and touches OOMKIT_PRELOAD_MIB mebibytes before the program's
 * main() runs, and writes "ready" to OOMKIT_PRELOAD_READY once it has.  What
 * a user does to run a program oomkitd protects by its executable (exe:)
 * with memory of its own: /proc/PID/exe still names the program.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((constructor)) static void preload_hog(void)
{
	const char *mib = getenv("OOMKIT_PRELOAD_MIB"), *ready = getenv("OOMKIT_PRELOAD_READY");
	long page = sysconf(_SC_PAGESIZE);

	if (!mib)
		return;
	size_t total = strtoull(mib, NULL, 10) << 20, step = 1u << 20;
	for (size_t done = 0; done < total; done += step) {
		char *p = mmap(NULL, step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		for (size_t off = 0; off < step; off += (size_t)page)
			p[off] = 1;
		usleep(1000);
	}
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "ready\n", 6) != 6)
			_exit(1);
		close(fd);
	}
}
