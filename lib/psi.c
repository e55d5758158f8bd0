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
	char own[48];
	const char *t = triggers[w->level];
	if (w->stall_us) {
		snprintf(own, sizeof(own), "some %u %u", (unsigned)w->stall_us, (unsigned)w->window_us);
		t = own;
	}
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

OOMKIT__EXPORT int oomkit_pressure_read(oomkit_ctx *ctx, const char *cgroup,
					struct oomkit_pressure *ret_pressure)
{
	struct oomkit__psi_line some, full = {0};
	struct oomkit_pressure p = {0};
	int n, dir = -1;

	if (!ctx || !cgroup || !ret_pressure)
		return -EINVAL;
	if (!cgroup[0]) {
		n = oomkit__read_file_at(ctx->proc_fd, "pressure/memory", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
	} else {
		if ((dir = oomkit__pressure_dir(ctx, cgroup)) < 0)
			return dir;
		n = oomkit__read_file_at(dir, "memory.pressure", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
		close(dir);
	}
	if (n < 0)
		return n == -ENOENT ? -EOPNOTSUPP : n;
	int r = oomkit__parse_psi_line(ctx->iobuf2, (size_t)n, "some", &some);
	if (r < 0)
		return r;
	/* A file without a "full" line is taken as no full stall. */
	r = oomkit__parse_psi_line(ctx->iobuf2, (size_t)n, "full", &full);
	if (r < 0 && r != -ENOENT)
		return r;
	p.some_total_us = some.total_us;
	p.full_total_us = full.total_us;
	p.some_avg10_x100 = some.avg10_x100;
	p.full_avg10_x100 = full.avg10_x100;
	*ret_pressure = p;
	return 0;
}

static unsigned stall_slot(const struct oomkit__stall *st, unsigned back)
{
	return (st->next + OOMKIT__STALL_SAMPLES - 1 - back) % OOMKIT__STALL_SAMPLES;
}

int64_t oomkit__stall_share(struct oomkit__stall *st, uint64_t now_ns, uint64_t full_us, uint64_t span_ns,
			    uint64_t *ret_span_ns)
{
	uint64_t step_ns = span_ns / (OOMKIT__STALL_SAMPLES / 2);

	/* A clock or a total that went back (a cgroup made again under the
	 * name): what was sampled says nothing of this one. */
	if (st->n && (now_ns < st->s[stall_slot(st, 0)].at_ns || full_us < st->s[stall_slot(st, 0)].full_us))
		st->n = st->next = 0;
	if (!st->n || now_ns - st->s[stall_slot(st, 0)].at_ns >= step_ns) {
		st->s[st->next].at_ns = now_ns;
		st->s[st->next].full_us = full_us;
		st->next = (st->next + 1) % OOMKIT__STALL_SAMPLES;
		if (st->n < OOMKIT__STALL_SAMPLES)
			st->n++;
	}
	for (unsigned back = 0; back < st->n; back++) {
		unsigned i = stall_slot(st, back);
		uint64_t dt_ns = now_ns - st->s[i].at_ns;
		if (dt_ns < span_ns || dt_ns == 0)
			continue;
		/* At most 100 %: the total grows by at most the time passed. */
		unsigned __int128 x =
		    (unsigned __int128)(full_us - st->s[i].full_us) * 1000u * 10000u / dt_ns;
		*ret_span_ns = dt_ns;
		return x > 10000 ? 10000 : (int64_t)x;
	}
	return -1;
}
