/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testlib.c - integration test helpers on the real memory cgroup v1
 * hierarchy, on libtesthelp (tests/helpers/testhelp.h, shared with the
 * guests and the benchmarks).  Every cgroup lives under one parent named
 * after this process so that cleanup can remove exactly what the test made
 * and nothing else.
 */
#include "testlib.h"

#include "testhelp.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef OOMKIT_HOG
#error "OOMKIT_HOG must name the hog binary"
#endif

/* The hierarchy, from the mounts (tl_require_kernel()): the v1 memory
 * controller's mount, or cgroup v2's, and base, the cgroup (relative to it)
 * below which the test makes its own: "" for the mount itself, or on a
 * systemd machine the transient scope with Delegate=yes it runs in. */
static const char *memroot = TL_MEMORY_ROOT;
static bool on_v2;
static char base[PATH_MAX - 256];
static char parent[PATH_MAX];
static bool parent_made;
static char freezer_parent[128]; /* TL_FREEZER_ROOT/oomkit-test-PID, once made */
static char freezer[160];	 /* tl_freeze()'s, below it, once made */

const char *tl_hog_path(void)
{
	const char *env = getenv("OOMKIT_HOG");
	return env && *env ? env : OOMKIT_HOG;
}

bool tl_kernel_required(void)
{
	const char *req = getenv("OOMKIT_REQUIRE_KERNEL");
	return req && strcmp(req, "1") == 0;
}

/* Whether this machine has the memory controller on cgroup v2 instead. */
static bool v2_memory(void)
{
	char buf[256] = "";
	FILE *f = fopen("/sys/fs/cgroup/cgroup.controllers", "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (char *w = strtok(buf, " \n"); w; w = strtok(NULL, " \n"))
		if (strcmp(w, "memory") == 0)
			return true;
	return false;
}

/* Runs this test again in a transient systemd scope with Delegate=yes: on a
 * systemd machine a program makes cgroups of its own only in a cgroup
 * delegated to it (systemd enables the memory controller on the way to
 * it).  OOMKIT_TEST_SCOPE marks the second run.  Returns only on failure. */
static void run_in_scope(void)
{
	static char cmdline[8192];
	char *argv[256] = {"systemd-run", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--"};
	int argc = 7;
	FILE *f = fopen("/proc/self/cmdline", "re");
	size_t n = f ? fread(cmdline, 1, sizeof(cmdline) - 1, f) : 0;

	if (f)
		fclose(f);
	if (!n || n == sizeof(cmdline) - 1)
		return;
	/* This program's own path: /proc/self/exe would name systemd-run's. */
	static char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || (size_t)len >= sizeof(self) - 1)
		return;
	self[len] = 0;
	argv[argc++] = self;
	for (size_t i = strlen(cmdline) + 1; i < n && argc < 255; i += strlen(cmdline + i) + 1)
		argv[argc++] = cmdline + i;
	argv[argc] = NULL;
	setenv("OOMKIT_TEST_SCOPE", "1", 1);
	fflush(NULL);
	execvp(argv[0], argv);
}

/* Where the test makes its cgroups on v2: NULL, or why it cannot. */
static const char *v2_base(void)
{
	static char why[PATH_MAX + 128];
	char path[PATH_MAX + 64], self[32];

	if (!getenv("OOMKIT_TEST_SCOPE")) {
		if (access("/run/systemd/system", F_OK) < 0) {
			/* No systemd: the test's cgroups go below the mount. */
			(void)th_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
			return NULL;
		}
		run_in_scope();
		snprintf(why, sizeof(why), "systemd runs this machine, and systemd-run --scope failed: %s",
			 strerror(errno));
		return why;
	}
	/* In the scope: into a leaf of it (a cgroup with processes gives no
	 * controller to its children), the memory controller to the rest. */
	char line[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "0::", 3) != 0)
		line[0] = 0;
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = 0;
	if (strncmp(line, "0::/", 4) != 0 || strlen(line) < 10 ||
	    strcmp(line + strlen(line) - 6, ".scope") != 0) {
		snprintf(why, sizeof(why), "systemd-run --scope left this test in '%s', not a scope", line);
		return why;
	}
	snprintf(base, sizeof(base), "%.3800s", line + 4);
	snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/test", base);
	snprintf(self, sizeof(self), "%d", (int)getpid());
	if ((mkdir(path, 0755) < 0 && errno != EEXIST) ||
	    th_write_file(th_cg_path(path, "", "cgroup.procs"), self) < 0 ||
	    th_write_file(th_cg_path("/sys/fs/cgroup", base, "cgroup.subtree_control"), "+memory") < 0) {
		snprintf(why, sizeof(why),
			 "cannot give the memory controller to the children of the scope %s", base);
		return why;
	}
	return NULL;
}

