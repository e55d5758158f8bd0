/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop.c - the context, watches, the OOM take-over state machine and the
 * event loop: one epoll set holding every watch's eventfd, a timerfd that is
 * armed only while an OOM is pending, and the guardian's pidfd.  While nothing
 * happens the loop sleeps in epoll_wait() with no timeout: zero wakeups.
 */
#include "internal.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* How often a pending OOM's under_oom is re-read, so a resolved OOM is seen
 * promptly: the kernel sends no event when under_oom clears. */
#define PENDING_POLL_NS (10ull * 1000 * 1000)

/* How long under_oom must read 0, with the kernel's killer given back and no
 * kill counted, before the OOM is taken as over without one (see
 * kernel_done()). */
#define KERNEL_SETTLE_NS (1000ull * 1000 * 1000)

/* epoll data: the tag in the high half, a watch index in the low half. */
enum { TAG_TIMER = 1, TAG_GUARDIAN = 2, TAG_WATCH = 3, TAG_INOTIFY = 4 };

enum oomkit__oom_state {
	OOM_IDLE = 0,
	OOM_PENDING = 1, /* under OOM, the handler has until deadline_ns */
	OOM_KERNEL = 2,	 /* handed to the kernel killer; take it back once resolved */
};

static uint64_t tag(uint32_t t, uint32_t index)
{
	return (uint64_t)t << 32 | index;
}

/* ------------------------------------------------------------ setup */

static int copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(dst, src, n + 1);
	/* A trailing slash would make every relative path computation wrong. */
	while (n > 1 && dst[n - 1] == '/')
		dst[--n] = 0;
	return 0;
}

/* Reads /proc/self/mounts (setup only: may allocate) and fills the roots the
 * caller did not set. */
static int detect_mounts(oomkit_ctx *ctx, const struct oomkit_options *o)
{
	size_t cap = 1 << 16;
	char *buf = NULL;
	int n;
	for (;;) {
		char *nb = realloc(buf, cap);
		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		n = oomkit__read_file_at(ctx->proc_fd, "self/mounts", buf, cap);
		if (n != -EFBIG || cap >= (1u << 24))
			break;
		cap *= 4;
	}
	struct oomkit__mounts m;
	int r = n < 0 ? n : oomkit__parse_mounts(buf, (size_t)n, &m);
	free(buf);
	if (r < 0)
		return r;
	if (!o->memory_root)
		memcpy(ctx->memory_root, m.memory_root, sizeof(ctx->memory_root));
	if (!o->cgroup2_root)
		memcpy(ctx->cgroup2_root, m.cgroup2_root, sizeof(ctx->cgroup2_root));
	if (!o->freezer_root)
		memcpy(ctx->freezer_root, m.freezer_root, sizeof(ctx->freezer_root));
	return 0;
}

