/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-walk.c - walks of cgroup trees a job's owner could make, on a fixture
 * tree: deeper than the walk's stack of open directories, paths far longer
 * than PATH_MAX, siblings at every depth, a cgroup.procs larger than any
 * buffer; and placing a process whose /proc/PID/cgroup path the kernel cut.
 * Every process must be seen exactly once, at the path it is listed at.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomkit.h"

static char root[PATH_MAX];

/* Levels of the deep chain, with a 200-byte name each: about 20 KB of path,
 * three times the walk's stack of open directories. */
#define DEPTH 100
#define NAME_LEN 200
/* Levels that get leaf siblings, each with a process: below the stack and far below. */
static const int sibling_levels[] = {3, 40, 90};
#define SIBLINGS 3
#define PID_BASE 1000
#define MAX_SEEN 1500

static void write_at(int dirfd, const char *name, const char *data)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static int mkdir_open(int dirfd, const char *name)
{
	assert_int_equal(mkdirat(dirfd, name, 0755), 0);
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static void level_name(char *buf, int level)
{
	memset(buf, 'a' + level % 26, NAME_LEN);
	buf[0] = (char)('0' + level / 100 % 10);
	buf[1] = (char)('0' + level / 10 % 10);
	buf[2] = (char)('0' + level % 10);
	buf[3] = '-';
	buf[NAME_LEN] = 0;
}

/* jobs/deep/<level 0>/<level 1>/...: level L holds pid PID_BASE + L; some
 * levels have leaf siblings s0..s2 with pids PID_BASE + 500 + 10 L + i. */
static void make_deep(int rootfd)
{
	char name[NAME_LEN + 1], pid[32];
	int jobs = mkdir_open(rootfd, "jobs");
	int cur = mkdir_open(jobs, "deep");
	write_at(jobs, "cgroup.procs", "");
	write_at(cur, "cgroup.procs", "");
	close(jobs);
	for (int level = 0; level < DEPTH; level++) {
		level_name(name, level);
		int fd = mkdir_open(cur, name);
		snprintf(pid, sizeof(pid), "%d\n", PID_BASE + level);
		write_at(fd, "cgroup.procs", pid);
		for (size_t k = 0; k < sizeof(sibling_levels) / sizeof(sibling_levels[0]); k++) {
			if (sibling_levels[k] != level)
				continue;
			for (int i = 0; i < SIBLINGS; i++) {
				char s[8];
				snprintf(s, sizeof(s), "s%d", i);
				int sfd = mkdir_open(cur, s);
				snprintf(pid, sizeof(pid), "%d\n", PID_BASE + 500 + 10 * level + i);
				write_at(sfd, "cgroup.procs", pid);
				close(sfd);
			}
		}
		close(cur);
		cur = fd;
	}
	close(cur);
}

static oomkit_ctx *new_ctx(unsigned max_pids)
{
	struct oomkit_options o;
	oomkit_ctx *ctx;
	char proc[PATH_MAX + 8];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	oomkit_options_init(&o);
	o.memory_root = root;
	o.proc_root = proc;
	o.guardian = false;
	o.max_pids = max_pids;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	return ctx;
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/oomkit-unit-walk-XXXXXX");
	assert_non_null(mkdtemp(root));
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	write_at(fd, "cgroup.procs", "1\n");
	assert_int_equal(mkdirat(fd, "proc", 0755), 0);
	make_deep(fd);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	/* rm walks with openat, so the deep tree goes too. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static size_t append(char *buf, size_t len, size_t n, const char *s)
{
	size_t k = strlen(s);
	assert_true(n + k < len);
	memcpy(buf + n, s, k + 1);
	return n + k;
}

/* The path of the chain's level (level < 0: jobs/deep itself), or of
 * sibling i of that level. */
static size_t expected_path(char *buf, size_t len, int level, int sibling)
{
	char name[NAME_LEN + 2];
	size_t n = append(buf, len, 0, "jobs/deep");
	for (int l = 0; l < level + (sibling < 0); l++) {
		name[0] = '/';
		level_name(name + 1, l);
		n = append(buf, len, n, name);
	}
	if (sibling >= 0) {
		snprintf(name, sizeof(name), "/s%d", sibling);
		n = append(buf, len, n, name);
	}
	return n;
}

struct seen {
	int count[MAX_SEEN];
	int wrong_path, total, stop_at;
};

/* Checks the entry's path against where the pid was put. */
static int check_entry(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	static char want[DEPTH * (NAME_LEN + 2) + 64];
	struct seen *s = userdata;
	int i = e->pid - PID_BASE, level = i < 500 ? i : (i - 500) / 10, sib = i < 500 ? -1 : (i - 500) % 10;
	(void)ctx;
	if (i < 0 || i >= MAX_SEEN)
		fail_msg("pid %d at %s", e->pid, e->cgroup);
	s->count[i]++;
	s->total++;
	size_t n = expected_path(want, sizeof(want), level, sib), got = strlen(e->cgroup);
	/* depth: jobs/deep is 1 below jobs; level L is L + 2. */
	bool ok = e->depth == (unsigned)level + 2;
	if (n < 4096) {
		ok = ok && !e->cgroup_truncated && strcmp(e->cgroup, want) == 0;
	} else {
		/* Whole components only, and never so short that a nameable
		 * (512-byte) cgroup could be cut off. */
		ok = ok && e->cgroup_truncated && got < 4096 && got > 4096 - NAME_LEN - 2 &&
		     strncmp(e->cgroup, want, got) == 0 && want[got] == '/';
	}
	if (!ok) {
		print_message("pid %d depth %u: %.60s... (%zu bytes, truncated %d), want %zu bytes\n", e->pid,
			      e->depth, e->cgroup, got, e->cgroup_truncated, n);
		s->wrong_path++;
	}
	return s->stop_at && s->total == s->stop_at ? 77 : 0;
}

static void test_deep_tree(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx(16);
	static struct seen s;
	memset(&s, 0, sizeof(s));
	int want = DEPTH + SIBLINGS * (int)(sizeof(sibling_levels) / sizeof(sibling_levels[0]));
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs", OOMKIT_WALK_RECURSIVE, check_entry, &s), want);
	assert_int_equal(s.wrong_path, 0);
	for (int i = 0; i < MAX_SEEN; i++) {
		int level = i < 500 ? i : (i - 500) / 10, sib = i < 500 ? -1 : (i - 500) % 10;
		bool exists = i < 500 ? level < DEPTH : false;
		for (size_t k = 0; i >= 500 && k < sizeof(sibling_levels) / sizeof(sibling_levels[0]); k++)
			exists = exists || (level == sibling_levels[k] && sib < SIBLINGS);
		if (s.count[i] != (exists ? 1 : 0))
			print_message("pid %d seen %d times\n", PID_BASE + i, s.count[i]);
		assert_int_equal(s.count[i], exists ? 1 : 0);
	}
	/* Not recursive: only the cgroup itself (no processes). */
	memset(&s, 0, sizeof(s));
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs/deep", 0, check_entry, &s), 0);
	/* The callback's non-zero value stops the walk, deep inside too. */
	memset(&s, 0, sizeof(s));
	s.stop_at = want - 1;
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs", OOMKIT_WALK_RECURSIVE, check_entry, &s), 77);
	assert_int_equal(s.total, want - 1);
	/* The array form: the first 16, then -ENOBUFS. */
	pid_t pids[DEPTH * 2];
	memset(pids, 0, sizeof(pids));
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs", true, pids, 16), -ENOBUFS);
	for (int i = 0; i < 16; i++)
		assert_true(pids[i] >= PID_BASE);
	assert_int_equal(pids[16], 0);
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs", true, pids, DEPTH * 2), want);
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs", 0x80, check_entry, &s), -EINVAL);
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs/none", OOMKIT_WALK_RECURSIVE, check_entry, &s),
			 -ENOENT);
	oomkit_free(ctx);
}

struct sum {
	uint64_t count, sum;
};

static int add_up(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct sum *s = userdata;
	(void)ctx;
	s->count++;
	s->sum += (uint64_t)e->pid;
	return 0;
}

/* More processes than the context's buffers hold, in a cgroup.procs far
 * larger than its 64 KiB read buffer, without a trailing newline. */
static void test_many_pids(void **state)
{
	(void)state;
	enum { N = 30000 };
	static char procs[N * 8];
	size_t n = 0;
	for (int i = 1; i <= N; i++)
		n += (size_t)snprintf(procs + n, sizeof(procs) - n, i < N ? "%d\n" : "%d", 100000 + i);
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int big = mkdir_open(fd, "big");
	write_at(big, "cgroup.procs", procs);
	oomkit_ctx *ctx = new_ctx(16);
	struct sum s = {0};
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "big", 0, add_up, &s), N);
	assert_int_equal(s.count, N);
	assert_int_equal(s.sum, (uint64_t)N * 100000 + (uint64_t)N * (N + 1) / 2);
	pid_t pids[16];
	assert_int_equal(oomkit_cgroup_pids(ctx, "big", false, pids, 16), -ENOBUFS);
	assert_int_equal(pids[0], 100001);
	assert_int_equal(pids[15], 100016);
	/* A malformed line is an error, not a silent stop. */
	write_at(big, "cgroup.procs", "1\n2\nthree\n4\n");
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "big", 0, add_up, &s), -EINVAL);
	oomkit_free(ctx);
	close(big);
	close(fd);
}