bool tl_v2(void)
{
	return on_v2;
}

const char *tl_root(void)
{
	return memroot;
}

void tl_require_v1(const char *why)
{
	if (on_v2) {
		printf("SKIP: cgroup v1 only: %s\n", why);
		exit(77);
	}
}

void tl_require_kernel(void)
{
	bool required = tl_kernel_required();
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (access(TL_MEMORY_ROOT "/memory.oom_control", R_OK) == 0) {
		if (access(TL_MEMORY_ROOT "/cgroup.event_control", W_OK) != 0)
			why = "no cgroup.event_control at " TL_MEMORY_ROOT;
	} else if (v2_memory()) {
		on_v2 = true;
		memroot = "/sys/fs/cgroup";
		why = v2_base();
	} else
		why = "no memory controller: neither cgroup v1's at " TL_MEMORY_ROOT " nor cgroup v2's at "
		      "/sys/fs/cgroup";
	if (why) {
		fprintf(stderr, "%s: %s\n", required ? "FAIL (OOMKIT_REQUIRE_KERNEL=1)" : "SKIP", why);
		exit(required ? 1 : 77);
	}
	/* A test must never hang the suite: meson's own timeout SIGTERMs us, which cleans up. */
	th_cleanup_at_exit(tl_cleanup);
}

const char *tl_abs(const char *rel)
{
	return th_cg_path(memroot, rel, "");
}

int tl_write(const char *rel, const char *file, const char *value)
{
	return th_cg_write(memroot, rel, file, value);
}

uint64_t tl_read_u64(const char *rel, const char *file)
{
	return th_cg_u64(memroot, rel, file);
}

uint64_t tl_read_key(const char *rel, const char *file, const char *key)
{
	return th_cg_key(memroot, rel, file, key);
}

static void make_cgroup(const char *rel, uint64_t limit)
{
	if (on_v2) {
		/* Its parent gives it the memory controller (a cgroup of
		 * ours has no processes while it has children). */
		char up[PATH_MAX];
		snprintf(up, sizeof(up), "%s", tl_abs(rel));
		*strrchr(up, '/') = 0;
		(void)th_write_file(th_cg_path(up, "", "cgroup.subtree_control"), "+memory");
	}
	int r = th_cg_make(tl_abs(rel), on_v2 ? "memory.max" : "memory.limit_in_bytes", limit);
	if (r < 0) {
		fprintf(stderr, "cannot make %s with limit %llu: %s\n", tl_abs(rel),
			(unsigned long long)limit, strerror(-r));
		exit(1);
	}
}

const char *tl_parent(void)
{
	if (!parent_made) {
		static unsigned counter;
		snprintf(parent, sizeof(parent), "%s%soomkit-test-%d-%u", base, base[0] ? "/" : "",
			 (int)getpid(), counter++);
		make_cgroup(parent, 1024 * TL_MIB);
		parent_made = true;
	}
	return parent;
}

const char *tl_cgroup(const char *name, uint64_t limit_bytes)
{
	static char names[64][PATH_MAX];
	static int n;
	char *b = names[n++ % 64];
	snprintf(b, PATH_MAX, "%s/%s", tl_parent(), name);
	make_cgroup(b, limit_bytes);
	return b;
}

pid_t tl_spawn_hog(const char *rel, unsigned mib, unsigned step_kib, unsigned pause_us)
{
	struct th_spawn how = {.cgroup = tl_abs(rel)};
	pid_t pid = th_spawn_hog(&how, tl_hog_path(), mib, step_kib, pause_us, NULL);
	if (pid < 0) {
		fprintf(stderr, "fork: %s\n", strerror(-pid));
		exit(1);
	}
	return pid;
}

pid_t tl_spawn_sleeper(const char *rel)
{
	/* The hog with 0 MiB only sleeps; same binary, so no dependency on /bin/sleep. */
	return tl_spawn_hog(rel, 0, 1024, 0);
}

bool tl_wait_for(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
	return th_wait_for(cond, arg, timeout_ms);
}

int tl_wait_exit(pid_t pid, int timeout_ms)
{
	return th_wait_exit(pid, timeout_ms);
}

