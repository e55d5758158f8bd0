/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.c - the Prometheus text file for node_exporter's textfile
 * collector.  It is formatted through a small preallocated buffer, written out
 * each time the buffer fills (a thousand jobs make a few hundred KiB), into a
 * temporary file beside the target that is then renamed over it, so a reader
 * never sees half a file.  It is rewritten after events, not on a clock (see
 * oomkitd.c), so each memcg is read once per rewrite.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oomkitd.h"

struct mbuf {
	int fd;
	char *buf;
	size_t len, cap;
	int err; /* the first write error, or -EMSGSIZE for an overlong line */
};

static void mflush(struct mbuf *m)
{
	size_t off = 0;

	while (off < m->len && !m->err) {
		ssize_t n = write(m->fd, m->buf + off, m->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			m->err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	m->len = 0;
}

static void mprintf(struct mbuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one formatted piece; when it does not fit, the buffer is written
 * out and the piece formatted again at its start. */
static void mprintf(struct mbuf *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (int attempt = 0; attempt < 2 && !m->err; attempt++) {
		va_start(ap, fmt);
		n = vsnprintf(m->buf + m->len, m->cap - m->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < m->cap - m->len) {
			m->len += (size_t)n;
			return;
		}
		if (m->len == 0)
			break;
		mflush(m);
	}
	if (!m->err)
		m->err = -EMSGSIZE;
}

static void header(struct mbuf *m, const char *name, const char *type, const char *help)
{
	mprintf(m, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Reads each job's memcg once for the four gauge families below. */
static void sample_jobs(struct daemon *d)
{
	for (unsigned i = 0; i < d->n_jobs; i++) {
		struct job_state *j = &d->jobs[i];
		struct oomkit_cgroup_memory mem;
		j->sample.ok = j->name[0] && oomkit_cgroup_memory(d->ctx, j->rel, &mem) >= 0;
		if (!j->sample.ok)
			continue;
		j->sample.usage_bytes = mem.usage_bytes;
		j->sample.limit_bytes = mem.limit_bytes;
		j->sample.under_oom = mem.under_oom;
	}
}

/* Gauges read now from the memcgs; counters kept by the daemon. */
static void format_jobs(struct daemon *d, struct mbuf *m)
{
	static const struct {
		const char *name, *help;
	} gauges[] = {
	    {"oomkit_job_usage_bytes", "Memory charged to the job's memcg."},
	    {"oomkit_job_limit_bytes", "The job's memcg limit (absent when unlimited)."},
	    {"oomkit_job_priority", "The job's configured priority (higher is more important)."},
	    {"oomkit_job_under_oom", "1 while the job's memcg is under OOM."},
	};

	sample_jobs(d);
	for (size_t k = 0; k < sizeof(gauges) / sizeof(gauges[0]); k++) {
		header(m, gauges[k].name, "gauge", gauges[k].help);
		for (unsigned i = 0; i < d->n_jobs; i++) {
			struct job_state *j = &d->jobs[i];
			uint64_t v;
			if (!j->name[0] || !j->sample.ok)
				continue;
			v = k == 0   ? j->sample.usage_bytes
			    : k == 1 ? j->sample.limit_bytes
			    : k == 2 ? j->cfg->priority
				     : j->sample.under_oom;
			if (v == OOMKIT_UNLIMITED)
				continue;
			mprintf(m, "%s{job=\"%s\"} %" PRIu64 "\n", gauges[k].name, j->name, v);
		}
	}
	header(m, "oomkit_oom_events_total", "counter",
	       "OOMs of a scope's own limit (a job, or the machine).");
	mprintf(m, "oomkit_oom_events_total{scope=\"machine\"} %" PRIu64 "\n", d->machine.ooms);
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_oom_events_total{scope=\"%s\"} %" PRIu64 "\n", d->jobs[i].name,
				d->jobs[i].ooms);
	header(m, "oomkit_job_kills_total", "counter", "Processes killed in the job.");
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_job_kills_total{job=\"%s\"} %" PRIu64 "\n", d->jobs[i].name,
				d->jobs[i].kills);
	header(m, "oomkit_job_grows_total", "counter", "Times the job's limit was raised.");
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_job_grows_total{job=\"%s\"} %" PRIu64 "\n", d->jobs[i].name,
				d->jobs[i].grows);
}

static void format_all(struct daemon *d, struct mbuf *m)
{
	struct oomkit_cgroup_memory mem;

	bool have = oomkit_cgroup_memory(d->ctx, d->machine.rel, &mem) >= 0;

	/* Each family's samples follow its own header, as the text format requires. */
	header(m, "oomkit_machine_usage_bytes", "gauge", "Memory charged to the machine memcg.");
	if (have)
		mprintf(m, "oomkit_machine_usage_bytes %" PRIu64 "\n", mem.usage_bytes);
	header(m, "oomkit_machine_limit_bytes", "gauge",
	       "The machine memcg's limit (absent when unlimited).");
	if (have && mem.limit_bytes != OOMKIT_UNLIMITED)
		mprintf(m, "oomkit_machine_limit_bytes %" PRIu64 "\n", mem.limit_bytes);
	format_jobs(d, m);
	header(m, "oomkit_kills_total", "counter", "Processes killed, by the policy that chose them.");
	for (unsigned k = 0; k < POLICY__COUNT; k++)
		if (k != POLICY_GROW && k != POLICY_REPORT && k != POLICY_KERNEL)
			mprintf(m, "oomkit_kills_total{policy=\"%s\"} %" PRIu64 "\n",
				policy_kind_name((enum policy_kind)k), d->kills_by_policy[k]);
	header(m, "oomkit_machine_pressure_events_total", "counter",
	       "Critical memory pressure events of the machine memcg.");
	mprintf(m, "oomkit_machine_pressure_events_total %" PRIu64 "\n", d->machine.pressure_events);
	header(m, "oomkit_kernel_handoffs_total", "counter",
	       "OOMs handed to the kernel OOM killer by a chain.");
	mprintf(m, "oomkit_kernel_handoffs_total %" PRIu64 "\n", d->kernel_handoffs);
	header(m, "oomkit_handling_seconds", "summary",
	       "Time from the kernel's OOM event to the completed action.");
	mprintf(m, "oomkit_handling_seconds_sum %.6f\noomkit_handling_seconds_count %" PRIu64 "\n",
		(double)d->handling_ns_sum / 1e9, d->handled);
	header(m, "oomkit_last_handling_seconds", "gauge", "Handling time of the most recent OOM.");
	mprintf(m, "oomkit_last_handling_seconds %.6f\n", (double)d->last_handling_ns / 1e9);
}

void metrics_write(struct daemon *d)
{
	char tmp[CONFIG_PATH_MAX + 16];
	const char *path = d->cfg->metrics;

	if (!path[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	struct mbuf m = {.buf = d->metricsbuf, .cap = d->metricsbuf_len};
	m.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (m.fd < 0) {
		log_warning("metrics %s: %s", tmp, strerror(errno));
		return;
	}
	format_all(d, &m);
	mflush(&m);
	close(m.fd);
	if (m.err || rename(tmp, path) < 0) {
		log_warning("metrics %s: not updated: %s", path, strerror(m.err ? -m.err : errno));
		unlink(tmp);
	}
}
