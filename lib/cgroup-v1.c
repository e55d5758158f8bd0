/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup-v1.c - the cgroup v1 memory controller: memory.oom_control,
 * memory.usage_in_bytes thresholds and memory.pressure_level eventfds
 * registered through cgroup.event_control, the OOM origin, and the v1 memory
 * counters and limit.  Nothing here allocates.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The v1 "no limit" value is PAGE_COUNTER_MAX pages; anything this large means unlimited. */
#define V1_UNLIMITED_MIN 0x7FFFFFFFFFFF0000ull

/* ------------------------------------------------------------ events */

static const char *control_file(const struct oomkit_watch *w)
{
	switch (w->kind) {
	case OOMKIT_EVENT_OOM:
		return "memory.oom_control";
	case OOMKIT_EVENT_THRESHOLD:
		return "memory.usage_in_bytes";
	case OOMKIT_EVENT_PRESSURE:
		return "memory.pressure_level";
	default:
		return NULL;
	}
}

/* "<efd> <cfd>" and the argument after it for cgroup.event_control. */
static int control_line(const struct oomkit_watch *w, int efd, int cfd, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	int r = oomkit__append_u64(buf, size, &n, (uint64_t)efd);
	if (r == 0)
		r = oomkit__append(buf, size, &n, " ");
	if (r == 0)
		r = oomkit__append_u64(buf, size, &n, (uint64_t)cfd);
	if (r == 0 && w->kind == OOMKIT_EVENT_THRESHOLD && (r = oomkit__append(buf, size, &n, " ")) == 0)
		r = oomkit__append_u64(buf, size, &n, w->threshold_bytes);
	/* "hierarchy": pressure anywhere below counts, even when a descendant
	 * has a listener of its own. */
	if (r == 0 && w->kind == OOMKIT_EVENT_PRESSURE && (r = oomkit__append(buf, size, &n, " ")) == 0 &&
	    (r = oomkit__append(buf, size, &n, oomkit_pressure_level_name(w->level))) == 0)
		r = oomkit__append(buf, size, &n, ",hierarchy");
	return r;
}

static void open_if_closed(int dirfd, const char *name, int *fd)
{
	if (*fd < 0)
		*fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
}

/* The files an event reads, kept open.  Best effort: one that does not open
 * is read by name, as before. */
static void open_event_files(struct oomkit_watch *w)
{
	open_if_closed(w->dirfd, "memory.oom_control", &w->oomfd);
	open_if_closed(w->dirfd, "memory.usage_in_bytes", &w->usagefd);
	open_if_closed(w->dirfd, "memory.limit_in_bytes", &w->limitfd);
	/* A top-level memcg's parent is the root, which has no OOM of its own. */
	if (w->kind == OOMKIT_EVENT_OOM && w->cgroup && strchr(w->cgroup, '/'))
		open_if_closed(w->dirfd, "../memory.oom_control", &w->parentfd);
}

int oomkit__v1_register(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	const char *file = control_file(w);
	char line[128];
	int r, efd = -1, cfd = -1;

	(void)ctx;
	if (!file)
		return -EINVAL;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	cfd = openat(w->dirfd, file, O_RDONLY | O_CLOEXEC);
	if (cfd < 0) {
		r = -errno;
		goto fail;
	}
	r = control_line(w, efd, cfd, line, sizeof(line));
	if (r == 0)
		r = oomkit__write_file_at(w->dirfd, "cgroup.event_control", line);
	if (r < 0)
		goto fail;
	w->efd = efd;
	/* The kernel keeps its own reference to the eventfd; the control file
	 * serves afterwards to read it cheaply. */
	if (w->kind == OOMKIT_EVENT_OOM)
		w->oomfd = cfd;
	else if (w->kind == OOMKIT_EVENT_THRESHOLD)
		w->usagefd = cfd;
	else
		close(cfd);
	open_event_files(w);
	return 0;
fail:
	if (cfd >= 0)
		close(cfd);
	close(efd);
	return r;
}

int oomkit__v1_oom_control(oomkit_ctx *ctx, const char *rel, int fd, struct oomkit__oom_control *ret)
{
	char buf[256];
	int n = fd >= 0 ? oomkit__pread_all(fd, buf, sizeof(buf))
			: oomkit__cg_read(ctx, rel, "memory.oom_control", buf, sizeof(buf));
	if (n < 0)
		return n;
	return oomkit__parse_oom_control(buf, (size_t)n, ret);
}

int oomkit__v1_oom_origin(oomkit_ctx *ctx, const char *rel, char *out, size_t out_len)
{
	char cur[OOMKIT__PATH_MAX];
	size_t len = strlen(rel);

	if (len >= sizeof(cur) || len >= out_len)
		return -ENAMETOOLONG;
	memcpy(cur, rel, len + 1);
	memcpy(out, rel, len + 1);
	/* An OOM marks the memcg that hit its limit and every descendant
	 * under_oom, so the origin is the highest marked ancestor.  The root
	 * has no limit of its own and is never the origin of a memcg OOM. */
	for (;;) {
		char *slash = strrchr(cur, '/');
		if (!slash)
			break;
		*slash = 0;
		struct oomkit__oom_control oc;
		if (oomkit__v1_oom_control(ctx, cur, -1, &oc) < 0 || !oc.under_oom)
			break;
		memcpy(out, cur, strlen(cur) + 1);
	}
	return 0;
}

