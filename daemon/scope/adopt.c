/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* adopt.c - see adopt.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "scope/adopt.h"
#include "base/clock.h"
#include "base/log.h"
#include "rules/pattern.h"
#include "scope/tracker.h"
#include "common/value.h"

/* "Its limit was written over" lines in a burst; one a second after it. */
#define LIMIT_LINES_BURST 10
/* Buffers of memory.max events read in one turn of the loop. */
#define LIMIT_READS 4

/* A cgroup path as a log line may carry it: the names are the job owner's. */
#define SHOWN_MAX LOG_ESCAPED_MAX(SCOPE_REL_MAX)

static const char *shown(const char *rel, char *buf)
{
	return log_escape(buf, SHOWN_MAX, rel);
}

static void on_tracker(void *data, uint32_t index, uint32_t events)
{
	struct adopt *a = data;
	int r;

	(void)index;
	(void)events;
	if (a->tracker && (r = tracker_dispatch(a->tracker)) < 0)
		log_warning("following the jobs' cgroups: %s", strerror(-r));
}

static void on_limit(void *data, uint32_t index, uint32_t events);

int adopt_init(struct adopt *a, struct loop *loop)
{
	a->loop = loop;
	a->limit_fd = -1;
	a->source = loop_add_source(loop, on_tracker, a);
	if (a->source < 0)
		return a->source;
	a->limit_source = loop_add_source(loop, on_limit, a);
	return a->limit_source < 0 ? a->limit_source : 0;
}

int adopt_check_self(struct adopt *a, const struct config *cfg)
{
	char errors[CONFIG_ERRORS_MAX];

	if (!a->self[0] && oomkit_process_cgroup(a->ctx, getpid(), a->self, sizeof(a->self)) < 0)
		a->self[0] = '\0';
	if (config_check_self(cfg, a->self, errors, sizeof(errors)) == 0)
		return 0;
	log_lines(cfg->builtin ? LOG_LEVEL_WARNING : LOG_LEVEL_ERR, errors);
	/* Nobody wrote the built-in default for where this daemon runs: it
	 * starts, and the cgroup holding it is not adopted (acceptable()). */
	return cfg->builtin ? 0 : -EINVAL;
}

/* ------------------------------------------------------------ instances */

/* The instance's limit, if its job names one: as for a job, a limit raised
 * earlier (by grow) is kept within [limit, limit_max].  A job without a
 * limit leaves the cgroup's own limit alone: it is not ours.  True if it
 * wrote one (into *written). */
static bool set_limit(struct adopt *a, struct scope *s, uint64_t *written)
{
	const struct config_job *c = s->job;
	struct oomkit_cgroup_memory m;
	int r;

	if (c->limit_bytes == OOMKIT_UNLIMITED || a->dry_run || oomkit_cgroup_memory(a->ctx, s->rel, &m) < 0)
		return false;
	uint64_t want = m.limit_bytes < c->limit_bytes	     ? c->limit_bytes
			: m.limit_bytes > c->limit_max_bytes ? c->limit_max_bytes
							     : m.limit_bytes;
	if (want == m.limit_bytes)
		return false;
	if ((r = oomkit_set_limit(a->ctx, s->rel, want)) < 0) {
		log_warning("%s: cannot set the limit: %s", s->label, strerror(-r));
		return false;
	}
	if (written)
		*written = want;
	return true;
}

/* ------------------------------------------------------------ limits */

/* Takes the instance over if it has a limit now: true then.  Not by what
 * memory.high reads: systemd makes a restarted unit's cgroup with the hold
 * it was told (MemoryHigh=), which looks held and is nobody's until the
 * daemon takes it over; a take-over of a held cgroup is harmless. */
static bool take_over_if_limited(struct adopt *a, struct scope *s)
{
	struct oomkit_cgroup_memory m;
	if (oomkit_cgroup_memory(a->ctx, s->rel, &m) < 0 || m.limit_bytes == OOMKIT_UNLIMITED)
		return false;
	return handler_watch(a->handler, s, a->cfg->delay_ms) == 0;
}

static void stop_following(struct adopt *a, struct scope *s)
{
	unsigned i = scope_index(a->scopes, s);
	if (!a->limit_wd || a->limit_wd[i] <= 0)
		return;
	(void)inotify_rm_watch(a->limit_fd, a->limit_wd[i]);
	a->limit_wd[i] = 0;
}

