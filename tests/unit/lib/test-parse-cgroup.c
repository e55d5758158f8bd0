/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-parse-cgroup.c - tables of good and hostile input for the parsers of
 * cgroupfs files: single values, flat keyed files (memory.stat,
 * memory.oom_control, memory.events), PSI lines and cgroup.procs.
 */
#include "unit.h"

#include <errno.h>

#define SENTINEL_U64 0x5a5a5a5a5a5a5a5aull

/* ---------------------------------------------------------------- u64 */

struct u64_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	uint64_t value;
};

static const struct u64_row u64_rows[] = {
    {"plain", BUF("0"), 0, 0},
    {"newline", BUF("268435456\n"), 0, 268435456},
    {"trailing blanks", BUF("42 \t\n"), 0, 42},
    {"max", BUF("max\n"), 0, OOMKIT_UNLIMITED},
    {"max no newline", BUF("max"), 0, OOMKIT_UNLIMITED},
    {"v1 unlimited", BUF("9223372036854771712\n"), 0, 9223372036854771712ull},
    {"uint64 max", BUF("18446744073709551615"), 0, UINT64_MAX},
    {"leading zeros", BUF("007"), 0, 7},
    {"overflow by one", BUF("18446744073709551616\n"), -ERANGE, 0},
    {"overflow long", BUF("99999999999999999999999999999"), -ERANGE, 0},
    {"overflow then junk", BUF("99999999999999999999999x"), -EINVAL, 0},
    {"empty", BUF(""), -EINVAL, 0},
    {"only newline", BUF("\n"), -EINVAL, 0},
    {"negative", BUF("-1"), -EINVAL, 0},
    {"plus", BUF("+1"), -EINVAL, 0},
    {"leading blank", BUF(" 1"), -EINVAL, 0},
    {"two numbers", BUF("1 2"), -EINVAL, 0},
    {"two lines", BUF("1\n2\n"), -EINVAL, 0},
    {"hex", BUF("0x10"), -EINVAL, 0},
    {"suffix", BUF("10M"), -EINVAL, 0},
    {"maxx", BUF("maxx"), -EINVAL, 0},
    {"MAX", BUF("MAX"), -EINVAL, 0},
    {"embedded NUL", BUF("12\0003"), -EINVAL, 0},
    {"NUL after", BUF("12\0"), -EINVAL, 0},
};

static void test_parse_u64(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(u64_rows); i++) {
		const struct u64_row *t = &u64_rows[i];
		uint64_t v = SENTINEL_U64;
		int r = oomkit__parse_u64(t->buf, t->len, &v);
		EXPECT_INT(t->name, r, t->ret);
		EXPECT_U64(t->name, v, t->ret == 0 ? t->value : SENTINEL_U64);
	}
	/* A NULL buffer of length 0 is an empty buffer. */
	assert_int_equal(oomkit__parse_u64(NULL, 0, &(uint64_t){0}), -EINVAL);
}

/* ------------------------------------------------------------- keyed */

static const char memory_stat[] = "cache 4096\n"
				  "rss 1052672\n"
				  "rss_huge 2097152\n"
				  "shmem 0\n"
				  "mapped_file 0\n"
				  "hierarchical_memory_limit 268435456\n"
				  "total_cache 8192\n"
				  "total_rss 3145728\n"
				  "total_rss_huge 0\n"
				  "total_unevictable 0"; /* no trailing newline */

struct keyed_row {
	const char *name;
	const char *buf;
	size_t len;
	const char *key;
	int ret;
	uint64_t value;
};

