/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sdbus.c - see sdbus.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "rules/pattern.h"
#include "scope/sdbus.h"

#ifndef OOMKITD_SYSTEMD_PROGRAM
#define OOMKITD_SYSTEMD_PROGRAM "/usr/lib/oomkit/oomkitd-systemd"
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define HELPER_FD 3
/* How long the helper has to connect, and to put the units back at a stop. */
#define READY_TIMEOUT_MS 10000
#define QUIT_TIMEOUT_MS 10000

bool sdbus_systemd_machine(const char *cgroup_root)
{
	struct statfs fs;
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode) &&
	       statfs(cgroup_root, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n > k && memcmp(s + n - k, suffix, k) == 0;
}

bool sdbus_unit_of(const char *rel, char *unit, size_t len)
{
	static const char *const types[] = {".service", ".scope", ".slice", ".socket", ".mount", ".swap"};
	const char *last = strrchr(rel, '/');
	last = last ? last + 1 : rel;
	/* Every component above it a slice: systemd's tree, nobody's subtree. */
	for (const char *p = rel; p < last;) {
		const char *slash = strchr(p, '/');
		if (!ends_with(p, (size_t)(slash - p), ".slice"))
			return false;
		p = slash + 1;
	}
	size_t n = strlen(last);
	if (n == 0 || n >= len || n >= SDBUS_UNIT_MAX)
		return false;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (ends_with(last, n, types[i])) {
			memcpy(unit, last, n + 1);
			return true;
		}
	return false;
}

/* Whether dir (n bytes) is where systemd puts the slice named slice:
 * "a-b.slice" lives at "a.slice/a-b.slice", "-.slice" is the root. */
static bool slice_path_is(const char *dir, size_t n, const char *slice)
{
	char want[PATTERN_MAX];
	size_t k = 0, len = strlen(slice) - strlen(".slice");

	if (strcmp(slice, "-.slice") == 0)
		return n == 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && slice[i] != '-')
			continue;
		int w = snprintf(want + k, sizeof(want) - k, "%s%.*s.slice", k ? "/" : "", (int)i, slice);
		if (w < 0 || (size_t)w >= sizeof(want) - k)
			return false;
		k += (size_t)w;
	}
	return k == n && memcmp(want, dir, n) == 0;
}

bool sdbus_scope_for(const char *pattern, pid_t pid, char *unit, size_t unit_len, char *slice,
		     size_t slice_len)
{
	char tag[32], path[PATTERN_MAX + 64], check[SDBUS_UNIT_MAX];
	const char *last = strrchr(pattern, '/');
	last = last ? last + 1 : pattern;
	size_t n = 0, len = strlen(last), dir_len = last > pattern ? (size_t)(last - pattern) - 1 : 0;
	bool scope = len > 6 && strcmp(last + len - 6, ".scope") == 0;

	snprintf(tag, sizeof(tag), "oomkit-run-%d", (int)pid);
	/* A "*" to name each run's scope; none above the last component. */
	if (!strchr(last, '*') || (!scope && last[len - 1] != '*') || memchr(pattern, '*', dir_len))
		return false;
	for (const char *p = last; *p; p++) {
		int w = *p != '*'
			    ? snprintf(unit + n, unit_len - n, "%c", *p)
			    : snprintf(unit + n, unit_len - n, "%s%s", tag, !scope && !p[1] ? ".scope" : "");
		if (w < 0 || (size_t)w >= unit_len - n)
			return false;
		n += (size_t)w;
	}
	/* The slice: the last parent, or the root's. */
	const char *dir = pattern + dir_len;
	while (dir > pattern && dir[-1] != '/')
		dir--;
	int k = dir_len ? snprintf(slice, slice_len, "%.*s", (int)(pattern + dir_len - dir), dir)
			: snprintf(slice, slice_len, "-.slice");
	if (k <= 0 || (size_t)k >= slice_len)
		return false;
	snprintf(path, sizeof(path), "%.*s%s", (int)(last - pattern), pattern, unit);
	return sdbus_unit_of(path, check, sizeof(check)) && slice_path_is(pattern, dir_len, slice) &&
	       pattern_match(pattern, path);
}

