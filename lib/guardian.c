/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guardian.c - the guardian process that keeps the OOM delay when the
 * handling process cannot: it holds its own memory.oom_control eventfd
 * registrations (cgroup.event_control) for every taken-over memcg, and
 *   - re-enables the kernel OOM killer of a memcg still under_oom delay_ms
 *     after its OOM began, whatever the handler is doing;
 *   - re-enables the kernel killer of every held memcg and exits as soon as
 *     the handler dies (its pidfd becomes readable), so a crashed handler
 *     never leaves a memcg deadlocked or unwatched.
 * It is a fork of the handler, in its own session so a terminal's signals do
 * not reach it, and it talks to the handler over a SOCK_SEQPACKET pair.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define GUARD_POLL_NS (10ull * 1000 * 1000)

enum { MSG_HOLD = 1, MSG_DROP = 2, MSG_QUIT = 3 };

struct guardian_msg {
	uint32_t op;
	uint32_t reserved;
	uint64_t delay_ms;
	char cgroup[OOMKIT__PATH_MAX];
};

/* One held memcg, in the guardian. */
struct held {
	struct oomkit_watch w; /* dirfd, efd, oomfd and cgroup, registered like a watch */
	uint64_t delay_ms;
	uint64_t deadline_ns; /* 0: not under OOM */
};

struct guardian {
	oomkit_ctx *ctx; /* the handler's context, as copied by fork() */
	int sock, parent_pidfd, sigfd, timerfd, epfd;
	struct held *held;
	unsigned n;
	int memory_root_fd;
};

enum { GT_SOCK = -1, GT_PARENT = -2, GT_SIGNAL = -3, GT_TIMER = -4 };

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int under_oom(struct guardian *g, struct held *h)
{
	struct oomkit__oom_control oc;
	int r = oomkit__oom_state(g->ctx, &h->w, &oc);
	return r < 0 ? r : oc.under_oom;
}

static void kernel_killer_on(struct guardian *g, struct held *h)
{
	(void)oomkit__hold_at(g->ctx, h->w.dirfd, false);
}

static void drop(struct guardian *g, struct held *h)
{
	if (h->w.efd >= 0)
		(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, h->w.efd, NULL);
	if (h->w.efd >= 0)
		close(h->w.efd);
	if (h->w.oomfd >= 0)
		close(h->w.oomfd);
	if (h->w.dirfd >= 0)
		close(h->w.dirfd);
	memset(h, 0, sizeof(*h));
}

static struct held *find(struct guardian *g, const char *cgroup)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->held[i].w.kind && strcmp(g->held[i].w.cgroup, cgroup) == 0)
			return &g->held[i];
	return NULL;
}

