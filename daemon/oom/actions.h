/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * actions.h - carrying out a decision: kill one process (through liboomkit's
 * pidfd kill, which checks the start time so a reused pid is never hit, and
 * does not wait: the pidfd is the caller's to watch), kill a whole job, or
 * raise a job's limit; and counting what was done in the scopes and the
 * daemon's stats.
 */
#ifndef OOMKITD_ACTIONS_H
#define OOMKITD_ACTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "oom/lend.h"
#include "oomkit.h"
#include "rules/policy.h"
#include "scope/scope.h"
#include "oom/snapshot.h"
#include "report/stats.h"

struct actions {
	oomkit_ctx *ctx;
	struct snapshot *snap; /* the groups the decisions name */
	struct stats *stats;
	struct lend *lend; /* a graceful kill's victim is lent headroom to exit */
};

void actions_init(struct actions *a, oomkit_ctx *ctx, struct snapshot *snap, struct stats *stats,
		  struct lend *lend);

/* How an action started.  A kill of one process: its pidfd, the signal
 * sent, and for a graceful kill (the victim's job has a kill_signal) the
 * grace before SIGKILL. */
struct action_started {
	int pidfd; /* -1: no process to wait for */
	int sig;
	uint64_t grace_ms; /* 0: sig was SIGKILL */
};

/* Carries out a kill, a whole-job kill or a grow decided for scope, without
 * waiting for a victim to exit: a killed process's pidfd goes to *ret, to be
 * waited for on the loop (inflight.h).  A graceful kill's grace is cut to
 * budget_ms, what is left of the delay; the scope is lent headroom for it,
 * since a victim asleep at the limit could run no handler.  Writes what
 * happened into result.  0, or -errno if it could not be done. */
int actions_start(struct actions *a, struct scope *scope, const struct policy_input *in,
		  const struct policy_decision *dec, uint64_t budget_ms, char *result, size_t len,
		  struct action_started *ret);

/* Sets a scope's last action (shown by `oomkit status`). */
void actions_set_last(struct scope *scope, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