static void put_proc_cgroup(int pid, const char *memory_path)
{
	char dir[64], content[8192];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "proc/%d", pid);
	assert_int_equal(mkdirat(fd, dir, 0755), 0);
	snprintf(content, sizeof(content), "12:freezer:/\n3:memory:%s\n0::/user.slice\n", memory_path);
	snprintf(dir, sizeof(dir), "proc/%d/cgroup", pid);
	write_at(fd, dir, content);
	/* The readers look at the state first (a leader that exited is read
	 * through a live thread): a running process. */
	snprintf(content, sizeof(content), "%d (p) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n", pid,
		 pid, pid);
	snprintf(dir, sizeof(dir), "proc/%d/stat", pid);
	write_at(fd, dir, content);
	close(fd);
}

/* /proc/PID/cgroup paths the kernel cut at 4095 bytes: the process is still
 * placed exactly, and its path is never returned as if whole. */
static void test_cut_path(void **state)
{
	(void)state;
	static char path[DEPTH * (NAME_LEN + 2) + 64];
	size_t n = expected_path(path, sizeof(path), 30, -1);
	assert_true(n > 4096);
	/* As the kernel shows it: "/" and the first 4094 bytes, cut mid-name. */
	memmove(path + 1, path, 4094);
	path[0] = '/';
	path[4095] = 0;
	put_proc_cgroup(100, path);
	/* Cut right after a '/', and right in a "..x" name: not canonical, still placed. */
	path[4094] = '/';
	put_proc_cgroup(101, path);
	memcpy(path + 4092, "/..", 4);
	put_proc_cgroup(102, path);
	put_proc_cgroup(103, "/../../elsewhere");
	put_proc_cgroup(104, "/jobs/deeper");
	oomkit_ctx *ctx = new_ctx(16);
	char buf[8192];
	for (int pid = 100; pid <= 102; pid++) {
		assert_int_equal(oomkit_process_cgroup(ctx, pid, buf, sizeof(buf)), -ENAMETOOLONG);
		assert_int_equal(oomkit_process_in_cgroup(ctx, pid, "jobs/deep"), 1);
		assert_int_equal(oomkit_process_in_cgroup(ctx, pid, "/jobs"), 1);
		assert_int_equal(oomkit_process_in_cgroup(ctx, pid, ""), 1);
		assert_int_equal(oomkit_process_in_cgroup(ctx, pid, "jobs/dee"), 0);
		assert_int_equal(oomkit_process_in_cgroup(ctx, pid, "jobs/other"), 0);
	}
	/* Outside our cgroup namespace: inside none of our cgroups, the root included. */
	assert_int_equal(oomkit_process_in_cgroup(ctx, 103, ""), 0);
	assert_int_equal(oomkit_process_in_cgroup(ctx, 104, "jobs/deep"), 0);
	assert_int_equal(oomkit_process_in_cgroup(ctx, 104, "jobs/deeper"), 1);
	assert_int_equal(oomkit_process_in_cgroup(ctx, 105, "jobs"), -ESRCH);
	assert_int_equal(oomkit_process_in_cgroup(ctx, 104, "../x"), -EINVAL);
	oomkit_free(ctx);
}