static bool cgroup2_has_memory(const char *root)
{
	char buf[512];
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int n = oomkit__read_file_at(fd, "cgroup.controllers", buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return false;
	/* Space-separated names: match "memory" as a whole word. */
	for (char *p = buf; (p = strstr(p, "memory")); p += 6)
		if ((p == buf || p[-1] == ' ') && (p[6] == 0 || p[6] == ' ' || p[6] == '\n'))
			return true;
	return false;
}

static int set_roots(oomkit_ctx *ctx, const struct oomkit_options *o)
{
	int r;
	if ((r = copy_str(ctx->proc_root, sizeof(ctx->proc_root), o->proc_root ? o->proc_root : "/proc")) < 0)
		return r;
	ctx->proc_fd = open(ctx->proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->proc_fd < 0)
		return -errno;
	/* Only zram's statistics are read there: without it, zram is counted
	 * at an assumed compression ratio. */
	ctx->sys_fd = open(o->sys_root ? o->sys_root : "/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Read on cgroup v2 by the swap rule, on the handler path: kept open.
	 * Without it the machine counts as having no swap (the rule of old). */
	ctx->meminfo_fd = openat(ctx->proc_fd, "meminfo", O_RDONLY | O_CLOEXEC);
	if ((o->memory_root &&
	     (r = copy_str(ctx->memory_root, sizeof(ctx->memory_root), o->memory_root)) < 0) ||
	    (o->cgroup2_root &&
	     (r = copy_str(ctx->cgroup2_root, sizeof(ctx->cgroup2_root), o->cgroup2_root)) < 0) ||
	    (o->freezer_root &&
	     (r = copy_str(ctx->freezer_root, sizeof(ctx->freezer_root), o->freezer_root)) < 0))
		return r;
	if (!o->memory_root || !o->cgroup2_root || !o->freezer_root) {
		r = detect_mounts(ctx, o);
		/* With the memory root given, the other mounts are optional extras. */
		if (r < 0 && !o->memory_root)
			return r;
	}
	/* No v1 memory hierarchy: the cgroup2 one, if it has the memory controller. */
	if (!ctx->memory_root[0] && ctx->cgroup2_root[0] && cgroup2_has_memory(ctx->cgroup2_root))
		memcpy(ctx->memory_root, ctx->cgroup2_root, sizeof(ctx->memory_root));
	if (!ctx->memory_root[0])
		return -ENOENT;
	ctx->memory_root_fd = open(ctx->memory_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->memory_root_fd < 0)
		return -errno;
	oomkit__cgroup_setup(ctx);
	return 0;
}

/* Thousands of watches need thousands of fds (a v2 OOM watch keeps seven
 * open): raise the soft limit to the hard one if the default would not do. */
static void raise_nofile(unsigned max_cgroups)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_cgroups * 7 + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int alloc_buffers(oomkit_ctx *ctx)
{
	ctx->watches = calloc(ctx->max_cgroups, sizeof(*ctx->watches));
	ctx->iobuf = malloc(OOMKIT__IOBUF_SIZE);
	ctx->iobuf2 = malloc(OOMKIT__IOBUF_SIZE);
	ctx->pidbuf = calloc(ctx->max_pids, sizeof(pid_t));
	ctx->reportbuf = malloc(OOMKIT__REPORT_BUF_SIZE);
	ctx->queue = calloc(OOMKIT__EPOLL_BATCH, sizeof(*ctx->queue));
	if (!ctx->queue || !ctx->watches || !ctx->iobuf || !ctx->iobuf2 || !ctx->pidbuf || !ctx->reportbuf)
		return -ENOMEM;
	for (unsigned i = 0; i < ctx->max_cgroups; i++)
		oomkit__watch_init_fds(&ctx->watches[i]);
	return 0;
}

static int setup_loop(oomkit_ctx *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(TAG_TIMER, 0)};
	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->epfd < 0)
		return -errno;
	ctx->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ctx->timerfd < 0)
		return -errno;
	if (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->timerfd, &ev) < 0)
		return -errno;
	return 0;
}

/* The memcg this process lives in, so watching it (or an ancestor) can be
 * refused.  Unknown (fixture /proc trees) leaves it empty. */
static void find_self_cgroup(oomkit_ctx *ctx)
{
	char buf[4096];
	int n = oomkit__read_file_at(ctx->proc_fd, "self/cgroup", buf, sizeof(buf));
	ctx->self_cgroup_known =
	    n >= 0 && oomkit__parse_proc_cgroup(buf, (size_t)n, "memory", ctx->self_cgroup,
						sizeof(ctx->self_cgroup)) >= 0;
}

static int protect_self(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write(fd, "-1000", 5) == 5 ? 0 : -errno;
	close(fd);
	return r;
}

/* Copies the caller's options, sz bytes of them: a program compiled with an
 * older header has a shorter struct, and every field it lacks is 0, the
 * default.  One compiled with a newer header may pass more than we know,
 * as long as what we do not know is not set. */
static int copy_options(const struct oomkit_options *in, struct oomkit_options *out)
{
	const unsigned char *extra = (const unsigned char *)in + sizeof(*out);

	if (in->sz < offsetof(struct oomkit_options, sz) + sizeof(in->sz))
		return -EINVAL;
	for (size_t i = 0; in->sz > sizeof(*out) && i < in->sz - sizeof(*out); i++)
		if (extra[i])
			return -E2BIG;
	memset(out, 0, sizeof(*out));
	memcpy(out, in, in->sz < sizeof(*out) ? in->sz : sizeof(*out));
	out->sz = sizeof(*out);
	return 0;
}

