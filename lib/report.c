/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.c - the JSON debug artifact: what happened (the event), the state
 * of the cgroup (memory counters, oom_control, every memory.stat key), every
 * process in it with its memory, and what the handler decided.
 *
 * It owns no kernel interface; it reads through the public helpers of
 * cgroup-v1.c and proc.c.  The JSON is built in ctx->reportbuf and written to
 * the caller's fd each time the buffer fills, so a report of any size costs
 * no allocation.  Every string is escaped so the output is valid JSON
 * whatever bytes a comm or a cgroup name holds.
 */
#include "internal.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPORT_VERSION 1

/* An error as its errno name ("ENOENT"). */
static void put_error(struct oomkit__json *w, const char *key, int err)
{
	const char *name = strerrorname_np(-err);
	char num[24];

	if (!name) {
		snprintf(num, sizeof(num), "errno %d", -err);
		name = num;
	}
	oomkit__json_str(w, key, name);
}

/* ------------------------------------------------------------- sections */

/* ISO 8601 UTC from the epoch, computed here: gmtime_r() may load time zone
 * data (and allocate) on its first call.  Days to civil date after Howard
 * Hinnant's public domain algorithm. */
static void format_utc(const struct timespec *ts, char *out, size_t len)
{
	int64_t secs = ts->tv_sec, days = secs / 86400, rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t day = doy - (153 * mp + 2) / 5 + 1;
	int64_t month = mp < 10 ? mp + 3 : mp - 9;
	int64_t year = yoe + era * 400 + (month <= 2);

	snprintf(out, len, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)year, (int)month, (int)day,
		 (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60),
		 (int)(ts->tv_nsec / 1000000 % 1000));
}

static void write_time(struct oomkit__json *w)
{
	struct timespec ts;
	char iso[80];

	oomkit__json_u64(w, "time_ns", oomkit__now_ns());
	clock_gettime(CLOCK_REALTIME, &ts);
	format_utc(&ts, iso, sizeof(iso));
	oomkit__json_str(w, "time_realtime", iso);
}

/* cgroup v2's memory.events counters; v1 has none, so they are left out there. */
static void write_v2_events(struct oomkit__json *w, const oomkit_ctx *ctx, uint64_t high, uint64_t max,
			    uint64_t oom, uint64_t oom_kill)
{
	if (!(ctx->cg_caps & OOMKIT__HAS_MEMORY_EVENTS))
		return;
	oomkit__json_open(w, "memory_events", '{');
	oomkit__json_u64(w, "high", high);
	oomkit__json_u64(w, "max", max);
	oomkit__json_u64(w, "oom", oom);
	oomkit__json_u64(w, "oom_kill", oom_kill);
	oomkit__json_close(w, '}');
}

/* cgroup v2's swap rule on an OOM event: why it was out of memory, and
 * what the rule read (cgroup-v2.c). */
static void write_swap_rule(struct oomkit__json *w, const oomkit_ctx *ctx, const struct oomkit_event *ev)
{
	if (!(ctx->cg_caps & OOMKIT__HAS_MEMORY_EVENTS) || ev->kind != OOMKIT_EVENT_OOM)
		return;
	oomkit__json_str(w, "oom_cause", oomkit_oom_cause_name((enum oomkit_oom_cause)ev->oom_cause));
	oomkit__json_u64(w, "swap_bytes", ev->swap_bytes);
	oomkit__json_limit(w, "swap_max_bytes", ev->swap_max_bytes);
	oomkit__json_u64(w, "swap_free_bytes", ev->swap_free_bytes);
	oomkit__json_fixed(w, "stall_full_percent", ev->stall_full_x100, 2);
	oomkit__json_u64(w, "stall_span_ms", ev->stall_span_ms);
}

