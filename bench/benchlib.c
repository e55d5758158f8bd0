/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * benchlib.c - shared by the benchmarks: the run's memcg tree and its
 * cleanup, helper processes, stamps, waits and /proc counters.  Every memcg
 * of a benchmark lives under BL_MEMORY_ROOT/<top>/<benchmark>, where top is
 * run.sh's oomkit-bench-<pid> (or this process's own), so cleanup removes
 * exactly what this run made.
 */
#include "benchlib.h"

#include "testhelp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TRACKED 64

static char top[128];	 /* oomkit-bench-<pid>, directly under the root */
static char prefix[256]; /* <top>/<benchmark> */
static bool top_made;	 /* top is ours to remove too */
static bool initialised;
static pid_t tracked[MAX_TRACKED];

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
	return th_now_ns();
}

void bl_sleep_us(unsigned us)
{
	th_sleep_us(us);
}

/* ------------------------------------------------------------ cgroups */

const char *bl_abs(const char *rel)
{
	return th_cg_path(BL_MEMORY_ROOT, rel, "");
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

uint64_t bl_pread_u64(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

int bl_mkcg(const char *rel, uint64_t limit_bytes)
{
	int r = th_cg_make(bl_abs(rel), "memory.limit_in_bytes", limit_bytes);
	if (r < 0)
		fprintf(stderr, "oomkit-bench: cannot make %s with limit %llu: %s\n", bl_abs(rel),
			(unsigned long long)limit_bytes, strerror(-r));
	return r;
}

int bl_remove_tree(const char *rel)
{
	return th_cg_remove_tree(bl_abs(rel), 10000);
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
	if (!initialised)
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
	initialised = true;
	/* Forked children (storm hogs) inherit it, but only the driver cleans. */
	th_cleanup_at_exit(bl_cleanup);
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
	return th_pidfd_open(pid);
}

int bl_wait_fd(int fd, int timeout_ms)
{
	return th_wait_fd(fd, timeout_ms);
}

int bl_wait_child(pid_t pid, int timeout_ms)
{
	int status = th_wait_exit(pid, timeout_ms);
	/* Still our child and running (not one reaped elsewhere): stop it. */
	if (status == -1 && waitpid(pid, NULL, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
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
	struct th_spawn how = {
	    .cgroup = rel ? bl_abs(rel) : NULL,
	    .out_fd = out_fd >= 0 ? out_fd : -1,
	    .die_with_parent = true,
	};
	pid_t pid = th_spawn(&how, argv);
	return pid < 0 ? -1 : pid;
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
	struct th_spawn how = {.cgroup = bl_abs(rel), .out_fd = -1, .die_with_parent = true};
	pid_t pid = th_spawn_hog(&how, bl_hog(), mib, step_kib, pause_us, stamp);
	return pid < 0 ? -1 : pid;
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
	return th_read_line(fd, buf, len, timeout_ms);
}

/* ------------------------------------------------------------ /proc */

static int read_proc(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return th_read_file(path, buf, len);
}

/* A key's value in a buffer; UINT64_MAX if absent. */
static uint64_t find_key(const char *buf, const char *key)
{
	uint64_t v;
	return th_find_key(buf, key, &v) < 0 ? UINT64_MAX : v;
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

uint64_t bl_proc_pss_kib(pid_t pid)
{
	char buf[4096];
	if (read_proc(pid, "smaps_rollup", buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return find_key(buf, "Pss");
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

pid_t bl_child_named(pid_t pid, const char *comm)
{
	char file[64], buf[1024], name[32];
	snprintf(file, sizeof(file), "task/%d/children", (int)pid);
	if (read_proc(pid, file, buf, sizeof(buf)) <= 0)
		return 0;
	for (char *p = buf, *end; *p; p = end) {
		pid_t child = (pid_t)strtol(p, &end, 10);
		if (end == p)
			break;
		if (read_proc(child, "comm", name, sizeof(name)) > 0 &&
		    strncmp(name, comm, strlen(comm)) == 0 &&
		    (name[strlen(comm)] == '\n' || name[strlen(comm)] == '\0'))
			return child;
	}
	return 0;
}

uint64_t bl_mem_available_kib(void)
{
	char buf[8192];
	if (th_read_file("/proc/meminfo", buf, sizeof(buf)) < 0)
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