int sdbus_state_path(const char *socket, char *buf, size_t len)
{
	const char *slash = strrchr(socket, '/');
	if (!slash || slash == socket)
		return -EINVAL;
	int n = snprintf(buf, len, "%.*s/systemd-units", (int)(slash - socket), socket);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static const char *program(void)
{
	const char *p = secure_getenv("OOMKITD_SYSTEMD");
	return p && p[0] ? p : OOMKITD_SYSTEMD_PROGRAM;
}

/* Forks and execs the helper with argv; sock (or -1) as its fd 3. */
static pid_t spawn(char *const argv[], int sock)
{
	char *envp[] = {NULL};
	pid_t pid = fork();
	if (pid != 0)
		return pid < 0 ? -errno : pid;
	if (sock >= 0 && (sock == HELPER_FD ? fcntl(sock, F_SETFD, 0) : dup2(sock, HELPER_FD)) < 0)
		_exit(127);
	syscall(SYS_close_range, (unsigned)(sock >= 0 ? HELPER_FD + 1 : HELPER_FD), ~0u, 0u);
	execve(argv[0], argv, envp);
	_exit(127);
}

static int wait_msg(int sock, struct sdbus_msg *m, int timeout_ms)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int r = poll(&p, 1, timeout_ms);
	if (r <= 0)
		return r == 0 ? -ETIMEDOUT : -errno;
	ssize_t n = recv(sock, m, sizeof(*m), MSG_DONTWAIT);
	return n == (ssize_t)sizeof(*m) ? 0 : n < 0 ? -errno : -EPIPE;
}

/* Every scope's waiting change forgotten: nobody is left to tell. */
static void forget_waiting(struct sdbus *b)
{
	if (!b->behind || !b->scopes)
		return;
	b->scopes->machine.sd_waiting = false;
	SCOPE_FOREACH_JOB (s, b->scopes)
		s->sd_waiting = false;
	b->behind = false;
}

static void reap(struct sdbus *b)
{
	forget_waiting(b);
	if (b->loop && b->sock >= 0)
		loop_del_fd(b->loop, b->sock);
	if (b->sock >= 0)
		close(b->sock);
	if (b->pid > 0)
		(void)waitpid(b->pid, NULL, 0);
	b->sock = -1;
	b->pid = 0;
}

int sdbus_start(struct sdbus *b, const char *state_path)
{
	char parent[16];
	int sv[2], r;
	struct sdbus_msg m;

	b->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	char *argv[] = {(char *)program(), "--parent", parent, "--state", (char *)state_path, NULL};
	pid_t pid = spawn(argv, sv[1]);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		log_warning("cannot start %s: %s; systemd is not told of the limits set", argv[0],
			    strerror(-pid));
		return (int)pid;
	}
	b->sock = sv[0];
	b->pid = pid;
	if ((r = wait_msg(b->sock, &m, READY_TIMEOUT_MS)) < 0 || m.op != SDBUS_READY) {
		log_warning("%s did not start (%s); systemd is not told of the limits set", argv[0],
			    strerror(r < 0 ? -r : EPROTO));
		(void)kill(pid, SIGKILL);
		reap(b);
		return r < 0 ? r : -EPROTO;
	}
	log_info("systemd helper %d: limits of systemd's units go through systemd", (int)pid);
	return 0;
}

static void send_waiting(struct sdbus *b);

static void on_answer(void *data, uint32_t index, uint32_t events)
{
	struct sdbus *b = data;
	struct sdbus_msg m;

	(void)index;
	if ((events & EPOLLOUT) && b->behind)
		send_waiting(b);
	for (;;) {
		ssize_t n = recv(b->sock, &m, sizeof(m), MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(m)) {
			m.error[sizeof(m.error) - 1] = '\0';
			if (m.op == SDBUS_DONE && b->on_done)
				b->on_done(b->data, m.id, m.result, m.error);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == 0 || (events & (EPOLLHUP | EPOLLERR)) || n < 0) {
			log_warning("systemd helper %d exited; systemd is not told of the limits set",
				    (int)b->pid);
			reap(b);
			/* Whoever waits for an answer gets one. */
			if (b->on_done)
				b->on_done(b->data, 0, -ECONNRESET, "the systemd helper exited");
			return;
		}
	}
}

int sdbus_attach(struct sdbus *b, struct loop *loop, struct scopes *scopes)
{
	b->scopes = scopes;
	if (b->sock < 0)
		return 0;
	int source = loop_add_source(loop, on_answer, b);
	if (source < 0)
		return source;
	b->loop = loop;
	b->source = source;
	return loop_add_fd(loop, b->sock, source, 0, EPOLLIN);
}

static int send_msg(struct sdbus *b, const struct sdbus_msg *m)
{
	if (b->sock < 0)
		return -ENOTCONN;
	ssize_t n = send(b->sock, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL);
	return n == (ssize_t)sizeof(*m) ? 0 : n < 0 ? -errno : -EIO;
}

