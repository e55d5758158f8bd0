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

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPORT_VERSION 1
/* Objects and arrays nest at most this deep: report, process, field. */
#define JW_MAX_DEPTH 8

/* ---------------------------------------------------------- JSON writer */

struct jw {
	const oomkit_ctx *ctx;
	char *buf;  /* ctx->reportbuf */
	size_t len; /* bytes buffered */
	int fd;
	size_t total; /* bytes written to fd */
	int err;      /* first write error; later output is dropped */
	unsigned depth;
	bool comma[JW_MAX_DEPTH]; /* an element precedes at this depth */
};

static void jw_flush(struct jw *w)
{
	size_t off = 0;

	while (off < w->len && !w->err) {
		ssize_t k = write(w->fd, w->buf + off, w->len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			w->err = -errno;
		else if (k == 0)
			w->err = -EIO;
		else
			off += (size_t)k;
	}
	w->total += off;
	w->len = 0;
}

static void jw_put(struct jw *w, const char *s, size_t n)
{
	while (n > 0 && !w->err) {
		size_t room = OOMKIT__REPORT_BUF_SIZE - w->len;
		size_t k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == OOMKIT__REPORT_BUF_SIZE)
			jw_flush(w);
	}
}

static void jw_puts(struct jw *w, const char *s)
{
	jw_put(w, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* A NUL terminator fails this test, so nothing reads past the string. */
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Writes s as a JSON string.  Control bytes and bytes that are not valid
 * UTF-8 become \u00XX: the output stays valid and the byte stays visible. */
static void jw_string(struct jw *w, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;

	jw_put(w, "\"", 1);
	while (*s) {
		size_t n = 1;
		char esc[6] = {'\\', 'u', '0', '0', hex[*s >> 4], hex[*s & 0xf]};
		if (*s == '"' || *s == '\\') {
			char e[2] = {'\\', (char)*s};
			jw_put(w, e, 2);
		} else if (*s == '\n') {
			jw_put(w, "\\n", 2);
		} else if (*s == '\t') {
			jw_put(w, "\\t", 2);
		} else if (*s == '\r') {
			jw_put(w, "\\r", 2);
		} else if (*s >= 0x20 && *s < 0x7f) {
			jw_put(w, (const char *)s, 1);
		} else if (*s >= 0x80 && (n = utf8_len(s)) > 0) {
			jw_put(w, (const char *)s, n);
		} else {
			n = 1;
			jw_put(w, esc, sizeof(esc));
		}
		s += n;
	}
	jw_put(w, "\"", 1);
}

/* Starts an element: the comma before it and, inside an object, its key. */
static void jw_key(struct jw *w, const char *key)
{
	if (w->comma[w->depth])
		jw_put(w, ",", 1);
	w->comma[w->depth] = true;
	if (key) {
		jw_string(w, key);
		jw_put(w, ":", 1);
	}
}

static void jw_open(struct jw *w, const char *key, char bracket)
{
	jw_key(w, key);
	jw_put(w, &bracket, 1);
	/* Deeper nesting than the report uses is a bug here, not bad input. */
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->comma[w->depth] = false;
}

static void jw_close(struct jw *w, char bracket)
{
	if (w->depth > 0)
		w->depth--;
	jw_put(w, &bracket, 1);
}

static void jw_str(struct jw *w, const char *key, const char *value)
{
	jw_key(w, key);
	if (value)
		jw_string(w, value);
	else
		jw_puts(w, "null");
}

static void jw_u64(struct jw *w, const char *key, uint64_t value)
{
	char num[24];
	jw_key(w, key);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	jw_puts(w, num);
}

static void jw_i64(struct jw *w, const char *key, int64_t value)
{
	char num[24];
	jw_key(w, key);
	snprintf(num, sizeof(num), "%lld", (long long)value);
	jw_puts(w, num);
}

/* A limit: null when there is none. */
static void jw_limit(struct jw *w, const char *key, uint64_t value)
{
	if (value == OOMKIT_UNLIMITED)
		jw_str(w, key, NULL);
	else
		jw_u64(w, key, value);
}

static void jw_bool(struct jw *w, const char *key, bool value)
{
	jw_key(w, key);
	jw_puts(w, value ? "true" : "false");
}

/* An error as its errno name ("ENOENT"). */
static void jw_error(struct jw *w, const char *key, int err)
{
	const char *name = strerrorname_np(-err);
	char num[24];

	if (!name) {
		snprintf(num, sizeof(num), "errno %d", -err);
		name = num;
	}
	jw_str(w, key, name);
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

static void write_time(struct jw *w)
{
	struct timespec ts;
	char iso[80];

	jw_u64(w, "time_ns", oomkit__now_ns());
	clock_gettime(CLOCK_REALTIME, &ts);
	format_utc(&ts, iso, sizeof(iso));
	jw_str(w, "time_realtime", iso);
}

/* cgroup v2's memory.events counters; v1 has none, so they are left out there. */
static void write_v2_events(struct jw *w, uint64_t high, uint64_t max, uint64_t oom, uint64_t oom_kill)
{
	if (w->ctx->backend != OOMKIT_BACKEND_V2)
		return;
	jw_open(w, "memory_events", '{');
	jw_u64(w, "high", high);
	jw_u64(w, "max", max);
	jw_u64(w, "oom", oom);
	jw_u64(w, "oom_kill", oom_kill);
	jw_close(w, '}');
}

static void write_event(struct jw *w, const struct oomkit_event *ev)
{
	if (!ev) {
		jw_str(w, "event", NULL);
		return;
	}
	jw_open(w, "event", '{');
	jw_str(w, "kind", oomkit_event_kind_name(ev->kind));
	jw_str(w, "cgroup", ev->cgroup);
	jw_str(w, "origin", ev->origin);
	jw_bool(w, "own", ev->own);
	jw_bool(w, "under_oom", ev->under_oom);
	jw_u64(w, "usage_bytes", ev->usage_bytes);
	jw_limit(w, "limit_bytes", ev->limit_bytes);
	jw_u64(w, "threshold_bytes", ev->threshold_bytes);
	jw_bool(w, "rising", ev->rising);
	jw_str(w, "level", ev->kind == OOMKIT_EVENT_PRESSURE ? oomkit_pressure_level_name(ev->level) : NULL);
	jw_u64(w, "time_ns", ev->time_ns);
	write_v2_events(w, ev->events_high, ev->events_max, ev->events_oom, ev->events_oom_kill);
	jw_close(w, '}');
}

static void write_cgroup(struct jw *w, oomkit_ctx *ctx, const char *cgroup)
{
	struct oomkit_cgroup_memory m;
	int r = oomkit_cgroup_memory(ctx, cgroup, &m);

	jw_open(w, "cgroup", '{');
	jw_str(w, "path", cgroup);
	if (r < 0) {
		jw_error(w, "error", r);
	} else {
		jw_u64(w, "usage_bytes", m.usage_bytes);
		jw_limit(w, "limit_bytes", m.limit_bytes);
		jw_u64(w, "max_usage_bytes", m.max_usage_bytes);
		jw_u64(w, "failcnt", m.failcnt);
		jw_u64(w, "oom_kill", m.oom_kill);
		jw_bool(w, "under_oom", m.under_oom);
		jw_bool(w, "oom_kill_disable", m.oom_kill_disable);
		if (ctx->backend == OOMKIT_BACKEND_V2)
			jw_bool(w, "oom_group", m.oom_group);
		write_v2_events(w, m.events_high, m.events_max, m.events_oom, m.events_oom_kill);
	}
	jw_close(w, '}');
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
static void write_memory_stat(struct jw *w, oomkit_ctx *ctx, const char *cgroup)
{
	int n = read_memory_stat(ctx, cgroup);

	if (n < 0) {
		jw_str(w, "memory_stat", NULL);
		jw_error(w, "memory_stat_error", n);
		return;
	}
	jw_open(w, "memory_stat", '{');
	for (char *line = ctx->iobuf2, *end = ctx->iobuf2 + n; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *eol = nl ? nl : end;
		char *sp = memchr(line, ' ', (size_t)(eol - line));
		uint64_t v;
		*eol = 0;
		if (sp && sp > line) {
			*sp = 0;
			if (oomkit__parse_u64(sp + 1, strlen(sp + 1), &v) == 0)
				jw_u64(w, line, v);
			else
				jw_str(w, line, sp + 1);
		}
		line = eol + 1;
	}
	jw_close(w, '}');
}

static void write_process(struct jw *w, const struct oomkit_process *p, const char *cgroup)
{
	jw_open(w, NULL, '{');
	jw_i64(w, "pid", p->pid);
	jw_i64(w, "ppid", p->ppid);
	jw_u64(w, "uid", p->uid);
	jw_str(w, "comm", p->comm);
	jw_str(w, "cmdline", p->cmdline);
	jw_str(w, "cgroup", cgroup);
	jw_u64(w, "start_time", p->start_time);
	jw_u64(w, "rss_anon_kib", p->rss_anon_kib);
	jw_u64(w, "rss_file_kib", p->rss_file_kib);
	jw_u64(w, "rss_shmem_kib", p->rss_shmem_kib);
	jw_u64(w, "swap_kib", p->swap_kib);
	jw_i64(w, "oom_score_adj", p->oom_score_adj);
	jw_close(w, '}');
}

/* Every process of the cgroup and its descendants.  Processes exit while we
 * read them: those are skipped and counted as vanished. */
static void write_processes(struct jw *w, oomkit_ctx *ctx, const char *cgroup)
{
	char path[OOMKIT__PATH_MAX];
	struct oomkit_process p;
	int vanished = 0, unreadable = 0;
	int n = oomkit_cgroup_pids(ctx, cgroup, true, ctx->pidbuf, ctx->max_pids);

	jw_open(w, "processes", '[');
	for (int i = 0; i < n; i++) {
		int r = oomkit_process_info(ctx, ctx->pidbuf[i], &p);
		if (r >= 0)
			r = oomkit_process_cgroup(ctx, ctx->pidbuf[i], path, sizeof(path));
		if (r == -ESRCH)
			vanished++;
		else if (r < 0)
			unreadable++;
		else
			write_process(w, &p, path);
	}
	jw_close(w, ']');
	if (n < 0)
		jw_error(w, "processes_error", n);
	jw_i64(w, "vanished", vanished);
	jw_i64(w, "unreadable", unreadable);
}

static void write_decision(struct jw *w, const struct oomkit_decision *d)
{
	if (!d) {
		jw_str(w, "decision", NULL);
		return;
	}
	jw_open(w, "decision", '{');
	jw_str(w, "action", d->action);
	jw_str(w, "reason", d->reason);
	jw_i64(w, "victim_pid", d->victim_pid);
	jw_u64(w, "new_limit_bytes", d->new_limit_bytes);
	jw_close(w, '}');
}

OOMKIT__EXPORT int oomkit_write_report(oomkit_ctx *ctx, int fd, const struct oomkit_event *event,
				       const struct oomkit_decision *decision)
{
	struct jw w = {.ctx = ctx, .fd = fd};
	const char *cgroup = event ? event->cgroup : NULL;

	if (!ctx || fd < 0)
		return -EINVAL;
	w.buf = ctx->reportbuf;
	jw_open(&w, NULL, '{');
	jw_u64(&w, "version", REPORT_VERSION);
	write_time(&w);
	write_event(&w, event);
	if (cgroup) {
		write_cgroup(&w, ctx, cgroup);
		write_memory_stat(&w, ctx, cgroup);
		write_processes(&w, ctx, cgroup);
	} else {
		jw_str(&w, "cgroup", NULL);
	}
	write_decision(&w, decision);
	jw_close(&w, '}');
	jw_put(&w, "\n", 1);
	jw_flush(&w);
	if (w.err)
		return w.err;
	return w.total > INT32_MAX ? INT32_MAX : (int)w.total;
}
