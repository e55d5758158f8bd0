/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * access.c - who may see and answer what (access.h).
 */
#include "rules/access.h"

#include <errno.h>

bool access_may_see(uid_t peer, const struct access_question *q, uid_t candidate_uid)
{
	(void)q;
	return peer == 0 || candidate_uid == peer;
}

bool access_may_see_question(uid_t peer, const struct access_question *q, bool has_own_candidate)
{
	return peer == 0 || has_own_candidate || (q->job && q->has_owner && q->owner == peer);
}

int access_may_answer(uid_t peer, const struct access_question *q, const struct protocol_answer *a,
		      uid_t victim_uid)
{
	bool owns = q->job && q->has_owner && q->owner == peer;

	if (peer == 0 || a->choice == PROTOCOL_CHOICE_CHAIN)
		return 0;
	if (a->choice == PROTOCOL_CHOICE_KILL)
		return victim_uid == peer ? 0 : -EPERM;
	return owns ? 0 : -EPERM;
}

bool access_outcome_details(uid_t peer, bool has_victim, uid_t victim_uid, bool has_owner, uid_t owner)
{
	return peer == 0 || (has_victim && victim_uid == peer) || (has_owner && owner == peer);
}

bool access_may_read_all(uid_t peer, bool readonly_status)
{
	return peer == 0 || readonly_status;
}

bool access_may_read_report(uid_t peer, bool readonly_status, bool concerned)
{
	return access_may_read_all(peer, readonly_status) || concerned;
}
