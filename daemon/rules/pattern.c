/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pattern.c - cgroup patterns: their grammar and their matcher.  A "*" never
 * matches a "/", so the components of a pattern and of a path line up one
 * for one, and a pattern can only match cgroups at its own depth.
 */
#include "rules/pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The reason a component (n bytes at c) of a pattern is refused, or NULL. */
static const char *bad_component(const char *c, size_t n)
{
	if (n == 0)
		return "an empty component";
	if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
		return n == 1 ? "a '.' component" : "a '..' component";
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
			return "a control character";
		if (c[i] == '*' && i + 1 < n && c[i + 1] == '*')
			return "'**' ('*' matches within one component; nothing is recursive)";
	}
	return NULL;
}

int pattern_check(const char *pattern, char *why, size_t why_len)
{
	size_t len = strlen(pattern);

	if (len == 0) {
		snprintf(why, why_len, "an empty pattern would match the cgroup root");
		return -EINVAL;
	}
	if (len >= PATTERN_MAX) {
		snprintf(why, why_len, "pattern too long (at most %d characters)", PATTERN_MAX - 1);
		return -EINVAL;
	}
	if (pattern[0] == '/') {
		snprintf(why, why_len, "'%s' starts with '/': patterns are relative to the cgroup root",
			 pattern);
		return -EINVAL;
	}
	for (const char *c = pattern;;) {
		size_t n = strcspn(c, "/");
		const char *bad = bad_component(c, n);
		if (bad) {
			/* Control characters are not echoed: the message goes to logs and terminals. */
			if (strcmp(bad, "a control character") == 0)
				snprintf(why, why_len, "the pattern has a control character");
			else
				snprintf(why, why_len, "'%s' has %s", pattern, bad);
			return -EINVAL;
		}
		if (!c[n])
			return 0;
		c += n + 1;
	}
}

/* Whether p matches the n bytes at s. */
static bool match_n(const char *p, const char *s, size_t n)
{
	const char *star = NULL, *resume = NULL, *end = s + n;

	if (n == 0)
		return false;
	while (s < end) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p && *p == *s) {
			p++;
			s++;
		} else if (star && *resume != '/') {
			/* The last "*" takes one more character, never a "/": a
			 * "*" of an earlier component cannot grow past its "/"
			 * either, so going back only to the last one is enough. */
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

bool pattern_match(const char *pattern, const char *rel)
{
	return match_n(pattern, rel, strlen(rel));
}

bool pattern_match_self_or_ancestor(const char *pattern, const char *rel)
{
	size_t n = strlen(rel);

	for (;;) {
		if (match_n(pattern, rel, n))
			return true;
		while (n > 0 && rel[n - 1] != '/')
			n--;
		if (n == 0)
			return false;
		n--; /* the "/" */
	}
}

/* Whether the components p[0..n) and q[0..m) share a name.  reach[i][j]:
 * the first i bytes of p and the first j of q can spell the same text; a
 * "*" either ends or takes one more byte of what the other side spells. */
static bool components_meet(const char *p, size_t n, const char *q, size_t m)
{
	bool reach[PATTERN_MAX][PATTERN_MAX];

	for (size_t i = 0; i <= n; i++)
		memset(reach[i], 0, m + 1);
	reach[0][0] = true;
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (!reach[i][j])
				continue;
			bool ps = i < n && p[i] == '*', qs = j < m && q[j] == '*';
			if (ps)
				reach[i + 1][j] = true;
			if (ps && j < m)
				reach[i][j + 1] = true;
			if (qs)
				reach[i][j + 1] = true;
			if (qs && i < n)
				reach[i + 1][j] = true;
			if (!ps && !qs && i < n && j < m && p[i] == q[j])
				reach[i + 1][j + 1] = true;
		}
	return reach[n][m];
}

bool pattern_overlap(const char *a, const char *b)
{
	for (;;) {
		size_t n = strcspn(a, "/"), m = strcspn(b, "/");
		if (n >= PATTERN_MAX || m >= PATTERN_MAX || !components_meet(a, n, b, m))
			return false;
		if (!a[n] || !b[m])
			return !a[n] && !b[m];
		a += n + 1;
		b += m + 1;
	}
}
