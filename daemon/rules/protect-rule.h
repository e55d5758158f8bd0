/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect-rule.h - memory priority: which jobs the kernel should reclaim
 * from first while the machine is short of memory, before anyone is killed.
 * The rule of protect.c, pure (no kernel files, no clock), so that tables
 * can test it.
 *
 * While the machine stalls on memory (PSI "some" at memory_priority_stall
 * or more over the last 10 s) the kernel reclaims from whoever it finds: the
 * important service waits for its pages as long as the batch job does.
 * oomkitd knows the jobs' priorities, and uses them on cgroup v2:
 *
 *  - Protect: every job above the lowest priority present gets a memory.low
 *    of its working set (its usage when the episode began), the highest
 *    priorities first, within half of RAM in all: reclaim leaves it alone
 *    while unprotected memory is found elsewhere.  A memory.low someone set
 *    higher is kept.
 *  - Reclaim: the jobs at the lowest priority, while some job is above it,
 *    give up to memory_priority_step a look, the largest first, through
 *    memory.reclaim: their cold pages go to swap before the important ones
 *    are looked at.  Never a protected job; never below a quarter of its
 *    usage when the episode began (PROTECT_FLOOR_MIN at least); never while
 *    it stalls itself (its own memory.pressure "full" at PROTECT_JOB_STUCK
 *    or more: what it lost it needs again); never when the machine has no
 *    room left to reclaim into (MemAvailable + usable swap below twice the
 *    machine's minimum): then the OOM rule decides, not this one.
 *
 * The episode ends when the stall has stayed below half of
 * memory_priority_stall for PROTECT_CALM_MS; every memory.low is then put
 * back.
 */
#ifndef OOMKITD_PROTECT_RULE_H
#define OOMKITD_PROTECT_RULE_H

#include <stdbool.h>
#include <stdint.h>

#define PROTECT_TICK_MS 1000		/* how often the machine is looked at */
#define PROTECT_CALM_MS 30000		/* calm this long ends an episode */
#define PROTECT_FLOOR_MIN (16ull << 20) /* reclaim never takes a job below this */
#define PROTECT_JOB_STUCK_X100 1000	/* a job's own full stall (avg10) at 10 % */
#define PROTECT_SHARE_OF_RAM 2		/* protection in all: RAM / this */

struct protect_job {
	unsigned priority;
	uint64_t usage_bytes;	    /* memory.current now */
	uint64_t start_usage_bytes; /* at the episode's start (0: it had none then) */
	uint64_t low_bytes;	    /* memory.low someone else set (not ours) */
	unsigned full_x100;	    /* its own memory.pressure full avg10, percent x 100 */
};

struct protect_machine {
	uint64_t ram_bytes;	 /* MemTotal */
	uint64_t room_bytes;	 /* MemAvailable + usable swap */
	uint64_t min_room_bytes; /* the OOM rule's minimum (lowmem_min_room()) */
	unsigned some_x100;	 /* PSI some avg10, percent x 100 */
	unsigned stall_percent;	 /* memory_priority_stall */
	uint64_t step_bytes;	 /* memory_priority_step */
};

/* Whether the machine is short enough of memory to start an episode
 * (pressed) or calm enough that it may end (calm; it ends after
 * PROTECT_CALM_MS of that). */
bool protect_pressed(const struct protect_machine *m);
bool protect_calm(const struct protect_machine *m);

struct protect_plan {
	uint64_t low_bytes;	/* memory.low it should have; 0: none of ours */
	uint64_t reclaim_bytes; /* to ask memory.reclaim for now; 0: none */
};

/* The plan for n jobs during an episode, into plan[0..n-1]: whom to
 * protect and how much, and at most one job to reclaim from this look.
 * Returns the index of that job, or -1. */
int protect_decide(const struct protect_machine *m, const struct protect_job *jobs, unsigned n,
		   struct protect_plan *plan);

#endif
