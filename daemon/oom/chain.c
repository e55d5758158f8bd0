/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chain.c - see chain.h.  Nothing here allocates after chain_init(): the
 * snapshot goes into arrays made at startup, the report is formatted into a
 * preallocated buffer and written with write(2).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oom/chain.h"
#include "config/timing.h"
#include "oom/explain.h"
#include "base/clock.h"
#include "oom/inflight.h"
#include "base/log.h"
#include "rules/access.h"
#include "rules/lowmem-rule.h"
#include "report/report.h"

#define REPORT_BUF_LEN (64 * 1024)
#define RESULT_MAX INFLIGHT_RESULT_MAX
/* The least time a killed victim is waited for before its report is finished. */
#define KILL_WAIT_MIN_MS 1000

static void on_prompt_deadline(void *data, uint64_t now);
static void on_shed_over(void *data, struct scope *scope, uint64_t event_ns, unsigned next_step);
static void on_kill_due(void *data, struct flight *fl);
static void on_oom_goes_on(void *data, struct scope *scope);
static enum oomkit_verdict run(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			       unsigned first_step, bool chose_again);
static enum oomkit_verdict after_gone(struct chain *c, struct scope *scope, uint64_t event_ns, unsigned step,
				      bool chose_again);
static void prepare_hooks(struct chain *c, const struct policy_input *in, const struct policy_decision *dec,
			  struct flight *fl);

int chain_init(struct chain *c, struct loop *loop)
{
	c->buf_len = REPORT_BUF_LEN;
	c->buf = calloc(1, c->buf_len);
	if (!c->buf)
		return -ENOMEM;
	c->prompt->timer = (struct loop_timer){.fn = on_prompt_deadline, .data = c};
	c->shed->resume = on_shed_over;
	c->shed->resume_data = c;
	c->inflight->kill_due = on_kill_due;
	c->inflight->oom_goes_on = on_oom_goes_on;
	c->inflight->kill_due_data = c;
	return loop_add_timer(loop, &c->prompt->timer);
}

void chain_free(struct chain *c)
{
	if (c->prompt && c->prompt->active && c->prompt->report_fd >= 0)
		close(c->prompt->report_fd);
	if (c->freeze)
		freeze_free(c->freeze);
	if (c->inflight)
		inflight_land_all(c->inflight);
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

/* Whether a kill (action) failed because its victim is gone: it exited, or
 * another (the kernel's killer, its owner) killed it meanwhile.  -ESTALE:
 * its pid belongs to another process now. */
static bool victim_gone(enum policy_action action, int r)
{
	return (r == -ESRCH || r == -ESTALE) && (action == ACTION_KILL || action == ACTION_KILL_JOB);
}

/* Whether scope is still out of memory, with a fresh event for it in ev:
 * a memcg under OOM; the machine at the v2 root, which has no OOM state of
 * its own, while it has no room (lowmem-rule.h).  A machine that was
 * thrashing is not out of memory by this: one action a full stall's
 * duration, the next needs a duration of its own (lowmem.c). */
static bool still_out_of_memory(struct chain *c, const struct scope *scope, uint64_t event_ns,
				struct oomkit_event *ev)
{
	struct oomkit_system_memory m;
	struct oomkit_system_swap sw = {0};

	chain_synth_event(c->ctx, scope->rel, scope->watch, event_ns, ev);
	if (scope->kind != SCOPE_KIND_MACHINE || !c->cfg->machine_is_root)
		return ev->under_oom;
	if (oomkit_system_memory(c->ctx, &m) < 0)
		return true;
	/* Unreadable /proc/swaps: no swap counted, the RAM rule. */
	(void)oomkit_system_swap(c->ctx, &sw);
	struct lowmem_input in = {.available_bytes = m.available_bytes, .swap_usable_bytes = sw.usable_bytes};
	ev->under_oom =
	    lowmem_room(&in) < lowmem_min_room(&c->cfg->machine_available, m.total_bytes, sw.total_bytes);
	ev->usage_bytes = m.total_bytes - m.available_bytes;
	ev->limit_bytes = m.total_bytes;
	return ev->under_oom;
}

/* ------------------------------------------------------------ reports */

/* The owner of a scope's job, if it names one. */
static bool scope_owner(const struct scope *s, uid_t *ret_owner)
{
	if (!s || !s->job || !s->job->has_owner)
		return false;
	*ret_owner = s->job->owner;
	return true;
}

/* Adds the uids a decision concerns, beyond the scope's owner: a kill's
 * victim, and the owner of the job it takes from. */
static void victim_readers(struct chain *c, const struct policy_input *in, const struct policy_decision *dec,
			   struct report_readers *r)
{
	uid_t owner;

	if (dec->action == ACTION_KILL || dec->action == ACTION_KILL_JOB)
		for (unsigned k = 0; k < in->n_procs; k++)
			if (in->procs[k].pid == dec->victim_pid)
				reports_readers_add(r, in->procs[k].uid);
	if (dec->victim_group >= 0 && (unsigned)dec->victim_group < in->n_groups &&
	    scope_owner(snapshot_group_scope(c->snap, dec->victim_group), &owner))
		reports_readers_add(r, owner);
}

/* The uids other than root an OOM of scope decided so concerns: who may
 * read its report (reports.h). */
static void decision_readers(struct chain *c, const struct scope *scope, const struct policy_input *in,
			     const struct policy_decision *dec, struct report_readers *ret)
{
	uid_t owner;

	*ret = (struct report_readers){0};
	if (scope_owner(scope, &owner))
		reports_readers_add(ret, owner);
	victim_readers(c, in, dec, ret);
}

/* Creates the scope's report and writes its head: the fd, or -errno. */
static int open_report(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
		       const struct policy_input *in, const struct policy_decision *dec, uint64_t time_ms,
		       const struct report_readers *readers, unsigned *ret_id, struct oomkit__json *w)
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
				.instance = scope->kind == SCOPE_KIND_INSTANCE ? scope->rel : NULL,
				.dry_run = c->dry_run,
				.jobs_later = scope->kind != SCOPE_KIND_MACHINE,
				.event = ev,
				.readers = readers,
				.protect = c->protect};
	oomkit__json_init(w, fd, c->buf, c->buf_len);
	report_write_head(w, c->ctx, &h, in, dec);
	return fd;
}

