/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rules.h - protect, prefer and avoid applied to one process (issue 17):
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
 * or executable (LD_PRELOAD), and must not buy protection with it.  uid: and
 * cgroup: protect whoever they match.
 */
#ifndef OOMKITD_RULES_H
#define OOMKITD_RULES_H

#include "config.h"
#include "match.h"
#include "policy.h"

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

#endif
