/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-psi.c - PSI triggers on this machine: the machine's
 * /proc/pressure/memory, and a job's memory.pressure in the cgroup2
 * hierarchy mounted beside the v1 memcgs (it has no memory controller, but
 * it accounts memory stalls per cgroup all the same), or on cgroup v2 the
 * memcg's own.  A job that rewrites
 * a file in a 16 MiB memcg stalls in reclaim and writeback; the watch on it
 * must report pressure.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"
#include "testlib.h"

#define UNIFIED "/sys/fs/cgroup/unified"

static int pressure_events, stall_events, machine_stall_events;

static enum oomkit_verdict handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	(void)ctx;
	if (ev->kind == OOMKIT_EVENT_PRESSURE)
		(*(userdata ? (int *)userdata : &pressure_events))++;
	return OOMKIT_RESOLVED;
}

static void test_system_psi(void **state)
{
	(void)state;
	oomkit_ctx *ctx;
	oomkit_watch *w;
	if (access("/proc/pressure/memory", W_OK) != 0)
		skip();
	assert_int_equal(oomkit_new(NULL, &ctx), 0);
	/* A trigger on the machine's PSI registers and, on an idle machine, stays quiet. */
	assert_int_equal(
	    oomkit_watch_pressure(ctx, "", OOMKIT_PRESSURE_CRITICAL, OOMKIT_WATCH_PSI, handler, NULL, &w), 0);
	assert_int_equal(oomkit_dispatch(ctx, 0), 0);
	assert_int_equal(oomkit_unwatch(ctx, w), 0);
	/* The stall trigger takes the kernel's bounds only, and reads the machine's totals. */
	assert_int_equal(oomkit_watch_stall(ctx, "", 10000, 100000, 0, handler, NULL, &w), -EINVAL);
	assert_int_equal(oomkit_watch_stall(ctx, "", 0, 2000000, 0, handler, NULL, &w), -EINVAL);
	assert_int_equal(oomkit_watch_stall(ctx, "", 3000000, 2000000, 0, handler, NULL, &w), -EINVAL);
	assert_int_equal(oomkit_watch_stall(ctx, "", 10000, 2000000, 0, handler, &stall_events, &w), 0);
	struct oomkit_pressure p0, p1;
	assert_int_equal(oomkit_pressure_read(ctx, "", &p0), 0);
	assert_int_equal(oomkit_pressure_read(ctx, "", &p1), 0);
	assert_true(p1.some_total_us >= p0.some_total_us && p1.full_total_us >= p0.full_total_us);
	assert_true(p0.some_total_us >= p0.full_total_us);
	assert_int_equal(oomkit_unwatch(ctx, w), 0);
	oomkit_free(ctx);
}

static char unified_parent[PATH_MAX], unified_job[PATH_MAX + 64];

static void remove_unified(void)
{
	if (unified_job[0])
		rmdir(unified_job);
	if (unified_parent[0])
		rmdir(unified_parent);
}

static void test_job_psi_on_unified(void **state)
{
	(void)state;
	/* On cgroup v2 the memcg is the cgroup the pressure is read from;
	 * on v1 a twin of it in the cgroup2 hierarchy beside. */
	if (!tl_v2() && access(UNIFIED "/cgroup.procs", W_OK) != 0)
		skip();
	const char *cg = tl_cgroup("psi", 16 * TL_MIB);
	if (!tl_v2()) {
		snprintf(unified_parent, sizeof(unified_parent), UNIFIED "/%s", tl_parent());
		snprintf(unified_job, sizeof(unified_job), UNIFIED "/%s", cg);
		assert_int_equal(mkdir(unified_parent, 0755), 0);
		assert_int_equal(mkdir(unified_job, 0755), 0);
	}

	oomkit_ctx *ctx;
	oomkit_watch *w;
	assert_int_equal(oomkit_new(NULL, &ctx), 0);
	assert_int_equal(
	    oomkit_watch_pressure(ctx, cg, OOMKIT_PRESSURE_LOW, OOMKIT_WATCH_PSI, handler, NULL, &w), 0);
	/* The first stall, 10 ms in 2 s: what oomkitd wakes on for a machine at the v2 root. */
	oomkit_watch *ws;
	struct oomkit_pressure before, after;
	assert_int_equal(oomkit_watch_stall(ctx, cg, 10000, 2000000, 0, handler, &stall_events, &ws), 0);
	/* The machine's /proc/pressure/memory counts the job's stalls too. */
	assert_int_equal(oomkit_watch_stall(ctx, "", 10000, 2000000, 0, handler, &machine_stall_events, &ws),
			 0);
	assert_int_equal(oomkit_pressure_read(ctx, cg, &before), 0);
	char file[] = "/var/tmp/oomkit-psi-XXXXXX";
	int fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);

	pid_t pid = fork();
	if (pid == 0) {
		char v[32], procs[PATH_MAX + 96], script[600];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", unified_job);
		if (tl_write(cg, "cgroup.procs", v) != 0)
			_exit(126);
		if (!tl_v2()) {
			int pfd = open(procs, O_WRONLY);
			if (pfd < 0 || write(pfd, v, strlen(v)) < 0)
				_exit(126);
			close(pfd);
		}
		snprintf(
		    script, sizeof(script),
		    "while :; do dd if=/dev/zero of=%s bs=1M count=64 status=none; cat %s >/dev/null; done",
		    file, file);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1500 && (pressure_events == 0 || stall_events == 0 || machine_stall_events == 0);
	     i++)
		assert_true(oomkit_dispatch(ctx, 20) >= 0);
	assert_int_equal(oomkit_pressure_read(ctx, cg, &after), 0);
	printf("pressure events from the job's memory.pressure: %d, stall events %d (the machine's %d), "
	       "stalled %llu us\n",
	       pressure_events, stall_events, machine_stall_events,
	       (unsigned long long)(after.some_total_us - before.some_total_us));
	assert_true(pressure_events > 0);
	assert_true(stall_events > 0);
	assert_true(machine_stall_events > 0);
	assert_true(after.some_total_us >= before.some_total_us + 10000);
	tl_cleanup(); /* kills the job: it is in our memcgs */
	waitpid(pid, NULL, 0);
	oomkit_free(ctx);
	unlink(file);
	remove_unified();
}

int main(void)
{
	tl_require_kernel();
	atexit(remove_unified);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_system_psi),
	    cmocka_unit_test(test_job_psi_on_unified),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	remove_unified();
	return failed ? 1 : 0;
}
