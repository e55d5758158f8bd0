/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-policy.c - oomkitd's decisions on snapshots: every policy at machine
 * and job level, chains that fall through, and every protection rule.
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
#include "oomkit.h"
#include "rules/policy.h"

#define MiB (1024ull * 1024ull)

enum { WEB = 0, BATCH = 1, PLAYER = 2 };

/* The demo's machine: web is important and large, batch is small and least
 * important, player is in between and the newest. */
static struct policy_group groups[3];
static struct policy_proc procs[12];
static unsigned n_procs;
static pid_t protected_pids[2] = {4242, 4243};

static void add_proc(pid_t pid, int group, uint64_t rss_mib, uint64_t start, int adj, const char *comm)
{
	struct policy_proc *p = &procs[n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->group = group;
	p->rss_bytes = rss_mib * MiB;
	p->start_time = start;
	p->oom_score_adj = adj;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

static int setup(void **state)
{
	(void)state;
	memset(groups, 0, sizeof(groups));
	groups[WEB] = (struct policy_group){.name = "web",
					    .priority = 900,
					    .usage_bytes = 150 * MiB,
					    .limit_bytes = 200 * MiB,
					    .limit_max_bytes = 300 * MiB,
					    .expect_bytes = 100 * MiB};
	groups[BATCH] = (struct policy_group){.name = "batch",
					      .priority = 100,
					      .usage_bytes = 30 * MiB,
					      .limit_bytes = 64 * MiB,
					      .limit_max_bytes = 64 * MiB,
					      .expect_bytes = 40 * MiB};
	groups[PLAYER] = (struct policy_group){.name = "player",
					       .priority = 500,
					       .usage_bytes = 70 * MiB,
					       .limit_bytes = 100 * MiB,
					       .limit_max_bytes = 100 * MiB,
					       .expect_bytes = 20 * MiB};
	n_procs = 0;
	add_proc(100, WEB, 120, 1000, 0, "web");
	add_proc(101, WEB, 30, 1001, 0, "worker");
	add_proc(200, BATCH, 10, 2000, 0, "batch");
	add_proc(201, BATCH, 20, 2001, 0, "batch");
	add_proc(300, PLAYER, 70, 3000, 0, "player");
	return 0;
}

static struct policy_input input(enum policy_scope scope, unsigned group, const char *chain_text,
				 struct policy_chain *chain)
{
	char bad[64];
	assert_int_equal(config_parse_chain(chain_text, chain, bad, sizeof(bad)), 0);
	struct policy_input in = {
	    .scope = scope,
	    .scope_group = group,
	    .groups = groups,
	    .n_groups = 3,
	    .procs = procs,
	    .n_procs = n_procs,
	    .capacity_bytes = 256 * MiB,
	    .taken_boot_ms = 42000,
	    .ticks_per_sec = 100,
	    .protected_pids = protected_pids,
	    .n_protected_pids = 2,
	    .chain = chain,
	};
	policy_count_leaves(groups, &in);
	return in;
}

static struct policy_decision decide(enum policy_scope scope, unsigned group, const char *chain_text)
{
	struct policy_chain chain;
	struct policy_input in = input(scope, group, chain_text, &chain);
	struct policy_decision d;

	assert_int_equal(policy_decide(&in, &d), 0);
	return d;
}

struct kill_case {
	const char *name;
	enum policy_scope scope;
	unsigned group;
	const char *chain;
	enum policy_action action;
	pid_t victim;
	const char *reason_has;
};

static void run_kill_cases(const struct kill_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		setup(NULL);
		struct policy_decision d = decide(cases[i].scope, cases[i].group, cases[i].chain);
		if (d.action != cases[i].action || d.victim_pid != cases[i].victim)
			fail_msg("%s: got %s of %d (%s), wanted %s of %d", cases[i].name,
				 policy_action_name(d.action), d.victim_pid, d.reason,
				 policy_action_name(cases[i].action), cases[i].victim);
		if (cases[i].reason_has && !strstr(d.reason, cases[i].reason_has))
			fail_msg("%s: reason '%s' lacks '%s'", cases[i].name, d.reason, cases[i].reason_has);
	}
}

static void test_policies(void **state)
{
	(void)state;
	static const struct kill_case cases[] = {
	    /* The article's point: the lowest-priority job loses, not the largest process. */
	    {"machine kill-lowest", SCOPE_MACHINE, 0, "kill-lowest", ACTION_KILL, 201,
	     "job batch has the lowest priority (100)"},
	    {"machine kill-largest", SCOPE_MACHINE, 0, "kill-largest", ACTION_KILL, 100, "largest"},
	    /* Started 30 s after boot, the snapshot taken at 42 s: in words. */
	    {"machine kill-newest", SCOPE_MACHINE, 0, "kill-newest", ACTION_KILL, 300,
	     "process 300 started last, 12 s before the OOM; killing process 300 (player, 70 MiB)"},
	    /* player: 70/20 = 350 %, batch 30/40 below, web 150/100 = 150 %. */
	    {"machine kill-over-expected", SCOPE_MACHINE, 0, "kill-over-expected", ACTION_KILL, 300,
	     "job player uses 350% of its expected 20 MiB"},
	    {"machine kernel", SCOPE_MACHINE, 0, "kernel", ACTION_KERNEL, 0, "kernel"},
	    {"machine report only", SCOPE_MACHINE, 0, "report", ACTION_NONE, 0, "after the delay"},
	    {"report then kill", SCOPE_MACHINE, 0, "report, kill-lowest, kernel", ACTION_KILL, 201, NULL},
	    /* Inside a job only its own processes are candidates. */
	    {"job kill-largest", SCOPE_JOB, WEB, "kill-largest", ACTION_KILL, 100, "of job web"},
	    {"job kill-newest", SCOPE_JOB, WEB, "kill-newest", ACTION_KILL, 101, NULL},
	    {"job kill-lowest", SCOPE_JOB, BATCH, "kill-lowest", ACTION_KILL, 201,
	     "lowest rank in job batch"},
	    {"job kill-over-expected", SCOPE_JOB, WEB, "kill-over-expected", ACTION_KILL, 100, "150%"},
	    {"job under expectation", SCOPE_JOB, BATCH, "kill-over-expected, kernel", ACTION_KERNEL, 0, NULL},
	    {"prompt without anyone", SCOPE_MACHINE, 0, "prompt, kill-newest", ACTION_KILL, 300, NULL},
	};
	run_kill_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_trail(void **state)
{
	(void)state;
	struct policy_decision d =
	    decide(SCOPE_JOB, BATCH, "report, grow, kill-over-expected, prompt, kernel");

	assert_int_equal(d.action, ACTION_KERNEL);
	assert_int_equal(d.policy, POLICY_KERNEL);
	assert_int_equal(d.step, 4);
	assert_non_null(strstr(d.trail, "grow: job batch is at its limit_max 64 MiB"));
	assert_non_null(strstr(d.trail, "kill-over-expected: no job is above its expected usage"));
	assert_non_null(strstr(d.trail, "prompt: nobody is connected"));
}

static struct policy_decision decide_capacity(unsigned group, const char *chain_text, uint64_t capacity)
{
	struct policy_chain chain;
	struct policy_input in = input(SCOPE_JOB, group, chain_text, &chain);
	struct policy_decision d;

	in.capacity_bytes = capacity;
	assert_int_equal(policy_decide(&in, &d), 0);
	return d;
}

/* kill-newest says when its victim started in words, from the snapshot's
 * time since boot; start times are in ticks (100 a second). */
static void test_started_when(void **state)
{
	(void)state;
	static const struct {
		uint64_t taken_boot_ms;
		unsigned ticks_per_sec;
		const char *want;
	} cases[] = {
	    {42000, 100, "process 300 started last, 12 s before the OOM;"},
	    {30000 + (3 * 3600 + 5 * 60 + 7) * 1000ull, 100, "started last, 3 h 5 min before the OOM;"},
	    {30000 + 2 * 86400 * 1000ull, 100, "started last, 2 days 0 h before the OOM;"},
	    {30400, 100, "started last, 0.4 s before the OOM;"},
	    {31000 + 150 * 1000, 0, "started last, 2 min 31 s before the OOM;"}, /* 0: USER_HZ */
	    {29000, 100, "started last, 0.0 s before the OOM;"},		 /* never negative */
	    {0, 100, "started last, 30 s after boot;"},				 /* time unknown */
	    {0, 1000, "started last, 3.0 s after boot;"},
	};
	struct policy_chain chain;
	struct policy_decision d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_input in = input(SCOPE_MACHINE, 0, "kill-newest", &chain);
		in.taken_boot_ms = cases[i].taken_boot_ms;
		in.ticks_per_sec = cases[i].ticks_per_sec;
		assert_int_equal(policy_decide(&in, &d), 0);
		assert_int_equal(d.victim_pid, 300);
		if (!strstr(d.reason, cases[i].want))
			fail_msg("case %zu: reason '%s' lacks '%s'", i, d.reason, cases[i].want);
		assert_null(strstr(d.reason, "start time"));
	}
}

static void test_grow(void **state)
{
	(void)state;
	struct policy_decision d;

	/* Others use 100 MiB of 350: web may take 250 MiB, below its limit_max 300. */
	d = decide_capacity(WEB, "grow, kernel", 350 * MiB);
	assert_int_equal(d.action, ACTION_GROW);
	assert_int_equal(d.policy, POLICY_GROW);
	assert_int_equal(d.new_limit_bytes, 250 * MiB);
	assert_string_equal(
	    d.reason, "job web grows from 200 MiB to 250 MiB (limit_max 300 MiB, 250 MiB of the machine "
		      "left for it)");

	/* With a roomier machine it grows to limit_max and not past it. */
	d = decide_capacity(WEB, "grow", 1024 * MiB);
	assert_int_equal(d.action, ACTION_GROW);
	assert_int_equal(d.new_limit_bytes, 300 * MiB);

	/* Others use 100 MiB of 256: 156 MiB left, less than web's limit of 200 already. */
	d = decide_capacity(WEB, "grow, kill-largest", 256 * MiB);
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 100);
	assert_non_null(strstr(d.trail, "grow: the machine has no room for job web (156 MiB left for it)"));

	/* Other jobs above the capacity: no room, no underflow. */
	groups[PLAYER].usage_bytes = 1024 * MiB;
	d = decide_capacity(WEB, "grow", 256 * MiB);
	assert_int_equal(d.action, ACTION_NONE);

	/* At limit_max. */
	setup(NULL);
	d = decide_capacity(BATCH, "grow, kernel", 1024 * MiB);
	assert_int_equal(d.action, ACTION_KERNEL);
	assert_non_null(strstr(d.trail, "job batch is at its limit_max 64 MiB"));

	/* The machine itself never grows. */
	d = decide(SCOPE_MACHINE, 0, "grow, kernel");
	assert_int_equal(d.action, ACTION_KERNEL);
	assert_non_null(strstr(d.trail, "the machine cannot grow"));
}

