/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protect.h - memory priority before any kill (protect-rule.h says the
 * rule): on the loop's timer, never on the OOM path, the machine's memory
 * stall is read once a second; while it is high, jobs above the lowest
 * priority get a memory.low of their working set and the jobs at the
 * lowest give their cold memory back through memory.reclaim, a bounded step
 * a second.  Every memory.low it set is put back when the stall is over,
 * at a reload that drops the job, and at a stop.  cgroup v2 only (v1 has
 * neither file; its soft limits act only in global reclaim): on v1 the
 * module says so once and does nothing.
 *
 * A memory.low protects only as far as the job's ancestors are protected
 * too (cgroup v2 hands protection down from the parent), so each ancestor
 * below the root (system.slice for a service) is raised to the sum of its
 * protected jobs', and put back likewise.  Values are written to the
 * cgroups through liboomkit, not through systemd's MemoryLow=: systemd
 * writes memory.low again only when it changes the unit, and the module
 * writes it again on its next look if that happened.
 *
 * memory.reclaim is synchronous, and under emulation a 16 MiB step took 0.6
 * to 2.2 s: long enough to hold an OOM event past its delay.  So the write
 * is made by a thread of its own, started at the first step (after the
 * seccomp filter is in place, which it inherits), with a small stack; the
 * loop hands it one request at a time and hears of its end through an
 * eventfd.  Nothing else runs on that thread.
 *
 * What it did is kept for the metrics (bytes reclaimed per job, memory.low
 * set now) and for the reports (protect_write_json()).
 */
#ifndef OOMKITD_PROTECT_H
#define OOMKITD_PROTECT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "json.h"
#include "base/loop.h"
#include "oomkit.h"
#include "rules/protect-rule.h"
#include "scope/scope.h"

#define PROTECT_SLOTS 256    /* jobs protected or reclaimed from, since the start */
#define PROTECT_ANCESTORS 64 /* ancestors raised at once */

struct protect_slot {
	bool used;
	struct scope_ref scope;
	char rel[SCOPE_REL_MAX];
	char label[SCOPE_LABEL_MAX];
	bool low_set;		  /* memory.low is ours now */
	uint64_t low_bytes;	  /* what we wrote */
	uint64_t orig_low_bytes;  /* what it was before */
	uint64_t start_usage;	  /* at the episode's start */
	uint64_t reclaimed_bytes; /* in all, since the daemon started */
	uint64_t episode_reclaimed_bytes;
	uint64_t reclaims;
};

struct protect_ancestor {
	char rel[SCOPE_REL_MAX];
	uint64_t low_bytes, orig_low_bytes;
	bool used;
};

struct protect {
	oomkit_ctx *ctx;
	struct scopes *scopes;
	const struct config *cfg;
	void (*changed)(void *data); /* the metrics are to be rewritten */
	void *changed_data;
	struct loop_timer timer;
	bool on;     /* configured and cgroup v2 */
	bool active; /* an episode is under way */
	bool told_v1;
	uint64_t since_ms;	/* its start, wall clock */
	uint64_t calm_since_ns; /* 0: not calm */
	uint64_t episodes;
	unsigned some_x100; /* the machine's stall at the last look */
	struct protect_slot slots[PROTECT_SLOTS];
	struct protect_ancestor anc[PROTECT_ANCESTORS];
	/* One per job slot, made at start: the rule's input and plan. */
	struct protect_job *in;
	struct protect_plan *plan;
	struct scope **of;
	unsigned max_jobs;
	/* The reclaiming thread and the one request it has (owned by the
	 * thread from the loop's write to want_fd until it writes done_fd). */
	struct loop *loop;
	bool thread_started;
	bool busy; /* a request is with the thread */
	int want_fd, done_fd;
	pthread_t thread;
	struct {
		char rel[SCOPE_REL_MAX];
		uint64_t want_bytes;
		uint64_t before_bytes; /* the job's usage when asked */
		struct protect_slot *slot;
		int result;
		uint64_t took_ms;
	} req;
};

/* Takes the tables for max_jobs job slots; the timer is the loop's. */
int protect_init(struct protect *p, struct loop *loop, oomkit_ctx *ctx, struct scopes *scopes);
void protect_free(struct protect *p);
/* Takes the configuration (start, reload): on or off, and its step. */
void protect_configure(struct protect *p, const struct config *cfg);
/* Every memory.low put back (a stop). */
void protect_stop(struct protect *p);

/* What it holds for scope s now: memory.low set (0: none) and bytes
 * reclaimed from it since the start.  false: it never touched s. */
bool protect_of(const struct protect *p, const struct scope *s, uint64_t *ret_low_bytes,
		uint64_t *ret_reclaimed_bytes);

/* The report's "memory_priority" member: whether an episode is under way,
 * since when, and per job the memory.low set and what was reclaimed in it. */
void protect_write_json(struct oomkit__json *w, const struct protect *p);

#endif
