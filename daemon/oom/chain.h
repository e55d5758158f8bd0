/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chain.h - one OOM of a scope, from the decision to the report's last line:
 * take a snapshot, let policy.c walk the scope's chain, write the report's
 * head, act (or ask a person, or hand over to the kernel), and hand the
 * report to inflight.c, which finishes it with the outcome and the timings
 * once the action is done, without holding up the loop.  A prompt's answer and its
 * deadline come back here; an action that cannot be carried out gives the
 * rest of the chain its turn.  The same path serves the machine and a job.
 */
#ifndef OOMKITD_CHAIN_H
#define OOMKITD_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "oom/actions.h"
#include "oom/freeze.h"
#include "oom/inflight.h"
#include "base/loop.h"
#include "report/metrics.h"
#include "oomkit.h"
#include "oom/prompt.h"
#include "common/protocol.h"
#include "report/reports.h"
#include "scope/scope.h"
#include "oom/shed.h"
#include "oom/snapshot.h"
#include "report/stats.h"

struct chain {
	oomkit_ctx *ctx;
	const struct config *cfg; /* delay, reserve */
	bool dry_run;
	struct scopes *scopes;
	struct snapshot *snap;
	struct reports *reports;
	struct prompt *prompt;
	struct freeze *freeze; /* the growers held still while a question is open */
	struct actions *actions;
	struct inflight *inflight;
	struct shed *shed; /* the shed policy's runs; its resume is set by chain_init() */
	struct stats *stats;
	struct metrics *metrics;
	/* Memory priority, for the reports; NULL: none. */
	const struct protect *protect;
	char *buf; /* the reports' writer buffer */
	size_t buf_len;
};

/* c's pointers are set by the caller; this makes the buffer and registers
 * the prompt's deadline with the loop (the prompt's timer calls back here),
 * and makes a shed that gave back too little call back here to go on.
 * 0 or -errno. */
int chain_init(struct chain *c, struct loop *loop);
void chain_free(struct chain *c);
void chain_configure(struct chain *c, const struct config *cfg);

/* Runs scope's chain from first_step for the OOM ev.  Returns the verdict
 * for the library; outside a library handler, OOMKIT_KERNEL must be handed
 * over by the caller (oomkit_hand_to_kernel()). */
enum oomkit_verdict chain_run(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			      unsigned first_step);

/* `oomkit explain`: what scope's chain would do if it ran out of memory
 * now, as explain.h's JSON document, into buf (cap bytes); or, with
 * instances_of a job's name (scope unused), {"oomkitd_explain": 1, "job":
 * NAME, "instances": [...]}, one document per instance of the job.
 * Returns its length; -EMSGSIZE if it does not fit, -errno if the processes
 * cannot be read.  Allocates (a snapshot of its own): never on the OOM path. */
int chain_explain(struct chain *c, const struct scope *scope, const char *instances_of, char *buf,
		  size_t cap);

/* Whether scope's victim is still exiting: an OOM event then is the same OOM
 * signalling again, not a new one (the kernel's killer waits likewise). */
bool chain_victim_exiting(const struct chain *c, const struct scope *scope);

/* A person's answer to the open question, from a peer of uid (user: its
 * name); 0, or -errno, with a message for the person in msg either way.
 * Non-root peers may answer only a question that concerns them, and only
 * for their own processes and jobs ("chain", declining, is control.c's). */
int chain_answer(struct chain *c, const struct protocol_answer *a, uid_t uid, const char *user, char *msg,
		 size_t len);

/* An event as the library would have delivered it, for work done later (a
 * prompt's deadline, a delegated job's turn): rel's state now. */
void chain_synth_event(oomkit_ctx *ctx, const char *rel, oomkit_watch *watch, uint64_t time_ns,
		       struct oomkit_event *ev);

#endif