static void test_protection(void **state)
{
	(void)state;
	struct policy_decision d;

	/* The largest process is the daemon's own pid: the next one is chosen. */
	procs[0].pid = 4242;
	d = decide(SCOPE_MACHINE, 0, "kill-largest");
	assert_int_equal(d.victim_pid, 300);

	/* oom_score_adj -1000 protects. */
	setup(NULL);
	procs[0].oom_score_adj = -1000;
	d = decide(SCOPE_MACHINE, 0, "kill-largest");
	assert_int_equal(d.victim_pid, 300);

	/* A protect rule (rules.c placed it). */
	setup(NULL);
	procs[0].place = PLACE_PROTECT;
	d = decide(SCOPE_MACHINE, 0, "kill-largest");
	assert_int_equal(d.victim_pid, 300);

	/* A job whose processes are all protected is skipped by kill-lowest. */
	setup(NULL);
	procs[2].oom_score_adj = -1000;
	procs[3].pid = 4243;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 300);
	assert_non_null(strstr(d.reason, "job player"));

	/* Nothing killable at all: the chain falls through to nothing. */
	setup(NULL);
	for (unsigned i = 0; i < n_procs; i++)
		procs[i].oom_score_adj = -1000;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kill-newest, kill-largest, kill-over-expected");
	assert_int_equal(d.action, ACTION_NONE);
	assert_int_equal(d.victim_pid, 0);
	assert_true(policy_protected(&(struct policy_input){.n_groups = 0}, &procs[0]));
}

