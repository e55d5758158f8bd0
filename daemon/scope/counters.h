/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters.h - what happened to a scope, counted: its OOMs, the processes
 * killed in it (by policy), its limit raised, OOMs shedding resolved.  The
 * one owner of these counters: the modules where the events happen call
 * the counters_*() functions, and the metrics file and the control socket
 * read the fields.  Pure and allocation-free.
 */
#ifndef OOMKITD_COUNTERS_H
#define OOMKITD_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "rules/policy.h"

struct counters {
	uint64_t ooms;	/* OOMs of its own limit */
	uint64_t kills; /* processes killed in it (machine: by machine OOMs) */
	/* Processes killed in it, by the policy that chose them (machine: those
	 * of a machine OOM outside every job). */
	uint64_t kills_by_policy[POLICY__COUNT];
	uint64_t grows;		 /* times its limit was raised */
	uint64_t shed_successes; /* OOMs resolved by shedding, without a kill */
};

/* An OOM of the scope's own limit (counted once, however often it signals). */
void counters_oom(struct counters *c);

/* n processes killed by policy for an OOM of the scope counted in scope
 * (machine: whether that scope is the machine); victim: the counters of the
 * scope the processes were in, or NULL when they were in none (a machine
 * OOM's process outside every job, counted by policy for the machine). */
void counters_killed(struct counters *scope, bool machine, struct counters *victim, enum policy_kind policy,
		     uint64_t n);

/* The scope's limit was raised. */
void counters_grew(struct counters *c);

/* An OOM of the scope was resolved by shedding: nothing was killed. */
void counters_shed_resolved(struct counters *c);

#endif
