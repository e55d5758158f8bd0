/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-match.c - match expressions: each kind with good values
 * and hostile ones, and the exact reason for each refusal; the glob, and
 * each kind tested against processes.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rules/match.h"

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		const char *formatted; /* NULL: refused */
		const char *why;
	} cases[] = {
	    {"sshd", "comm:sshd", NULL},
	    {"comm:postgres", "comm:postgres", NULL},
	    {"comm:a:b", "comm:a:b", NULL}, /* only the first ':' separates the kind */
	    {"comm:123456789012345", "comm:123456789012345", NULL},
	    {"comm:kworker/0:1", "comm:kworker/0:1", NULL},
	    {"cmdline:*chrome*--type=renderer*", "cmdline:*chrome*--type=renderer*", NULL},
	    {"cmdline:/usr/bin/python3 -m http.server", "cmdline:/usr/bin/python3 -m http.server", NULL},
	    {"exe:/usr/lib/postgresql/15/bin/postgres", "exe:/usr/lib/postgresql/15/bin/postgres", NULL},
	    {"exe://usr//bin/sshd/", "exe:/usr/bin/sshd", NULL},
	    {"uid:0", "uid:0", NULL},
	    {"uid:4294967294", "uid:4294967294", NULL},
	    {"user:root", "uid:0", NULL},
	    {"cgroup:system.slice/*.service", "cgroup:system.slice/*.service", NULL},
	    {"1234567890123456", NULL, "'1234567890123456' is longer than a process name (15 characters)"},
	    {"comm:1234567890123456", NULL,
	     "'1234567890123456' is longer than a process name (15 characters)"},
	    {"comm:", NULL, "'comm:' has nothing to match"},
	    {"cmdline:", NULL, "'cmdline:' has nothing to match"},
	    {":x", NULL, "unknown kind '' (comm, cmdline, exe, uid, user or cgroup)"},
	    {"kworker:1", NULL, "unknown kind 'kworker' (comm, cmdline, exe, uid, user or cgroup)"},
	    {"Comm:sshd", NULL, "unknown kind 'Comm' (comm, cmdline, exe, uid, user or cgroup)"},
	    {"pid:1", NULL, "unknown kind 'pid' (comm, cmdline, exe, uid, user or cgroup)"},
	    {"cmdline:*", NULL, "'*' matches every process (write nothing, or a rule that chooses)"},
	    {"cmdline:***", NULL, "'***' matches every process (write nothing, or a rule that chooses)"},
	    {"exe:sshd", NULL, "'sshd' is not an absolute path"},
	    {"exe:/usr/bin/../bin/sshd", NULL, "'/usr/bin/../bin/sshd' has a '..' component"},
	    {"exe:/", NULL, "'/' is the root directory, not an executable"},
	    {"uid:-1", NULL, "bad uid '-1' (0 to 4294967294)"},
	    {"uid:4294967295", NULL, "bad uid '4294967295' (0 to 4294967294)"},
	    {"uid:0x10", NULL, "bad uid '0x10' (0 to 4294967294)"},
	    {"uid:root", NULL, "bad uid 'root' (0 to 4294967294)"},
	    {"user:no-such-user-here", NULL, "unknown user 'no-such-user-here'"},
	    {"cgroup:/system.slice", NULL,
	     "'/system.slice' starts with '/': patterns are relative to the cgroup root"},
	    {"cgroup:a/../b", NULL, "'a/../b' has a '..' component"},
	    {"comm:a\tb", NULL, "the expression has a control character"},
	    {"cmdline:\x1b[2J", NULL, "the expression has a control character"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct match_expr e, before;
		char why[512] = "", text[512];
		int r;

		memset(&e, 0x5a, sizeof(e));
		before = e;
		r = match_parse(cases[i].s, &e, why, sizeof(why));
		if (cases[i].formatted) {
			if (r != 0)
				fail_msg("'%s' refused: %s", cases[i].s, why);
			match_format(&e, text, sizeof(text));
			if (strcmp(text, cases[i].formatted) != 0)
				fail_msg("'%s' read as '%s', wanted '%s'", cases[i].s, text,
					 cases[i].formatted);
			continue;
		}
		if (r != -EINVAL)
			fail_msg("'%s' accepted", cases[i].s);
		if (strcmp(why, cases[i].why) != 0)
			fail_msg("'%s':\nwanted: %s\ngot:    %s", cases[i].s, cases[i].why, why);
		assert_memory_equal(&e, &before, sizeof(e));
	}
}

static void test_kinds(void **state)
{
	(void)state;
	struct match_expr e;
	char why[128];

	assert_int_equal(match_parse("user:root", &e, why, sizeof(why)), 0);
	assert_int_equal(e.kind, MATCH_UID);
	assert_int_equal(e.uid, 0);
	assert_int_equal(match_parse("uid:1000", &e, why, sizeof(why)), 0);
	assert_int_equal(e.kind, MATCH_UID);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(match_parse("postgres", &e, why, sizeof(why)), 0);
	assert_int_equal(e.kind, MATCH_COMM);
	assert_string_equal(e.text, "postgres");
	assert_int_equal(match_parse("cgroup:a/*", &e, why, sizeof(why)), 0);
	assert_int_equal(e.kind, MATCH_CGROUP);
	assert_string_equal(match_kind_name(MATCH_CMDLINE), "cmdline");
	assert_null(match_kind_name((enum match_kind)99));
}