static const struct match_expr avoid_rule = {.kind = MATCH_COMM, .text = "batch"};

/* systemd's ManagedOOMPreference=: a rule of the file wins;
 * otherwise omit protects like a protect rule and avoid avoids like an
 * avoid rule. */
static void test_systemd_preference(void **state)
{
	(void)state;
	struct policy_decision d;

	assert_int_equal(policy_systemd_place(PLACE_NONE, false, false), PLACE_NONE);
	assert_int_equal(policy_systemd_place(PLACE_NONE, true, false), PLACE_PROTECT);
	assert_int_equal(policy_systemd_place(PLACE_NONE, true, true), PLACE_PROTECT);
	assert_int_equal(policy_systemd_place(PLACE_NONE, false, true), PLACE_AVOID);
	/* The job's own configuration says otherwise. */
	assert_int_equal(policy_systemd_place(PLACE_PREFER, true, false), PLACE_PREFER);
	assert_int_equal(policy_systemd_place(PLACE_PREFER, false, true), PLACE_PREFER);
	assert_int_equal(policy_systemd_place(PLACE_AVOID, true, false), PLACE_AVOID);

	/* batch omitted: never chosen, at machine level or in its own OOM. */
	for (unsigned i = 0; i < n_procs; i++)
		procs[i].place = policy_systemd_place(PLACE_NONE, procs[i].group == BATCH, false);
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 300);
	d = decide(SCOPE_JOB, BATCH, "kill-largest, kill-newest, kill-lowest");
	assert_int_equal(d.action, ACTION_NONE);
	char rule[POLICY_RULE_MAX];
	policy_format_rule(&procs[2], rule, sizeof(rule));
	assert_non_null(strstr(rule, "ManagedOOMPreference=omit"));

	/* player avoided: kill-newest takes batch's newest instead. */
	setup(NULL);
	procs[4].place = policy_systemd_place(PLACE_NONE, false, true);
	d = decide(SCOPE_MACHINE, 0, "kill-newest");
	assert_int_equal(d.victim_pid, 201);
	/* ... and still player when nothing else is left. */
	for (unsigned i = 0; i < 4; i++)
		procs[i].oom_score_adj = -1000;
	d = decide(SCOPE_MACHINE, 0, "kill-newest");
	assert_int_equal(d.victim_pid, 300);

	/* kill-lowest: systemd's avoid orders only among a priority, the
	 * file's priorities come first (oomkitd.conf(5)): batch (100), avoided,
	 * still goes before player (500) ... */
	setup(NULL);
	for (unsigned i = 0; i < n_procs; i++)
		procs[i].place = policy_systemd_place(PLACE_NONE, false, procs[i].group == BATCH);
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 201);
	assert_non_null(strstr(d.reason, "ManagedOOMPreference=avoid): no other candidate of its priority"));
	/* ... but after player when both have priority 100, though batch uses less. */
	groups[PLAYER].priority = 100;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 300);
	assert_null(strstr(d.reason, "avoid"));
	/* An avoid rule of the file still outranks priorities. */
	groups[PLAYER].priority = 500;
	procs[2].rule = procs[3].rule = &avoid_rule;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 300);
}

