/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A scope's event counters (daemon/scope/counters.c): where a kill counts. */
#include "unit.h"

#include "scope/counters.h"

struct kill_case {
	const char *what;
	bool machine; /* the OOM is the machine's */
	bool victim;  /* the processes were in a job */
	uint64_t scope_kills, scope_by_policy, victim_kills, victim_by_policy;
};

static const struct kill_case kill_cases[] = {
    {"a job's OOM: its own processes", false, true, 0, 0, 2, 2},
    {"a machine OOM, a job's process", true, true, 2, 0, 2, 2},
    {"a machine OOM, a process in no job", true, false, 2, 2, 0, 0},
    {"a job's OOM, the victim's job unknown", false, false, 0, 2, 0, 0},
};

static void test_killed(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(kill_cases) / sizeof(kill_cases[0]); i++) {
		const struct kill_case *k = &kill_cases[i];
		struct counters scope = {0}, victim = {0};

		counters_killed(&scope, k->machine, k->victim ? &victim : NULL, POLICY_KILL_LARGEST, 2);
		print_message("%s\n", k->what);
		assert_int_equal(scope.kills, k->scope_kills);
		assert_int_equal(scope.kills_by_policy[POLICY_KILL_LARGEST], k->scope_by_policy);
		assert_int_equal(victim.kills, k->victim_kills);
		assert_int_equal(victim.kills_by_policy[POLICY_KILL_LARGEST], k->victim_by_policy);
		for (int p = 0; p < POLICY__COUNT; p++)
			if (p != POLICY_KILL_LARGEST)
				assert_int_equal(scope.kills_by_policy[p] + victim.kills_by_policy[p], 0);
	}
}

static void test_events(void **state)
{
	struct counters c = {0};

	(void)state;
	counters_oom(&c);
	counters_oom(&c);
	counters_grew(&c);
	counters_shed_resolved(&c);
	assert_int_equal(c.ooms, 2);
	assert_int_equal(c.grows, 1);
	assert_int_equal(c.shed_successes, 1);
	assert_int_equal(c.kills, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_killed),
	    cmocka_unit_test(test_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
