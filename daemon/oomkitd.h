/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkitd.h - the daemon's state, shared by its files: oomkitd.c (setup,
 * jobs, reload, main loop), handle.c (an OOM from event to action), reports.c
 * (the report directory), metrics.c (the Prometheus file) and control.c (the
 * control socket).  Everything the handler path touches is allocated here at
 * startup; the handler path itself never allocates.
 */
#ifndef OOMKITD_H
#define OOMKITD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "notify.h"
#include "oomkit.h"
#include "policy.h"
#include "protocol.h"

#define DAEMON_MAX_PIDS 4096
#define DAEMON_MAX_REPORTS 4096
#define DAEMON_MAX_CLIENTS 32
#define DAEMON_LAST_ACTION_MAX 160
#define DAEMON_REL_MAX 512

/* One job: a configured child memcg of the machine. */
struct job_state {
	char name[CONFIG_NAME_MAX];
	char rel[DAEMON_REL_MAX];     /* relative to the memory root */
	const struct config_job *cfg; /* into daemon.cfg; re-pointed on reload */
	oomkit_watch *watch;
	uint64_t ooms;	/* OOMs of its own limit */
	uint64_t kills; /* processes killed in it */
	uint64_t grows;
	char last_action[DAEMON_LAST_ACTION_MAX];
	uint64_t delegated_due_ns; /* a delegated job's OOM: when we step in; 0: none */
	uint64_t last_oom_count;   /* dry run: tells whose limit was hit (handle_oom_count) */
	struct {		   /* read once per metrics write, for every family */
		bool ok, under_oom;
		uint64_t usage_bytes, limit_bytes;
	} sample;
};

/* The machine is handled like a job, with the whole machine in scope. */
struct machine_state {
	char rel[DAEMON_REL_MAX];
	oomkit_watch *watch;
	uint64_t ooms;
	uint64_t kills;
	char last_action[DAEMON_LAST_ACTION_MAX];
	uint64_t last_oom_count;
	oomkit_watch *pressure_watch; /* critical memory pressure: a warning before the OOM */
	uint64_t pressure_events;
	uint64_t pressure_logged_ns;
};

struct report_entry {
	unsigned id;
	uint64_t bytes;
	char scope[CONFIG_NAME_MAX]; /* "machine" or the job's name */
};

/* A prompt waiting for a person's answer.  The scope's owner and the
 * candidates are prepared before the chain is decided (prompt_prepare()), so
 * that a prompt step is taken only if someone it concerns is listening. */
struct prompt_state {
	bool active;
	unsigned report_id;
	int report_fd;		     /* the report stays open until the outcome is known */
	int job;		     /* -1: the machine */
	struct protocol_asker asker; /* who may see and answer it (protocol.c) */
	bool can_grow;		     /* a job's OOM and the machine has room: "grow" is offered */
	bool declined;		     /* everyone asked said "let the system decide" */
	unsigned next_step;	     /* where the chain resumes without an answer */
	uint64_t event_ns;
	uint64_t deadline_ns;
	uint64_t timeout_ms;
};

/* A process offered to a person (its uid says to whom: protocol_may_see()). */
struct prompt_candidate {
	struct policy_proc proc;
	const char *job_name; /* a job slot's name, or "(other)" */
	unsigned priority;
};

/* What happened to an OOM, told to the prompt clients it concerns (root, the
 * victim's uid, the owner of the job) and, without details, to everyone who
 * was asked about it. */
struct outcome {
	unsigned report_id;
	const char *scope;  /* "machine" or the job's name */
	const char *action; /* policy_action_name(), or "none" */
	const char *by;	    /* "user NAME", "policy NAME", "nobody" */
	const char *result;
	bool has_victim;
	pid_t victim_pid;
	uid_t victim_uid;
	uint64_t victim_bytes;
	const char *victim_comm; /* the process's comm, or the job's name for kill-job */
	const char *victim_job;
	bool has_owner; /* the owner of the scope's or the victim's job */
	uid_t owner;
};

struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	bool prompt;   /* listens for prompts */
	bool asked;    /* was sent the active prompt and has not declined it */
	char user[32]; /* its uid's name, looked up when it first listens or answers */
	char in[512];
	size_t in_len;
	char *out;
	size_t out_len, out_cap;
};

struct daemon {
	struct config *cfg;
	const char *config_path; /* NULL: the built-in configuration */
	bool dry_run;
	oomkit_ctx *ctx;
	struct machine_state machine;
	/* Sized once at start (daemon_job_room()), after the guardian is forked,
	 * so that it does not carry a copy: a reload can fill free slots but not
	 * add past max_jobs. */
	struct job_state *jobs; /* max_jobs slots; a free slot has name[0] == 0 */
	unsigned n_jobs;	/* slots used so far, free ones included */
	unsigned max_jobs;

	/* Snapshot buffers for the handler path. */
	pid_t *pids;
	struct policy_proc *procs;
	struct policy_group *groups; /* max_jobs + 1: the jobs, then "(other)" */
	int *group_of_job;	     /* max_jobs: a job slot's index in groups, or -1 */
	char *jsonbuf;		     /* report prefix/suffix writer */
	size_t jsonbuf_len;
	char *metricsbuf; /* the metrics file goes out through it in pieces */
	size_t metricsbuf_len;

