/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* prompt.c - see prompt.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "oom/prompt.h"

int prompt_init(struct prompt *p, size_t max_procs)
{
	memset(p, 0, sizeof(*p));
	p->report_fd = -1;
	p->max_procs = max_procs;
	return 0;
}

int prompt_make_room(struct prompt *p)
{
	if (!p->procs)
		p->procs = calloc(p->max_procs, sizeof(*p->procs));
	return p->procs ? 0 : -ENOMEM;
}

void prompt_free(struct prompt *p)
{
	free(p->procs);
	p->procs = NULL;
}

void prompt_set_listener(struct prompt *p, const struct prompt_listener *l)
{
	p->listener = *l;
}

/* The index of c's rule text among p's, copied there the first time; -1. */
static int rule_index(struct prompt *p, const struct policy_proc *c)
{
	/* Placed by no rule of the file (systemd's ManagedOOMPreference=): one text per place. */
	static const char by_systemd[PLACE_PROTECT + 1];
	const void *key = c->rule ? (const void *)c->rule : &by_systemd[c->place];

	if (c->place == PLACE_NONE)
		return -1;
	for (unsigned r = 0; r < p->n_rules; r++)
		if (p->rule_of[r] == key)
			return (int)r;
	if (p->n_rules == PROMPT_RULES_MAX)
		return -1;
	policy_format_rule(c, p->rules[p->n_rules], sizeof(p->rules[0]));
	p->rule_of[p->n_rules] = key;
	return (int)p->n_rules++;
}

void prompt_prepare(struct prompt *p, struct scope *scope, const struct policy_input *in)
{
	static const struct policy_chain grow_chain = {.steps = {POLICY_GROW}, .n_steps = 1};
	struct policy_input grow_in = *in;
	struct policy_decision dec;
	bool job = scope->kind != SCOPE_KIND_MACHINE;

	p->scope = scope_ref(scope);
	snprintf(p->scope_name, sizeof(p->scope_name), "%s", scope->name);
	snprintf(p->rel, sizeof(p->rel), "%s", scope->rel);
	p->instance = scope->kind == SCOPE_KIND_INSTANCE;
	p->asker = (struct access_question){.job = job, .has_owner = job && scope->job->has_owner};
	if (p->asker.has_owner)
		p->asker.owner = scope->job->owner;
	p->usage_bytes = p->limit_bytes = 0;
	if (job && in->scope == SCOPE_JOB && in->scope_group < in->n_groups) {
		p->usage_bytes = in->groups[in->scope_group].usage_bytes;
		p->limit_bytes = in->groups[in->scope_group].limit_bytes;
	}
	p->n_procs = 0;
	p->n_rules = 0;
	/* Preferred first, then those no rule placed, avoided last; within each,
	 * the snapshot's order.  Protected processes are never offered. */
	static const enum policy_place tiers[] = {PLACE_PREFER, PLACE_NONE, PLACE_AVOID};
	for (unsigned t = 0; p->procs && t < sizeof(tiers) / sizeof(tiers[0]); t++)
		for (unsigned i = 0; i < in->n_procs && p->n_procs < p->max_procs; i++) {
			const struct policy_proc *c = &in->procs[i];
			if (in->scope == SCOPE_JOB && c->group != (int)in->scope_group)
				continue;
			if (policy_protected(in, c) || c->place != tiers[t])
				continue;
			p->procs[p->n_procs++] =
			    (struct prompt_candidate){.proc = *c,
						      .job_name = in->groups[c->group].name,
						      .priority = in->groups[c->group].priority,
						      .rule = rule_index(p, c)};
		}
	grow_in.chain = &grow_chain;
	grow_in.first_step = 0;
	p->can_grow = job && policy_decide(&grow_in, &dec) == 0 && dec.action == ACTION_GROW;
}

bool prompt_available(const struct prompt *p)
{
	return !p->active && p->listener.available && p->listener.available(p->listener.data);
}

int prompt_ask(struct prompt *p, const struct policy_decision *dec, uint64_t event_ns, uint64_t timeout_ms,
	       int report_fd, unsigned report_id, const struct oomkit__json *report)
{
	p->active = true;
	p->declined = false;
	p->report_fd = report_fd;
	p->report_id = report_id;
	if (report)
		p->report = *report;
	p->next_step = dec->step + 1;
	p->event_ns = event_ns;
	p->timeout_ms = timeout_ms;
	p->timer.due_ns = now_ns() + timeout_ms * NS_PER_MS;
	return p->listener.send ? p->listener.send(p->listener.data) : 0;
}

uint64_t prompt_remaining_ms(const struct prompt *p, uint64_t now)
{
	if (!p->active || p->timer.due_ns <= now)
		return 0;
	return (p->timer.due_ns - now + NS_PER_MS - 1) / NS_PER_MS;
}

bool prompt_shows(const struct prompt *p, const struct prompt_candidate *c, uid_t uid)
{
	return access_may_see(uid, &p->asker, c->proc.uid);
}

bool prompt_concerns(const struct prompt *p, uid_t uid)
{
	bool own = false;

	for (unsigned i = 0; i < p->n_procs && !own; i++)
		own = prompt_shows(p, &p->procs[i], uid);
	return access_may_see_question(uid, &p->asker, own);
}

const struct prompt_candidate *prompt_candidate(const struct prompt *p, pid_t pid, uid_t uid)
{
	for (unsigned i = 0; i < p->n_procs; i++)
		if (p->procs[i].proc.pid == pid && prompt_shows(p, &p->procs[i], uid))
			return &p->procs[i];
	return NULL;
}

const char *prompt_rule(const struct prompt *p, const struct prompt_candidate *c)
{
	return c->rule >= 0 && (unsigned)c->rule < p->n_rules ? p->rules[c->rule] : "-";
}

void prompt_declined(struct prompt *p)
{
	if (!p->active)
		return;
	/* The timer turns the loop: the chain goes on outside the client's callback. */
	p->declined = true;
	p->timer.due_ns = now_ns();
}

void prompt_tell(struct prompt *p, const struct outcome *o)
{
	if (p->listener.send_outcome)
		p->listener.send_outcome(p->listener.data, o);
}

void prompt_close(struct prompt *p)
{
	p->active = false;
	p->report_fd = -1;
	p->timer.due_ns = 0;
}
