/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * explain.h - `oomkit explain`: what a scope's chain would do if it ran out
 * of memory now, as JSON.  For each step of the chain: what it would decide
 * alone, and for the policies that choose a process, its ranking of the
 * candidates (policy_rank(), the order policy_decide() takes its victim by)
 * with the rule that placed each; the processes that are no candidates and
 * why; and what the whole chain would do (policy_decide() itself).  Nothing
 * here decides: every answer is policy.c's, on a snapshot taken the way an
 * OOM takes it (chain_explain()), so what explain shows is what an OOM does.
 */
#ifndef OOMKITD_EXPLAIN_H
#define OOMKITD_EXPLAIN_H

#include <stdbool.h>

#include "json.h"
#include "policy.h"

#define EXPLAIN_LIST_MAX 64 /* candidates shown per ranking, and processes shown excluded */

struct explain_head {
	bool machine;	    /* the machine's chain, else a job's */
	const char *job;    /* the job's name; NULL for the machine */
	const char *cgroup; /* the scope's memcg, relative to the root */
};

/* Writes the explanation as one JSON document.  order has room for
 * in->n_procs indices (the rankings' scratch).  Errors stay in w->err. */
void explain_write(struct oomkit__json *w, const struct explain_head *h, const struct policy_input *in,
		   unsigned *order);

#endif
