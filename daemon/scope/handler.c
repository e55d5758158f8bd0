/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* handler.c - see handler.h. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "oom/actions.h"
#include "base/clock.h"
#include "scope/handler.h"
#include "base/log.h"
#include "report/report.h"
#include "common/value.h"

#define PRESSURE_LOG_EVERY_NS (10ull * NS_PER_SEC)

static void on_delegated(void *data, uint64_t now);

int handler_init(struct handler *h, struct loop *loop)
{
	h->delegated = (struct loop_timer){.fn = on_delegated, .data = h};
	return loop_add_timer(loop, &h->delegated);
}

void handler_configure(struct handler *h, const struct config *cfg)
{
	h->cfg = cfg;
}

/* ------------------------------------------------------------ counting OOMs */

/* How many OOMs of its own limit a scope has had, for a dry run, where the
 * kernel killer is on and an OOM is usually over before its event is read.
 * v1: memory.failcnt, whose oom_control eventfd wakes us once per OOM.  v2's
 * memory.events wakes us on each of the many times usage meets memory.max, and
 * its max count moves with each; its oom count moves once per OOM.  That file
 * is hierarchical: the machine's own count is its count less its jobs'. */
static int oom_count(struct handler *h, const struct scope *scope, uint64_t *ret_count)
{
	struct oomkit_cgroup_memory m;

	if (oomkit_cgroup_memory(h->ctx, scope->rel, &m) < 0)
		return -EIO;
	if (oomkit_backend(h->ctx) != OOMKIT_BACKEND_V2) {
		*ret_count = m.failcnt;
		return 0;
	}
	uint64_t n = m.events_oom;
	if (scope->kind == SCOPE_KIND_MACHINE)
		SCOPE_FOREACH_JOB (j, h->scopes)
			if (oomkit_cgroup_memory(h->ctx, j->rel, &m) >= 0)
				n -= m.events_oom < n ? m.events_oom : n;
	*ret_count = n;
	return 0;
}

void handler_note_oom_count(struct handler *h, struct scope *scope)
{
	(void)oom_count(h, scope, &scope->last_oom_count);
}

/* Whether the scope has had an OOM since the last call (a dry run). */
static bool oom_count_moved(struct handler *h, struct scope *scope)
{
	uint64_t n;

	if (oom_count(h, scope, &n) < 0)
		return false;
	/* A job added by a reload lowers the machine's own count: that is no OOM. */
	bool moved = n > scope->last_oom_count;
	scope->last_oom_count = n;
	return moved;
}

/* ------------------------------------------------------------ events */

static void arm_delegated(struct handler *h)
{
	uint64_t next = 0;

	SCOPE_FOREACH_JOB (j, h->scopes)
		if (j->delegated_due_ns && (!next || j->delegated_due_ns < next))
			next = j->delegated_due_ns;
	h->delegated.due_ns = next;
}

static enum oomkit_verdict on_gone(struct handler *h, struct scope *scope, const struct oomkit_event *ev)
{
	/* An instance's cgroup comes and goes with its unit: adopt.c drops it. */
	if (scope->kind == SCOPE_KIND_INSTANCE)
		log_info("%s: its cgroup was removed", scope->label);
	else
		log_warning("%s: memcg %s was removed", scope->name, ev->cgroup);
	scope->watch = NULL;
	metrics_changed(h->metrics);
	return OOMKIT_WAIT;
}

/* A delegated job's own handler goes first; we step in after the delay. */
static enum oomkit_verdict leave_to_owner(struct handler *h, struct scope *scope,
					  const struct oomkit_event *ev)
{
	if (!scope->delegated_due_ns)
		scope->delegated_due_ns = ev->time_ns + h->cfg->delay_ms * NS_PER_MS;
	arm_delegated(h);
	log_info("%s: OOM left to its owner for %" PRIu64 " ms", scope->label, h->cfg->delay_ms);
	metrics_changed(h->metrics);
	return OOMKIT_WAIT;
}

