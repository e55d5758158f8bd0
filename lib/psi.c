/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * psi.c - pressure stall information triggers: /proc/pressure/memory for the
 * whole machine and memory.pressure for a cgroup v2 cgroup.  A trigger is a
 * line "some|full STALL_US WINDOW_US" written to the file kept open; the
 * kernel then reports POLLPRI at most once a window while tasks stall on
 * memory longer than STALL_US within WINDOW_US.  Nothing here allocates.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* How the three pressure levels map onto stall time within a 2 s window:
 * low, some task stalled 10% of the time; medium, 30%; critical, every
 * task stalled 30% of the time (nothing made progress).  The window is a
 * multiple of 2 s because that is all the kernel accepts from a process
 * without CAP_SYS_RESOURCE (seen here even as root in a container). */
static const char *const triggers[] = {
    [OOMKIT_PRESSURE_LOW] = "some 200000 2000000",
    [OOMKIT_PRESSURE_MEDIUM] = "some 600000 2000000",
    [OOMKIT_PRESSURE_CRITICAL] = "full 600000 2000000",
};

int oomkit__psi_register(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	int fd;
	if (w->level > OOMKIT_PRESSURE_CRITICAL)
		return -EINVAL;
	/* The root cgroup has no memory.pressure: the machine's is in /proc. */
	if (!w->cgroup[0] || w->system) {
		fd = openat(ctx->proc_fd, "pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	} else {
		int dir = oomkit__pressure_dir(ctx, w->cgroup);
		if (dir < 0)
			return dir;
		fd = openat(dir, "memory.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		close(dir);
	}
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	const char *t = triggers[w->level];
	/* The trigger string must be written with its terminating NUL. */
	if (write(fd, t, strlen(t) + 1) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	w->efd = fd;
	w->epoll_events = EPOLLPRI | EPOLLERR;
	return 0;
}
