/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * outcome.h - what the agent says was done about an OOM.  oomkitd's "done"
 * frame names the action it took ("kill", "grow", ...) and, to those who may
 * see it, the action's result ("killed 42", "kill of 42 failed: ...",
 * "limit raised to 72 MiB"): the action is what was decided, the result
 * whether it worked.  The window's or notification's summary follows the
 * result, so it never says "Killed" of a process that lives, nor "Gave ...
 * more memory" when the limit stayed.  Pure: no GLib, no I/O.
 */
#ifndef OOMKIT_AGENT_OUTCOME_H
#define OOMKIT_AGENT_OUTCOME_H

#include <stddef.h>

enum outcome_kind {
	OUTCOME_KILLED,	  /* the process (or job) was killed */
	OUTCOME_STOPPING, /* asked to exit, killed after a grace if it does not */
	OUTCOME_GREW,	  /* the job's limit was raised */
	OUTCOME_FAILED,	  /* a kill or a grow was decided and did not happen */
	OUTCOME_OTHER,	  /* anything else: the result says it */
};

/* What action ("kill", "kill-job", "grow", ...) with result came to. */
enum outcome_kind outcome_kind(const char *action, const char *result);

/* The summary line: "Killed Big Editor (21 MiB)", "Gave roomy more memory
 * (its limit is now 72 MiB)", "Could not close Big Editor: kill of 42
 * failed: ...".  name (the victim's, NULL if none), size, scope and result
 * must be escaped already: they are copied as they are. */
void outcome_summary(const char *action, const char *result, const char *name, const char *size,
		     const char *scope, char *buf, size_t len);

#endif