/* Why the scope is out of memory, where the library says (cgroup v2): a job
 * held at its limit that could still swap was not. */
static void log_why(const struct scope *scope, const struct oomkit_event *ev)
{
	char why[160];

	report_oom_why(ev, why, sizeof(why));
	if (why[0])
		log_notice("%s: out of memory: %s", scope->label, why);
}

static enum oomkit_verdict on_oom(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	/* The watch's userdata is its scope (handler_watch): no search of the
	 * table, whatever the number of jobs.  A slot removed or reused since
	 * holds another watch, or none. */
	struct scope *scope = userdata;
	(void)ctx;

	if (!scope->in_use || scope->watch != ev->watch)
		return OOMKIT_WAIT;
	struct handler *h = scope->watcher;
	if (ev->kind == OOMKIT_EVENT_GONE)
		return on_gone(h, scope, ev);
	if (ev->kind != OOMKIT_EVENT_OOM)
		return OOMKIT_WAIT;
	/* With the kernel killer on (a dry run), the kernel acts at once, and one
	 * OOM may wake us several times, under_oom or not: it counts once, in the
	 * scope whose own limit was hit. */
	if (h->dry_run) {
		if (!oom_count_moved(h, scope))
			return OOMKIT_WAIT;
		counters_oom(&scope->counters);
		return chain_run(h->chain, scope, ev, 0);
	}
	if (!ev->under_oom)
		return OOMKIT_WAIT;
	/* A machine OOM also wakes every job: act once, where the limit was hit. */
	if (!ev->own) {
		char origin[LOG_ESCAPED_MAX(SCOPE_REL_MAX)];
		/* The origin may be a sub-cgroup a delegated owner named. */
		log_debug("%s: under OOM because of %s", ev->cgroup,
			  log_escape(origin, sizeof(origin), ev->origin));
		return OOMKIT_WAIT;
	}
	/* Counted once: an OOM that signals again while its victim exits is not a new one. */
	if (chain_victim_exiting(h->chain, scope))
		return chain_run(h->chain, scope, ev, 0);
	counters_oom(&scope->counters);
	log_why(scope, ev);
	if (scope->job && scope->job->has_owner)
		return leave_to_owner(h, scope, ev);
	return chain_run(h->chain, scope, ev, 0);
}

static void on_delegated(void *data, uint64_t now)
{
	struct handler *h = data;

	SCOPE_FOREACH_JOB (j, h->scopes) {
		struct oomkit_event ev;
		if (!j->delegated_due_ns || now < j->delegated_due_ns)
			continue;
		chain_synth_event(h->ctx, j->rel, j->watch,
				  j->delegated_due_ns - h->cfg->delay_ms * NS_PER_MS, &ev);
		j->delegated_due_ns = 0;
		if (!ev.under_oom) {
			log_info("%s: its owner resolved the OOM", j->name);
			actions_set_last(j, "resolved by its owner");
			metrics_changed(h->metrics);
			continue;
		}
		log_notice("%s: its owner did not resolve the OOM in time", j->name);
		/* Outside the library's handler, a "kernel" verdict must be handed over explicitly. */
		if (chain_run(h->chain, j, &ev, 0) == OOMKIT_KERNEL)
			(void)oomkit_hand_to_kernel(h->ctx, j->watch);
	}
	arm_delegated(h);
}