	/* Reports. */
	int report_dirfd;
	unsigned next_report_id;
	struct report_entry *reports; /* DAEMON_MAX_REPORTS */
	unsigned n_reports;

	/* Counters for metrics. */
	uint64_t kills_by_policy[POLICY__COUNT];
	uint64_t kernel_handoffs;
	uint64_t handled;
	uint64_t handling_ns_sum;
	uint64_t last_handling_ns;

	/* Control socket and prompts. */
	int listen_fd;
	struct client clients[DAEMON_MAX_CLIENTS];
	struct prompt_state prompt;
	struct prompt_candidate *prompt_procs; /* DAEMON_MAX_PIDS: the candidates offered */
	unsigned n_prompt_procs;

	int epfd;
	int timerfd;
	int sigfd;
	bool stop;
	bool reload;
	struct notifier notifier;  /* $NOTIFY_SOCKET; fd -1: not under a service manager */
	uint64_t watchdog_usec;	   /* 0: no watchdog */
	uint64_t next_watchdog_ns; /* 0: no ping due */
	uint64_t next_metrics_ns;  /* 0: metrics only on events (metrics_interval = 0) */
	bool metrics_dirty;	   /* something changed: rewrite after this turn of the loop */
};

/* handle.c */
enum oomkit_verdict handle_oom_event(oomkit_ctx *ctx, const struct oomkit_event *event, void *userdata);
/* Critical memory pressure on the machine: counted and logged (at most every 10 s). */
enum oomkit_verdict handle_pressure_event(oomkit_ctx *ctx, const struct oomkit_event *event, void *userdata);
/* Runs the chain for scope (job index, -1: machine) from first_step, writing a report. */
enum oomkit_verdict handle_scope(struct daemon *d, int job, const struct oomkit_event *ev,
				 unsigned first_step);
/* Called from the main loop: prompt deadlines and delegated jobs whose handler did not resolve. */
void handle_timers(struct daemon *d, uint64_t now);
/* A person's answer to the active prompt, from a peer of uid (user: its
 * name); 0 or -errno with a message.  Non-root peers may answer only a prompt
 * that concerns them, and only for their own processes and jobs. */
int handle_prompt_answer(struct daemon *d, const struct protocol_answer *answer, uid_t uid, const char *user,
			 char *msg, size_t msg_len);
/* Everyone asked declined the active prompt: the chain goes on now. */
void handle_prompt_declined(struct daemon *d);
/* Whether the active (or prepared) prompt concerns uid / shows it candidate c. */
bool prompt_concerns(const struct daemon *d, uid_t uid);
bool prompt_shows(const struct daemon *d, const struct prompt_candidate *c, uid_t uid);
/* Fills the policy snapshot of a scope; returns the number of processes or -errno. */
int snapshot(struct daemon *d, int job, struct policy_input *in, pid_t *protected_pids);
/* OOMs of a scope's own limit so far (job index, -1: machine), for a dry run. */
int handle_oom_count(struct daemon *d, int job, uint64_t *ret_count);
/* The job a process belongs to (index), or -1. */
int job_of_cgroup(const struct daemon *d, const char *rel);

/* reports.c */
int reports_open_dir(struct daemon *d);
int reports_create(struct daemon *d, const char *scope, unsigned *ret_id);
/* Closes a report; one whose writing failed (err < 0) is logged and removed.  fd < 0: none. */
void reports_done(struct daemon *d, unsigned id, const char *scope, int fd, int err);
int reports_open_existing(struct daemon *d, unsigned id);

/* metrics.c */
void metrics_write(struct daemon *d);
/* Asks for the metrics file to be rewritten once the event being handled is
 * done: the main loop writes it after each turn, so a storm of OOMs costs one
 * rewrite per turn, not one per OOM. */
static inline void metrics_changed(struct daemon *d)
{
	d->metrics_dirty = true;
}

/* control.c */
int control_listen(struct daemon *d);
void control_accept(struct daemon *d);
void control_client_event(struct daemon *d, int index, uint32_t events);
void control_close_all(struct daemon *d);
/* Sends the active prompt to every prompt client it concerns, each seeing
 * only what it may (prompt_shows()); returns how many were asked. */
int control_send_prompt(struct daemon *d);
/* Whether a prompt client that the prepared prompt concerns is connected. */
bool control_has_prompt_client(const struct daemon *d);
/* Tells the prompt clients concerned what happened; clears every "asked". */
void control_send_outcome(struct daemon *d, const struct outcome *o);
/* Epoll tags: listen socket and clients. */
#define TAG_LISTEN 1u
#define TAG_CLIENT 2u
#define TAG_LIB 3u
#define TAG_TIMER 4u
#define TAG_SIGNAL 5u

/* oomkitd.c */
/* How many job slots a daemon started with configured jobs makes: twice as
 * many, so reloads can add jobs, at least 64 and at most CONFIG_MAX_JOBS. */
unsigned daemon_job_room(unsigned configured);
void daemon_request_reload(struct daemon *d);
int daemon_reload(struct daemon *d);

#endif