OOMKIT__EXPORT int oomkit_new(const struct oomkit_options *caller_opts, oomkit_ctx **ret_ctx)
{
	struct oomkit_options options;
	const struct oomkit_options *opts = &options;
	int r;

	if (!ret_ctx)
		return -EINVAL;
	if (!caller_opts)
		oomkit_options_init(&options);
	else if ((r = copy_options(caller_opts, &options)) < 0)
		return r;
	oomkit_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->memory_root_fd = ctx->proc_fd = ctx->sys_fd = ctx->epfd = ctx->timerfd = ctx->inotify_fd = -1;
	ctx->meminfo_fd = -1;
	ctx->guardian_pidfd = ctx->guardian_sock = -1;
	ctx->max_cgroups = opts->max_cgroups ? opts->max_cgroups : 1024;
	ctx->max_pids = opts->max_pids ? opts->max_pids : 4096;
	ctx->mlock = opts->mlock;
	ctx->protect = opts->protect;
	ctx->log = opts->log;
	ctx->log_userdata = opts->log_userdata;
	ctx->limits = opts->limits;
	ctx->limits_userdata = opts->limits_userdata;
	if (opts->guardian_path && !(ctx->guardian_path = strdup(opts->guardian_path))) {
		free(ctx);
		return -ENOMEM;
	}

	if ((r = set_roots(ctx, opts)) < 0 || (r = alloc_buffers(ctx)) < 0 || (r = setup_loop(ctx)) < 0)
		goto fail;
	raise_nofile(ctx->max_cgroups);
	find_self_cgroup(ctx);
	if (ctx->protect && (r = protect_self()) < 0)
		oomkit__log(ctx, OOMKIT_LOG_WARNING, "cannot set oom_score_adj -1000: %s", strerror(-r));
	if (opts->guardian) {
		ctx->guardian_wanted = true;
		if ((r = oomkit__guardian_start(ctx)) < 0)
			goto fail;
	}
	if (ctx->mlock && (r = oomkit__reserve_lock(ctx)) < 0)
		goto fail;
	*ret_ctx = ctx;
	return 0;
fail:
	oomkit_free(ctx);
	return r;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

OOMKIT__EXPORT void oomkit_free(oomkit_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->watches)
		for (unsigned i = 0; i < ctx->max_cgroups; i++)
			if (ctx->watches[i].kind)
				oomkit_unwatch(ctx, &ctx->watches[i]);
	oomkit__guardian_stop(ctx);
	close_fd(&ctx->timerfd);
	close_fd(&ctx->inotify_fd);
	close_fd(&ctx->epfd);
	close_fd(&ctx->memory_root_fd);
	close_fd(&ctx->proc_fd);
	close_fd(&ctx->sys_fd);
	close_fd(&ctx->meminfo_fd);
	free(ctx->watches);
	free(ctx->iobuf);
	free(ctx->iobuf2);
	free(ctx->pidbuf);
	free(ctx->reportbuf);
	free(ctx->queue);
	free(ctx->guardian_path);
	free(ctx);
}

OOMKIT__EXPORT enum oomkit_backend oomkit_backend(const oomkit_ctx *ctx)
{
	return ctx->backend;
}

OOMKIT__EXPORT const char *oomkit_memory_root(const oomkit_ctx *ctx)
{
	return ctx->memory_root;
}

OOMKIT__EXPORT int oomkit_fd(const oomkit_ctx *ctx)
{
	return ctx->epfd;
}

OOMKIT__EXPORT void oomkit_stop(oomkit_ctx *ctx)
{
	ctx->stop = 1;
}

/* ----------------------------------------------------------- watches */

/* Whether rel is this process's memcg or one of its ancestors (the root
 * excepted: it has no limit and never has a memcg OOM). */
static bool contains_self(const oomkit_ctx *ctx, const char *rel)
{
	size_t n = strlen(rel);
	if (!ctx->self_cgroup_known || n == 0)
		return false;
	return strncmp(ctx->self_cgroup, rel, n) == 0 &&
	       (ctx->self_cgroup[n] == 0 || ctx->self_cgroup[n] == '/');
}

static struct oomkit_watch *free_slot(oomkit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->max_cgroups; i++)
		if (!ctx->watches[i].kind)
			return &ctx->watches[i];
	return NULL;
}

static uint32_t watch_index(const oomkit_ctx *ctx, const struct oomkit_watch *w)
{
	return (uint32_t)(w - ctx->watches);
}

static void clear_watch(struct oomkit_watch *w)
{
	uint32_t gen = w->gen;
	oomkit__watch_close_fds(w);
	free(w->cgroup);
	memset(w, 0, sizeof(*w));
	oomkit__watch_init_fds(w);
	w->gen = gen;
}

/* v2 signals nothing on a cgroup's own files when it is removed, but rmdir
 * reports IN_DELETE on the parent directory: one inotify watch per parent. */
static int watch_parent(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	w->parent_wd = -1;
	if (!w->cgroup[0])
		return 0;
	if (ctx->inotify_fd < 0) {
		ctx->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ctx->inotify_fd < 0)
			return -errno;
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(TAG_INOTIFY, 0)};
		if (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, ctx->inotify_fd, &ev) < 0)
			return -errno;
	}
	const char *slash = strrchr(w->cgroup, '/');
	int n = snprintf(ctx->pathbuf, sizeof(ctx->pathbuf), "%s/%.*s", ctx->memory_root,
			 slash ? (int)(slash - w->cgroup) : 0, w->cgroup);
	if (n < 0 || (size_t)n >= sizeof(ctx->pathbuf))
		return -ENAMETOOLONG;
	w->parent_wd = inotify_add_watch(ctx->inotify_fd, ctx->pathbuf, IN_DELETE | IN_ONLYDIR);
	return w->parent_wd < 0 ? -errno : 0;
}