static void test_kill_job(void **state)
{
	(void)state;
	struct policy_decision d;

	groups[BATCH].kill = KILL_JOB;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.action, ACTION_KILL_JOB);
	assert_int_equal(d.victim_group, BATCH);
	assert_non_null(strstr(d.reason, "job batch is killed whole"));

	/* A protected process in the job: only the chosen one is killed. */
	procs[2].oom_score_adj = -1000;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 201);
	assert_non_null(strstr(d.reason, "not the whole job"));
}

static void test_ties(void **state)
{
	(void)state;
	struct policy_decision d;

	/* Equal priority: the job using more memory loses. */
	groups[BATCH].priority = 500;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 300);

	/* Equal size: the newer process goes. */
	setup(NULL);
	procs[2].rss_bytes = procs[3].rss_bytes;
	procs[2].start_time = 9999;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 200);

	/* Within a job, oom_score_adj ranks before size. */
	setup(NULL);
	procs[1].oom_score_adj = 500;
	d = decide(SCOPE_JOB, WEB, "kill-lowest");
	assert_int_equal(d.victim_pid, 101);
}

static void test_resume_and_prompt(void **state)
{
	(void)state;
	struct policy_chain chain;
	struct policy_input in = input(SCOPE_MACHINE, 0, "report, prompt, kill-lowest, kernel", &chain);
	struct policy_decision d;

	in.prompt_available = true;
	assert_int_equal(policy_decide(&in, &d), 0);
	assert_int_equal(d.action, ACTION_PROMPT);
	assert_int_equal(d.step, 1);

	/* Nobody answered: resume after the prompt. */
	in.first_step = d.step + 1;
	assert_int_equal(policy_decide(&in, &d), 0);
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 201);

	/* The kill did not free enough: resume after it. */
	in.first_step = d.step + 1;
	assert_int_equal(policy_decide(&in, &d), 0);
	assert_int_equal(d.action, ACTION_KERNEL);
}

/* shed asks a job that says how; one that does not is skipped, and at
 * machine level every job that can is asked at once. */
static void test_shed(void **state)
{
	(void)state;
	struct policy_decision d = decide(SCOPE_JOB, BATCH, "shed, kill-largest");
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 201);
	assert_non_null(strstr(d.trail, "shed: job batch has no shed_signal or shed_command"));

	groups[BATCH].can_shed = true;
	d = decide(SCOPE_JOB, BATCH, "report, shed, kill-largest");
	assert_int_equal(d.action, ACTION_SHED);
	assert_int_equal(d.policy, POLICY_SHED);
	assert_int_equal(d.step, 1);
	assert_int_equal(d.victim_group, BATCH);
	assert_string_equal(d.reason, "asking job batch to give memory back");

	/* After a shed that gave back too little the chain resumes past it. */
	struct policy_chain chain;
	struct policy_input in = input(SCOPE_JOB, BATCH, "shed, kill-largest", &chain);
	in.first_step = 1;
	assert_int_equal(policy_decide(&in, &d), 0);
	assert_int_equal(d.action, ACTION_KILL);

	d = decide(SCOPE_MACHINE, 0, "shed, kill-lowest");
	assert_int_equal(d.action, ACTION_SHED);
	assert_int_equal(d.victim_group, -1);
	assert_string_equal(d.reason, "asking 1 job to give memory back");
	groups[BATCH].can_shed = false;
	d = decide(SCOPE_MACHINE, 0, "shed, kill-lowest");
	assert_int_equal(d.action, ACTION_KILL);
	assert_non_null(strstr(d.trail, "shed: no job has a shed_signal or shed_command"));
	assert_string_equal(policy_action_name(ACTION_SHED), "shed");
}

static void test_bad_input(void **state)
{
	(void)state;
	struct policy_chain chain;
	struct policy_input in = input(SCOPE_JOB, 7, "kernel", &chain);
	struct policy_decision d = {.victim_pid = 77};

	assert_int_equal(policy_decide(&in, &d), -EINVAL);
	assert_int_equal(d.victim_pid, 77);
	in = input(SCOPE_MACHINE, 0, "kernel", &chain);
	procs[0].group = 3;
	assert_int_equal(policy_decide(&in, &d), -EINVAL);
	in.chain = NULL;
	assert_int_equal(policy_decide(&in, &d), -EINVAL);
}

/* A rule as the snapshot records it. */
static const struct match_expr rule_expr = {.kind = MATCH_COMM, .text = "x"};

static void place(unsigned i, enum policy_place where, unsigned line)
{
	procs[i].place = where;
	procs[i].rule = &rule_expr;
	procs[i].rule_line = line;
}

/* Preferred candidates go first within every policy, avoided ones last,
 * and the policy's own order decides within each. */
