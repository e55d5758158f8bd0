/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.c - see report.h. */
#include "report/report.h"

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "config/config.h"
#include "common/value.h"

/* "concerns": the uids other than root the OOM concerns, who may read the
 * report through the control socket (reports.h). */
static void write_readers(struct oomkit__json *w, const struct report_readers *r)
{
	oomkit__json_open(w, "concerns", '[');
	for (unsigned i = 0; r && i < r->n; i++)
		oomkit__json_u64(w, NULL, r->uid[i]);
	oomkit__json_close(w, ']');
}

/* An escaped process's cgroup and who may write it, as the members named:
 * the cgroup as far as the snapshot kept it (null: it kept the first
 * SNAPSHOT_ESCAPED_CGROUPS only), whether that is only its start, its owner
 * (null: unreadable). */
static void write_escaped(struct oomkit__json *w, const char *cgroup_key, const char *cut_key,
			  const char *owner_key, const struct policy_proc *p)
{
	if (p->cgroup)
		oomkit__json_str(w, cgroup_key, p->cgroup);
	else
		oomkit__json_null(w, cgroup_key);
	if (p->cgroup_cut)
		oomkit__json_bool(w, cut_key, true);
	if (p->cgroup_owner != (uid_t)-1)
		oomkit__json_u64(w, owner_key, p->cgroup_owner);
	else
		oomkit__json_null(w, owner_key);
}

static bool escaped(const struct policy_input *in, const struct policy_proc *p)
{
	return p->group >= 0 && (unsigned)p->group < in->n_groups && in->groups[p->group].escaped;
}

/* A victim that left the jobs: the cgroup it was found in, and whose. */
static void write_victim_cgroup(struct oomkit__json *w, const struct policy_input *in,
				const struct policy_decision *dec)
{
	if (dec->action != ACTION_KILL && dec->action != ACTION_KILL_JOB)
		return;
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (p->pid == dec->victim_pid && p->start_time == dec->victim_start_time && escaped(in, p)) {
			oomkit__json_bool(w, "victim_escaped", true);
			write_escaped(w, "victim_cgroup", "victim_cgroup_cut", "victim_cgroup_owner", p);
			return;
		}
	}
}

void report_write_decision(struct oomkit__json *w, const char *key, const struct policy_input *in,
			   const struct policy_decision *dec)
{
	oomkit__json_open(w, key, '{');
	oomkit__json_str(w, "action", policy_action_name(dec->action));
	oomkit__json_str(w, "policy", dec->action == ACTION_NONE ? "" : policy_kind_name(dec->policy));
	oomkit__json_u64(w, "step", dec->step);
	oomkit__json_i64(w, "victim_pid", dec->victim_pid);
	if (dec->victim_group >= 0 && (unsigned)dec->victim_group < in->n_groups)
		oomkit__json_str(w, "victim_job", in->groups[dec->victim_group].name);
	else
		oomkit__json_null(w, "victim_job");
	oomkit__json_limit(w, "new_limit_bytes",
			   dec->action == ACTION_GROW ? dec->new_limit_bytes : UINT64_MAX);
	if (dec->action == ACTION_KILL || dec->action == ACTION_KILL_JOB) {
		/* Its command line as the snapshot read it (the candidates have
		 * it too): a comm alone ("python3") rarely says which one it is. */
		for (unsigned i = 0; i < in->n_procs; i++)
			if (in->procs[i].pid == dec->victim_pid) {
				oomkit__json_str(w, "victim_comm", in->procs[i].comm);
				oomkit__json_str(w, "victim_cmdline", policy_cmdline(in, &in->procs[i]));
				break;
			}
		oomkit__json_str(w, "victim_place", policy_place_name(dec->victim_place));
		if (dec->victim_rule[0])
			oomkit__json_str(w, "victim_rule", dec->victim_rule);
		else
			oomkit__json_null(w, "victim_rule");
	}
	write_victim_cgroup(w, in, dec);
	oomkit__json_str(w, "reason", dec->reason);
	oomkit__json_str(w, "not_applied", dec->trail);
	oomkit__json_close(w, '}');
}

