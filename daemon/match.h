/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match.h - the match expressions of protect, prefer and avoid (issue 17):
 * "KIND:VALUE", one per item of a comma list.
 *
 *   comm:NAME        a process name as /proc/PID/comm has it (at most 15 bytes)
 *   cmdline:GLOB     the command line, "*" matching any run of characters
 *   exe:PATH         the executable, an absolute path
 *   uid:N, user:NAME the real uid (a user name is looked up when parsed)
 *   cgroup:PATTERN   the process's cgroup, a cgroup pattern (pattern.h)
 *
 * A bare NAME, without a kind, is comm:NAME: "protect = sshd, postgres"
 * means what it always has.  Only the first ":" separates the kind, so
 * "comm:a:b" is the name "a:b".  Parsing only: nothing here reads a process.
 */
#ifndef OOMKITD_MATCH_H
#define OOMKITD_MATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "pattern.h"

#define MATCH_TEXT_MAX PATTERN_MAX /* the longest value, including the NUL */
#define MATCH_COMM_MAX 16	   /* as the kernel keeps it, including the NUL */

enum match_kind {
	MATCH_COMM = 0,
	MATCH_CMDLINE,
	MATCH_EXE,
	MATCH_UID, /* from uid: or user: */
	MATCH_CGROUP,
};

struct match_expr {
	enum match_kind kind;
	uid_t uid;		   /* MATCH_UID */
	char text[MATCH_TEXT_MAX]; /* every other kind: the name, glob, path or pattern */
};

/* Parses one expression into *ret.  0, or -EINVAL with the reason in why. */
int match_parse(const char *s, struct match_expr *ret, char *why, size_t why_len);

/* "comm", "cmdline", "exe", "uid", "cgroup". */
const char *match_kind_name(enum match_kind kind);

/* Writes expr back as an expression ("uid:0" for a user:, which it was
 * resolved to), so that a log line says what the rule is. */
void match_format(const struct match_expr *expr, char *buf, size_t len);

#endif
