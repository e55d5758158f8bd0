/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sampler.c - the agent's memory history (agent/sampler.c) against a
 * fixture /proc tree that the test rewrites between ticks, with the ticks'
 * times given: growth over a window, a process that started between two
 * ticks, a pid taken by a new process, a process gone, samples past the
 * minute, the largest first; hostile stat lines (a comm of "a) Z (", one
 * cut short, fields missing) and statm that is not numbers; whose processes
 * it follows; and /proc/meminfo with keys missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampler.h"

static char root[] = "/tmp/oomkit-test-sampler.XXXXXX";
static uint64_t page;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* /proc/PID with a stat line as the kernel writes it (comm between
 * parentheses, the start time in field 22) and statm's resident pages. */
static void proc_raw(const char *pid, const char *stat, const char *statm)
{
	char dir[256], path[300];

	snprintf(dir, sizeof(dir), "%s/%s", root, pid);
	if (mkdir(dir, 0755) < 0)
		assert_int_equal(errno, EEXIST);
	snprintf(path, sizeof(path), "%s/stat", dir);
	write_file(path, stat);
	snprintf(path, sizeof(path), "%s/statm", dir);
	write_file(path, statm);
}

static void proc_at(int pid, const char *comm, unsigned long long start, unsigned long long pages)
{
	char name[32], stat[512], statm[64];

	snprintf(name, sizeof(name), "%d", pid);
	snprintf(stat, sizeof(stat),
		 "%d (%s) S 1 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %llu 1000 250 18446744073709551615\n",
		 pid, comm, start);
	snprintf(statm, sizeof(statm), "%llu %llu 10 1 0 5 0\n", pages + 100, pages);
	proc_raw(name, stat, statm);
}

static void proc_gone(int pid)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", root, pid);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	page = (uint64_t)sysconf(_SC_PAGESIZE);
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Each test starts from an empty /proc. */
static void empty_proc(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/* && mkdir -p '%s'", root, root);
	assert_int_equal(system(cmd), 0);
}

static void test_growth(void **state)
{
	struct sampler *s;
	uint64_t rss, span;
	int64_t grew;

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(100, "editor", 500, 1000);
	assert_int_equal(sampler_tick(s, 1000), 1);
	/* One sample: nothing to compare with. */
	assert_false(sampler_growth(s, 100, 10000, &rss, &grew, &span));
	proc_at(100, "editor", 500, 3000);
	assert_int_equal(sampler_tick(s, 6000), 1);
	assert_true(sampler_growth(s, 100, 10000, &rss, &grew, &span));
	assert_int_equal(rss, 3000 * page);
	assert_int_equal(grew, (int64_t)(2000 * page));
	assert_int_equal(span, 5000);
	/* It shrinks: negative growth. */
	proc_at(100, "editor", 500, 2500);
	assert_int_equal(sampler_tick(s, 8000), 1);
	assert_true(sampler_growth(s, 100, 10000, &rss, &grew, &span));
	assert_int_equal(grew, (int64_t)(1500 * page));
	assert_int_equal(span, 7000);
	/* A window of 3 s holds only the last two samples (6000 and 8000). */
	assert_true(sampler_growth(s, 100, 3000, &rss, &grew, &span));
	assert_int_equal(grew, -(int64_t)(500 * page));
	assert_int_equal(span, 2000);
	/* Not followed: no growth. */
	assert_false(sampler_growth(s, 999, 10000, &rss, &grew, &span));
	sampler_free(s);
}

/* A process that was not there at the tick before its first sample grew
 * all it holds since that tick. */
static void test_new_process(void **state)
{
	struct sampler *s;
	uint64_t rss, span;
	int64_t grew;

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(100, "editor", 500, 1000);
	assert_int_equal(sampler_tick(s, 1000), 1);
	proc_at(200, "hog", 700, 4000);
	assert_int_equal(sampler_tick(s, 2000), 2);
	assert_true(sampler_growth(s, 200, 10000, &rss, &grew, &span));
	assert_int_equal(rss, 4000 * page);
	assert_int_equal(grew, (int64_t)(4000 * page));
	assert_int_equal(span, 1000);
	/* Outside the window, the tick before does not count. */
	assert_false(sampler_growth(s, 200, 500, &rss, &grew, &span));
	sampler_free(s);
}

