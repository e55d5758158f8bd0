/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* outcome.c - see outcome.h.  The results it reads are daemon/actions.c's
 * and daemon/chain.c's: "killed ...", "sent SIG... to PID, SIGKILL after
 * ...", "limit raised to SIZE"; every failure says something else. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "outcome.h"

#define RAISED "limit raised to "

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

enum outcome_kind outcome_kind(const char *action, const char *result)
{
	bool kill = strcmp(action, "kill") == 0 || strcmp(action, "kill-job") == 0;

	result = result ? result : "";
	if (kill && starts(result, "killed "))
		return OUTCOME_KILLED;
	if (strcmp(action, "kill") == 0 && starts(result, "sent "))
		return OUTCOME_STOPPING;
	if (strcmp(action, "grow") == 0 && starts(result, RAISED) && result[strlen(RAISED)])
		return OUTCOME_GREW;
	if (kill || strcmp(action, "grow") == 0)
		return OUTCOME_FAILED;
	return OUTCOME_OTHER;
}

void outcome_summary(const char *action, const char *result, const char *name, const char *size,
		     const char *scope, char *buf, size_t len)
{
	bool job = strcmp(action, "kill-job") == 0;

	result = result ? result : "";
	switch (outcome_kind(action, result)) {
	case OUTCOME_KILLED:
		if (name) {
			snprintf(buf, len, "Killed %s%s (%s)", job ? "job " : "", name, size);
			return;
		}
		break;
	case OUTCOME_STOPPING:
		if (name) {
			snprintf(buf, len, "Closing %s (%s): asked to exit, killed if it does not", name,
				 size);
			return;
		}
		break;
	case OUTCOME_GREW:
		snprintf(buf, len, "Gave %s more memory (its limit is now %s)", scope,
			 result + strlen(RAISED));
		return;
	case OUTCOME_FAILED:
		if (strcmp(action, "grow") == 0)
			snprintf(buf, len, "Could not give %s more memory: %s", scope, result);
		else if (name)
			snprintf(buf, len, "Could not close %s%s: %s", job ? "job " : "", name, result);
		else
			snprintf(buf, len, "Nothing was closed: %s", result);
		return;
	case OUTCOME_OTHER:
		break;
	}
	snprintf(buf, len, "Out of memory: %s", result);
}
