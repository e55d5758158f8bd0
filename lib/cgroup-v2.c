/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup-v2.c - the cgroup v2 memory controller: memory.events(.local)
 * notifications (EPOLLPRI), memory.current/max/high/peak, and the v2 form of
 * "hold the kernel OOM killer off".
 *
 * v2 has no oom_kill_disable.  Its counterpart is memory.high below
 * memory.max: at memory.high the kernel throttles and reclaims but never
 * kills, and memory.events.local counts "high" each time it does.  Holding a
 * cgroup therefore sets memory.high a margin below memory.max; the handler is
 * told through memory.events.local, and handing the OOM to the kernel sets
 * memory.high back to "max", so the kernel OOM killer decides at memory.max.
 * And cgroup.kill, which kills a whole subtree at once.  Nothing here
 * allocates.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The margin between memory.high and memory.max while held: 1/8 of the
 * limit, at least 1 MiB and at most 256 MiB.  memory.high is no wall: the
 * kernel's throttling penalty grows with the square of the overage, and with
 * a margin of 1/32 a fast allocator in the guest crossed it and reached
 * memory.max (a kernel kill) in 0.3 s; at 1/8 the penalty near memory.max
 * reaches the kernel's 2 s cap per allocation, which holds it. */
static uint64_t hold_margin(uint64_t max)
{
	uint64_t m = max / 8;
	if (m < (1u << 20))
		m = 1u << 20;
	if (m > (256u << 20))
		m = 256u << 20;
	return m;
}

static int read_events(int fd, struct oomkit__memory_events *ret)
{
	char buf[512];
	int n = oomkit__pread_all(fd, buf, sizeof(buf));
	if (n < 0)
		return n;
	return oomkit__parse_memory_events(buf, (size_t)n, ret);
}