static const struct keyed_row keyed_rows[] = {
    {"first line", BUF(memory_stat), "cache", 0, 4096},
    {"rss not rss_huge or total_rss", BUF(memory_stat), "rss", 0, 1052672},
    {"rss_huge", BUF(memory_stat), "rss_huge", 0, 2097152},
    {"total_rss", BUF(memory_stat), "total_rss", 0, 3145728},
    {"total_rss_huge", BUF(memory_stat), "total_rss_huge", 0, 0},
    {"last line without newline", BUF(memory_stat), "total_unevictable", 0, 0},
    {"prefix of a key only", BUF(memory_stat), "total_rs", -ENOENT, 0},
    {"suffix of a key only", BUF(memory_stat), "rss_hug", -ENOENT, 0},
    {"absent", BUF(memory_stat), "swap", -ENOENT, 0},
    {"longer key listed first", BUF("rss_huge 1\nrss 2\n"), "rss", 0, 2},
    {"key only later in a line", BUF("x rss\nrss 5\n"), "rss", 0, 5},
    {"first of duplicates", BUF("a 1\na 2\n"), "a", 0, 1},
    {"tab separator", BUF("a\t7\n"), "a", 0, 7},
    {"several blanks", BUF("a   7  \n"), "a", 0, 7},
    {"empty buffer", BUF(""), "a", -ENOENT, 0},
    {"key without value", BUF("a\nb 1\n"), "a", -EINVAL, 0},
    {"key and blank only", BUF("a \n"), "a", -EINVAL, 0},
    {"bad value", BUF("a 1x\n"), "a", -EINVAL, 0},
    {"negative value", BUF("a -1\n"), "a", -EINVAL, 0},
    {"overflow", BUF("a 18446744073709551616\n"), "a", -ERANGE, 0},
    {"NUL in another line", BUF("b \0\na 3\n"), "a", 0, 3},
    {"NUL in value", BUF("a 3\0\n"), "a", -EINVAL, 0},
    {"NUL in key", BUF("a\0 3\n"), "a", -ENOENT, 0},
    {"empty key", BUF("a 1\n"), "", -EINVAL, 0},
    {"key with blank", BUF("a b 1\n"), "a b", -EINVAL, 0},
    {"leading blank is no key", BUF(" a 1\n"), "a", -ENOENT, 0},
};

static void test_parse_keyed(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(keyed_rows); i++) {
		const struct keyed_row *t = &keyed_rows[i];
		uint64_t v = SENTINEL_U64;
		int r = oomkit__parse_keyed_u64(t->buf, t->len, t->key, &v);
		EXPECT_INT(t->name, r, t->ret);
		EXPECT_U64(t->name, v, t->ret == 0 ? t->value : SENTINEL_U64);
	}
	assert_int_equal(oomkit__parse_keyed_u64("a 1", 3, NULL, &(uint64_t){0}), -EINVAL);
}

/* ------------------------------------------------------- oom_control */

struct oom_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	bool disable, under;
	uint64_t kills;
};

static const struct oom_row oom_rows[] = {
    {"idle", BUF("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"), 0, false, false, 0},
    {"held", BUF("oom_kill_disable 1\nunder_oom 1\noom_kill 3\n"), 0, true, true, 3},
    {"old kernel without oom_kill", BUF("oom_kill_disable 1\nunder_oom 0\n"), 0, true, false, 0},
    {"no trailing newline", BUF("oom_kill_disable 0\nunder_oom 1\noom_kill 12"), 0, false, true, 12},
    {"other order", BUF("oom_kill 2\nunder_oom 1\noom_kill_disable 0\n"), 0, false, true, 2},
    {"blank line", BUF("oom_kill_disable 0\n\nunder_oom 0\n"), 0, false, false, 0},
    {"unknown key", BUF("oom_kill_disable 0\nunder_oom 0\nfuture 9\n"), 0, false, false, 0},
    {"empty", BUF(""), -EINVAL, 0, 0, 0},
    {"missing under_oom", BUF("oom_kill_disable 0\noom_kill 1\n"), -EINVAL, 0, 0, 0},
    {"missing disable", BUF("under_oom 0\noom_kill 1\n"), -EINVAL, 0, 0, 0},
    {"prefixes only", BUF("oom_kill 1\nunder_oom_x 0\noom_kill_disable_y 0\n"), -EINVAL, 0, 0, 0},
    {"bool out of range", BUF("oom_kill_disable 2\nunder_oom 0\n"), -EINVAL, 0, 0, 0},
    {"bool huge", BUF("oom_kill_disable 0\nunder_oom 18446744073709551617\n"), -EINVAL, 0, 0, 0},
    {"kills overflow", BUF("oom_kill_disable 0\nunder_oom 0\noom_kill 99999999999999999999\n"), -EINVAL, 0, 0,
     0},
    {"malformed line", BUF("oom_kill_disable 0\nunder_oom 0\ngarbage\n"), -EINVAL, 0, 0, 0},
    {"value with junk", BUF("oom_kill_disable 0x\nunder_oom 0\n"), -EINVAL, 0, 0, 0},
    {"embedded NUL", BUF("oom_kill_disable 0\0\nunder_oom 0\n"), -EINVAL, 0, 0, 0},
    {"cut mid-key", BUF("oom_kill_disable 0\nunder_o"), -EINVAL, 0, 0, 0},
};

