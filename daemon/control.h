/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control.h - the control socket: a unix stream socket speaking the line
 * protocol of protocol.h to `oomkit` (status, ps, reports, run, prompt and
 * its answers, reload).  Its descriptors are in the loop's epoll set; a
 * reload is asked of the loop; prompts reach its clients through the
 * listener it registers with prompt.c.
 */
#ifndef OOMKITD_CONTROL_H
#define OOMKITD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "chain.h"
#include "config.h"
#include "loop.h"
#include "oomkit.h"
#include "prompt.h"
#include "reports.h"
#include "scope.h"

#define CONTROL_MAX_CLIENTS 32

struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	bool prompt;   /* listens for prompts */
	bool asked;    /* was sent the open question and has not declined it */
	char user[32]; /* its uid's name, looked up when it first listens or answers */
	char in[512];
	size_t in_len;
	char *out;
	size_t out_len, out_cap;
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
	pid_t *pids; /* a buffer of max_pids for status and ps */
	size_t max_pids;
	/* Its own. */
	int source;
	int listen_fd;
	struct client clients[CONTROL_MAX_CLIENTS];
};

/* Binds the socket of cfg, joins the loop, and listens for prompt clients. */
int control_listen(struct control *ctl);
void control_configure(struct control *ctl, const struct config *cfg);
/* Drops every client and removes the socket. */
void control_close_all(struct control *ctl);

#endif
