/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hook-runner.c - oomkit-hook-runner, the program oomkitd execs at start to
 * run its hooks (before_kill, after_kill, shed_command): the daemon never
 * forks or execs once it runs, and never waits for a hook.  Not for people
 * to run:
 *
 *   oomkit-hook-runner     (its end of the daemon's socket pair as fd 3)
 *
 * It is started before the daemon cuts its capabilities and installs its
 * seccomp filter, so a hook runs as the daemon was started (root, the
 * unit's bounding set), not under the daemon's system call allow-list.
 *
 * For each RUN (hookproto.h) it forks; the child starts a session of its
 * own, joins its slot's memcg (writes "0" to the fd the daemon sent for the
 * slot), puts its stdout and stderr on a pipe, and execs the command's
 * words, never through a shell, with only the environment it was sent.  An
 * exec that fails says why through a close-on-exec pipe.  A hook that
 * outlives its timeout is killed with its process group; once its process
 * has exited, whatever is left of the group is killed too.  Its output goes
 * to the daemon line by line, escaped (at most OUTPUT_LINES lines a run).
 * When the daemon goes (its end of the pair closes), every hook is killed
 * and the runner exits.  Tables are fixed; nothing is allocated.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hookproto.h"
#include "json.h"
#include "common/value.h"

#define OUTPUT_LINES 32
#define ENV_MAX 40

struct run {
	bool used;
	uint32_t id;
	pid_t pid;
	int out_fd, err_fd; /* -1: closed */
	uint64_t start_ns, deadline_ns;
	bool timed_out;
	char line[HOOKPROTO_LINE_MAX];
	size_t line_len;
	unsigned lines;
};

static struct run runs[HOOKPROTO_SLOTS];
static int slot_fds[HOOKPROTO_SLOTS] = {-1, -1, -1, -1, -1, -1, -1, -1};
static int sock = HOOKPROTO_FD;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void send_done(uint32_t id, pid_t pid, enum hookproto_how how, int code, uint64_t start_ns)
{
	struct hookproto_done d = {.op = HOOKPROTO_DONE,
				   .id = id,
				   .pid = pid,
				   .how = how,
				   .code = code,
				   .duration_ms =
				       start_ns ? (uint32_t)((now_ns() - start_ns) / 1000000u) : 0};
	(void)!send(sock, &d, sizeof(d), MSG_NOSIGNAL);
}

static void send_line(struct run *r, const char *s, size_t n)
{
	struct hookproto_output o = {.op = HOOKPROTO_OUTPUT, .id = r->id, .pid = r->pid};

	if (r->lines > OUTPUT_LINES)
		return;
	if (r->lines++ == OUTPUT_LINES) {
		s = "(more output dropped)";
		n = strlen(s);
	}
	oomkit__escape_text(o.line, sizeof(o.line), s, n);
	(void)!send(sock, &o, sizeof(o), MSG_NOSIGNAL);
}

/* Reads what the hook wrote, as much as is there now; each complete line
 * goes to the daemon, and a line longer than a message is cut.  False at
 * the pipe's end. */
static bool read_out(struct run *r)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(r->out_fd, buf, sizeof(buf))) != 0) {
		if (n < 0)
			return errno == EINTR || errno == EAGAIN;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || r->line_len == sizeof(r->line) / 4) {
				send_line(r, r->line, r->line_len);
				r->line_len = 0;
				if (buf[i] == '\n')
					continue;
			}
			r->line[r->line_len++] = buf[i];
		}
	}
	return false;
}

/* The rest of the output, and the pipe closed. */
static void drain(struct run *r)
{
	if (r->out_fd < 0)
		return;
	(void)read_out(r);
	if (r->line_len)
		send_line(r, r->line, r->line_len);
	r->line_len = 0;
	close(r->out_fd);
	r->out_fd = -1;
}

/* In the child, after fork: only async-signal-safe calls. */
static void child(int slot, int err_fd, int out_fd, char **argv, char **envp)
{
	sigset_t none;
	int e, null;

	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (write(slot_fds[slot], "0", 1) != 1)
		goto fail;
	/* The runner keeps the daemon's -1000; a hook is as killable as any. */
	int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (adj >= 0) {
		(void)!write(adj, "0", 1);
		close(adj);
	}
	null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ||
	    dup3(err_fd, HOOKPROTO_FD, O_CLOEXEC) < 0)
		goto fail;
	syscall(SYS_close_range, (unsigned)HOOKPROTO_FD + 1, ~0u, 0u);
	err_fd = HOOKPROTO_FD;
	execve(argv[0], argv, envp);
fail:
	e = errno;
	(void)!write(err_fd, &e, sizeof(e));
	_exit(127);
}