static void test_parse_oom_control(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(oom_rows); i++) {
		const struct oom_row *t = &oom_rows[i];
		struct oomkit__oom_control c = {true, true, SENTINEL_U64};
		int r = oomkit__parse_oom_control(t->buf, t->len, &c);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			/* Written only on success. */
			EXPECT_U64(t->name, c.oom_kill, SENTINEL_U64);
			continue;
		}
		EXPECT_INT(t->name, c.oom_kill_disable, t->disable);
		EXPECT_INT(t->name, c.under_oom, t->under);
		EXPECT_U64(t->name, c.oom_kill, t->kills);
	}
}

/* ----------------------------------------------------- memory.events */

struct events_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	struct oomkit__memory_events ev;
};

static const struct events_row events_rows[] = {
    {"all keys", BUF("low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 6\n"), 0, {1, 2, 3, 4, 5, 6}},
    {"oom_kill before oom", BUF("oom_kill 5\noom 4\n"), 0, {0, 0, 0, 4, 5, 0}},
    {"older kernel", BUF("low 0\nhigh 17\nmax 9\noom 1\noom_kill 1\n"), 0, {0, 17, 9, 1, 1, 0}},
    {"unknown key", BUF("high 3\nsock_throttled 8\n"), 0, {0, 3, 0, 0, 0, 0}},
    {"no trailing newline", BUF("max 3\noom_group_kill 2"), 0, {0, 0, 3, 0, 0, 2}},
    {"empty", BUF(""), 0, {0, 0, 0, 0, 0, 0}},
    {"first of duplicates", BUF("oom 1\noom 2\n"), 0, {0, 0, 0, 1, 0, 0}},
    {"malformed line", BUF("high 3\nbroken\n"), -EINVAL, {0}},
    {"malformed value", BUF("high three\n"), -EINVAL, {0}},
    {"malformed unknown key", BUF("future x\n"), -EINVAL, {0}},
    {"overflow", BUF("max 18446744073709551616\n"), -EINVAL, {0}},
    {"max is no counter", BUF("max max\n"), -EINVAL, {0}},
    {"embedded NUL", BUF("oom 1\0\n"), -EINVAL, {0}},
};

static void test_parse_memory_events(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(events_rows); i++) {
		const struct events_row *t = &events_rows[i];
		struct oomkit__memory_events ev;
		memset(&ev, 0x5a, sizeof(ev));
		int r = oomkit__parse_memory_events(t->buf, t->len, &ev);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_U64(t->name, ev.oom, SENTINEL_U64);
			continue;
		}
		EXPECT_U64(t->name, ev.low, t->ev.low);
		EXPECT_U64(t->name, ev.high, t->ev.high);
		EXPECT_U64(t->name, ev.max, t->ev.max);
		EXPECT_U64(t->name, ev.oom, t->ev.oom);
		EXPECT_U64(t->name, ev.oom_kill, t->ev.oom_kill);
		EXPECT_U64(t->name, ev.oom_group_kill, t->ev.oom_group_kill);
	}
}

/* --------------------------------------------------------------- PSI */

static const char psi_file[] = "some avg10=1.23 avg60=0.50 avg300=0.07 total=123456\n"
			       "full avg10=100.00 avg60=0.00 avg300=0.00 total=42\n";

struct psi_row {
	const char *name;
	const char *buf;
	size_t len;
	const char *kind;
	int ret;
	struct oomkit__psi_line psi;
};

static const struct psi_row psi_rows[] = {
    {"some", BUF(psi_file), "some", 0, {123, 50, 7, 123456}},
    {"full", BUF(psi_file), "full", 0, {10000, 0, 0, 42}},
    {"cpu file without full", BUF("some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n"), "full", -ENOENT, {0}},
    {"no trailing newline", BUF("some avg10=0.00 avg60=0.00 avg300=0.00 total=9"), "some", 0, {0, 0, 0, 9}},
    {"one decimal", BUF("some avg10=2.5 total=1\n"), "some", 0, {250, 0, 0, 1}},
    {"no decimals", BUF("some avg10=3 total=1\n"), "some", 0, {300, 0, 0, 1}},
    {"unknown field", BUF("some avg10=0.01 avg1000=7 total=1\n"), "some", 0, {1, 0, 0, 1}},
    {"kind prefix only", BUF("somewhat avg10=1.00 total=1\n"), "some", -ENOENT, {0}},
    {"empty", BUF(""), "some", -ENOENT, {0}},
    {"missing total", BUF("some avg10=0.00 avg60=0.00 avg300=0.00\n"), "some", -EINVAL, {0}},
    {"missing avg10", BUF("some avg60=0.00 total=5\n"), "some", -EINVAL, {0}},
    {"three decimals", BUF("some avg10=0.001 total=5\n"), "some", -EINVAL, {0}},
    {"dot without decimals", BUF("some avg10=1. total=5\n"), "some", -EINVAL, {0}},
    {"negative", BUF("some avg10=-1.00 total=5\n"), "some", -EINVAL, {0}},
    {"total overflow", BUF("some avg10=0.00 total=18446744073709551616\n"), "some", -EINVAL, {0}},
    {"avg overflow", BUF("some avg10=184467440737095516.00 total=1\n"), "some", -EINVAL, {0}},
    {"no equals", BUF("some avg10 total=5\n"), "some", -EINVAL, {0}},
    {"empty value", BUF("some avg10= total=5\n"), "some", -EINVAL, {0}},
    {"embedded NUL", BUF("some avg10=0.00 total=5\0\n"), "some", -EINVAL, {0}},
};

