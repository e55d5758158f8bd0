/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control.h - the control socket: a unix stream socket speaking the line
 * protocol of protocol.h to `oomkit` and `oomkit-agent` (status, ps,
 * reports, run, prompt and its answers, reload).  Its descriptors and its
 * timer are the loop's; a reload is asked of the loop; prompts reach its
 * clients through the listener it registers with prompt.c.
 *
 * What a client can cost the daemon is bounded by construction: each slot
 * has a fixed input and output buffer, allocated once with the slots; a
 * reply longer than the output buffer is produced record by record as the
 * client reads it, and nothing more is read from a client while output is
 * owed to it.  About 300 KiB for all 32 slots, whatever the clients send
 * (docs/protocol.md, "Bounds").
 */
#ifndef OOMKITD_CONTROL_H
#define OOMKITD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oom/chain.h"
#include "config/config.h"
#include "base/loop.h"
#include "oomkit.h"
#include "oom/prompt.h"
#include "common/protocol.h"
#include "report/reports.h"
#include "scope/scope.h"
#include "base/users.h"

#define CONTROL_MAX_CLIENTS 32
/* Slots only root may take: root's status, prompt and run always get in. */
#define CONTROL_ROOT_SLOTS 4
/* Connections one uid other than root may hold at once. */
#define CONTROL_SLOTS_PER_UID 4
#define CONTROL_OUT_MAX 8192
/* A client that neither completes a request nor reads for this long is
 * dropped (a prompt client waiting for a question is not idle). */
#define CONTROL_IDLE_MS 5000
/* The largest explain document; one is made at a time, for one client. */
#define CONTROL_EXPLAIN_MAX (1024 * 1024)

/* What was done about an OOM, kept for one client until it reads it. */
struct control_outcome {
	bool due, details, victim;
	unsigned id;
	pid_t victim_pid;
	uid_t victim_uid;
	uint64_t victim_bytes;
	char scope[CONFIG_NAME_MAX], action[32], by[64], victim_comm[64], victim_job[CONFIG_NAME_MAX];
	char result[256];
};

struct client {
	int fd; /* -1: a free slot */
	uid_t uid;
	pid_t pid;    /* SO_PEERCRED: the process that connected */
	int pidfd;    /* SO_PEERPIDFD: that same process; -1 where the kernel has none */
	pid_t sender; /* SCM_CREDENTIALS of the bytes now in in[]: their sender; -1: more than one */
	uid_t sender_uid;
	pid_t req_sender; /* the same, of the request being handled */
	uid_t req_sender_uid;
	bool prompt;		   /* listens for prompts */
	bool asked;		   /* was sent the open question and has not declined it */
	bool discarding;	   /* dropping the rest of an overlong request line */
	bool pumping;		   /* pump() is on this client: a nested one leaves it to it */
	bool run_pending;	   /* run: waiting for systemd to start the scope (seq names it) */
	int run_pidfd;		   /* the process it moves, checked alive once it is moved */
	char user[USERS_NAME_MAX]; /* its uid's name, looked up when it first listens or answers */
	uint64_t seq;		   /* accept order */
	uint64_t deadline_ns;
	uint32_t events; /* what the loop watches for it now */
	struct {	 /* the reply in progress; verb PROTOCOL_UNKNOWN: none */
		enum protocol_verb verb;
		int stage;
		uint64_t next; /* where it resumes: a job slot, a pid, a report id, a file offset */
		int fd;	       /* report: the file */
		bool own;      /* reports: only those that concern the client's uid */
		char job[PROTOCOL_NAME_MAX];
		char *text; /* explain: the document (malloc'd), sent from next */
		size_t text_len;
	} reply;
	struct { /* the question being sent, or due */
		unsigned id;
		bool due, head;
		unsigned next;
		unsigned queued; /* a newer question, sent once this one is ended */
	} question;
	struct control_outcome outcome;
	size_t in_len, out_len;
	/* PROTOCOL_REQUEST_MAX and CONTROL_OUT_MAX bytes, one allocation made
	 * when a connection takes the slot and freed when it leaves (off the
	 * OOM path; a prompt client's are there before any question it is
	 * sent), so an idle daemon does not hold 32 slots' buffers resident. */
	char *in;
	char *out;
};

struct control {
	/* Set by the caller before control_listen(). */
	oomkit_ctx *ctx;
	const struct config *cfg; /* socket (bound once), readonly_status */
	struct loop *loop;
	struct scopes *scopes;
	struct reports *reports;
	struct prompt *prompt;
	struct chain *chain;
	struct sdbus *sdbus; /* transient scopes for run on a systemd machine */
	pid_t *pids;	     /* a buffer of max_pids for status and ps */
	size_t max_pids;
	/* Its own, set up by control_listen(). */
	bool ready;
	int source;
	int listen_fd;
	int dir_fd; /* the socket's directory, checked once */
	char name[108];
	bool no_peer_pidfd; /* OOMKIT_TEST_NO_PEERPIDFD: the older kernels' path, for tests */
	uint64_t next_seq;
	struct loop_timer timer; /* the earliest client deadline */
	struct client *clients;	 /* CONTROL_MAX_CLIENTS */
};

/* Makes the socket (its directory made safe, see runlock.h), joins the loop,
 * and listens for prompt clients.  0 or -errno. */
int control_listen(struct control *ctl);
void control_configure(struct control *ctl, const struct config *cfg);
/* systemd's answer to run's scope request id (sdbus.h's on_done): the
 * client told; id 0 answers every one waiting. */
void control_run_done(struct control *ctl, uint64_t id, int result, const char *error);
/* Drops every client and removes the socket. */
void control_close_all(struct control *ctl);

#endif