static void test_glob(void **state)
{
	(void)state;
	static const struct {
		const char *glob, *text;
		bool match;
	} cases[] = {
	    {"abc", "abc", true},
	    {"abc", "abcd", false},
	    {"abc", "ab", false},
	    {"*", "", true},
	    {"a*", "a", true},
	    {"*a", "ba", true},
	    {"*a", "ab", false},
	    {"*chrome*--type=renderer*", "/opt/google/chrome/chrome --type=renderer --lang=en", true},
	    {"*chrome*--type=renderer*", "/opt/google/chrome/chrome --type=gpu-process", false},
	    {"*chrome*--type=renderer*", "--type=renderer chrome", false}, /* order matters */
	    {"a*b*c", "aXbYc", true},
	    {"a*b*c", "aXbYcZ", false},
	    {"a*b*c", "abcbc", true},
	    {"a**b", "ab", true},
	    {"*aab", "aaaab", true}, /* the star must give back what it took */
	    {"*/bin/*", "/usr/bin/python3", true},
	    {"python3 -m *", "python3 -m http.server 8000", true},
	    {"", "", true},
	    {"", "x", false},
	    {"x", "", false},
	    /* "?" and "[" stand for themselves. */
	    {"a?c", "abc", false},
	    {"a?c", "a?c", true},
	    {"[a]", "a", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (match_glob(cases[i].glob, cases[i].text) != cases[i].match)
			fail_msg("'%s' on '%s': wanted %s", cases[i].glob, cases[i].text,
				 cases[i].match ? "a match" : "none");
}

/* A long text against a glob of many stars ends in linear steps, not
 * exponential ones (the test would not end otherwise). */
static void test_glob_hostile(void **state)
{
	(void)state;
	char text[4096], glob[256];

	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	for (size_t i = 0; i + 2 < sizeof(glob); i += 2) {
		glob[i] = '*';
		glob[i + 1] = 'a';
	}
	glob[sizeof(glob) - 2] = 'b';
	glob[sizeof(glob) - 1] = '\0';
	assert_false(match_glob(glob, text));
}

static void test_test(void **state)
{
	(void)state;
	const struct match_subject pg = {.comm = "postgres",
					 .cmdline = "/usr/lib/postgresql/15/bin/postgres -D /var/lib/pg",
					 .exe = "/usr/lib/postgresql/15/bin/postgres",
					 .uid = 108,
					 .cgroup = "system.slice/postgresql@15-main.service"};
	const struct match_subject unread = {.comm = "x", .uid = 0}; /* no cmdline, exe, cgroup */
	static const struct {
		const char *expr;
		bool pg, unread;
	} cases[] = {
	    {"postgres", true, false},
	    {"comm:postgre", false, false}, /* whole names only */
	    {"comm:x", false, true},
	    {"cmdline:*postgres -D *", true, false},
	    {"cmdline:postgres*", false, false}, /* the whole line: it starts with the path */
	    {"cmdline:*x*", false, false},	 /* an unread line matches nothing */
	    {"exe:/usr/lib/postgresql/15/bin/postgres", true, false},
	    {"exe:/usr/lib/postgresql/15/bin", false, false},
	    {"uid:108", true, false},
	    {"uid:0", false, true},
	    {"user:root", false, true},
	    {"cgroup:system.slice/postgresql@*.service", true, false},
	    {"cgroup:system.slice", true, false}, /* an ancestor */
	    {"cgroup:system.slice/post*", true, false},
	    {"cgroup:user.slice", false, false},
	    {"cgroup:system.slice/postgresql@15-main.service/x", false, false}, /* a descendant is not */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct match_expr e;
		char why[256];
		if (match_parse(cases[i].expr, &e, why, sizeof(why)) != 0)
			fail_msg("'%s' refused: %s", cases[i].expr, why);
		if (match_test(&e, &pg) != cases[i].pg)
			fail_msg("'%s' on postgres: wanted %s", cases[i].expr,
				 cases[i].pg ? "a match" : "none");
		if (match_test(&e, &unread) != cases[i].unread)
			fail_msg("'%s' on the unread: wanted %s", cases[i].expr,
				 cases[i].unread ? "a match" : "none");
		assert_int_equal(match_needs(&e), 1u << e.kind);
		/* Whether the process put itself in its cgroup changes which
		 * protect rules apply (rules.h), never what an expression matches. */
		struct match_subject self = pg;
		self.cgroup_self_placed = true;
		assert_int_equal(match_test(&e, &self), cases[i].pg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),	 cmocka_unit_test(test_kinds), cmocka_unit_test(test_glob),
	    cmocka_unit_test(test_glob_hostile), cmocka_unit_test(test_test),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