/* Whether a "written over" line may be logged now: a burst of
 * LIMIT_LINES_BURST (systemd writes a slice's units at once), then one a
 * second; the writer may be a job owner's loop.  Those not logged are
 * counted into the next line. */
static bool line_allowed(struct adopt *a)
{
	uint64_t now = now_ns();

	a->limit_lines += (now - a->limit_logged_ns) / NS_PER_SEC;
	if (a->limit_lines > LIMIT_LINES_BURST || !a->limit_logged_ns)
		a->limit_lines = LIMIT_LINES_BURST;
	if (!a->limit_lines) {
		a->limit_unlogged++;
		return false;
	}
	a->limit_lines--;
	a->limit_logged_ns = now;
	return true;
}

static void written_over(struct adopt *a, struct scope *s, const char *what)
{
	if (!line_allowed(a))
		return;
	if (a->limit_unlogged)
		log_info("%s: %s (and %u such writes not logged since the last line)", s->label, what,
			 a->limit_unlogged);
	else
		log_info("%s: %s", s->label, what);
	a->limit_unlogged = 0;
}

/* A write to the instance's memory.max: systemd writes all of a unit's
 * memory attributes at once (memory.high before memory.max) when it makes
 * the cgroup, which may be after the daemon adopted it, and again, from
 * what it was last told, when a sibling starts.  Either may undo the job's
 * limit and the hold; systemd hears of them again only if the daemon writes
 * them again (the library's limits callback). */
static void limit_written(struct adopt *a, struct scope *s)
{
	unsigned i = scope_index(a->scopes, s);
	char what[96], lim[32];
	uint64_t written = 0;

	/* A loan (a shed's or a grace's headroom) raised the limit on purpose;
	 * its repayment puts it back. */
	if (a->lend && lend_of(a->lend, s))
		return;
	if (set_limit(a, s, &written)) {
		value_format_bytes(written, lim, sizeof(lim));
		snprintf(what, sizeof(what), "its limit was written over; %s again", lim);
		written_over(a, s, what);
	}
	if (!a->limit_taken[i]) {
		if ((a->limit_taken[i] = take_over_if_limited(a, s)))
			log_info("%s: has a limit now; taken over", s->label);
		return;
	}
	if (handler_hold_after_limit(a->handler, s, a->cfg->delay_ms))
		written_over(a, s, "its hold was written over; held again");
}

/* Each instance's memory.max (v1: memory.limit_in_bytes) is followed for as
 * long as it is adopted: inotify on the file (writes by a process; the
 * kernel's own notifications are for other files), with no polling and no
 * control file opened.  A cgroup v2 cgroup adopted without a limit cannot
 * be held (on a systemd machine: a unit's cgroup between its mkdir and the
 * write of its MemoryMax=): that write takes it over. */
static void follow_limit(struct adopt *a, struct scope *s)
{
	char path[PATH_MAX];
	unsigned i = scope_index(a->scopes, s);

	if (a->dry_run)
		return;
	if ((!a->limit_wd && !(a->limit_wd = calloc(a->scopes->max_jobs, sizeof(*a->limit_wd)))) ||
	    (!a->limit_taken && !(a->limit_taken = calloc(a->scopes->max_jobs, sizeof(*a->limit_taken)))) ||
	    (!a->limit_marked &&
	     !(a->limit_marked = calloc(a->scopes->max_jobs, sizeof(*a->limit_marked))))) {
		(void)take_over_if_limited(a, s);
		return;
	}
	if (a->limit_fd < 0) {
		a->limit_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (a->limit_fd < 0 || loop_add_fd(a->loop, a->limit_fd, a->limit_source, 0, EPOLLIN) < 0) {
			log_warning("cannot follow limits written after adoption: %s", strerror(errno));
			if (a->limit_fd >= 0)
				close(a->limit_fd);
			a->limit_fd = -1;
		}
	}
	snprintf(path, sizeof(path), "%s/%s/%s", oomkit_memory_root(a->ctx), s->rel,
		 oomkit_backend(a->ctx) == OOMKIT_BACKEND_V2 ? "memory.max" : "memory.limit_in_bytes");
	int wd = a->limit_fd < 0 ? -1 : inotify_add_watch(a->limit_fd, path, IN_MODIFY);
	int e = errno;
	if (wd < 0 && a->limit_fd >= 0 && e != ENOENT) { /* ENOENT: gone, the tracker says so */
		char buf[SHOWN_MAX];
		log_warning("%s: cannot follow writes to the limit of %s: %s", s->label, shown(s->rel, buf),
			    strerror(e));
	}
	a->limit_wd[i] = wd < 0 ? 0 : wd;
	/* What was written before the watch was there: after the limit and
	 * the take-over setup() wrote, or before. */
	a->limit_taken[i] = take_over_if_limited(a, s);
	if (wd >= 0)
		limit_written(a, s);
}

