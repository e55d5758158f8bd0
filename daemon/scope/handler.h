/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handler.h - the library's side of the scopes: watching a scope's OOMs and
 * taking over its OOM handling (the kernel killer held off for the delay),
 * the machine's pressure warnings, and the handlers liboomkit calls.  An OOM
 * event is matched to its scope and counted once, where the limit was hit,
 * then handed to chain.c; a delegated job's OOM first waits for its owner's
 * own handler (a timer here), and a dry run tells OOMs apart by counters.
 */
#ifndef OOMKITD_HANDLER_H
#define OOMKITD_HANDLER_H

#include <stdbool.h>
#include <stdint.h>

#include "oom/chain.h"
#include "config/config.h"
#include "base/loop.h"
#include "report/metrics.h"
#include "oomkit.h"
#include "scope/scope.h"
#include "report/stats.h"

struct handler {
	oomkit_ctx *ctx;
	const struct config *cfg; /* delay */
	bool dry_run;
	struct scopes *scopes;
	struct chain *chain;
	struct metrics *metrics;
	struct stats *stats;
	oomkit_watch *pressure_watch; /* the machine's critical pressure */
	uint64_t pressure_logged_ns;
	struct loop_timer delegated; /* the earliest delegated job's turn */
};

/* h's pointers are set by the caller; registers the delegated jobs' timer. */
int handler_init(struct handler *h, struct loop *loop);
void handler_configure(struct handler *h, const struct config *cfg);

/* Watches scope's OOMs (if not yet) and, unless a dry run, takes its OOM
 * handling over with delay_ms; failures are logged, except an instance's
 * -ENOENT (its cgroup went meanwhile), which is returned for adopt.c.  A
 * scope without a limit on cgroup v2 is watched, not taken over: 0. */
int handler_watch(struct handler *h, struct scope *scope, uint64_t delay_ms);
/* After scope's limit changed (a reload, a write over it): takes it over if
 * it is not held (on cgroup v2 a scope without a limit could not be, and is
 * left alone).  True if it took it over again.  An OOM handed to the kernel
 * stays the kernel's (oomkit_take_over()). */
bool handler_hold_after_limit(struct handler *h, struct scope *scope, uint64_t delay_ms);
/* Stops watching scope (its memcg gets the kernel killer back). */
void handler_unwatch(struct handler *h, struct scope *scope);
/* Critical memory pressure of the machine: counted and logged at most every 10 s. */
int handler_watch_pressure(struct handler *h);

/* Notes the scope's OOM counter now, so a dry run counts only later OOMs. */
void handler_note_oom_count(struct handler *h, struct scope *scope);

#endif