static int add_watch(oomkit_ctx *ctx, struct oomkit_watch *tmpl, const char *cgroup, unsigned flags,
		     oomkit_watch **ret_watch)
{
	int r;
	if (!ctx || !cgroup || !tmpl->handler)
		return -EINVAL;
	struct oomkit_watch *w = free_slot(ctx);
	if (!w)
		return -ENOSPC;
	uint32_t gen = w->gen;
	char rel[OOMKIT__PATH_MAX];
	*w = *tmpl;
	w->gen = gen + 1;
	oomkit__watch_init_fds(w);
	if ((r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel))) < 0)
		goto fail;
	/* Setup, not the handler path: the slot holds only the path it needs. */
	if (!(w->cgroup = strdup(rel))) {
		r = -ENOMEM;
		goto fail;
	}
	if (!(flags & OOMKIT_WATCH_ALLOW_SELF) && contains_self(ctx, w->cgroup)) {
		oomkit__log(
		    ctx, OOMKIT_LOG_ERR,
		    "refusing to watch %s: it contains this process (%s), which would hang in its OOM",
		    w->cgroup, ctx->self_cgroup);
		r = -ELOOP;
		goto fail;
	}
	if ((r = w->dirfd = oomkit__cgroup_open(ctx, w->cgroup)) < 0)
		goto fail;
	w->epoll_events = EPOLLIN;
	w->psi = (flags & OOMKIT_WATCH_PSI) != 0;
	w->at_limit = (flags & OOMKIT_WATCH_AT_LIMIT) != 0;
	w->system = w->psi && !w->cgroup[0];
	if ((r = oomkit__register(ctx, w)) < 0)
		goto fail;
	if ((ctx->cg_caps & OOMKIT__GONE_BY_PARENT) && (r = watch_parent(ctx, w)) < 0)
		goto fail;
	struct epoll_event ev = {.events = w->epoll_events, .data.u64 = tag(TAG_WATCH, watch_index(ctx, w))};
	if (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, w->efd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	ctx->n_watches++;
	if (ret_watch)
		*ret_watch = w;
	return 0;
fail:
	clear_watch(w);
	return r;
}

OOMKIT__EXPORT int oomkit_watch_oom(oomkit_ctx *ctx, const char *cgroup, unsigned flags,
				    oomkit_handler_fn handler, void *userdata, oomkit_watch **ret_watch)
{
	struct oomkit_watch t = {
	    .kind = OOMKIT_EVENT_OOM, .handler = handler, .userdata = userdata, .dirfd = -1};
	return add_watch(ctx, &t, cgroup, flags, ret_watch);
}

OOMKIT__EXPORT int oomkit_watch_threshold(oomkit_ctx *ctx, const char *cgroup, uint64_t threshold_bytes,
					  unsigned flags, oomkit_handler_fn handler, void *userdata,
					  oomkit_watch **ret_watch)
{
	struct oomkit_watch t = {.kind = OOMKIT_EVENT_THRESHOLD,
				 .threshold_bytes = threshold_bytes,
				 .handler = handler,
				 .userdata = userdata,
				 .dirfd = -1};
	return add_watch(ctx, &t, cgroup, flags, ret_watch);
}

OOMKIT__EXPORT int oomkit_watch_pressure(oomkit_ctx *ctx, const char *cgroup,
					 enum oomkit_pressure_level level, unsigned flags,
					 oomkit_handler_fn handler, void *userdata, oomkit_watch **ret_watch)
{
	if (level > OOMKIT_PRESSURE_CRITICAL)
		return -EINVAL;
	struct oomkit_watch t = {.kind = OOMKIT_EVENT_PRESSURE,
				 .level = level,
				 .handler = handler,
				 .userdata = userdata,
				 .dirfd = -1};
	return add_watch(ctx, &t, cgroup, flags, ret_watch);
}