static void write_groups(struct oomkit__json *w, const struct policy_input *in)
{
	oomkit__json_open(w, "jobs", '[');
	for (unsigned i = 0; i < in->n_groups; i++) {
		const struct policy_group *g = &in->groups[i];
		oomkit__json_open(w, NULL, '{');
		oomkit__json_str(w, "name", g->name);
		oomkit__json_u64(w, "priority", g->priority);
		oomkit__json_u64(w, "usage_bytes", g->usage_bytes);
		oomkit__json_limit(w, "limit_bytes", g->limit_bytes);
		oomkit__json_limit(w, "limit_max_bytes", g->limit_max_bytes);
		oomkit__json_u64(w, "expect_bytes", g->expect_bytes);
		oomkit__json_str(w, "kill", config_kill_name(g->kill));
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
}

void report_write_proc(struct oomkit__json *w, const struct policy_input *in, const struct policy_proc *p)
{
	const struct policy_group *g = &in->groups[p->group];
	char why[POLICY_RULE_MAX + 32];

	oomkit__json_i64(w, "pid", p->pid);
	oomkit__json_str(w, "job", g->name);
	oomkit__json_u64(w, "priority", g->priority);
	oomkit__json_u64(w, "rss_bytes", p->rss_bytes);
	oomkit__json_i64(w, "oom_score_adj", p->oom_score_adj);
	oomkit__json_u64(w, "start_time", p->start_time);
	oomkit__json_str(w, "comm", p->comm);
	oomkit__json_str(w, "cmdline", policy_cmdline(in, p));
	oomkit__json_bool(w, "protected", policy_protected(in, p));
	if (policy_excluded(in, p, why, sizeof(why)))
		oomkit__json_str(w, "excluded", why);
	oomkit__json_str(w, "place", policy_place_name(p->place));
	if (p->rule) {
		policy_format_rule(p, why, sizeof(why));
		oomkit__json_str(w, "rule", why);
	}
	if (escaped(in, p)) {
		oomkit__json_bool(w, "escaped", true);
		write_escaped(w, "cgroup", "cgroup_cut", "cgroup_owner", p);
	}
}

static void write_candidates(struct oomkit__json *w, const struct policy_input *in)
{
	oomkit__json_open(w, "candidates", '[');
	for (unsigned i = 0; i < in->n_procs; i++) {
		oomkit__json_open(w, NULL, '{');
		report_write_proc(w, in, &in->procs[i]);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
}

static unsigned long long mib(uint64_t bytes)
{
	return (unsigned long long)(bytes >> 20);
}

void report_oom_why(const struct oomkit_event *ev, char *buf, size_t len)
{
	switch ((enum oomkit_oom_cause)ev->oom_cause) {
	case OOMKIT_OOM_CAUSE_NO_SWAP:
		snprintf(buf, len, "at its limit (%llu of %llu MiB), with no swap to use",
			 mib(ev->usage_bytes), mib(ev->limit_bytes));
		return;
	case OOMKIT_OOM_CAUSE_SWAP_MAX:
		snprintf(buf, len, "at its limit, memory.swap.max reached (%llu of %llu MiB swapped)",
			 mib(ev->swap_bytes), mib(ev->swap_max_bytes));
		return;
	case OOMKIT_OOM_CAUSE_SWAP_FULL:
		snprintf(buf, len, "at its limit, and the machine's swap is full (%llu MiB free)",
			 mib(ev->swap_free_bytes));
		return;
	case OOMKIT_OOM_CAUSE_STALLED:
		snprintf(buf, len,
			 "at its limit and stalled %u.%02u%% of the last %llu s (memory.pressure full)",
			 ev->stall_full_x100 / 100, ev->stall_full_x100 % 100,
			 (unsigned long long)(ev->stall_span_ms / 1000));
		return;
	case OOMKIT_OOM_CAUSE_LIMIT:
		snprintf(buf, len, "at its limit (%llu of %llu MiB); swap not counted for it",
			 mib(ev->usage_bytes), mib(ev->limit_bytes));
		return;
	case OOMKIT_OOM_CAUSE_NONE:
		break;
	}
	if (len)
		buf[0] = 0;
}

void report_write_head(struct oomkit__json *w, oomkit_ctx *ctx, const struct report_head *h,
		       const struct policy_input *in, const struct policy_decision *dec)
{
	const struct oomkit_event *ev = h->event;
	char chain[128];

	oomkit__json_open(w, NULL, '{');
	oomkit__json_u64(w, "oomkitd_report", 1);
	oomkit__json_u64(w, "id", h->id);
	oomkit__json_fixed(w, "time", h->time_ms, 3);
	oomkit__json_str(w, "scope", h->machine ? "machine" : "job");
	oomkit__json_str(w, "job", h->job);
	if (h->instance)
		oomkit__json_str(w, "instance", h->instance);
	else
		oomkit__json_null(w, "instance");
	oomkit__json_str(w, "cgroup", ev->cgroup);
	oomkit__json_str(w, "origin", ev->origin ? ev->origin : ev->cgroup);
	/* Why it was out of memory: a job held at memory.high that could still
	 * swap was not (cgroup v2). */
	char why[160];
	report_oom_why(ev, why, sizeof(why));
	if (why[0])
		oomkit__json_str(w, "why", why);
	else
		oomkit__json_null(w, "why");
	oomkit__json_bool(w, "dry_run", h->dry_run);
	oomkit__json_u64(w, "capacity_bytes", in->capacity_bytes);
	config_format_chain(in->chain, chain, sizeof(chain));
	oomkit__json_str(w, "chain", chain);
	/* Before the snapshot, like the decision: the index reads them from the head. */
	write_readers(w, h->readers);
	/* The decision before the snapshot: the index reads it from the head. */
	report_write_decision(w, "decision", in, dec);
	if (!h->jobs_later)
		write_groups(w, in);
	write_candidates(w, in);
	/* What memory priority had done before this OOM (protect.h). */
	if (h->protect)
		protect_write_json(w, h->protect);
	/* The library's artifact: counters, oom_control, memory.stat.  Not its
	 * list of every process: the candidates above are the processes the
	 * decision was taken on, and listing them again would walk the scope's
	 * cgroups a second time before the action (a job's owner makes them by
	 * the thousand). */
	struct oomkit_decision ld = {.action = policy_action_name(dec->action),
				     .reason = dec->reason,
				     .victim_pid = dec->victim_pid,
				     .new_limit_bytes =
					 dec->action == ACTION_GROW ? dec->new_limit_bytes : 0};
	oomkit__json_external(w, "state");
	int r = w->err ? w->err : oomkit_write_report_flags(ctx, w->fd, ev, &ld, OOMKIT_REPORT_NO_PROCESSES);
	if (r < 0 && !w->err)
		w->err = r; /* a write failed: the report is cut short */
}

void report_write_jobs(struct oomkit__json *w, oomkit_ctx *ctx, const struct scopes *scopes)
{
	oomkit__json_open(w, "jobs", '[');
	SCOPE_FOREACH_JOB (j, scopes) {
		const struct config_job *c = j->job;
		struct oomkit_cgroup_memory m = {.limit_bytes = c->limit_bytes};
		(void)oomkit_cgroup_memory(ctx, j->rel, &m);
		oomkit__json_open(w, NULL, '{');
		oomkit__json_str(w, "name", j->name);
		oomkit__json_u64(w, "priority", c->priority);
		oomkit__json_u64(w, "usage_bytes", m.usage_bytes);
		oomkit__json_limit(w, "limit_bytes", m.limit_bytes);
		oomkit__json_limit(w, "limit_max_bytes",
				   c->limit_max_bytes > m.limit_bytes ? c->limit_max_bytes : m.limit_bytes);
		oomkit__json_u64(w, "expect_bytes", c->expect_bytes);
		oomkit__json_str(w, "kill", config_kill_name(c->kill));
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
}

void report_write_answer(struct oomkit__json *w, const char *answer, uid_t uid, const char *user,
			 const struct policy_input *in, const struct policy_decision *dec)
{
	oomkit__json_str(w, "prompt_answer", answer);
	if (user) {
		oomkit__json_open(w, "answered_by", '{');
		oomkit__json_u64(w, "uid", uid);
		oomkit__json_str(w, "user", user);
		oomkit__json_close(w, '}');
	}
	if (dec)
		report_write_decision(w, "followup", in, dec);
}

/* Milliseconds from `from` to `to`, with three decimals. */
static void ms_since(struct oomkit__json *w, const char *key, uint64_t from, uint64_t to)
{
	oomkit__json_fixed(w, key, to > from ? (to - from) / 1000u : 0, 3);
}

static void write_hook(struct oomkit__json *w, const struct report_hook *h)
{
	char sig[32];

	oomkit__json_open(w, NULL, '{');
	oomkit__json_str(w, "hook", h->hook);
	oomkit__json_str(w, "ended", h->ended ? h->ended : "running");
	if (h->pid)
		oomkit__json_i64(w, "pid", h->pid);
	if (h->ended && strcmp(h->ended, "exited") == 0)
		oomkit__json_i64(w, "exit_status", h->code);
	if (h->ended && strcmp(h->ended, "signal") == 0) {
		value_format_signal(h->code, sig, sizeof(sig));
		oomkit__json_str(w, "signal", sig);
	}
	if (h->ended && strcmp(h->ended, "not run") == 0)
		oomkit__json_str(w, "error", strerror(h->code));
	oomkit__json_u64(w, "duration_ms", h->duration_ms);
	oomkit__json_u64(w, "timeout_ms", h->timeout_ms);
	oomkit__json_close(w, '}');
}

static void write_more(struct oomkit__json *w, const struct report_more *m)
{
	if (m->n_hooks) {
		oomkit__json_open(w, "hooks", '[');
		for (unsigned i = 0; i < m->n_hooks && i < REPORT_HOOKS_MAX; i++)
			write_hook(w, &m->hooks[i]);
		oomkit__json_close(w, ']');
	}
	if (m->has_shed) {
		const struct report_shed *s = &m->shed;
		oomkit__json_open(w, "shed", '{');
		oomkit__json_bool(w, "resolved", s->resolved);
		oomkit__json_u64(w, "before_bytes", s->before_bytes);
		oomkit__json_u64(w, "after_bytes", s->after_bytes);
		oomkit__json_u64(w, "freed_bytes",
				 s->before_bytes > s->after_bytes ? s->before_bytes - s->after_bytes : 0);
		oomkit__json_u64(w, "target_bytes", s->target_bytes);
		oomkit__json_u64(w, "lent_bytes", s->lent_bytes);
		oomkit__json_u64(w, "signalled", s->signalled);
		oomkit__json_close(w, '}');
	}
	if (m->ended_by)
		oomkit__json_str(w, "ended_by", m->ended_by);
}

void report_write_tail(struct oomkit__json *w, const char *outcome, const struct report_more *more,
		       const struct report_times *t, const struct report_readers *readers)
{
	oomkit__json_str(w, "outcome", outcome);
	if (more)
		write_more(w, more);
	oomkit__json_open(w, "timings_ms", '{');
	ms_since(w, "decision", t->event_ns, t->decided_ns);
	ms_since(w, "action", t->event_ns, t->acted_ns);
	if (t->freed_ns)
		ms_since(w, "freed", t->event_ns, t->freed_ns);
	else
		oomkit__json_null(w, "freed");
	oomkit__json_close(w, '}');
	if (!t->freed_ns)
		oomkit__json_str(w, "not_freed",
				 t->not_freed ? t->not_freed
					      : "the cgroup did not leave OOM while oomkitd watched");
	/* Last: an index rebuilt at start finds them at the end of the file. */
	write_readers(w, readers);
	oomkit__json_close(w, '}');
	oomkit__json_newline(w);
	oomkit__json_flush(w);
}