static void hold(struct guardian *g, const struct guardian_msg *m)
{
	struct held *h = find(g, m->cgroup);
	if (h) {
		h->delay_ms = m->delay_ms;
		return;
	}
	for (unsigned i = 0; i < g->n && !h; i++)
		if (!g->held[i].w.kind)
			h = &g->held[i];
	if (!h)
		return;
	memset(h, 0, sizeof(*h));
	h->w.kind = OOMKIT_EVENT_OOM;
	h->w.taken_over = true;
	h->w.efd = h->w.oomfd = -1;
	memcpy(h->w.cgroup, m->cgroup, sizeof(h->w.cgroup));
	h->w.cgroup[sizeof(h->w.cgroup) - 1] = 0;
	h->delay_ms = m->delay_ms;
	h->w.dirfd =
	    openat(g->memory_root_fd, h->w.cgroup[0] ? h->w.cgroup : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	h->w.epoll_events = EPOLLIN;
	if (h->w.dirfd < 0 || oomkit__register(g->ctx, &h->w) < 0) {
		drop(g, h);
		return;
	}
	struct epoll_event ev = {.events = h->w.epoll_events, .data.u64 = (uint64_t)(h - g->held)};
	(void)epoll_ctl(g->epfd, EPOLL_CTL_ADD, h->w.efd, &ev);
	if (under_oom(g, h) == 1)
		h->deadline_ns = oomkit__now_ns() + h->delay_ms * 1000000u;
}

/* Receives and applies one message: 1 if one was applied, 0 if none is
 * queued, -1 if the handler closed its end; *ret_quit is set on MSG_QUIT. */
static int apply_one(struct guardian *g, bool *ret_quit)
{
	struct guardian_msg m;
	ssize_t n = recv(g->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n != (ssize_t)sizeof(m))
		return 1;
	m.cgroup[sizeof(m.cgroup) - 1] = 0;
	if (m.op == MSG_QUIT)
		*ret_quit = true;
	else if (m.op == MSG_HOLD)
		hold(g, &m);
	else if (m.op == MSG_DROP) {
		struct held *h = find(g, m.cgroup);
		if (h)
			drop(g, h);
	}
	return 1;
}

/* The handler is gone: every held memcg gets its kernel killer back.  What
 * it sent just before it died is applied first: a take-over whose HOLD is
 * still queued already has its kernel killer disabled, and nobody else would
 * ever give it back. */
static void __attribute__((noreturn)) release_all_and_exit(struct guardian *g)
{
	bool quit = false;
	while (!quit && apply_one(g, &quit) > 0)
		;
	for (unsigned i = 0; i < g->n; i++)
		if (g->held[i].w.kind)
			kernel_killer_on(g, &g->held[i]);
	_exit(0);
}

static void arm(struct guardian *g)
{
	struct itimerspec its = {0};
	uint64_t next = 0;
	for (unsigned i = 0; i < g->n; i++) {
		uint64_t d = g->held[i].deadline_ns;
		if (d && (!next || d < next))
			next = d;
	}
	if (next) {
		uint64_t poll = oomkit__now_ns() + GUARD_POLL_NS;
		if (poll < next)
			next = poll;
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
	}
	(void)timerfd_settime(g->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void check(struct guardian *g, struct held *h, uint64_t now)
{
	int u = under_oom(g, h);
	if (u != 1) {
		h->deadline_ns = 0;
		return;
	}
	if (!h->deadline_ns)
		h->deadline_ns = now + h->delay_ms * 1000000u;
	else if (now >= h->deadline_ns) {
		kernel_killer_on(g, h);
		h->deadline_ns = 0;
	}
}

static void on_socket(struct guardian *g)
{
	bool quit = false;
	if (apply_one(g, &quit) < 0)
		release_all_and_exit(g);
	if (quit)
		_exit(0);
}

static void on_held(struct guardian *g, struct held *h)
{
	if (oomkit__consume(g->ctx, &h->w) <= 0)
		return;
	if (faccessat(h->w.dirfd, "cgroup.procs", F_OK, 0) < 0) {
		drop(g, h);
		return;
	}
	check(g, h, oomkit__now_ns());
}

static void __attribute__((noreturn)) guardian_loop(struct guardian *g)
{
	struct epoll_event evs[32];
	for (;;) {
		int n = epoll_wait(g->epfd, evs, 32, -1);
		for (int i = 0; i < n; i++) {
			int64_t t = (int64_t)evs[i].data.u64;
			if (t == GT_SOCK)
				on_socket(g);
			else if (t == GT_PARENT)
				release_all_and_exit(g);
			else if (t == GT_SIGNAL)
				release_all_and_exit(g);
			else if (t == GT_TIMER) {
				uint64_t x, now = oomkit__now_ns();
				(void)!read(g->timerfd, &x, sizeof(x));
				for (unsigned j = 0; j < g->n; j++)
					if (g->held[j].deadline_ns)
						check(g, &g->held[j], now);
			} else if (t >= 0 && (unsigned)t < g->n && g->held[t].w.kind)
				on_held(g, &g->held[t]);
		}
		arm(g);
	}
}

/* Holds every memcg the handler had taken over when it forked this guardian
 * (a restart), before any message arrives: a handler that dies between the
 * fork and its HOLD messages leaves nothing unheld. */
static void adopt(struct guardian *g, const oomkit_ctx *ctx)
{
	for (unsigned i = 0; i < ctx->max_cgroups; i++) {
		const struct oomkit_watch *w = &ctx->watches[i];
		if (w->kind != OOMKIT_EVENT_OOM || !w->taken_over)
			continue;
		struct guardian_msg m = {.op = MSG_HOLD, .delay_ms = w->delay_ms ? w->delay_ms : 1};
		memcpy(m.cgroup, w->cgroup, sizeof(m.cgroup));
		hold(g, &m);
	}
}

static int add(struct guardian *g, int fd, int64_t t)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)t};
	return epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Runs in the forked child; never returns. */
static void __attribute__((noreturn)) guardian_main(oomkit_ctx *ctx, int sock, pid_t parent)
{
	struct guardian g = {.ctx = ctx, .sock = sock, .n = ctx->max_cgroups};
	sigset_t mask;

	setsid();
	(void)prctl(PR_SET_NAME, "oomkit-guardian", 0, 0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* Keep nothing of the handler's but the socket: its eventfds and
	 * epoll set are its own. */
	if (sock > 3)
		syscall(SYS_close_range, 3u, (unsigned)sock - 1, 0u);
	syscall(SYS_close_range, (unsigned)sock + 1, ~0u, 0u);

	/* The handler may be dead already (getppid() then names a reaper):
	 * the guardian still takes on what it was holding, and releases it. */
	g.parent_pidfd = pidfd_open(parent);
	bool orphan = g.parent_pidfd < 0 || getppid() != parent;
	g.memory_root_fd = open(ctx->memory_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	g.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	g.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	g.epfd = epoll_create1(EPOLL_CLOEXEC);
	g.held = calloc(g.n, sizeof(*g.held));
	if (g.memory_root_fd < 0 || g.sigfd < 0 || g.timerfd < 0 || g.epfd < 0 || !g.held ||
	    add(&g, sock, GT_SOCK) < 0 || (!orphan && add(&g, g.parent_pidfd, GT_PARENT) < 0) ||
	    add(&g, g.sigfd, GT_SIGNAL) < 0 || add(&g, g.timerfd, GT_TIMER) < 0)
		_exit(1);
	adopt(&g, ctx);
	if (orphan)
		release_all_and_exit(&g);
	if (ctx->protect) {
		int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, "-1000", 5);
			close(fd);
		}
	}
	if (ctx->mlock)
		(void)mlockall(MCL_CURRENT | MCL_FUTURE);
	guardian_loop(&g);
}

int oomkit__guardian_start(oomkit_ctx *ctx)
{
	int sv[2];
	pid_t parent = getpid();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		close(sv[0]);
		guardian_main(ctx, sv[1], parent);
	}
	close(sv[1]);
	ctx->guardian_sock = sv[0];
	ctx->guardian_pid = pid;
	ctx->guardian_pidfd = pidfd_open(pid);
	if (ctx->guardian_pidfd < 0 || oomkit__loop_add_guardian(ctx, ctx->guardian_pidfd) < 0) {
		int r = ctx->guardian_pidfd < 0 ? -errno : -EIO;
		oomkit__guardian_stop(ctx);
		return r;
	}
	return 0;
}

