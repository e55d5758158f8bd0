/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * access.h - who may see and answer what: the one place that decides what a
 * control client's uid may be shown of a question, an outcome or a report,
 * and which answers it may give (docs/protocol.md, "Who sees what").  Pure:
 * the callers say what they know (the peer's uid, the question's job and
 * owner, the uids a report concerns) and act on the verdict.
 */
#ifndef OOMKITD_ACCESS_H
#define OOMKITD_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/protocol.h"

/* What the daemon knows of a question when it decides who may see it and
 * who may answer it. */
struct access_question {
	bool job;	/* an OOM of a job's own limit; false: of the machine */
	bool has_owner; /* the job names an owner uid */
	uid_t owner;
};

/* Root sees and answers every question.  Another uid sees a question about a
 * job it owns, or one with a candidate of its own, and among the candidates
 * only its own processes; it may answer "kill" for one of its own processes,
 * and "grow" or "kernel" only for a job it owns (the kernel's killer would
 * choose among that job's processes only).  candidate_uid is the uid of the
 * process an answer names, or of the candidate to show. */
bool access_may_see(uid_t peer, const struct access_question *q, uid_t candidate_uid);
/* Whether a question goes to peer at all: has_own_candidate says whether one
 * of its candidates is peer's (access_may_see() for any of them). */
bool access_may_see_question(uid_t peer, const struct access_question *q, bool has_own_candidate);
/* 0 or -EPERM.  victim_uid: the chosen candidate's uid (kill only).  Anyone
 * who may see a question may decline it ("chain"). */
int access_may_answer(uid_t peer, const struct access_question *q, const struct protocol_answer *a,
		      uid_t victim_uid);

/* Whether peer is told the details of an OOM's outcome (its victim, what
 * was done): root, the victim's uid, the job's owner. */
bool access_outcome_details(uid_t peer, bool has_victim, uid_t victim_uid, bool has_owner, uid_t owner);

/* Whether peer may read the whole status and every report: root, or anyone
 * with readonly_status. */
bool access_may_read_all(uid_t peer, bool readonly_status);
/* Whether peer may read one report: as access_may_read_all(), or concerned
 * (the report names peer among its readers: its job's, or one that killed a
 * process of its or took from its job). */
bool access_may_read_report(uid_t peer, bool readonly_status, bool concerned);

#endif
