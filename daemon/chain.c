/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chain.c - see chain.h.  Nothing here allocates after chain_init(): the
 * snapshot goes into arrays made at startup, the report is formatted into a
 * preallocated buffer and written with write(2).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "clock.h"
#include "log.h"
#include "report.h"

#define REPORT_BUF_LEN (64 * 1024)
#define RESULT_MAX 160

static void on_prompt_deadline(void *data, uint64_t now);

int chain_init(struct chain *c, struct loop *loop)
{
	c->buf_len = REPORT_BUF_LEN;
	c->buf = calloc(1, c->buf_len);
	if (!c->buf)
		return -ENOMEM;
	c->prompt->timer = (struct loop_timer){.fn = on_prompt_deadline, .data = c};
	return loop_add_timer(loop, &c->prompt->timer);
}

void chain_free(struct chain *c)
{
	if (c->prompt && c->prompt->active && c->prompt->report_fd >= 0)
		close(c->prompt->report_fd);
	free(c->buf);
	c->buf = NULL;
}

void chain_configure(struct chain *c, const struct config *cfg)
{
	c->cfg = cfg;
}

void chain_synth_event(oomkit_ctx *ctx, const char *rel, oomkit_watch *watch, uint64_t time_ns,
		       struct oomkit_event *ev)
{
	struct oomkit_cgroup_memory m = {0};

	(void)oomkit_cgroup_memory(ctx, rel, &m);
	memset(ev, 0, sizeof(*ev));
	ev->kind = OOMKIT_EVENT_OOM;
	ev->watch = watch;
	ev->cgroup = rel;
	ev->origin = rel;
	ev->own = true;
	ev->under_oom = m.under_oom;
	ev->usage_bytes = m.usage_bytes;
	ev->limit_bytes = m.limit_bytes;
	ev->time_ns = time_ns;
}

/* ------------------------------------------------------------ reports */

/* What the index keeps of a report decided so. */
static struct report_summary summary(uint64_t time_ms, const struct policy_decision *dec)
{
	return (struct report_summary){.time_ms = time_ms,
				       .action = policy_action_name(dec->action),
				       .victim_pid = dec->victim_pid,
				       .reason = dec->reason};
}

/* Creates the scope's report and writes its head: the fd, or -errno. */
static int open_report(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
		       const struct policy_input *in, const struct policy_decision *dec, uint64_t time_ms,
		       unsigned *ret_id, struct oomkit__json *w)
{
	int fd = reports_create(c->reports, scope->name, ret_id);

	if (fd < 0) {
		log_warning("%s: no report: %s", scope->label, strerror(-fd));
		return fd;
	}
	struct report_head h = {.id = *ret_id,
				.time_ms = time_ms,
				.machine = scope->kind == SCOPE_KIND_MACHINE,
				.job = scope->kind == SCOPE_KIND_MACHINE ? NULL : scope->name,
				.dry_run = c->dry_run,
				.event = ev};
	oomkit__json_init(w, fd, c->buf, c->buf_len);
	report_write_head(w, c->ctx, &h, in, dec);
	return fd;
}

/* ------------------------------------------------------------ outcomes */

/* The owner of a scope's job, if it names one. */
static bool scope_owner(const struct scope *s, uid_t *ret_owner)
{
	if (!s || !s->job || !s->job->has_owner)
		return false;
	*ret_owner = s->job->owner;
	return true;
}