static int send_msg(oomkit_ctx *ctx, uint32_t op, const char *cgroup, uint64_t delay_ms)
{
	struct guardian_msg m = {.op = op, .delay_ms = delay_ms};
	if (ctx->guardian_sock < 0)
		return -ENOTCONN;
	if (cgroup) {
		size_t n = strlen(cgroup);
		if (n >= sizeof(m.cgroup))
			return -ENAMETOOLONG;
		memcpy(m.cgroup, cgroup, n + 1);
	}
	return send(ctx->guardian_sock, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -errno;
}

int oomkit__guardian_hold(oomkit_ctx *ctx, const char *rel, uint64_t delay_ms)
{
	if (!ctx->guardian_wanted)
		return 0;
	int r = send_msg(ctx, delay_ms ? MSG_HOLD : MSG_DROP, rel, delay_ms);
	if (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)
		/* It died; the restart sends every hold again, this one included. */
		return oomkit__guardian_restart(ctx);
	return r;
}

static void reap(oomkit_ctx *ctx)
{
	if (ctx->guardian_pidfd >= 0) {
		(void)epoll_ctl(ctx->epfd, EPOLL_CTL_DEL, ctx->guardian_pidfd, NULL);
		close(ctx->guardian_pidfd);
	}
	if (ctx->guardian_sock >= 0)
		close(ctx->guardian_sock);
	if (ctx->guardian_pid > 0)
		(void)waitpid(ctx->guardian_pid, NULL, 0);
	ctx->guardian_pidfd = ctx->guardian_sock = -1;
	ctx->guardian_pid = 0;
}

int oomkit__guardian_restart(oomkit_ctx *ctx)
{
	oomkit__log(ctx, OOMKIT_LOG_WARNING, "guardian %d exited; starting a new one",
		    (int)ctx->guardian_pid);
	/* Closing the socket first makes a still-living guardian release and exit. */
	if (ctx->guardian_pid > 0 && ctx->guardian_pidfd >= 0)
		(void)kill(ctx->guardian_pid, SIGKILL);
	reap(ctx);
	int r = oomkit__guardian_start(ctx);
	if (r < 0) {
		oomkit__log(ctx, OOMKIT_LOG_ERR, "cannot restart the guardian: %s", strerror(-r));
		return r;
	}
	for (unsigned i = 0; i < ctx->max_cgroups; i++) {
		struct oomkit_watch *w = &ctx->watches[i];
		if (w->kind && w->taken_over &&
		    (r = send_msg(ctx, MSG_HOLD, w->cgroup, w->delay_ms ? w->delay_ms : 1)) < 0)
			return r;
	}
	return 0;
}

void oomkit__guardian_stop(oomkit_ctx *ctx)
{
	if (ctx->guardian_sock >= 0)
		(void)send_msg(ctx, MSG_QUIT, NULL, 0);
	reap(ctx);
}

OOMKIT__EXPORT pid_t oomkit_guardian_pid(const oomkit_ctx *ctx)
{
	return ctx->guardian_pid;
}