static void write_event(struct oomkit__json *w, const oomkit_ctx *ctx, const struct oomkit_event *ev)
{
	if (!ev) {
		oomkit__json_str(w, "event", NULL);
		return;
	}
	oomkit__json_open(w, "event", '{');
	oomkit__json_str(w, "kind", oomkit_event_kind_name(ev->kind));
	oomkit__json_str(w, "cgroup", ev->cgroup);
	oomkit__json_str(w, "origin", ev->origin);
	oomkit__json_bool(w, "own", ev->own);
	oomkit__json_bool(w, "under_oom", ev->under_oom);
	oomkit__json_u64(w, "usage_bytes", ev->usage_bytes);
	oomkit__json_limit(w, "limit_bytes", ev->limit_bytes);
	oomkit__json_u64(w, "threshold_bytes", ev->threshold_bytes);
	oomkit__json_bool(w, "rising", ev->rising);
	oomkit__json_str(w, "level",
			 ev->kind == OOMKIT_EVENT_PRESSURE ? oomkit_pressure_level_name(ev->level) : NULL);
	oomkit__json_u64(w, "time_ns", ev->time_ns);
	write_v2_events(w, ctx, ev->events_high, ev->events_max, ev->events_oom, ev->events_oom_kill);
	write_swap_rule(w, ctx, ev);
	oomkit__json_close(w, '}');
}

static void write_cgroup(struct oomkit__json *w, oomkit_ctx *ctx, const char *cgroup)
{
	struct oomkit_cgroup_memory m;
	int r = oomkit_cgroup_memory(ctx, cgroup, &m);

	oomkit__json_open(w, "cgroup", '{');
	oomkit__json_str(w, "path", cgroup);
	if (r < 0) {
		put_error(w, "error", r);
	} else {
		oomkit__json_u64(w, "usage_bytes", m.usage_bytes);
		oomkit__json_limit(w, "limit_bytes", m.limit_bytes);
		oomkit__json_u64(w, "max_usage_bytes", m.max_usage_bytes);
		oomkit__json_u64(w, "failcnt", m.failcnt);
		oomkit__json_u64(w, "oom_kill", m.oom_kill);
		oomkit__json_bool(w, "under_oom", m.under_oom);
		oomkit__json_bool(w, "oom_kill_disable", m.oom_kill_disable);
		if (ctx->cg_caps & OOMKIT__HAS_MEMORY_EVENTS)
			oomkit__json_bool(w, "oom_group", m.oom_group);
		write_v2_events(w, ctx, m.events_high, m.events_max, m.events_oom, m.events_oom_kill);
	}
	oomkit__json_close(w, '}');
}

/* Reads memory.stat whole into ctx->iobuf2. */
static int read_memory_stat(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel));
	if (r < 0)
		return r;
	int fd = oomkit__cgroup_open(ctx, rel);
	if (fd < 0)
		return fd;
	r = oomkit__read_file_at(fd, "memory.stat", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
	close(fd);
	return r;
}

/* Every "key value" line of memory.stat, the value as a number when it is one. */
static void write_memory_stat(struct oomkit__json *w, oomkit_ctx *ctx, const char *cgroup)
{
	int n = read_memory_stat(ctx, cgroup);

	if (n < 0) {
		oomkit__json_str(w, "memory_stat", NULL);
		put_error(w, "memory_stat_error", n);
		return;
	}
	oomkit__json_open(w, "memory_stat", '{');
	for (char *line = ctx->iobuf2, *end = ctx->iobuf2 + n; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *eol = nl ? nl : end;
		char *sp = memchr(line, ' ', (size_t)(eol - line));
		uint64_t v;
		*eol = 0;
		if (sp && sp > line) {
			*sp = 0;
			if (oomkit__parse_u64(sp + 1, strlen(sp + 1), &v) == 0)
				oomkit__json_u64(w, line, v);
			else
				oomkit__json_str(w, line, sp + 1);
		}
		line = eol + 1;
	}
	oomkit__json_close(w, '}');
}