OOMKIT__EXPORT int oomkit_watch_stall(oomkit_ctx *ctx, const char *cgroup, uint32_t stall_us,
				      uint32_t window_us, unsigned flags, oomkit_handler_fn handler,
				      void *userdata, oomkit_watch **ret_watch)
{
	/* The kernel's own bounds (psi_trigger_create()). */
	if (window_us < 500000 || window_us > 10000000 || stall_us == 0 || stall_us > window_us)
		return -EINVAL;
	struct oomkit_watch t = {.kind = OOMKIT_EVENT_PRESSURE,
				 .level = OOMKIT_PRESSURE_LOW,
				 .stall_us = stall_us,
				 .window_us = window_us,
				 .handler = handler,
				 .userdata = userdata,
				 .dirfd = -1};
	return add_watch(ctx, &t, cgroup, flags | OOMKIT_WATCH_PSI, ret_watch);
}

OOMKIT__EXPORT const char *oomkit_watch_cgroup(const oomkit_watch *watch)
{
	return watch->cgroup;
}

static bool valid_watch(const oomkit_ctx *ctx, const oomkit_watch *w)
{
	return ctx && w && w >= ctx->watches && w < ctx->watches + ctx->max_cgroups && w->kind;
}

OOMKIT__EXPORT int oomkit_unwatch(oomkit_ctx *ctx, oomkit_watch *watch)
{
	if (!valid_watch(ctx, watch))
		return -EINVAL;
	if (watch->taken_over)
		oomkit_release(ctx, watch);
	if (watch->state != OOM_IDLE)
		ctx->n_pending--;
	(void)epoll_ctl(ctx->epfd, EPOLL_CTL_DEL, watch->efd, NULL);
	clear_watch(watch);
	ctx->n_watches--;
	return 0;
}

/* ---------------------------------------------------------- take-over */

static int read_oom(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__oom_control *oc)
{
	return oomkit__oom_state(ctx, w, oc);
}

static void set_state(oomkit_ctx *ctx, struct oomkit_watch *w, int state)
{
	if (state == OOM_IDLE) {
		w->clear_since_ns = 0;
		w->resolved = false;
		w->untold = false;
	}
	if (w->state == OOM_IDLE && state != OOM_IDLE)
		ctx->n_pending++;
	else if (w->state != OOM_IDLE && state == OOM_IDLE)
		ctx->n_pending--;
	w->state = state;
}

/* Arms the timer for the earliest deadline, or polls every PENDING_POLL_NS
 * while an OOM is pending; disarms it when nothing is. */