/* The victim of a kill, as the outcome tells it. */
static void outcome_victim(struct chain *c, const struct policy_input *in, const struct policy_decision *dec,
			   struct outcome *o)
{
	if (dec->action != ACTION_KILL && dec->action != ACTION_KILL_JOB)
		return;
	for (unsigned k = 0; k < in->n_procs; k++) {
		const struct policy_proc *p = &in->procs[k];
		if (p->pid != dec->victim_pid)
			continue;
		o->has_victim = true;
		o->victim_pid = p->pid;
		o->victim_uid = p->uid;
		o->victim_bytes = p->rss_bytes;
		o->victim_comm = p->comm;
	}
	if (dec->victim_group < 0 || (unsigned)dec->victim_group >= in->n_groups)
		return;
	o->victim_job = in->groups[dec->victim_group].name;
	if (dec->action == ACTION_KILL_JOB) {
		o->victim_bytes = in->groups[dec->victim_group].usage_bytes;
		o->victim_comm = o->victim_job;
	}
	if (!o->has_owner)
		o->has_owner = scope_owner(snapshot_group_scope(c->snap, dec->victim_group), &o->owner);
}

/* Tells the prompt clients concerned what was done about OOM id of scope
 * (its owner in asker: the scope may be gone by now). */
static void tell_outcome(struct chain *c, unsigned id, const char *scope, const struct protocol_asker *asker,
			 const struct policy_input *in, const struct policy_decision *dec, const char *action,
			 const char *by, const char *result)
{
	struct outcome o = {.report_id = id,
			    .scope = scope,
			    .action = action,
			    .by = by,
			    .result = result,
			    .victim_comm = "",
			    .victim_job = "",
			    .has_owner = asker->has_owner,
			    .owner = asker->owner};

	if (dec && in)
		outcome_victim(c, in, dec, &o);
	prompt_tell(c->prompt, &o);
}

/* ------------------------------------------------------------ prompts */

static enum oomkit_verdict ask(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			       const struct policy_decision *dec, uint64_t time_ms, int fd, unsigned id,
			       struct oomkit__json *w)
{
	uint64_t timeout_ms = c->cfg->delay_ms / 2;
	struct prompt *p = c->prompt;

	/* A report whose first half failed is dropped now, not after the answer. */
	if (fd >= 0 && w->err) {
		reports_done(c->reports, id, scope->name, fd, w->err, NULL);
		fd = -1;
	}
	int sent = prompt_ask(p, dec, ev->time_ns, timeout_ms, fd, id, fd >= 0 ? w : NULL);
	p->report_time_ms = time_ms;
	snprintf(p->report_reason, sizeof(p->report_reason), "%s", dec->reason);
	log_notice("%s: asking %d connected prompt(s), %" PRIu64 " ms to answer", scope->label, sent,
		   timeout_ms);
	metrics_changed(c->metrics);
	return OOMKIT_WAIT;
}

/* Ends the open question's report with what happened after it; user: who
 * answered (NULL: nobody). */
static void finish_prompt(struct chain *c, const char *answer, uid_t uid, const char *user,
			  const struct policy_input *in, const struct policy_decision *dec,
			  const char *result, uint64_t acted_ns, uint64_t freed_ns)
{
	struct prompt *p = c->prompt;
	struct report_times t = {
	    .event_ns = p->event_ns, .decided_ns = p->event_ns, .acted_ns = acted_ns, .freed_ns = freed_ns};
	char by[64];

	if (p->report_fd >= 0) {
		p->report.buf = c->buf;
		p->report.cap = c->buf_len;
		report_write_answer(&p->report, answer, uid, user, in, dec);
		report_write_tail(&p->report, result, &t);
		struct report_summary sum = {.time_ms = p->report_time_ms,
					     .action = policy_action_name(ACTION_PROMPT),
					     .reason = p->report_reason};
		reports_done(c->reports, p->report_id, p->scope_name, p->report_fd, p->report.err, &sum);
	}
	prompt_close(p);
	snprintf(by, sizeof(by), "%s%s", user ? "user " : "nobody", user ? user : "");
	tell_outcome(c, p->report_id, p->scope_name, &p->asker, in, dec,
		     dec			     ? policy_action_name(dec->action)
		     : strcmp(answer, "kernel") == 0 ? "kernel"
						     : "none",
		     by, result);
	metrics_changed(c->metrics);
}

