/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inflight.c - see inflight.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/clock.h"
#include "oom/inflight.h"
#include "base/log.h"
#include "common/value.h"

/* How long we watch a scope for leaving OOM after acting, for the report. */
#define FREED_WAIT_NS (500ull * NS_PER_MS)
/* How often we look meanwhile: the kernel does not tell. */
#define FREED_POLL_NS (2ull * NS_PER_MS)
/* What a report says when the wait above ends with the scope still out of
 * memory (FREED_WAIT_NS in words). */
#define NOT_FREED_EXITED "the cgroup was still out of memory 500 ms after the victim exited"
#define NOT_FREED_ACTED "the cgroup was still out of memory 500 ms after the action"

static void on_pidfd(void *data, uint32_t index, uint32_t events);
static void on_timer(void *data, uint64_t now);
static void land_now(struct inflight *f, struct flight *fl);

/* Tells a flight's hook callbacks from those of a later flight in its slot. */
static uint64_t next_gen;

int inflight_init(struct inflight *f, struct loop *loop)
{
	f->loop = loop;
	for (unsigned i = 0; i < INFLIGHT_MAX; i++)
		f->slots[i] = (struct flight){.report_fd = -1, .pidfd = -1};
	f->timer = (struct loop_timer){.fn = on_timer, .data = f};
	f->source = loop_add_source(loop, on_pidfd, f);
	return f->source < 0 ? f->source : loop_add_timer(loop, &f->timer);
}

struct flight *inflight_take(struct inflight *f, struct scope_ref ref, const char *name, const char *rel,
			     struct flight *spare)
{
	struct flight *fl = spare;

	for (unsigned i = 0; i < INFLIGHT_MAX && fl == spare; i++)
		if (!f->slots[i].used)
			fl = &f->slots[i];
	*fl = (struct flight){
	    .used = fl != spare, .scope = ref, .report_fd = -1, .pidfd = -1, .gen = ++next_gen};
	if (fl->used)
		f->stats->flights++;
	snprintf(fl->scope_name, sizeof(fl->scope_name), "%s", name);
	snprintf(fl->label, sizeof(fl->label), "%s", name);
	snprintf(fl->rel, sizeof(fl->rel), "%s", rel);
	return fl;
}

/* The timer is due at the earliest deadline, or at the next look at a scope. */
static void arm(struct inflight *f, uint64_t now)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < INFLIGHT_MAX; i++) {
		const struct flight *fl = &f->slots[i];
		uint64_t due = fl->wait == FLIGHT_EXIT || fl->wait == FLIGHT_BEFORE ? fl->deadline_ns
			       : fl->wait == FLIGHT_FREED			    ? now + FREED_POLL_NS
										    : 0;
		if (due && (!next || due < next))
			next = due;
	}
	f->timer.due_ns = next;
}

void inflight_wait_exit(struct inflight *f, struct flight *fl, int pidfd, uint64_t deadline_ns)
{
	fl->pidfd = pidfd;
	fl->deadline_ns = deadline_ns;
	fl->wait = FLIGHT_EXIT;
	if (!fl->used || loop_add_fd(f->loop, pidfd, f->source, (uint32_t)(fl - f->slots), EPOLLIN) < 0) {
		/* No room to wait in the loop: what is done is done. */
		fl->t.acted_ns = now_ns();
		inflight_land(f, fl);
		return;
	}
	arm(f, now_ns());
}

void inflight_wait_grace(struct inflight *f, struct flight *fl, int pidfd, int sig,
			 uint64_t grace_deadline_ns, uint64_t kill_wait_ns)
{
	value_format_signal(sig, fl->signame, sizeof(fl->signame));
	fl->more.ended_by = fl->signame;
	fl->grace = true;
	fl->kill_wait_ns = kill_wait_ns;
	inflight_wait_exit(f, fl, pidfd, grace_deadline_ns);
}

/* The grace is over and the victim is still there: SIGKILL, through the
 * pidfd it was signalled by. */
static void escalate(struct inflight *f, struct flight *fl, uint64_t now)
{
	int r = oomkit_kill_pidfd(f->ctx, fl->pidfd);
	char sent[16];

	snprintf(sent, sizeof(sent), "%s", fl->signame);
	fl->grace = false;
	fl->deadline_ns = now + fl->kill_wait_ns;
	if (r == -ESRCH)
		return; /* exited as the grace ended: its pidfd says so next */
	snprintf(fl->signame, sizeof(fl->signame), "SIGKILL");
	log_info("%s: process %d did not exit within its grace after %s: SIGKILL", fl->label,
		 (int)fl->victim_pid, sent);
	snprintf(fl->result, sizeof(fl->result), "killed %d: SIGKILL after %s and its grace",
		 (int)fl->victim_pid, sent);
}

