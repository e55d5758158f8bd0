/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-tracker.c - oomkitd's pattern tracker (daemon/scope/tracker.c) on real
 * memcgs: cgroupfs reports mkdir and rmdir to inotify as any file system
 * does, patterns rooted at the memory mount find the test's own cgroups as
 * they are made, and what the kernel does inside a watched cgroup (limits
 * written, processes moved, usage) wakes nobody.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "scope/tracker.h"

struct seen {
	char last[512];
	int added, removed;
};

static void record(void *data, const char *rel, unsigned pattern, bool added)
{
	struct seen *s = data;

	(void)pattern;
	snprintf(s->last, sizeof(s->last), "%s", rel);
	if (added)
		s->added++;
	else
		s->removed++;
}

/* Whether the tracker's descriptor has anything to read right now. */
static bool readable(struct tracker *t)
{
	struct pollfd p = {.fd = tracker_fd(t), .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

static void test_real_cgroups(void **state)
{
	char pattern[300], want[300];
	const char *patterns[1] = {pattern};
	struct seen s = {0};
	struct tracker *t;

	(void)state;
	snprintf(pattern, sizeof(pattern), "%s/svc-*/app-*", tl_parent());
	assert_int_equal(tracker_new(TL_MEMORY_ROOT, patterns, 1, record, &s, &t), 0);
	assert_int_equal(tracker_start(t), 0);
	assert_int_equal(s.added, 0);
	/* The memory root and the test's parent. */
	assert_int_equal(tracker_watches(t), 2);

	tl_cgroup("svc-1", 64 * TL_MIB);
	const char *app = tl_cgroup("svc-1/app-a", 32 * TL_MIB);
	tl_cgroup("svc-1/other", 32 * TL_MIB);
	assert_true(readable(t));
	assert_int_equal(tracker_dispatch(t), 1);
	assert_int_equal(s.added, 1);
	snprintf(want, sizeof(want), "%s/svc-1/app-a", tl_parent());
	assert_string_equal(s.last, want);

	/* Work inside the adopted cgroup is no event of the tracker's. */
	pid_t hog = tl_spawn_hog(app, 8, 256, 0);
	assert_true(tl_wait_usage(app, 8 * TL_MIB, 10000));
	assert_int_equal(tl_write(app, "memory.limit_in_bytes", "48M"), 0);
	/* (Other tests may make cgroups in the memory root meanwhile: what
	 * counts is that nothing of ours changed.) */
	assert_int_equal(tracker_dispatch(t), 0);
	kill(hog, SIGKILL);
	assert_true(tl_wait_exit(hog, 10000) >= 0);

	assert_int_equal(rmdir(tl_abs(app)), 0);
	assert_int_equal(tracker_dispatch(t), 1);
	assert_int_equal(s.removed, 1);
	assert_int_equal(tracker_matches(t, 0), 0);
	assert_int_equal(tracker_dispatch(t), 0);
	tracker_free(t);
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_cgroups),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return r;
}
