/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.h - the daemon-wide counters that no single scope owns, kept by the
 * chain, the handler and the flights and read by metrics.c.  (Each scope's
 * own counters, its kills by policy among them, are in struct scope.)
 */
#ifndef OOMKITD_STATS_H
#define OOMKITD_STATS_H

#include <stdint.h>

#include "config/config.h"

/* Upper bounds of the latency histograms' buckets, in nanoseconds: 1 ms to
 * 10 s in steps of 1-2-5, what an OOM's decision and its memory freed take
 * from a prompt handler's millisecond to a person's answer.  Each bucket
 * counts the observations above the previous bound (metrics.c writes them
 * cumulative, with +Inf, as Prometheus wants them). */
#define STATS_BUCKET_BOUNDS_NS                                                                               \
	{                                                                                                    \
		1000000ull, 2000000ull, 5000000ull, 10000000ull, 20000000ull, 50000000ull, 100000000ull,     \
		    200000000ull, 500000000ull, 1000000000ull, 2000000000ull, 5000000000ull, 10000000000ull  \
	}
#define STATS_BUCKETS 13

struct stats_histogram {
	uint64_t bucket[STATS_BUCKETS + 1]; /* the last one: above every bound */
	uint64_t count;
	uint64_t sum_ns;
};

struct stats {
	uint64_t kernel_handoffs;
	uint64_t pressure_events; /* critical memory pressure on the machine */
	unsigned flights;	  /* OOMs whose action is under way (inflight.c) */
	/* From the kernel's OOM event to the decision, and to the scope leaving
	 * OOM (only the OOMs that did while the daemon watched). */
	struct stats_histogram decision, freed;
};

/* Counts one observation of ns.  Allocation-free, for the handler path. */
static inline void stats_observe(struct stats_histogram *h, uint64_t ns)
{
	static const uint64_t bound[STATS_BUCKETS] = STATS_BUCKET_BOUNDS_NS;
	unsigned i = 0;

	while (i < STATS_BUCKETS && ns > bound[i])
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum_ns += ns;
}

#endif