static bool left_oom(struct inflight *f, const struct flight *fl)
{
	struct oomkit_cgroup_memory m;

	return oomkit_cgroup_memory(f->ctx, fl->rel, &m) < 0 || !m.under_oom;
}

/* The victim is gone: its after_kill, if it has one, runs now. */
static void start_after_kill(struct inflight *f, struct flight *fl)
{
	char command[VALUE_COMMAND_MAX];

	if (!fl->after_kill[0])
		return;
	snprintf(command, sizeof(command), "%s", fl->after_kill);
	fl->after_kill[0] = '\0';
	(void)inflight_run_hook(f, fl, HOOK_AFTER_KILL, command, fl->after_kill_timeout_ms);
}

static void on_hook_done(void *data, uint64_t token, const struct hook_result *res)
{
	struct inflight *f = data;
	unsigned slot = (unsigned)(token & 0xff), idx = (unsigned)(token >> 8 & 0xff);
	struct flight *fl = slot < INFLIGHT_MAX ? &f->slots[slot] : NULL;

	if (!fl || !fl->used || fl->gen != token >> 16 || idx >= REPORT_HOOKS_MAX)
		return;
	hooks_record(res, &fl->more.hooks[idx]);
	if (fl->hooks_running)
		fl->hooks_running--;
	if (res->hook == HOOK_BEFORE_KILL && fl->wait == FLIGHT_BEFORE) {
		fl->wait = FLIGHT_NONE;
		f->kill_due(f->kill_due_data, fl);
	} else if (fl->hooks_running == 0 && fl->wait == FLIGHT_HOOKS) {
		land_now(f, fl);
	}
	arm(f, now_ns());
}

int inflight_run_hook(struct inflight *f, struct flight *fl, enum config_hook hook, const char *command,
		      uint64_t timeout_ms)
{
	struct report_more *m = &fl->more;
	const struct flight_victim *v = &fl->victim;
	struct hook_env env = {.job = v->job,
			       .cgroup = v->cgroup,
			       .pid = v->pid,
			       .comm = v->comm,
			       .rss_bytes = v->rss_bytes,
			       .reason = fl->reason,
			       .report = v->report[0] ? v->report : NULL};

	if (!f->hooks || m->n_hooks >= REPORT_HOOKS_MAX)
		return -E2BIG;
	unsigned idx = m->n_hooks++;
	m->hooks[idx] = (struct report_hook){.hook = hooks_name(hook), .timeout_ms = timeout_ms};
	int r = fl->used ? 0 : -ENOSPC;
	if (r == 0) {
		uint64_t token = fl->gen << 16 | (uint64_t)idx << 8 | (uint64_t)(fl - f->slots);
		r = hooks_run(f->hooks, hook, command, &env, timeout_ms, on_hook_done, f, token);
	}
	if (r < 0) {
		m->hooks[idx].ended = "not run";
		m->hooks[idx].code = -r;
		return r;
	}
	fl->hooks_running++;
	return 0;
}

void inflight_wait_before(struct inflight *f, struct flight *fl, uint64_t deadline_ns)
{
	fl->wait = FLIGHT_BEFORE;
	fl->deadline_ns = deadline_ns;
	arm(f, now_ns());
}

void inflight_wait_freed(struct inflight *f, struct flight *fl)
{
	uint64_t now = now_ns();

	start_after_kill(f, fl);

	if (left_oom(f, fl)) {
		fl->t.freed_ns = now;
		inflight_land(f, fl);
		return;
	}
	if (!fl->used) {
		fl->t.not_freed = "the cgroup was still out of memory when the report was written";
		inflight_land(f, fl);
		return;
	}
	fl->wait = FLIGHT_FREED;
	fl->deadline_ns = now + FREED_WAIT_NS;
	arm(f, now);
}

static void exited(struct inflight *f, struct flight *fl)
{
	struct scope *scope = scope_get(fl->scope);

	/* Exited within its grace: the signal it was sent ended it. */
	if (fl->grace) {
		fl->grace = false;
		snprintf(fl->result, sizeof(fl->result), "%d exited on %s within its grace",
			 (int)fl->victim_pid, fl->signame);
	}
	if (scope && f->lend)
		lend_release(f->lend, scope);
	loop_del_fd(f->loop, fl->pidfd);
	close(fl->pidfd);
	fl->pidfd = -1;
	fl->t.acted_ns = now_ns();
	fl->exited = true;
	inflight_wait_freed(f, fl);
}

static void on_pidfd(void *data, uint32_t index, uint32_t events)
{
	struct inflight *f = data;

	(void)events;
	if (index < INFLIGHT_MAX && f->slots[index].used && f->slots[index].wait == FLIGHT_EXIT)
		exited(f, &f->slots[index]);
}

