/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-parse-proc.c - tables of good and hostile input for the /proc/PID
 * parsers: stat (comm may hold spaces and parentheses), status and cmdline.
 */
#include "unit.h"

#include <errno.h>

/* The fields after comm of a real /proc/PID/stat, start time 188927 (field 22). */
#define STAT_TAIL                                                                                            \
	" R 12659 12659 5182 0 -1 4194304 96 0 0 0 0 0 0 0 20 0 1 0 188927 3133440 356 "                     \
	"18446744073709551615 94892601245696 94892601265577 140726698743328 0 0 0 0 0 0 0 0 0 17 0 0 0 "     \
	"0 0 0 94892601281584 94892601283200 94892761042944 140726698744459 140726698744479 "                \
	"140726698744479 140726698745835 0\n"

/* 19 fields after comm: state .. starttime, as the kernel printed before more were added. */
#define STAT_SHORT " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"

struct stat_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	pid_t pid;
	const char *comm;
	char state;
	pid_t ppid;
	uint64_t start_time;
};

static const struct stat_row stat_rows[] = {
    {"real", BUF("12661 (cat)" STAT_TAIL), 0, 12661, "cat", 'R', 12659, 188927},
    {"kthreadd",
     BUF("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 14 0 0 "
	 "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"),
     0, 2, "kthreadd", 'S', 0, 14},
    {"comm a) Z (", BUF("77 (a) Z ()" STAT_TAIL), 0, 77, "a) Z (", 'R', 12659, 188927},
    {"comm with spaces", BUF("8 (Web Content)" STAT_TAIL), 0, 8, "Web Content", 'R', 12659, 188927},
    {"comm only parens", BUF("8 ())))" STAT_TAIL), 0, 8, ")))", 'R', 12659, 188927},
    {"comm ( )", BUF("8 (( ))" STAT_TAIL), 0, 8, "( )", 'R', 12659, 188927},
    {"empty comm", BUF("8 ()" STAT_TAIL), 0, 8, "", 'R', 12659, 188927},
    {"comm with newline", BUF("8 (a\nb)" STAT_TAIL), 0, 8, "a\nb", 'R', 12659, 188927},
    {"comm truncated to 15", BUF("8 (kworker/u8:2-events_unbound)" STAT_TAIL), 0, 8, "kworker/u8:2-ev", 'R',
     12659, 188927},
    {"comm with NUL", BUF("8 (a\0b)" STAT_TAIL), 0, 8, "a", 'R', 12659, 188927},
    {"exactly 22 fields, no newline", BUF("9 (x)" STAT_SHORT), 0, 9, "x", 'S', 1, 999},
    {"start time 2^64-1", BUF("9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551615"), 0,
     9, "x", 'S', 1, UINT64_MAX},
    {"empty", BUF(""), -EINVAL, 0, NULL, 0, 0, 0},
    {"pid only", BUF("9"), -EINVAL, 0, NULL, 0, 0, 0},
    {"no closing paren", BUF("9 (x S 1 2 3"), -EINVAL, 0, NULL, 0, 0, 0},
    {"no opening paren", BUF("9 x) S 1 2 3"), -EINVAL, 0, NULL, 0, 0, 0},
    {"no pid", BUF("(x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"pid 0", BUF("0 (x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"negative pid", BUF("-5 (x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"pid beyond pid_t", BUF("2147483648 (x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"pid overflow", BUF("99999999999999999999 (x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"pid with junk", BUF("9a (x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"no space before paren", BUF("9(x)" STAT_TAIL), -EINVAL, 0, NULL, 0, 0, 0},
    {"cut before start time", BUF("9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"), -EINVAL, 0, NULL,
     0, 0, 0},
    {"cut right after comm", BUF("9 (x)"), -EINVAL, 0, NULL, 0, 0, 0},
    {"state two chars", BUF("9 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, NULL, 0,
     0, 0},
    {"state digit", BUF("9 (x) 5 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, NULL, 0, 0,
     0},
    {"ppid negative", BUF("9 (x) S -1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, NULL, 0,
     0, 0},
    {"start time overflow", BUF("9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551616"),
     -EINVAL, 0, NULL, 0, 0, 0},
    {"start time junk", BUF("9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 99x"), -EINVAL, 0, NULL, 0,
     0, 0},
    {"NUL in fields", BUF("9 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 9\0009"), -EINVAL, 0, NULL, 0,
     0, 0},
};

static void test_parse_proc_stat(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(stat_rows); i++) {
		const struct stat_row *t = &stat_rows[i];
		struct oomkit__proc_stat st;
		memset(&st, 0x5a, sizeof(st));
		int r = oomkit__parse_proc_stat(t->buf, t->len, &st);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_INT(t->name, st.pid, 0x5a5a5a5a);
			continue;
		}
		EXPECT_INT(t->name, st.pid, t->pid);
		EXPECT_STR(t->name, st.comm, t->comm);
		EXPECT_INT(t->name, st.state, t->state);
		EXPECT_INT(t->name, st.ppid, t->ppid);
		EXPECT_U64(t->name, st.start_time, t->start_time);
	}
}

/* Field 39, the CPU a process last ran on: a hint for the kill path, so a
 * line without it, or with something odd there, parses with -1. */
struct cpu_row {
	const char *name;
	const char *buf;
	size_t len;
	int processor;
};

#define STAT_TO_38                                                                                           \
	" S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 "  \
	"38"

static const struct cpu_row cpu_rows[] = {
    {"real", BUF("12661 (cat)" STAT_TAIL), 0},
    {"CPU 3, more fields after", BUF("9 (x)" STAT_TO_38 " 3 40 41 42\n"), 3},
    {"CPU 1023, the last field", BUF("9 (x)" STAT_TO_38 " 1023"), 1023},
    {"exactly 22 fields", BUF("9 (x)" STAT_SHORT), -1},
    {"cut at field 38", BUF("9 (x)" STAT_TO_38), -1},
    {"CPU junk", BUF("9 (x)" STAT_TO_38 " 3x 40"), -1},
    {"CPU negative", BUF("9 (x)" STAT_TO_38 " -1 40"), -1},
    {"CPU beyond int", BUF("9 (x)" STAT_TO_38 " 2147483648 40"), -1},
    {"CPU overflow", BUF("9 (x)" STAT_TO_38 " 99999999999999999999 40"), -1},
};

static void test_parse_proc_stat_processor(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(cpu_rows); i++) {
		const struct cpu_row *t = &cpu_rows[i];
		struct oomkit__proc_stat st;
		memset(&st, 0x5a, sizeof(st));
		EXPECT_INT(t->name, oomkit__parse_proc_stat(t->buf, t->len, &st), 0);
		EXPECT_INT(t->name, st.processor, t->processor);
	}
}

/* The session fields a terminal-safe kill needs (5, 6, 7), tables of their own. */
struct session_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	pid_t pgid, sid;
	int tty_nr;
};

static const struct session_row session_rows[] = {
    {"real", BUF("12661 (cat)" STAT_TAIL), 0, 12659, 5182, 0},
    {"a shell on pts/1", BUF("9 (bash) S 1 9 9 34817 -1 4194560 1 2 3 4 5 6 7 8 9 10 11 12 77"), 0, 9, 9,
     34817},
    {"tty negative", BUF("9 (x) S 1 2 3 -2147483648 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), 0, 2, 3,
     INT_MIN},
    {"tty beyond int", BUF("9 (x) S 1 2 3 2147483648 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0,
     0, 0},
    {"tty below int", BUF("9 (x) S 1 2 3 -2147483649 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0,
     0, 0},
    {"tty junk", BUF("9 (x) S 1 2 3 -x 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, 0, 0},
    {"tty sign only", BUF("9 (x) S 1 2 3 - 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, 0, 0},
    {"being reaped", BUF("9 (x) Z 0 -1 -1 0 -1 4227148 18 0 0 0 0 0 0 0 20 0 0 0 39011 0 0"), -ESRCH, 0, 0,
     0},
    {"session negative", BUF("9 (x) S 1 2 -3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL, 0, 0, 0},
    {"pgid beyond pid_t", BUF("9 (x) S 1 2147483648 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 999"), -EINVAL,
     0, 0, 0},
};

static void test_parse_proc_stat_session(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(session_rows); i++) {
		const struct session_row *t = &session_rows[i];
		struct oomkit__proc_stat st;
		memset(&st, 0x5a, sizeof(st));
		int r = oomkit__parse_proc_stat(t->buf, t->len, &st);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_INT(t->name, st.sid, 0x5a5a5a5a);
			continue;
		}
		EXPECT_INT(t->name, st.pgid, t->pgid);
		EXPECT_INT(t->name, st.sid, t->sid);
		EXPECT_INT(t->name, st.tty_nr, t->tty_nr);
	}
}

/* ------------------------------------------------------------- status */

#define STATUS_HEAD "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t12663\nPid:\t12663\nPPid:\t12659\n"

struct status_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	struct oomkit__proc_status st;
};

static const struct status_row status_rows[] = {
    {"real",
     BUF(STATUS_HEAD "Uid:\t1000\t1001\t1002\t1003\nGid:\t0\t0\t0\t0\nVmRSS:\t    1624 kB\n"
		     "RssAnon:\t     112 kB\nRssFile:\t    1512 kB\nRssShmem:\t       8 kB\n"
		     "VmSwap:\t       4 kB\nThreads:\t1\n"),
     0,
     {1000, 112, 1512, 8, 4, true}},
    {"kernel thread", BUF("Name:\tkthreadd\nUid:\t0\t0\t0\t0\nThreads:\t1\n"), 0, {0, 0, 0, 0, 0, false}},
    {"no trailing newline", BUF("Uid:\t5\t5\t5\t5\nRssAnon:\t1 kB"), 0, {5, 1, 0, 0, 0, true}},
    {"uid as last line", BUF("RssAnon:\t1 kB\nUid:\t6"), 0, {6, 1, 0, 0, 0, true}},
    {"hostile name", BUF("Name:\tUid:\\n0\nUid:\t7\t7\t7\t7\n"), 0, {7, 0, 0, 0, 0, false}},
    {"first of duplicates",
     BUF("Uid:\t1\nUid:\t2\nVmSwap:\t3 kB\nVmSwap:\tjunk\n"),
     0,
     {1, 0, 0, 0, 3, false}},
    {"unknown malformed lines", BUF("Uid:\t1\ngarbage\nSomething: else\n\n"), 0, {1, 0, 0, 0, 0, false}},
    {"key prefixes", BUF("Uid:\t1\nRssAnonX:\tjunk\nVmSwapped:\tjunk\n"), 0, {1, 0, 0, 0, 0, false}},
    {"large uid", BUF("Uid:\t4294967294\n"), 0, {4294967294u, 0, 0, 0, 0, false}},
    {"empty", BUF(""), -EINVAL, {0}},
    {"no uid", BUF("Name:\tx\nRssAnon:\t1 kB\n"), -EINVAL, {0}},
    {"uid -1", BUF("Uid:\t4294967295\n"), -EINVAL, {0}},
    {"uid beyond 32 bits", BUF("Uid:\t4294967296\n"), -EINVAL, {0}},
    {"uid junk", BUF("Uid:\tx\n"), -EINVAL, {0}},
    {"uid empty", BUF("Uid:\n"), -EINVAL, {0}},
    {"uid with letters", BUF("Uid:\t12ab\t0\n"), -EINVAL, {0}},
    {"rss without unit", BUF("Uid:\t0\nRssAnon:\t5\n"), -EINVAL, {0}},
    {"rss in MB", BUF("Uid:\t0\nRssAnon:\t5 MB\n"), -EINVAL, {0}},
    {"rss overflow", BUF("Uid:\t0\nRssAnon:\t18446744073709551616 kB\n"), -EINVAL, {0}},
    {"rss trailing junk", BUF("Uid:\t0\nRssFile:\t5 kB x\n"), -EINVAL, {0}},
    {"NUL in rss", BUF("Uid:\t0\nRssShmem:\t5\0 kB\n"), -EINVAL, {0}},
};

/* SigCgt, which tells whether a process would die of a shed signal. */
struct sig_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	uint64_t caught;
};

static const struct sig_row sig_rows[] = {
    {"real", BUF(STATUS_HEAD "Uid:\t0\t0\t0\t0\nSigBlk:\t0000000000000000\nSigCgt:\t0000000180004a02\n"), 0,
     0x180004a02ull},
    {"first of two", BUF("Uid:\t0\nSigCgt:\t0000000000000200\nSigCgt:\tjunk\n"), 0, 0x200},
    {"all, no newline", BUF("SigCgt:\tffffffffffffffff\nUid:\t3"), 0, UINT64_MAX},
    {"absent", BUF("Uid:\t3\n"), 0, 0},
    {"too long", BUF("Uid:\t0\nSigCgt:\t00000000000000000\n"), -EINVAL, 0},
    {"upper case", BUF("Uid:\t0\nSigCgt:\t000000000000000A\n"), -EINVAL, 0},
    {"empty", BUF("Uid:\t0\nSigCgt:\t\n"), -EINVAL, 0},
    {"junk after", BUF("Uid:\t0\nSigCgt:\t0000000000000001 x\n"), -EINVAL, 0},
};

static void test_parse_proc_status_signals(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(sig_rows); i++) {
		const struct sig_row *t = &sig_rows[i];
		uint64_t caught = 0x5a5a;
		int r = oomkit__parse_proc_sigcgt(t->buf, t->len, &caught);
		EXPECT_INT(t->name, r, t->ret);
		EXPECT_U64(t->name, caught, r == 0 ? t->caught : 0x5a5a);
	}
}

static void test_parse_proc_status(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(status_rows); i++) {
		const struct status_row *t = &status_rows[i];
		struct oomkit__proc_status st;
		memset(&st, 0x5a, sizeof(st));
		int r = oomkit__parse_proc_status(t->buf, t->len, &st);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_U64(t->name, st.rss_anon_kib, 0x5a5a5a5a5a5a5a5aull);
			continue;
		}
		EXPECT_U64(t->name, st.uid, t->st.uid);
		EXPECT_U64(t->name, st.rss_anon_kib, t->st.rss_anon_kib);
		EXPECT_U64(t->name, st.rss_file_kib, t->st.rss_file_kib);
		EXPECT_U64(t->name, st.rss_shmem_kib, t->st.rss_shmem_kib);
		EXPECT_U64(t->name, st.swap_kib, t->st.swap_kib);
		EXPECT_INT(t->name, st.has_rss, t->st.has_rss);
	}
}

/* ------------------------------------------------------------ cmdline */

struct cmdline_row {
	const char *name;
	const char *buf;
	size_t len;
	size_t out_len;
	const char *want;
};

static const struct cmdline_row cmdline_rows[] = {
    {"args", BUF("/usr/bin/python3\0-m\0http.server\0"), 256, "/usr/bin/python3 -m http.server"},
    {"no trailing NUL",
     BUF("sleep\0"
	 "100"),
     256, "sleep 100"},
    {"padded title", BUF("nginx: worker\0\0\0\0\0"), 256, "nginx: worker"},
    {"empty argument", BUF("a\0\0b\0"), 256, "a  b"},
    {"empty", BUF(""), 256, ""},
    {"only NULs", BUF("\0\0\0"), 256, ""},
    {"control bytes", BUF("a\nb\tc\033[2J\0"), 256, "a?b?c?[2J"},
    {"high bytes", BUF("caf\xc3\xa9\0"), 256, "caf??"},
    {"DEL", BUF("x\x7fy"), 256, "x?y"},
    {"truncated", BUF("abcdef\0ghi\0"), 5, "abcd"},
    {"truncated at the separator", BUF("abcd\0efgh\0"), 5, "abcd"},
    {"out_len 1", BUF("abc\0"), 1, ""},
    {"exact fit", BUF("abc\0"), 4, "abc"},
};

static void test_format_cmdline(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(cmdline_rows); i++) {
		const struct cmdline_row *t = &cmdline_rows[i];
		char out[300];
		memset(out, 'Z', sizeof(out));
		oomkit__format_cmdline(t->buf, t->len, out, t->out_len);
		EXPECT_STR(t->name, out, t->want);
		/* Nothing written past out_len. */
		EXPECT_INT(t->name, out[t->out_len], 'Z');
	}
	/* out_len 0 writes nothing at all. */
	char one = 'Z';
	oomkit__format_cmdline("abc", 3, &one, 0);
	assert_int_equal(one, 'Z');
	oomkit__format_cmdline(NULL, 0, &one, 1);
	assert_int_equal(one, '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_proc_stat),
	    cmocka_unit_test(test_parse_proc_status),
	    cmocka_unit_test(test_parse_proc_stat_session),
	    cmocka_unit_test(test_parse_proc_status_signals),
	    cmocka_unit_test(test_parse_proc_stat_processor),
	    cmocka_unit_test(test_format_cmdline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
