/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testhelp.c - libtesthelp (see testhelp.h): the helpers that tests,
 * guest programs and benchmarks share, on libc alone so that the guests can
 * link it -static.
 */
#include "testhelp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ---------------------------------------------------------------- time */

uint64_t th_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t th_now_ms(void)
{
	return th_now_ns() / 1000000u;
}

void th_sleep_us(unsigned us)
{
	struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void th_sleep_ms(unsigned ms)
{
	th_sleep_us(ms * 1000u);
}

/* ---------------------------------------------------------------- files */

int th_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int r = n < 0 ? -errno : (int)n;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return r;
}

int th_write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return r;
}

int th_find_key(const char *buf, const char *key, uint64_t *ret_value)
{
	size_t klen = strlen(key);
	for (const char *line = buf; line && *line;) {
		if (strncmp(line, key, klen) == 0 && strchr(" \t:", line[klen]) && line[klen]) {
			const char *v = line + klen + 1;
			v += strspn(v, " \t");
			*ret_value = strtoull(v, NULL, 10);
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int th_read_key(const char *path, const char *key, uint64_t *ret_value)
{
	static char buf[65536];
	int r = th_read_file(path, buf, sizeof(buf));
	return r < 0 ? r : th_find_key(buf, key, ret_value);
}

int th_read_u64(const char *path, uint64_t *ret_value)
{
	char buf[64];
	int r = th_read_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	*ret_value = strncmp(buf, "max", 3) == 0 ? UINT64_MAX : strtoull(buf, NULL, 10);
	return 0;
}

/* ---------------------------------------------------------------- waits */

bool th_wait_for(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	while (th_now_ms() < end) {
		if (cond(arg))
			return true;
		th_sleep_ms(5);
	}
	return cond(arg);
}

int th_wait_fd(int fd, int timeout_ms)
{
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = th_now_ms();
		int r = poll(&p, 1, now >= end ? 0 : (int)(end - now));
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int th_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	size_t n = 0;
	while (n + 1 < len) {
		uint64_t now = th_now_ms();
		char c;
		if (now >= end || th_wait_fd(fd, (int)(end - now)) <= 0 || read(fd, &c, 1) != 1)
			return -1;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = 0;
	return (int)n;
}

/* ---------------------------------------------------------------- processes */

/* The fields of /proc/PID/stat from the state letter on (after the last
 * ')', so a comm such as "a) Z (" cannot fool it), read into buf; NULL if
 * there is no such process. */
static const char *stat_fields(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (th_read_file(path, buf, len) <= 0)
		return NULL;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp + 2 : NULL;
}

char th_proc_state(pid_t pid)
{
	char buf[1024];
	const char *f = stat_fields(pid, buf, sizeof(buf));
	return f ? f[0] : 0;
}

int th_proc_cpu(pid_t pid)
{
	char buf[1024];
	const char *f = stat_fields(pid, buf, sizeof(buf));
	/* f is field 3, the state; field 39 is 36 spaces on. */
	for (int field = 3; f && field < 39; field++)
		if ((f = strchr(f, ' ')))
			f++;
	return f ? atoi(f) : -1;
}

bool th_alive(pid_t pid)
{
	char s = th_proc_state(pid);
	return s && s != 'Z' && s != 'X' && s != 'x';
}

int th_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
}

int th_wait_exit(pid_t pid, int timeout_ms)
{
	int status, fd = th_pidfd_open(pid);
	if (fd >= 0) {
		/* Readable once it has exited: no polling interval to wait out. */
		int r = th_wait_fd(fd, timeout_ms);
		close(fd);
		if (r <= 0)
			return -1;
		return waitpid(pid, &status, 0) == pid ? status : -1;
	}
	/* No pidfds (an old kernel, valgrind): poll. */
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	do {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		th_sleep_ms(5);
	} while (th_now_ms() < end);
	return waitpid(pid, &status, WNOHANG) == pid ? status : -1;
}

bool th_sigkilled(int status)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void child_setup(const struct th_spawn *how, pid_t parent)
{
	if (how->die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
	}
	if (how->cgroup) {
		char path[PATH_MAX], self[32];
		snprintf(path, sizeof(path), "%s/cgroup.procs", how->cgroup);
		snprintf(self, sizeof(self), "%d", (int)getpid());
		if (th_write_file(path, self) < 0)
			_exit(126);
	}
	if (how->in_child && how->in_child(how->arg) != 0)
		_exit(126);
	if (how->reset_oom_score_adj && th_write_file("/proc/self/oom_score_adj", "0") < 0)
		_exit(126);
	int fd = how->out_fd > 0   ? how->out_fd
		 : how->out_fd < 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC)
				   : -1;
	if (fd > 0 && fd != STDOUT_FILENO)
		dup2(fd, STDOUT_FILENO);
	/* A parent that ignores SIGPIPE must not pass that on. */
	signal(SIGPIPE, SIG_DFL);
}

/* How long th_spawn waits for its child's exec: far longer than one takes
 * on the busiest machine, short enough not to hang on one that blocks. */
#define EXEC_TIMEOUT_MS 30000

pid_t th_spawn(const struct th_spawn *how, char *const argv[])
{
	static const struct th_spawn defaults;
	pid_t parent = getpid();
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(ready[0]);
		close(ready[1]);
		return r;
	}
	if (pid == 0) {
		close(ready[0]);
		child_setup(how ? how : &defaults, parent);
		execv(argv[0], argv);
		_exit(127);
	}
	/* The pipe reads end-of-file once the child has exec'd (close on exec)
	 * or exited: what the caller then asks about (its cgroup, its comm, its
	 * start) is the program's, and a kill does not meet a half-made child.
	 * An exec blocked in a memcg under OOM is waited for only so long. */
	close(ready[1]);
	(void)th_wait_fd(ready[0], EXEC_TIMEOUT_MS);
	close(ready[0]);
	return pid;
}

pid_t th_spawn_hog(const struct th_spawn *how, const char *hog, unsigned mib, unsigned step_kib,
		   unsigned pause_us, const char *stamp)
{
	char a1[16], a2[16], a3[16];
	snprintf(a1, sizeof(a1), "%u", mib);
	snprintf(a2, sizeof(a2), "%u", step_kib);
	snprintf(a3, sizeof(a3), "%u", pause_us);
	char *argv[] = {(char *)hog, a1, a2, a3, (char *)stamp, NULL};
	return th_spawn(how, argv);
}

/* ---------------------------------------------------------------- control files */

const char *th_cg_path(const char *root, const char *rel, const char *file)
{
	static char buf[8][PATH_MAX];
	static unsigned next;
	char *b = buf[next++ % 8];
	snprintf(b, PATH_MAX, "%s%s%.2000s%s%.200s", root, rel[0] ? "/" : "", rel, file[0] ? "/" : "", file);
	return b;
}

int th_cg_write(const char *root, const char *rel, const char *file, const char *value)
{
	return th_write_file(th_cg_path(root, rel, file), value);
}

uint64_t th_cg_u64(const char *root, const char *rel, const char *file)
{
	uint64_t v;
	return th_read_u64(th_cg_path(root, rel, file), &v) < 0 ? UINT64_MAX : v;
}

uint64_t th_cg_key(const char *root, const char *rel, const char *file, const char *key)
{
	uint64_t v;
	return th_read_key(th_cg_path(root, rel, file), key, &v) < 0 ? UINT64_MAX : v;
}

/* ---------------------------------------------------------------- memcg trees */

int th_cg_make(const char *abs, const char *limit_file, uint64_t limit_bytes)
{
	if (mkdir(abs, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (!limit_bytes)
		return 0;
	char path[PATH_MAX], v[32];
	snprintf(path, sizeof(path), "%s/%s", abs, limit_file);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)limit_bytes);
	return th_write_file(path, v);
}

/* SIGKILLs the processes listed in one cgroup: how many it listed. */
static int kill_listed(const char *abs)
{
	static char buf[65536];
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/cgroup.procs", abs);
	if (th_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	int n = 0;
	for (char *p = buf, *end; *p; p = end + strspn(end, "\n")) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && pid != getpid())
			kill((pid_t)pid, SIGKILL);
		n++;
	}
	return n;
}

