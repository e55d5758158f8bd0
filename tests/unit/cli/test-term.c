/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-term.c - the command line's columns: the terminal's width from
 * $COLUMNS (or 80 for a file), the last column taking the rest, and a
 * reason cut after a whole word; what came from a process escaped first,
 * each escape counted as the columns it takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "term.h"

static void test_width(void **state)
{
	(void)state;
	/* Without a number in COLUMNS: the terminal's width, or 80 for a file. */
	size_t plain = isatty(STDOUT_FILENO) ? 0 : 80;
	static const struct {
		const char *columns;
		size_t want; /* 0: whatever plain is */
	} cases[] = {
	    {"140", 140}, {"60", 60},  {"4096", 4096}, {"5", TERM_WIDTH_MIN},
	    {"0", 0},	  {"4097", 0}, {"12x", 0},     {"-80", 0},
	    {"", 0},	  {" 90", 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("COLUMNS", cases[i].columns, 1);
		size_t got = term_width();
		if (cases[i].want)
			assert_int_equal(got, cases[i].want);
		else if (plain)
			assert_int_equal(got, plain);
	}
	unsetenv("COLUMNS");
	if (plain)
		assert_int_equal(term_width(), plain);
}

static void test_rest(void **state)
{
	(void)state;
	assert_int_equal(term_rest(80, 62, 12), 18);
	assert_int_equal(term_rest(140, 62, 12), 78);
	assert_int_equal(term_rest(60, 62, 12), 12); /* never fewer than min */
	assert_int_equal(term_rest(70, 62, 12), 12);
	assert_int_equal(term_rest(75, 62, 12), 13);
}

static void test_words(void **state)
{
	(void)state;
	const char *reason = "process 123 started last, 12 s before the OOM; killing process 123";
	char buf[512];

	/* Whole when it fits, or with no limit. */
	assert_string_equal(term_words(reason, 200, buf, sizeof(buf)), reason);
	assert_string_equal(term_words(reason, 0, buf, sizeof(buf)), reason);
	assert_string_equal(term_words(reason, strlen(reason), buf, sizeof(buf)), reason);
	/* Cut after the last whole word that fits with "...", and before the
	 * punctuation that ends it. */
	assert_string_equal(term_words(reason, 30, buf, sizeof(buf)), "process 123 started last...");
	assert_string_equal(term_words(reason, 20, buf, sizeof(buf)), "process 123...");
	assert_string_equal(term_words(reason, 48, buf, sizeof(buf)),
			    "process 123 started last, 12 s before the OOM...");
	for (size_t w = 8; w < strlen(reason); w++) {
		term_words(reason, w, buf, sizeof(buf));
		size_t n = strlen(buf);
		assert_true(n <= w);
		assert_string_equal(buf + n - 3, "...");
	}
	/* A word longer than half the column is cut where it is. */
	assert_string_equal(
	    term_words("/usr/lib/python3.12/site-packages/worker/main.py", 20, buf, sizeof(buf)),
	    "/usr/lib/python3...");
	/* Hostile bytes are escaped first, each escape as wide as it is
	 * written, and never cut in two. */
	assert_string_equal(term_words("a\x1b[31mred\n \xff tail of it", 100, buf, sizeof(buf)),
			    "a\\x1b[31mred\\x0a \\xff tail of it");
	assert_string_equal(term_words("a\x1b[31mred\n \xff tail of it", 14, buf, sizeof(buf)),
			    "a\\x1b[31mre...");
	assert_string_equal(term_words("word \x1b\x1b\x1b\x1b\x1b", 12, buf, sizeof(buf)), "word...");
}

static void test_text(void **state)
{
	(void)state;
	char cmd[300], want[300];

	/* A command line as wide as a wide terminal: nothing is lost. */
	for (size_t i = 0; i < sizeof(cmd) - 1; i++)
		cmd[i] = (char)('a' + i % 26);
	cmd[sizeof(cmd) - 1] = '\0';
	assert_string_equal(WIDE(cmd, 300), cmd);
	memcpy(want, cmd, 78);
	want[78] = '\0';
	assert_string_equal(WIDE(cmd, 78), want);
	/* An escape is not cut in two: "\x1b" needs 4 columns. */
	assert_string_equal(WIDE("ab\x1b", 5), "ab");
	assert_string_equal(WIDE("ab\x1b", 6), "ab\\x1b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_width),
	    cmocka_unit_test(test_rest),
	    cmocka_unit_test(test_words),
	    cmocka_unit_test(test_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
