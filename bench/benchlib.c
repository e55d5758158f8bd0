/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * benchlib.c - shared by the benchmarks: the run's memcg tree and its
 * cleanup, helper processes, stamps, waits and /proc counters.  Every memcg
 * of a benchmark lives under BL_MEMORY_ROOT/<top>/<benchmark>, where top is
 * run.sh's oomkit-bench-<pid> (or this process's own), so cleanup removes
 * exactly what this run made.
 */
#include "benchlib.h"

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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define MAX_TRACKED 64

static char top[128];	 /* oomkit-bench-<pid>, directly under the root */
static char prefix[256]; /* <top>/<benchmark> */
static bool top_made;	 /* top is ours to remove too */
static bool initialised;
static pid_t tracked[MAX_TRACKED];
static pid_t owner_pid;

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && *v ? v : fallback;
}

const char *bl_hog(void)
{
	return env_or("OOMKIT_HOG", OOMKIT_BENCH_HOG);
}

const char *bl_watcher(void)
{
	return env_or("OOMKIT_BENCH_WATCHER", OOMKIT_BENCH_WATCHER_PATH);
}

const char *bl_oomkitd(void)
{
	const char *p = env_or("OOMKITD", OOMKIT_BENCH_OOMKITD);
	return p[0] && access(p, X_OK) == 0 ? p : NULL;
}

const char *bl_earlyoom(void)
{
	const char *p = env_or("EARLYOOM", "/usr/bin/earlyoom");
	return access(p, X_OK) == 0 ? p : NULL;
}

/* ------------------------------------------------------------ time */

uint64_t bl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bl_sleep_us(unsigned us)
{
	struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------ cgroups */

const char *bl_abs(const char *rel)
{
	static char buf[8][PATH_MAX];
	static unsigned i;
	char *b = buf[i++ % 8];
	snprintf(b, PATH_MAX, "%s/%.4000s", BL_MEMORY_ROOT, rel);
	return b;
}

const char *bl_parent(void)
{
	return prefix;
}

const char *bl_child(const char *fmt, ...)
{
	static char buf[8][PATH_MAX];
	static unsigned i;
	char name[PATH_MAX / 2];
	char *b = buf[i++ % 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(b, PATH_MAX, "%s/%s", prefix, name);
	return b;
}

int bl_write(const char *rel, const char *file, const char *value)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", BL_MEMORY_ROOT, rel, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int r = n < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int read_text(const char *path, char *buf, size_t len)
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

uint64_t bl_read_u64(const char *rel, const char *file)
{
	char path[PATH_MAX], buf[64];
	snprintf(path, sizeof(path), "%s/%s/%s", BL_MEMORY_ROOT, rel, file);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

static uint64_t find_key(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = buf; line && *line;) {
		if (strncmp(line, key, klen) == 0 &&
		    (line[klen] == ' ' || line[klen] == '\t' || line[klen] == ':')) {
			const char *v = line + klen + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return strtoull(v, NULL, 10);
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return UINT64_MAX;
}

uint64_t bl_read_key(const char *rel, const char *file, const char *key)
{
	char path[PATH_MAX], buf[8192];
	snprintf(path, sizeof(path), "%s/%s/%s", BL_MEMORY_ROOT, rel, file);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return find_key(buf, key);
}

int bl_mkcg(const char *rel, uint64_t limit_bytes)
{
	if (mkdir(bl_abs(rel), 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "oomkit-bench: mkdir %s: %s\n", bl_abs(rel), strerror(errno));
		return -errno;
	}
	if (limit_bytes) {
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit_bytes);
		int r = bl_write(rel, "memory.limit_in_bytes", v);
		if (r < 0) {
			fprintf(stderr, "oomkit-bench: limit of %s: %s\n", rel, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Kills the processes listed in one memcg; returns how many were listed. */
static int kill_listed(const char *abs)
{
	char path[PATH_MAX], buf[65536];
	snprintf(path, sizeof(path), "%s/cgroup.procs", abs);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return 0;
	int n = 0;
	for (char *p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && pid != getpid())
			kill((pid_t)pid, SIGKILL);
		n++;
		p = end;
		while (*p == '\n')
			p++;
	}
	return n;
}

static void give_back_killer(const char *abs)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/memory.oom_control", abs);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* A hog blocked in an OOM must be able to die. */
		(void)!write(fd, "0", 1);
		close(fd);
	}
}

static int remove_abs(const char *abs)
{
	DIR *d = opendir(abs);
	int r = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", abs, de->d_name);
		if (remove_abs(sub) < 0)
			r = -EBUSY;
	}
	closedir(d);
	give_back_killer(abs);
	for (int round = 0; round < 400; round++) {
		int n = kill_listed(abs);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (n == 0 && rmdir(abs) == 0)
			return r;
		if (errno == ENOENT)
			return r;
		bl_sleep_us(5000);
	}
	fprintf(stderr, "oomkit-bench: could not remove %s: %s\n", abs, strerror(errno));
	return -EBUSY;
}

int bl_remove_tree(const char *rel)
{
	return remove_abs(bl_abs(rel));
}

void bl_track(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (!tracked[i]) {
			tracked[i] = pid;
			return;
		}
}

void bl_untrack(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] == pid)
			tracked[i] = 0;
}

void bl_cleanup(void)
{
	/* Forked children (storm hogs) inherit the atexit handler: only the driver cleans. */
	if (!initialised || getpid() != owner_pid)
		return;
	initialised = false;
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] > 0) {
			kill(tracked[i], SIGKILL);
			waitpid(tracked[i], NULL, 0);
			tracked[i] = 0;
		}
	bl_remove_tree(prefix);
	if (top_made)
		bl_remove_tree(top);
}