/* Up to LIMIT_READS buffers of events a turn, each instance answered once
 * for all of them: a job owner who writes its own delegated cgroups' limits
 * in a loop (alternating between two, so that inotify cannot merge the
 * events) gets an answer per turn, never the loop's whole time, and the
 * queue does not grow past what a turn drains.  If it overflowed anyway,
 * every instance is looked at. */
static void on_limit(void *data, uint32_t index, uint32_t events)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct adopt *a = data;
	bool overflow = false;
	ssize_t n;

	(void)index;
	(void)events;
	if (!a->limit_wd)
		return;
	for (int k = 0; k < LIMIT_READS && (n = read(a->limit_fd, buf, sizeof(buf))) > 0; k++) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;
			p += sizeof(*ie) + ie->len;
			if (ie->mask & IN_Q_OVERFLOW)
				overflow = true;
			if (!(ie->mask & IN_MODIFY))
				continue;
			for (unsigned i = 0; i < a->scopes->max_jobs; i++)
				if (a->limit_wd[i] == ie->wd)
					a->limit_marked[i] = true;
		}
	}
	if (overflow && line_allowed(a))
		log_warning("writes to instances' limits came faster than they were read; looking at all");
	for (unsigned i = 0; i < a->scopes->max_jobs; i++) {
		struct scope *s = &a->scopes->jobs[i];
		bool marked = a->limit_marked[i] || (overflow && a->limit_wd[i] > 0);
		a->limit_marked[i] = false;
		if (marked && s->in_use && s->kind == SCOPE_KIND_INSTANCE)
			limit_written(a, s);
	}
}

static void drop(struct adopt *a, struct scope *s, const char *why)
{
	char buf[SHOWN_MAX];

	stop_following(a, s);
	log_info("%s: %s %s; no longer an instance", s->label, shown(s->rel, buf), why);
	handler_unwatch(a->handler, s);
	scope_remove(a->scopes, s);
	a->dropped++;
	metrics_changed(a->metrics);
}

/* Another job whose pattern matches rel: the first one's index, or -1. */
static int other_job(const struct adopt *a, const char *rel, unsigned job)
{
	for (unsigned i = 0; i < a->cfg->n_cgroups; i++)
		if (a->cfg->cgroups[i].job != job && pattern_match(a->cfg->cgroups[i].pattern, rel) &&
		    !config_excluded(a->cfg, a->cfg->cgroups[i].job, rel))
			return (int)i;
	return -1;
}

/* Whether rel may become an instance of the job of pattern p; says why not. */
static bool acceptable(struct adopt *a, const char *rel, const struct config_cgroup *p)
{
	const struct config *cfg = a->cfg;
	struct scope *s = scope_by_rel(a->scopes, rel);
	char buf[SHOWN_MAX];
	int o = other_job(a, rel, p->job);

	if (o >= 0) {
		const struct config_cgroup *q = &cfg->cgroups[o];
		log_err("cgroup %s matches job %s (%s:%u) and job %s (%s:%u); adopted by neither",
			shown(rel, buf), cfg->jobs[p->job].name, cfg->source, p->line, cfg->jobs[q->job].name,
			cfg->source, q->line);
		return false;
	}
	if (s) {
		log_err("%s:%u: [job %s] cgroup %s is %s's own memcg; not adopted", cfg->source, p->line,
			cfg->jobs[p->job].name, shown(rel, buf), s->label);
		return false;
	}
	if (a->self[0] && scope_path_under(a->self, rel)) {
		log_err("%s:%u: [job %s] cgroup %s holds oomkitd itself; not adopted", cfg->source, p->line,
			cfg->jobs[p->job].name, shown(rel, buf));
		return false;
	}
	return true;
}

