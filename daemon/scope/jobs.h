/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jobs.h - the scopes made real: the machine memcg created (or adopted), one
 * child memcg per configured job created or adopted (a limit raised by grow
 * before a restart is kept within [limit, limit_max]), delegated to its
 * owner, watched and taken over; a new configuration applied to them on
 * reload (limits, owners, delays; jobs added, jobs no longer configured let
 * go); and the daemon's own reserve memcg beside the machine, removed again
 * on a clean stop.
 */
#ifndef OOMKITD_JOBS_H
#define OOMKITD_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"
#include "scope/handler.h"
#include "oomkit.h"
#include "scope/scope.h"

struct jobs {
	oomkit_ctx *ctx;
	const struct config *cfg;
	bool dry_run;
	struct scopes *scopes;
	struct handler *handler;
	pid_t *pids; /* borrowed: to count an adopted job's processes */
	size_t max_pids;
	char reserve[SCOPE_REL_MAX + 16]; /* the daemon's memcg; "" if it has none */
	char origin[SCOPE_REL_MAX];	  /* where the daemon ran before */
};

/* Creates or adopts the machine (cfg->machine_rel, resolved) and every job,
 * and watches them. */
int jobs_setup(struct jobs *j, const struct config *cfg);

/* Applies a new configuration whose machine is the same. */
void jobs_reload(struct jobs *j, const struct config *cfg);

/* Moves the daemon (and its guardian) into its reserve memcg beside the
 * machine; under systemd on cgroup v2 the unit's own cgroup is the reserve
 * and the daemon stays there. */
int jobs_enter_reserve(struct jobs *j);
/* On a clean stop: moves both back where the daemon ran and removes the
 * reserve memcg (left alone if anything else still runs in it). */
void jobs_leave_reserve(struct jobs *j);

#endif
