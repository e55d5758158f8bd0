/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sdbus.h - the daemon's side of oomkitd-systemd (sdbus-helper.c), the helper
 * process that speaks D-Bus to systemd for it: which cgroups are systemd's
 * (a unit's, not a subtree delegated to anyone), the limits the library
 * wrote in them passed on, transient scopes for `oomkit run`, and the units
 * put back when the daemon stops or by `oomkitd --release`.  Sending is one
 * fixed-size datagram, never waiting and never allocating, so the library's
 * limits callback may send from the handler path.  When the helper falls
 * behind (a burst of changes fills its queue), a change waits in the scope
 * it is of, the latest per scope, and goes when the queue has room; every
 * later change waits behind it, so systemd hears of each unit's changes in
 * order and ends with its latest.
 */
#ifndef OOMKITD_SDBUS_H
#define OOMKITD_SDBUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/loop.h"
#include "scope/scope.h"
#include "common/sdbus-wire.h"

struct sdbus {
	int sock; /* -1: no helper (not a systemd machine, or it failed) */
	pid_t pid;
	int source;
	struct loop *loop;
	/* A SCOPE request's answer: result 0 or -errno, error what failed. */
	void (*on_done)(void *data, uint64_t id, int result, const char *error);
	void *data;
	struct scopes *scopes; /* where changes wait while the helper is behind */
	bool behind;	       /* changes wait: new ones wait behind them */
	uint64_t dropped;      /* changes not passed on: of no scope, or the helper failed */
};

/* Whether systemd runs this machine on the unified hierarchy (sd_booted()'s
 * test, and cgroup2 at the cgroup root). */
bool sdbus_systemd_machine(const char *cgroup_root);

/* The unit whose cgroup rel is, into unit: rel is a path of slices ending
 * in a unit's cgroup ("system.slice/batch-17.service").  A cgroup below a
 * unit's (a delegated subtree: user@.service's, a container's) is its
 * delegatee's, not systemd's: false, as for any other path. */
bool sdbus_unit_of(const char *rel, char *unit, size_t len);

/* A transient scope for pid that pattern matches, as `oomkit run` asks
 * systemd for: the pattern's "*"s as "oomkit-run-PID"
 * (system.slice/batch-*.scope gives batch-oomkit-run-PID.scope) and its
 * parent as the slice, which must be where systemd puts a slice of that name
 * (a-b.slice is a.slice/a-b.slice; the root's is -.slice).  A pattern whose
 * last component has no "*" or cannot end in ".scope", or with a "*" above
 * it, gives none: false. */
bool sdbus_scope_for(const char *pattern, pid_t pid, char *unit, size_t unit_len, char *slice,
		     size_t slice_len);

/* The helper's state file beside the control socket (socket's directory). */
int sdbus_state_path(const char *socket, char *buf, size_t len);

/* Starts the helper (program: NULL for the installed one, or
 * $OOMKITD_SYSTEMD) and waits for it to be on the bus; b->sock stays -1 on
 * failure, which is logged: the daemon then writes limits itself only. */
int sdbus_start(struct sdbus *b, const char *state_path);
/* Answers come through the loop from now on; changes that cannot go at
 * once wait in scopes. */
int sdbus_attach(struct sdbus *b, struct loop *loop, struct scopes *scopes);
/* The library's limits callback's work: if rel is a unit's, systemd is told,
 * now or, if the helper is behind, when it has room. */
void sdbus_limits(struct sdbus *b, const char *rel, uint64_t high_bytes, uint64_t max_bytes);
/* Asks for a transient scope unit in slice holding pid; on_done answers id.
 * 0, or -ENOTCONN without a helper, -EAGAIN if it cannot take it now. */
int sdbus_scope(struct sdbus *b, uint64_t id, pid_t pid, const char *unit, const char *slice);
/* Every unit put back, then the helper ends (waits at most a few seconds). */
void sdbus_stop(struct sdbus *b);

/* `oomkitd --release`: runs the helper on the state file a killed daemon's
 * helper left, if any.  0 or -errno. */
int sdbus_release(const char *state_path);

#endif
