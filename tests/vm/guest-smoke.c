/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-smoke: proves that the tests/vm guest can do what oomkit's tests need,
 * using the kernel interfaces directly (no liboomkit).  Runs only inside the
 * guest that vm.sh boots; static, since the guest has no libc.
 *
 *   guest-smoke memcg    a child allocating 128 MiB in a memcg limited to 64 MiB:
 *                        v2: the kernel kills it (SIGKILL) and memory.events
 *                            oom_kill goes up;
 *                        v1: with oom_kill_disable=1 the eventfd registered on
 *                            memory.oom_control fires, the memcg reports
 *                            under_oom 1 and the child is held; writing 0 to
 *                            memory.oom_control lets the kernel kill it.
 *   guest-smoke system   a child with no memcg limit allocates past the guest's
 *                        RAM and the kernel OOM killer kills exactly it
 *                        (/proc/vmstat oom_kill goes up by one).
 *
 * Exit status: 0 pass, 1 fail, 77 skip (not in the guest; a failure instead
 * with OOMKIT_REQUIRE_KERNEL=1).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testhelp.h"

#define MIB (1024ul * 1024ul)
#define LIMIT_MIB 64ul
#define HOG_MIB 128ul
#define WAIT_MS 120000 /* bound on every wait: TCG is slow, but nothing may hang */
#define V2_ROOT "/sys/fs/cgroup"
#define V1_ROOT "/sys/fs/cgroup/memory"

static int failures;

static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("guest-smoke: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

static bool check(bool ok, const char *what)
{
	note("%s %s", ok ? "PASS" : "FAIL", what);
	if (!ok)
		failures++;
	return ok;
}

/* Value of "key N" in a keyed file (memory.events, memory.oom_control, /proc/vmstat); -1 if absent. */
static long long read_key(const char *path, const char *key)
{
	uint64_t v;
	return th_read_key(path, key, &v) < 0 ? -1 : (long long)v;
}

/* Touches mib MiB page by page; exits 0 if it got through, 3 if mmap failed. */
static void allocate_and_exit(unsigned long mib) __attribute__((noreturn));
static void allocate_and_exit(unsigned long mib)
{
	const size_t chunk = 4 * MIB;
	long page = sysconf(_SC_PAGESIZE);
	for (unsigned long done = 0; done < mib; done += chunk / MIB) {
		char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		for (size_t off = 0; off < chunk; off += (size_t)page)
			p[off] = 1;
	}
	_exit(0);
}

/* Forks a child that joins procs_file (NULL: stays where it is) and allocates mib MiB. */
static pid_t spawn_hog(const char *procs_file, unsigned long mib)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (procs_file && th_write_file(procs_file, "0") < 0)
		_exit(126);
	/* The test process protects itself with -1000, which a fork inherits. */
	if (th_write_file("/proc/self/oom_score_adj", "0") < 0)
		_exit(125);
	allocate_and_exit(mib);
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	if (th_wait_exit(pid, WAIT_MS) < 0)
		note("child %d did not die after SIGKILL", (int)pid);
}

static void describe_status(int status, char *buf, size_t len)
{
	if (status < 0)
		snprintf(buf, len, "still running after %d s", WAIT_MS / 1000);
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
}

/* Removes a cgroup whose processes were reaped, waiting out the moment after
 * the last one when the kernel still calls it busy. */
static void remove_cgroup(const char *path)
{
	if (th_cg_remove_tree(path, 10000) < 0)
		failures++;
}

static void make_cgroup(const char *root, char *path, size_t len)
{
	snprintf(path, len, "%s/oomkit-test-smoke-%d", root, (int)getpid());
	if (mkdir(path, 0755) != 0) {
		note("mkdir %s: %s", path, strerror(errno));
		exit(1);
	}
}

static void set_limit(const char *cg, const char *file, unsigned long bytes)
{
	char path[PATH_MAX], value[32];
	snprintf(path, sizeof(path), "%s/%s", cg, file);
	snprintf(value, sizeof(value), "%lu", bytes);
	int r = th_write_file(path, value);
	if (r < 0) {
		note("write %s <- %s: %s", path, value, strerror(-r));
		rmdir(cg);
		exit(1);
	}
}

