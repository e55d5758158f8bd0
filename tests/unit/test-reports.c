/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-reports.c - the reports index's reader of a report's head
 * (daemon/reports.c, reports_scan_head()): the decision before the snapshot
 * (today's reports) and after it (older ones), escapes, a head cut short,
 * and text that is not a report.  What is not found stays as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reports.h"

static struct report_entry scan(const char *text, size_t len)
{
	struct report_entry e = {.victim_pid = -7, .time_ms = 42};

	snprintf(e.action, sizeof(e.action), "?");
	reports_scan_head(text, len, &e);
	return e;
}

static void test_today(void **state)
{
	(void)state;
	static const char head[] =
	    "{\"oomkitd_report\":1,\"id\":3,\"time\":1700000000.123,\"scope\":\"job\",\"job\":\"web\","
	    "\"decision\":{\"action\":\"kill\",\"policy\":\"kill-largest\",\"step\":0,\"victim_pid\":1234,"
	    "\"victim_job\":\"web\",\"new_limit_bytes\":null,\"reason\":\"a \\\"b\\\" \\\\ "
	    "c\\n\\u00e2\\u0082\","
	    "\"not_applied\":\"\"},\"jobs\":[{\"name\":\"web\"";
	struct report_entry e = scan(head, strlen(head));

	assert_int_equal(e.time_ms, 1700000000123ull);
	assert_string_equal(e.action, "kill");
	assert_int_equal(e.victim_pid, 1234);
	assert_string_equal(e.reason, "a \"b\" \\ c\n\xe2\x82");
}

static void test_older(void **state)
{
	(void)state;
	/* The decision after the snapshot, which nests objects and arrays and holds braces in strings. */
	static const char doc[] =
	    "{\"id\":1,\"time\":17.5,\"jobs\":[{\"name\":\"}]{\",\"n\":[1,[2,{\"x\":null}]]}],"
	    "\"candidates\":[],\"decision\":{\"action\":\"grow\",\"victim_pid\":0,"
	    "\"reason\":\"r\"},\"state\":{}}";
	struct report_entry e = scan(doc, strlen(doc));

	assert_int_equal(e.time_ms, 17500);
	assert_string_equal(e.action, "grow");
	assert_int_equal(e.victim_pid, 0);
	assert_string_equal(e.reason, "r");
}

static void test_cut_and_garbage(void **state)
{
	(void)state;
	static const char doc[] =
	    "{\"time\":5,\"jobs\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"decision\":{\"action\":\"kill\"}}";
	static const char *bad[] = {"",
				    "[]",
				    "not json",
				    "{\"time\":",
				    "{\"time\"",
				    "{\"decision\":[1]}",
				    "{\"decision\":{\"action\":7",
				    "{\"\\u12"};

	/* Cut inside the snapshot: the time is found, the decision is not. */
	for (size_t len = 12; len < strlen(doc) - 20; len++) {
		struct report_entry e = scan(doc, len);
		assert_int_equal(e.time_ms, 5000);
		assert_string_equal(e.action, "?");
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct report_entry e = scan(bad[i], strlen(bad[i]));
		assert_int_equal(e.victim_pid, -7);
		assert_true(strlen(e.action) < sizeof(e.action));
	}
	/* A reason longer than the index keeps is cut, terminated. */
	char big[2 * REPORTS_REASON_MAX + 64];
	int n = snprintf(big, sizeof(big), "{\"decision\":{\"reason\":\"");
	memset(big + n, 'x', 2 * REPORTS_REASON_MAX);
	strcpy(big + n + 2 * REPORTS_REASON_MAX, "\"}}");
	struct report_entry e = scan(big, strlen(big));
	assert_int_equal(strlen(e.reason), REPORTS_REASON_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_today),
	    cmocka_unit_test(test_older),
	    cmocka_unit_test(test_cut_and_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