static void arm_timer(oomkit_ctx *ctx)
{
	struct itimerspec its = {0};
	if (ctx->n_pending) {
		uint64_t next = oomkit__now_ns() + PENDING_POLL_NS;
		for (unsigned i = 0; i < ctx->max_cgroups; i++) {
			const struct oomkit_watch *w = &ctx->watches[i];
			if (w->state == OOM_PENDING && w->deadline_ns < next)
				next = w->deadline_ns;
		}
		if (next == 0)
			next = 1;
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
	}
	(void)timerfd_settime(ctx->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

OOMKIT__EXPORT int oomkit_take_over(oomkit_ctx *ctx, oomkit_watch *watch, uint64_t delay_ms)
{
	struct oomkit__oom_control oc;
	if (!valid_watch(ctx, watch) || watch->kind != OOMKIT_EVENT_OOM)
		return -EINVAL;
	/* The guardian is told first: were this process killed between the
	 * two steps, a memcg whose killer is disabled must already be held. */
	bool was_taken_over = watch->taken_over;
	watch->taken_over = true;
	watch->delay_ms = delay_ms;
	int r = oomkit__guardian_hold(ctx, watch, delay_ms ? delay_ms : 1);
	if (r < 0)
		oomkit__log(ctx, OOMKIT_LOG_WARNING, "guardian does not hold %s: %s", watch->cgroup,
			    strerror(-r));
	/* An OOM handed to the kernel stays the kernel's until it is over:
	 * check_pending() holds the killer off again then. */
	if (was_taken_over && watch->state == OOM_KERNEL)
		return 0;
	r = oomkit__hold_cgroup(ctx, watch->cgroup, watch->dirfd, true);
	if (r < 0) {
		watch->taken_over = was_taken_over;
		if (!was_taken_over)
			(void)oomkit__guardian_hold(ctx, watch, 0);
		return r;
	}
	/* Already stuck when taken over: the delay starts now.  The handler
	 * hears of it from the next kernel event (v1 signals an eventfd
	 * registered under OOM at once; v2's memory.events counts the next
	 * throttling at the hold, which a pending OOM otherwise ignores). */
	if (read_oom(ctx, watch, &oc) >= 0 && oc.under_oom && watch->state == OOM_IDLE) {
		watch->deadline_ns = oomkit__now_ns() + delay_ms * 1000000u;
		watch->kills_at_oom = oc.oom_kill;
		set_state(ctx, watch, OOM_PENDING);
		watch->untold = true;
		arm_timer(ctx);
	}
	return 0;
}

OOMKIT__EXPORT int oomkit_release(oomkit_ctx *ctx, oomkit_watch *watch)
{
	if (!valid_watch(ctx, watch))
		return -EINVAL;
	if (!watch->taken_over)
		return 0;
	watch->taken_over = false;
	set_state(ctx, watch, OOM_IDLE);
	(void)oomkit__guardian_hold(ctx, watch, 0);
	int r = oomkit__hold_cgroup(ctx, watch->cgroup, watch->dirfd, false);
	/* A removed cgroup needs no killer. */
	return r == -ENOENT ? 0 : r;
}

/* Hands the OOM of w to the kernel killer now. */
static void to_kernel(oomkit_ctx *ctx, struct oomkit_watch *w, const char *why)
{
	oomkit__log(ctx, OOMKIT_LOG_NOTICE, "%s: kernel OOM killer re-enabled (%s)", w->cgroup, why);
	(void)oomkit__hold_cgroup(ctx, w->cgroup, w->dirfd, false);
	set_state(ctx, w, OOM_KERNEL);
}

OOMKIT__EXPORT int oomkit_hand_to_kernel(oomkit_ctx *ctx, oomkit_watch *watch)
{
	if (!valid_watch(ctx, watch) || !watch->taken_over)
		return -EINVAL;
	/* Outside an OOM the kernel has killed nothing for it yet. */
	struct oomkit__oom_control oc;
	if (watch->state == OOM_IDLE)
		watch->kills_at_oom = read_oom(ctx, watch, &oc) < 0 ? 0 : oc.oom_kill;
	to_kernel(ctx, watch, "asked from outside the handler");
	/* Polls until the kernel has resolved it, then holds the killer off again. */
	arm_timer(ctx);
	return 0;
}

/* Whether under_oom, read 0 now, has stayed 0 for settle_ns in this OOM
 * (w->clear_since_ns: since when; a read of 1 resets it). */
static bool clear_for(struct oomkit_watch *w, uint64_t now, uint64_t settle_ns)
{
	if (!w->clear_since_ns)
		w->clear_since_ns = now;
	return now - w->clear_since_ns >= settle_ns;
}

/* Whether an OOM whose kernel killer was given back is over, now that
 * under_oom reads 0.  Giving the killer back wakes the tasks that wait in
 * the OOM, and each clears its mark before it fails its charge again and
 * meets the killer: until then under_oom reads 0 with nothing resolved, for
 * as long as a loaded machine keeps them off a CPU.  Holding the killer off
 * again in that gap would send them back to sleep and turn the OOM handed
 * to the kernel into a new one for the handler.  So the OOM is over once the
 * kernel has killed for it, or once under_oom has stayed 0 for
 * KERNEL_SETTLE_NS (freed without a kill, or the victim counted in a
 * cgroup below). */
static bool kernel_done(struct oomkit_watch *w, const struct oomkit__oom_control *oc, uint64_t now)
{
	return oc->oom_kill > w->kills_at_oom || clear_for(w, now, KERNEL_SETTLE_NS);
}

/* Whether an OOM the handler left waiting is over, now that under_oom
 * reads 0: once it has for OOMKIT__OOM_SETTLE_NS (internal.h: a 0 now and
 * then is a job giving back a page at a time, not the end of the OOM, and
 * must not start the delay again).  One the handler said it resolved is
 * over at the first 0: it has acted, and the next OOM is a new one. */
static bool pending_done(struct oomkit_watch *w, uint64_t now)
{
	return w->resolved || clear_for(w, now, OOMKIT__OOM_SETTLE_NS);
}

/* Re-reads a pending watch: resolved, past its deadline, or still waiting. */
static void check_pending(oomkit_ctx *ctx, struct oomkit_watch *w, uint64_t now)
{
	struct oomkit__oom_control oc;
	int r = read_oom(ctx, w, &oc);
	if (r >= 0 && oc.under_oom) {
		w->clear_since_ns = 0;
		if (w->state == OOM_PENDING && now >= w->deadline_ns)
			to_kernel(ctx, w, "OOM delay expired");
		return;
	}
	/* The kernel killer was given back -- by us or by the guardian, whose
	 * clock may have run out first: over only once the kernel is done. */
	bool given_back = w->taken_over && r >= 0 && !oc.oom_kill_disable;
	if (given_back && !kernel_done(w, &oc, now))
		return;
	if (!given_back && r >= 0 && w->state == OOM_PENDING && !pending_done(w, now))
		return;
	/* Resolved (or the cgroup cannot be read): hold the killer off again
	 * for the next OOM, and stop the guardian's clock. */
	if (given_back || (w->taken_over && r < 0))
		(void)oomkit__hold_cgroup(ctx, w->cgroup, w->dirfd, true);
	if (w->taken_over)
		oomkit__guardian_clear(ctx, w);
	set_state(ctx, w, OOM_IDLE);
}

static void apply_verdict(oomkit_ctx *ctx, struct oomkit_watch *w, const struct oomkit__queued *q,
			  enum oomkit_verdict v)
{
	if (w->state == OOM_IDLE)
		w->kills_at_oom = q->kills;
	w->resolved = v == OOMKIT_RESOLVED;
	if (v == OOMKIT_KERNEL) {
		to_kernel(ctx, w, "handler asked");
		return;
	}
	if (w->state == OOM_IDLE) {
		w->deadline_ns = q->event.time_ns + w->delay_ms * 1000000u;
		set_state(ctx, w, OOM_PENDING);
	}
	/* RESOLVED is believed once under_oom clears: a killed victim's memory
	 * is uncharged a moment after it dies. */
	check_pending(ctx, w, oomkit__now_ns());
}

/* ------------------------------------------------------------ events */

static int fill_memory(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_event *ev, uint64_t *ret_kills)
{
	struct oomkit_cgroup_memory m;
	/* On the path from the kernel's event to the handler: read through the
	 * watch's open fds, and only what an event needs. */
	int r = oomkit__event_memory(ctx, w, &m);
	if (r >= 0) {
		ev->usage_bytes = m.usage_bytes;
		ev->limit_bytes = m.limit_bytes;
		ev->under_oom = m.under_oom;
		ev->events_high = m.events_high;
		ev->events_max = m.events_max;
		ev->events_oom = m.events_oom;
		ev->events_oom_kill = m.events_oom_kill;
		ev->oom_cause = m.oom_cause;
		ev->stall_full_x100 = m.stall_full_x100;
		ev->stall_span_ms = m.stall_span_ms;
		ev->swap_bytes = m.swap_bytes;
		ev->swap_max_bytes = m.swap_max_bytes;
		ev->swap_free_bytes = m.swap_free_bytes;
		*ret_kills = m.oom_kill;
	}
	return r;
}

static void deliver_gone(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_event *ev)
{
	ev->kind = OOMKIT_EVENT_GONE;
	ev->limit_bytes = OOMKIT_UNLIMITED;
	/* Nothing is left to give back: drop the take-over before the handler may unwatch. */
	if (w->taken_over) {
		(void)oomkit__guardian_hold(ctx, w, 0);
		w->taken_over = false;
	}
	set_state(ctx, w, OOM_IDLE);
	w->handler(ctx, ev, w->userdata);
	if (w->kind)
		oomkit_unwatch(ctx, w);
}

/* Reads a watch's kernel event into q: the state at this moment, before any
 * handler of this batch has acted (an OOM in a parent signals every watch
 * below it at once, and each must see it under way).  Returns false if the
 * eventfd had nothing. */
static bool read_event(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__queued *q)
{
	if (oomkit__consume(ctx, w) <= 0)
		return false;
	struct oomkit_event *ev = &q->event;
	*ev = (struct oomkit_event){.kind = w->kind,
				    .watch = w,
				    .cgroup = w->cgroup,
				    .origin = w->cgroup,
				    .own = true,
				    .time_ns = oomkit__now_ns()};
	q->gen = w->gen;
	/* The kernel signals every registered eventfd when a cgroup is removed;
	 * its files then read -ENOENT, which costs nothing to look for. */
	q->kills = 0;
	q->gone =
	    fill_memory(ctx, w, ev, &q->kills) == -ENOENT && faccessat(w->dirfd, "cgroup.procs", F_OK, 0) < 0;
	if (q->gone)
		return true;
	int o = w->kind == OOMKIT_EVENT_OOM && ev->under_oom
		    ? oomkit__oom_origin(ctx, w, q->origin, sizeof(q->origin))
		    : -EOPNOTSUPP;
	if (o >= 0) {
		ev->origin = q->origin;
		ev->own = strcmp(q->origin, w->cgroup) == 0;
	} else if (o == -ESTALE) {
		/* A parent's OOM ended as we looked (oomkit__oom_origin). */
		ev->under_oom = false;
	} else if (w->kind == OOMKIT_EVENT_THRESHOLD) {
		ev->threshold_bytes = w->threshold_bytes;
		ev->rising = ev->usage_bytes >= w->threshold_bytes;
	} else if (w->kind == OOMKIT_EVENT_PRESSURE) {
		ev->level = w->level;
	}
	return true;
}

static void deliver(oomkit_ctx *ctx, struct oomkit__queued *q)
{
	struct oomkit_watch *w = q->event.watch;
	/* An earlier handler of this batch may have closed or replaced the watch. */
	if (!w->kind || w->gen != q->gen)
		return;
	if (q->gone) {
		deliver_gone(ctx, w, &q->event);
		return;
	}
	/* An OOM event is the memcg under OOM again, whatever under_oom reads
	 * by now: a run of 0s read before it did not end the OOM under way. */
	if (w->kind == OOMKIT_EVENT_OOM && w->state != OOM_IDLE)
		w->clear_since_ns = 0;
	if (w->kind == OOMKIT_EVENT_OOM)
		w->untold = false;
	enum oomkit_verdict v = w->handler(ctx, &q->event, w->userdata);
	/* Only an OOM of this cgroup's own limit is ours to resolve. */
	if (w->kind && w->gen == q->gen && w->kind == OOMKIT_EVENT_OOM && w->taken_over && q->event.own &&
	    q->event.under_oom)
		apply_verdict(ctx, w, q, v);
}

/* A directory was removed below a watched cgroup's parent: GONE for each
 * watch on it. */
static void handle_inotify(oomkit_ctx *ctx)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(ctx->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;
			p += sizeof(*ie) + ie->len;
			if (!(ie->mask & IN_DELETE) || !ie->len)
				continue;
			for (unsigned i = 0; i < ctx->max_cgroups; i++) {
				struct oomkit_watch *w = &ctx->watches[i];
				if (!w->kind || w->parent_wd != ie->wd)
					continue;
				const char *base = strrchr(w->cgroup, '/');
				base = base ? base + 1 : w->cgroup;
				if (strcmp(base, ie->name) != 0)
					continue;
				/* A cgroup removed and made again under the same name (a
				 * systemd unit restarted) may be watched anew before the
				 * old one's removal is read: the watch's own directory
				 * says which one went. */
				if (faccessat(w->dirfd, "cgroup.procs", F_OK, 0) == 0)
					continue;
				struct oomkit__queued *q = &ctx->queue[0];
				q->event = (struct oomkit_event){.watch = w,
								 .cgroup = w->cgroup,
								 .origin = w->cgroup,
								 .time_ns = oomkit__now_ns()};
				q->gen = w->gen;
				q->gone = true;
				deliver(ctx, q);
			}
		}
	}
}

