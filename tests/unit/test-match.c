/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-match.c - match expressions (issue 17): each kind with good values
 * and hostile ones, and the exact reason for each refusal.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "match.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