/* The pid taken by a new process (another start time): a new history. */
static void test_pid_reused(void **state)
{
	struct sampler *s;
	uint64_t rss, span;
	int64_t grew;
	struct sampler_top top[4];

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(100, "old", 500, 5000);
	sampler_tick(s, 1000);
	proc_at(100, "old", 500, 6000);
	sampler_tick(s, 2000);
	proc_at(100, "new", 900, 100);
	sampler_tick(s, 3000);
	assert_true(sampler_growth(s, 100, 10000, &rss, &grew, &span));
	/* Not -5900 pages: the new one grew its 100 since the tick before. */
	assert_int_equal(grew, (int64_t)(100 * page));
	assert_int_equal(span, 1000);
	assert_int_equal(sampler_top(s, top, 4), 1);
	assert_string_equal(top[0].comm, "new");
	sampler_free(s);
}

static void test_gone_and_old(void **state)
{
	struct sampler *s;
	uint64_t rss, span;
	int64_t grew;

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(100, "a", 1, 1000);
	proc_at(101, "b", 2, 1000);
	assert_int_equal(sampler_tick(s, 1000), 2);
	proc_gone(101);
	assert_int_equal(sampler_tick(s, 2000), 1);
	assert_false(sampler_growth(s, 101, 10000, &rss, &grew, &span));
	/* Samples older than the minute are not compared with, whatever the
	 * window asked for: 1000 and 2000 are, at 66000. */
	proc_at(100, "a", 1, 3000);
	assert_int_equal(sampler_tick(s, 30000), 1);
	proc_at(100, "a", 1, 9000);
	assert_int_equal(sampler_tick(s, 6000 + SAMPLER_KEEP_MS), 1);
	assert_true(sampler_growth(s, 100, 2 * SAMPLER_KEEP_MS, &rss, &grew, &span));
	assert_int_equal(span, 6000 + SAMPLER_KEEP_MS - 30000);
	assert_int_equal(grew, (int64_t)(6000 * page));
	sampler_free(s);
}

/* Largest first; ties by pid; no more than asked for. */
static void test_top(void **state)
{
	struct sampler *s;
	struct sampler_top top[8];

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(10, "small", 1, 10);
	proc_at(11, "big", 1, 900);
	proc_at(12, "tie-b", 1, 500);
	proc_at(9, "tie-a", 1, 500);
	sampler_tick(s, 1000);
	proc_at(11, "big", 1, 1000);
	sampler_tick(s, 3000);
	assert_int_equal(sampler_top(s, top, 3), 3);
	assert_int_equal(top[0].pid, 11);
	assert_int_equal(top[0].rss_bytes, 1000 * page);
	assert_int_equal(top[0].grew_bytes, (int64_t)(100 * page));
	assert_int_equal(top[0].span_ms, 2000);
	assert_int_equal(top[1].pid, 9);
	assert_int_equal(top[2].pid, 12);
	assert_string_equal(top[2].comm, "tie-b");
	assert_int_equal(sampler_top(s, top, 8), 4);
	assert_int_equal(top[3].pid, 10);
	sampler_free(s);
}

/* Names are anything a process sets (up to 15 bytes): parentheses, spaces,
 * markup, control bytes.  The comm is between the first "(" and the last
 * ")"; the start time is counted from there, and a cut or malformed file
 * is skipped, never misread. */