static void test_parse_psi(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(psi_rows); i++) {
		const struct psi_row *t = &psi_rows[i];
		struct oomkit__psi_line psi;
		memset(&psi, 0x5a, sizeof(psi));
		int r = oomkit__parse_psi_line(t->buf, t->len, t->kind, &psi);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_U64(t->name, psi.total_us, SENTINEL_U64);
			continue;
		}
		EXPECT_U64(t->name, psi.avg10_x100, t->psi.avg10_x100);
		EXPECT_U64(t->name, psi.avg60_x100, t->psi.avg60_x100);
		EXPECT_U64(t->name, psi.avg300_x100, t->psi.avg300_x100);
		EXPECT_U64(t->name, psi.total_us, t->psi.total_us);
	}
	assert_int_equal(oomkit__parse_psi_line(BUF(psi_file), "", &(struct oomkit__psi_line){0}), -EINVAL);
	assert_int_equal(oomkit__parse_psi_line(BUF(psi_file), NULL, &(struct oomkit__psi_line){0}), -EINVAL);
}

/* -------------------------------------------------------------- pids */

struct pids_row {
	const char *name;
	const char *buf;
	size_t len;
	size_t n;
	int ret;
	pid_t pids[4];
};

static const struct pids_row pids_rows[] = {
    {"three", BUF("1\n22\n333\n"), 4, 3, {1, 22, 333}},
    {"no trailing newline", BUF("7\n8"), 4, 2, {7, 8}},
    {"exactly n", BUF("1\n2\n3\n4\n"), 4, 4, {1, 2, 3, 4}},
    {"empty", BUF(""), 4, 0, {0}},
    {"empty with n 0", BUF(""), 0, 0, {0}},
    {"blank lines", BUF("\n5\n\n"), 4, 1, {5}},
    {"pid_max", BUF("4194304\n"), 4, 1, {4194304}},
    {"INT_MAX", BUF("2147483647\n"), 4, 1, {2147483647}},
    {"one too many", BUF("1\n2\n3\n4\n5\n"), 4, -ENOBUFS, {0}},
    {"n 0", BUF("1\n"), 0, -ENOBUFS, {0}},
    {"zero", BUF("0\n"), 4, -EINVAL, {0}},
    {"beyond pid_t", BUF("2147483648\n"), 4, -EINVAL, {0}},
    {"overflow", BUF("99999999999999999999\n"), 4, -EINVAL, {0}},
    {"negative", BUF("-1\n"), 4, -EINVAL, {0}},
    {"trailing blank", BUF("12 \n"), 4, -EINVAL, {0}},
    {"leading blank", BUF(" 12\n"), 4, -EINVAL, {0}},
    {"two on a line", BUF("1 2\n"), 4, -EINVAL, {0}},
    {"junk", BUF("12a\n"), 4, -EINVAL, {0}},
    {"embedded NUL", BUF("1\n\0\n2\n"), 4, -EINVAL, {0}},
};

static void test_parse_pids(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(pids_rows); i++) {
		const struct pids_row *t = &pids_rows[i];
		pid_t pids[4] = {-1, -1, -1, -1};
		int r = oomkit__parse_pids(t->buf, t->len, pids, t->n);
		EXPECT_INT(t->name, r, t->ret);
		for (int k = 0; k < r; k++)
			EXPECT_INT(t->name, pids[k], t->pids[k]);
		/* Never beyond n. */
		for (size_t k = t->n; k < 4; k++)
			EXPECT_INT(t->name, pids[k], -1);
	}
	assert_int_equal(oomkit__parse_pids(NULL, 0, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_u64),	      cmocka_unit_test(test_parse_keyed),
	    cmocka_unit_test(test_parse_oom_control), cmocka_unit_test(test_parse_memory_events),
	    cmocka_unit_test(test_parse_psi),	      cmocka_unit_test(test_parse_pids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