struct found {
	int pid[8];
	char cgroup[8][256];
	bool cut[8];
	unsigned depth[8], n;
};

static int note_found(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct found *f = userdata;
	(void)ctx;
	assert_true(f->n < 8);
	f->pid[f->n] = e->pid;
	snprintf(f->cgroup[f->n], sizeof(f->cgroup[0]), "%.255s", e->cgroup);
	f->cut[f->n] = e->cgroup_truncated;
	f->depth[f->n++] = e->depth;
	return 0;
}

/* Where pid is among what was found (the fixture's /proc lists in any order). */
static unsigned at(const struct found *f, int pid)
{
	for (unsigned i = 0; i < f->n; i++)
		if (f->pid[i] == pid)
			return i;
	fail_msg("pid %d not found", pid);
	return 0;
}

/* OOMKIT_WALK_PROC: the processes below a cgroup found in /proc, whatever
 * cgroups lie there; a cut path placed by its whole components. */
static void test_proc_walk(void **state)
{
	(void)state;
	static char path[DEPTH * (NAME_LEN + 2) + 64];
	size_t n = expected_path(path, sizeof(path), 30, -1);
	assert_true(n > 4096);
	memmove(path + 1, path, 4094);
	path[0] = '/';
	path[4095] = 0;
	put_proc_cgroup(200, "/jobs/deep/x/y");
	put_proc_cgroup(201, "/jobs/deeper");
	put_proc_cgroup(202, path);
	put_proc_cgroup(203, "/../../jobs/deep");
	put_proc_cgroup(204, "/jobs/deep");
	/* A leader that exited before its thread 207: its own file reads the root. */
	put_proc_cgroup(206, "/");
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_at(
	    fd, "proc/206/stat",
	    "206 (hog) Z 1 206 206 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 2 0 4242 0 0 18446744073709551615 0 0 0 "
	    "0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	assert_int_equal(mkdirat(fd, "proc/206/task", 0755), 0);
	assert_int_equal(mkdirat(fd, "proc/206/task/206", 0755), 0);
	assert_int_equal(mkdirat(fd, "proc/206/task/207", 0755), 0);
	write_at(fd, "proc/206/task/206/cgroup", "3:memory:/\n");
	write_at(fd, "proc/206/task/207/cgroup", "3:memory:/jobs/deep/z\n");
	/* The live thread, as every reader of a process finds one: by its stat. */
	write_at(
	    fd, "proc/206/task/207/stat",
	    "207 (hog) S 1 206 206 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 2 0 4243 0 0 18446744073709551615 0 0 0 "
	    "0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	assert_int_equal(mkdirat(fd, "proc/205", 0755), 0); /* no cgroup file: gone meanwhile */
	assert_int_equal(mkdirat(fd, "proc/self", 0755), 0);
	close(fd);
	oomkit_ctx *ctx = new_ctx(16);
	struct found f;
	memset(&f, 0, sizeof(f));
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs/deep", OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC,
						 note_found, &f),
			 4);
	unsigned a = at(&f, 200), b = at(&f, 202), c = at(&f, 204);
	assert_string_equal(f.cgroup[at(&f, 206)], "jobs/deep/z");
	assert_string_equal(f.cgroup[a], "jobs/deep/x/y");
	assert_int_equal(f.depth[a], 2);
	assert_false(f.cut[a]);
	assert_true(f.cut[b]);
	assert_int_equal(strncmp(f.cgroup[b], "jobs/deep/", 10), 0);
	assert_string_equal(f.cgroup[c], "jobs/deep");
	assert_int_equal(f.depth[c], 0);
	assert_false(f.cut[c]);
	/* Not recursive: the cgroup itself only. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "jobs/deep", OOMKIT_WALK_PROC, note_found, &f), 1);
	assert_int_equal(f.pid[0], 204);
	/* The root: everything in our namespace. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(
	    oomkit_cgroup_walk_pids(ctx, "", OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC, note_found, &f), 5);
	assert_int_equal(f.depth[at(&f, 201)], 2);
	oomkit_free(ctx);
}

/* A directory of many empty leaves (read a buffer at a time) with a subtree
 * in their midst (whose reading takes the buffer), and a deadline. */
static void test_wide(void **state)
{
	(void)state;
	enum { LEAVES = 3000 };
	char name[32], pid[32];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int wide = mkdir_open(fd, "wide");
	write_at(wide, "cgroup.procs", "");
	for (int i = 0; i < LEAVES; i++) {
		snprintf(name, sizeof(name), "leaf-with-a-longer-name-%d", i);
		int leaf = mkdir_open(wide, name);
		snprintf(pid, sizeof(pid), i % 100 == 0 ? "%d\n" : "", 300000 + i);
		write_at(leaf, "cgroup.procs", pid);
		if (i == LEAVES / 2) {
			int sub = mkdir_open(leaf, "sub");
			write_at(sub, "cgroup.procs", "299999\n");
			close(sub);
		}
		close(leaf);
	}
	oomkit_ctx *ctx = new_ctx(16);
	struct sum s = {0};
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, "wide", OOMKIT_WALK_RECURSIVE, add_up, &s),
			 LEAVES / 100 + 1);
	uint64_t want = 299999;
	for (int i = 0; i < LEAVES; i += 100)
		want += 300000u + (unsigned)i;
	assert_int_equal(s.sum, want);
	/* Past its deadline, the walk stops. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(oomkit_cgroup_walk_pids_until(ctx, "wide", OOMKIT_WALK_RECURSIVE, 1, add_up, &s),
			 -ETIMEDOUT);
	assert_int_equal(oomkit_cgroup_walk_pids_until(ctx, "wide", OOMKIT_WALK_RECURSIVE, 0, add_up, &s),
			 LEAVES / 100 + 1);
	oomkit_free(ctx);
	close(wide);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_deep_tree, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_pids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cut_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_proc_walk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wide, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
