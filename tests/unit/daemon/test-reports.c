/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-reports.c - the reports index's reader of a report's head
 * (daemon/report/reports.c, reports_scan_head()): the decision before the snapshot
 * (today's reports) and after it (older ones), escapes, a head cut short,
 * and text that is not a report.  What is not found stays as it was.
 * And the uids a report concerns (its readers), from its head and its tail,
 * and the name of the instance an OOM was in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report/reports.h"

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

/* A reason longer than the index keeps is cut after its last whole word,
 * with "...": never inside a word a person then misreads, nor inside a
 * UTF-8 sequence; one that fits is kept as it is. */
static void test_reason_cut(void **state)
{
	(void)state;
	char out[REPORTS_REASON_MAX], in[4 * REPORTS_REASON_MAX];
	size_t n = 0;

	reports_copy_reason(out, sizeof(out), "process 7 is the largest; killing process 7");
	assert_string_equal(out, "process 7 is the largest; killing process 7");
	/* Words of 7 letters and a space: the cut falls inside one. */
	while (n + 8 < sizeof(in))
		n += (size_t)snprintf(in + n, sizeof(in) - n, "%s", "abcdefg ");
	reports_copy_reason(out, sizeof(out), in);
	size_t len = strlen(out);
	assert_true(len < sizeof(out));
	assert_string_equal(out + len - 3, "...");
	assert_memory_equal(out, in, len - 3);
	assert_int_equal(in[len - 3], ' ');
	assert_int_equal(out[len - 4], 'g');
	/* A cut before punctuation leaves it out: "word..." not "word;...". */
	memset(in, 0, sizeof(in));
	memset(in, 'x', REPORTS_REASON_MAX - 8);
	strcat(in, "; andmore words after it");
	reports_copy_reason(out, sizeof(out), in);
	assert_int_equal(strlen(out), REPORTS_REASON_MAX - 8 + 3);
	assert_string_equal(out + REPORTS_REASON_MAX - 8, "...");
	/* One long word of two-byte characters is cut where it is, at a whole one. */
	n = 0;
	while (n + 2 < sizeof(in))
		in[n++] = '\xc3', in[n++] = '\xa9';
	in[n] = '\0';
	reports_copy_reason(out, sizeof(out), in);
	len = strlen(out);
	assert_string_equal(out + len - 3, "...");
	assert_int_equal((len - 3) % 2, 0);
	assert_true(len - 3 >= REPORTS_REASON_MAX / 2);
}

/* An instance's OOM is listed with its cgroup's last name; a job's
 * (instance null) and a report before instances with none. */
static void test_instance(void **state)
{
	(void)state;
	static const char head[] = "{\"time\":1,\"scope\":\"job\",\"job\":\"batch\","
				   "\"instance\":\"system.slice/batch-17.service\",\"cgroup\":\"x\","
				   "\"decision\":{\"action\":\"kill\"}}";
	static const char job[] = "{\"time\":1,\"job\":\"web\",\"instance\":null,"
				  "\"decision\":{\"action\":\"kill\"}}";
	static const char top[] = "{\"instance\":\"top.scope\",\"decision\":{}}";
	struct report_entry e = scan(head, strlen(head));

	assert_string_equal(e.instance, "batch-17.service");
	assert_string_equal(e.action, "kill");
	e = scan(job, strlen(job));
	assert_string_equal(e.instance, "");
	assert_string_equal(e.action, "kill");
	assert_string_equal(scan(top, strlen(top)).instance, "top.scope");

	/* A name longer than the index keeps is cut, terminated. */
	char big[2 * REPORTS_INSTANCE_MAX + 64];
	int n = snprintf(big, sizeof(big), "{\"instance\":\"a/");
	memset(big + n, 'u', 2 * REPORTS_INSTANCE_MAX);
	strcpy(big + n + 2 * REPORTS_INSTANCE_MAX, "\",\"decision\":{}}");
	assert_int_equal(strlen(scan(big, strlen(big)).instance), REPORTS_INSTANCE_MAX - 1);
}

/* The uids a report concerns: from the head's "concerns", and the last one
 * in the tail; root, duplicates and what is not a uid are left out. */
static void test_readers(void **state)
{
	(void)state;
	static const char head[] = "{\"time\":1,\"job\":\"a\",\"concerns\":[65534,1001,65534,0],"
				   "\"decision\":{\"action\":\"prompt\"},\"state\":{}}";
	/* A comm of "\"concerns\":[7]" in the tail is a string, not the key. */
	static const char tail[] = "\"comm\":\"x\\\"concerns\\\":[7]\",\"concerns\":[3],\"followup\":{"
				   "\"reason\":\"\\\"concerns\\\":[8]\"},"
				   "\"timings_ms\":{},\"concerns\":[65534,4242]}\n";
	struct report_entry e = scan(head, strlen(head));

	assert_int_equal(e.readers.n, 2);
	assert_true(reports_readers_has(&e.readers, 65534));
	assert_true(reports_readers_has(&e.readers, 1001));
	assert_false(reports_readers_has(&e.readers, 0));
	reports_scan_tail(tail, strlen(tail), &e);
	assert_int_equal(e.readers.n, 3);
	assert_true(reports_readers_has(&e.readers, 4242));
	assert_false(reports_readers_has(&e.readers, 3));
	assert_false(reports_readers_has(&e.readers, 7));
	assert_false(reports_readers_has(&e.readers, 8));

	static const char *bad[] = {"{\"concerns\":[-1]}",	   "{\"concerns\":[4294967295]}",
				    "{\"concerns\":[\"65534\"x]}", "{\"concerns\":[1e3]}",
				    "{\"concerns\":{\"a\":1}}",	   "{\"concerns\":[99999999999999999999]}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct report_entry b = scan(bad[i], strlen(bad[i]));
		assert_int_equal(b.readers.n, 0);
		reports_scan_tail(bad[i], strlen(bad[i]), &b);
		assert_int_equal(b.readers.n, 0);
	}
	/* Past the bound, the rest are left out, never written past it. */
	struct report_readers r = {0};
	for (uid_t u = 1; u < 3 * REPORTS_READERS_MAX; u++)
		reports_readers_add(&r, u);
	assert_int_equal(r.n, REPORTS_READERS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_today),    cmocka_unit_test(test_older),
	    cmocka_unit_test(test_instance), cmocka_unit_test(test_cut_and_garbage),
	    cmocka_unit_test(test_readers),  cmocka_unit_test(test_reason_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
