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

#include "config.h"
#include "oomkit.h"
#include "policy.h"

#define MiB (1024ull * 1024ull)

enum { WEB = 0, BATCH = 1, PLAYER = 2 };

static const char protect_web[][POLICY_COMM_MAX] = {"sshd", "postgres"};

/* The demo's machine: web is important and large, batch is small and least
 * important, player is in between and the newest. */
static struct policy_group groups[3];
static struct policy_proc procs[8];
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
					    .expect_bytes = 100 * MiB,
					    .protect = protect_web,
					    .n_protect = 2};
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
	return (struct policy_input){
	    .scope = scope,
	    .scope_group = group,
	    .groups = groups,
	    .n_groups = 3,
	    .procs = procs,
	    .n_procs = n_procs,
	    .capacity_bytes = 256 * MiB,
	    .protected_pids = protected_pids,
	    .n_protected_pids = 2,
	    .chain = chain,
	};
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
	    {"machine kill-newest", SCOPE_MACHINE, 0, "kill-newest", ACTION_KILL, 300, "started last"},
	    /* player: 70/20 = 350 %, batch 30/40 below, web 150/100 = 150 %. */
	    {"machine kill-over-expected", SCOPE_MACHINE, 0, "kill-over-expected", ACTION_KILL, 300,
	     "job player uses 350% of its expected 20M"},
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
	assert_non_null(strstr(d.trail, "grow: job batch is at its limit_max 64M"));
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

static void test_grow(void **state)
{
	(void)state;
	struct policy_decision d;

	/* Others use 100 MiB of 350: web may take 250 MiB, below its limit_max 300. */
	d = decide_capacity(WEB, "grow, kernel", 350 * MiB);
	assert_int_equal(d.action, ACTION_GROW);
	assert_int_equal(d.policy, POLICY_GROW);
	assert_int_equal(d.new_limit_bytes, 250 * MiB);
	assert_string_equal(d.reason,
			    "job web grows from 200M to 250M (limit_max 300M, 250 MiB of the machine "
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
	assert_non_null(strstr(d.trail, "job batch is at its limit_max 64M"));

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

	/* A name the job protects. */
	setup(NULL);
	snprintf(procs[0].comm, sizeof(procs[0].comm), "postgres");
	d = decide(SCOPE_MACHINE, 0, "kill-largest");
	assert_int_equal(d.victim_pid, 300);

	/* ... only in that job: a "postgres" in batch is fair game. */
	setup(NULL);
	snprintf(procs[3].comm, sizeof(procs[3].comm), "postgres");
	d = decide(SCOPE_MACHINE, 0, "kill-lowest");
	assert_int_equal(d.victim_pid, 201);

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_policies, setup),
	    cmocka_unit_test_setup(test_trail, setup),
	    cmocka_unit_test_setup(test_grow, setup),
	    cmocka_unit_test_setup(test_protection, setup),
	    cmocka_unit_test_setup(test_kill_job, setup),
	    cmocka_unit_test_setup(test_ties, setup),
	    cmocka_unit_test_setup(test_resume_and_prompt, setup),
	    cmocka_unit_test_setup(test_shed, setup),
	    cmocka_unit_test_setup(test_bad_input, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
