/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match.h - the match expressions of protect, prefer and avoid:
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
 * "comm:a:b" is the name "a:b".  Parsing, and testing an expression against
 * what was read of a process (match_test()): nothing here reads a process,
 * and nothing allocates, so the daemon tests rules on its OOM path.
 */
#ifndef OOMKITD_MATCH_H
#define OOMKITD_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules/pattern.h"

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

/* What an expression is tested against: one process as read by the daemon.
 * A field that could not be read is NULL (and matches nothing). */
struct match_subject {
	const char *comm;
	const char *cmdline; /* arguments joined by spaces, as oomkit_process_cmdline() gives it */
	const char *exe;     /* the executable's path, as /proc/PID/exe links to it */
	uid_t uid;	     /* real uid */
	const char *cgroup;  /* its memory cgroup, relative to the root */
	/* Its uid may have put it in that cgroup itself (its cgroup.procs is
	 * the uid's, or could not be read): a cgroup: protect rule does not
	 * cover it (rules.h). */
	bool cgroup_self_placed;
};

/* Which fields of a subject the kinds need: (1u << MATCH_CMDLINE) etc.  A
 * reader fetches only what a rule asks for. */
unsigned match_needs(const struct match_expr *expr);

/* Whether the expression tests what a process sets itself (comm, cmdline,
 * exe): a protect rule of such a kind shields only root's processes
 * (rules.h). */
bool match_self_named(const struct match_expr *expr);

/* Whether expr matches the subject: comm and exe exactly, cmdline by glob
 * over the whole line, uid by number, cgroup if the process's cgroup or one
 * of its ancestors matches the pattern. */
bool match_test(const struct match_expr *expr, const struct match_subject *s);

/* Whether text matches glob as a whole, where "*" stands for any run of
 * characters ('/' and spaces included) and every other character for
 * itself.  Linear backtracking: at most len(glob) * len(text) steps. */
bool match_glob(const char *glob, const char *text);

/* Parses one expression into *ret.  0, or -EINVAL with the reason in why. */
int match_parse(const char *s, struct match_expr *ret, char *why, size_t why_len);

/* "comm", "cmdline", "exe", "uid", "cgroup". */
const char *match_kind_name(enum match_kind kind);

/* Writes expr back as an expression ("uid:0" for a user:, which it was
 * resolved to), so that a log line says what the rule is. */
void match_format(const struct match_expr *expr, char *buf, size_t len);

#endif
