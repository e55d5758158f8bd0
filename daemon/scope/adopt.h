/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adopt.h - jobs that adopt existing cgroups: every cgroup that a job's
 * "cgroup =" patterns match is an instance of the job, a scope of its own
 * (SCOPE_KIND_INSTANCE) with the job's priority, chain, limits and kill
 * mode, watched and taken over like a job.  The tracker (tracker.h) says
 * when such cgroups appear and go; this module makes and drops the scopes,
 * on the loop, with no polling.  A cgroup matched by two jobs, or one that
 * holds the daemon, is refused with an error naming what; a cgroup that
 * vanishes while it is being adopted leaves no scope behind.
 */
#ifndef OOMKITD_ADOPT_H
#define OOMKITD_ADOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "scope/handler.h"
#include "oom/lend.h"
#include "base/loop.h"
#include "report/metrics.h"
#include "oomkit.h"
#include "scope/scope.h"

struct tracker;

struct adopt {
	oomkit_ctx *ctx;
	const struct config *cfg;
	bool dry_run;
	struct scopes *scopes;
	struct handler *handler;
	struct metrics *metrics;
	const struct lend *lend; /* a scope's loan is above its limit on purpose */
	struct loop *loop;
	pid_t *pids; /* borrowed: to count an instance's processes */
	size_t max_pids;
	int source; /* the loop's id for the tracker's descriptor */
	struct tracker *tracker;
	/* inotify on each instance's memory.max, for as long as it is
	 * adopted: a write that undoes the job's limit or the hold (systemd
	 * writes a unit's own after the daemon may have adopted it) is
	 * answered; one adopted without a limit is taken over when it has
	 * one.  limit_wd per scope slot (0: none), limit_taken whether it was
	 * taken over with a limit. */
	int limit_fd, limit_source;
	int *limit_wd;
	bool *limit_taken;
	bool *limit_marked;	   /* written since the last turn (on_limit) */
	uint64_t limit_logged_ns;  /* the last "written over" line */
	uint64_t limit_lines;	   /* that may be logged now (a token bucket) */
	unsigned limit_unlogged;   /* writes over since that line, not logged */
	bool *seen;		   /* per scope slot, during a reload */
	uint64_t old_delay_ms;	   /* during a reload: the running configuration's */
	char self[SCOPE_REL_MAX];  /* the daemon's own memcg */
	unsigned adopted, dropped; /* so far, for the log */
};

/* a's pointers are set by the caller (limit_fd -1); registers the loop sources. */
int adopt_init(struct adopt *a, struct loop *loop);

/* Refuses cfg if one of its patterns takes in the daemon's own memcg (or an
 * ancestor of it): 0, or -EINVAL with the errors logged, naming file:line. */
int adopt_check_self(struct adopt *a, const struct config *cfg);

/* Adopts what cfg's patterns match now and follows them from here on; a
 * pattern that matches nothing yet is a notice.  0 or -errno. */
int adopt_start(struct adopt *a, const struct config *cfg);

/* Applies a new configuration: instances still matched by the same job are
 * kept (re-pointed at the new job), others dropped, new matches adopted. */
void adopt_reload(struct adopt *a, const struct config *cfg);

/* Stops following (the instances' watches go with the library's context). */
void adopt_stop(struct adopt *a);

#endif
