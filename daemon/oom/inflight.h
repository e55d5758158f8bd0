/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inflight.h - OOMs whose action is under way, as state on the loop rather
 * than waits in it.  A kill is signalled and its victim's pidfd joins the
 * loop's epoll set; when the victim has exited (or the delay after which the
 * kernel would step in anyway has passed), the scope is watched for leaving
 * OOM on the loop's timer for a bounded time; then the report gets its
 * outcome and timings.  Meanwhile the loop serves other OOMs, prompts and
 * the control socket: one slow victim delays nothing else.
 *
 * A flight carries what its report needs to be finished even if a reload
 * removes the scope meanwhile (its name and memcg are copies).  Flights are
 * preallocated; nothing here allocates.
 */
#ifndef OOMKITD_INFLIGHT_H
#define OOMKITD_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "oom/hooks.h"
#include "json.h"
#include "oom/lend.h"
#include "base/loop.h"
#include "report/metrics.h"
#include "oomkit.h"
#include "report/report.h"
#include "report/reports.h"
#include "scope/scope.h"
#include "report/stats.h"

#define INFLIGHT_MAX 64
#define INFLIGHT_RESULT_MAX 160

enum flight_wait {
	FLIGHT_NONE = 0, /* finished now (or not taken from the pool) */
	FLIGHT_EXIT,	 /* the victim is signalled: its pidfd is in the epoll set */
	FLIGHT_FREED,	 /* acted: polling the scope for leaving OOM */
	FLIGHT_BEFORE,	 /* a kill waits for its before_kill hook, until deadline_ns */
	FLIGHT_HOOKS,	 /* done but for its hooks: landed when they have ended */
};

/* The victim of a kill, as its hooks are told (copies: the snapshot and
 * the configuration may change meanwhile). */
struct flight_victim {
	char job[CONFIG_NAME_MAX];
	char cgroup[SCOPE_REL_MAX];
	pid_t pid; /* 0: a whole job */
	char comm[16];
	uint64_t rss_bytes;
	char report[CONFIG_PATH_MAX + 64];
};

/* A kill decided and not carried out yet: it waits for before_kill. */
struct flight_kill {
	enum policy_action action;
	enum policy_kind policy;
	unsigned step;
	pid_t pid;
	uint64_t start_time;
	struct scope_ref victim_scope;
	bool chose_again; /* its step chose it after a victim of its own was gone */
};

struct flight {
	bool used;
	enum flight_wait wait;
	struct scope_ref scope;
	char scope_name[CONFIG_NAME_MAX]; /* the report's file is named after it */
	char label[SCOPE_LABEL_MAX];	  /* for the log: "job [cgroup]" for an instance */
	char rel[SCOPE_REL_MAX];
	bool instance; /* the scope is a job's instance: its report is listed with rel's last name */
	/* The report, its head written (fd -1: none). */
	int report_fd;
	unsigned report_id;
	struct oomkit__json report;
	uint64_t time_ms;
	const char *action; /* a static name */
	pid_t victim_pid;
	char reason[REPORTS_REASON_MAX];
	struct report_readers readers; /* the uids it concerns: who may read the report */
	struct report_times t;
	char result[INFLIGHT_RESULT_MAX];
	struct report_more more; /* what the action adds to the outcome */
	bool failed;		 /* the action could not be carried out */
	bool jobs_later;	 /* a job's OOM: the report's jobs go before its outcome */
	int pidfd;
	uint64_t deadline_ns;
	/* A graceful kill: SIGKILL is due at deadline_ns while grace is set,
	 * then the victim is waited for kill_wait_ns more. */
	bool grace;
	uint64_t kill_wait_ns;
	char signame[16]; /* the signal the victim got last, for the report */
	/* Hooks (hooks.h): how many of this flight's run now, and the
	 * generation that tells their callbacks from a later flight's. */
	unsigned hooks_running;
	uint64_t gen;
	struct flight_victim victim;
	struct flight_kill kill;
	bool exited; /* its victim was signalled and has exited (or was taken for gone) */
	char after_kill[VALUE_COMMAND_MAX]; /* "": none, or started already */
	uint64_t after_kill_timeout_ms;
};

/* A kill's before_kill has ended, or its time is up: the kill is due. */
typedef void (*inflight_kill_fn)(void *data, struct flight *fl);
/* A kill's victim has exited and scope is still out of memory FREED_WAIT
 * later: what it held was charged elsewhere (a process that moved in), and
 * no task waiting in the OOM was woken, so no new event may ever come. */
typedef void (*inflight_oom_fn)(void *data, struct scope *scope);

struct inflight {
	/* Set by the caller before inflight_init(). */
	oomkit_ctx *ctx;
	struct reports *reports;
	struct stats *stats;
	struct metrics *metrics;
	const struct scopes *scopes;
	struct lend *lend; /* a graceful kill's loan is let go once its victim is gone */
	struct hooks *hooks;
	inflight_kill_fn kill_due;   /* and its data, for FLIGHT_BEFORE */
	inflight_oom_fn oom_goes_on; /* with kill_due_data */
	void *kill_due_data;
	char *buf; /* the reports' writer buffer */
	size_t buf_len;
	/* Its own. */
	struct loop *loop;
	int source;
	struct loop_timer timer;
	struct flight slots[INFLIGHT_MAX];
};

int inflight_init(struct inflight *f, struct loop *loop);

/* A flight for an OOM of the scope ref names (name, rel: copies kept);
 * from the pool when there is room (used), else the caller's *spare (not
 * used: it is finished at once, by inflight_land()). */
struct flight *inflight_take(struct inflight *f, struct scope_ref ref, const char *name, const char *rel,
			     struct flight *spare);

/* Waits for the signalled victim behind pidfd (which the flight then owns)
 * until deadline_ns, then for the scope to leave OOM. */
void inflight_wait_exit(struct inflight *f, struct flight *fl, int pidfd, uint64_t deadline_ns);
/* A victim sent a signal it may handle (sig): SIGKILL through the same
 * pidfd at grace_deadline_ns unless it has exited, then as
 * inflight_wait_exit() for kill_wait_ns more.  The report says which
 * signal ended it. */
void inflight_wait_grace(struct inflight *f, struct flight *fl, int pidfd, int sig,
			 uint64_t grace_deadline_ns, uint64_t kill_wait_ns);
/* Acted (fl->t.acted_ns set): waits a bounded time for the scope to leave OOM. */
void inflight_wait_freed(struct inflight *f, struct flight *fl);

/* Runs a hook for fl, which lands only once it has ended (its report
 * records how).  0, or -errno: not started (recorded as not run when it
 * was asked and refused). */
int inflight_run_hook(struct inflight *f, struct flight *fl, enum config_hook hook, const char *command,
		      uint64_t timeout_ms);
/* The kill in fl->kill waits for the before_kill just started, until
 * deadline_ns at the latest; then kill_due is called. */
void inflight_wait_before(struct inflight *f, struct flight *fl, uint64_t deadline_ns);

/* Finishes the report (outcome, timings), counts, logs the result; a
 * flight with hooks still running lands when they have ended. */
void inflight_land(struct inflight *f, struct flight *fl);

/* Whether a victim of scope is signalled and has not exited yet, or is
 * about to be (its before_kill runs). */
bool inflight_exiting(const struct inflight *f, const struct scope *scope);

/* At a stop: every flight landed now, as far as it got. */
void inflight_land_all(struct inflight *f);

#endif