static void test_rules(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum policy_scope scope;
		unsigned group;
		const char *chain;
		int prefer, avoid; /* index into procs, -1 none */
		pid_t victim;
		const char *reason_has;
	} cases[] = {
	    {"largest: the preferred, though small", SCOPE_MACHINE, 0, "kill-largest", 2, -1, 200,
	     "process 200 is the largest of the preferred candidates"},
	    {"largest: the avoided largest is passed over", SCOPE_MACHINE, 0, "kill-largest", -1, 0, 300,
	     "process 300 is the largest;"},
	    {"newest: the preferred", SCOPE_MACHINE, 0, "kill-newest", 0, -1, 100,
	     "started last of the preferred"},
	    {"newest: the avoided newest is passed over", SCOPE_MACHINE, 0, "kill-newest", -1, 4, 201, NULL},
	    /* The machine's kill-lowest: a preferred process of an important job goes first. */
	    {"machine lowest: preferred across jobs", SCOPE_MACHINE, 0, "kill-lowest", 1, -1, 101,
	     "of the jobs with candidates preferred"},
	    {"machine lowest: avoided in the lowest job", SCOPE_MACHINE, 0, "kill-lowest", -1, 3, 200, NULL},
	    {"job lowest: preferred", SCOPE_JOB, WEB, "kill-lowest", 1, -1, 101, "lowest rank in job web"},
	    {"job lowest: avoided", SCOPE_JOB, WEB, "kill-lowest", -1, 0, 101, NULL},
	    /* Over expected: only jobs over their expectation take part, preferred or not. */
	    {"over-expected: a preferred process of a job within expectation stays", SCOPE_MACHINE, 0,
	     "kill-over-expected", 2, -1, 300, NULL},
	    {"over-expected: preferred among those over", SCOPE_MACHINE, 0, "kill-over-expected", 1, -1, 101,
	     "job web uses 150%"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(NULL);
		if (cases[i].prefer >= 0)
			place((unsigned)cases[i].prefer, PLACE_PREFER, 7);
		if (cases[i].avoid >= 0)
			place((unsigned)cases[i].avoid, PLACE_AVOID, 8);
		struct policy_decision d = decide(cases[i].scope, cases[i].group, cases[i].chain);
		if (d.action != ACTION_KILL || d.victim_pid != cases[i].victim)
			fail_msg("%s: got %s of %d (%s), wanted kill of %d", cases[i].name,
				 policy_action_name(d.action), d.victim_pid, d.reason, cases[i].victim);
		if (cases[i].reason_has && !strstr(d.reason, cases[i].reason_has))
			fail_msg("%s: reason '%s' lacks '%s'", cases[i].name, d.reason, cases[i].reason_has);
		bool preferred = cases[i].prefer >= 0 && procs[cases[i].prefer].pid == d.victim_pid;
		assert_int_equal(d.victim_place, preferred ? PLACE_PREFER : PLACE_NONE);
		assert_string_equal(d.victim_rule, preferred ? "prefer = comm:x (line 7)" : "");
		if (preferred)
			assert_non_null(strstr(d.reason, "(placed first by prefer = comm:x (line 7))"));
	}

	/* Every candidate avoided: the policy still chooses, and says so. */
	setup(NULL);
	for (unsigned i = 0; i < n_procs; i++)
		place(i, PLACE_AVOID, 9);
	struct policy_decision d = decide(SCOPE_MACHINE, 0, "kill-largest");
	assert_int_equal(d.victim_pid, 100);
	assert_int_equal(d.victim_place, PLACE_AVOID);
	assert_non_null(strstr(d.reason, "placed last by avoid = comm:x (line 9): no other candidate"));
}

/* kill = largest-leaf: the session leader and an interactive shell are
 * never candidates; whichever process a policy picks in the job, its
 * largest other process goes. */
static void test_largest_leaf(void **state)
{
	(void)state;
	struct policy_decision d;
	char why[128];

	groups[BATCH].kill = KILL_LARGEST_LEAF;
	/* 201 (20 MiB) is the shell leading its session; 200 a build step. */
	procs[3].sid = procs[3].pgid = 201;
	procs[3].tty_nr = 34816;
	snprintf(procs[3].comm, sizeof(procs[3].comm), "bash");
	procs[2].sid = 201;
	procs[2].pgid = 200;
	procs[2].tty_nr = 34816;
	d = decide(SCOPE_JOB, BATCH, "kill-largest");
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 200);
	assert_true(policy_excluded(&(struct policy_input){.groups = groups, .n_groups = 3}, &procs[3], why,
				    sizeof(why)));
	assert_string_equal(why, "the session leader (kill = largest-leaf)");

	/* A nested interactive shell (its own group, the terminal) is spared
	 * too; a shell running a script in its caller's group is not. */
	add_proc(202, BATCH, 30, 2002, 0, "zsh");
	procs[5].sid = 201;
	procs[5].pgid = 202;
	procs[5].tty_nr = 34816;
	d = decide(SCOPE_JOB, BATCH, "kill-largest");
	assert_int_equal(d.victim_pid, 200);
	procs[5].pgid = 200;
	d = decide(SCOPE_JOB, BATCH, "kill-largest");
	assert_int_equal(d.victim_pid, 202);

	/* kill-newest picks 202's successor, the job kills its largest. */
	setup(NULL);
	groups[BATCH].kill = KILL_LARGEST_LEAF;
	procs[3].sid = 201;
	add_proc(203, BATCH, 1, 2010, 0, "cc1");
	procs[5].sid = 201;
	d = decide(SCOPE_JOB, BATCH, "kill-newest");
	assert_int_equal(d.victim_pid, 200);
	assert_non_null(strstr(d.reason, "process 203 started last"));
	assert_non_null(strstr(d.reason, "kills its largest process instead (kill = largest-leaf)"));

	/* Only the shell left: it is the job's only candidate, and the job
	 * pays with it rather than handing its OOM on. */
	setup(NULL);
	groups[BATCH].kill = KILL_LARGEST_LEAF;
	procs[2].oom_score_adj = -1000;
	procs[3].sid = 201;
	d = decide(SCOPE_JOB, BATCH, "kill-largest, kernel");
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 201);
	assert_non_null(strstr(d.reason, "the session leader is not spared"));
}

