/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules.h - protect, prefer and avoid applied to one process:
 * which rule places it, from its job's rules and the machine's.  Pure: the
 * snapshot reads the process, this says where it goes, policy.c orders by
 * it.  No I/O, no allocation.
 *
 * The order in which rules are tried: a protect rule, the job's and then the
 * machine's, wins over everything (a protected process is never chosen,
 * whatever else matches); then the job's prefer and avoid rules, as written
 * (a job's section knows its processes better than the machine's does); then
 * the machine's.  The first that matches places the process.
 *
 * A protect rule by name (comm:, cmdline:, exe:, a bare name) shields only
 * processes of uid 0: any user can give its process any name, command line
 * or executable (LD_PRELOAD), and must not buy protection with it.  A
 * cgroup: protect rule shields a process of another user only if that user
 * could not have moved it there: the subject says whether its cgroup's
 * cgroup.procs is the user's to write (a delegated subtree).  uid: protects
 * whoever it matches.
 */
#ifndef OOMKITD_RULES_H
#define OOMKITD_RULES_H

#include "config/config.h"
#include "rules/match.h"
#include "rules/policy.h"

/* One side's rules: a job's (its section) or the machine's ([oomkitd]). */
struct rules_set {
	const struct config_rule *rules;
	unsigned n;
};

/* The fields of a subject that any rule of the sets reads (match_needs()). */
unsigned rules_needs(const struct rules_set *job, const struct rules_set *machine);

/* Where the rules put the subject: fills proc's place, rule, rule_line and
 * rule_machine (PLACE_NONE and no rule if none matches). */
void rules_place(const struct rules_set *job, const struct rules_set *machine, const struct match_subject *s,
		 struct policy_proc *proc);

/* Whether a cgroup: protect rule placed proc for a process not root's: the
 * caller then reads whether the process put itself there
 * (cgroup_self_placed) and places it again.  The common path, where no
 * such rule matches, reads nothing more. */
bool rules_cgroup_protected(const struct policy_proc *proc, const struct match_subject *s);

#endif
