/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prompt.h - the question a person answers during the OOM delay (the
 * `prompt` policy): which scope, which candidates, whose they are, what may
 * be chosen, how long there is to answer.  One question is open at a time.
 *
 * Before a chain is decided the question is prepared (the candidates, the
 * scope's owner, whether grow would work), so that a prompt step is taken
 * only if someone it concerns is listening: who that is, who sees which
 * candidate and who may answer what is protocol.c's rule.  The question
 * and, once the OOM is handled, its outcome reach the clients through the
 * listener control.c registers; this module knows nothing of sockets.
 * chain.c asks and acts on the answer.
 *
 * The question's report stays open until the outcome is known: its fd and
 * its writer's state are kept here, and so are the scope's name and memcg,
 * so a reload that removes the job meanwhile does not lose them.
 */
#ifndef OOMKITD_PROMPT_H
#define OOMKITD_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "base/loop.h"
#include "rules/access.h"
#include "rules/policy.h"
#include "common/protocol.h"
#include "report/reports.h"
#include "scope/scope.h"

/* A process offered to a person (its uid says to whom: access_may_see()). */
#define PROMPT_RULES_MAX 16 /* distinct rules named among one question's candidates */

/* A candidate offered to a person: protected processes are none, preferred
 * ones come first, avoided ones last (the order every kill policy starts
 * with), each with the rule that placed it. */
struct prompt_candidate {
	struct policy_proc proc;
	const char *job_name; /* a job's name, or "(other)" */
	unsigned priority;
	int rule; /* into the prompt's rules; -1: none, or past PROMPT_RULES_MAX */
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

struct prompt_listener {
	/* Sends the open question to every client it concerns; returns how many. */
	int (*send)(void *data);
	/* Whether a client the prepared question concerns is listening. */
	bool (*available)(void *data);
	/* Tells the clients concerned what happened. */
	void (*send_outcome)(void *data, const struct outcome *o);
	void *data;
};

struct prompt {
	bool active;
	struct scope_ref scope;
	char scope_name[CONFIG_NAME_MAX];
	char rel[SCOPE_REL_MAX];
	bool instance;		      /* the scope is a job's instance */
	struct access_question asker; /* who may see and answer it */
	bool can_grow;		      /* a job's OOM and the machine has room: "grow" is offered */
	bool declined;		      /* everyone asked said "let the system decide" */
	/* A job's OOM: the job's usage and limit as the snapshot read them,
	 * sent with the question (what "give it more memory" is weighed by). */
	uint64_t usage_bytes, limit_bytes;
	unsigned report_id;
	int report_fd; /* -1: no report */
	struct oomkit__json report;
	uint64_t report_time_ms;	       /* the report's time, for its index entry */
	struct report_readers report_readers;  /* the uids its decision concerned */
	char report_reason[POLICY_REASON_MAX]; /* the decision to ask, likewise */
	unsigned next_step;		       /* where the chain resumes without an answer */
	uint64_t event_ns, timeout_ms;
	struct loop_timer timer; /* due at the deadline; its fn is chain.c's */
	struct prompt_candidate *procs;
	unsigned n_procs;
	size_t max_procs;
	/* The rules' texts, copied when the question is prepared: a reload may
	 * free the configuration they point into while it is open. */
	char rules[PROMPT_RULES_MAX][POLICY_RULE_MAX];
	const void *rule_of[PROMPT_RULES_MAX]; /* the match_expr each is, to share one text */
	unsigned n_rules;
	struct prompt_listener listener;
};

/* Room for max_procs candidates is made by prompt_make_room(), not here. */
int prompt_init(struct prompt *p, size_t max_procs);
/* Makes the candidates' table (max_procs of them, 104 bytes each) if it is
 * not made yet: when a client first listens, off the OOM path, so a daemon
 * that no one ever listens to does not hold it resident.  Until then
 * prompt_prepare() prepares no candidates, and no question can be asked,
 * for no one listens.  0 or -ENOMEM. */
int prompt_make_room(struct prompt *p);
void prompt_free(struct prompt *p);
void prompt_set_listener(struct prompt *p, const struct prompt_listener *l);

/* Before the chain is decided (not while a question is open): the
 * candidates of in, the scope's owner, whether grow would work. */
void prompt_prepare(struct prompt *p, struct scope *scope, const struct policy_input *in);
/* Whether the prepared question can be asked: none is open and someone it
 * concerns listens. */
bool prompt_available(const struct prompt *p);

/* Opens the prepared question; its report (fd -1: none) stays open until
 * prompt_close().  Returns how many clients were asked. */
int prompt_ask(struct prompt *p, const struct policy_decision *dec, uint64_t event_ns, uint64_t timeout_ms,
	       int report_fd, unsigned report_id, const struct oomkit__json *report);

/* The time left to answer the open question, in ms rounded up: 0 once its
 * deadline has come (or everyone asked declined). */
uint64_t prompt_remaining_ms(const struct prompt *p, uint64_t now);

/* Whether the open (or prepared) question concerns uid / shows it candidate c. */
bool prompt_concerns(const struct prompt *p, uid_t uid);
bool prompt_shows(const struct prompt *p, const struct prompt_candidate *c, uid_t uid);
/* Candidate pid as uid may see it; NULL if it is not one. */
const struct prompt_candidate *prompt_candidate(const struct prompt *p, pid_t pid, uid_t uid);
/* The text of the rule that placed c ("prefer = comm:x (line 3)"); "-" for none. */
const char *prompt_rule(const struct prompt *p, const struct prompt_candidate *c);

/* Everyone asked declined (or went away): the chain goes on at once. */
void prompt_declined(struct prompt *p);
/* Tells the clients concerned an outcome. */
void prompt_tell(struct prompt *p, const struct outcome *o);
/* Closes the question. */
void prompt_close(struct prompt *p);

#endif
