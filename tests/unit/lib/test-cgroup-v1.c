/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cgroup-v1.c - the memcg v1 readers on a fixture tree: a temporary
 * directory laid out like /sys/fs/cgroup/memory, with odd contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"

static char root[PATH_MAX];

static void put(const char *rel, const char *content)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void memcg(const char *rel, const char *procs, const char *usage, const char *limit, const char *oom)
{
	char f[PATH_MAX];
	if (rel[0])
		dir(rel);
#define PUT(name, v)                                                                                         \
	do {                                                                                                 \
		snprintf(f, sizeof(f), "%s%s" name, rel, rel[0] ? "/" : "");                                 \
		put(f, v);                                                                                   \
	} while (0)
	PUT("cgroup.procs", procs);
	PUT("memory.usage_in_bytes", usage);
	PUT("memory.limit_in_bytes", limit);
	PUT("memory.max_usage_in_bytes", "4096\n");
	PUT("memory.failcnt", "7\n");
	PUT("memory.oom_control", oom);
	PUT("memory.stat", "cache 10\nrss 20\nrss_huge 0\ntotal_rss 30\n");
#undef PUT
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/oomkit-unit-cg-XXXXXX");
	assert_non_null(mkdtemp(root));
	memcg("", "1\n", "100\n", "9223372036854771712\n", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
	memcg("jobs", "", "0\n", "1073741824\n", "oom_kill_disable 1\nunder_oom 1\noom_kill 2\n");
	memcg("jobs/web", "10\n11\n", "50\n", "536870912\n", "oom_kill_disable 1\nunder_oom 1\n");
	memcg("jobs/web/inner", "12\n", "5\n", "536870912\n", "oom_kill_disable 0\nunder_oom 1\n");
	memcg("jobs/batch", "20", "60\n", "-1\n", "garbage\n");
	struct oomkit_options o;
	oomkit_ctx *ctx;
	oomkit_options_init(&o);
	o.memory_root = root;
	o.guardian = false;
	o.max_pids = 3;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	*state = ctx;
	return 0;
}

static int teardown(void **state)
{
	oomkit_free(*state);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_memory(void **state)
{
	oomkit_ctx *ctx = *state;
	struct oomkit_cgroup_memory m;
	assert_int_equal(oomkit_cgroup_memory(ctx, "jobs/web", &m), 0);
	assert_int_equal(m.usage_bytes, 50);
	assert_int_equal(m.limit_bytes, 536870912);
	assert_int_equal(m.max_usage_bytes, 4096);
	assert_int_equal(m.failcnt, 7);
	assert_true(m.under_oom);
	assert_true(m.oom_kill_disable);
	/* The v1 "no limit" value reads as unlimited; absolute paths under the root work. */
	char abs[PATH_MAX + 2];
	snprintf(abs, sizeof(abs), "%s/", root);
	assert_int_equal(oomkit_cgroup_memory(ctx, abs, &m), 0);
	assert_true(m.limit_bytes == OOMKIT_UNLIMITED);
	assert_int_equal(m.oom_kill, 0);
}

static void test_bad_contents(void **state)
{
	oomkit_ctx *ctx = *state;
	struct oomkit_cgroup_memory m = {.usage_bytes = 12345};
	/* "-1" as a limit and a garbled oom_control are errors, and nothing is written. */
	assert_true(oomkit_cgroup_memory(ctx, "jobs/batch", &m) < 0);
	assert_int_equal(m.usage_bytes, 12345);
	assert_int_equal(oomkit_cgroup_memory(ctx, "jobs/none", &m), -ENOENT);
	assert_int_equal(oomkit_cgroup_memory(ctx, "../etc", &m), -EINVAL);
	/* A path beside the root is refused; "/jobs/web" is the hierarchy's own notation. */
	assert_int_equal(oomkit_cgroup_memory(ctx, "/tmp/elsewhere/jobs", &m), -EINVAL);
	assert_int_equal(oomkit_cgroup_memory(ctx, "/jobs/web", &m), 0);
	assert_int_equal(m.usage_bytes, 50);
}

static void test_stat(void **state)
{
	oomkit_ctx *ctx = *state;
	uint64_t v = 0;
	assert_int_equal(oomkit_cgroup_stat(ctx, "jobs", "rss", &v), 0);
	assert_int_equal(v, 20);
	assert_int_equal(oomkit_cgroup_stat(ctx, "jobs", "total_rss", &v), 0);
	assert_int_equal(v, 30);
	assert_int_equal(oomkit_cgroup_stat(ctx, "jobs", "swap", &v), -ENOENT);
}

static void test_pids(void **state)
{
	oomkit_ctx *ctx = *state;
	pid_t pids[8];
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs/web", false, pids, 8), 2);
	assert_int_equal(pids[0], 10);
	assert_int_equal(pids[1], 11);
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs/web", true, pids, 8), 3);
	assert_int_equal(pids[2], 12);
	/* 10, 11, 12 under web plus 20 in batch: four do not fit in three. */
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs", true, pids, 3), -ENOBUFS);
	assert_int_equal(oomkit_cgroup_pids(ctx, "jobs", true, pids, 8), 4);
}

static int count_child(const char *name, void *userdata)
{
	int *n = userdata;
	assert_true(strcmp(name, "web") == 0 || strcmp(name, "batch") == 0);
	(*n)++;
	return 0;
}

static int stop_at_first(const char *name, void *userdata)
{
	(void)name;
	(void)userdata;
	return 42;
}

static void test_children(void **state)
{
	oomkit_ctx *ctx = *state;
	int n = 0;
	assert_int_equal(oomkit_cgroup_children(ctx, "jobs", count_child, &n), 2);
	assert_int_equal(n, 2);
	assert_int_equal(oomkit_cgroup_children(ctx, "jobs", stop_at_first, NULL), 42);
	assert_int_equal(oomkit_cgroup_children(ctx, "jobs/web/inner", stop_at_first, NULL), 0);
	assert_int_equal(oomkit_cgroup_exists(ctx, "jobs/web"), 1);
	assert_int_equal(oomkit_cgroup_exists(ctx, "jobs/gone"), 0);
}

static void test_writers(void **state)
{
	oomkit_ctx *ctx = *state;
	struct oomkit_cgroup_memory m;
	assert_int_equal(oomkit_set_limit(ctx, "jobs/web", 1 << 20), 0);
	assert_int_equal(oomkit_set_kernel_killer(ctx, "jobs/web", true), 0);
	char path[PATH_MAX * 2], buf[64] = {0};
	snprintf(path, sizeof(path), "%s/jobs/web/memory.oom_control", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	/* A plain file is overwritten in place: "0" (kernel killer on) at its start. */
	assert_int_equal(buf[0], '0');
	snprintf(path, sizeof(path), "%s/jobs/web/memory.limit_in_bytes", root);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(strncmp(buf, "1048576", 7), 0);
	(void)m;
}

/* Whether a uid may have moved a process into a cgroup: by the owner and
 * mode of its cgroup.procs (a delegated subtree's is chowned to its user). */
static void test_procs_writable(void **state)
{
	oomkit_ctx *ctx = *state;
	uid_t me = getuid(), other = me + 1;
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/jobs/web/cgroup.procs", root);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/web", me), 1);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/web", other), 0);
	/* Owned by another uid without the write bit: still its owner's to chmod. */
	assert_int_equal(chmod(path, 0444), 0);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/web", me), 1);
	/* A group's or anyone's write bit: any uid may have. */
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/web", other), 1);
	assert_int_equal(chmod(path, 0646), 0);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/web", other), 1);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "/jobs/web/inner", other), 0);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "jobs/gone", other), -ENOENT);
	assert_int_equal(oomkit_cgroup_procs_writable(ctx, "../etc", other), -EINVAL);
}

/* Whether a cgroup lies in a subtree a user may write, below a given
 * ancestor, from the top down: the directory, cgroup.procs and (v1) tasks of
 * each level.  Run as root the fixture is root's, as a test of root's
 * cgroups must be; another uid owns every level of it. */
static void test_delegated(void **state)
{
	oomkit_ctx *ctx = *state;
	char path[PATH_MAX * 2];
	uid_t owner = 12345;

	if (getuid() != 0) {
		assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web", "", &owner), 1);
		assert_int_equal(owner, getuid());
		return;
	}
	/* Root's all the way down: no user may have put a process there. */
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web/inner", "", &owner), 0);
	assert_int_equal(owner, 12345);
	/* The cgroup itself is not below itself; nor is anything outside below. */
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs", "jobs", &owner), 0);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web", "jobs/batch", &owner), -EINVAL);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobsx/web", "jobs", &owner), -EINVAL);
	/* An ancestor chowned to a user (systemd's user@UID.service) delegates
	 * everything below it, whatever the cgroup itself says. */
	snprintf(path, sizeof(path), "%s/jobs/web/cgroup.procs", root);
	assert_int_equal(chown(path, 1000, 1000), 0);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web/inner", "", &owner), 1);
	assert_int_equal(owner, 1000);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "/jobs/web/inner", "jobs", &owner), 1);
	/* Below the delegated one: only what is below the given ancestor counts. */
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web/inner", "jobs/web", &owner), 0);
	assert_int_equal(chown(path, 0, 0), 0);
	/* A directory of a user's (it makes cgroups in it), a write bit for a
	 * group or anyone, a tasks file of a user's (v1 threads move by it). */
	snprintf(path, sizeof(path), "%s/jobs/web/inner", root);
	assert_int_equal(chown(path, 1001, 0), 0);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web/inner", "", &owner), 1);
	assert_int_equal(owner, 1001);
	assert_int_equal(chown(path, 0, 0), 0);
	snprintf(path, sizeof(path), "%s/jobs/cgroup.procs", root);
	assert_int_equal(chmod(path, 0664), 0);
	owner = 12345;
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web", "", &owner), 1);
	assert_int_equal(owner, 0);
	assert_int_equal(chmod(path, 0644), 0);
	put("jobs/web/tasks", "");
	snprintf(path, sizeof(path), "%s/jobs/web/tasks", root);
	assert_int_equal(chown(path, 1002, 0), 0);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/web/inner", "", &owner), 1);
	assert_int_equal(owner, 1002);
	assert_int_equal(unlink(path), 0);
	/* Removed meanwhile, or not a cgroup path at all. */
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs/gone/x", "", &owner), -ENOENT);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "../etc", "", &owner), -EINVAL);
	assert_int_equal(oomkit_cgroup_delegated(ctx, "jobs", "", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_contents, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stat, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_children, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_writers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_procs_writable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_delegated, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
