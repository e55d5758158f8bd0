/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol.h - the pure part of the control socket's line protocol: a line
 * received from a client split into its command and argument, and the
 * prompt's "answer ID WHAT [PID]" read into numbers.  No daemon state.
 */
#ifndef OOMKITD_PROTOCOL_H
#define OOMKITD_PROTOCOL_H

#include <stddef.h>

enum protocol_verb {
	PROTOCOL_UNKNOWN = 0,
	PROTOCOL_STATUS,
	PROTOCOL_PS,
	PROTOCOL_REPORTS,
	PROTOCOL_REPORT,
	PROTOCOL_RUN,
	PROTOCOL_PROMPT,
	PROTOCOL_ANSWER,
	PROTOCOL_RELOAD,
};

struct protocol_cmd {
	enum protocol_verb verb;
	size_t name_len; /* the command is line[0, name_len) */
	const char *arg; /* after the first blank, NUL-terminated as line is; NULL: none */
};

/* Splits line (len bytes, line[len] == '\0', no NUL before) at its first
 * space into command and argument.  Returns 0, or -EINVAL if line holds a
 * NUL before len; an unknown command is PROTOCOL_UNKNOWN, not an error. */
int protocol_parse(const char *line, size_t len, struct protocol_cmd *ret);

struct protocol_answer {
	unsigned id;
	char what[16]; /* "kill", "grow", "kernel" or anything else the client sent */
	int pid;       /* 0 unless given */
	int n_fields;  /* 2 or 3 */
};

/* Reads "answer ID WHAT [PID]" (the whole line).  Returns 0, or -EINVAL
 * when ID or WHAT is missing. */
int protocol_parse_answer(const char *line, struct protocol_answer *ret);

#endif