static void write_process(struct oomkit__json *w, const struct oomkit_process *p,
			  const struct oomkit_pid_entry *e)
{
	oomkit__json_open(w, NULL, '{');
	oomkit__json_i64(w, "pid", p->pid);
	oomkit__json_i64(w, "ppid", p->ppid);
	oomkit__json_u64(w, "uid", p->uid);
	oomkit__json_str(w, "comm", p->comm);
	oomkit__json_str(w, "cmdline", p->cmdline);
	oomkit__json_str(w, "cgroup", e->cgroup);
	/* Only then: the path holds the first components of a longer one. */
	if (e->cgroup_truncated)
		oomkit__json_bool(w, "cgroup_truncated", true);
	oomkit__json_u64(w, "start_time", p->start_time);
	oomkit__json_u64(w, "rss_anon_kib", p->rss_anon_kib);
	oomkit__json_u64(w, "rss_file_kib", p->rss_file_kib);
	oomkit__json_u64(w, "rss_shmem_kib", p->rss_shmem_kib);
	oomkit__json_u64(w, "swap_kib", p->swap_kib);
	oomkit__json_i64(w, "oom_score_adj", p->oom_score_adj);
	oomkit__json_close(w, '}');
}

struct processes {
	struct oomkit__json *w;
	int vanished, unreadable;
};

/* Processes exit while we read them: those are skipped and counted as
 * vanished. */
static int report_process(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct processes *ps = userdata;
	struct oomkit_process p;
	int r = oomkit_process_info(ctx, e->pid, &p);

	if (r == -ESRCH)
		ps->vanished++;
	else if (r < 0)
		ps->unreadable++;
	else
		write_process(ps->w, &p, e);
	return 0;
}

/* Every process of the cgroup and its descendants, at the path it was
 * listed at, however deep. */
static void write_processes(struct oomkit__json *w, oomkit_ctx *ctx, const char *cgroup)
{
	struct processes ps = {w, 0, 0};

	oomkit__json_open(w, "processes", '[');
	int n = oomkit_cgroup_walk_pids(ctx, cgroup, OOMKIT_WALK_RECURSIVE, report_process, &ps);
	oomkit__json_close(w, ']');
	if (n < 0)
		put_error(w, "processes_error", n);
	oomkit__json_i64(w, "vanished", ps.vanished);
	oomkit__json_i64(w, "unreadable", ps.unreadable);
}

static void write_decision(struct oomkit__json *w, const struct oomkit_decision *d)
{
	if (!d) {
		oomkit__json_str(w, "decision", NULL);
		return;
	}
	oomkit__json_open(w, "decision", '{');
	oomkit__json_str(w, "action", d->action);
	oomkit__json_str(w, "reason", d->reason);
	oomkit__json_i64(w, "victim_pid", d->victim_pid);
	oomkit__json_u64(w, "new_limit_bytes", d->new_limit_bytes);
	oomkit__json_close(w, '}');
}

OOMKIT__EXPORT int oomkit_write_report(oomkit_ctx *ctx, int fd, const struct oomkit_event *event,
				       const struct oomkit_decision *decision)
{
	return oomkit_write_report_flags(ctx, fd, event, decision, 0);
}

OOMKIT__EXPORT int oomkit_write_report_flags(oomkit_ctx *ctx, int fd, const struct oomkit_event *event,
					     const struct oomkit_decision *decision, unsigned flags)
{
	struct oomkit__json w;
	const char *cgroup = event ? event->cgroup : NULL;

	if (!ctx || fd < 0 || (flags & ~OOMKIT_REPORT_NO_PROCESSES))
		return -EINVAL;
	oomkit__json_init(&w, fd, ctx->reportbuf, OOMKIT__REPORT_BUF_SIZE);
	oomkit__json_open(&w, NULL, '{');
	oomkit__json_u64(&w, "version", REPORT_VERSION);
	write_time(&w);
	write_event(&w, ctx, event);
	if (cgroup) {
		write_cgroup(&w, ctx, cgroup);
		write_memory_stat(&w, ctx, cgroup);
		if (!(flags & OOMKIT_REPORT_NO_PROCESSES))
			write_processes(&w, ctx, cgroup);
	} else {
		oomkit__json_str(&w, "cgroup", NULL);
	}
	write_decision(&w, decision);
	oomkit__json_close(&w, '}');
	oomkit__json_newline(&w);
	return oomkit__json_end(&w);
}