static enum oomkit_verdict on_pressure(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct handler *h = userdata;
	(void)ctx;

	if (ev->kind == OOMKIT_EVENT_GONE) {
		h->pressure_watch = NULL;
		return OOMKIT_WAIT;
	}
	if (ev->kind != OOMKIT_EVENT_PRESSURE)
		return OOMKIT_WAIT;
	/* v1 pressure events rise from the jobs to the machine: a job reclaiming
	 * under its own limit is not the machine running out. */
	if (ev->limit_bytes != OOMKIT_UNLIMITED && ev->usage_bytes < ev->limit_bytes / 10 * 9)
		return OOMKIT_WAIT;
	h->stats->pressure_events++;
	if (!h->pressure_logged_ns || ev->time_ns - h->pressure_logged_ns >= PRESSURE_LOG_EVERY_NS) {
		h->pressure_logged_ns = ev->time_ns;
		/* Rewritten with the log line, not on every event: pressure comes in
		 * bursts just before an OOM, when the daemon's time matters most. */
		metrics_changed(h->metrics);
		char usage[32], limit[32];
		value_format_bytes(ev->usage_bytes, usage, sizeof(usage));
		value_format_bytes(ev->limit_bytes, limit, sizeof(limit));
		log_warning("machine: critical memory pressure (%s of %s); an OOM may follow", usage, limit);
	}
	return OOMKIT_WAIT;
}

/* ------------------------------------------------------------ watches */

static bool has_limit(struct handler *h, const char *rel)
{
	struct oomkit_cgroup_memory m;

	return oomkit_cgroup_memory(h->ctx, rel, &m) >= 0 && m.limit_bytes != OOMKIT_UNLIMITED;
}

int handler_watch(struct handler *h, struct scope *scope, uint64_t delay_ms)
{
	int r;

	if (!scope->watch) {
		scope->watcher = h;
		/* A machine memcg at its limit is out of memory, swap or not: held
		 * at its memory.high, its reclaim would swap its jobs out alike,
		 * the important ones too, where its chain ranks them.  A job at
		 * its own limit swaps only itself. */
		unsigned flags = scope->kind == SCOPE_KIND_MACHINE ? OOMKIT_WATCH_AT_LIMIT : 0;
		r = oomkit_watch_oom(h->ctx, scope->rel, flags, on_oom, scope, &scope->watch);
		if (r == -ENOENT && scope->kind == SCOPE_KIND_INSTANCE)
			return r; /* gone already: adopt.c says so */
		if (r < 0) {
			log_err("%s: cannot watch: %s", scope->label, strerror(-r));
			return r;
		}
	}
	if (h->dry_run)
		return 0;
	r = oomkit_take_over(h->ctx, scope->watch, delay_ms);
	if (r == -ENOENT && scope->kind == SCOPE_KIND_INSTANCE)
		return r;
	if (r == -EINVAL && !has_limit(h, scope->rel))
		/* cgroup v2 holds a cgroup off the kernel killer just below its
		 * limit: without one there is nothing to hold, and no OOM of its
		 * own to handle.  It is taken over once a reload gives it a limit. */
		log_info("%s: no limit, so no OOM of its own to take over", scope->label);
	else if (r < 0)
		log_err("%s: cannot take over its OOM handling: %s", scope->label, strerror(-r));
	return r == -EINVAL ? 0 : r;
}

bool handler_hold_after_limit(struct handler *h, struct scope *scope, uint64_t delay_ms)
{
	struct oomkit_cgroup_memory m;

	if (h->dry_run || oomkit_cgroup_memory(h->ctx, scope->rel, &m) < 0 || m.oom_kill_disable ||
	    (m.limit_bytes == OOMKIT_UNLIMITED && oomkit_backend(h->ctx) == OOMKIT_BACKEND_V2))
		return false;
	return handler_watch(h, scope, delay_ms) == 0;
}

void handler_unwatch(struct handler *h, struct scope *scope)
{
	if (scope->watch)
		oomkit_unwatch(h->ctx, scope->watch);
	scope->watch = NULL;
	scope->delegated_due_ns = 0;
	arm_delegated(h);
}

int handler_watch_pressure(struct handler *h)
{
	int r = oomkit_watch_pressure(h->ctx, h->scopes->machine.rel, OOMKIT_PRESSURE_CRITICAL, 0,
				      on_pressure, h, &h->pressure_watch);
	if (r < 0)
		log_warning("machine: no pressure warnings: %s", strerror(-r));
	return r;
}
