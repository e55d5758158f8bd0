/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-outcome.c - what the agent says was done (agent/outcome.c), from the
 * daemon's action and its result, with a table of the results
 * daemon/actions.c and daemon/chain.c write: a kill or a grow that did not
 * happen is never told as done.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "outcome.h"

struct row {
	const char *action, *result, *name;
	enum outcome_kind kind;
	const char *summary;
};

static const struct row rows[] = {
    {"kill", "killed 42", "Big Editor", OUTCOME_KILLED, "Killed Big Editor (21 MiB)"},
    {"kill-job", "killed job desk (3 processes)", "desk", OUTCOME_KILLED, "Killed job desk (21 MiB)"},
    {"kill-job", "killed job desk (3 processes; some still exiting after 1000 ms)", "desk", OUTCOME_KILLED,
     "Killed job desk (21 MiB)"},
    {"kill", "sent SIGTERM to 42, SIGKILL after 2.0 s", "Big Editor", OUTCOME_STOPPING,
     "Closing Big Editor (21 MiB): asked to exit, killed if it does not"},
    {"kill", "kill of 42 failed: No such process", "Big Editor", OUTCOME_FAILED,
     "Could not close Big Editor: kill of 42 failed: No such process"},
    {"kill", "42 was gone before the kill: nothing killed", "Big Editor", OUTCOME_FAILED,
     "Could not close Big Editor: 42 was gone before the kill: nothing killed"},
    {"kill-job", "kill of job desk failed: Permission denied", "desk", OUTCOME_FAILED,
     "Could not close job desk: kill of job desk failed: Permission denied"},
    {"kill", "no snapshot: Cannot allocate memory; nothing killed", NULL, OUTCOME_FAILED,
     "Nothing was closed: no snapshot: Cannot allocate memory; nothing killed"},
    /* A result that only looks like success: "killed" must begin it. */
    {"kill", "not killed 42", "Big Editor", OUTCOME_FAILED, "Could not close Big Editor: not killed 42"},
    {"kill", "", "Big Editor", OUTCOME_FAILED, "Could not close Big Editor: "},
    {"grow", "limit raised to 72 MiB", NULL, OUTCOME_GREW,
     "Gave roomy more memory (its limit is now 72 MiB)"},
    {"grow", "grow failed: Device or resource busy", NULL, OUTCOME_FAILED,
     "Could not give roomy more memory: grow failed: Device or resource busy"},
    {"grow", "limit raised to ", NULL, OUTCOME_FAILED, "Could not give roomy more memory: limit raised to "},
    /* "sent" is a kill's word only. */
    {"grow", "sent SIGTERM to 42", NULL, OUTCOME_FAILED,
     "Could not give roomy more memory: sent SIGTERM to 42"},
    {"kernel", "handed to the kernel OOM killer", NULL, OUTCOME_OTHER,
     "Out of memory: handed to the kernel OOM killer"},
    {"none", "nothing to do", NULL, OUTCOME_OTHER, "Out of memory: nothing to do"},
    /* A kill that worked, with no victim to name: the result says it. */
    {"kill", "killed 42", NULL, OUTCOME_KILLED, "Out of memory: killed 42"},
};

static void test_table(void **state)
{
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		if (outcome_kind(r->action, r->result) != r->kind)
			fail_msg("row %zu (%s, \"%s\"): kind %d, want %d", i, r->action, r->result,
				 (int)outcome_kind(r->action, r->result), (int)r->kind);
		outcome_summary(r->action, r->result, r->name, "21 MiB", "roomy", buf, sizeof(buf));
		if (strcmp(buf, r->summary) != 0)
			fail_msg("row %zu: \"%s\", want \"%s\"", i, buf, r->summary);
	}
}

/* No result (a peer that may not see it): never a success. */
static void test_no_result(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(outcome_kind("kill", NULL), OUTCOME_FAILED);
	outcome_summary("grow", NULL, NULL, "", "roomy", buf, sizeof(buf));
	assert_string_equal(buf, "Could not give roomy more memory: ");
}

/* A summary longer than the buffer is cut, and ends in a NUL. */
static void test_cut(void **state)
{
	char buf[16];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	outcome_summary("kill", "killed 42", "A very long application name", "21 MiB", "desk", buf,
			sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_string_equal(buf, "Killed A very l");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_no_result),
	    cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
