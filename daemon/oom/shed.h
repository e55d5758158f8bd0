/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shed.h - the shed policy carried out: a job is asked to give
 * memory back -- its shed_signal to each of its processes that catches it,
 * its shed_command -- and is lent headroom so that it can run to do so
 * (lend.h).  Then, as state on the loop and never as a wait in it, its usage
 * is watched until it falls below a margin under its limit (resolved: the
 * report says how much came back, nothing is killed) or shed_wait has passed
 * (the chain goes on from the next step, through the callback chain.c
 * registers).  While a scope sheds, its further OOM events are the same OOM.
 * Nothing here allocates.
 */
#ifndef OOMKITD_SHED_H
#define OOMKITD_SHED_H

#include <stdbool.h>
#include <stdint.h>

#include "oom/inflight.h"
#include "oom/lend.h"
#include "base/loop.h"
#include "report/metrics.h"
#include "oomkit.h"
#include "rules/policy.h"
#include "scope/scope.h"
#include "oom/snapshot.h"

#define SHED_MAX 16

struct shed_run {
	bool used;
	struct scope_ref scope;
	char rel[SCOPE_REL_MAX];
	char label[SCOPE_LABEL_MAX];
	struct flight *fl; /* its report, landed when the shed is over */
	unsigned next_step;
	uint64_t event_ns, asked_ns, deadline_ns;
	bool lent;		 /* the target is the loan's: below the limit before it */
	uint64_t limit_bytes;	 /* without a loan: the limit, where under_oom must clear too */
	uint64_t below_ns;	 /* when usage fell below the target: resolved (0: not yet) */
	uint64_t fell_ns;	 /* when usage last fell: it is over once it stops */
	struct report_shed seen; /* what the report says */
};

/* The chain goes on at next_step for scope, whose OOM began at event_ns. */
typedef void (*shed_resume_fn)(void *data, struct scope *scope, uint64_t event_ns, unsigned next_step);

struct shed {
	/* Set by the caller before shed_init(). */
	oomkit_ctx *ctx;
	struct lend *lend;
	struct snapshot *snap;	   /* the groups a decision names */
	struct inflight *inflight; /* and its hooks: a shed_command runs for the shed's flight */
	struct reports *reports;   /* the report's path, for the shed_command */
	struct metrics *metrics;
	shed_resume_fn resume;
	void *resume_data;
	/* Its own. */
	struct loop_timer timer;
	struct shed_run runs[SHED_MAX];
};

int shed_init(struct shed *s, struct loop *loop);

/* Carries out the shed decision dec for scope (in: the snapshot it was made
 * on; fl: its report, which the shed now owns and lands) for up to wait_ms.
 * Writes what was asked into result.  0: under way; -errno: nothing could
 * be asked (fl is left to the caller, result says why). */
int shed_start(struct shed *s, struct scope *scope, const struct policy_input *in,
	       const struct policy_decision *dec, struct flight *fl, uint64_t event_ns, uint64_t wait_ms,
	       char *result, size_t len);

/* Whether scope is shedding: its OOM events meanwhile are the same OOM. */
bool shed_active(const struct shed *s, const struct scope *scope);

/* Whether a shed decision dec asks group g of in (the one it names, or,
 * naming none, every group that can shed): shed_start()'s choice, and
 * explain's. */
bool shed_asks(const struct policy_input *in, const struct policy_decision *dec, unsigned g);

/* At a stop: every shed landed as far as it got. */
void shed_stop(struct shed *s);

#endif
