/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guardian-loop.c - the guardian process itself: it keeps the OOM delay when
 * the handling process cannot.  It holds its own OOM notifications (v1
 * cgroup.event_control eventfds, v2 memory.events.local) for every memcg the
 * handler has taken over, and
 *   - gives the kernel OOM killer back to a memcg still under OOM delay_ms
 *     after its OOM began, whatever the handler is doing;
 *   - gives it back to every held memcg and exits as soon as the handler
 *     dies (its pidfd becomes readable), so a crashed handler never leaves a
 *     memcg deadlocked or unwatched.
 *
 * It knows the memcgs by the directory fds the handler passes it
 * (SCM_RIGHTS), never by path, and keeps a table of what it holds and
 * nothing else: it runs as the small program oomkit-guardian (guardian-main.c)
 * that the handler execs, or, where that program cannot run, in a plain fork
 * of the handler (guardian.c).
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
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* While a held memcg is under OOM, its state is read again this often. */
#define GUARD_POLL_NS (10ull * 1000 * 1000)
/* The table grows by this many entries at a time. */
#define HELD_CHUNK 16

/* One held memcg. */
struct held {
	struct oomkit_watch w; /* dirfd, efd, oomfd: registered like a watch */
	uint64_t id;	       /* the handler's name for it */
	uint64_t delay_ms;
	uint64_t deadline_ns;	 /* 0: not under OOM */
	uint64_t clear_since_ns; /* since when under_oom has read 0 in this OOM; 0: not */
};

struct guardian {
	oomkit_ctx ctx; /* the backend only: no roots, no buffers */
	int sock, parent_pidfd, sigfd, timerfd, epfd;
	struct held *held;
	unsigned n, cap;
};

enum { GT_SOCK = -1, GT_PARENT = -2, GT_SIGNAL = -3, GT_TIMER = -4 };

static int under_oom(struct guardian *g, struct held *h)
{
	struct oomkit__oom_control oc;
	int r = oomkit__oom_state(&g->ctx, &h->w, &oc);
	return r < 0 ? r : oc.under_oom;
}

static void kernel_killer_on(struct guardian *g, struct held *h)
{
	(void)oomkit__hold_at(&g->ctx, h->w.dirfd, false);
}

static void drop(struct guardian *g, struct held *h)
{
	if (h->w.efd >= 0)
		(void)epoll_ctl(g->epfd, EPOLL_CTL_DEL, h->w.efd, NULL);
	oomkit__watch_close_fds(&h->w);
	memset(h, 0, sizeof(*h));
	oomkit__watch_init_fds(&h->w);
}

static struct held *find(struct guardian *g, uint64_t id)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->held[i].w.kind && g->held[i].id == id)
			return &g->held[i];
	return NULL;
}

/* A free entry, growing the table if it is full.  HOLDs come when the
 * handler takes a memcg over, at its start or a reload, not in an OOM. */
static struct held *free_entry(struct guardian *g)
{
	for (unsigned i = 0; i < g->n; i++)
		if (!g->held[i].w.kind)
			return &g->held[i];
	if (g->n == g->cap) {
		struct held *t = realloc(g->held, (g->cap + HELD_CHUNK) * sizeof(*t));
		if (!t)
			return NULL;
		g->held = t;
		g->cap += HELD_CHUNK;
	}
	struct held *h = &g->held[g->n++];
	memset(h, 0, sizeof(*h));
	oomkit__watch_init_fds(&h->w);
	return h;
}

static void hold(struct guardian *g, uint64_t id, uint64_t delay_ms, int dirfd)
{
	struct held *h = find(g, id);
	if (h) {
		h->delay_ms = delay_ms;
		close(dirfd);
		return;
	}
	if (!(h = free_entry(g))) {
		/* Nobody would give this one back if the handler died: the
		 * kernel keeps its killer rather. */
		(void)oomkit__hold_at(&g->ctx, dirfd, false);
		close(dirfd);
		return;
	}
	h->w.kind = OOMKIT_EVENT_OOM;
	h->w.taken_over = true;
	h->w.dirfd = dirfd;
	h->w.epoll_events = EPOLLIN;
	h->id = id;
	h->delay_ms = delay_ms;
	struct epoll_event ev = {.data.u64 = (uint64_t)(h - g->held)};
	if (oomkit__register(&g->ctx, &h->w) < 0 ||
	    (ev.events = h->w.epoll_events, epoll_ctl(g->epfd, EPOLL_CTL_ADD, h->w.efd, &ev) < 0)) {
		(void)oomkit__hold_at(&g->ctx, dirfd, false);
		drop(g, h);
		return;
	}
	if (under_oom(g, h) == 1)
		h->deadline_ns = oomkit__now_ns() + h->delay_ms * 1000000u;
}

