/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guardian.c - the handler's side of its guardian (guardian-loop.c): starts
 * it, hands it the memcgs the handler takes over, restarts it when it dies.
 *
 * The guardian is the small program oomkit-guardian, exec'd in a fork, so it
 * holds its own table and nothing of the handler's (a forked guardian
 * copied every table of the handler, and locked them with mlockall).  Where
 * the program is missing or cannot be executed (a static program in an
 * initramfs, a seccomp filter without execve), the fork runs the same loop
 * itself.  Either way the two talk over a SOCK_SEQPACKET pair; memcgs go to
 * the guardian as directory fds, so it never resolves a path.  Every hold
 * is queued before the guardian starts: one that dies at once, or a handler
 * that dies right after starting it, leaves no taken-over memcg unheld.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#ifndef OOMKIT__GUARDIAN_PROGRAM
#define OOMKIT__GUARDIAN_PROGRAM "/usr/lib/oomkit/oomkit-guardian"
#endif

/* How long a started guardian has to say it runs. */
#define READY_TIMEOUT_MS 5000
/* The guardian's end of the pair, in the program it execs. */
#define GUARDIAN_FD 3

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The handler's name for a watch: its slot and the slot's generation. */
static uint64_t watch_id(const oomkit_ctx *ctx, const struct oomkit_watch *w)
{
	return (uint64_t)(w - ctx->watches) << 32 | w->gen;
}

static size_t msg_len(unsigned n)
{
	return offsetof(struct oomkit__guardian_msg, e) +
	       n * sizeof(((struct oomkit__guardian_msg *)0)->e[0]);
}

/* Sends one message; fds (m->n of them) go along for a HOLD. */
static int send_msg(int sock, const struct oomkit__guardian_msg *m, const int *fds, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * OOMKIT__GUARDIAN_BATCH)];
	} control;
	struct iovec iov = {(void *)m, msg_len(m->n)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fds && m->n) {
		memset(&control, 0, sizeof(control));
		mh.msg_control = &control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * m->n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * m->n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * m->n);
	}
	ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	return k == (ssize_t)iov.iov_len ? 0 : k < 0 ? -errno : -EIO;
}

/* HOLD for every taken-over watch, in batches. */
static int send_holds(oomkit_ctx *ctx, int sock, int flags)
{
	struct oomkit__guardian_msg m = {.op = OOMKIT__GUARDIAN_HOLD};
	int fds[OOMKIT__GUARDIAN_BATCH], r = 0;

	for (unsigned i = 0; i <= ctx->max_cgroups && r == 0; i++) {
		const struct oomkit_watch *w = i < ctx->max_cgroups ? &ctx->watches[i] : NULL;
		if (w && (!w->kind || !w->taken_over))
			continue;
		if (w) {
			m.e[m.n].id = watch_id(ctx, w);
			m.e[m.n].delay_ms = w->delay_ms ? w->delay_ms : 1;
			fds[m.n++] = w->dirfd;
		}
		if (m.n == OOMKIT__GUARDIAN_BATCH || (!w && m.n)) {
			r = send_msg(sock, &m, fds, flags);
			m.n = 0;
		}
	}
	return r;
}

static unsigned guardian_flags(const oomkit_ctx *ctx)
{
	return (ctx->protect ? OOMKIT__GUARDIAN_PROTECT : 0) | (ctx->mlock ? OOMKIT__GUARDIAN_MLOCK : 0);
}

/* The program to exec: the context's, $OOMKIT_GUARDIAN, or the installed
 * one; "" in either place says none.  NULL: run the guardian in the fork. */
static const char *guardian_program(const oomkit_ctx *ctx)
{
	const char *p = ctx->guardian_path ? ctx->guardian_path : secure_getenv("OOMKIT_GUARDIAN");
	if (!p)
		p = OOMKIT__GUARDIAN_PROGRAM;
	return p[0] ? p : NULL;
}

/* Forks the guardian with sock as its end: it execs prog, or runs the loop
 * itself if prog is NULL or cannot be executed. */
