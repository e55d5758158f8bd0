/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-tracker.c - the pattern tracker on fixture trees: plain directories
 * under a temporary root stand for cgroups (the tracker reads directories
 * only).  Each test makes and removes directories and checks what the
 * tracker reported, in order, after one dispatch: inotify queues an event
 * before mkdir(2) returns, so there is nothing to wait for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scope/tracker.h"

#define MAX_SEEN 64

struct seen {
	char line[MAX_SEEN][300];
	unsigned n;
	unsigned more; /* reports past MAX_SEEN, counted only */
};

static char root[64];

static void record(void *data, const char *rel, unsigned pattern, bool added)
{
	struct seen *s = data;

	if (s->n == MAX_SEEN) {
		s->more++;
		return;
	}
	snprintf(s->line[s->n++], sizeof(s->line[0]), "%c%s#%u", added ? '+' : '-', rel, pattern);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The lines seen since the last call, sorted (a walk's order is the
 * directory's), joined by spaces; then forgets them. */
static const char *take(struct seen *s)
{
	static char out[MAX_SEEN * 300];
	size_t len = 0;

	assert_int_equal(s->more, 0);
	qsort(s->line, s->n, sizeof(s->line[0]), by_text);
	out[0] = '\0';
	for (unsigned i = 0; i < s->n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? " " : "", s->line[i]);
	s->n = 0;
	return out;
}

static void mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void rm(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(rmdir(path), 0);
}

static void touch(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test-tracker-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct tracker *start(const char *const *patterns, unsigned n, struct seen *s)
{
	struct tracker *t;

	assert_int_equal(tracker_new(root, patterns, n, record, s, &t), 0);
	assert_int_equal(tracker_start(t), 0);
	return t;
}

static void expect(struct tracker *t, struct seen *s, const char *want)
{
	assert_true(tracker_dispatch(t) >= 0);
	assert_string_equal(take(s), want);
}

/* What exists at start is reported; only directories, at the pattern's depth. */
static void test_initial_walk(void **state)
{
	const char *p[] = {"system.slice/batch-*.service", "system.slice/postgresql.service"};
	struct seen s = {0};

	(void)state;
	mk("system.slice");
	mk("system.slice/batch-1.service");
	mk("system.slice/batch-2.service");
	mk("system.slice/batch-2.service/sub");
	mk("system.slice/postgresql.service");
	mk("system.slice/cron.service");
	mk("user.slice");
	touch("system.slice/batch-file.service");
	struct tracker *t = start(p, 2, &s);
	assert_string_equal(take(&s), "+system.slice/batch-1.service#0 +system.slice/batch-2.service#0 "
				      "+system.slice/postgresql.service#1");
	/* The root and system.slice: nothing below a match is watched. */
	assert_int_equal(tracker_watches(t), 2);
	assert_int_equal(tracker_matches(t, 0), 2);
	assert_int_equal(tracker_matches(t, 1), 1);
	tracker_free(t);
}

/* Cgroups that appear later are reported when they appear, removed ones
 * when they go; other directories are not. */
static void test_appear_and_go(void **state)
{
	const char *p[] = {"system.slice/batch-*.service"};
	struct seen s = {0};

	(void)state;
	mk("system.slice");
	struct tracker *t = start(p, 1, &s);
	expect(t, &s, "");
	mk("system.slice/batch-17.service");
	mk("system.slice/web.service");
	expect(t, &s, "+system.slice/batch-17.service#0");
	mk("system.slice/batch-17.service/child");
	expect(t, &s, "");
	rm("system.slice/batch-17.service/child");
	rm("system.slice/batch-17.service");
	expect(t, &s, "-system.slice/batch-17.service#0");
	assert_int_equal(tracker_matches(t, 0), 0);
	/* Quiet when nothing changes. */
	assert_int_equal(tracker_dispatch(t), 0);
	tracker_free(t);
}

/* Intermediate levels that do not exist yet are followed as they are made,
 * and forgotten (watches included) when removed. */
static void test_missing_levels(void **state)
{
	const char *p[] = {"user.slice/user-*.slice/user@*.service/app.slice/app-*.scope"};
	struct seen s = {0};

	(void)state;
	struct tracker *t = start(p, 1, &s);
	expect(t, &s, "");
	assert_int_equal(tracker_watches(t), 1);
	mk("user.slice");
	mk("user.slice/user-1000.slice");
	mk("user.slice/user-1000.slice/session-2.scope");
	mk("user.slice/user-1000.slice/user@1000.service");
	mk("user.slice/user-1000.slice/user@1000.service/app.slice");
	mk("user.slice/user-1000.slice/user@1000.service/app.slice/app-a.scope");
	mk("user.slice/user-1000.slice/user@1000.service/app.slice/other.service");
	expect(t, &s, "+user.slice/user-1000.slice/user@1000.service/app.slice/app-a.scope#0");
	assert_int_equal(tracker_watches(t), 5);
	rm("user.slice/user-1000.slice/user@1000.service/app.slice/app-a.scope");
	rm("user.slice/user-1000.slice/user@1000.service/app.slice/other.service");
	rm("user.slice/user-1000.slice/user@1000.service/app.slice");
	expect(t, &s, "-user.slice/user-1000.slice/user@1000.service/app.slice/app-a.scope#0");
	assert_int_equal(tracker_watches(t), 4);
	/* Made again: found again. */
	mk("user.slice/user-1000.slice/user@1000.service/app.slice");
	mk("user.slice/user-1000.slice/user@1000.service/app.slice/app-b.scope");
	expect(t, &s, "+user.slice/user-1000.slice/user@1000.service/app.slice/app-b.scope#0");
	tracker_free(t);
}

/* A directory made and filled before the tracker's watch on it existed is
 * found by the walk that follows the watch: made in one go, between two
 * dispatches, every level is seen. */
static void test_made_before_watched(void **state)
{
	const char *p[] = {"a/*/c/*"};
	struct seen s = {0};

	(void)state;
	struct tracker *t = start(p, 1, &s);
	mk("a");
	mk("a/1");
	mk("a/1/c");
	mk("a/1/c/x");
	mk("a/2");
	mk("a/2/c");
	mk("a/2/c/y");
	expect(t, &s, "+a/1/c/x#0 +a/2/c/y#0");
	tracker_free(t);
}

/* A cgroup that is removed before the tracker reads its parent's events is
 * never reported: no half state. */
static void test_gone_before_read(void **state)
{
	const char *p[] = {"s/*"};
	struct seen s = {0};

	(void)state;
	mk("s");
	struct tracker *t = start(p, 1, &s);
	mk("s/quick");
	rm("s/quick");
	expect(t, &s, "");
	/* And an intermediate level removed before it was read: nothing
	 * stays watched. */
	const char *q[] = {"x/*/z"};
	struct seen s2 = {0};
	struct tracker *t2 = start(q, 1, &s2);
	mk("x");
	mk("x/y");
	rm("x/y");
	expect(t2, &s2, "");
	assert_int_equal(tracker_watches(t2), 2);
	tracker_free(t2);
	tracker_free(t);
}

/* A directory matched by one pattern and walked through by another is
 * both; the first pattern in the list that matches is the one reported. */
static void test_overlap(void **state)
{
	const char *p[] = {"k/*", "k/best/*", "k/b*"};
	struct seen s = {0};

	(void)state;
	struct tracker *t = start(p, 3, &s);
	mk("k");
	mk("k/best");
	mk("k/best/pod1");
	expect(t, &s, "+k/best#0 +k/best/pod1#1");
	rm("k/best/pod1");
	rm("k/best");
	expect(t, &s, "-k/best#0 -k/best/pod1#1");
	tracker_free(t);
}

/* Renames are a removal and an appearance; a name that leaves the pattern
 * is dropped. */
static void test_rename(void **state)
{
	const char *p[] = {"s/a-*"};
	struct seen s = {0};
	char from[512], to[512];

	(void)state;
	mk("s");
	mk("s/a-1");
	struct tracker *t = start(p, 1, &s);
	expect(t, &s, "+s/a-1#0");
	snprintf(from, sizeof(from), "%s/s/a-1", root);
	snprintf(to, sizeof(to), "%s/s/a-2", root);
	assert_int_equal(rename(from, to), 0);
	expect(t, &s, "+s/a-2#0 -s/a-1#0");
	snprintf(from, sizeof(from), "%s/s/b", root);
	assert_int_equal(rename(to, from), 0);
	expect(t, &s, "-s/a-2#0");
	tracker_free(t);
}

/* Literal names with characters a log line must not carry are matched as
 * they are: the tracker reports the bytes; escaping is the caller's. */
static void test_odd_names(void **state)
{
	const char *p[] = {"s/*"};
	struct seen s = {0};

	(void)state;
	mk("s");
	struct tracker *t = start(p, 1, &s);
	mk("s/tab\there");
	mk("s/nl\nthere");
	expect(t, &s, "+s/nl\nthere#0 +s/tab\there#0");
	tracker_free(t);
}

/* Many cgroups: every one reported once, and once gone. */
static void test_many(void **state)
{
	const char *p[] = {"m/*"};
	struct seen s = {0};
	char rel[64];
	unsigned n = 0;

	(void)state;
	mk("m");
	struct tracker *t = start(p, 1, &s);
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(rel, sizeof(rel), "m/c%u", i);
		mk(rel);
	}
	/* More than MAX_SEEN: count instead of recording. */
	while (tracker_matches(t, 0) < 2000) {
		int r = tracker_dispatch(t);
		assert_true(r > 0);
		n += (unsigned)r;
		s.n = s.more = 0;
	}
	assert_int_equal(n, 2000);
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(rel, sizeof(rel), "m/c%u", i);
		rm(rel);
	}
	while (tracker_matches(t, 0) > 0) {
		assert_true(tracker_dispatch(t) > 0);
		s.n = s.more = 0;
	}
	tracker_free(t);
}

/* A root that is not there is an error, not a silent empty set. */
static void test_bad_root(void **state)
{
	const char *p[] = {"s/*"};
	struct tracker *t;
	struct seen s = {0};

	(void)state;
	assert_int_equal(tracker_new("/nonexistent/tracker-root", p, 1, record, &s, &t), 0);
	assert_int_equal(tracker_start(t), -ENOENT);
	tracker_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_initial_walk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_appear_and_go, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_levels, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_made_before_watched, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gone_before_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overlap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_odd_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_root, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