int oomkit__v2_register(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	if (w->kind == OOMKIT_EVENT_THRESHOLD)
		/* v2 has no usage threshold notification; memory.high would throttle. */
		return -EOPNOTSUPP;
	if (w->kind == OOMKIT_EVENT_PRESSURE)
		return oomkit__psi_register(ctx, w);
	if (w->kind != OOMKIT_EVENT_OOM)
		return -EINVAL;
	/* .local: this cgroup's own limit, not a descendant's. */
	int fd = openat(w->dirfd, "memory.events.local", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = read_events(fd, &w->events);
	if (r < 0) {
		close(fd);
		return r;
	}
	w->efd = fd;
	w->epoll_events = EPOLLPRI | EPOLLERR;
	/* What an event reads, kept open; best effort (read by name otherwise). */
	w->usagefd = openat(w->dirfd, "memory.current", O_RDONLY | O_CLOEXEC);
	w->limitfd = openat(w->dirfd, "memory.max", O_RDONLY | O_CLOEXEC);
	w->oomfd = openat(w->dirfd, "memory.events", O_RDONLY | O_CLOEXEC);
	return 0;
}

int oomkit__v2_consume(struct oomkit_watch *w)
{
	struct oomkit__memory_events now;
	if (w->kind == OOMKIT_EVENT_PRESSURE)
		return 1; /* a PSI trigger is consumed by the poll that reported it */
	if (read_events(w->efd, &now) < 0)
		return 0;
	struct oomkit__memory_events prev = w->events;
	w->events = now;
	/* The kernel coalesces notifications: compare counters, not wake-ups. */
	bool killed_or_max = now.max > prev.max || now.oom > prev.oom || now.oom_kill > prev.oom_kill;
	bool high = now.high > prev.high;
	/* "high" means an OOM only while we hold the cgroup at memory.high, and
	 * only once per OOM: while one is pending, more throttling is the same OOM. */
	if (killed_or_max)
		return 1;
	return high && w->taken_over && w->state == 0;
}

/* memory.events (already read into buf) into m, and under_oom from usage
 * and limit. */
static int events_into(const char *buf, int n, struct oomkit_cgroup_memory *m)
{
	struct oomkit__memory_events ev;
	int r;

	if (n < 0)
		return n;
	if ((r = oomkit__parse_memory_events(buf, (size_t)n, &ev)) < 0)
		return r;
	m->failcnt = ev.max;
	m->oom_kill = ev.oom_kill;
	m->events_high = ev.high;
	m->events_max = ev.max;
	m->events_oom = ev.oom;
	m->events_oom_kill = ev.oom_kill;
	/* v2 has no under_oom flag.  A cgroup counts as out of memory while its
	 * usage is within the hold margin (plus a quarter of it for reclaim's
	 * jitter) of memory.max: held, that is where memory.high throttles it;
	 * handed to the kernel, it stays there until the kernel has killed. */
	if (m->limit_bytes != OOMKIT_UNLIMITED) {
		uint64_t margin = hold_margin(m->limit_bytes);
		m->under_oom = m->usage_bytes + margin + margin / 4 >= m->limit_bytes;
	}
	return 0;
}

int oomkit__v2_memory(int dirfd, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m = {0};
	uint64_t high;
	char buf[512];
	int r;
	if ((r = oomkit__read_u64_at(dirfd, "memory.current", &m.usage_bytes)) < 0 ||
	    (r = oomkit__read_u64_at(dirfd, "memory.max", &m.limit_bytes)) < 0 ||
	    (r = oomkit__read_u64_at(dirfd, "memory.high", &high)) < 0)
		return r;
	/* memory.peak arrived in 5.19; without it the peak is unknown (0). */
	(void)oomkit__read_u64_at(dirfd, "memory.peak", &m.max_usage_bytes);
	if ((r = events_into(buf, oomkit__read_file_at(dirfd, "memory.events", buf, sizeof(buf)), &m)) < 0)
		return r;
	uint64_t group = 0;
	/* memory.oom.group arrived in 4.19; without it there is no group kill. */
	(void)oomkit__read_u64_at(dirfd, "memory.oom.group", &group);
	m.oom_group = group == 1;
	m.oom_kill_disable = high != OOMKIT_UNLIMITED && high < m.limit_bytes;
	*ret = m;
	return 0;
}

static int pread_u64(int fd, uint64_t *ret)
{
	char buf[64];
	int n = oomkit__pread_all(fd, buf, sizeof(buf));
	return n < 0 ? n : oomkit__parse_u64(buf, (size_t)n, ret);
}

int oomkit__v2_event_memory(struct oomkit_watch *w, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m = {0};
	char buf[512];
	int r;

	if (w->usagefd < 0 || w->limitfd < 0 || w->oomfd < 0)
		return oomkit__v2_memory(w->dirfd, ret);
	if ((r = pread_u64(w->usagefd, &m.usage_bytes)) < 0 ||
	    (r = pread_u64(w->limitfd, &m.limit_bytes)) < 0 ||
	    (r = events_into(buf, oomkit__pread_all(w->oomfd, buf, sizeof(buf)), &m)) < 0)
		return r;
	*ret = m;
	return 0;
}

uint64_t oomkit__v2_clear_level(uint64_t max)
{
	uint64_t margin = hold_margin(max);
	/* The complement of oomkit__v2_memory()'s under_oom. */
	return max > margin + margin / 4 ? max - margin - margin / 4 : 0;
}

int oomkit__v2_oom_state(int dirfd, struct oomkit__oom_control *ret)
{
	struct oomkit_cgroup_memory m;
	int r = oomkit__v2_memory(dirfd, &m);
	if (r < 0)
		return r;
	ret->under_oom = m.under_oom;
	ret->oom_kill_disable = m.oom_kill_disable;
	ret->oom_kill = m.oom_kill;
	return 0;
}

static int write_bytes(int dirfd, const char *file, uint64_t v)
{
	char buf[32] = "max";
	size_t n = 0;
	if (v != OOMKIT_UNLIMITED)
		(void)oomkit__append_u64(buf, sizeof(buf), &n, v);
	return oomkit__write_file_at(dirfd, file, buf);
}

int oomkit__v2_hold(int dirfd, bool hold)
{
	uint64_t max;
	int r = oomkit__read_u64_at(dirfd, "memory.max", &max);
	if (r < 0)
		return r;
	if (!hold)
		return write_bytes(dirfd, "memory.high", OOMKIT_UNLIMITED);
	/* Without a limit there is nothing for the kernel killer to act at. */
	if (max == OOMKIT_UNLIMITED)
		return -EINVAL;
	return write_bytes(dirfd, "memory.high", max - hold_margin(max));
}

int oomkit__v2_set_limit(int dirfd, uint64_t limit_bytes)
{
	uint64_t high;
	int r = oomkit__read_u64_at(dirfd, "memory.high", &high);
	if (r < 0)
		return r;
	bool held = high != OOMKIT_UNLIMITED;
	/* Raise memory.max before memory.high and lower memory.high before
	 * memory.max, so that high stays below max throughout. */
	if (held && limit_bytes != OOMKIT_UNLIMITED && limit_bytes - hold_margin(limit_bytes) < high &&
	    (r = write_bytes(dirfd, "memory.high", limit_bytes - hold_margin(limit_bytes))) < 0)
		return r;
	if ((r = write_bytes(dirfd, "memory.max", limit_bytes)) < 0)
		return r;
	if (held)
		return write_bytes(dirfd, "memory.high",
				   limit_bytes == OOMKIT_UNLIMITED ? OOMKIT_UNLIMITED
								   : limit_bytes - hold_margin(limit_bytes));
	return 0;
}

/* Waits until cgroup.events says "populated 0"; the kernel notifies every
 * change of that file with POLLPRI. */
static int wait_unpopulated(int dirfd, uint64_t end_ns)
{
	char buf[256];
	uint64_t populated;
	int r, fd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		r = oomkit__pread_all(fd, buf, sizeof(buf));
		if (r >= 0)
			r = oomkit__parse_keyed_u64(buf, (size_t)r, "populated", &populated);
		if (r < 0 || populated == 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLPRI};
		r = poll(&p, 1, oomkit__ms_until(end_ns));
		if (r == 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (r < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	close(fd);
	return r < 0 ? r : 0;
}

int oomkit__v2_kill(int dirfd, uint64_t end_ns)
{
	/* cgroup.kill kills the whole subtree at once, forks included. */
	int r = oomkit__write_file_at(dirfd, "cgroup.kill", "1");
	return r < 0 ? r : wait_unpopulated(dirfd, end_ns);
}

/* What a job's owner may write in the job's own cgroup, as the kernel's
 * delegation model has it (Documentation/admin-guide/cgroup-v2.rst):
 *   cgroup.procs, cgroup.threads   move its processes within the job;
 *   cgroup.subtree_control         enable controllers (memory) for the
 *                                  cgroups it creates, within what the job
 *                                  was given.
 * Not memory.high (the handler's hold on the job), memory.max, .low, .min,
 * .swap.max, .zswap.max, memory.oom.group (how the kernel kills the job is
 * the handler's policy), cgroup.max.depth/descendants, cgroup.freeze,
 * cgroup.kill, cgroup.type, or any file a kernel adds later.  Events and
 * counters (memory.events, memory.pressure for reading) need no owner. */
const char *const oomkit__v2_delegated[] = {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control", NULL};
