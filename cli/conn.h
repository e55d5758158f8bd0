/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * conn.h - the command line's connection to oomkitd's control socket: a
 * request out, frames in, in the wire protocol of common/protocol.h (linked
 * here, so both ends read and write it with the same code).  A record that
 * is not in the protocol's form is an error, never shown half-read.
 */
#ifndef OOMKIT_CLI_CONN_H
#define OOMKIT_CLI_CONN_H

#include <stddef.h>

#include "cli.h"
#include "common/protocol.h"

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	size_t used; /* the frame returned last ends here */
};

/* One frame, read: its status line, and its records (in place in the
 * conn's buffer, valid until the next conn_read()). */
struct reply {
	struct protocol_status status;
	struct protocol_reader rd;
};

/* Connects, sends req, reads the reply's status: 0 if it is "ok", else the
 * exit code, with what went wrong said (the daemon's error, or that it
 * cannot be reached) and c closed. */
int conn_request(const struct cli *cli, const struct protocol_request *req, struct conn *c,
		 struct reply *ret);

/* Sends one request on an open connection: 0 or -errno. */
int conn_send(struct conn *c, const struct protocol_request *req);

/* Reads the next frame (what follows it stays for the next call: a prompt
 * connection may get two in one read): 0, -EBADMSG if its status line is
 * not in the protocol's form, -ECONNRESET at the end, -errno. */
int conn_read(struct conn *c, struct reply *ret);

void conn_close(struct conn *c);

/* The next record of a reply, or NULL after the last; one that is not in
 * the protocol's form sets *ret_err to -EBADMSG and ends the reply. */
struct protocol_record *reply_next(struct reply *r, struct protocol_record *rec, int *ret_err);

/* Joins a reply's data records (report ID, explain) into one NUL-terminated
 * text, malloc'd into *ret: 0, -ENOMEM, or -EBADMSG for a malformed reply. */
int reply_data_text(struct reply *r, char **ret, size_t *ret_len);

/* Says the daemon's reply was not in the protocol's form; the exit code. */
int conn_malformed(const struct cli *cli);

#endif