/* A hog that leads its own session (setsid()) in a kill = largest-leaf job
 * is spared only while the rest of its job holds a quarter of what it does:
 * the machine's choice never moves to another job for it. */
static void test_largest_leaf_setsid(void **state)
{
	(void)state;
	struct policy_decision d;
	char why[128];

	/* batch: 200 (10 MiB), 201 (20 MiB) and a 200 MiB session leader. */
	groups[BATCH].kill = KILL_LARGEST_LEAF;
	add_proc(202, BATCH, 200, 2002, 0, "hog");
	procs[5].sid = procs[5].pgid = 202;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kernel");
	assert_int_equal(d.action, ACTION_KILL);
	assert_int_equal(d.victim_pid, 202);
	assert_non_null(strstr(d.reason, "the session leader is not spared"));
	assert_false(policy_excluded(&(struct policy_input){.groups = groups, .n_groups = 3}, &procs[5], why,
				     sizeof(why)));
	d = decide(SCOPE_MACHINE, 0, "kill-largest, kernel");
	assert_int_equal(d.victim_pid, 202);
	d = decide(SCOPE_JOB, BATCH, "kill-newest, kernel");
	assert_int_equal(d.victim_pid, 202);

	/* Its job's only process: still the job's to pay, not web's. */
	procs[2].oom_score_adj = procs[3].oom_score_adj = -1000;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kernel");
	assert_int_equal(d.victim_pid, 202);
	d = decide(SCOPE_MACHINE, 0, "kill-largest, kernel");
	assert_int_equal(d.victim_pid, 202);

	/* With the rest of the job holding a quarter of it, the leader is
	 * spared and the job's largest other process goes (batch, not web). */
	procs[2].oom_score_adj = procs[3].oom_score_adj = 0;
	procs[5].rss_bytes = 120 * MiB;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kernel");
	assert_int_equal(d.victim_pid, 201);
	assert_true(policy_excluded(&(struct policy_input){.groups = groups, .n_groups = 3}, &procs[5], why,
				    sizeof(why)));
	assert_string_equal(why, "the session leader (kill = largest-leaf)");
	/* One byte more than four times the rest: it goes. */
	procs[5].rss_bytes = 120 * MiB + 1;
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kernel");
	assert_int_equal(d.victim_pid, 202);

	/* An interactive shell holding the job's memory likewise. */
	procs[5].sid = 201;
	procs[5].tty_nr = 34816;
	snprintf(procs[5].comm, sizeof(procs[5].comm), "bash");
	d = decide(SCOPE_MACHINE, 0, "kill-lowest, kernel");
	assert_int_equal(d.victim_pid, 202);
	assert_non_null(strstr(d.reason, "the shell is not spared"));
}

/* A small deterministic generator: the same inputs on every run. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* policy_rank() puts first what policy_decide() chooses, for every kill
 * policy at both levels, on random snapshots with rules, ties and
 * protection: explain shows the daemon's own order. */