static void on_prompt_deadline(void *data, uint64_t now)
{
	struct chain *c = data;
	struct prompt *p = c->prompt;
	struct scope *scope = scope_get(p->scope);
	struct oomkit_event ev;
	unsigned next = p->next_step;
	bool declined = p->declined;

	(void)now;
	p->timer.due_ns = 0;
	if (!p->active)
		return;
	chain_synth_event(c->ctx, p->rel, scope ? scope->watch : NULL, p->event_ns, &ev);
	if (!scope) {
		/* A reload removed the job and gave its memcg back to the kernel. */
		finish_prompt(c, declined ? "declined" : "none", 0, NULL, NULL, NULL,
			      "the job is no longer configured; its memcg is the kernel's", now_ns(), 0);
		return;
	}
	if (declined)
		finish_prompt(c, "declined", 0, NULL, NULL, NULL,
			      ev.under_oom ? "everyone asked let the system decide; the chain goes on"
					   : "everyone asked let the system decide; resolved meanwhile",
			      now_ns(), 0);
	else
		finish_prompt(c, "none", 0, NULL, NULL, NULL,
			      ev.under_oom ? "no answer; the chain goes on" : "no answer; resolved meanwhile",
			      now_ns(), 0);
	/* Outside the library's handler, a "kernel" verdict must be handed over explicitly. */
	if (ev.under_oom && chain_run(c, scope, &ev, next) == OOMKIT_KERNEL)
		(void)oomkit_hand_to_kernel(c->ctx, scope->watch);
}

/* Fills dec with the kill of candidate a->pid, as far as uid may choose it. */
static int prompt_kill(struct chain *c, const struct policy_input *in, const struct protocol_answer *a,
		       uid_t uid, const char *user, struct policy_decision *dec, char *msg, size_t len)
{
	const struct prompt_candidate *pc = prompt_candidate(c->prompt, a->pid, uid);

	if (!pc) {
		snprintf(msg, len, "%d is not one of the candidates", (int)a->pid);
		return -EINVAL;
	}
	if (protocol_may_answer(uid, &c->prompt->asker, a, pc->proc.uid) < 0) {
		snprintf(msg, len, "permission denied: process %d is not yours", (int)a->pid);
		return -EPERM;
	}
	dec->action = ACTION_KILL;
	dec->policy = POLICY_PROMPT;
	dec->victim_pid = a->pid;
	dec->victim_start_time = pc->proc.start_time;
	for (unsigned k = 0; k < in->n_procs; k++)
		if (in->procs[k].pid == a->pid)
			dec->victim_group = in->procs[k].group;
	if (dec->victim_group < 0) {
		snprintf(msg, len, "%d is gone", (int)a->pid);
		return -ESRCH;
	}
	snprintf(dec->reason, sizeof(dec->reason), "chosen by the user %s: process %d (%s)", user,
		 (int)a->pid, pc->proc.comm);
	return 0;
}

static int prompt_kernel(struct chain *c, struct scope *scope, uid_t uid, const char *user, char *msg,
			 size_t len)
{
	int r = oomkit_hand_to_kernel(c->ctx, scope->watch);

	finish_prompt(c, "kernel", uid, user, NULL, NULL,
		      r == 0 ? "handed to the kernel OOM killer"
			     : "left to the kernel OOM killer after the delay",
		      now_ns(), 0);
	snprintf(msg, len, "the kernel decides");
	return 0;
}

static int prompt_grow(struct policy_input *in, const char *user, struct policy_decision *dec, char *msg,
		       size_t len)
{
	/* Static: in keeps pointing at it after the return. */
	static const struct policy_chain grow_chain = {.steps = {POLICY_GROW}, .n_steps = 1};

	in->chain = &grow_chain;
	in->first_step = 0;
	if (policy_decide(in, dec) < 0 || dec->action != ACTION_GROW) {
		snprintf(msg, len, "cannot grow: %s", dec->trail);
		return -ENOSPC;
	}
	size_t n = strlen(dec->reason);
	snprintf(dec->reason + n, sizeof(dec->reason) - n, "; chosen by the user %s", user);
	return 0;
}

