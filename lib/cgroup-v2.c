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
 * And cgroup.kill, which kills a whole subtree at once.
 *
 * v2 has no under_oom either: this file says when a cgroup is out of
 * memory (oomkit__v2_oom_rule).  Near its limit it is, unless it can still
 * swap (memory.swap.current below memory.swap.max, the machine's swap not
 * full) and its own memory.pressure does not say it is stuck: held at
 * memory.high with swap, a cgroup swaps as the kernel would let it at
 * memory.max, and the kernel's killer would not have acted.  Nothing here
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
	/* The swap rule's (absent without swap accounting, or PSI). */
	w->swapfd = openat(w->dirfd, "memory.swap.current", O_RDONLY | O_CLOEXEC);
	w->swapmaxfd = openat(w->dirfd, "memory.swap.max", O_RDONLY | O_CLOEXEC);
	w->pressurefd = openat(w->dirfd, "memory.pressure", O_RDONLY | O_CLOEXEC);
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
	 * only once per OOM: while one is pending, more throttling is the same
	 * OOM -- unless it was pending already when taken over (a handler
	 * restarted in an OOM), and the handler has not heard of it. */
	if (killed_or_max)
		return 1;
	return high && w->taken_over && (w->state == 0 || w->untold);
}

/* memory.events (already read into buf) into m. */
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
	return 0;
}

uint64_t oomkit__v2_clear_level(uint64_t max)
{
	uint64_t margin = hold_margin(max);
	/* Where the swap rule starts to look: the hold's margin and a quarter of
	 * it below memory.max.  Held, that is where memory.high throttles the
	 * cgroup (reclaim's jitter in the quarter); handed to the kernel, it
	 * stays there until the kernel has reclaimed or killed. */
	return max > margin + margin / 4 ? max - margin - margin / 4 : 0;
}

static bool near_limit(uint64_t usage, uint64_t limit)
{
	return limit != OOMKIT_UNLIMITED && usage >= oomkit__v2_clear_level(limit);
}

enum oomkit_oom_cause oomkit__v2_oom_rule(const struct oomkit__v2_oom_input *in)
{
	if (!near_limit(in->usage_bytes, in->limit_bytes))
		return OOMKIT_OOM_CAUSE_NONE;
	if (in->at_limit)
		return OOMKIT_OOM_CAUSE_LIMIT;
	/* Nothing to swap to: at its limit is out of memory, as it always was. */
	if (!in->swap_total_bytes || (in->swap_known && in->swap_max_bytes == 0))
		return OOMKIT_OOM_CAUSE_NO_SWAP;
	/* Its own swap limit first: that one is the job's, not the machine's. */
	if (in->swap_known && in->swap_max_bytes != OOMKIT_UNLIMITED &&
	    (in->swap_bytes >= in->swap_max_bytes ||
	     in->swap_max_bytes - in->swap_bytes < OOMKIT__SWAP_SLACK))
		return OOMKIT_OOM_CAUSE_SWAP_MAX;
	if (in->swap_free_bytes < OOMKIT__SWAP_SLACK)
		return OOMKIT_OOM_CAUSE_SWAP_FULL;
	/* It can swap, but gets nowhere: every task of it stalled on memory
	 * (pages swapped out and straight back in, or memory that cannot be
	 * swapped at all). */
	if (in->full_x100 >= (int64_t)OOMKIT__STALL_PERCENT * 100)
		return OOMKIT_OOM_CAUSE_STALLED;
	return OOMKIT_OOM_CAUSE_NONE;
}

static int pread_u64(int fd, uint64_t *ret)
{
	char buf[64];
	int n = oomkit__pread_all(fd, buf, sizeof(buf));
	return n < 0 ? n : oomkit__parse_u64(buf, (size_t)n, ret);
}

/* The machine's swap into in; unreadable, it counts as none (the rule of
 * old). */
static void machine_swap(const oomkit_ctx *ctx, struct oomkit__v2_oom_input *in)
{
	if (oomkit__swap_space(ctx->meminfo_fd, &in->swap_total_bytes, &in->swap_free_bytes) < 0)
		in->swap_total_bytes = in->swap_free_bytes = 0;
}

/* The rule's verdict and what it read, into m. */
static void apply_rule(const struct oomkit__v2_oom_input *in, uint64_t span_ns,
		       struct oomkit_cgroup_memory *m)
{
	enum oomkit_oom_cause cause = oomkit__v2_oom_rule(in);

