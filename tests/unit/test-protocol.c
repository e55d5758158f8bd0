/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Table tests of the control socket's line splitting and answer reading. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "protocol.h"

static void test_parse(void **state)
{
	static const struct {
		const char *line;
		enum protocol_verb verb;
		size_t name_len;
		const char *arg;
	} cases[] = {
	    {"status", PROTOCOL_STATUS, 6, NULL},
	    {"ps web", PROTOCOL_PS, 2, "web"},
	    {"reports", PROTOCOL_REPORTS, 7, NULL},
	    {"report 12", PROTOCOL_REPORT, 6, "12"},
	    {"run web -- sleep 1", PROTOCOL_RUN, 3, "web -- sleep 1"},
	    {"prompt", PROTOCOL_PROMPT, 6, NULL},
	    {"answer 3 kill 42", PROTOCOL_ANSWER, 6, "3 kill 42"},
	    {"reload", PROTOCOL_RELOAD, 6, NULL},
	    {"reload ", PROTOCOL_RELOAD, 6, ""},
	    {"statu", PROTOCOL_UNKNOWN, 5, NULL},
	    {"statuss", PROTOCOL_UNKNOWN, 7, NULL},
	    {"", PROTOCOL_UNKNOWN, 0, NULL},
	    {" status", PROTOCOL_UNKNOWN, 0, "status"},
	    {"STATUS", PROTOCOL_UNKNOWN, 6, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct protocol_cmd cmd;

		assert_int_equal(protocol_parse(cases[i].line, strlen(cases[i].line), &cmd), 0);
		assert_int_equal(cmd.verb, cases[i].verb);
		assert_int_equal(cmd.name_len, cases[i].name_len);
		if (cases[i].arg)
			assert_string_equal(cmd.arg, cases[i].arg);
		else
			assert_null(cmd.arg);
	}
	struct protocol_cmd cmd = {.verb = PROTOCOL_RUN};
	assert_int_equal(protocol_parse("ps\0x", 4, &cmd), -EINVAL);
}

static void test_answer(void **state)
{
	struct protocol_answer a;

	(void)state;
	assert_int_equal(protocol_parse_answer("answer 3 kill 42", &a), 0);
	assert_int_equal(a.id, 3);
	assert_string_equal(a.what, "kill");
	assert_int_equal(a.pid, 42);
	assert_int_equal(a.n_fields, 3);
	assert_int_equal(protocol_parse_answer("answer 7 grow", &a), 0);
	assert_int_equal(a.id, 7);
	assert_string_equal(a.what, "grow");
	assert_int_equal(a.pid, 0);
	assert_int_equal(a.n_fields, 2);
	assert_int_equal(protocol_parse_answer("answer 7 averyveryverylongword", &a), 0);
	assert_int_equal(strlen(a.what), 15);
	a.id = 99;
	assert_int_equal(protocol_parse_answer("answer 7", &a), -EINVAL);
	assert_int_equal(a.id, 99);
	assert_int_equal(protocol_parse_answer("answer ", &a), -EINVAL);
	assert_int_equal(protocol_parse_answer("answer x kill 1", &a), -EINVAL);
	assert_int_equal(protocol_parse_answer("answered 1 kill", &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_answer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
