/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.c - see metrics.h.  The text is formatted through a small
 * preallocated buffer, written out each time it fills (a thousand jobs make
 * a few hundred KiB), into a temporary file beside the target that is then
 * renamed over it, so a reader never sees half a file.  Every sample goes
 * through one writer (sample_start), which escapes label values as the text
 * format wants (backslash, double quote, newline) and turns a byte that is
 * not UTF-8 into U+FFFD, so the file always parses.  Names follow
 * Prometheus's conventions: counters end in _total, quantities are in base
 * units (_bytes, _seconds), latencies are histograms, and no label is one
 * Prometheus sets itself (job, instance).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "json.h"
#include "base/log.h"
#include "report/metrics.h"
#include "oom/prompt.h"
#include "scope/protect.h"

#define METRICS_BUF_LEN (16 * 1024)

struct metrics_sample {
	bool ok, under_oom;
	uint64_t usage_bytes, limit_bytes;
};

/* ------------------------------------------------------------ the writer */

struct prom {
	int fd;
	char *buf;
	size_t len, cap;
	int err; /* the first write error, or -EMSGSIZE for an overlong line */
};

static void prom_flush(struct prom *p)
{
	size_t off = 0;

	while (off < p->len && !p->err) {
		ssize_t n = write(p->fd, p->buf + off, p->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			p->err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	p->len = 0;
}

static void prom_put(struct prom *p, const char *s, size_t n)
{
	while (n > 0 && !p->err) {
		if (p->len == p->cap)
			prom_flush(p);
		size_t k = n < p->cap - p->len ? n : p->cap - p->len;
		memcpy(p->buf + p->len, s, k);
		p->len += k;
		s += k;
		n -= k;
	}
}

static void prom_printf(struct prom *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void prom_printf(struct prom *p, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		if (!p->err)
			p->err = -EMSGSIZE;
		return;
	}
	prom_put(p, tmp, (size_t)n);
}

/* A label value between its quotes. */
static void prom_label_value(struct prom *p, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;

	while (*s) {
		size_t k = *s >= 0x80 ? oomkit__utf8_len(s, strlen((const char *)s)) : 1;
		if (*s == '\\' || *s == '"')
			prom_put(p, *s == '\\' ? "\\\\" : "\\\"", 2);
		else if (*s == '\n')
			prom_put(p, "\\n", 2);
		else if (k == 0)
			prom_put(p, "\xef\xbf\xbd", 3); /* U+FFFD */
		else
			prom_put(p, (const char *)s, k);
		s += k ? k : 1;
	}
}

static void header(struct prom *p, const char *name, const char *type, const char *help)
{
	prom_printf(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct label {
	const char *name, *value;
};

/* name{a="v",b="w"} and the space before the value, or name and the space
 * without labels.  Every label value of the file goes through here. */
static void sample_start(struct prom *p, const char *name, const struct label *l, size_t n)
{
	prom_put(p, name, strlen(name));
	for (size_t i = 0; i < n; i++) {
		prom_printf(p, "%c%s=\"", i ? ',' : '{', l[i].name);
		prom_label_value(p, l[i].value);
		prom_put(p, "\"", 1);
	}
	prom_put(p, n ? "} " : " ", n ? 2 : 1);
}

static void sample(struct prom *p, const char *name, const struct label *l, size_t n, uint64_t v)
{
	sample_start(p, name, l, n);
	prom_printf(p, "%" PRIu64 "\n", v);
}

/* Nanoseconds as seconds, exactly ("0.001", "2.5", "10"): no float on the way. */
static const char *seconds(uint64_t ns, char *buf, size_t len)
{
	uint64_t frac = ns % 1000000000u;
	int digits = 9;

	if (!frac) {
		snprintf(buf, len, "%" PRIu64, ns / 1000000000u);
		return buf;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, ns / 1000000000u, digits, frac);
	return buf;
}

/* A scope's labels: name= (its job's, or "machine") and, for an instance,
 * cgroup= (its path below the memory root), so that each instance is a
 * series of its own.  Not job=: Prometheus gives every sample it scrapes a
 * job label of its own (the scrape job's), and would keep ours only as
 * exported_job.  Returns how many; l has room for 3 (a caller's one more). */
static size_t scope_labels(const struct scope *s, struct label *l)
{
	l[0] = (struct label){"name", s->name};
	if (s->kind != SCOPE_KIND_INSTANCE)
		return 1;
	l[1] = (struct label){"cgroup", s->rel};
	return 2;
}

static void scope_sample(struct prom *p, const char *name, const struct scope *s, uint64_t v)
{
	struct label l[3];

	sample(p, name, l, scope_labels(s, l), v);
}

/* ------------------------------------------------------------ families */

/* Reads each job's memcg once for the four gauge families below. */
static void sample_jobs(struct metrics *m)
{
	SCOPE_FOREACH_JOB (j, m->scopes) {
		struct metrics_sample *s = &m->samples[scope_index(m->scopes, j)];
		struct oomkit_cgroup_memory mem;
		s->ok = oomkit_cgroup_memory(m->ctx, j->rel, &mem) >= 0;
		s->usage_bytes = mem.usage_bytes;
		s->limit_bytes = mem.limit_bytes;
		s->under_oom = mem.under_oom;
	}
}

/* Gauges read now from the memcgs. */
static void format_job_gauges(struct metrics *m, struct prom *p)
{
	static const struct {
		const char *name, *help;
	} gauges[] = {
	    {"oomkit_job_usage_bytes", "Memory charged to the job's memcg."},
	    {"oomkit_job_limit_bytes", "The job's memcg limit (absent when unlimited)."},
	    {"oomkit_job_priority", "The job's configured priority (higher is more important)."},
	    {"oomkit_job_under_oom", "1 while the job's memcg is under OOM."},
	};

	sample_jobs(m);
	for (size_t k = 0; k < sizeof(gauges) / sizeof(gauges[0]); k++) {
		header(p, gauges[k].name, "gauge", gauges[k].help);
		SCOPE_FOREACH_JOB (j, m->scopes) {
			const struct metrics_sample *s = &m->samples[scope_index(m->scopes, j)];
			if (!s->ok)
				continue;
			uint64_t v = k == 0   ? s->usage_bytes
				     : k == 1 ? s->limit_bytes
				     : k == 2 ? j->job->priority
					      : s->under_oom;
			if (v != OOMKIT_UNLIMITED)
				scope_sample(p, gauges[k].name, j, v);
		}
	}
}

static uint64_t ooms_of(const struct scope *s)
{
	return s->counters.ooms;
}

static uint64_t grows_of(const struct scope *s)
{
	return s->counters.grows;
}

static uint64_t sheds_of(const struct scope *s)
{
	return s->counters.shed_successes;
}

/* A counter with a sample for the machine (if machine) and each job. */
static void format_scope_counter(struct metrics *m, struct prom *p, const char *name, const char *help,
				 bool machine, uint64_t (*get)(const struct scope *))
{
	header(p, name, "counter", help);
	if (machine)
		scope_sample(p, name, &m->scopes->machine, get(&m->scopes->machine));
	SCOPE_FOREACH_JOB (j, m->scopes)
		scope_sample(p, name, j, get(j));
}

static bool kills(enum policy_kind k)
{
	return k != POLICY_GROW && k != POLICY_REPORT && k != POLICY_KERNEL;
}

static bool in_chain(const struct policy_chain *c, enum policy_kind k)
{
	for (unsigned i = 0; c && i < c->n_steps; i++)
		if (c->steps[i] == k)
			return true;
	return false;
}

/* A scope's kills by policy: a sample for each policy that could kill in it
 * (its chain's and the machine's, whose OOMs kill in jobs), and for any
 * other that did (before a reload changed the chains). */
static void kills_of(struct metrics *m, struct prom *p, const struct scope *s)
{
	const struct policy_chain *machine = m->scopes->machine.chain;
	struct label l[3];
	size_t n = scope_labels(s, l);

	for (unsigned k = 0; k < POLICY__COUNT; k++) {
		if (!kills((enum policy_kind)k) ||
		    !(s->counters.kills_by_policy[k] || in_chain(s->chain, (enum policy_kind)k) ||
		      in_chain(machine, (enum policy_kind)k)))
			continue;
		l[n] = (struct label){"policy", policy_kind_name((enum policy_kind)k)};
		sample(p, "oomkit_kills_total", l, n + 1, s->counters.kills_by_policy[k]);
	}
}

/* OOMs held right now: open questions, delegated jobs' OOMs their owners
 * have until the delay, and actions under way (a victim exiting, a scope
 * not yet out of OOM). */
static uint64_t holds(const struct metrics *m)
{
	uint64_t n = m->stats->flights + (m->prompt && m->prompt->active);

	SCOPE_FOREACH_JOB (j, m->scopes)
		n += j->delegated_due_ns != 0;
	return n;
}

static void format_histogram(struct prom *p, const char *name, const char *help,
			     const struct stats_histogram *h)
{
	static const uint64_t bound[STATS_BUCKETS] = STATS_BUCKET_BOUNDS_NS;
	char bucket[64], le[32];
	uint64_t below = 0;

	header(p, name, "histogram", help);
	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	for (unsigned i = 0; i <= STATS_BUCKETS; i++) {
		struct label l = {"le", i < STATS_BUCKETS ? seconds(bound[i], le, sizeof(le)) : "+Inf"};
		below += h->bucket[i];
		sample(p, bucket, &l, 1, below);
	}
	prom_printf(p, "%s_sum %s\n%s_count %" PRIu64 "\n", name, seconds(h->sum_ns, le, sizeof(le)), name,
		    h->count);
}

/* Memory priority (protect.h): what it holds and has reclaimed, per job it
 * touched; whether an episode is under way. */
static void format_protect(struct metrics *m, struct prom *p)
{
	if (!m->protect)
		return;
	header(p, "oomkit_memory_priority_active", "gauge",
	       "1 while the machine stalls on memory and memory priority acts.");
	sample(p, "oomkit_memory_priority_active", NULL, 0, m->protect->active);
	header(p, "oomkit_memory_priority_episodes_total", "counter",
	       "Times the machine stalled enough on memory for memory priority to act.");
	sample(p, "oomkit_memory_priority_episodes_total", NULL, 0, m->protect->episodes);
	header(p, "oomkit_job_memory_low_bytes", "gauge",
	       "The memory.low oomkitd set on the job to protect its working set (0: none now).");
	SCOPE_FOREACH_JOB (j, m->scopes) {
		uint64_t low, reclaimed;
		if (protect_of(m->protect, j, &low, &reclaimed))
			scope_sample(p, "oomkit_job_memory_low_bytes", j, low);
	}
	header(p, "oomkit_job_reclaimed_bytes_total", "counter",
	       "Memory oomkitd reclaimed from the job through memory.reclaim, before any kill.");
	SCOPE_FOREACH_JOB (j, m->scopes) {
		uint64_t low, reclaimed;
		if (protect_of(m->protect, j, &low, &reclaimed))
			scope_sample(p, "oomkit_job_reclaimed_bytes_total", j, reclaimed);
	}
}

static void format_all(struct metrics *m, struct prom *p)
{
	const struct stats *st = m->stats;
	struct oomkit_cgroup_memory mem;
	bool have = oomkit_cgroup_memory(m->ctx, m->scopes->machine.rel, &mem) >= 0;

	/* Each family's samples follow its own header, as the text format requires. */
	header(p, "oomkit_machine_usage_bytes", "gauge", "Memory charged to the machine memcg.");
	if (have)
		sample(p, "oomkit_machine_usage_bytes", NULL, 0, mem.usage_bytes);
	header(p, "oomkit_machine_limit_bytes", "gauge",
	       "The machine memcg's limit (absent when unlimited).");
	if (have && mem.limit_bytes != OOMKIT_UNLIMITED)
		sample(p, "oomkit_machine_limit_bytes", NULL, 0, mem.limit_bytes);
	format_job_gauges(m, p);
	format_scope_counter(m, p, "oomkit_oom_events_total",
			     "OOMs of a scope's own limit (a job, or the machine).", true, ooms_of);
	header(p, "oomkit_kills_total", "counter",
	       "Processes killed, by where they were and the policy that chose them.");
	kills_of(m, p, &m->scopes->machine);
	SCOPE_FOREACH_JOB (j, m->scopes)
		kills_of(m, p, j);
	format_scope_counter(m, p, "oomkit_job_grows_total", "Times the job's limit was raised.", false,
			     grows_of);
	format_scope_counter(m, p, "oomkit_shed_successes_total",
			     "OOMs that shedding resolved without a kill.", true, sheds_of);
	format_protect(m, p);
	header(p, "oomkit_holds_in_progress", "gauge",
	       "OOMs held from the kernel killer right now, while the daemon decides or acts.");
	sample(p, "oomkit_holds_in_progress", NULL, 0, holds(m));
	header(p, "oomkit_machine_pressure_events_total", "counter",
	       "Critical memory pressure events of the machine memcg.");
	sample(p, "oomkit_machine_pressure_events_total", NULL, 0, st->pressure_events);
	header(p, "oomkit_kernel_handoffs_total", "counter",
	       "OOMs handed to the kernel OOM killer by a chain.");
	sample(p, "oomkit_kernel_handoffs_total", NULL, 0, st->kernel_handoffs);
	format_histogram(p, "oomkit_decision_seconds", "Time from the kernel's OOM event to the decision.",
			 &st->decision);
	format_histogram(p, "oomkit_freed_seconds",
			 "Time from the kernel's OOM event to the scope leaving OOM (memory freed).",
			 &st->freed);
}

/* ------------------------------------------------------------ the file */

#define MAGIC "# HELP oomkit_"

/* Splits path into its directory and its base name. */
static int split_path(const char *path, char *dir, size_t dir_len, const char **ret_base)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1] || (size_t)(slash - path) >= dir_len)
		return -EINVAL;
	snprintf(dir, dir_len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	*ret_base = slash + 1;
	return 0;
}

/* Whether an existing target is a metrics file this daemon wrote: a regular
 * file of its own that starts as it writes them.  Read without blocking and
 * without following a link. */
static bool ours(int dirfd, const char *base)
{
	char head[sizeof(MAGIC) - 1];
	struct stat st;
	int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	bool yes = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		   pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
		   memcmp(head, MAGIC, sizeof(head)) == 0;

	if (fd >= 0)
		close(fd);
	return yes;
}

/* The directory of the metrics file, opened, if it is the daemon's to write
 * in (owned by it, writable by nobody else) and the target is absent or a
 * metrics file it wrote: its fd, or -errno after logging why not. */
static int open_target(const char *path, const char **ret_base, bool quiet)
{
	char dir[CONFIG_PATH_MAX];
	struct stat st;

	if (split_path(path, dir, sizeof(dir), ret_base) < 0) {
		log_err("metrics %s: not an absolute file path", path);
		return -EINVAL;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = -errno;
		if (!quiet)
			log_err("metrics %s: %s", dir, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	const char *why = st.st_uid != geteuid() ? "its directory is owned by another user"
			  : (st.st_mode & 0022)	 ? "its directory is writable by others"
			  : faccessat(fd, *ret_base, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && !ours(fd, *ret_base)
			      ? "it exists and is not a metrics file this daemon wrote"
			      : NULL;
	if (why) {
		if (!quiet)
			log_err("metrics %s: %s: refused, no metrics are written", path, why);
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Writes path.tmp beside the target (created anew, never through a link)
 * and renames it over the target. */
static void write_file(struct metrics *m, const char *path)
{
	char tmp[CONFIG_PATH_MAX + 16];
	const char *base;
	int dirfd = open_target(path, &base, true);

	if (dirfd < 0) {
		log_warning("metrics %s: not updated: %s", path, strerror(-dirfd));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", base);
	(void)unlinkat(dirfd, tmp, 0);
	struct prom p = {.buf = m->buf, .cap = m->buf_len};
	p.fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (p.fd < 0) {
		log_warning("metrics %s.tmp: %s", path, strerror(errno));
		close(dirfd);
		return;
	}
	format_all(m, &p);
	prom_flush(&p);
	close(p.fd);
	if (p.err || renameat(dirfd, tmp, dirfd, base) < 0) {
		log_warning("metrics %s: not updated: %s", path, strerror(p.err ? -p.err : errno));
		(void)unlinkat(dirfd, tmp, 0);
	}
	close(dirfd);
}

void metrics_write(struct metrics *m)
{
	m->dirty = false;
	if (m->cfg && m->cfg->metrics[0] && m->path_ok)
		write_file(m, m->cfg->metrics);
}

void metrics_changed(struct metrics *m)
{
	m->dirty = true;
}

/* Not while an action is under way: with a thousand jobs a rewrite reads a
 * thousand memcgs, and the loop would notice the victim's exit and the
 * memory freed that much later.  The flight's landing asks again. */
static void after_turn(void *data)
{
	struct metrics *m = data;

	if (m->dirty && !m->stats->flights)
		metrics_write(m);
}

static void on_interval(void *data, uint64_t now)
{
	struct metrics *m = data;

	m->interval.due_ns = now + m->cfg->metrics_interval_ms * NS_PER_MS;
	metrics_changed(m);
}

int metrics_init(struct metrics *m, oomkit_ctx *ctx, struct scopes *scopes, const struct stats *stats,
		 struct loop *loop)
{
	memset(m, 0, sizeof(*m));
	m->ctx = ctx;
	m->scopes = scopes;
	m->stats = stats;
	m->buf_len = METRICS_BUF_LEN;
	m->buf = calloc(1, m->buf_len);
	m->samples = calloc(scopes->max_jobs, sizeof(*m->samples));
	if (!m->buf || !m->samples)
		return -ENOMEM;
	m->interval = (struct loop_timer){.fn = on_interval, .data = m};
	loop_on_turn(loop, after_turn, m);
	return loop_add_timer(loop, &m->interval);
}

void metrics_free(struct metrics *m)
{
	free(m->buf);
	free(m->samples);
	m->buf = NULL;
	m->samples = NULL;
}

void metrics_configure(struct metrics *m, const struct config *cfg)
{
	uint64_t old = m->cfg ? m->cfg->metrics_interval_ms : UINT64_MAX;
	const char *base;

	m->cfg = cfg;
	m->path_ok = false;
	if (cfg->metrics[0]) {
		int fd = open_target(cfg->metrics, &base, false);
		m->path_ok = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	/* Periodic rewrites only when metrics_interval is set; by default the
	 * file is rewritten on events alone. */
	if (cfg->metrics_interval_ms != old)
		m->interval.due_ns =
		    cfg->metrics_interval_ms ? now_ns() + cfg->metrics_interval_ms * NS_PER_MS : 0;
}
