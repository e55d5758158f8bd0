/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-access.c - who may see and answer what (daemon/rules/access.c), as
 * tables: each row a peer, a question or an outcome, and the verdict.
 */
#include "unit.h"

#include <errno.h>

#include "rules/access.h"

static const struct access_question machine = {.job = false};
static const struct access_question owned = {.job = true, .has_owner = true, .owner = 1000};
static const struct access_question unowned = {.job = true};

static const struct protocol_answer kill_one = {.id = 1, .choice = PROTOCOL_CHOICE_KILL, .pid = 42};
static const struct protocol_answer grow = {.id = 1, .choice = PROTOCOL_CHOICE_GROW};
static const struct protocol_answer kernel = {.id = 1, .choice = PROTOCOL_CHOICE_KERNEL};
static const struct protocol_answer chain = {.id = 1, .choice = PROTOCOL_CHOICE_CHAIN};

struct answer_case {
	const char *what;
	uid_t peer;
	const struct access_question *q;
	const struct protocol_answer *a;
	uid_t victim_uid;
	int verdict;
};

static const struct answer_case answers[] = {
    {"root kills on the machine", 0, &machine, &kill_one, 1000, 0},
    {"root hands the machine to the kernel", 0, &machine, &kernel, 0, 0},
    {"root grows a job no one owns", 0, &unowned, &grow, 0, 0},
    {"an owner grows its job", 1000, &owned, &grow, 0, 0},
    {"an owner hands its job to the kernel", 1000, &owned, &kernel, 0, 0},
    {"an owner kills its own process", 1000, &owned, &kill_one, 1000, 0},
    {"an owner kills root's process in its job", 1000, &owned, &kill_one, 0, -EPERM},
    {"an owner kills another user's process in its job", 1000, &owned, &kill_one, 1001, -EPERM},
    {"another user grows the job", 1001, &owned, &grow, 0, -EPERM},
    {"another user hands the job to the kernel", 1001, &owned, &kernel, 0, -EPERM},
    {"another user kills the owner's process", 1001, &owned, &kill_one, 1000, -EPERM},
    {"a user kills its own process on the machine", 1000, &machine, &kill_one, 1000, 0},
    {"a user kills root's process on the machine", 1000, &machine, &kill_one, 0, -EPERM},
    {"a user hands the machine to the kernel", 1000, &machine, &kernel, 0, -EPERM},
    {"a user grows a job no one owns", 1000, &unowned, &grow, 0, -EPERM},
    {"anyone declines", 1001, &owned, &chain, 0, 0},
};

static void test_answer(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		const struct answer_case *t = &answers[i];

		print_message("%s\n", t->what);
		assert_int_equal(access_may_answer(t->peer, t->q, t->a, t->victim_uid), t->verdict);
	}
}

struct see_case {
	const char *what;
	uid_t peer;
	const struct access_question *q;
	uid_t candidate_uid;	/* access_may_see() */
	bool has_own_candidate; /* access_may_see_question() */
	bool sees_candidate, sees_question;
};

static const struct see_case sees[] = {
    {"root, the machine", 0, &machine, 1000, false, true, true},
    {"root, a job no one owns", 0, &unowned, 1000, false, true, true},
    {"a user, its own candidate on the machine", 1000, &machine, 1000, true, true, true},
    {"the owner, root's candidate in its job", 1000, &owned, 0, false, false, true},
    {"another user, the owner's job", 1001, &owned, 1000, false, false, false},
    {"another user, a candidate of its own on the machine", 1001, &machine, 1001, true, true, true},
    {"another user, the machine without a candidate of its", 1001, &machine, 1000, false, false, false},
};

static void test_see(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(sees) / sizeof(sees[0]); i++) {
		const struct see_case *t = &sees[i];

		print_message("%s\n", t->what);
		assert_int_equal(access_may_see(t->peer, t->q, t->candidate_uid), t->sees_candidate);
		assert_int_equal(access_may_see_question(t->peer, t->q, t->has_own_candidate),
				 t->sees_question);
	}
}

struct outcome_case {
	const char *what;
	uid_t peer;
	bool has_victim;
	uid_t victim_uid;
	bool has_owner;
	uid_t owner;
	bool details;
};

static const struct outcome_case outcomes[] = {
    {"root", 0, false, 0, false, 0, true},
    {"the victim's user", 1000, true, 1000, false, 0, true},
    {"the job's owner", 1001, true, 1000, true, 1001, true},
    {"another user", 1002, true, 1000, true, 1001, false},
    {"a uid equal to an absent victim's", 1000, false, 1000, false, 0, false},
    {"a uid equal to an absent owner's", 1001, false, 0, false, 1001, false},
};

static void test_outcome(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++) {
		const struct outcome_case *t = &outcomes[i];

		print_message("%s\n", t->what);
		assert_int_equal(
		    access_outcome_details(t->peer, t->has_victim, t->victim_uid, t->has_owner, t->owner),
		    t->details);
	}
}

struct read_case {
	const char *what;
	uid_t peer;
	bool readonly_status, concerned;
	bool all, report;
};

static const struct read_case reads[] = {
    {"root", 0, false, false, true, true},
    {"a user, readonly_status", 1000, true, false, true, true},
    {"a user the report concerns", 1000, false, true, false, true},
    {"a user it does not concern", 1000, false, false, false, false},
};

static void test_read(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		const struct read_case *t = &reads[i];

		print_message("%s\n", t->what);
		assert_int_equal(access_may_read_all(t->peer, t->readonly_status), t->all);
		assert_int_equal(access_may_read_report(t->peer, t->readonly_status, t->concerned),
				 t->report);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answer),
	    cmocka_unit_test(test_see),
	    cmocka_unit_test(test_outcome),
	    cmocka_unit_test(test_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