static pid_t fork_guardian(oomkit_ctx *ctx, int sock, const char *prog)
{
	char parent[16], backend[16], flags[16];
	pid_t self = getpid();
	snprintf(parent, sizeof(parent), "%d", (int)self);
	snprintf(backend, sizeof(backend), "%d", (int)ctx->backend);
	snprintf(flags, sizeof(flags), "%u", guardian_flags(ctx));
	char *argv[] = {"oomkit-guardian", "--parent", parent, "--backend", backend, "--flags", flags, NULL};
	char *envp[] = {NULL};

	pid_t pid = fork();
	if (pid != 0)
		return pid < 0 ? -errno : pid;
	/* Only async-signal-safe calls until execve: keep the socket as fd 3
	 * (without close-on-exec), and nothing else of the handler's. */
	if (sock == GUARDIAN_FD ? fcntl(sock, F_SETFD, 0) < 0 : dup2(sock, GUARDIAN_FD) < 0)
		_exit(1);
	syscall(SYS_close_range, (unsigned)GUARDIAN_FD + 1, ~0u, 0u);
	if (prog)
		execve(prog, argv, envp);
	oomkit__guardian_run(GUARDIAN_FD, self, ctx->backend, guardian_flags(ctx));
}

/* Waits for the guardian's READY. */
static int wait_ready(int sock)
{
	struct oomkit__guardian_msg m;
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int r = poll(&p, 1, READY_TIMEOUT_MS);
	if (r <= 0)
		return r == 0 ? -ETIMEDOUT : -errno;
	ssize_t n = recv(sock, &m, sizeof(m), MSG_DONTWAIT);
	return n >= (ssize_t)msg_len(0) && m.op == OOMKIT__GUARDIAN_READY ? 0 : -ECHILD;
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

/* One try: the pair, the holds queued, the guardian forked, its READY. */
static int start_with(oomkit_ctx *ctx, const char *prog)
{
	int sv[2], r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* Queued before it runs (MSG_DONTWAIT: what does not fit waits for
	 * the guardian to read). */
	bool queued = send_holds(ctx, sv[0], MSG_DONTWAIT) == 0;
	pid_t pid = fork_guardian(ctx, sv[1], prog);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return (int)pid;
	}
	ctx->guardian_sock = sv[0];
	ctx->guardian_pid = pid;
	ctx->guardian_pidfd = pidfd_open(pid);
	if ((r = wait_ready(sv[0])) < 0 || (!queued && (r = send_holds(ctx, sv[0], 0)) < 0) ||
	    (r = ctx->guardian_pidfd < 0 ? -errno : 0) < 0 ||
	    (r = oomkit__loop_add_guardian(ctx, ctx->guardian_pidfd)) < 0) {
		if (ctx->guardian_pid > 0)
			(void)kill(ctx->guardian_pid, SIGKILL);
		reap(ctx);
		return r;
	}
	return 0;
}

int oomkit__guardian_start(oomkit_ctx *ctx)
{
	const char *prog = guardian_program(ctx);
	int r = start_with(ctx, prog);
	if (r < 0 && prog) {
		oomkit__log(ctx, OOMKIT_LOG_NOTICE,
			    "guardian program %s did not start (%s); forking the guardian", prog,
			    strerror(-r));
		r = start_with(ctx, NULL);
	}
	return r;
}

int oomkit__guardian_hold(oomkit_ctx *ctx, const struct oomkit_watch *w, uint64_t delay_ms)
{
	struct oomkit__guardian_msg m = {.op = delay_ms ? OOMKIT__GUARDIAN_HOLD : OOMKIT__GUARDIAN_DROP,
					 .n = 1};
	m.e[0].id = watch_id(ctx, w);
	m.e[0].delay_ms = delay_ms;
	if (!ctx->guardian_wanted)
		return 0;
	const int *fd = delay_ms ? &w->dirfd : NULL;
	int r = ctx->guardian_sock < 0 ? -ENOTCONN : send_msg(ctx->guardian_sock, &m, fd, 0);
	if (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)
		/* It died; the restart sends every hold again, this one included. */
		return oomkit__guardian_restart(ctx);
	return r;
}

void oomkit__guardian_clear(oomkit_ctx *ctx, const struct oomkit_watch *w)
{
	struct oomkit__guardian_msg m = {.op = OOMKIT__GUARDIAN_CLEAR, .n = 1};
	m.e[0].id = watch_id(ctx, w);
	if (ctx->guardian_wanted && ctx->guardian_sock >= 0)
		(void)send_msg(ctx->guardian_sock, &m, NULL, MSG_DONTWAIT);
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
	if (r < 0)
		oomkit__log(ctx, OOMKIT_LOG_ERR, "cannot restart the guardian: %s", strerror(-r));
	return r;
}

void oomkit__guardian_stop(oomkit_ctx *ctx)
{
	struct oomkit__guardian_msg m = {.op = OOMKIT__GUARDIAN_QUIT};
	if (ctx->guardian_sock >= 0)
		(void)send_msg(ctx->guardian_sock, &m, NULL, 0);
	reap(ctx);
}

OOMKIT__EXPORT pid_t oomkit_guardian_pid(const oomkit_ctx *ctx)
{
	return ctx->guardian_pid;
}
