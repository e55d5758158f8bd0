/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* explain.c - see explain.h. */
#include "oom/explain.h"

#include "config/config.h"
#include "report/report.h"

/* A step as if the chain were that step alone: what it would decide, or
 * why it would not apply (the decision's not_applied). */
static void write_alone(struct oomkit__json *w, const struct policy_input *in, unsigned step)
{
	struct policy_chain one = {.steps = {in->chain->steps[step]}, .n_steps = 1};
	struct policy_input alone = *in;
	struct policy_decision d;

	alone.chain = &one;
	alone.first_step = 0;
	if (policy_decide(&alone, &d) == 0)
		report_write_decision(w, "alone", &alone, &d);
}

static void write_ranking(struct oomkit__json *w, const struct policy_input *in, enum policy_kind kind,
			  unsigned *order)
{
	unsigned n = policy_rank(in, kind, order, in->n_procs);

	oomkit__json_u64(w, "candidates", n);
	oomkit__json_open(w, "ranking", '[');
	for (unsigned i = 0; i < n && i < EXPLAIN_LIST_MAX; i++) {
		oomkit__json_open(w, NULL, '{');
		oomkit__json_u64(w, "rank", i + 1);
		report_write_proc(w, in, &in->procs[order[i]]);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
}

static void write_steps(struct oomkit__json *w, const struct policy_input *in,
			const struct policy_decision *dec, unsigned *order)
{
	oomkit__json_open(w, "steps", '[');
	for (unsigned s = 0; s < in->chain->n_steps; s++) {
		enum policy_kind kind = in->chain->steps[s];
		oomkit__json_open(w, NULL, '{');
		oomkit__json_u64(w, "step", s);
		oomkit__json_str(w, "policy", policy_kind_name(kind));
		/* Steps after the one that decides are not reached. */
		oomkit__json_bool(w, "reached", s <= dec->step);
		oomkit__json_bool(w, "decides", dec->action != ACTION_NONE && s == dec->step);
		write_alone(w, in, s);
		if (policy_ranks(kind))
			write_ranking(w, in, kind, order);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
}

static void write_excluded(struct oomkit__json *w, const struct policy_input *in)
{
	char why[POLICY_RULE_MAX + 32];
	unsigned n = 0;

	oomkit__json_open(w, "excluded", '[');
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		/* A job's snapshot holds the rest of the machine too: not this scope's. */
		if (in->scope == SCOPE_JOB && p->group != (int)in->scope_group)
			continue;
		if (!policy_excluded(in, p, why, sizeof(why)) || n++ >= EXPLAIN_LIST_MAX)
			continue;
		oomkit__json_open(w, NULL, '{');
		report_write_proc(w, in, p);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
	oomkit__json_u64(w, "excluded_count", n);
}

static void write_hooks(struct oomkit__json *w, const struct explain_head *h)
{
	oomkit__json_open(w, "hooks", '[');
	for (unsigned i = 0; i < h->n_hooks; i++) {
		const struct explain_hook *k = &h->hooks[i];
		oomkit__json_open(w, NULL, '{');
		oomkit__json_str(w, "hook", k->hook);
		oomkit__json_str(w, "job", k->job);
		oomkit__json_str(w, "command", k->command);
		oomkit__json_bool(w, "runs", k->timeout_ms > 0);
		oomkit__json_u64(w, "timeout_ms", k->timeout_ms);
		oomkit__json_str(w, "timeout_by", k->limit);
		if (k->hook_timeout_ms)
			oomkit__json_u64(w, "hook_timeout_ms", k->hook_timeout_ms);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
	oomkit__json_u64(w, "hooks_count", h->hooks_count);
}

void explain_write(struct oomkit__json *w, const struct explain_head *h, const struct policy_input *in,
		   const struct policy_decision *dec, unsigned *order)
{
	char chain[128];
	unsigned in_scope = 0;

	for (unsigned i = 0; i < in->n_procs; i++)
		in_scope += in->scope == SCOPE_MACHINE || in->procs[i].group == (int)in->scope_group;
	oomkit__json_open(w, NULL, '{');
	oomkit__json_u64(w, "oomkitd_explain", 1);
	oomkit__json_str(w, "scope", h->machine ? "machine" : "job");
	oomkit__json_str(w, "job", h->job);
	oomkit__json_str(w, "cgroup", h->cgroup);
	config_format_chain(in->chain, chain, sizeof(chain));
	oomkit__json_str(w, "chain", chain);
	oomkit__json_u64(w, "capacity_bytes", in->capacity_bytes);
	oomkit__json_bool(w, "prompt_available", in->prompt_available);
	oomkit__json_u64(w, "processes", in_scope);
	write_steps(w, in, dec, order);
	write_excluded(w, in);
	/* What an OOM now would do: the chain from its first step. */
	report_write_decision(w, "decision", in, dec);
	write_hooks(w, h);
	oomkit__json_close(w, '}');
	oomkit__json_newline(w);
}
