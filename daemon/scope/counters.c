/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters.c - a scope's event counters (counters.h): incremented here only.
 */
#include "scope/counters.h"

void counters_oom(struct counters *c)
{
	c->ooms++;
}

void counters_killed(struct counters *scope, bool machine, struct counters *victim, enum policy_kind policy,
		     uint64_t n)
{
	if (victim)
		victim->kills += n;
	if (machine)
		scope->kills += n;
	/* Counted where the process was: a machine OOM's victim outside every
	 * job counts for the machine. */
	(victim ? victim : scope)->kills_by_policy[policy] += n;
}

void counters_grew(struct counters *c)
{
	c->grows++;
}

void counters_shed_resolved(struct counters *c)
{
	c->shed_successes++;
}