static void test_hostile(void **state)
{
	struct sampler *s;
	struct sampler_top top[8];
	uint64_t rss, span;
	int64_t grew;

	(void)state;
	empty_proc();
	s = sampler_new(root, getuid());
	proc_at(100, "a) Z (", 777, 1000);
	proc_at(101, "<b>x&y</b>\a\n", 5, 800);
	/* The 16 bytes a name may hold are cut to the 15 the kernel keeps. */
	proc_at(102, "0123456789abcdefghij", 5, 700);
	proc_raw("103", "103 (cut short", "10 5\n");
	proc_raw("104", "104 (few) S 1 2 3\n", "10 5\n");
	proc_raw("105", "105 (no statm) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n", "lots\n");
	proc_raw("106", "106 (no start) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 x 0\n", "10 5\n");
	proc_raw("self", "1 (self) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n", "10 5\n");
	proc_raw("107x", "107 (not a pid) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n", "10 5\n");
	assert_int_equal(sampler_tick(s, 1000), 3);
	assert_int_equal(sampler_top(s, top, 8), 3);
	assert_int_equal(top[0].pid, 100);
	assert_string_equal(top[0].comm, "a) Z (");
	assert_int_equal(top[1].pid, 101);
	assert_string_equal(top[1].comm, "<b>x&y</b>\a\n");
	assert_int_equal(top[2].pid, 102);
	assert_string_equal(top[2].comm, "0123456789abcde");
	/* Its start time was read after the last ")": the same process next time. */
	proc_at(100, "a) Z (", 777, 1500);
	sampler_tick(s, 2000);
	assert_true(sampler_growth(s, 100, 10000, &rss, &grew, &span));
	assert_int_equal(grew, (int64_t)(500 * page));
	assert_int_equal(span, 1000);
	sampler_free(s);
}

/* Only the uid's processes: the owner of /proc/PID says whose it is. */
static void test_uid(void **state)
{
	struct sampler *s;
	struct sampler_top top[4];
	char dir[300];

	(void)state;
	empty_proc();
	proc_at(100, "mine", 1, 1000);
	proc_at(101, "theirs", 1, 5000);
	s = sampler_new(root, getuid() + 4242);
	assert_int_equal(sampler_tick(s, 1000), 0);
	sampler_free(s);
	if (geteuid() != 0)
		return; /* chown needs root; the other uid above is the same check */
	snprintf(dir, sizeof(dir), "%s/101", root);
	assert_int_equal(chown(dir, getuid() + 4242, (gid_t)-1), 0);
	s = sampler_new(root, getuid());
	assert_int_equal(sampler_tick(s, 1000), 1);
	assert_int_equal(sampler_top(s, top, 4), 1);
	assert_string_equal(top[0].comm, "mine");
	sampler_free(s);
}

static void test_meminfo(void **state)
{
	char path[300];
	uint64_t mt = 1, ma = 1, st = 1, sf = 1;

	(void)state;
	empty_proc();
	snprintf(path, sizeof(path), "%s/meminfo", root);
	write_file(path, "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n"
			 "SwapTotal:       2000000 kB\nSwapFree:        1500000 kB\n");
	assert_true(sampler_meminfo(root, &mt, &ma, &st, &sf));
	assert_int_equal(mt, 16000000ull << 10);
	assert_int_equal(ma, 8000000ull << 10);
	assert_int_equal(st, 2000000ull << 10);
	assert_int_equal(sf, 1500000ull << 10);
	/* No swap is a value, not a missing key. */
	write_file(path, "MemTotal: 1000 kB\nMemAvailable: 10 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB");
	assert_true(sampler_meminfo(root, &mt, &ma, &st, &sf));
	assert_int_equal(st, 0);
	/* A key missing: false, and nothing written. */
	mt = ma = st = sf = 7;
	write_file(path, "MemTotal: 1000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n");
	assert_false(sampler_meminfo(root, &mt, &ma, &st, &sf));
	assert_int_equal(mt, 7);
	assert_int_equal(sf, 7);
	unlink(path);
	assert_false(sampler_meminfo(root, &mt, &ma, &st, &sf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_growth),     cmocka_unit_test(test_new_process),
	    cmocka_unit_test(test_pid_reused), cmocka_unit_test(test_gone_and_old),
	    cmocka_unit_test(test_top),	       cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_uid),	       cmocka_unit_test(test_meminfo),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