bool tl_alive(pid_t pid)
{
	return th_alive(pid);
}

int tl_proc_cpu(pid_t pid)
{
	return th_proc_cpu(pid);
}

struct usage_arg {
	const char *rel;
	uint64_t bytes;
};

static bool usage_reached(void *p)
{
	struct usage_arg *a = p;
	uint64_t u = tl_read_u64(a->rel, on_v2 ? "memory.current" : "memory.usage_in_bytes");
	return u != UINT64_MAX && u >= a->bytes;
}

bool tl_wait_usage(const char *rel, uint64_t bytes, int timeout_ms)
{
	struct usage_arg a = {rel, bytes};
	return tl_wait_for(usage_reached, &a, timeout_ms);
}

bool tl_under_oom(const char *rel)
{
	if (!on_v2)
		return tl_read_key(rel, "memory.oom_control", "under_oom") == 1;
	/* v2: held (memory.high below memory.max) and usage within the hold's
	 * margin and a quarter of it of memory.max, where lib/cgroup-v2.c sees
	 * an OOM. */
	uint64_t high = tl_read_u64(rel, "memory.high"), max = tl_read_u64(rel, "memory.max"),
		 cur = tl_read_u64(rel, "memory.current");
	if (high == UINT64_MAX || max == UINT64_MAX || cur == UINT64_MAX || high >= max)
		return false;
	return cur >= max - (max - high) * 5 / 4;
}

const char *tl_limit_file(void)
{
	return on_v2 ? "memory.max" : "memory.limit_in_bytes";
}

uint64_t tl_kernel_kills(const char *rel)
{
	return on_v2 ? tl_read_key(rel, "memory.events", "oom_kill")
		     : tl_read_key(rel, "memory.oom_control", "oom_kill");
}

bool tl_held(const char *rel)
{
	if (!on_v2)
		return tl_read_key(rel, "memory.oom_control", "oom_kill_disable") == 1;
	/* "max" reads as an error: no hold, or no limit to hold below. */
	uint64_t high = tl_read_u64(rel, "memory.high"), max = tl_read_u64(rel, "memory.max");
	return high != UINT64_MAX && max != UINT64_MAX && high < max;
}

static bool is_under_oom(void *p)
{
	return tl_under_oom(p);
}

bool tl_wait_under_oom(const char *rel, int timeout_ms)
{
	return tl_wait_for(is_under_oom, (void *)rel, timeout_ms);
}

static int freezer_state(const char *state)
{
	char path[192];
	snprintf(path, sizeof(path), "%s/freezer.state", freezer);
	return th_write_file(path, state);
}

const char *tl_freezer_parent(void)
{
	if (freezer_parent[0])
		return freezer_parent;
	if (access(TL_FREEZER_ROOT "/freezer.state", F_OK) < 0 &&
	    access(TL_FREEZER_ROOT "/cgroup.procs", F_OK) < 0) {
		errno = ENOENT;
		return NULL;
	}
	snprintf(freezer_parent, sizeof(freezer_parent), "%s/oomkit-test-%d", TL_FREEZER_ROOT, (int)getpid());
	if (mkdir(freezer_parent, 0755) < 0 && errno != EEXIST) {
		freezer_parent[0] = 0;
		return NULL;
	}
	return freezer_parent;
}

int tl_freeze(pid_t pid)
{
	if (!freezer[0]) {
		const char *p = tl_freezer_parent();
		if (!p)
			return -errno;
		snprintf(freezer, sizeof(freezer), "%s/frozen", p);
		if (mkdir(freezer, 0755) < 0 && errno != EEXIST) {
			int r = -errno;
			freezer[0] = 0;
			return r;
		}
	}
	char path[192], v[32];
	snprintf(path, sizeof(path), "%s/cgroup.procs", freezer);
	snprintf(v, sizeof(v), "%d", (int)pid);
	int r = th_write_file(path, v);
	return r < 0 ? r : freezer_state("FROZEN");
}

int tl_thaw(void)
{
	return freezer[0] ? freezer_state("THAWED") : 0;
}