/* Whether uid may answer the open question a: 0, or -errno with msg. */
static int may_answer(struct chain *c, const struct protocol_answer *a, uid_t uid, char *msg, size_t len)
{
	struct prompt *p = c->prompt;

	if (!p->active || a->id != p->report_id) {
		snprintf(msg, len, "no question %u is waiting", a->id);
		return -ENOENT;
	}
	if (!prompt_concerns(p, uid)) {
		snprintf(msg, len, "permission denied: question %u does not concern uid %u", a->id,
			 (unsigned)uid);
		return -EPERM;
	}
	if (a->choice != PROTOCOL_CHOICE_KILL && protocol_may_answer(uid, &p->asker, a, 0) < 0) {
		snprintf(msg, len, "permission denied: only root or the job's owner may %s it",
			 a->choice == PROTOCOL_CHOICE_GROW ? "grow" : "hand to the kernel");
		return -EPERM;
	}
	return 0;
}

int chain_answer(struct chain *c, const struct protocol_answer *a, uid_t uid, const char *user, char *msg,
		 size_t len)
{
	struct prompt *p = c->prompt;
	struct policy_input in;
	struct policy_decision dec = {.victim_group = -1};
	char answer[64], result[RESULT_MAX];
	int r;

	if (protocol_format_answer(a, answer, sizeof(answer)) < 0 || a->choice == PROTOCOL_CHOICE_CHAIN) {
		snprintf(msg, len, "usage: %s", protocol_usage(PROTOCOL_ANSWER));
		return -EINVAL;
	}
	if ((r = may_answer(c, a, uid, msg, len)) < 0)
		return r;
	struct scope *scope = scope_get(p->scope);
	if (!scope) {
		finish_prompt(c, answer, uid, user, NULL, NULL,
			      "the job is no longer configured; its memcg is the kernel's", now_ns(), 0);
		snprintf(msg, len, "the job was removed by a reload; the kernel decides");
		return -ENOENT;
	}
	if (a->choice == PROTOCOL_CHOICE_KERNEL)
		return prompt_kernel(c, scope, uid, user, msg, len);
	if (snapshot_take(c->snap, scope, snapshot_capacity(c->ctx, c->scopes, c->cfg->reserve_bytes), &in) <
	    0) {
		snprintf(msg, len, "cannot read the processes");
		return -EIO;
	}
	if (a->choice == PROTOCOL_CHOICE_KILL)
		r = prompt_kill(c, &in, a, uid, user, &dec, msg, len);
	else if (a->choice == PROTOCOL_CHOICE_GROW && scope->kind != SCOPE_KIND_MACHINE)
		r = prompt_grow(&in, user, &dec, msg, len);
	else {
		snprintf(msg, len, "answer kill PID%s, kernel or chain",
			 scope->kind != SCOPE_KIND_MACHINE ? ", grow" : "");
		r = -EINVAL;
	}
	if (r < 0)
		return r;
	r = actions_do(c->actions, scope, &in, &dec, result, sizeof(result));
	uint64_t acted = now_ns(), freed = r == 0 ? actions_wait_freed(c->actions, scope->rel) : 0;
	finish_prompt(c, answer, uid, user, &in, &dec, result, acted, freed);
	snprintf(msg, len, "%s", result);
	return r;
}

/* ------------------------------------------------------------ the chain */

