/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.h - the JSON of one OOM report, through lib/json.h's writer: the
 * head (the scope, the snapshot the decision was made on, the decision, and
 * liboomkit's own artifact of the cgroup), written before acting, and the
 * tail (a prompt's answer, the outcome and the timings), written once the
 * outcome is known.  The writer's state is kept by the caller between the
 * two; its buffer is flushed at the end of the head, so several reports may
 * be open at once on one buffer.
 */
#ifndef OOMKITD_REPORT_H
#define OOMKITD_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "oomkit.h"
#include "rules/policy.h"
#include "report/reports.h"
#include "scope/protect.h"
#include "scope/scope.h"

struct report_head {
	unsigned id;
	uint64_t time_ms;     /* wall clock (realtime_ms()), as the index has it */
	bool machine;	      /* the machine's OOM, else a job's */
	const char *job;      /* the job's name; NULL for the machine */
	const char *instance; /* an instance's cgroup (relative); NULL for a job or the machine */
	bool dry_run;
	bool jobs_later; /* a job's OOM: the jobs are written after the action */
	const struct oomkit_event *event;
	const struct report_readers *readers; /* the uids the decision concerns */
	const struct protect *protect;	      /* memory priority in place; NULL: none */
};

/* Why a memcg is out of memory, in words, from its OOM event (cgroup v2's
 * swap rule: oomkitd.conf(5), JOBS AND SWAP): "at its limit, memory.swap.max
 * reached (16 of 16 MiB swapped)", "at its limit and stalled 72.50% of the
 * last 30 s (memory.pressure full)".  "" when the event does not say (cgroup
 * v1, whose kernel says only that reclaim failed; the machine at the root). */
void report_oom_why(const struct oomkit_event *ev, char *buf, size_t len);

/* Writes everything up to the outcome and flushes; errors stay in w->err. */
void report_write_head(struct oomkit__json *w, oomkit_ctx *ctx, const struct report_head *h,
		       const struct policy_input *in, const struct policy_decision *dec);

/* The decision as a report has it, as member key: action, policy, step,
 * victim (pid, job, comm and command line, and the rule that placed it), reason, the steps that did
 * not apply.  explain.c writes the same object. */
void report_write_decision(struct oomkit__json *w, const char *key, const struct policy_input *in,
			   const struct policy_decision *dec);

/* The members of one process as a report's candidates list has it (inside
 * an object the caller opens): pid, job, memory, start, comm and command
 * line (as the snapshot read it, cut to POLICY_CMDLINE_MAX), whether it is
 * protected, why it is no candidate, where the rules put it and by which
 * rule. */
void report_write_proc(struct oomkit__json *w, const struct policy_input *in, const struct policy_proc *p);

/* A prompt's answer ("none" when nobody answered), who gave it (user NULL:
 * nobody) and, if the answer was acted on, the decision it made (dec NULL:
 * none). */
void report_write_answer(struct oomkit__json *w, const char *answer, uid_t uid, const char *user,
			 const struct policy_input *in, const struct policy_decision *dec);

struct report_times {
	uint64_t event_ns, decided_ns, acted_ns;
	uint64_t freed_ns; /* 0: the scope did not leave OOM while we watched */
	/* freed_ns 0: why, as the report says it ("nothing was done: ...");
	 * a static string.  NULL: it did not leave OOM while watched. */
	const char *not_freed;
};

/* Every job as its memcg is now, for a job's OOM (whose snapshot read only
 * that job): written after the action, off the decision's path. */
void report_write_jobs(struct oomkit__json *w, oomkit_ctx *ctx, const struct scopes *scopes);

/* What a shed step saw: usage when it asked, the lowest since, the level
 * usage had to fall below, the headroom lent meanwhile, and how it asked. */
struct report_shed {
	uint64_t before_bytes, after_bytes, target_bytes, lent_bytes;
	unsigned signalled; /* processes sent the job's shed_signal */
	bool resolved;	    /* usage fell below the target in time: nothing was killed */
};

/* One hook run (hooks.h) as the report tells it. */
#define REPORT_HOOKS_MAX 4
struct report_hook {
	const char *hook;  /* "before_kill", "after_kill", "shed_command" */
	const char *ended; /* "exited", "signal", "timeout", "not run", "lost"; NULL: still running */
	int code;	   /* exited: the status; signal: the signal; not run: the errno */
	pid_t pid;	   /* 0: no process was started */
	uint64_t duration_ms, timeout_ms;
};

/* What an action adds to its outcome, beyond the sentence. */
struct report_more {
	bool has_shed;
	struct report_shed shed;
	struct report_hook hooks[REPORT_HOOKS_MAX]; /* in the order they were started */
	unsigned n_hooks;
	const char *ended_by; /* a kill: the signal its victim got last ("SIGTERM"); NULL: none */
};

/* The outcome (more may be NULL), the timings (with why no memory was
 * seen freed, if none was), and the uids the OOM
 * concerned in the end (a prompt's answer may have added some); closes the
 * report's object and flushes. */
void report_write_tail(struct oomkit__json *w, const char *outcome, const struct report_more *more,
		       const struct report_times *t, const struct report_readers *readers);

#endif