/* The handler saw h's OOM end: its clock stops.  An OOM under way now is
 * a new one, whose event may have come before this message: its clock
 * starts afresh, or nothing would start it again if the handler hung in it. */
static void clear(struct guardian *g, struct held *h)
{
	h->clear_since_ns = 0;
	h->deadline_ns = under_oom(g, h) == 1 ? oomkit__now_ns() + h->delay_ms * 1000000u : 0;
}

/* Applies one message (fds: the directory fds that came with it). */
static void apply(struct guardian *g, const struct oomkit__guardian_msg *m, size_t len, int *fds,
		  size_t n_fds, bool *ret_quit)
{
	size_t n = len < offsetof(struct oomkit__guardian_msg, e) ? 0 : m->n;
	if (n > OOMKIT__GUARDIAN_BATCH ||
	    offsetof(struct oomkit__guardian_msg, e) + n * sizeof(m->e[0]) > len)
		n = 0;
	if (m->op == OOMKIT__GUARDIAN_QUIT)
		*ret_quit = true;
	for (size_t i = 0; i < n; i++) {
		if (m->op == OOMKIT__GUARDIAN_HOLD && i < n_fds) {
			hold(g, m->e[i].id, m->e[i].delay_ms ? m->e[i].delay_ms : 1, fds[i]);
			fds[i] = -1;
		} else if (m->op == OOMKIT__GUARDIAN_DROP) {
			struct held *h = find(g, m->e[i].id);
			if (h)
				drop(g, h);
		} else if (m->op == OOMKIT__GUARDIAN_CLEAR) {
			struct held *h = find(g, m->e[i].id);
			if (h)
				clear(g, h);
		}
	}
	for (size_t i = 0; i < n_fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Receives and applies one message: 1 if one was applied, 0 if none is
 * queued, -1 if the handler closed its end; *ret_quit is set on QUIT. */
static int apply_one(struct guardian *g, bool *ret_quit)
{
	struct oomkit__guardian_msg m;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * OOMKIT__GUARDIAN_BATCH)];
	} control;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
	int fds[OOMKIT__GUARDIAN_BATCH];
	size_t n_fds = 0;

	ssize_t n = recvmsg(g->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (n_fds < OOMKIT__GUARDIAN_BATCH)
				fds[n_fds++] = fd;
			else
				close(fd);
		}
	}
	apply(g, &m, (size_t)n, fds, n_fds, ret_quit);
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

/* An OOM's clock runs from its first event until the handler says it is
 * over (CLEAR) or under_oom has read 0 for OOMKIT__OOM_SETTLE_NS: a 0 now
 * and then is a job giving back a page at a time, which a hung handler's
 * OOM must not outlast.  At the deadline, only a memcg under OOM gets its
 * killer back. */
static void check(struct guardian *g, struct held *h, uint64_t now)
{
	int u = under_oom(g, h);
	if (u != 1) {
		/* Removed (the kernel signals every eventfd then): nothing is
		 * left to give back. */
		if (faccessat(h->w.dirfd, "cgroup.procs", F_OK, 0) < 0)
			drop(g, h);
		else if (!h->clear_since_ns)
			h->clear_since_ns = now;
		else if (oomkit__consume(&g->ctx, &h->w) > 0)
			/* Two reads of 0 say nothing of the time between them:
			 * an OOM event since the first is a 1 this loop did not
			 * see (a busy machine keeps it off the CPU for longer than
			 * a flicker's 1 lasts).  The 0 is only known from now. */
			h->clear_since_ns = now;
		else if (now - h->clear_since_ns >= OOMKIT__OOM_SETTLE_NS)
			h->deadline_ns = h->clear_since_ns = 0;
		return;
	}
	h->clear_since_ns = 0;
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

/* The kernel signals the handler's eventfd and this one in the same call,
 * and on a busy CPU the scheduler mostly runs the guardian first: whatever
 * it does here, the handler waits for (a trace of the notify benchmark: in
 * 40 OOMs out of 40, 20 us at the median, most of it these reads).  So an
 * event only starts the clock; whether the memcg is under OOM at all, or
 * was removed, is read at the first poll, which arm() sets for the deadline
 * or GUARD_POLL_NS from now, whichever is earlier, and which releases
 * nothing that is not under OOM. */
static void on_held(struct guardian *g, struct held *h)
{
	if (oomkit__consume(&g->ctx, &h->w) <= 0)
		return;
	/* Under OOM again: a 0 read before this event did not end it. */
	h->clear_since_ns = 0;
	if (!h->deadline_ns)
		h->deadline_ns = oomkit__now_ns() + h->delay_ms * 1000000u;
}

static void on_timer(struct guardian *g)
{
	uint64_t x, now = oomkit__now_ns();
	(void)!read(g->timerfd, &x, sizeof(x));
	for (unsigned j = 0; j < g->n; j++)
		if (g->held[j].deadline_ns)
			check(g, &g->held[j], now);
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
			else if (t == GT_PARENT || t == GT_SIGNAL)
				release_all_and_exit(g);
			else if (t == GT_TIMER)
				on_timer(g);
			else if (t >= 0 && (unsigned)t < g->n && g->held[t].w.kind)
				on_held(g, &g->held[t]);
		}
		arm(g);
	}
}

