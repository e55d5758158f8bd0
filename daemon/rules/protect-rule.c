/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protect-rule.c - see protect-rule.h. */
#include <string.h>

#include "rules/protect-rule.h"

bool protect_pressed(const struct protect_machine *m)
{
	return m->stall_percent && m->some_x100 >= m->stall_percent * 100u;
}

bool protect_calm(const struct protect_machine *m)
{
	return !m->stall_percent || m->some_x100 < m->stall_percent * 50u;
}

/* The lowest and highest priority of the jobs that hold memory. */
static bool priority_range(const struct protect_job *jobs, unsigned n, unsigned *ret_lo, unsigned *ret_hi)
{
	unsigned lo = ~0u, hi = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!jobs[i].usage_bytes)
			continue;
		lo = jobs[i].priority < lo ? jobs[i].priority : lo;
		hi = jobs[i].priority > hi ? jobs[i].priority : hi;
	}
	*ret_lo = lo;
	*ret_hi = hi;
	return lo < hi;
}

/* Protection for the jobs above lo, the highest priorities first, within
 * the budget; within one priority in the order given. */
static void plan_protection(const struct protect_machine *m, const struct protect_job *jobs, unsigned n,
			    unsigned lo, struct protect_plan *plan)
{
	uint64_t budget = m->ram_bytes / PROTECT_SHARE_OF_RAM;
	unsigned bound = ~0u; /* priorities at or above it are done */

	for (;;) {
		unsigned p = lo;
		for (unsigned i = 0; i < n; i++)
			if (jobs[i].priority > p && jobs[i].priority < bound)
				p = jobs[i].priority;
		if (p == lo)
			return;
		for (unsigned i = 0; i < n; i++) {
			if (jobs[i].priority != p)
				continue;
			uint64_t want = jobs[i].start_usage_bytes;
			want = want < budget ? want : budget;
			budget -= want;
			/* Someone else's higher memory.low stays as it is. */
			plan[i].low_bytes = want > jobs[i].low_bytes ? want : 0;
		}
		bound = p;
	}
}

/* What job j may give back now: down to its floor, a step at most. */
static uint64_t reclaimable(const struct protect_machine *m, const struct protect_job *j)
{
	uint64_t floor = j->start_usage_bytes / 4;

	floor = floor > PROTECT_FLOOR_MIN ? floor : PROTECT_FLOOR_MIN;
	if (j->full_x100 >= PROTECT_JOB_STUCK_X100 || j->usage_bytes <= floor)
		return 0;
	uint64_t v = j->usage_bytes - floor;
	return v < m->step_bytes ? v : m->step_bytes;
}

int protect_decide(const struct protect_machine *m, const struct protect_job *jobs, unsigned n,
		   struct protect_plan *plan)
{
	unsigned lo, hi;
	int pick = -1;

	memset(plan, 0, n * sizeof(*plan));
	if (!priority_range(jobs, n, &lo, &hi))
		return -1;
	plan_protection(m, jobs, n, lo, plan);
	/* Nothing to reclaim into: the OOM rule's turn, not ours. */
	if (!m->step_bytes || m->room_bytes / 2 < m->min_room_bytes)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (jobs[i].priority != lo || !reclaimable(m, &jobs[i]))
			continue;
		if (pick < 0 || jobs[i].usage_bytes > jobs[pick].usage_bytes)
			pick = (int)i;
	}
	if (pick >= 0)
		plan[pick].reclaim_bytes = reclaimable(m, &jobs[pick]);
	return pick;
}