static int remove_one(const char *abs, uint64_t end)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/memory.oom_control", abs);
	(void)th_write_file(path, "0"); /* v1 only; a v2 memcg has no such file */
	/* A v1 freezer cgroup: a frozen task cannot die. */
	snprintf(path, sizeof(path), "%s/freezer.state", abs);
	(void)th_write_file(path, "THAWED");
	for (;;) {
		int r = -EBUSY;
		if (kill_listed(abs) == 0)
			r = rmdir(abs) == 0 || errno == ENOENT ? 0 : -errno;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (r == 0)
			return 0;
		if (th_now_ms() >= end) {
			fprintf(stderr, "testhelp: could not remove %s: %s\n", abs, strerror(-r));
			return r;
		}
		th_sleep_ms(5);
	}
}

static int remove_below(const char *abs, uint64_t end)
{
	DIR *d = opendir(abs);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", abs, de->d_name);
		int k = remove_below(sub, end);
		r = r ? r : k;
	}
	closedir(d);
	int k = remove_one(abs, end);
	return r ? r : k;
}

int th_cg_remove_tree(const char *abs, int timeout_ms)
{
	return remove_below(abs, th_now_ms() + (uint64_t)timeout_ms);
}

/* ---------------------------------------------------------------- checks */

static int failures;

bool th_check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (!ok)
		failures++;
	return ok;
}

int th_failures(void)
{
	return failures;
}

/* ---------------------------------------------------------------- cleanup */

static void (*cleanup_fn)(void);
static pid_t cleanup_owner;

static void run_cleanup(void)
{
	/* Forks inherit atexit handlers and signal dispositions: only the
	 * process that asked cleans up. */
	void (*fn)(void) = cleanup_fn;
	if (!fn || getpid() != cleanup_owner)
		return;
	cleanup_fn = NULL;
	fn();
}

static void on_fatal_signal(int sig)
{
	run_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

void th_cleanup_at_exit(void (*cleanup)(void))
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGSEGV, SIGABRT};
	cleanup_fn = cleanup;
	cleanup_owner = getpid();
	atexit(run_cleanup);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal_signal);
}
