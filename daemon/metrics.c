/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.c - the Prometheus text file for node_exporter's textfile
 * collector.  It is formatted into a preallocated buffer, written to a
 * temporary file beside the target and renamed over it, so a reader never
 * sees half a file.
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
	char *buf;
	size_t len, cap;
};

static void mprintf(struct mbuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mprintf(struct mbuf *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->len >= m->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->buf + m->len, m->cap - m->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		m->len = (size_t)n < m->cap - m->len ? m->len + (size_t)n : m->cap;
}

static void header(struct mbuf *m, const char *name, const char *type, const char *help)
{
	mprintf(m, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
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

	for (size_t k = 0; k < sizeof(gauges) / sizeof(gauges[0]); k++) {
		header(m, gauges[k].name, "gauge", gauges[k].help);
		for (unsigned i = 0; i < d->n_jobs; i++) {
			struct job_state *j = &d->jobs[i];
			struct oomkit_cgroup_memory mem;
			uint64_t v;
			if (!j->name[0] || oomkit_cgroup_memory(d->ctx, j->rel, &mem) < 0)
				continue;
			v = k == 0 ? mem.usage_bytes : k == 1 ? mem.limit_bytes : k == 2 ? j->cfg->priority : mem.under_oom;
			if (v == OOMKIT_UNLIMITED)
				continue;
			mprintf(m, "%s{job=\"%s\"} %" PRIu64 "\n", gauges[k].name, j->name, v);
		}
	}
	header(m, "oomkit_oom_events_total", "counter", "OOMs of a scope's own limit (a job, or the machine).");
	mprintf(m, "oomkit_oom_events_total{scope=\"machine\"} %" PRIu64 "\n", d->machine.ooms);
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_oom_events_total{scope=\"%s\"} %" PRIu64 "\n", d->jobs[i].name, d->jobs[i].ooms);
	header(m, "oomkit_job_kills_total", "counter", "Processes killed in the job.");
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_job_kills_total{job=\"%s\"} %" PRIu64 "\n", d->jobs[i].name, d->jobs[i].kills);
	header(m, "oomkit_job_grows_total", "counter", "Times the job's limit was raised.");
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			mprintf(m, "oomkit_job_grows_total{job=\"%s\"} %" PRIu64 "\n", d->jobs[i].name, d->jobs[i].grows);
}

static void format_all(struct daemon *d, struct mbuf *m)
{
	struct oomkit_cgroup_memory mem;

	bool have = oomkit_cgroup_memory(d->ctx, d->machine.rel, &mem) >= 0;

	/* Each family's samples follow its own header, as the text format requires. */
	header(m, "oomkit_machine_usage_bytes", "gauge", "Memory charged to the machine memcg.");
	if (have)
		mprintf(m, "oomkit_machine_usage_bytes %" PRIu64 "\n", mem.usage_bytes);
	header(m, "oomkit_machine_limit_bytes", "gauge", "The machine memcg's limit (absent when unlimited).");
	if (have && mem.limit_bytes != OOMKIT_UNLIMITED)
		mprintf(m, "oomkit_machine_limit_bytes %" PRIu64 "\n", mem.limit_bytes);
	format_jobs(d, m);
	header(m, "oomkit_kills_total", "counter", "Processes killed, by the policy that chose them.");
	for (unsigned k = 0; k < POLICY__COUNT; k++)
		if (k != POLICY_GROW && k != POLICY_REPORT && k != POLICY_KERNEL)
			mprintf(m, "oomkit_kills_total{policy=\"%s\"} %" PRIu64 "\n", policy_kind_name((enum policy_kind)k),
				d->kills_by_policy[k]);
	header(m, "oomkit_machine_pressure_events_total", "counter", "Critical memory pressure events of the machine memcg.");
	mprintf(m, "oomkit_machine_pressure_events_total %" PRIu64 "\n", d->machine.pressure_events);
	header(m, "oomkit_kernel_handoffs_total", "counter", "OOMs handed to the kernel OOM killer by a chain.");
	mprintf(m, "oomkit_kernel_handoffs_total %" PRIu64 "\n", d->kernel_handoffs);
	header(m, "oomkit_handling_seconds", "summary", "Time from the kernel's OOM event to the completed action.");
	mprintf(m, "oomkit_handling_seconds_sum %.6f\noomkit_handling_seconds_count %" PRIu64 "\n",
		(double)d->handling_ns_sum / 1e9, d->handled);
	header(m, "oomkit_last_handling_seconds", "gauge", "Handling time of the most recent OOM.");
	mprintf(m, "oomkit_last_handling_seconds %.6f\n", (double)d->last_handling_ns / 1e9);
}

void metrics_write(struct daemon *d)
{
	char tmp[CONFIG_PATH_MAX + 16];
	struct mbuf m = {.buf = d->metricsbuf, .cap = d->metricsbuf_len};
	const char *path = d->cfg->metrics;

	if (!path[0])
		return;
	format_all(d, &m);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		dlog(4, "metrics %s: %s", tmp, strerror(errno));
		return;
	}
	size_t off = 0;
	while (off < m.len) {
		ssize_t n = write(fd, m.buf + off, m.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (off != m.len || rename(tmp, path) < 0) {
		dlog(4, "metrics %s: not updated: %s", path, off != m.len ? "short write" : strerror(errno));
		unlink(tmp);
	}
}