static void test_rank_is_decision(void **state)
{
	(void)state;
	static const enum policy_kind kinds[] = {POLICY_KILL_LOWEST, POLICY_KILL_NEWEST, POLICY_KILL_LARGEST,
						 POLICY_KILL_OVER_EXPECTED};
	unsigned order[8], decided = 0;

	for (int trial = 0; trial < 2000; trial++) {
		setup(NULL);
		n_procs = 0;
		for (unsigned g = 0; g < 3; g++) {
			groups[g].priority = (unsigned)(next() % 3) * 100;
			groups[g].usage_bytes = (next() % 4) * MiB;
			groups[g].expect_bytes = (next() % 3) * MiB;
		}
		unsigned n = 1 + (unsigned)(next() % 8);
		for (unsigned i = 0; i < n; i++) {
			add_proc((pid_t)(10 + i), (int)(next() % 3), next() % 3, next() % 3,
				 (int)(next() % 3) - 1, "p");
			uint64_t r = next() % 6;
			if (r < 3)
				place(i, (enum policy_place)r, 1);
			if (r == 3)
				procs[i].oom_score_adj = -1000;
		}
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			for (int scope = 0; scope < 2; scope++) {
				char chain_text[64];
				struct policy_chain chain;
				struct policy_decision d;
				snprintf(chain_text, sizeof(chain_text), "%s", policy_kind_name(kinds[k]));
				struct policy_input in = input(scope ? SCOPE_JOB : SCOPE_MACHINE,
							       (unsigned)(next() % 3), chain_text, &chain);
				assert_true(policy_ranks(kinds[k]));
				unsigned count = policy_rank(&in, kinds[k], order, 8);
				assert_int_equal(policy_decide(&in, &d), 0);
				if (count == 0) {
					assert_int_equal(d.action, ACTION_NONE);
					continue;
				}
				decided++;
				if (d.victim_pid != procs[order[0]].pid)
					fail_msg("trial %d %s: ranked %d first, decided %d (%s)", trial,
						 chain_text, procs[order[0]].pid, d.victim_pid, d.reason);
				/* Fewer slots than candidates keep the best ones, in order. */
				unsigned top[2];
				assert_int_equal(policy_rank(&in, kinds[k], top, 1), count);
				assert_int_equal(top[0], order[0]);
			}
	}
	assert_true(decided > 1000); /* the generator made real choices */
	assert_false(policy_ranks(POLICY_GROW));
	assert_false(policy_ranks(POLICY_REPORT));
}

/* A process in no job of a machine at the v2 root: protected only where
 * root alone may have put it (oomkitd.conf(5), RULES). */