/* Woken when the helper's queue has room (EPOLLOUT), while changes wait. */
static void watch_room(struct sdbus *b, bool on)
{
	if (b->loop && b->sock >= 0)
		(void)loop_mod_fd(b->loop, b->sock, b->source, 0, EPOLLIN | (on ? EPOLLOUT : 0));
}

static void dropped(struct sdbus *b, const char *unit, int err)
{
	if (b->dropped++ == 0)
		log_warning("%s: systemd not told of memory.high/max (%s)", unit, strerror(-err));
}

/* rel's change waits in its scope, replacing one that waited before. */
static void wait_in_scope(struct sdbus *b, const char *rel, const char *unit, uint64_t high_bytes,
			  uint64_t max_bytes)
{
	struct scope *s = b->scopes ? scope_by_rel(b->scopes, rel) : NULL;

	if (!s) {
		dropped(b, unit, -ENOBUFS);
		return;
	}
	s->sd_high_bytes = high_bytes;
	s->sd_max_bytes = max_bytes;
	s->sd_waiting = true;
	if (!b->behind) {
		log_info("systemd helper %d is behind: changes wait, each unit's latest", (int)b->pid);
		b->behind = true;
		watch_room(b, true);
	}
}

/* The change that waits in s, if any: false if the queue is full again. */
static bool send_scope(struct sdbus *b, struct scope *s)
{
	struct sdbus_msg m = {.op = SDBUS_SET, .high_bytes = s->sd_high_bytes, .max_bytes = s->sd_max_bytes};

	if (!s->sd_waiting)
		return true;
	if (!sdbus_unit_of(s->rel, m.unit, sizeof(m.unit))) {
		s->sd_waiting = false;
		return true;
	}
	int r = send_msg(b, &m);
	if (r == -EAGAIN)
		return false;
	if (r < 0)
		dropped(b, m.unit, r);
	s->sd_waiting = false;
	return true;
}

/* As much of what waits as the queue takes; caught up once all went. */
static void send_waiting(struct sdbus *b)
{
	if (!send_scope(b, &b->scopes->machine))
		return;
	SCOPE_FOREACH_JOB (s, b->scopes)
		if (!send_scope(b, s))
			return;
	b->behind = false;
	watch_room(b, false);
	log_info("systemd helper %d caught up", (int)b->pid);
}

void sdbus_limits(struct sdbus *b, const char *rel, uint64_t high_bytes, uint64_t max_bytes)
{
	struct sdbus_msg m = {.op = SDBUS_SET, .high_bytes = high_bytes, .max_bytes = max_bytes};

	if (b->sock < 0 || !sdbus_unit_of(rel, m.unit, sizeof(m.unit)))
		return;
	int r = b->behind ? -EAGAIN : send_msg(b, &m);
	if (r == -EAGAIN)
		wait_in_scope(b, rel, m.unit, high_bytes, max_bytes);
	else if (r < 0)
		dropped(b, m.unit, r);
}

int sdbus_scope(struct sdbus *b, uint64_t id, pid_t pid, const char *unit, const char *slice)
{
	struct sdbus_msg m = {.op = SDBUS_SCOPE, .id = id, .pid = (uint32_t)pid};

	if (strlen(unit) >= sizeof(m.unit) || strlen(slice) >= sizeof(m.slice))
		return -ENAMETOOLONG;
	memcpy(m.unit, unit, strlen(unit) + 1);
	memcpy(m.slice, slice, strlen(slice) + 1);
	return send_msg(b, &m);
}

void sdbus_stop(struct sdbus *b)
{
	struct sdbus_msg m = {.op = SDBUS_QUIT};

	if (b->sock < 0)
		return;
	if (b->loop)
		loop_del_fd(b->loop, b->sock);
	b->loop = NULL;
	/* Blocking now: the changes queued before go first, in order. */
	int fl = fcntl(b->sock, F_GETFL);
	if (fl >= 0)
		(void)fcntl(b->sock, F_SETFL, fl & ~O_NONBLOCK);
	if (send(b->sock, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m)) {
		/* Answers to scopes may come before QUIT's. */
		for (int i = 0; i < 64; i++)
			if (wait_msg(b->sock, &m, QUIT_TIMEOUT_MS) < 0 || (m.op == SDBUS_DONE && m.id == 0))
				break;
	}
	reap(b);
}

int sdbus_release(const char *state_path)
{
	struct stat st;
	int status;

	if (lstat(state_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	char *argv[] = {(char *)program(), "--release", (char *)state_path, NULL};
	pid_t pid = spawn(argv, -1);
	if (pid < 0)
		return (int)pid;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_err("%s --release %s failed", argv[0], state_path);
		return -EIO;
	}
	return 0;
}
