/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-pidfd-probe: exits 0 if pidfd_open(2) works here, 1 if not.  Run
 * under valgrind, it tells whether that valgrind knows the system call:
 * liboomkit's guardian and kills cannot work without it (valgrind 3.19, the
 * one of Debian 12, answers ENOSYS).
 */
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int main(void)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);
	return fd >= 0 ? 0 : 1;
}