static void memcg_v2(void)
{
	char cg[PATH_MAX], events[PATH_MAX + 16], procs[PATH_MAX + 16], what[160];
	make_cgroup(V2_ROOT, cg, sizeof(cg));
	snprintf(events, sizeof(events), "%s/memory.events", cg);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	set_limit(cg, "memory.max", LIMIT_MIB * MIB);
	long long before = read_key(events, "oom_kill");
	note("v2: %s memory.max %lu MiB, child allocates %lu MiB", cg, LIMIT_MIB, HOG_MIB);

	pid_t pid = spawn_hog(procs, HOG_MIB);
	int status = th_wait_exit(pid, WAIT_MS);
	if (status < 0)
		kill_and_reap(pid);
	describe_status(status, what, sizeof(what));
	note("child %d %s", (int)pid, what);
	check(th_sigkilled(status), "v2: the child over memory.max was killed by SIGKILL");
	long long after = read_key(events, "oom_kill");
	snprintf(what, sizeof(what), "v2: memory.events oom_kill went up by one (%lld -> %lld)", before,
		 after);
	check(before >= 0 && after == before + 1, what);
	remove_cgroup(cg);
}

/* Registers eventfd efd for OOM notifications of memcg cg (cgroup.event_control). */
static int register_oom_eventfd(const char *cg, int efd)
{
	char path[PATH_MAX + 32], line[64];
	snprintf(path, sizeof(path), "%s/memory.oom_control", cg);
	int ofd = open(path, O_RDONLY | O_CLOEXEC);
	if (ofd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/cgroup.event_control", cg);
	snprintf(line, sizeof(line), "%d %d", efd, ofd);
	int r = th_write_file(path, line);
	close(ofd);
	return r;
}

static bool wait_eventfd(int efd, int timeout_ms)
{
	uint64_t count;
	return th_wait_fd(efd, timeout_ms) == 1 && read(efd, &count, sizeof(count)) == sizeof(count) &&
	       count > 0;
}

/* The child is held in OOM; the kernel killer was disabled.  Checks what the memcg says, then lets the kernel
 * kill. */
static void v1_held_then_released(const char *oom_control, pid_t pid)
{
	char what[160];
	long long disabled = read_key(oom_control, "oom_kill_disable");
	long long under = read_key(oom_control, "under_oom");
	snprintf(what, sizeof(what), "v1: memory.oom_control says oom_kill_disable %lld, under_oom %lld",
		 disabled, under);
	check(disabled == 1 && under == 1, what);
	check(th_alive(pid), "v1: the child is held in the OOM, not killed");

	long long kills = read_key(oom_control, "oom_kill");
	int r = th_write_file(oom_control, "0");
	if (r < 0)
		note("write 0 to %s: %s", oom_control, strerror(-r));
	int status = th_wait_exit(pid, WAIT_MS);
	if (status < 0)
		kill_and_reap(pid);
	describe_status(status, what, sizeof(what));
	note("child %d %s after writing 0 to memory.oom_control", (int)pid, what);
	check(th_sigkilled(status), "v1: with the killer re-enabled the kernel killed the child (SIGKILL)");
	long long kills_after = read_key(oom_control, "oom_kill");
	snprintf(what, sizeof(what),
		 "v1: memory.oom_control oom_kill went up by one (%lld -> %lld), under_oom %lld", kills,
		 kills_after, read_key(oom_control, "under_oom"));
	check(kills >= 0 && kills_after == kills + 1 && read_key(oom_control, "under_oom") == 0, what);
}

static void memcg_v1(void)
{
	char cg[PATH_MAX], oom_control[PATH_MAX + 32], procs[PATH_MAX + 16];
	make_cgroup(V1_ROOT, cg, sizeof(cg));
	snprintf(oom_control, sizeof(oom_control), "%s/memory.oom_control", cg);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	set_limit(cg, "memory.limit_in_bytes", LIMIT_MIB * MIB);
	set_limit(cg, "memory.oom_control", 1);
	int efd = eventfd(0, EFD_CLOEXEC);
	int r = efd < 0 ? -errno : register_oom_eventfd(cg, efd);
	if (r < 0) {
		note("cannot register an OOM eventfd on %s: %s", cg, strerror(-r));
		failures++;
		rmdir(cg);
		return;
	}
	note("v1: %s limit %lu MiB, oom_kill_disable 1, child allocates %lu MiB", cg, LIMIT_MIB, HOG_MIB);

	pid_t pid = spawn_hog(procs, HOG_MIB);
	if (check(wait_eventfd(efd, WAIT_MS), "v1: the OOM notification arrived on the eventfd"))
		v1_held_then_released(oom_control, pid);
	/* Whatever happened, never leave a child blocked in an OOM that nobody resolves. */
	th_write_file(oom_control, "0");
	if (th_alive(pid))
		kill_and_reap(pid);
	else
		waitpid(pid, NULL, WNOHANG);
	close(efd);
	remove_cgroup(cg);
}

static void system_oom(void)
{
	char what[160];
	long long total_kib = read_key("/proc/meminfo", "MemTotal:");
	/* A second guard besides OOMKIT_VM: never fill the memory of a real machine. */
	if (total_kib <= 0 || total_kib > 1024 * 1024) {
		note("refusing a whole-system OOM with MemTotal %lld kB (more than 1 GiB: not the test "
		     "guest?)",
		     total_kib);
		failures++;
		return;
	}
	int r = th_write_file("/proc/self/oom_score_adj", "-1000");
	if (r < 0)
		note("cannot protect the test process: %s", strerror(-r));
	unsigned long hog_mib = 2 * (unsigned long)total_kib / 1024;
	long long before = read_key("/proc/vmstat", "oom_kill");
	note("system: MemTotal %lld MiB, a child with no memcg limit allocates %lu MiB", total_kib / 1024,
	     hog_mib);

	pid_t pid = spawn_hog(NULL, hog_mib);
	int status = th_wait_exit(pid, WAIT_MS);
	if (status < 0)
		kill_and_reap(pid);
	describe_status(status, what, sizeof(what));
	note("child %d %s", (int)pid, what);
	check(th_sigkilled(status), "system: the kernel OOM killer killed the hog (SIGKILL)");
	long long after = read_key("/proc/vmstat", "oom_kill");
	snprintf(what, sizeof(what), "system: /proc/vmstat oom_kill went up by exactly one (%lld -> %lld)",
		 before, after);
	check(before >= 0 && after == before + 1, what);
}

/* "v1", "v2" or NULL: which memory cgroup layout this guest has. */
static const char *detect_mode(void)
{
	char buf[256];
	if (th_read_file(V2_ROOT "/cgroup.subtree_control", buf, sizeof(buf)) >= 0 && strstr(buf, "memory"))
		return "v2";
	if (access(V1_ROOT "/memory.oom_control", R_OK) == 0)
		return "v1";
	return NULL;
}

/* Exits 77 (1 with OOMKIT_REQUIRE_KERNEL=1) unless this is the vm.sh guest. */
static void require_guest(void)
{
	const char *req = getenv("OOMKIT_REQUIRE_KERNEL");
	const char *vm = getenv("OOMKIT_VM");
	const char *why = NULL;
	if (!vm || strcmp(vm, "1") != 0)
		why = "runs only inside the tests/vm guest (OOMKIT_VM=1): it fills memory";
	else if (geteuid() != 0)
		why = "not root";
	if (!why)
		return;
	bool required = req && strcmp(req, "1") == 0;
	note("%s: %s", required ? "FAIL (OOMKIT_REQUIRE_KERNEL=1)" : "SKIP", why);
	exit(required ? 1 : 77);
}

static void run_memcg(void)
{
	const char *mode = detect_mode();
	const char *want = getenv("OOMKIT_VM_MODE");
	if (!mode) {
		note("FAIL no memory cgroup: neither cgroup2 with +memory at %s nor v1 at %s", V2_ROOT,
		     V1_ROOT);
		failures++;
		return;
	}
	if (want && strcmp(want, mode) != 0) {
		note("FAIL the guest was booted for cgroup %s but has a %s memory controller", want, mode);
		failures++;
		return;
	}
	if (strcmp(mode, "v2") == 0)
		memcg_v2();
	else
		memcg_v1();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || (strcmp(argv[1], "memcg") != 0 && strcmp(argv[1], "system") != 0)) {
		fprintf(stderr, "usage: %s memcg|system\n", argv[0]);
		return 2;
	}
	require_guest();
	if (strcmp(argv[1], "memcg") == 0)
		run_memcg();
	else
		system_oom();
	note("%s: %d failure(s)", argv[1], failures);
	return failures ? 1 : 0;
}
