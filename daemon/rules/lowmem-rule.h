/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lowmem-rule.h - when the machine at the cgroup v2 root is out of memory:
 * the rule of lowmem.c, pure (no kernel files, no clock), so that tables
 * can test it.
 *
 * Two ways to be out of memory, both read only while the machine stalls on
 * memory (lowmem.h):
 *
 *  - No room: what the machine can still reclaim (MemAvailable) plus the
 *    RAM swapping can still free (the free space of swap files and
 *    partitions; of zram, what compression saves: oomkit_system_swap()) is
 *    below machine_available.  While a machine swaps MemAvailable stays at
 *    the kernel's reserve, full swap or empty; the sum tells them apart.
 *    machine_available is a size, or a share of RAM + swap between
 *    LOWMEM_ROOM_FLOOR and LOWMEM_ROOM_CAP (the default, 2 %).
 *  - Thrashing: every non-idle task stalled on memory at once (PSI "full")
 *    for at least machine_full_stall of the time in each third of the last
 *    machine_full_stall_duration: the machine makes no progress while its
 *    room looks fine (page cache thrown out and read again; zram
 *    compressing what it just decompressed).  Each third, not the average:
 *    a machine that swaps in bursts (a job growing into swap) stalls fully
 *    for seconds and then runs; one that thrashes stalls all the time.
 *    That is how systemd-oomd reads a unit's pressure (its avg10 above the
 *    limit all through the duration), with its defaults, 60 % for 30 s.
 */
#ifndef OOMKITD_LOWMEM_RULE_H
#define OOMKITD_LOWMEM_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

#define LOWMEM_STALL_US 5000	      /* the trigger: this much stall ... */
#define LOWMEM_WINDOW_SHORT_US 500000 /* ... within this window, with CAP_SYS_RESOURCE, */
#define LOWMEM_WINDOW_US 2000000      /* ... or this one without (kernels from 6.5 allow that) */
#define LOWMEM_RECHECK_MS 20	      /* while stalling, the machine is looked at this often */

#define LOWMEM_ROOM_FLOOR (64ull << 20) /* a share of RAM + swap is at least this ... */
#define LOWMEM_ROOM_CAP (1ull << 30)	/* ... and at most this */
#define LOWMEM_FULL_SAMPLES 64		/* full-stall samples kept ... */
#define LOWMEM_FULL_PER_SPAN 32		/* ... this many a duration: two durations */
#define LOWMEM_FULL_PIECES 3		/* the stall is held in each of this many pieces of it */

/* The room below which the machine is out of memory, for ram_bytes of RAM
 * and swap_bytes of swap. */
uint64_t lowmem_min_room(const struct config_share *share, uint64_t ram_bytes, uint64_t swap_bytes);

/* The PSI "full" stall total, sampled on each look. */
struct lowmem_full {
	struct {
		uint64_t at_ns;
		uint64_t full_us;
	} s[LOWMEM_FULL_SAMPLES];
	unsigned next; /* where the next sample goes */
	unsigned n;    /* samples kept */
};

/* Forgets every sample: after a kill the stall before it says nothing. */
void lowmem_full_reset(struct lowmem_full *f);

/* Records the total full_us at now_ns (at most LOWMEM_FULL_PER_SPAN samples
 * a span) and returns the share of time, in percent times 100, that the
 * machine was fully stalled in each of the LOWMEM_FULL_PIECES pieces of the
 * last span_ns, the least of them (each piece measured from the newest
 * sample at or before its start); -1 while no sample is span_ns old. */
int64_t lowmem_full_share(struct lowmem_full *f, uint64_t now_ns, uint64_t full_us, uint64_t span_ns);

enum lowmem_out {
	LOWMEM_NOT_OUT = 0,
	LOWMEM_NO_ROOM,	  /* MemAvailable + usable swap below the minimum */
	LOWMEM_THRASHING, /* the full stall above its limit all through its duration */
};

struct lowmem_input {
	uint64_t available_bytes;    /* MemAvailable */
	uint64_t swap_usable_bytes;  /* oomkit_system_swap()'s usable_bytes */
	uint64_t min_room_bytes;     /* lowmem_min_room() */
	int64_t full_share_x100;     /* lowmem_full_share(); -1: not known yet */
	unsigned full_limit_percent; /* machine_full_stall; 0: not looked at */
	uint64_t now_ns;
	uint64_t stalled_ns; /* when the "some" stall total last grew */
};

/* The decision of one look: whether the machine is out of memory now and
 * why, and until when to look again (0: no more; the next trigger wakes
 * the daemon). */
struct lowmem_look {
	enum lowmem_out out;
	uint64_t next_ns;
};
struct lowmem_look lowmem_decide(const struct lowmem_input *in);

/* The room the input has: MemAvailable plus usable swap. */
uint64_t lowmem_room(const struct lowmem_input *in);

#endif