static int split_env(char *env, size_t len, char **envp)
{
	int n = 0;

	envp[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	for (size_t off = 0; off < len && n < ENV_MAX - 1;) {
		size_t l = strnlen(env + off, len - off);
		if (off + l >= len)
			break; /* not NUL-terminated: dropped */
		envp[n++] = env + off;
		off += l + 1;
	}
	envp[n] = NULL;
	return n;
}

static void start(struct hookproto_run *m)
{
	char words[VALUE_COMMAND_MAX], *argv[VALUE_COMMAND_ARGS + 1], *envp[ENV_MAX];
	int out[2], err[2];

	m->command[sizeof(m->command) - 1] = '\0';
	if (m->slot >= HOOKPROTO_SLOTS || runs[m->slot].used || slot_fds[m->slot] < 0) {
		send_done(m->id, 0, HOOK_NOT_RUN,
			  m->slot < HOOKPROTO_SLOTS && runs[m->slot].used ? EBUSY : EBADF, 0);
		return;
	}
	if (value_split_command(m->command, words, sizeof(words), argv, VALUE_COMMAND_ARGS + 1) < 0) {
		send_done(m->id, 0, HOOK_NOT_RUN, EINVAL, 0);
		return;
	}
	split_env(m->env, m->env_len < sizeof(m->env) ? m->env_len : sizeof(m->env), envp);
	if (pipe2(out, O_CLOEXEC) < 0) {
		send_done(m->id, 0, HOOK_NOT_RUN, errno, 0);
		return;
	}
	if (pipe2(err, O_CLOEXEC) < 0) {
		send_done(m->id, 0, HOOK_NOT_RUN, errno, 0);
		close(out[0]);
		close(out[1]);
		return;
	}
	uint64_t t = now_ns();
	pid_t pid = fork();
	if (pid == 0)
		child((int)m->slot, err[1], out[1], argv, envp);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		send_done(m->id, 0, HOOK_NOT_RUN, errno, 0);
		close(out[0]);
		close(err[0]);
		return;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	runs[m->slot] = (struct run){.used = true,
				     .id = m->id,
				     .pid = pid,
				     .out_fd = out[0],
				     .err_fd = err[0],
				     .start_ns = t,
				     .deadline_ns = t + (uint64_t)m->timeout_ms * 1000000u};
}

static void finished(struct run *r, int status)
{
	int e = 0;

	/* What it started and left behind in its process group goes with it. */
	(void)kill(-r->pid, SIGKILL);
	drain(r);
	if (read(r->err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e))
		send_done(r->id, r->pid, HOOK_NOT_RUN, e, r->start_ns);
	else if (r->timed_out)
		send_done(r->id, r->pid, HOOK_TIMED_OUT, 0, r->start_ns);
	else if (WIFSIGNALED(status))
		send_done(r->id, r->pid, HOOK_SIGNALLED, WTERMSIG(status), r->start_ns);
	else
		send_done(r->id, r->pid, HOOK_EXITED, WEXITSTATUS(status), r->start_ns);
	close(r->err_fd);
	*r = (struct run){.out_fd = -1, .err_fd = -1};
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
			if (runs[i].used && runs[i].pid == pid)
				finished(&runs[i], status);
}

static void take_slots(const struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[HOOKPROTO_SLOTS];
		memcpy(fds, CMSG_DATA(c), (n < HOOKPROTO_SLOTS ? n : HOOKPROTO_SLOTS) * sizeof(int));
		for (size_t i = 0; i < n && i < HOOKPROTO_SLOTS; i++) {
			if (slot_fds[i] >= 0)
				close(slot_fds[i]);
			slot_fds[i] = fds[i];
			fcntl(fds[i], F_SETFD, FD_CLOEXEC);
		}
	}
}

/* One message from the daemon; false when it is gone. */
static bool receive(void)
{
	static struct hookproto_run m;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HOOKPROTO_SLOTS)];
	} control;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)};
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return false;
	if (n >= (ssize_t)sizeof(uint32_t) && m.op == HOOKPROTO_SLOTS_MSG)
		take_slots(&mh);
	else if (n == (ssize_t)sizeof(m) && m.op == HOOKPROTO_RUN)
		start(&m);
	return true;
}

static void time_out(uint64_t now)
{
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (runs[i].used && !runs[i].timed_out && now >= runs[i].deadline_ns) {
			runs[i].timed_out = true;
			(void)kill(-runs[i].pid, SIGKILL);
			(void)kill(runs[i].pid, SIGKILL); /* if it had no time to start its session */
		}
}

static int poll_timeout(uint64_t now)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (runs[i].used && !runs[i].timed_out && (!next || runs[i].deadline_ns < next))
			next = runs[i].deadline_ns;
	if (!next)
		return -1;
	return next <= now ? 0 : (int)((next - now) / 1000000u + 1);
}

static void loop(int sigfd)
{
	for (;;) {
		struct pollfd p[2 + HOOKPROTO_SLOTS];
		unsigned n = 0;
		p[n++] = (struct pollfd){.fd = sock, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
		for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
			p[n++] = (struct pollfd){.fd = runs[i].used ? runs[i].out_fd : -1, .events = POLLIN};
		int r = poll(p, n, poll_timeout(now_ns()));
		if (r < 0 && errno != EINTR)
			return;
		if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !receive())
			return;
		if (r > 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			(void)!read(sigfd, &si, sizeof(si));
		}
		for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
			if (runs[i].used && runs[i].out_fd >= 0 && (p[2 + i].revents & (POLLIN | POLLHUP)) &&
			    !read_out(&runs[i]))
				drain(&runs[i]);
		reap();
		time_out(now_ns());
	}
}

int main(int argc, char **argv)
{
	struct hookproto_done ready = {.op = HOOKPROTO_READY};
	sigset_t chld;

	(void)argv;
	if (argc != 1 || fcntl(sock, F_GETFD) < 0) {
		static const char usage[] = "oomkit-hook-runner: started by oomkitd only\n";
		(void)!write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return 1;
	fcntl(sock, F_SETFD, FD_CLOEXEC);
	/* Like the daemon: never the kernel's choice of victim. */
	int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (adj >= 0) {
		(void)!write(adj, "-1000", 5);
		close(adj);
	}
	if (send(sock, &ready, sizeof(ready), MSG_NOSIGNAL) < 0)
		return 1;
	loop(sigfd);
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (runs[i].used)
			(void)kill(-runs[i].pid, SIGKILL);
	return 0;
}
