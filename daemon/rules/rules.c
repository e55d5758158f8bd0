/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rules.c - see rules.h. */
#include "rules/rules.h"

static unsigned needs_of(const struct rules_set *set)
{
	unsigned m = 0;

	for (unsigned i = 0; set && i < set->n; i++)
		m |= match_needs(&set->rules[i].expr);
	return m;
}

unsigned rules_needs(const struct rules_set *job, const struct rules_set *machine)
{
	return needs_of(job) | needs_of(machine);
}

static enum policy_place place_of(enum config_rule_list list)
{
	return list == RULE_PROTECT ? PLACE_PROTECT : list == RULE_PREFER ? PLACE_PREFER : PLACE_AVOID;
}

/* Whether the rule applies to the subject at all.  A process names itself:
 * any user sets its comm (prctl(PR_SET_NAME)) and command line, and runs a
 * protected executable with LD_PRELOAD or under ptrace.  Protection, like
 * oom_score_adj -1000, must not be something a process grants itself, so a
 * protect rule by name shields only processes of root, which no other user
 * can start.  Nor by cgroup: a user moves its processes into any cgroup of
 * a subtree delegated to it, so a cgroup: protect rule shields a process of
 * another user only where its cgroup is not that user's to write.  prefer
 * and avoid apply to every process: a user only makes its own process
 * chosen sooner, or later among its own job. */
static bool applies(const struct config_rule *r, const struct match_subject *s)
{
	if (r->list != RULE_PROTECT || s->uid == 0)
		return true;
	if (r->expr.kind == MATCH_CGROUP)
		return !s->cgroup_self_placed;
	return !match_self_named(&r->expr);
}

/* The first rule of set that matches, among protect rules only or among the others. */
static const struct config_rule *first(const struct rules_set *set, bool protect,
				       const struct match_subject *s)
{
	for (unsigned i = 0; set && i < set->n; i++) {
		const struct config_rule *r = &set->rules[i];
		if ((r->list == RULE_PROTECT) == protect && applies(r, s) && match_test(&r->expr, s))
			return r;
	}
	return NULL;
}

void rules_place(const struct rules_set *job, const struct rules_set *machine, const struct match_subject *s,
		 struct policy_proc *proc)
{
	const struct config_rule *r;
	bool on_machine = false;

	if (!(r = first(job, true, s)) && !(on_machine = (r = first(machine, true, s)) != NULL) &&
	    !(r = first(job, false, s)))
		on_machine = (r = first(machine, false, s)) != NULL;
	proc->place = r ? place_of(r->list) : PLACE_NONE;
	proc->rule = r ? &r->expr : NULL;
	proc->rule_line = r ? r->line : 0;
	proc->rule_machine = on_machine;
}

bool rules_cgroup_protected(const struct policy_proc *proc, const struct match_subject *s)
{
	return proc->place == PLACE_PROTECT && proc->rule && proc->rule->kind == MATCH_CGROUP &&
	       s->uid != 0 && !s->cgroup_self_placed;
}
