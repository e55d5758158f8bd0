/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * freeze.h - holding the growers still while a person decides.  While a
 * question is open (prompt.h), the candidates' jobs and job instances are
 * sampled every FREEZE_SAMPLE_MS, the first time at once against the OOM's
 * snapshot; one whose memory grew by FREEZE_GROW_MIN or more since the
 * last reading is frozen (liboomkit's
 * oomkit_cgroup_freeze(): cgroup v2 cgroup.freeze, the v1 freezer), so the
 * machine stops sinking and the rest of the desktop stays usable.  All are
 * thawed when the question closes: answered, declined, or its deadline
 * come, before the chain acts; and when the daemon stops.
 *
 * Never frozen: the machine itself, processes in no job, a login session
 * (an instance cgroup named session-*.scope), and a job or instance that
 * holds a protected process, a prompt client (the agent, `oomkit prompt`),
 * or a process named as a desktop's shell, display server, compositor,
 * notification server or a login shell (freeze.c's list).  A name only
 * ever keeps its own cgroup from being frozen.
 *
 * What is frozen is written, before it is, to a record file beside the
 * report directory (root's alone, or not used); a daemon that starts
 * thaws what the record names, so a crash leaves nothing frozen for longer
 * than the restart.  Nothing here allocates after freeze_init().
 */
#ifndef OOMKITD_FREEZE_H
#define OOMKITD_FREEZE_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "base/loop.h"
#include "oom/prompt.h"
#include "oom/snapshot.h"
#include "rules/policy.h"
#include "scope/scope.h"

#define FREEZE_MAX 16		     /* groups watched in one question */
#define FREEZE_SAMPLE_MS 500	     /* how often they are sampled */
#define FREEZE_GROW_MIN (1ull << 20) /* growth in one sample that freezes */

struct freeze_group {
	char rel[SCOPE_REL_MAX];
	char label[CONFIG_NAME_MAX + SCOPE_REL_MAX + 4];
	uint64_t usage_bytes; /* at the last sample */
	uint64_t grew_bytes;  /* in the sample that froze it */
	uint64_t frozen_ns;   /* when it was frozen; 0: not */
	uint64_t frozen_ms;   /* how long, once thawed */
	bool frozen, was_frozen;
};

struct freeze {
	oomkit_ctx *ctx;
	bool enabled;
	struct prompt *prompt;	 /* whose clients are never frozen */
	struct loop_timer timer; /* the next sample while a question is open */
	struct freeze_group groups[FREEZE_MAX];
	unsigned n_groups;
	int record_fd;	       /* -1: none */
	uint64_t frozen_total; /* groups frozen since the start, for the metrics */
};

/* Opens the record (record_path: NULL for none) and thaws what a daemon
 * before this one left frozen; registers the sampling timer.  0 or -errno. */
int freeze_init(struct freeze *f, oomkit_ctx *ctx, struct loop *loop, struct prompt *prompt,
		const char *record_path);
/* The record's path: "frozen" beside the report directory
 * (/var/lib/oomkit/frozen by default: the state directory survives a
 * restart, where systemd empties /run/oomkit). */
int freeze_record_path(const char *report_dir, char *buf, size_t len);
/* Thaws everything and closes the record (the daemon stops). */
void freeze_free(struct freeze *f);

/* A question about in (its candidates in f->prompt) was asked: its groups
 * that may be frozen are sampled from now on. */
void freeze_watch(struct freeze *f, const struct snapshot *snap, const struct policy_input *in);
/* Thaws every frozen group and stops sampling (idempotent); why: for the log. */
void freeze_thaw(struct freeze *f, const char *why);
/* The report's "frozen": each group frozen in this question, for how long.
 * Nothing when none was. */
void freeze_report(const struct freeze *f, struct oomkit__json *w);

/* Pure, for the tests: whether a process named comm keeps its group from
 * being frozen; whether an instance's cgroup path is a login session's. */
bool freeze_never_comm(const char *comm);
bool freeze_never_cgroup(const char *rel);

#endif
