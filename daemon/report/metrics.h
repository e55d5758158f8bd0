/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.h - the Prometheus text file for node_exporter's textfile
 * collector.  It is rewritten after each turn of the loop in which something
 * changed (metrics_changed()), so a storm of OOMs costs one rewrite per turn,
 * and with metrics_interval set also on that clock; but not while an action
 * is under way (a victim exiting, memory not yet freed): then once its
 * flight has landed.  Each memcg is read once per rewrite.  The daemon
 * writes only a file of its own: in a directory owned by it and writable by
 * nobody else, where the target is absent or a metrics file it wrote;
 * anything else (metrics = /etc/shadow) is refused.
 */
#ifndef OOMKITD_METRICS_H
#define OOMKITD_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "base/loop.h"
#include "oomkit.h"
#include "scope/scope.h"
#include "report/stats.h"

struct metrics_sample;
struct prompt;
struct protect;

struct metrics {
	oomkit_ctx *ctx;
	const struct config *cfg; /* metrics, metrics_interval */
	struct scopes *scopes;
	const struct stats *stats;
	const struct prompt *prompt; /* set by the caller: an open question holds an OOM */
	char *buf;		     /* the file goes out through it in pieces */
	size_t buf_len;
	struct metrics_sample *samples; /* a job slot's memcg, read once per rewrite */
	bool dirty;
	bool path_ok; /* the metrics path is the daemon's to write (checked on configure) */
	struct loop_timer interval;
	/* Set by the caller: memory priority (protect.h); NULL: none. */
	const struct protect *protect;
};

int metrics_init(struct metrics *m, oomkit_ctx *ctx, struct scopes *scopes, const struct stats *stats,
		 struct loop *loop);
void metrics_free(struct metrics *m);
/* Takes the metrics settings; (re)schedules the periodic rewrite. */
void metrics_configure(struct metrics *m, const struct config *cfg);

/* Asks for a rewrite once the event being handled is done. */
void metrics_changed(struct metrics *m);
/* Rewrites the file now (at start, after a reload). */
void metrics_write(struct metrics *m);

#endif
