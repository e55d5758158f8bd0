/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lowmem.h - the machine at the cgroup v2 root (machine = /sys/fs/cgroup):
 * it has no memory.events, no memory.max and no memory.high to hold, so no
 * kernel event says it is out of memory before the kernel's OOM killer acts.
 * What the kernel does say, without being asked, is that tasks begin to stall
 * on memory: a PSI trigger on /proc/pressure/memory (5 ms of stall in 0.5 s,
 * or in 2 s where the kernel allows an unprivileged process only that)
 * wakes the daemon, and the rule of lowmem-rule.h decides whether the
 * machine is out of memory (no room left in RAM and swap together, or
 * thrashing): its chain runs as for any machine OOM.
 *
 * A trigger fires at most once a window, and the first stall usually comes
 * while page cache is still being reclaimed, before MemAvailable is low: so
 * while the machine stalls (its "some" stall total grows) the daemon looks
 * again every LOWMEM_RECHECK_MS, and stops once a whole window passes
 * without a stall.  An idle machine wakes the daemon never.  Nothing here
 * allocates: /proc/meminfo, /proc/swaps, zram's mm_stat and the PSI file are
 * read into liboomkit's buffers.
 */
#ifndef OOMKITD_LOWMEM_H
#define OOMKITD_LOWMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "oom/chain.h"
#include "config/config.h"
#include "base/loop.h"
#include "rules/lowmem-rule.h"
#include "oomkit.h"
#include "scope/scope.h"

struct lowmem {
	oomkit_ctx *ctx;
	const struct config *cfg;
	struct scopes *scopes;
	struct chain *chain;
	oomkit_watch *watch;	   /* NULL: the machine is not the v2 root */
	struct loop_timer recheck; /* armed only while the machine stalls */
	uint64_t stall_us;	   /* the "some" stall total at the last look */
	uint64_t stalled_ns;	   /* when it last grew */
	uint64_t looks;		   /* how often MemAvailable was read (for the log) */
	struct lowmem_full full;   /* the "full" stall total, sampled on each look */
	uint32_t window_us;	   /* of the trigger in use */
};

/* lm's pointers are set by the caller; registers the recheck timer. */
int lowmem_init(struct lowmem *lm, struct loop *loop);
void lowmem_configure(struct lowmem *lm, const struct config *cfg);

/* The library's fd woke the daemon.  A PSI trigger's poll consumes its
 * event, and the library's epoll set is nested in the daemon's: the outer
 * epoll's readiness check polls the trigger first, and the library's own
 * epoll_wait then finds nothing.  So after each wakeup the stall total is
 * read: if it grew, this is the trigger, and the machine is looked at. */
void lowmem_woken(struct lowmem *lm, uint64_t now);

/* Watches the machine's stalls if the machine is the v2 root; 0 otherwise. */
int lowmem_start(struct lowmem *lm);
void lowmem_stop(struct lowmem *lm);

#endif