static void on_fatal_signal(int sig)
{
	bl_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

int bl_init(const char *name, uint64_t limit_bytes)
{
	const char *env = getenv("OOMKIT_BENCH_PARENT");
	if (geteuid() != 0) {
		fprintf(stderr, "oomkit-bench: needs root\n");
		return -1;
	}
	if (access(BL_MEMORY_ROOT "/cgroup.event_control", W_OK) != 0) {
		fprintf(stderr, "oomkit-bench: no cgroup v1 memory controller at %s\n", BL_MEMORY_ROOT);
		return -1;
	}
	if (env && *env)
		snprintf(top, sizeof(top), "%s", env);
	else
		snprintf(top, sizeof(top), "oomkit-bench-%d", (int)getpid());
	if (strncmp(top, "oomkit-bench-", 13) != 0 || strchr(top, '/')) {
		fprintf(stderr, "oomkit-bench: parent %s must be oomkit-bench-... directly under the root\n",
			top);
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "%s/%s", top, name);
	owner_pid = getpid();
	initialised = true;
	atexit(bl_cleanup);
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGSEGV, SIGABRT};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);
	/* Standalone, the parent is ours and bounded like the benchmark. */
	if (!env || !*env) {
		top_made = true;
		if (bl_mkcg(top, limit_bytes) < 0)
			return -1;
	}
	return bl_mkcg(prefix, limit_bytes) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ processes */

int bl_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
}