static void test_escaped_rule(void **state)
{
	static const struct {
		int delegated;
		bool truncated, escaped;
	} cases[] = {
	    {0, false, false},		  /* root's cgroups all the way down */
	    {1, false, true},		  /* a user may write its cgroup or an ancestor */
	    {1, true, true},		  /* ... nested deep besides */
	    {0, true, true},		  /* nested past the path the kernel shows whole */
	    {-ENOENT, false, true},	  /* removed while it was read */
	    {-EACCES, false, true},	  /* an owner that cannot be read is no root */
	    {-ENAMETOOLONG, false, true}, /* longer than the walk holds */
	    {-EINVAL, false, true},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (policy_escaped(cases[i].delegated, cases[i].truncated) != cases[i].escaped)
			fail_msg("case %zu: delegated %d truncated %d: wanted %s", i, cases[i].delegated,
				 cases[i].truncated, cases[i].escaped ? "escaped" : "protected");

	static const struct {
		unsigned priorities[4], n, want;
	} prio[] = {
	    {{200, 300, 400, 600}, 4, 200},
	    {{900, 100, 500}, 3, 100},
	    {{0, 1000}, 2, 0},
	    {{1000}, 1, 1000},
	    {{0}, 0, 0}, /* no job at all: first */
	};
	for (size_t i = 0; i < sizeof(prio) / sizeof(prio[0]); i++) {
		struct policy_group g[4] = {0};
		for (unsigned k = 0; k < prio[i].n; k++)
			g[k].priority = prio[i].priorities[k];
		assert_int_equal(policy_escaped_priority(g, prio[i].n), prio[i].want);
	}
}

/* The machine of the default systemd configuration, in miniature: apps
 * (200), services (300), the rest of the machine (protected, in no job) and
 * what left the jobs for a cgroup of its user's. */
enum { APPS = 0, SERVICES = 1, OTHER = 2, ESCAPED = 3 };

static void test_escaped_ranking(void **state)
{
	static const struct {
		const char *name;
		const char *chain;
		uint64_t hog_mib; /* the escaped hog, 0: none */
		uint64_t app_mib; /* an app of another user's */
		int hog_adj;	  /* its oom_score_adj */
		pid_t victim;	  /* 0: nothing chosen */
		const char *reason_has;
	} cases[] = {
	    /* The attack: a hog in user@1000.service/evil is chosen, not the
	     * app or the root service, however large the rest of the machine. */
	    {"hog escaped", "kill-lowest", 800, 100, 0, 900, "in a cgroup uid 1000 may write"},
	    {"hog escaped, named", "kill-lowest", 800, 100, 0, 900,
	     "left the jobs (escaped) rank with the lowest"},
	    {"hog escaped, largest", "kill-largest", 800, 100, 0, 900, "of job (escaped)"},
	    {"hog escaped, newest", "kill-newest", 800, 100, 0, 900, "started last"},
	    /* Ranked with the lowest job, by size: a larger app goes first, as
	     * it would beside the hog had the hog stayed in its own app. */
	    {"app larger", "kill-lowest", 300, 900, 0, 500, "job apps has the lowest priority"},
	    /* The user manager alone (small) is no reason to spare an app. */
	    {"nothing escaped", "kill-lowest", 0, 100, 0, 500, "job apps"},
	    /* What the kernel may never kill stays unchosen anywhere. */
	    {"adj -1000", "kill-lowest", 800, 100, -1000, 500, "job apps"},
	    /* kill-over-expected takes jobs above their expectation only. */
	    {"over expected", "kill-over-expected", 800, 100, 0, 0, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct policy_group g[4] = {
		    [APPS] = {.name = "apps", .priority = 200, .limit_bytes = UINT64_MAX, .kill = KILL_JOB},
		    [SERVICES] = {.name = "services",
				  .priority = 300,
				  .usage_bytes = 400 * MiB,
				  .limit_bytes = UINT64_MAX},
		    [OTHER] = {.name = "(other)", .usage_bytes = 4000 * MiB, .omit = true},
		    [ESCAPED] = {.name = "(escaped)", .escaped = true},
		};
		struct policy_proc p[5];
		unsigned n = 0;
		g[ESCAPED].priority = policy_escaped_priority(g, 2);
		memset(p, 0, sizeof(p));
		/* journald-like, in no job, root's: protected, the largest of all. */
		p[n++] = (struct policy_proc){.pid = 100,
					      .group = OTHER,
					      .rss_bytes = 2000 * MiB,
					      .start_time = 10,
					      .place = policy_systemd_place(PLACE_NONE, true, false),
					      .cgroup_owner = (uid_t)-1};
		p[n++] = (struct policy_proc){.pid = 300,
					      .group = SERVICES,
					      .rss_bytes = 400 * MiB,
					      .start_time = 20,
					      .cgroup_owner = (uid_t)-1};
		p[n++] = (struct policy_proc){.pid = 500,
					      .group = APPS,
					      .rss_bytes = cases[i].app_mib * MiB,
					      .start_time = 30,
					      .cgroup_owner = (uid_t)-1};
		g[APPS].usage_bytes = cases[i].app_mib * MiB;
		/* The user manager, in user@1000.service/init.scope: escaped too. */
		p[n++] =
		    (struct policy_proc){.pid = 800,
					 .group = ESCAPED,
					 .rss_bytes = 10 * MiB,
					 .start_time = 5,
					 .cgroup_owner = 1000,
					 .cgroup = "user.slice/user-1000.slice/user@1000.service/init.scope"};
		g[ESCAPED].usage_bytes = 10 * MiB;
		if (cases[i].hog_mib) {
			p[n++] = (struct policy_proc){
			    .pid = 900,
			    .group = ESCAPED,
			    .rss_bytes = cases[i].hog_mib * MiB,
			    .start_time = 40,
			    .oom_score_adj = cases[i].hog_adj,
			    .cgroup_owner = 1000,
			    .cgroup = "user.slice/user-1000.slice/user@1000.service/evil"};
			/* What may be killed of it (snapshot.c): not a -1000. */
			if (cases[i].hog_adj > -1000)
				g[ESCAPED].usage_bytes += cases[i].hog_mib * MiB;
		}
		for (unsigned k = 0; k < n; k++)
			snprintf(p[k].comm, sizeof(p[k].comm), "p%d", p[k].pid);
		struct policy_chain chain;
		char bad[64];
		assert_int_equal(config_parse_chain(cases[i].chain, &chain, bad, sizeof(bad)), 0);
		struct policy_input in = {.scope = SCOPE_MACHINE,
					  .groups = g,
					  .n_groups = 4,
					  .procs = p,
					  .n_procs = n,
					  .capacity_bytes = 8000 * MiB,
					  .protected_pids = protected_pids,
					  .n_protected_pids = 2,
					  .chain = &chain};
		struct policy_decision d;
		assert_int_equal(policy_decide(&in, &d), 0);
		if (d.victim_pid != cases[i].victim)
			fail_msg("%s: got %s of %d (%s), wanted %d", cases[i].name,
				 policy_action_name(d.action), d.victim_pid, d.reason, cases[i].victim);
		if (cases[i].reason_has && !strstr(d.reason, cases[i].reason_has))
			fail_msg("%s: reason '%s' lacks '%s'", cases[i].name, d.reason, cases[i].reason_has);
		/* An escaped victim is killed alone, never its "job". */
		if (d.victim_pid == 900)
			assert_int_equal(d.action, ACTION_KILL);
		/* The rest of the machine's process is never a candidate. */
		char why[POLICY_RULE_MAX + 32];
		assert_true(policy_excluded(&in, &p[0], why, sizeof(why)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_policies, setup),
	    cmocka_unit_test_setup(test_trail, setup),
	    cmocka_unit_test_setup(test_started_when, setup),
	    cmocka_unit_test_setup(test_grow, setup),
	    cmocka_unit_test_setup(test_protection, setup),
	    cmocka_unit_test_setup(test_systemd_preference, setup),
	    cmocka_unit_test_setup(test_kill_job, setup),
	    cmocka_unit_test_setup(test_ties, setup),
	    cmocka_unit_test_setup(test_resume_and_prompt, setup),
	    cmocka_unit_test_setup(test_shed, setup),
	    cmocka_unit_test_setup(test_bad_input, setup),
	    cmocka_unit_test_setup(test_rules, setup),
	    cmocka_unit_test_setup(test_largest_leaf, setup),
	    cmocka_unit_test_setup(test_largest_leaf_setsid, setup),
	    cmocka_unit_test_setup(test_rank_is_decision, setup),
	    cmocka_unit_test(test_escaped_rule),
	    cmocka_unit_test(test_escaped_ranking),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