static int add(struct guardian *g, int fd, int64_t t)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)t};
	return epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void ignore_signals(sigset_t *mask)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigprocmask(SIG_BLOCK, mask, NULL);
}

/* Stack the guardian's loop uses (a message buffer and its fds, a batch of
 * epoll events, the backend's reads), faulted in and so locked. */
#define STACK_PREFAULT (64 * 1024)

static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char stack[STACK_PREFAULT];
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 0;
}

/* Locks what the guardian touches, not the whole program: a static C
 * library is mostly code it never runs (printf, locales, the loader), and
 * mlockall(MCL_CURRENT) would keep all of it resident.  The loop has run
 * its setup by now; the release path, which runs only when it matters, is
 * locked explicitly, page by page. */
static void lock_memory(void)
{
	static void (*const release_path[])(void) = {
	    (void (*)(void))kernel_killer_on,
	    (void (*)(void))release_all_and_exit,
	    (void (*)(void))check,
	    (void (*)(void))on_timer,
	    (void (*)(void))oomkit__hold_at,
	    (void (*)(void))oomkit__v1_hold,
	    (void (*)(void))oomkit__v2_hold,
	    (void (*)(void))oomkit__write_file_at,
	    (void (*)(void))oomkit__read_u64_at,
	    (void (*)(void))oomkit__append_u64,
	    (void (*)(void))oomkit__oom_state,
	    (void (*)(void))oomkit__v2_oom_state,
	    (void (*)(void))oomkit__v2_watch_oom_state,
	    (void (*)(void))oomkit__v2_oom_rule,
	    (void (*)(void))oomkit__stall_share,
	    (void (*)(void))oomkit__swap_space,
	    (void (*)(void))oomkit__parse_psi_line,
	    (void (*)(void))oomkit__v1_oom_control,
	    (void (*)(void))oomkit__parse_oom_control,
	};
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0) {
		(void)mlockall(MCL_CURRENT | MCL_FUTURE);
		return;
	}
	prefault_stack();
	for (size_t i = 0; i < sizeof(release_path) / sizeof(release_path[0]); i++) {
		uintptr_t page = (uintptr_t)release_path[i] & ~(uintptr_t)4095;
		/* Two pages: a function may cross into the next. */
		(void)mlock((const void *)page, 8192);
	}
}

static void protect_self(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "-1000", 5);
		close(fd);
	}
}

void oomkit__guardian_run(int sock, pid_t parent, enum oomkit_backend backend, unsigned flags)
{
	struct guardian g = {.sock = sock};
	sigset_t mask;

	setsid();
	(void)prctl(PR_SET_NAME, "oomkit-guardian", 0, 0, 0);
	ignore_signals(&mask);
	oomkit__cgroup_setup_backend(&g.ctx, backend);
	/* cgroup v2's swap rule reads the machine's free swap: a held cgroup
	 * that can still swap is not out of memory to the guardian either. */
	g.ctx.meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	/* The handler may be dead already (getppid() then names a reaper):
	 * the guardian still takes on what it was holding, and releases it. */
	g.parent_pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
	bool orphan = g.parent_pidfd < 0 || getppid() != parent;
	g.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	g.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	g.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (g.sigfd < 0 || g.timerfd < 0 || g.epfd < 0 || add(&g, sock, GT_SOCK) < 0 ||
	    (!orphan && add(&g, g.parent_pidfd, GT_PARENT) < 0) || add(&g, g.sigfd, GT_SIGNAL) < 0 ||
	    add(&g, g.timerfd, GT_TIMER) < 0)
		_exit(1);
	if (orphan)
		release_all_and_exit(&g);
	if (flags & OOMKIT__GUARDIAN_PROTECT)
		protect_self();
	/* A fork holds a copy of the handler, none of it locked (locks do not
	 * survive fork): all of it, as the handler does. */
	if ((flags & OOMKIT__GUARDIAN_MLOCK) && (flags & OOMKIT__GUARDIAN_EXECED))
		lock_memory();
	else if (flags & OOMKIT__GUARDIAN_MLOCK)
		(void)mlockall(MCL_CURRENT | MCL_FUTURE);
	/* Ready: the handler waits for this before it counts on us. */
	struct oomkit__guardian_msg ready = {.op = OOMKIT__GUARDIAN_READY};
	if (send(sock, &ready, offsetof(struct oomkit__guardian_msg, e), MSG_NOSIGNAL) < 0)
		release_all_and_exit(&g);
	guardian_loop(&g);
}