/* ------------------------------------------------------------ outcomes */

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
static void tell_outcome(struct chain *c, unsigned id, const char *scope, const struct access_question *asker,
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

/* ------------------------------------------------------------ actions */

/* After an action started: its victim's exit (pidfd), or the scope leaving
 * OOM, is waited for on the loop; a failed one is finished now.  A victim
 * is waited for until the delay has passed (the kernel would step in then),
 * at least KILL_WAIT_MIN_MS: that costs nothing but a slot. */
static void await(struct chain *c, struct flight *fl, int r, const struct action_started *st)
{
	uint64_t wait_ns =
	    (c->cfg->delay_ms > KILL_WAIT_MIN_MS ? c->cfg->delay_ms : KILL_WAIT_MIN_MS) * NS_PER_MS;
	uint64_t now = now_ns();

	fl->t.acted_ns = now;
	if (r < 0) {
		fl->t.not_freed = "the action failed";
		inflight_land(c->inflight, fl);
	} else if (st->pidfd >= 0 && st->grace_ms)
		inflight_wait_grace(c->inflight, fl, st->pidfd, st->sig, now + st->grace_ms * NS_PER_MS,
				    wait_ns);
	else if (st->pidfd >= 0) {
		snprintf(fl->signame, sizeof(fl->signame), "SIGKILL");
		fl->more.ended_by = fl->signame;
		inflight_wait_exit(c->inflight, fl, st->pidfd, now + wait_ns);
	} else
		inflight_wait_freed(c->inflight, fl);
}

/* What is left of the delay after an OOM that began at event_ns, less a
 * tenth of it: a graceful kill's grace never outlasts it (the kernel would
 * decide then). */
static uint64_t budget_ms(const struct chain *c, uint64_t event_ns)
{
	uint64_t now = now_ns();

	return config_kill_budget_ms(c->cfg, now > event_ns ? (now - event_ns) / NS_PER_MS : 0);
}

/* Tells the prompt clients concerned what a policy did about OOM id. */
static void tell_policy_outcome(struct chain *c, struct scope *scope, unsigned id,
				const struct policy_input *in, const struct policy_decision *dec,
				const char *result)
{
	struct access_question owner = {.job = scope->kind != SCOPE_KIND_MACHINE};
	char by[64];

	owner.has_owner = scope_owner(scope, &owner.owner);
	snprintf(by, sizeof(by), "policy %s", policy_kind_name(dec->policy));
	tell_outcome(c, id, scope->name, &owner, in, dec, policy_action_name(dec->action), by, result);
}

/* A decision to hand over or to wait: the report is finished now. */
static enum oomkit_verdict no_action(struct chain *c, struct scope *scope, unsigned id,
				     const struct policy_input *in, const struct policy_decision *dec,
				     struct flight *fl)
{
	bool kernel = dec->action == ACTION_KERNEL;

	snprintf(fl->result, sizeof(fl->result), "%s",
		 kernel ? "handed to the kernel OOM killer"
			: "nothing applied; the kernel steps in after the delay");
	fl->t.not_freed = kernel ? "oomkitd freed none: the kernel OOM killer frees it"
				 : "oomkitd freed none: the kernel steps in after the delay";
	actions_set_last(scope, kernel ? "handed to the kernel" : "waited for the kernel");
	if (kernel) {
		c->stats->kernel_handoffs++;
		tell_policy_outcome(c, scope, id, in, dec, fl->result);
	}
	inflight_land(c->inflight, fl);
	metrics_changed(c->metrics);
	return kernel ? OOMKIT_KERNEL : OOMKIT_WAIT;
}

/* The flight that carries a report of scope decided so. */
static struct flight *take_flight(struct chain *c, struct scope *scope, const struct policy_decision *dec,
				  const struct oomkit_event *ev, uint64_t decided, struct flight *spare)
{
	struct flight *fl = inflight_take(c->inflight, scope_ref(scope), scope->name, scope->rel, spare);

	snprintf(fl->label, sizeof(fl->label), "%s", scope->label);
	fl->instance = scope->kind == SCOPE_KIND_INSTANCE;

	fl->action = policy_action_name(dec->action);
	fl->jobs_later = scope->kind != SCOPE_KIND_MACHINE;
	fl->victim_pid = dec->victim_pid;
	reports_copy_reason(fl->reason, sizeof(fl->reason), dec->reason);
	fl->t = (struct report_times){.event_ns = ev->time_ns, .decided_ns = decided};
	return fl;
}

/* ------------------------------------------------------------ prompts */

static enum oomkit_verdict ask(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			       const struct policy_input *in, const struct policy_decision *dec,
			       uint64_t time_ms, const struct report_readers *readers, int fd, unsigned id,
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
	p->report_readers = *readers;
	snprintf(p->report_reason, sizeof(p->report_reason), "%s", dec->reason);
	log_notice("%s: asking %d connected prompt(s), %" PRIu64 " ms to answer", scope->label, sent,
		   timeout_ms);
	freeze_watch(c->freeze, c->snap, in);
	metrics_changed(c->metrics);
	return OOMKIT_WAIT;
}

/* Ends the open question: its report, which fl (from take_flight_for_prompt)
 * now carries, gets the answer (user: who gave it, NULL: nobody) and the
 * decision it made; the clients concerned are told.  The caller then lands
 * fl, or waits for its action. */
static void close_prompt(struct chain *c, struct flight *fl, const char *answer, uid_t uid, const char *user,
			 const struct policy_input *in, const struct policy_decision *dec)
{
	struct prompt *p = c->prompt;
	char by[64];

	fl->report_fd = p->report_fd;
	fl->report_id = p->report_id;
	fl->report = p->report;
	fl->time_ms = p->report_time_ms;
	/* Whom the question's decision concerned, and the answer's victim. */
	fl->readers = p->report_readers;
	if (in && dec)
		victim_readers(c, in, dec, &fl->readers);
	fl->action = policy_action_name(ACTION_PROMPT);
	fl->jobs_later = p->asker.job;
	reports_copy_reason(fl->reason, sizeof(fl->reason), p->report_reason);
	/* The answer (or its deadline) is the decision: a person's time counts. */
	fl->t = (struct report_times){.event_ns = p->event_ns, .decided_ns = now_ns()};
	/* Thawed already where an action follows (it must reach them); here for the rest. */
	freeze_thaw(c->freeze, "the question is closed");
	if (fl->report_fd >= 0) {
		fl->report.buf = c->buf;
		fl->report.cap = c->buf_len;
		report_write_answer(&fl->report, answer, uid, user, in, dec);
		freeze_report(c->freeze, &fl->report);
		oomkit__json_flush(&fl->report);
	}
	prompt_close(p);
	snprintf(by, sizeof(by), "%s%s", user ? "user " : "nobody", user ? user : "");
	tell_outcome(c, p->report_id, p->scope_name, &p->asker, in, dec,
		     dec			     ? policy_action_name(dec->action)
		     : strcmp(answer, "kernel") == 0 ? "kernel"
						     : "none",
		     by, fl->result);
	metrics_changed(c->metrics);
}

static struct flight *take_flight_for_prompt(struct chain *c, struct flight *spare)
{
	struct prompt *p = c->prompt;

	struct flight *fl = inflight_take(c->inflight, p->scope, p->scope_name, p->rel, spare);

	fl->instance = p->instance;
	return fl;
}

/* Closes the open question with no action: its report is finished now. */
static void end_prompt(struct chain *c, const char *answer, uid_t uid, const char *user, const char *result)
{
	struct flight spare, *fl = take_flight_for_prompt(c, &spare);

	snprintf(fl->result, sizeof(fl->result), "%s", result);
	close_prompt(c, fl, answer, uid, user, NULL, NULL);
	inflight_land(c->inflight, fl);
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
	/* Before the chain goes on: its victim may be one of them. */
	freeze_thaw(c->freeze, declined ? "everyone asked let the system decide" : "no answer in time");
	/* The machine at the v2 root has no OOM state of its own: the lowmem
	 * rule says whether it is still out of memory. */
	if (scope)
		(void)still_out_of_memory(c, scope, p->event_ns, &ev);
	else
		chain_synth_event(c->ctx, p->rel, NULL, p->event_ns, &ev);
	if (!scope) {
		/* A reload removed the job and gave its memcg back to the kernel. */
		end_prompt(c, declined ? "declined" : "none", 0, NULL,
			   "the job is no longer configured; its memcg is the kernel's");
		return;
	}
	if (declined)
		end_prompt(c, "declined", 0, NULL,
			   ev.under_oom ? "everyone asked let the system decide; the chain goes on"
					: "everyone asked let the system decide; resolved meanwhile");
	else
		end_prompt(c, "none", 0, NULL,
			   ev.under_oom ? "no answer; the chain goes on" : "no answer; resolved meanwhile");
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
	if (access_may_answer(uid, &c->prompt->asker, a, pc->proc.uid) < 0) {
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
	/* Thawed first: on cgroup v1 a frozen task dies only once thawed. */
	freeze_thaw(c->freeze, "the kernel decides");
	int r = oomkit_hand_to_kernel(c->ctx, scope->watch);

	end_prompt(c, "kernel", uid, user,
		   r == 0 ? "handed to the kernel OOM killer"
			  : "left to the kernel OOM killer after the delay");
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
	if (a->choice != PROTOCOL_CHOICE_KILL && access_may_answer(uid, &p->asker, a, 0) < 0) {
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
		end_prompt(c, answer, uid, user,
			   "the job is no longer configured; its memcg is the kernel's");
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
	/* Thawed before the action: on cgroup v1 a frozen task dies only once thawed. */
	freeze_thaw(c->freeze, "answered");
	struct flight spare, *fl = take_flight_for_prompt(c, &spare);
	struct action_started st;
	fl->report_fd = p->report_fd;
	fl->report_id = p->report_id;
	prepare_hooks(c, &in, &dec, fl);
	r = actions_start(c->actions, scope, &in, &dec, budget_ms(c, p->event_ns), result, sizeof(result),
			  &st);
	snprintf(fl->result, sizeof(fl->result), "%s", result);
	fl->failed = r < 0;
	close_prompt(c, fl, answer, uid, user, &in, &dec);
	await(c, fl, r, &st);
	snprintf(msg, len, "%s", result);
	return r;
}

/* ------------------------------------------------------------ shedding */

/* A shed that gave back too little: the chain goes on past it, outside the
 * library's handler (a "kernel" verdict is handed over here). */
static void on_shed_over(void *data, struct scope *scope, uint64_t event_ns, unsigned next_step)
{
	struct chain *c = data;
	struct oomkit_event ev;

	chain_synth_event(c->ctx, scope->rel, scope->watch, event_ns, &ev);
	if (chain_run(c, scope, &ev, next_step) == OOMKIT_KERNEL)
		(void)oomkit_hand_to_kernel(c->ctx, scope->watch);
}

/* The job is asked to give memory back; the shed lands the report.  If
 * nobody could be asked, the rest of the chain has its turn now. */
static enum oomkit_verdict shed(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
				const struct policy_input *in, const struct policy_decision *dec,
				struct flight *fl)
{
	const struct config_job *job = scope->job;
	/* The machine's own shed waits as long as a job's default would. */
	uint64_t wait_ms = config_shed_wait_ms(c->cfg, job);
	char result[RESULT_MAX];
	int r = shed_start(c->shed, scope, in, dec, fl, ev->time_ns, wait_ms, result, sizeof(result));

	if (r == 0) {
		log_info("%s: %s", scope->label, result);
		metrics_changed(c->metrics);
		return OOMKIT_WAIT;
	}
	snprintf(fl->result, sizeof(fl->result), "%.120s; the chain goes on", result);
	fl->failed = true;
	inflight_land(c->inflight, fl);
	if (dec->step + 1 < in->chain->n_steps)
		return chain_run(c, scope, ev, dec->step + 1);
	return OOMKIT_WAIT;
}

/* ------------------------------------------------------------ hooks */

/* The job whose process a kill decision names, if it is a job's. */
static struct scope *victim_scope(const struct chain *c, const struct policy_decision *dec)
{
	return dec->action == ACTION_KILL || dec->action == ACTION_KILL_JOB
		   ? snapshot_group_scope(c->snap, dec->victim_group)
		   : NULL;
}

/* What the victim's hooks are told, and its after_kill, into the flight. */
static void prepare_hooks(struct chain *c, const struct policy_input *in, const struct policy_decision *dec,
			  struct flight *fl)
{
	struct scope *vs = victim_scope(c, dec);
	const struct config_job *job = vs ? vs->job : NULL;
	struct flight_victim *v = &fl->victim;

	if (!job || (!job->hooks[HOOK_BEFORE_KILL] && !job->hooks[HOOK_AFTER_KILL]))
		return;
	snprintf(v->job, sizeof(v->job), "%s", vs->name);
	snprintf(v->cgroup, sizeof(v->cgroup), "%s", vs->rel);
	for (unsigned k = 0; k < in->n_procs && dec->action == ACTION_KILL; k++)
		if (in->procs[k].pid == dec->victim_pid) {
			v->pid = dec->victim_pid;
			snprintf(v->comm, sizeof(v->comm), "%s", in->procs[k].comm);
			v->rss_bytes = in->procs[k].rss_bytes;
		}
	if (fl->report_fd >= 0)
		reports_path(c->reports, fl->report_id, fl->scope_name, v->report, sizeof(v->report));
	if (job->hooks[HOOK_AFTER_KILL]) {
		snprintf(fl->after_kill, sizeof(fl->after_kill), "%s", job->hooks[HOOK_AFTER_KILL]);
		fl->after_kill_timeout_ms = config_after_kill_ms(c->cfg, job);
	}
}

/* Starts the victim's before_kill, if it has one and there is time: the
 * kill then waits for it, at most its timeout cut to what the delay leaves
 * after the victim's grace.  Whether the kill waits. */
static bool before_kill(struct chain *c, struct scope *scope, const struct policy_decision *dec,
			struct flight *fl, uint64_t event_ns, bool chose_again)
{
	struct scope *vs = victim_scope(c, dec);
	const struct config_job *job = vs ? vs->job : NULL;
	char t[32];

	if (!job || !job->hooks[HOOK_BEFORE_KILL])
		return false;
	uint64_t timeout = config_before_kill_ms(job, dec->action == ACTION_KILL, budget_ms(c, event_ns));
	if (timeout == 0 || !fl->used) {
		log_notice("%s: before_kill not run: %s; the kill goes ahead", scope->label,
			   fl->used ? "no time left in the delay" : "no room to wait for it");
		if (fl->more.n_hooks < REPORT_HOOKS_MAX)
			fl->more.hooks[fl->more.n_hooks++] =
			    (struct report_hook){.hook = "before_kill", .ended = "not run", .code = ETIME};
		return false;
	}
	if (inflight_run_hook(c->inflight, fl, HOOK_BEFORE_KILL, job->hooks[HOOK_BEFORE_KILL], timeout) < 0)
		return false;
	fl->kill = (struct flight_kill){.action = dec->action,
					.policy = dec->policy,
					.step = dec->step,
					.pid = dec->victim_pid,
					.start_time = dec->victim_start_time,
					.victim_scope = scope_ref(vs),
					.chose_again = chose_again};
	inflight_wait_before(c->inflight, fl, now_ns() + timeout * NS_PER_MS);
	value_format_duration(timeout, t, sizeof(t));
	log_info("%s: before_kill runs, at most %s, then the kill", scope->label, t);
	return true;
}

/* The kill fl waited with, on a fresh snapshot: the victim must still be
 * there (pid and start time).  0, or -ESRCH. */
static int decision_again(struct chain *c, const struct policy_input *in, struct flight *fl,
			  const struct scope *vs, struct policy_decision *dec)
{
	const struct flight_kill *k = &fl->kill;

	*dec = (struct policy_decision){.action = k->action,
					.policy = k->policy,
					.step = k->step,
					.victim_pid = k->pid,
					.victim_start_time = k->start_time,
					.victim_group = -1};
	snprintf(dec->reason, sizeof(dec->reason), "%s", fl->reason);
	for (unsigned g = 0; g < in->n_groups; g++)
		if (snapshot_group_scope(c->snap, (int)g) == vs)
			dec->victim_group = (int)g;
	if (dec->victim_group < 0)
		return -ESRCH;
	if (k->action == ACTION_KILL_JOB)
		return 0;
	for (unsigned i = 0; i < in->n_procs; i++)
		if (in->procs[i].pid == k->pid && in->procs[i].start_time == k->start_time)
			return 0;
	return -ESRCH;
}

/* before_kill has ended, or its time is up: the kill now.  One that cannot
 * be carried out gives the rest of the chain its turn, as in run(), while
 * the OOM goes on; a victim gone meanwhile makes its step choose again
 * (after_gone()). */
static void on_kill_due(void *data, struct flight *fl)
{
	struct chain *c = data;
	struct scope *scope = scope_get(fl->scope), *vs = scope_get(fl->kill.victim_scope);
	struct policy_input in;
	struct policy_decision dec;
	struct action_started st = {.pidfd = -1};
	char result[RESULT_MAX];
	int r = -ESRCH;

	if (!scope || !vs) {
		snprintf(fl->result, sizeof(fl->result),
			 "the job was removed by a reload meanwhile; nothing killed");
		inflight_land(c->inflight, fl);
		return;
	}
	r = snapshot_take(c->snap, scope, snapshot_capacity(c->ctx, c->scopes, c->cfg->reserve_bytes), &in);
	if (r >= 0)
		r = decision_again(c, &in, fl, vs, &dec);
	if (r == 0) {
		r = actions_start(c->actions, scope, &in, &dec, budget_ms(c, fl->t.event_ns), result,
				  sizeof(result), &st);
		tell_policy_outcome(c, scope, fl->report_id, &in, &dec, result);
	} else {
		snprintf(result, sizeof(result), "no snapshot: %s; nothing killed", strerror(-r));
	}
	bool gone = victim_gone(fl->kill.action, r), chose_again = fl->kill.chose_again;
	if (gone)
		snprintf(result, sizeof(result), "%d was gone when before_kill had ended: nothing killed",
			 (int)fl->kill.pid);
	snprintf(fl->result, sizeof(fl->result), "%s", result);
	fl->failed = r < 0 && !gone;
	if (r < 0)
		fl->after_kill[0] = '\0';
	unsigned step = fl->kill.step;
	uint64_t event_ns = fl->t.event_ns;
	await(c, fl, r, &st);
	metrics_changed(c->metrics);
	if (r >= 0 || !scope->chain)
		return;
	enum oomkit_verdict v = OOMKIT_WAIT;
	struct oomkit_event ev;
	if (gone)
		v = after_gone(c, scope, event_ns, step, chose_again);
	else if (still_out_of_memory(c, scope, event_ns, &ev) && step + 1 < scope->chain->n_steps)
		v = run(c, scope, &ev, step + 1, false);
	if (v == OOMKIT_KERNEL)
		(void)oomkit_hand_to_kernel(c->ctx, scope->watch);
}

/* ------------------------------------------------------------ the chain */

/* What the chain decides on for an OOM of scope now: the snapshot as the
 * OOM path takes it, from first_step, with whether a person could answer.
 * chain_run() and chain_explain() both take it here, so explain shows what
 * an OOM would do. */
static int take_input(struct chain *c, struct snapshot *snap, const struct scope *scope, unsigned first_step,
		      struct policy_input *in)
{
	int r = snapshot_take(snap, scope, snapshot_capacity(c->ctx, c->scopes, c->cfg->reserve_bytes), in);

	if (r < 0)
		return r;
	in->first_step = first_step;
	in->prompt_available = prompt_available(c->prompt);
	return 0;
}

/* Job js's hook as explain shows it, with timeout t: set by limit, or
 * (NULL) by the job's hook_timeout if it is that, else by the delay. */
static struct explain_hook job_hook(const struct scope *js, enum config_hook hook, uint64_t t,
				    const char *limit)
{
	const struct config_job *job = js->job;

	return (struct explain_hook){.hook = hooks_name(hook),
				     .job = js->name,
				     .command = job->hooks[hook],
				     .hook_timeout_ms = limit ? 0 : job->hook_timeout_ms,
				     .timeout_ms = t,
				     .limit = limit			  ? limit
					      : t == job->hook_timeout_ms ? "hook_timeout"
									  : "delay"};
}

/* The hooks dec would run, with the timeouts the kill path would give them
 * were the OOM to begin now (the same config_*_ms() it uses). */
static unsigned explain_hooks(struct chain *c, const struct snapshot *s, const struct scope *scope,
			      const struct policy_input *in, const struct policy_decision *dec,
			      struct explain_hook *hooks, unsigned *ret_count)
{
	unsigned n = 0, count = 0;

	if (dec->action == ACTION_SHED) {
		uint64_t wait = config_shed_wait_ms(c->cfg, scope->job);
		for (unsigned g = 0; g < in->n_groups; g++) {
			const struct scope *js = snapshot_group_scope(s, (int)g);
			if (!shed_asks(in, dec, g) || !js || !js->job || !js->job->hooks[HOOK_SHED_COMMAND])
				continue;
			if (n < EXPLAIN_HOOKS_MAX)
				hooks[n++] = job_hook(js, HOOK_SHED_COMMAND, wait, "shed_wait");
			count++;
		}
	} else if (dec->action == ACTION_KILL || dec->action == ACTION_KILL_JOB) {
		const struct scope *vs = snapshot_group_scope(s, dec->victim_group);
		const struct config_job *job = vs ? vs->job : NULL;
		if (job && job->hooks[HOOK_BEFORE_KILL])
			hooks[n++] = job_hook(vs, HOOK_BEFORE_KILL,
					      config_before_kill_ms(job, dec->action == ACTION_KILL,
								    config_kill_budget_ms(c->cfg, 0)),
					      NULL);
		if (job && job->hooks[HOOK_AFTER_KILL])
			hooks[n++] = job_hook(vs, HOOK_AFTER_KILL, config_after_kill_ms(c->cfg, job), NULL);
		count = n;
	}
	*ret_count = count;
	return n;
}

static void explain_scope(struct chain *c, struct snapshot *s, const struct scope *scope, unsigned *order,
			  struct oomkit__json *w)
{
	struct explain_hook hooks[EXPLAIN_HOOKS_MAX];
	struct policy_input in;
	struct policy_decision dec;
	int r = take_input(c, s, scope, 0, &in);

	if (r == 0 && policy_decide(&in, &dec) < 0)
		r = -EINVAL;
	if (r < 0) {
		w->err = w->err ? w->err : r;
		return;
	}
	struct explain_head h = {.machine = scope->kind == SCOPE_KIND_MACHINE,
				 .job = scope->kind == SCOPE_KIND_MACHINE ? NULL : scope->label,
				 .cgroup = scope->rel,
				 .hooks = hooks};
	h.n_hooks = explain_hooks(c, s, scope, &in, &dec, hooks, &h.hooks_count);
	explain_write(w, &h, &in, &dec, order);
}

int chain_explain(struct chain *c, const struct scope *scope, const char *instances_of, char *buf, size_t cap)
{
	/* A snapshot of its own, made now and freed after: the OOM path's may
	 * be in use by an OOM under way (a shed, a prompt), and this path
	 * allocates, which the OOM path never does. */
	struct snapshot *s = calloc(1, sizeof(*s));
	struct oomkit__json w;
	unsigned *order = NULL;
	int r = s ? snapshot_init(s, c->ctx, c->scopes, c->snap->max_pids) : -ENOMEM;

	if (r == 0) {
		s->lend = c->snap->lend;
		snapshot_configure(s, c->snap->cfg);
		order = calloc(c->snap->max_pids, sizeof(*order));
		r = order ? 0 : -ENOMEM;
	}
	if (r == 0) {
		oomkit__json_init(&w, -1, buf, cap);
		if (!instances_of) {
			explain_scope(c, s, scope, order, &w);
		} else {
			/* Each instance is a scope of its own, with OOMs of its own. */
			oomkit__json_open(&w, NULL, '{');
			oomkit__json_u64(&w, "oomkitd_explain", 1);
			oomkit__json_str(&w, "job", instances_of);
			oomkit__json_open(&w, "instances", '[');
			for (const struct scope *i = scope_next_instance(c->scopes, instances_of, NULL); i;
			     i = scope_next_instance(c->scopes, instances_of, i))
				explain_scope(c, s, i, order, &w);
			oomkit__json_close(&w, ']');
			oomkit__json_close(&w, '}');
			oomkit__json_newline(&w);
		}
		r = oomkit__json_end(&w);
	}
	free(order);
	if (s)
		snapshot_free(s);
	free(s);
	return r;
}

bool chain_victim_exiting(const struct chain *c, const struct scope *scope)
{
	return !c->dry_run && inflight_exiting(c->inflight, scope);
}

/* The victim a step chose was gone before its kill: it exited, or another
 * killed it (the kernel's killer, its owner), and what it held is free.  As
 * the kernel's killer chooses again, the chain looks again: the OOM may
 * have ended with it, and then nothing more is done; if it goes on, the
 * same step chooses again on a fresh snapshot, once, and only a second
 * victim gone gives the next step its turn (a job whose processes keep
 * exiting under the daemon's hand cannot keep it choosing). */
static enum oomkit_verdict after_gone(struct chain *c, struct scope *scope, uint64_t event_ns, unsigned step,
				      bool chose_again)
{
	struct oomkit_event ev;

	if (!still_out_of_memory(c, scope, event_ns, &ev)) {
		log_info("%s: the victim was gone before the kill, and the OOM ended with it", scope->label);
		return OOMKIT_RESOLVED;
	}
	if (!chose_again) {
		log_notice("%s: the victim was gone before the kill, and the OOM goes on: %s chooses again",
			   scope->label, policy_kind_name(scope->chain->steps[step]));
		return run(c, scope, &ev, step, true);
	}
	if (step + 1 < scope->chain->n_steps)
		return run(c, scope, &ev, step + 1, false);
	return OOMKIT_WAIT;
}

/* A kill's victim has exited and the OOM goes on, with nothing to signal
 * it again (inflight.h): the chain runs again, as the kernel's killer would
 * choose again.  Not a new OOM: it is not counted as one. */
static void on_oom_goes_on(void *data, struct scope *scope)
{
	struct chain *c = data;
	struct oomkit_event ev;

	if (!scope->chain || !still_out_of_memory(c, scope, now_ns(), &ev))
		return;
	log_notice("%s: the victim has exited and the OOM goes on: the chain runs again", scope->label);
	if (run(c, scope, &ev, 0, false) == OOMKIT_KERNEL)
		(void)oomkit_hand_to_kernel(c->ctx, scope->watch);
}

enum oomkit_verdict chain_run(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			      unsigned first_step)
{
	return run(c, scope, ev, first_step, false);
}

/* chose_again: the step first_step chose a victim for this OOM already,
 * which was gone before its kill (after_gone()). */
static enum oomkit_verdict run(struct chain *c, struct scope *scope, const struct oomkit_event *ev,
			       unsigned first_step, bool chose_again)
{
	struct policy_input in;
	struct policy_decision dec;
	struct oomkit__json w;
	char result[RESULT_MAX];
	unsigned id = 0;
	int r;

	/* Like the kernel's killer, no second victim while the first is exiting:
	 * once it is gone, an OOM that goes on signals again. */
	if (chain_victim_exiting(c, scope)) {
		log_debug("%s: OOM while a victim is still exiting: waiting for it", scope->label);
		return OOMKIT_WAIT;
	}
	/* Nor while it is giving memory back: the headroom it was lent is used up, not a new OOM. */
	if (!c->dry_run && shed_active(c->shed, scope)) {
		log_debug("%s: OOM while it sheds: waiting for it", scope->label);
		return OOMKIT_WAIT;
	}
	/* Nor while its question is open: the kernel signals an OOM again each
	 * time a task enters the OOM wait anew, and that is the OOM asked about,
	 * whose answer (or deadline) decides.  Run again, the chain would find
	 * the prompt busy, go past it and kill a second victim beside the one
	 * the person then chooses. */
	if (c->prompt->active && scope_get(c->prompt->scope) == scope) {
		log_debug("%s: OOM while its question is open: waiting for the answer", scope->label);
		return OOMKIT_WAIT;
	}
	r = take_input(c, c->snap, scope, first_step, &in);
	if (r < 0) {
		log_err("%s: cannot list processes: %s; the kernel decides", scope->label, strerror(-r));
		return OOMKIT_KERNEL;
	}
	/* Whether anyone could answer is a question about this OOM: asked once it
	 * is prepared (its scope's owner, its candidates), not of the last one. */
	if (!c->prompt->active) {
		prompt_prepare(c->prompt, scope, &in);
		in.prompt_available = prompt_available(c->prompt);
	}
	if (policy_decide(&in, &dec) < 0)
		return OOMKIT_KERNEL;
	uint64_t decided = now_ns();
	/* The reason names the victim's comm, which its owner chose. */
	char reason[LOG_ESCAPED_MAX(POLICY_REASON_MAX)];
	log_notice("%s: OOM: %s: %s", scope->label, policy_action_name(dec.action),
		   log_escape(reason, sizeof(reason), dec.reason));

	uint64_t time_ms = realtime_ms();
	struct report_readers readers;
	decision_readers(c, scope, &in, &dec, &readers);
	int fd = open_report(c, scope, ev, &in, &dec, time_ms, &readers, &id, &w);
	if (dec.action == ACTION_PROMPT && !c->dry_run)
		return ask(c, scope, ev, &in, &dec, time_ms, &readers, fd, id, &w);

	struct flight spare, *fl = take_flight(c, scope, &dec, ev, decided, &spare);
	fl->report_fd = fd;
	fl->report_id = id;
	fl->report = w;
	fl->time_ms = time_ms;
	fl->readers = readers;
	if (c->dry_run) {
		snprintf(fl->result, sizeof(fl->result), "dry run: nothing done");
		fl->t.not_freed = "a dry run frees nothing";
		inflight_land(c->inflight, fl);
		return OOMKIT_WAIT;
	}
	if (dec.action == ACTION_KERNEL || dec.action == ACTION_NONE)
		return no_action(c, scope, id, &in, &dec, fl);
	if (dec.action == ACTION_SHED)
		return shed(c, scope, ev, &in, &dec, fl);
	prepare_hooks(c, &in, &dec, fl);
	if (before_kill(c, scope, &dec, fl, ev->time_ns, chose_again)) {
		metrics_changed(c->metrics);
		return OOMKIT_WAIT;
	}
	struct action_started st;
	r = actions_start(c->actions, scope, &in, &dec, budget_ms(c, ev->time_ns), result, sizeof(result),
			  &st);
	bool gone = victim_gone(dec.action, r);
	if (gone)
		snprintf(result, sizeof(result), "%d was gone before the kill: nothing killed",
			 (int)dec.victim_pid);
	snprintf(fl->result, sizeof(fl->result), "%s", result);
	fl->failed = r < 0 && !gone;
	tell_policy_outcome(c, scope, id, &in, &dec, result);
	await(c, fl, r, &st);
	metrics_changed(c->metrics);
	if (gone)
		return after_gone(c, scope, ev->time_ns, dec.step, chose_again);
	/* An action that could not be carried out: the rest of the chain gets its turn. */
	if (r < 0 && dec.step + 1 < in.chain->n_steps)
		return run(c, scope, ev, dec.step + 1, false);
	return r < 0 ? OOMKIT_WAIT : OOMKIT_RESOLVED;
}
