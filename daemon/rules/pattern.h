/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pattern.h - cgroup patterns, as a [job] section's "cgroup =" writes them:
 * a path relative to the cgroup root, "system.slice/batch-*.service", where
 * "*" matches any run of characters within one path component (never a
 * "/").  Every other character stands for itself.  Pure functions: no I/O,
 * no allocation, so the daemon may match on any path it takes.
 */
#ifndef OOMKITD_PATTERN_H
#define OOMKITD_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#define PATTERN_MAX 256 /* a pattern, including the NUL */

/* Checks that pattern is one: not empty (that would be the root), relative
 * (no leading "/"), no empty component ("a//b", a trailing "/"), no "." or
 * ".." component, no "**" (which is no more than "*": nothing here is
 * recursive), no control character, shorter than PATTERN_MAX.  0, or -EINVAL
 * with the reason in why. */
int pattern_check(const char *pattern, char *why, size_t why_len);

/* Whether pattern matches the cgroup rel (relative to the root, in normal
 * form): component for component, the same number of them.  The root ("")
 * is never matched. */
bool pattern_match(const char *pattern, const char *rel);

/* Whether pattern matches rel or one of its ancestors (but not the root):
 * a pattern that does would take in the cgroup rel itself, e.g. the
 * daemon's own. */
bool pattern_match_self_or_ancestor(const char *pattern, const char *rel);

/* Whether some cgroup could match both patterns: the same number of
 * components, and each pair of components has a name in common. */
bool pattern_overlap(const char *a, const char *b);

#endif