pid_t tl_spawn_giver(const char *rel, unsigned pages, int *ret_fd)
{
	int sv[2];
	char c = 0;

	/* Where it lives once its pages are charged: the test's parent on v1;
	 * on v2, whose parent cgroups hold no process, a leaf beside rel. */
	const char *home = on_v2 ? tl_cgroup("giver-home", 0) : tl_parent();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		char self[16];
		snprintf(self, sizeof(self), "%d", (int)getpid());
		const size_t page = 4096;
		char *mem;
		/* In rel while the pages are touched, so they are charged there;
		 * then in its home, where the rest of its life is
		 * charged (v1 leaves charges where they were made): in rel, its
		 * next page would wait in rel's OOM with the hog. */
		if (tl_write(rel, "cgroup.procs", self) < 0 ||
		    (mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				0)) == MAP_FAILED)
			_exit(1);
		for (unsigned i = 0; i < pages; i++)
			mem[i * page] = 1;
		if (tl_write(home, "cgroup.procs", self) < 0)
			_exit(1);
		(void)!write(sv[1], "R", 1);
		for (unsigned i = 0; i < pages && read(sv[1], &c, 1) == 1; i++) {
			(void)munmap(mem + i * page, page);
			(void)!write(sv[1], "G", 1);
		}
		_exit(0);
	}
	close(sv[1]);
	if (pid < 0 || read(sv[0], &c, 1) != 1 || c != 'R') {
		int r = pid < 0 ? -errno : -EIO;
		close(sv[0]);
		return r;
	}
	*ret_fd = sv[0];
	return pid;
}

int tl_give(int fd)
{
	char c = 0;
	return write(fd, "g", 1) == 1 && read(fd, &c, 1) == 1 && c == 'G' ? 0 : -1;
}

/* Spends up to limit_ms in f's wait until rel's under_oom reads want, or
 * the hog is gone: whether it did. */
static bool flicker_wait(struct tl_flicker *f, uint64_t want, unsigned limit_ms)
{
	uint64_t end = th_now_ms() + limit_ms;
	for (;;) {
		if (tl_read_key(f->cg, "memory.oom_control", "under_oom") == want)
			return true;
		if (!tl_alive(f->hog) || th_now_ms() >= end)
			return false;
		f->spend(f->arg, 5);
	}
}

static int flicker(struct tl_flicker *f, unsigned settle_ms, unsigned patience_ms, unsigned limit_ms)
{
	uint64_t start = th_now_ms(), since = start;

	while (tl_alive(f->hog)) {
		uint64_t now = th_now_ms();
		if (now - since >= patience_ms)
			return 0;
		if (now - start >= limit_ms)
			return -1;
		/* Under OOM (or killed meanwhile), then a page back while it is frozen. */
		if (!flicker_wait(f, 1, 20000))
			continue;
		int r = tl_freeze(f->hog);
		if (r == -ENOENT)
			return r;
		if (r < 0)
			continue;
		uint64_t given = th_now_ms();
		if (tl_give(f->giver) < 0 || !flicker_wait(f, 0, 20000)) {
			(void)tl_thaw();
			continue;
		}
		for (uint64_t end = th_now_ms() + f->hold_ms; th_now_ms() < end;)
			f->spend(f->arg, (unsigned)(end - th_now_ms()));
		uint64_t thawed = th_now_ms();
		(void)tl_thaw();
		f->flickers++;
		if (thawed - given > f->longest_ms)
			f->longest_ms = thawed - given;
		/* A 0 this long may be the end of an OOM: patience starts again. */
		if (thawed - given >= settle_ms)
			since = thawed;
	}
	return 1;
}

int tl_flicker_until_killed(struct tl_flicker *f, unsigned settle_ms, unsigned patience_ms, unsigned limit_ms)
{
	int r = flicker(f, settle_ms, patience_ms, limit_ms);

	if (r == -ENOENT)
		printf("flicker: no v1 freezer: not checked\n");
	else if (r < 0)
		printf("flicker: the machine stretched the 0s past the settle (%u of at most %llu ms): not "
		       "checked\n",
		       f->flickers, (unsigned long long)f->longest_ms);
	else
		printf("flicker: %u 0s of at most %llu ms; %s\n", f->flickers,
		       (unsigned long long)f->longest_ms,
		       r == 1 ? "then the kernel killed the hog" : "the hog lived through them");
	return r;
}

void tl_cleanup(void)
{
	/* The freezer tree first: th_cg_remove_tree() thaws each cgroup of it
	 * (a frozen task cannot die) before it kills what is inside. */
	if (freezer_parent[0]) {
		(void)th_cg_remove_tree(freezer_parent, 10000);
		freezer_parent[0] = freezer[0] = 0;
	}
	if (!parent_made)
		return;
	parent_made = false;
	(void)th_cg_remove_tree(tl_abs(parent), 10000);
}