static void handle_timer(oomkit_ctx *ctx)
{
	uint64_t expirations, now = oomkit__now_ns();
	(void)!read(ctx->timerfd, &expirations, sizeof(expirations));
	for (unsigned i = 0; i < ctx->max_cgroups && ctx->n_pending; i++)
		if (ctx->watches[i].state != OOM_IDLE)
			check_pending(ctx, &ctx->watches[i], now);
}

OOMKIT__EXPORT int oomkit_dispatch(oomkit_ctx *ctx, int timeout_ms)
{
	struct epoll_event evs[OOMKIT__EPOLL_BATCH];
	int nq = 0;
	int n = epoll_wait(ctx->epfd, evs, OOMKIT__EPOLL_BATCH, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* First read every ready watch, then run the handlers. */
	for (int i = 0; i < n; i++) {
		uint32_t t = (uint32_t)(evs[i].data.u64 >> 32), index = (uint32_t)evs[i].data.u64;
		if (t == TAG_WATCH && index < ctx->max_cgroups && ctx->watches[index].kind &&
		    read_event(ctx, &ctx->watches[index], &ctx->queue[nq]))
			nq++;
	}
	for (int i = 0; i < nq; i++)
		deliver(ctx, &ctx->queue[i]);
	for (int i = 0; i < n; i++) {
		uint32_t t = (uint32_t)(evs[i].data.u64 >> 32);
		if (t == TAG_TIMER)
			handle_timer(ctx);
		else if (t == TAG_GUARDIAN)
			(void)oomkit__guardian_restart(ctx);
		else if (t == TAG_INOTIFY)
			handle_inotify(ctx);
	}
	arm_timer(ctx);
	return n;
}

OOMKIT__EXPORT int oomkit_run(oomkit_ctx *ctx)
{
	int r = 0;
	while (!ctx->stop && r >= 0)
		r = oomkit_dispatch(ctx, -1);
	ctx->stop = 0;
	return r < 0 ? r : 0;
}

int oomkit__loop_add_guardian(oomkit_ctx *ctx, int pidfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(TAG_GUARDIAN, 0)};
	return epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, pidfd, &ev) < 0 ? -errno : 0;
}