static void on_timer(void *data, uint64_t now)
{
	struct inflight *f = data;

	for (unsigned i = 0; i < INFLIGHT_MAX; i++) {
		struct flight *fl = &f->slots[i];
		if (fl->wait == FLIGHT_EXIT && fl->grace && now >= fl->deadline_ns) {
			escalate(f, fl, now);
		} else if (fl->wait == FLIGHT_EXIT && now >= fl->deadline_ns) {
			/* Signalled and not gone in time: its memory goes with it. */
			log_info("%s: process %d has not exited yet", fl->label, (int)fl->victim_pid);
			exited(f, fl);
		} else if (fl->wait == FLIGHT_FREED && left_oom(f, fl)) {
			fl->t.freed_ns = now_ns();
			inflight_land(f, fl);
		} else if (fl->wait == FLIGHT_FREED && now >= fl->deadline_ns) {
			struct scope *scope = fl->exited ? scope_get(fl->scope) : NULL;
			fl->t.not_freed = fl->exited ? NOT_FREED_EXITED : NOT_FREED_ACTED;
			inflight_land(f, fl);
			if (scope && f->oom_goes_on)
				f->oom_goes_on(f->kill_due_data, scope);
		} else if (fl->wait == FLIGHT_BEFORE && now >= fl->deadline_ns) {
			/* The runner kills the hook at this moment too. */
			log_info("%s: before_kill still runs at its timeout: the kill goes ahead", fl->label);
			fl->wait = FLIGHT_NONE;
			f->kill_due(f->kill_due_data, fl);
		}
	}
	arm(f, now_ns());
}

/* The flight's latencies, into the metrics' histograms. */
static void observe(struct stats *st, const struct report_times *t)
{
	if (!t->event_ns)
		return;
	stats_observe(&st->decision, t->decided_ns > t->event_ns ? t->decided_ns - t->event_ns : 0);
	if (t->freed_ns)
		stats_observe(&st->freed, t->freed_ns > t->event_ns ? t->freed_ns - t->event_ns : 0);
}

void inflight_land(struct inflight *f, struct flight *fl)
{
	if (fl->used && fl->hooks_running > 0) {
		/* Its hooks end within their timeouts, or are taken as lost. */
		fl->wait = FLIGHT_HOOKS;
		return;
	}
	land_now(f, fl);
}

static void land_now(struct inflight *f, struct flight *fl)
{
	struct report_summary sum = {.time_ms = fl->time_ms,
				     .action = fl->action,
				     .victim_pid = fl->victim_pid,
				     .reason = fl->reason,
				     .instance = fl->instance ? fl->rel : NULL,
				     .readers = &fl->readers};

	if (!fl->t.acted_ns)
		fl->t.acted_ns = now_ns();
	if (fl->report_fd >= 0) {
		fl->report.buf = f->buf;
		fl->report.cap = f->buf_len;
		if (fl->jobs_later)
			report_write_jobs(&fl->report, f->ctx, f->scopes);
		report_write_tail(&fl->report, fl->result, &fl->more, &fl->t, &fl->readers);
		reports_done(f->reports, fl->report_id, fl->scope_name, fl->report_fd, fl->report.err, &sum);
	}
	if (fl->pidfd >= 0) {
		if (fl->used)
			loop_del_fd(f->loop, fl->pidfd);
		close(fl->pidfd);
	}
	if (fl->used)
		f->stats->flights--;
	observe(f->stats, &fl->t);
	log_at(fl->failed ? LOG_LEVEL_WARNING : LOG_LEVEL_INFO, "%s: %s", fl->label, fl->result);
	metrics_changed(f->metrics);
	*fl = (struct flight){.report_fd = -1, .pidfd = -1};
	/* Its deadline goes with it: a landed flight wakes nobody later. */
	arm(f, now_ns());
}

bool inflight_exiting(const struct inflight *f, const struct scope *scope)
{
	for (unsigned i = 0; i < INFLIGHT_MAX; i++)
		if ((f->slots[i].wait == FLIGHT_EXIT || f->slots[i].wait == FLIGHT_BEFORE) &&
		    scope_get(f->slots[i].scope) == scope)
			return true;
	return false;
}

void inflight_land_all(struct inflight *f)
{
	for (unsigned i = 0; i < INFLIGHT_MAX; i++)
		if (f->slots[i].used) {
			if (!f->slots[i].t.freed_ns && !f->slots[i].t.not_freed)
				f->slots[i].t.not_freed = "oomkitd stopped before the cgroup left OOM";
			land_now(f, &f->slots[i]);
		}
	f->timer.due_ns = 0;
}