int bl_wait_fd(int fd, int timeout_ms)
{
	uint64_t end = bl_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = bl_now_ns();
		int left = now >= end ? 0 : (int)((end - now + 999999u) / 1000000u);
		int r = poll(&p, 1, left);
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int bl_wait_child(pid_t pid, int timeout_ms)
{
	int status, fd = bl_pidfd_open(pid);
	if (fd >= 0) {
		int r = bl_wait_fd(fd, timeout_ms);
		close(fd);
		if (r <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

int bl_stop(pid_t pid, int timeout_ms)
{
	int status;
	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	int fd = bl_pidfd_open(pid);
	if (fd >= 0) {
		if (bl_wait_fd(fd, timeout_ms) <= 0)
			kill(pid, SIGKILL);
		close(fd);
	} else {
		kill(pid, SIGKILL);
	}
	int r = waitpid(pid, &status, 0) == pid ? status : -1;
	bl_untrack(pid);
	return r;
}

pid_t bl_spawn(const char *rel, char *const argv[], int out_fd)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	if (rel) {
		char v[32];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		if (bl_write(rel, "cgroup.procs", v) < 0)
			_exit(126);
	}
	int fd = out_fd >= 0 ? out_fd : open("/dev/null", O_WRONLY);
	if (fd >= 0 && fd != STDOUT_FILENO)
		dup2(fd, STDOUT_FILENO);
	signal(SIGPIPE, SIG_DFL);
	execv(argv[0], argv);
	_exit(127);
}

pid_t bl_start_watcher(const char *const args[], pid_t *ret_guardian, int timeout_ms)
{
	char *argv[64];
	int fds[2], n = 0;
	argv[n++] = (char *)bl_watcher();
	for (; args[n - 1] && n < 63; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = bl_spawn(NULL, argv, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	bl_track(pid);
	char line[128];
	int ready = bl_read_line(fds[0], line, sizeof(line), timeout_ms);
	close(fds[0]);
	int wpid = 0, gpid = 0;
	if (ready < 0 || sscanf(line, "ready %d %d", &wpid, &gpid) != 2 || wpid != pid) {
		fprintf(stderr, "oomkit-bench: the watcher did not become ready\n");
		bl_stop(pid, 1000);
		return -1;
	}
	if (ret_guardian)
		*ret_guardian = (pid_t)gpid;
	return pid;
}

pid_t bl_spawn_hog(const char *rel, unsigned mib, unsigned step_kib, unsigned pause_us, const char *stamp)
{
	char a1[16], a2[16], a3[16];
	snprintf(a1, sizeof(a1), "%u", mib);
	snprintf(a2, sizeof(a2), "%u", step_kib);
	snprintf(a3, sizeof(a3), "%u", pause_us);
	char *argv[] = {(char *)bl_hog(), a1, a2, a3, (char *)stamp, NULL};
	return bl_spawn(rel, argv, -1);
}

void *bl_stamp_new(char *path, size_t len)
{
	snprintf(path, len, "/dev/shm/oomkit-bench-stamp-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)BL_PAGE) == 0)
		p = mmap(NULL, BL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		unlink(path);
		return NULL;
	}
	memset(p, 0, BL_PAGE);
	return p;
}

int bl_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	uint64_t end = bl_now_ns() + (uint64_t)timeout_ms * 1000000u;
	size_t n = 0;
	while (n + 1 < len) {
		uint64_t now = bl_now_ns();
		if (now >= end || bl_wait_fd(fd, (int)((end - now) / 1000000u) + 1) <= 0)
			return -1;
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r <= 0)
			return -1;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = 0;
	return (int)n;
}

/* ------------------------------------------------------------ /proc */

static int read_proc(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return read_text(path, buf, len);
}

uint64_t bl_proc_status(pid_t pid, const char *key)
{
	char buf[4096];
	if (read_proc(pid, "status", buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return find_key(buf, key);
}

uint64_t bl_proc_private_kib(pid_t pid)
{
	char buf[4096];
	if (read_proc(pid, "smaps_rollup", buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	uint64_t clean = find_key(buf, "Private_Clean"), dirty = find_key(buf, "Private_Dirty");
	return clean == UINT64_MAX || dirty == UINT64_MAX ? UINT64_MAX : clean + dirty;
}

uint64_t bl_proc_cpu_ns(pid_t pid)
{
	char buf[128];
	if (read_proc(pid, "schedstat", buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

uint64_t bl_proc_wakeups(pid_t pid)
{
	return bl_proc_status(pid, "voluntary_ctxt_switches");
}

pid_t bl_first_child(pid_t pid)
{
	char file[64], buf[256];
	snprintf(file, sizeof(file), "task/%d/children", (int)pid);
	if (read_proc(pid, file, buf, sizeof(buf)) <= 0)
		return 0;
	return (pid_t)strtol(buf, NULL, 10);
}

uint64_t bl_mem_available_kib(void)
{
	char buf[8192];
	if (read_text("/proc/meminfo", buf, sizeof(buf)) < 0)
		return 0;
	uint64_t v = find_key(buf, "MemAvailable");
	return v == UINT64_MAX ? 0 : v;
}

/* ------------------------------------------------------------ output */

void bl_sample(const char *bench, const char *series, double value)
{
	printf("S %s %s %.6g\n", bench, series, value);
	fflush(stdout);
}

void bl_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("N ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

void bl_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("F ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bl_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