/* Watches and takes over a new instance.  One that cannot be watched is
 * dropped whole: gone meanwhile (it vanished mid-adoption) or refused. */
static void setup(struct adopt *a, struct scope *s)
{
	char buf[SHOWN_MAX], lim[32];
	struct oomkit_cgroup_memory m = {.limit_bytes = OOMKIT_UNLIMITED};

	set_limit(a, s, NULL);
	int r = handler_watch(a->handler, s, a->cfg->delay_ms);
	if (r < 0 || !s->watch) {
		bool gone = r == -ENOENT || oomkit_cgroup_exists(a->ctx, s->rel) <= 0;
		log_at(gone ? LOG_LEVEL_INFO : LOG_LEVEL_ERR, "%s: %s %s; not adopted", s->label,
		       shown(s->rel, buf),
		       gone ? "was removed while it was adopted" : "cannot be watched or taken over");
		handler_unwatch(a->handler, s);
		scope_remove(a->scopes, s);
		return;
	}
	handler_note_oom_count(a->handler, s);
	follow_limit(a, s);
	(void)oomkit_cgroup_memory(a->ctx, s->rel, &m);
	int n = oomkit_cgroup_pids(a->ctx, s->rel, true, a->pids, a->max_pids);
	value_format_bytes(m.limit_bytes, lim, sizeof(lim));
	log_info("%s: adopted %s, %d processes, limit %s, priority %u", s->label, shown(s->rel, buf),
		 n < 0 ? 0 : n, lim, s->job->priority);
	a->adopted++;
	metrics_changed(a->metrics);
}

/* A reload kept the instance in the same job: the new configuration of it. */
static void repoint(struct adopt *a, struct scope *s, const struct config_job *job, uint64_t old_delay_ms)
{
	uint64_t old_limit = s->job->limit_bytes;

	s->job = job;
	s->chain = &job->chain;
	a->seen[scope_index(a->scopes, s)] = true;
	if (job->limit_bytes != old_limit)
		set_limit(a, s, NULL);
	if (a->cfg->delay_ms != old_delay_ms || !s->watch)
		handler_watch(a->handler, s, a->cfg->delay_ms);
	else if (job->limit_bytes != old_limit)
		handler_hold_after_limit(a->handler, s, a->cfg->delay_ms);
}

static void on_match(void *data, const char *rel, unsigned pattern, bool added)
{
	struct adopt *a = data;
	const struct config_cgroup *p = &a->cfg->cgroups[pattern];
	const struct config_job *job = &a->cfg->jobs[p->job];
	struct scope *s = scope_by_rel(a->scopes, rel);
	int err = 0;

	if (!added) {
		if (s && s->kind == SCOPE_KIND_INSTANCE)
			drop(a, s, "was removed");
		return;
	}
	if (config_excluded(a->cfg, p->job, rel)) {
		/* A reload that excludes an instance lets it go. */
		if (s && s->kind == SCOPE_KIND_INSTANCE && strcmp(s->name, job->name) == 0)
			drop(a, s, "is excluded by cgroup_exclude");
		/* The tracker names the first pattern that matches; the job an
		 * exclusion leaves the cgroup to (a later one) takes it. */
		int o = other_job(a, rel, p->job);
		if (o >= 0)
			on_match(data, rel, (unsigned)o, added);
		return;
	}
	if (s && s->kind == SCOPE_KIND_INSTANCE && a->seen) {
		/* A reload: the same job keeps it; another job takes it anew. */
		if (strcmp(s->name, job->name) == 0 && other_job(a, rel, p->job) < 0) {
			repoint(a, s, job, a->old_delay_ms);
			return;
		}
		drop(a, s, "is no longer this job's");
	}
	if (!acceptable(a, rel, p))
		return;
	if (!(s = scope_add_instance(a->scopes, job, rel, &err))) {
		char buf[SHOWN_MAX];
		if (err == -ENAMETOOLONG)
			log_err("%s: cgroup %s: its path is too long to adopt", job->name, shown(rel, buf));
		else if (err == -ENOMEM)
			log_err("%s: cgroup %s: out of memory to adopt it", job->name, shown(rel, buf));
		else
			log_err("%s: no room to adopt %s: oomkitd has room for %u jobs and instances",
				job->name, shown(rel, buf), a->scopes->max_jobs);
		return;
	}
	if (a->seen)
		a->seen[scope_index(a->scopes, s)] = true;
	setup(a, s);
}

