/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * explain.h - `oomkit explain`: what a scope's chain would do if it ran out
 * of memory now, as JSON.  For each step of the chain: what it would decide
 * alone, and for the policies that choose a process, its ranking of the
 * candidates (policy_rank(), the order policy_decide() takes its victim by)
 * with the rule that placed each; the processes that are no candidates and
 * why; what the whole chain would do (policy_decide() itself), and the
 * hooks it would run around that (before_kill with its timeout, after_kill,
 * shed_command).  Nothing
 * here decides: every answer is policy.c's, on a snapshot taken the way an
 * OOM takes it (chain_explain()), so what explain shows is what an OOM does.
 */
#ifndef OOMKITD_EXPLAIN_H
#define OOMKITD_EXPLAIN_H

#include <stdbool.h>

#include "json.h"
#include "rules/policy.h"

#define EXPLAIN_LIST_MAX 64 /* candidates shown per ranking, and processes shown excluded */

#define EXPLAIN_HOOKS_MAX 16 /* hooks shown around the decision (a machine's shed asks every job) */

/* A hook the chain's decision would run (chain.c fills them in from the
 * configuration's own timings, config_before_kill_ms() and the others). */
struct explain_hook {
	const char *hook;	  /* "before_kill", "after_kill", "shed_command" */
	const char *job;	  /* whose hook it is */
	const char *command;	  /* as configured */
	uint64_t hook_timeout_ms; /* the job's hook_timeout (shed_command: unused) */
	uint64_t timeout_ms;	  /* how long it would run at most; 0: not run */
	const char *limit;	  /* what set timeout_ms: "hook_timeout", "delay", "shed_wait" */
};

struct explain_head {
	bool machine;	    /* the machine's chain, else a job's */
	const char *job;    /* the job's name; NULL for the machine */
	const char *cgroup; /* the scope's memcg, relative to the root */
	const struct explain_hook *hooks;
	unsigned n_hooks;     /* shown */
	unsigned hooks_count; /* that the decision would run (more than n_hooks: not all shown) */
};

/* Writes the explanation of dec (policy_decide() on in) as one JSON
 * document.  order has room for in->n_procs indices (the rankings'
 * scratch).  Errors stay in w->err. */
void explain_write(struct oomkit__json *w, const struct explain_head *h, const struct policy_input *in,
		   const struct policy_decision *dec, unsigned *order);

#endif
