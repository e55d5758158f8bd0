/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-rules.c - which rule places a process: protect first (the
 * job's, then the machine's), then the job's prefer and avoid as written,
 * then the machine's; rules parsed from a configuration, as the daemon has
 * them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "rules/rules.h"

static const char text[] = "[oomkitd]\n"			      /* 1 */
			   "protect = comm:sshd\n"		      /* 2 */
			   "prefer = cmdline:*--type=renderer*\n"     /* 3 */
			   "avoid = uid:0, comm:both\n"		      /* 4 */
			   "\n"					      /* 5 */
			   "[job web]\n"			      /* 6 */
			   "avoid = comm:cache\n"		      /* 7 */
			   "prefer = comm:both, cgroup:m/web/batch\n" /* 8 */
			   "protect = exe:/usr/bin/keep\n"	      /* 9 */
			   "\n"					      /* 10 */
			   "[job other]\n"			      /* 11 */
			   "prefer = comm:cache\n";		      /* 12 */

static void test_order(void **state)
{
	(void)state;
	struct config cfg;
	char errors[1024] = "";

	if (config_parse_string(text, "f", &cfg, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
	assert_int_equal(cfg.n_machine_rules, 4);
	const struct config_job *web = config_find_job(&cfg, "web"), *other = config_find_job(&cfg, "other");
	struct rules_set m = {cfg.machine_rules, cfg.n_machine_rules}, w = {web->rules, web->n_rules},
			 o = {other->rules, other->n_rules};
	assert_int_equal(w.n, 4);
	assert_int_equal(o.n, 1);

	static const struct {
		const char *what;
		struct match_subject s;
		int job; /* 0 web, 1 other, -1 none */
		enum policy_place place;
		unsigned line;
		bool machine;
	} cases[] = {
	    {"no rule", {.comm = "hog", .uid = 1000, .cgroup = "m/web"}, 0, PLACE_NONE, 0, false},
	    {"the machine's protect",
	     {.comm = "sshd", .uid = 0, .cgroup = "m/web"},
	     0,
	     PLACE_PROTECT,
	     2,
	     true},
	    {"the machine's protect, in no job",
	     {.comm = "sshd", .uid = 0, .cgroup = "x"},
	     -1,
	     PLACE_PROTECT,
	     2,
	     true},
	    {"a user's process named as a protected one is not protected",
	     {.comm = "sshd", .uid = 1000, .cgroup = "x"},
	     -1,
	     PLACE_NONE,
	     0,
	     false},
	    {"the job's protect over the machine's prefer",
	     {.comm = "r",
	      .exe = "/usr/bin/keep",
	      .cmdline = "r --type=renderer",
	      .uid = 0,
	      .cgroup = "m/web"},
	     0,
	     PLACE_PROTECT,
	     9,
	     false},
	    {"a user's process running the protected executable is placed as if unprotected",
	     {.comm = "r",
	      .exe = "/usr/bin/keep",
	      .cmdline = "r --type=renderer",
	      .uid = 5,
	      .cgroup = "m/web"},
	     0,
	     PLACE_PREFER,
	     3,
	     true},
	    {"the job's avoid", {.comm = "cache", .uid = 1000, .cgroup = "m/web"}, 0, PLACE_AVOID, 7, false},
	    {"the same name, another job's prefer",
	     {.comm = "cache", .uid = 1000, .cgroup = "m/other"},
	     1,
	     PLACE_PREFER,
	     12,
	     false},
	    {"the job's prefer over the machine's avoid",
	     {.comm = "both", .uid = 1000, .cgroup = "m/web"},
	     0,
	     PLACE_PREFER,
	     8,
	     false},
	    {"the machine's avoid where the job says nothing",
	     {.comm = "both", .uid = 1000, .cgroup = "m/other"},
	     1,
	     PLACE_AVOID,
	     4,
	     true},
	    {"the machine's prefer",
	     {.comm = "c", .cmdline = "chrome --type=renderer", .uid = 0, .cgroup = "x"},
	     -1,
	     PLACE_PREFER,
	     3,
	     true},
	    {"the first machine rule written wins: prefer before avoid",
	     {.comm = "c", .cmdline = "chrome --type=renderer", .uid = 0, .cgroup = "m/other"},
	     1,
	     PLACE_PREFER,
	     3,
	     true},
	    {"uid 0 avoided", {.comm = "c", .uid = 0, .cgroup = "m/other"}, 1, PLACE_AVOID, 4, true},
	    {"the job's first rule written wins: avoid before prefer",
	     {.comm = "cache", .uid = 1000, .cgroup = "m/web/batch"},
	     0,
	     PLACE_AVOID,
	     7,
	     false},
	    {"a cgroup rule on a child cgroup",
	     {.comm = "make", .uid = 1000, .cgroup = "m/web/batch/x"},
	     0,
	     PLACE_PREFER,
	     8,
	     false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_proc p;
		memset(&p, 0x5a, sizeof(p));
		const struct rules_set *j = cases[i].job == 0 ? &w : cases[i].job == 1 ? &o : NULL;
		rules_place(j, &m, &cases[i].s, &p);
		if (p.place != cases[i].place || p.rule_line != cases[i].line ||
		    (p.place != PLACE_NONE && p.rule_machine != cases[i].machine) ||
		    (p.place == PLACE_NONE) != (p.rule == NULL))
			fail_msg("%s: placed %s by line %u%s; wanted %s by line %u%s", cases[i].what,
				 policy_place_name(p.place), p.rule_line, p.rule_machine ? " [oomkitd]" : "",
				 policy_place_name(cases[i].place), cases[i].line,
				 cases[i].machine ? " [oomkitd]" : "");
	}
	assert_int_equal(rules_needs(&w, &m), (1u << MATCH_COMM) | (1u << MATCH_CGROUP) | (1u << MATCH_EXE) |
						  (1u << MATCH_CMDLINE) | (1u << MATCH_UID));
	assert_int_equal(rules_needs(&o, NULL), 1u << MATCH_COMM);

	/* How a report names the rule that placed a process. */
	struct policy_proc p = {0};
	char buf[POLICY_RULE_MAX];
	rules_place(&w, &m, &cases[6].s, &p);
	policy_format_rule(&p, buf, sizeof(buf));
	assert_string_equal(buf, "avoid = comm:cache (line 7)");
	rules_place(&o, &m, &cases[12].s, &p);
	policy_format_rule(&p, buf, sizeof(buf));
	assert_string_equal(buf, "avoid = uid:0 ([oomkitd], line 4)");
	rules_place(&o, NULL, &cases[0].s, &p);
	policy_format_rule(&p, buf, sizeof(buf));
	assert_string_equal(buf, "");
	config_free(&cfg);
}

/* Protection by name shields only root's processes: a user names its own
 * process anything (prctl(PR_SET_NAME), argv, LD_PRELOAD into a protected
 * executable).  By uid and by cgroup (where the user could not have moved
 * it: test_protect_by_cgroup), whoever matches. */
static void test_protect_by_name(void **state)
{
	(void)state;
	struct config cfg;
	char errors[1024] = "";
	static const char conf[] =
	    "[oomkitd]\n"
	    "protect = systemd, cmdline:/usr/lib/systemd/*, exe:/usr/bin/keep, uid:999, "
	    "cgroup:init.scope\n"
	    "prefer = comm:systemd\n";

	if (config_parse_string(conf, "f", &cfg, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
	struct rules_set m = {cfg.machine_rules, cfg.n_machine_rules};
	static const struct {
		const char *what;
		struct match_subject s;
		enum policy_place place;
	} cases[] = {
	    {"root's systemd", {.comm = "systemd", .uid = 0, .cgroup = "x"}, PLACE_PROTECT},
	    {"a user's process renamed systemd: prefer by name still applies",
	     {.comm = "systemd", .uid = 1000, .cgroup = "x"},
	     PLACE_PREFER},
	    {"a user's command line like root's",
	     {.comm = "a", .cmdline = "/usr/lib/systemd/x", .uid = 1000},
	     PLACE_NONE},
	    {"root's command line", {.comm = "a", .cmdline = "/usr/lib/systemd/x", .uid = 0}, PLACE_PROTECT},
	    {"a user's LD_PRELOAD into the protected executable",
	     {.comm = "a", .exe = "/usr/bin/keep", .uid = 1},
	     PLACE_NONE},
	    {"root running it", {.comm = "a", .exe = "/usr/bin/keep", .uid = 0}, PLACE_PROTECT},
	    {"the uid a rule names", {.comm = "a", .uid = 999, .cgroup = "x"}, PLACE_PROTECT},
	    {"a user's process in a protected cgroup",
	     {.comm = "a", .uid = 1000, .cgroup = "init.scope"},
	     PLACE_PROTECT},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_proc p;
		memset(&p, 0x5a, sizeof(p));
		rules_place(NULL, &m, &cases[i].s, &p);
		if (p.place != cases[i].place)
			fail_msg("%s: placed %s, wanted %s", cases[i].what, policy_place_name(p.place),
				 policy_place_name(cases[i].place));
	}
	struct match_expr e;
	char why[64];
	static const char *const named[] = {"sshd", "comm:x", "cmdline:x *", "exe:/bin/x"};
	static const char *const not_named[] = {"uid:0", "cgroup:init.scope"};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		assert_int_equal(match_parse(named[i], &e, why, sizeof(why)), 0);
		assert_true(match_self_named(&e));
	}
	for (size_t i = 0; i < sizeof(not_named) / sizeof(not_named[0]); i++) {
		assert_int_equal(match_parse(not_named[i], &e, why, sizeof(why)), 0);
		assert_false(match_self_named(&e));
	}
	config_free(&cfg);
}

/* A cgroup: protect rule shields a process of another user than root only
 * if that user could not have put it there; prefer and avoid by cgroup, and
 * protection by uid, are unchanged.  Whether it could is what the daemon
 * reads (cgroup_self_placed), and only for a process such a rule protects. */
static void test_protect_by_cgroup(void **state)
{
	(void)state;
	struct config cfg;
	char errors[1024] = "";
	static const char conf[] = "[oomkitd]\n"
				   "protect = cgroup:user.slice/*/init.scope, uid:999\n"
				   "prefer = cgroup:user.slice\n"
				   "\n"
				   "[job batch]\n"
				   "protect = cgroup:m/batch/shield\n"
				   "avoid = cgroup:m/batch\n";

	if (config_parse_string(conf, "f", &cfg, errors, sizeof(errors)) != 0)
		fail_msg("%s", errors);
	struct rules_set m = {cfg.machine_rules, cfg.n_machine_rules};
	struct rules_set j = {cfg.jobs[0].rules, cfg.jobs[0].n_rules};
	static const struct {
		const char *what;
		struct match_subject s;
		enum policy_place place;
		bool ask; /* rules_cgroup_protected(): the daemon reads the cgroup's owner */
	} cases[] = {
	    {"a user's process in a root-owned protected cgroup",
	     {.comm = "a", .uid = 1000, .cgroup = "user.slice/u/init.scope"},
	     PLACE_PROTECT,
	     true},
	    {"a user's process it moved there itself: the next rule places it",
	     {.comm = "a", .uid = 1000, .cgroup = "user.slice/u/init.scope/x", .cgroup_self_placed = true},
	     PLACE_PREFER,
	     false},
	    {"root's process where root's own user could write",
	     {.comm = "a", .uid = 0, .cgroup = "user.slice/u/init.scope", .cgroup_self_placed = true},
	     PLACE_PROTECT,
	     false},
	    {"protected by its uid wherever it is",
	     {.comm = "a", .uid = 999, .cgroup = "user.slice/u/init.scope", .cgroup_self_placed = true},
	     PLACE_PROTECT,
	     false},
	    {"the job's rule, not the user's to write",
	     {.comm = "a", .uid = 1000, .cgroup = "m/batch/shield/deeper"},
	     PLACE_PROTECT,
	     true},
	    {"the job's rule, the owner's own sub-cgroup: the job's avoid",
	     {.comm = "a", .uid = 1000, .cgroup = "m/batch/shield", .cgroup_self_placed = true},
	     PLACE_AVOID,
	     false},
	    {"avoid by cgroup applies whoever put it there",
	     {.comm = "a", .uid = 1000, .cgroup = "m/batch/x", .cgroup_self_placed = true},
	     PLACE_AVOID,
	     false},
	    {"no rule", {.comm = "a", .uid = 1000, .cgroup = "m/web"}, PLACE_NONE, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_proc p;
		memset(&p, 0x5a, sizeof(p));
		rules_place(&j, &m, &cases[i].s, &p);
		if (p.place != cases[i].place)
			fail_msg("%s: placed %s, wanted %s", cases[i].what, policy_place_name(p.place),
				 policy_place_name(cases[i].place));
		if (rules_cgroup_protected(&p, &cases[i].s) != cases[i].ask)
			fail_msg("%s: the cgroup's owner %s", cases[i].what,
				 cases[i].ask ? "is not asked" : "is asked");
	}
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_protect_by_name),
	    cmocka_unit_test(test_protect_by_cgroup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
