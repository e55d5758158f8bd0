/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match.c - parsing match expressions.  Each kind checks its value the way
 * the thing it is compared with can look: a comm is short, an exe is a path
 * in its one spelling, a uid is a number a user can have.
 */
#include "rules/match.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/users.h"
#include "common/value.h"

static const char *const kind_names[] = {
    [MATCH_COMM] = "comm", [MATCH_CMDLINE] = "cmdline", [MATCH_EXE] = "exe",
    [MATCH_UID] = "uid",   [MATCH_CGROUP] = "cgroup",
};

const char *match_kind_name(enum match_kind kind)
{
	if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return NULL;
	return kind_names[kind];
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int parse_comm(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	if (strlen(v) >= MATCH_COMM_MAX) {
		snprintf(why, why_len, "'%s' is longer than a process name (%d characters)", v,
			 MATCH_COMM_MAX - 1);
		return -EINVAL;
	}
	snprintf(ret->text, sizeof(ret->text), "%s", v);
	return 0;
}

static int parse_cmdline(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	if (strlen(v) >= sizeof(ret->text)) {
		snprintf(why, why_len, "glob too long (at most %zu characters)", sizeof(ret->text) - 1);
		return -EINVAL;
	}
	if (strspn(v, "*") == strlen(v)) {
		snprintf(why, why_len, "'%s' matches every process (write nothing, or a rule that chooses)",
			 v);
		return -EINVAL;
	}
	snprintf(ret->text, sizeof(ret->text), "%s", v);
	return 0;
}

static int parse_exe(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	int r = value_normalize_path(v, ret->text, sizeof(ret->text), why, why_len);

	if (r == 0 && strcmp(ret->text, "/") == 0) {
		snprintf(why, why_len, "'%s' is the root directory, not an executable", v);
		r = -EINVAL;
	}
	return r < 0 ? -EINVAL : 0;
}

static int parse_uid(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	uint64_t uid;

	/* (uid_t)-1 is no uid: the kernel's "unchanged". */
	if (value_parse_uint(v, UINT_MAX - 1, &uid) < 0) {
		snprintf(why, why_len, "bad uid '%s' (0 to %u)", v, UINT_MAX - 1);
		return -EINVAL;
	}
	ret->uid = (uid_t)uid;
	return 0;
}

/* Resolved to a uid as the configuration is read (users.h says where from). */
static int parse_user(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	struct users_entry u;

	if (users_by_name(v, &u) <= 0) {
		snprintf(why, why_len, "unknown user '%s'%s", v,
			 users_sealed() ? " (in /etc/passwd, or known to oomkitd since its start)" : "");
		return -EINVAL;
	}
	ret->kind = MATCH_UID;
	ret->uid = u.uid;
	return 0;
}

static int parse_cgroup(const char *v, struct match_expr *ret, char *why, size_t why_len)
{
	if (pattern_check(v, why, why_len) < 0)
		return -EINVAL;
	snprintf(ret->text, sizeof(ret->text), "%s", v);
	return 0;
}

static const struct {
	const char *name;
	enum match_kind kind;
	int (*parse)(const char *v, struct match_expr *ret, char *why, size_t why_len);
} kinds[] = {
    {"comm", MATCH_COMM, parse_comm}, {"cmdline", MATCH_CMDLINE, parse_cmdline},
    {"exe", MATCH_EXE, parse_exe},    {"uid", MATCH_UID, parse_uid},
    {"user", MATCH_UID, parse_user},  {"cgroup", MATCH_CGROUP, parse_cgroup},
};

int match_parse(const char *s, struct match_expr *ret, char *why, size_t why_len)
{
	struct match_expr e = {.kind = MATCH_COMM};
	const char *colon = strchr(s, ':'), *v = colon ? colon + 1 : s;
	size_t n = colon ? (size_t)(colon - s) : 0, k = 0;
	int r;

	/* Values go to logs and terminals: a control character is not echoed. */
	if (has_control(s)) {
		snprintf(why, why_len, "the expression has a control character");
		return -EINVAL;
	}
	if (*v == '\0') {
		snprintf(why, why_len, "'%s' has nothing to match", s);
		return -EINVAL;
	}
	if (!colon) {
		r = parse_comm(v, &e, why, why_len);
	} else {
		while (k < sizeof(kinds) / sizeof(kinds[0]) &&
		       (strlen(kinds[k].name) != n || strncmp(s, kinds[k].name, n) != 0))
			k++;
		if (k == sizeof(kinds) / sizeof(kinds[0])) {
			snprintf(why, why_len,
				 "unknown kind '%.*s' (comm, cmdline, exe, uid, user or cgroup)", (int)n, s);
			return -EINVAL;
		}
		e.kind = kinds[k].kind;
		r = kinds[k].parse(v, &e, why, why_len);
	}
	if (r < 0)
		return r;
	*ret = e;
	return 0;
}

void match_format(const struct match_expr *expr, char *buf, size_t len)
{
	if (expr->kind == MATCH_UID)
		snprintf(buf, len, "uid:%u", (unsigned)expr->uid);
	else
		snprintf(buf, len, "%s:%s", match_kind_name(expr->kind), expr->text);
}

unsigned match_needs(const struct match_expr *expr)
{
	return 1u << expr->kind;
}

bool match_glob(const char *glob, const char *text)
{
	const char *star = NULL, *resume = NULL;

	/* The last "*" seen takes one more character each time what follows
	 * it fails: earlier stars never need to, so no recursion is needed. */
	while (*text) {
		if (*glob == '*') {
			star = ++glob;
			resume = text;
		} else if (*glob == *text) {
			glob++;
			text++;
		} else if (star) {
			glob = star;
			text = ++resume;
		} else {
			return false;
		}
	}
	while (*glob == '*')
		glob++;
	return *glob == '\0';
}

bool match_self_named(const struct match_expr *expr)
{
	return expr->kind == MATCH_COMM || expr->kind == MATCH_CMDLINE || expr->kind == MATCH_EXE;
}

bool match_test(const struct match_expr *expr, const struct match_subject *s)
{
	switch (expr->kind) {
	case MATCH_COMM:
		return s->comm && strcmp(s->comm, expr->text) == 0;
	case MATCH_CMDLINE:
		return s->cmdline && match_glob(expr->text, s->cmdline);
	case MATCH_EXE:
		return s->exe && strcmp(s->exe, expr->text) == 0;
	case MATCH_UID:
		return s->uid == expr->uid;
	case MATCH_CGROUP:
		return s->cgroup && pattern_match_self_or_ancestor(expr->text, s->cgroup);
	}
	return false;
}