/* Acts on a decision that is neither a prompt nor a dry run. */
static enum oomkit_verdict carry_out(struct chain *c, struct scope *scope, const struct policy_input *in,
				     const struct policy_decision *dec, char *result, int *ret_err,
				     struct report_times *t)
{
	*ret_err = 0;
	t->acted_ns = now_ns();
	if (dec->action == ACTION_KERNEL) {
		snprintf(result, RESULT_MAX, "handed to the kernel OOM killer");
		actions_set_last(scope, "handed to the kernel");
		c->stats->kernel_handoffs++;
		return OOMKIT_KERNEL;
	}
	if (dec->action == ACTION_NONE) {
		snprintf(result, RESULT_MAX, "nothing applied; the kernel steps in after the delay");
		actions_set_last(scope, "waited for the kernel");
		return OOMKIT_WAIT;
	}
	*ret_err = actions_do(c->actions, scope, in, dec, result, RESULT_MAX);
	t->acted_ns = now_ns();
	if (*ret_err < 0)
		return OOMKIT_WAIT;
	t->freed_ns = actions_wait_freed(c->actions, scope->rel);
	return OOMKIT_RESOLVED;
}

enum oomkit_verdict chain_run(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			      unsigned first_step)
{
	struct policy_input in;
	struct policy_decision dec;
	struct oomkit__json w;
	char result[RESULT_MAX];
	unsigned id = 0;
	int r;

	r = snapshot_take(c->snap, scope, snapshot_capacity(c->ctx, c->scopes, c->cfg->reserve_bytes), &in);
	if (r < 0) {
		log_err("%s: cannot list processes: %s; the kernel decides", scope->label, strerror(-r));
		return OOMKIT_KERNEL;
	}
	in.first_step = first_step;
	if (!c->prompt->active)
		prompt_prepare(c->prompt, scope, &in);
	in.prompt_available = prompt_available(c->prompt);
	if (policy_decide(&in, &dec) < 0)
		return OOMKIT_KERNEL;
	uint64_t decided = now_ns();
	/* The reason names the victim's comm, which its owner chose. */
	char reason[LOG_ESCAPED_MAX(POLICY_REASON_MAX)];
	log_notice("%s: OOM: %s: %s", scope->label, policy_action_name(dec.action),
		   log_escape(reason, sizeof(reason), dec.reason));

	uint64_t time_ms = realtime_ms();
	int fd = open_report(c, scope, ev, &in, &dec, time_ms, &id, &w);
	if (dec.action == ACTION_PROMPT && !c->dry_run)
		return ask(c, scope, ev, &dec, time_ms, fd, id, &w);

	enum oomkit_verdict verdict = OOMKIT_WAIT;
	struct report_times t = {.event_ns = ev->time_ns, .decided_ns = decided};
	r = 0;
	if (c->dry_run) {
		snprintf(result, sizeof(result), "dry run: nothing done");
		t.acted_ns = now_ns();
	} else {
		verdict = carry_out(c, scope, &in, &dec, result, &r, &t);
	}
	if (fd >= 0) {
		report_write_tail(&w, result, &t);
		struct report_summary sum = summary(time_ms, &dec);
		reports_done(c->reports, id, scope->name, fd, w.err, &sum);
	}
	c->stats->handled++;
	c->stats->last_handling_ns = t.acted_ns - ev->time_ns;
	c->stats->handling_ns_sum += c->stats->last_handling_ns;
	log_at(r < 0 ? LOG_LEVEL_WARNING : LOG_LEVEL_INFO, "%s: %s", scope->label, result);
	if (!c->dry_run && dec.action != ACTION_NONE) {
		struct protocol_asker owner = {.job = scope->kind != SCOPE_KIND_MACHINE};
		char by[64];
		owner.has_owner = scope_owner(scope, &owner.owner);
		snprintf(by, sizeof(by), "policy %s", policy_kind_name(dec.policy));
		tell_outcome(c, id, scope->name, &owner, &in, &dec, policy_action_name(dec.action), by,
			     result);
	}
	metrics_changed(c->metrics);
	/* An action that could not be carried out: the rest of the chain gets its turn. */
	if (r < 0 && dec.step + 1 < in.chain->n_steps)
		return chain_run(c, scope, ev, dec.step + 1);
	return verdict;
}
