/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.h - the daemon-wide counters that no single scope owns, kept by the
 * chain and the actions and read by metrics.c.  (Each scope's own counters
 * are in struct scope.)
 */
#ifndef OOMKITD_STATS_H
#define OOMKITD_STATS_H

#include <stdint.h>

#include "config.h"

struct stats {
	uint64_t kills_by_policy[POLICY__COUNT];
	uint64_t kernel_handoffs;
	uint64_t handled; /* OOMs carried through an action (or a decision not to act) */
	uint64_t handling_ns_sum;
	uint64_t last_handling_ns;
	uint64_t pressure_events; /* critical memory pressure on the machine */
};

#endif
