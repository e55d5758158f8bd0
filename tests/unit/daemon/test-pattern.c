/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-pattern.c - cgroup patterns: which are refused and why (exact
 * messages), and which cgroups each one matches, with the hostile cases: a
 * "*" that would have to cross a "/", the root, depths that differ, stars
 * that must backtrack.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rules/pattern.h"

static void test_check(void **state)
{
	(void)state;
	static const struct {
		const char *pattern;
		const char *why; /* NULL: accepted */
	} cases[] = {
	    {"system.slice/postgresql.service", NULL},
	    {"system.slice/batch-*.service", NULL},
	    {"user.slice/user-*.slice/user@*.service/app.slice/app-*.scope", NULL},
	    {"kubepods.slice/kubepods-besteffort.slice/*", NULL},
	    {"*", NULL},
	    {"a*b*c", NULL},
	    {"...", NULL},
	    {".hidden/x", NULL},
	    {"a b/[c]?", NULL}, /* only '*' is special */
	    {"", "an empty pattern would match the cgroup root"},
	    {"/system.slice/x",
	     "'/system.slice/x' starts with '/': patterns are relative to the cgroup root"},
	    {"/", "'/' starts with '/': patterns are relative to the cgroup root"},
	    {"a//b", "'a//b' has an empty component"},
	    {"a/", "'a/' has an empty component"},
	    {"a/b/", "'a/b/' has an empty component"},
	    {".", "'.' has a '.' component"},
	    {"a/./b", "'a/./b' has a '.' component"},
	    {"..", "'..' has a '..' component"},
	    {"a/..", "'a/..' has a '..' component"},
	    {"a/../../etc", "'a/../../etc' has a '..' component"},
	    {"a/**", "'a/**' has '**' ('*' matches within one component; nothing is recursive)"},
	    {"x**y", "'x**y' has '**' ('*' matches within one component; nothing is recursive)"},
	    {"a\tb", "the pattern has a control character"},
	    {"a/\x1b]0;x\a", "the pattern has a control character"},
	    {"a\x7f", "the pattern has a control character"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[512] = "untouched";
		int r = pattern_check(cases[i].pattern, why, sizeof(why));
		if (!cases[i].why) {
			if (r != 0)
				fail_msg("'%s' refused: %s", cases[i].pattern, why);
			continue;
		}
		if (r != -EINVAL)
			fail_msg("'%s' accepted", cases[i].pattern);
		if (strcmp(why, cases[i].why) != 0)
			fail_msg("'%s':\nwanted: %s\ngot:    %s", cases[i].pattern, cases[i].why, why);
	}
}

static void test_too_long(void **state)
{
	(void)state;
	char p[PATTERN_MAX + 1], why[128];

	memset(p, 'a', sizeof(p) - 1);
	p[PATTERN_MAX - 1] = '\0';
	assert_int_equal(pattern_check(p, why, sizeof(why)), 0);
	p[PATTERN_MAX - 1] = 'a';
	p[PATTERN_MAX] = '\0';
	assert_int_equal(pattern_check(p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "pattern too long (at most 255 characters)");
}

static void test_match(void **state)
{
	(void)state;
	static const struct {
		const char *pattern, *rel;
		bool match;
	} cases[] = {
	    {"system.slice/postgresql.service", "system.slice/postgresql.service", true},
	    {"system.slice/postgresql.service", "system.slice/postgresql.servic", false},
	    {"system.slice/postgresql.service", "system.slice/postgresql.service/x", false},
	    {"system.slice/batch-*.service", "system.slice/batch-17.service", true},
	    {"system.slice/batch-*.service", "system.slice/batch-.service", true},
	    {"system.slice/batch-*.service", "system.slice/batch-17.service.d", false},
	    {"system.slice/batch-*.service", "system.slice/batch-1/x.service", false}, /* never across '/' */
	    {"system.slice/batch-*.service", "system.slice/batch-1.service/x.service", false},
	    {"user.slice/user-*.slice/user@*.service/app.slice/app-*.scope",
	     "user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox-123.scope", true},
	    {"user.slice/user-*.slice/user@*.service/app.slice/app-*.scope",
	     "user.slice/user-1000.slice/user@1000.service/app.slice", false},
	    {"kubepods.slice/kubepods-besteffort.slice/*",
	     "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice", true},
	    {"kubepods.slice/kubepods-besteffort.slice/*", "kubepods.slice/kubepods-besteffort.slice", false},
	    {"kubepods.slice/kubepods-besteffort.slice/*",
	     "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/c.scope", false},
	    {"*", "system.slice", true},
	    {"*", "system.slice/x", false},
	    {"*", "", false}, /* the root is never an instance */
	    {"*/*", "a/b", true},
	    {"*/*", "a", false},
	    {"a*b*c", "abc", true},
	    {"a*b*c", "aXbYc", true},
	    {"a*b*c", "abcbc", true}, /* the last star backtracks */
	    {"a*b*c", "abcbcd", false},
	    {"a*bc/d", "abcbc/d", true},
	    {"a*bc/d", "abcbcx/d", false},
	    {"a*/b*", "ax/by", true},
	    {"a*/b*", "a/x/by", false},
	    {"*x", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxy", false},
	    {"[c]?", "[c]?", true},
	    {"[c]?", "c?", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pattern_match(cases[i].pattern, cases[i].rel) != cases[i].match)
			fail_msg("'%s' on '%s': wanted %s", cases[i].pattern, cases[i].rel,
				 cases[i].match ? "a match" : "none");
}

/* A job may not adopt the daemon's own cgroup, nor an ancestor of it (that
 * would make the daemon a candidate of the job's policies). */
static void test_self_or_ancestor(void **state)
{
	(void)state;
	static const char self[] = "system.slice/oomkitd.service";
	static const struct {
		const char *pattern;
		bool match;
	} cases[] = {
	    {"system.slice/oomkitd.service", true},
	    {"system.slice/*", true},
	    {"system.slice/*.service", true},
	    {"*", true},
	    {"system.slice", true},
	    {"system.slice/oomkitd.service/x", false},
	    {"system.slice/*/x", false},
	    {"user.slice", false},
	    {"system.slice/oomkit*.socket", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pattern_match_self_or_ancestor(cases[i].pattern, self) != cases[i].match)
			fail_msg("'%s': wanted %s", cases[i].pattern, cases[i].match ? "a match" : "none");
	assert_false(pattern_match_self_or_ancestor("*", ""));
}

/* Patterns of two jobs that some cgroup could match both of. */
static void test_overlap(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		bool overlap;
	} cases[] = {
	    {"system.slice/*.service", "system.slice/postgresql.service", true},
	    {"system.slice/batch-*.service", "system.slice/*-17.service", true},
	    {"system.slice/batch-*.service", "system.slice/web-*.service", false},
	    {"system.slice/*.service", "system.slice/*.scope", false},
	    {"a*b", "*c*", true}, /* acb */
	    {"a*", "b*", false},
	    {"*a", "*b", false},
	    {"ab*", "*ba", true}, /* aba */
	    {"a*a", "aa", true},
	    {"a*a", "a", false},
	    {"*", "x", true},
	    {"x/*", "x", false}, /* depths differ */
	    {"x", "x/*", false},
	    {"k/*/p", "k/best/*", true},
	    {"k/*/p", "k/best/q", false},
	    {"user.slice/user-*.slice/session-*.scope", "user.slice/*/user@*.service", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (pattern_overlap(cases[i].a, cases[i].b) != cases[i].overlap)
			fail_msg("'%s' and '%s': wanted %s", cases[i].a, cases[i].b,
				 cases[i].overlap ? "an overlap" : "none");
		if (pattern_overlap(cases[i].b, cases[i].a) != cases[i].overlap)
			fail_msg("'%s' and '%s' (swapped): wanted %s", cases[i].b, cases[i].a,
				 cases[i].overlap ? "an overlap" : "none");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check),   cmocka_unit_test(test_too_long),
	    cmocka_unit_test(test_match),   cmocka_unit_test(test_self_or_ancestor),
	    cmocka_unit_test(test_overlap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