int oomkit__v1_watch_origin(oomkit_ctx *ctx, const struct oomkit_watch *w, char *out, size_t out_len)
{
	struct oomkit__oom_control oc;
	size_t len = strlen(w->cgroup);

	if (len >= out_len)
		return -ENAMETOOLONG;
	if (w->parentfd >= 0 && oomkit__v1_oom_control(ctx, "", w->parentfd, &oc) == 0 && !oc.under_oom) {
		/* The kernel marks a subtree under OOM, and unmarks it, top down
		 * and at once.  w was read under OOM before its parent was read
		 * out of it: either w's own limit was hit, or a parent's OOM ended
		 * between the two reads.  Read again after the parent, w tells. */
		if (oomkit__v1_oom_control(ctx, w->cgroup, w->oomfd, &oc) == 0 && !oc.under_oom)
			return -ESTALE;
		memcpy(out, w->cgroup, len + 1);
		return 0;
	}
	return oomkit__v1_oom_origin(ctx, w->cgroup, out, out_len);
}

int oomkit__v1_consume(struct oomkit_watch *w)
{
	uint64_t count;
	return read(w->efd, &count, sizeof(count)) == sizeof(count) ? 1 : 0;
}

static uint64_t v1_limit(uint64_t v)
{
	return v >= V1_UNLIMITED_MIN ? OOMKIT_UNLIMITED : v;
}

/* Reads a file through fd when it is open, else by name at dirfd. */
static int read_at_or_fd(int dirfd, const char *name, int fd, char *buf, size_t len)
{
	return fd >= 0 ? oomkit__pread_all(fd, buf, len) : oomkit__read_file_at(dirfd, name, buf, len);
}

static int read_u64_at_or_fd(int dirfd, const char *name, int fd, uint64_t *ret)
{
	char buf[64];
	int n = read_at_or_fd(dirfd, name, fd, buf, sizeof(buf));
	return n < 0 ? n : oomkit__parse_u64(buf, (size_t)n, ret);
}

/* oom_control, usage and limit, through the fds of w that are open. */
static int v1_core(int dirfd, const struct oomkit_watch *w, struct oomkit_cgroup_memory *m)
{
	struct oomkit__oom_control oc;
	char buf[256];
	int r, n = read_at_or_fd(dirfd, "memory.oom_control", w ? w->oomfd : -1, buf, sizeof(buf));
	if (n < 0)
		return n;
	if ((r = oomkit__parse_oom_control(buf, (size_t)n, &oc)) < 0 ||
	    (r = read_u64_at_or_fd(dirfd, "memory.usage_in_bytes", w ? w->usagefd : -1, &m->usage_bytes)) <
		0 ||
	    (r = read_u64_at_or_fd(dirfd, "memory.limit_in_bytes", w ? w->limitfd : -1, &m->limit_bytes)) < 0)
		return r;
	m->limit_bytes = v1_limit(m->limit_bytes);
	m->under_oom = oc.under_oom;
	m->oom_kill_disable = oc.oom_kill_disable;
	m->oom_kill = oc.oom_kill;
	return 0;
}

int oomkit__v1_memory(int dirfd, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m = {0};
	int r;
	if ((r = v1_core(dirfd, NULL, &m)) < 0 ||
	    (r = oomkit__read_u64_at(dirfd, "memory.max_usage_in_bytes", &m.max_usage_bytes)) < 0 ||
	    (r = oomkit__read_u64_at(dirfd, "memory.failcnt", &m.failcnt)) < 0)
		return r;
	*ret = m;
	return 0;
}

int oomkit__v1_event_memory(struct oomkit_watch *w, struct oomkit_cgroup_memory *ret)
{
	struct oomkit_cgroup_memory m = {0};
	/* The watch's own open oom_control first: under_oom is what a handler
	 * needs before anything else. */
	int r = v1_core(w->dirfd, w, &m);
	if (r < 0)
		return r;
	*ret = m;
	return 0;
}

int oomkit__v1_set_limit(int dirfd, uint64_t limit_bytes)
{
	char v[32];
	if (limit_bytes == OOMKIT_UNLIMITED)
		snprintf(v, sizeof(v), "-1");
	else
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit_bytes);
	return oomkit__write_file_at(dirfd, "memory.limit_in_bytes", v);
}

int oomkit__v1_hold(int dirfd, bool hold)
{
	return oomkit__write_file_at(dirfd, "memory.oom_control", hold ? "1" : "0");
}

/* What a job's owner may write in the job's own memcg:
 *   cgroup.procs, tasks     move its processes between the job and the
 *                           memcgs it creates below (the kernel still wants
 *                           the mover to own the process, or be root);
 *   cgroup.event_control    register eventfds on the job's files (OOM,
 *                           usage thresholds, pressure), which only notify.
 * Not memory.oom_control (the handler's hold on the job: an owner could
 * give its OOM to the kernel, or block it past the handler's delay),
 * limits, soft limits, use_hierarchy (0 would let children escape the
 * limit), swappiness, force_empty, move_charge_at_immigrate, the counters
 * that a write resets (failcnt, max_usage), notify_on_release (it runs the
 * hierarchy's release agent as root with a path the owner names), or any
 * file a kernel adds later. */
const char *const oomkit__v1_delegated[] = {"cgroup.procs", "tasks", "cgroup.event_control", NULL};