	m->under_oom = cause != OOMKIT_OOM_CAUSE_NONE;
	m->oom_cause = cause;
	m->swap_bytes = in->swap_known ? in->swap_bytes : 0;
	m->swap_max_bytes = in->swap_known ? in->swap_max_bytes : OOMKIT_UNLIMITED;
	m->swap_free_bytes = in->swap_free_bytes;
	m->stall_full_x100 = in->full_x100 < 0 ? 0 : (uint32_t)in->full_x100;
	m->stall_span_ms = in->full_x100 < 0 ? 0 : span_ns / 1000000u;
}

/* The rule for a cgroup known by its directory: no stall history.  Its swap
 * is read only near its limit, where the rule needs it. */
static void dir_rule(const oomkit_ctx *ctx, int dirfd, struct oomkit_cgroup_memory *m)
{
	struct oomkit__v2_oom_input in = {
	    .usage_bytes = m->usage_bytes, .limit_bytes = m->limit_bytes, .full_x100 = -1};

	if (near_limit(m->usage_bytes, m->limit_bytes)) {
		in.swap_known = oomkit__read_u64_at(dirfd, "memory.swap.current", &in.swap_bytes) >= 0 &&
				oomkit__read_u64_at(dirfd, "memory.swap.max", &in.swap_max_bytes) >= 0;
		machine_swap(ctx, &in);
	}
	apply_rule(&in, 0, m);
}

/* One more sample of the watch's memory.pressure "full" total: the share of
 * the last OOMKIT__STALL_SPAN_NS it stalled, -1 while not known. */
static int64_t stall_sample(struct oomkit_watch *w, uint64_t *ret_span_ns)
{
	struct oomkit__psi_line full;
	char buf[256];
	int n = oomkit__pread_all(w->pressurefd, buf, sizeof(buf));

	if (n < 0 || oomkit__parse_psi_line(buf, (size_t)n, "full", &full) < 0)
		return -1;
	return oomkit__stall_share(&w->stall, oomkit__now_ns(), full.total_us, OOMKIT__STALL_SPAN_NS,
				   ret_span_ns);
}

/* The rule for a watched cgroup, through its open fds, with its stall
 * samples (the handler's loop and the guardian each keep their own). */
static void watch_rule(const oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_cgroup_memory *m)
{
	struct oomkit__v2_oom_input in = {.usage_bytes = m->usage_bytes,
					  .limit_bytes = m->limit_bytes,
					  .at_limit = w->at_limit,
					  .full_x100 = -1};
	uint64_t span_ns = 0;

	if (!w->at_limit && near_limit(m->usage_bytes, m->limit_bytes)) {
		in.swap_known = pread_u64(w->swapfd, &in.swap_bytes) >= 0 &&
				pread_u64(w->swapmaxfd, &in.swap_max_bytes) >= 0;
		machine_swap(ctx, &in);
		if (in.swap_total_bytes)
			in.full_x100 = stall_sample(w, &span_ns);
	}
	apply_rule(&in, span_ns, m);
}

/* Every counter but under_oom and the rule's. */
static int read_memory(int dirfd, struct oomkit_cgroup_memory *ret)
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

int oomkit__v2_memory(oomkit_ctx *ctx, int dirfd, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m;
	int r = read_memory(dirfd, &m);
	if (r < 0)
		return r;
	dir_rule(ctx, dirfd, &m);
	*ret = m;
	return 0;
}

int oomkit__v2_event_memory(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m = {0};
	char buf[512];
	int r;

	if (w->usagefd < 0 || w->limitfd < 0 || w->oomfd < 0)
		return oomkit__v2_memory(ctx, w->dirfd, ret);
	if ((r = pread_u64(w->usagefd, &m.usage_bytes)) < 0 ||
	    (r = pread_u64(w->limitfd, &m.limit_bytes)) < 0 ||
	    (r = events_into(buf, oomkit__pread_all(w->oomfd, buf, sizeof(buf)), &m)) < 0)
		return r;
	watch_rule(ctx, w, &m);
	*ret = m;
	return 0;
}

static void oom_state_of(const struct oomkit_cgroup_memory *m, struct oomkit__oom_control *ret)
{
	ret->under_oom = m->under_oom;
	ret->oom_kill_disable = m->oom_kill_disable;
	ret->oom_kill = m->oom_kill;
}

int oomkit__v2_oom_state(oomkit_ctx *ctx, int dirfd, struct oomkit__oom_control *ret)
{
	struct oomkit_cgroup_memory m;
	int r = oomkit__v2_memory(ctx, dirfd, &m);
	if (r < 0)
		return r;
	oom_state_of(&m, ret);
	return 0;
}

int oomkit__v2_watch_oom_state(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__oom_control *ret)
{
	struct oomkit_cgroup_memory m;
	int r = read_memory(w->dirfd, &m);
	if (r < 0)
		return r;
	watch_rule(ctx, w, &m);
	oom_state_of(&m, ret);
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