/* ------------------------------------------------------------ the tracker */

/* Patterns that match nothing yet are not errors: the cgroups may come. */
static void notice_unmatched(struct adopt *a)
{
	char buf[SHOWN_MAX];

	for (unsigned i = 0; i < a->cfg->n_cgroups; i++) {
		const struct config_cgroup *p = &a->cfg->cgroups[i];
		if (tracker_matches(a->tracker, i) == 0)
			log_notice("%s:%u: [job %s] cgroup %s matches no cgroup yet; each is adopted when it "
				   "appears",
				   a->cfg->source, p->line, a->cfg->jobs[p->job].name,
				   shown(p->pattern, buf));
	}
}

static int start_tracker(struct adopt *a)
{
	const char **patterns;
	int r;

	if (a->cfg->n_cgroups == 0)
		return 0;
	if (!(patterns = calloc(a->cfg->n_cgroups, sizeof(*patterns))))
		return -ENOMEM;
	for (unsigned i = 0; i < a->cfg->n_cgroups; i++)
		patterns[i] = a->cfg->cgroups[i].pattern;
	r = tracker_new(oomkit_memory_root(a->ctx), patterns, a->cfg->n_cgroups, on_match, a, &a->tracker);
	free(patterns);
	if (r < 0)
		return r;
	if ((r = tracker_start(a->tracker)) < 0 ||
	    (r = loop_add_fd(a->loop, tracker_fd(a->tracker), a->source, 0, EPOLLIN)) < 0) {
		log_err("cannot follow the jobs' cgroups under %s: %s", oomkit_memory_root(a->ctx),
			strerror(-r));
		tracker_free(a->tracker);
		a->tracker = NULL;
		return r;
	}
	notice_unmatched(a);
	log_info("following %u cgroup patterns: %u directories watched", a->cfg->n_cgroups,
		 tracker_watches(a->tracker));
	return 0;
}

int adopt_start(struct adopt *a, const struct config *cfg)
{
	a->cfg = cfg;
	return start_tracker(a);
}

static void stop_tracker(struct adopt *a)
{
	if (!a->tracker)
		return;
	loop_del_fd(a->loop, tracker_fd(a->tracker));
	tracker_free(a->tracker);
	a->tracker = NULL;
}

void adopt_reload(struct adopt *a, const struct config *cfg)
{
	bool again;
	int r;

	a->old_delay_ms = a->cfg ? a->cfg->delay_ms : cfg->delay_ms;
	stop_tracker(a);
	a->cfg = cfg;
	/* Instances the new tracker's first walk finds are marked seen and
	 * kept; the others go.  Without the marks, all go and come back. */
	a->seen = calloc(a->scopes->max_jobs, sizeof(*a->seen));
	if (a->seen && (r = start_tracker(a)) < 0)
		log_err("reload: cannot follow the jobs' cgroups: %s", strerror(-r));
	SCOPE_FOREACH_JOB (s, a->scopes)
		if (s->kind == SCOPE_KIND_INSTANCE && (!a->seen || !a->seen[scope_index(a->scopes, s)]))
			drop(a, s, "is not matched by the new configuration");
	again = !a->seen;
	free(a->seen);
	a->seen = NULL;
	if (again && (r = start_tracker(a)) < 0)
		log_err("reload: cannot follow the jobs' cgroups: %s", strerror(-r));
}

void adopt_stop(struct adopt *a)
{
	stop_tracker(a);
	if (a->loop && a->limit_fd >= 0) {
		loop_del_fd(a->loop, a->limit_fd);
		close(a->limit_fd);
		a->limit_fd = -1;
	}
	free(a->limit_wd);
	a->limit_wd = NULL;
	free(a->limit_taken);
	a->limit_taken = NULL;
	free(a->limit_marked);
	a->limit_marked = NULL;
}
