/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table tests of the control socket's wire protocol (common/protocol.c):
 * escaping, requests and answers both ways, who may answer, and records
 * written and read back, with hostile names (newlines, "." lines, tabs,
 * terminal escapes, cut UTF-8).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "common/protocol.h"

/* Fields are escaped by lib/json.h's text escaper; the wire's reader takes
 * exactly what it writes, the deceptive code points included. */
static void test_escape(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"plain text", "plain text"},
	    {"a\tb\nc\r", "a\\x09b\\x0ac\\x0d"},
	    {"back\\slash", "back\\\\slash"},
	    {"\033]0;owned\a", "\\x1b]0;owned\\x07"},
	    {"del\x7f", "del\\x7f"},
	    {"caf\xc3\xa9", "caf\xc3\xa9"},		  /* valid UTF-8 is kept */
	    {"cut\xc3", "cut\\xc3"},			  /* a sequence cut by the kernel */
	    {"\xc0\xaf", "\\xc0\\xaf"},			  /* overlong */
	    {"\xed\xa0\x80", "\\xed\\xa0\\x80"},	  /* a surrogate */
	    {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
	    {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
	    {"\x80lone", "\\x80lone"},
	    {".", "."},
	    /* Valid UTF-8 that fools a terminal: escaped as the logs escape it. */
	    {"gpg\xe2\x80\xaetxt.exe", "gpg\\xe2\\x80\\xaetxt.exe"}, /* U+202E, right-to-left override */
	    {"\xe2\x81\xa6x", "\\xe2\\x81\\xa6x"},		     /* U+2066, an isolate */
	    {"\xc2\x9b"
	     "2J",
	     "\\xc2\\x9b2J"},						/* U+009B, C1 CSI */
	    {"\xc2\x85", "\\xc2\\x85"},					/* U+0085, next line */
	    {"\xe2\x80\xa8", "\\xe2\\x80\\xa8"},			/* U+2028, line separator */
	    {"\xef\xbb\xbf", "\\xef\\xbb\\xbf"},			/* U+FEFF */
	    {"<b>x</b> & <a href=\"u\">", "<b>x</b> & <a href=\"u\">"}, /* markup is the agent's */
	};
	char buf[64], copy[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in);
		assert_int_equal(oomkit__escape_text(buf, sizeof(buf), cases[i].in, n), strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
		snprintf(copy, sizeof(copy), "%s", buf);
		assert_int_equal(protocol_unescape(copy), 0);
		assert_string_equal(copy, cases[i].in);
	}
}

static void test_unescape_refuses(void **state)
{
	static const char *const bad[] = {
	    "raw\ttab",
	    "raw\nnewline",
	    "raw\033",
	    "\\",
	    "\\q",
	    "\\x4",
	    "\\xZZ",
	    "\\x0A",
	    "\\x41",
	    "\\x5c",
	    "\\x00",
	    "\\xc3\\xa9",
	    "raw\xc3",
	    "\x80",
	    "\\x20",
	    /* Raw where the escaper escapes, and the other way round. */
	    "raw\xe2\x80\xae",
	    "raw\xc2\x9b",
	    "\\xe2\x80\xae",
	    "\xe2\\x80\\xae",
	    "\\xf0\\x9f\\x98\\x80",
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		if (protocol_unescape(buf) != -EBADMSG)
			fail_msg("accepted: case %zu", i);
	}
	snprintf(buf, sizeof(buf), "\\xc3 ok");
	assert_int_equal(protocol_unescape(buf), 0);
	assert_string_equal(buf, "\xc3 ok");
	snprintf(buf, sizeof(buf), "\\xe2\\x80\\xae ok");
	assert_int_equal(protocol_unescape(buf), 0);
	assert_string_equal(buf, "\xe2\x80\xae ok");
}

static void test_requests(void **state)
{
	static const struct {
		const char *line;
		int r;
		enum protocol_verb verb;
		const char *job;
		unsigned id;
	} cases[] = {
	    {"status", 0, PROTOCOL_STATUS, "", 0},
	    {"status\r", 0, PROTOCOL_STATUS, "", 0},
	    {"ps", 0, PROTOCOL_PS, "", 0},
	    {"ps web", 0, PROTOCOL_PS, "web", 0},
	    {"reports", 0, PROTOCOL_REPORTS, "", 0},
	    {"report 12", 0, PROTOCOL_REPORT, "", 12},
	    {"run web", 0, PROTOCOL_RUN, "web", 0},
	    {"prompt", 0, PROTOCOL_PROMPT, "", 0},
	    {"reload", 0, PROTOCOL_RELOAD, "", 0},
	    {"explain", 0, PROTOCOL_EXPLAIN, "", 0},
	    {"explain web", 0, PROTOCOL_EXPLAIN, "web", 0},
	    {"explain web db", -EINVAL, 0, NULL, 0},
	    {"reload ", -EINVAL, 0, NULL, 0},
	    {"status now", -EINVAL, 0, NULL, 0},
	    {"ps web db", -EINVAL, 0, NULL, 0},
	    {"ps  web", -EINVAL, 0, NULL, 0},
	    {"run", -EINVAL, 0, NULL, 0},
	    {"run web -- sleep 1", -EINVAL, 0, NULL, 0},
	    {"report", -EINVAL, 0, NULL, 0},
	    {"report x", -EINVAL, 0, NULL, 0},
	    {"report -1", -EINVAL, 0, NULL, 0},
	    {"report 4294967296", -EINVAL, 0, NULL, 0},
	    {"report 007", -EINVAL, 0, NULL, 0},
	    {"run a-name-that-is-longer-than-sixty-three-bytes-which-no-job-may-have", -EINVAL, 0, NULL, 0},
	    {"statu", -EOPNOTSUPP, 0, NULL, 0},
	    {"STATUS", -EOPNOTSUPP, 0, NULL, 0},
	    {"", -EOPNOTSUPP, 0, NULL, 0},
	    {" status", -EOPNOTSUPP, 0, NULL, 0},
	    {"ps w\033b", -EBADMSG, 0, NULL, 0},
	    {"ps w\xc3\xa9", -EBADMSG, 0, NULL, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct protocol_request req = {.verb = PROTOCOL__VERBS};
		char buf[PROTOCOL_REQUEST_MAX];

		assert_int_equal(protocol_parse_request(cases[i].line, strlen(cases[i].line), &req),
				 cases[i].r);
		if (cases[i].r < 0) {
			assert_int_equal(req.verb, PROTOCOL__VERBS); /* untouched */
			continue;
		}
		assert_int_equal(req.verb, cases[i].verb);
		assert_string_equal(req.job, cases[i].job);
		assert_int_equal(req.id, cases[i].id);
		/* And back: the same line, without a "\r". */
		int n = protocol_format_request(&req, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(strncmp(buf, cases[i].line, (size_t)n - 1), 0);
		assert_int_equal(buf[n - 1], '\n');
	}
	struct protocol_request req;
	assert_int_equal(protocol_parse_request("ps\0x", 4, &req), -EBADMSG);
	assert_int_equal(protocol_verb_of("answer 1 x", 10), PROTOCOL_ANSWER);
	assert_string_equal(protocol_usage(PROTOCOL_REPORT), "report ID");
	assert_string_equal(protocol_usage(PROTOCOL_EXPLAIN), "explain [JOB]");
	req = (struct protocol_request){.verb = PROTOCOL_RUN, .job = "a b"};
	assert_int_equal(protocol_format_request(&req, (char[64]){0}, 64), -EINVAL);
	req = (struct protocol_request){.verb = PROTOCOL_RUN};
	assert_int_equal(protocol_format_request(&req, (char[64]){0}, 64), -EINVAL);
	req = (struct protocol_request){.verb = PROTOCOL_STATUS};
	assert_int_equal(protocol_format_request(&req, (char[7]){0}, 7), -ENOBUFS);
}

static void test_answers(void **state)
{
	static const struct {
		const char *line;
		int r;
		unsigned id;
		enum protocol_choice choice;
		int pid;
	} cases[] = {
	    {"answer 3 kill 42", 0, 3, PROTOCOL_CHOICE_KILL, 42},
	    {"answer 7 grow", 0, 7, PROTOCOL_CHOICE_GROW, 0},
	    {"answer 7 kernel", 0, 7, PROTOCOL_CHOICE_KERNEL, 0},
	    {"answer 7", -EINVAL, 0, 0, 0},
	    {"answer ", -EINVAL, 0, 0, 0},
	    {"answer x kill 1", -EINVAL, 0, 0, 0},
	    {"answer 1 kill", -EINVAL, 0, 0, 0},
	    {"answer 1 kill 0", -EINVAL, 0, 0, 0},
	    {"answer 1 kill -5", -EINVAL, 0, 0, 0},
	    {"answer 1 kill 2147483648", -EINVAL, 0, 0, 0},
	    {"answer 1 kill 42 43", -EINVAL, 0, 0, 0},
	    {"answer 1 grow 42", -EINVAL, 0, 0, 0},
	    {"answer 1 averyveryverylongword", -EINVAL, 0, 0, 0},
	    {"answered 1 kill", -EOPNOTSUPP, 0, 0, 0},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct protocol_request req = {0};
		char buf[64];

		assert_int_equal(protocol_parse_request(cases[i].line, strlen(cases[i].line), &req),
				 cases[i].r);
		if (cases[i].r < 0)
			continue;
		assert_int_equal(req.answer.id, cases[i].id);
		assert_int_equal(req.answer.choice, cases[i].choice);
		assert_int_equal(req.answer.pid, cases[i].pid);
		assert_int_equal(protocol_format_answer(&req.answer, buf, sizeof(buf)),
				 strlen(cases[i].line) - strlen("answer "));
		assert_string_equal(buf, cases[i].line + strlen("answer "));
	}
	struct protocol_answer a = {.id = 1, .choice = PROTOCOL_CHOICE_KILL};
	assert_int_equal(protocol_format_answer(&a, (char[32]){0}, 32), -EINVAL); /* no pid */
	a = (struct protocol_answer){.id = 1, .choice = PROTOCOL_CHOICE_GROW | PROTOCOL_CHOICE_KERNEL};
	assert_int_equal(protocol_format_answer(&a, (char[32]){0}, 32), -EINVAL);
}

/* Writes records into a buffer, then reads the frame back. */
static void test_records_round_trip(void **state)
{
	static char out[16384];
	struct protocol_buf b = {.data = out, .cap = sizeof(out)};
	const struct protocol_machine m = {.cgroup = "oomkit",
					   .usage_bytes = 1 << 20,
					   .limit_bytes = UINT64_MAX,
					   .under_oom = true,
					   .ooms = 3,
					   .kills = 2,
					   .last_action = "killed 42 (hog)\n.\nerror forged"};
	const struct protocol_job j = {.name = "web",
				       .priority = 900,
				       .usage_bytes = 5,
				       .limit_bytes = 64 << 20,
				       .limit_max_bytes = UINT64_MAX,
				       .expect_bytes = 0,
				       .processes = 4,
				       .has_owner = true,
				       .owner = 1000,
				       .chain = "grow, kernel",
				       .last_action = ""};
	const struct protocol_proc p = {.pid = 42,
					.job = "-",
					.rss_bytes = 4096,
					.swap_bytes = 0,
					.oom_score_adj = -1000,
					.uid = 65534,
					.comm = "a\tb\n.",
					.cmdline = "\033]0;pwned\a x\\y"};
	const struct protocol_report rep = {.id = 7,
					    .scope = "machine",
					    .bytes = 1234,
					    .time_ms = 1700000000042,
					    .action = "kill",
					    .victim_pid = 42,
					    .reason = "largest\tprocess",
					    .instance = "batch-\n.17.service"};
	const struct protocol_question q = {.id = 7,
					    .scope = "web",
					    .timeout_ms = 1000,
					    .has_usage = true,
					    .usage_bytes = 48 << 20,
					    .limit_bytes = UINT64_MAX};
	const struct protocol_candidate c = {.pid = 43,
					     .job = "web",
					     .priority = 900,
					     .rss_bytes = 1 << 30,
					     .comm = "\n.\n",
					     .uid = 1000,
					     .place = "prefer",
					     .rule = "prefer = cmdline:*\t--type=renderer* (line 3)"};
	const char data[] = "{\"a\":\n.\n\"b\"}\n";

	(void)state;
	assert_int_equal(protocol_put_ok(&b), 0);
	assert_int_equal(protocol_put_machine(&b, &m), 0);
	assert_int_equal(protocol_put_job(&b, &j), 0);
	assert_int_equal(protocol_put_proc(&b, &p), 0);
	assert_int_equal(protocol_put_report(&b, &rep), 0);
	assert_int_equal(protocol_put_data(&b, data, sizeof(data) - 1), sizeof(data) - 1);
	assert_int_equal(protocol_put_text(&b, "done\n."), 0);
	assert_int_equal(protocol_put_end(&b), 0);
	size_t first = b.len;
	assert_int_equal(protocol_put_question(&b, &q), 0);
	assert_int_equal(protocol_put_candidate(&b, &c), 0);
	assert_int_equal(protocol_put_choices(&b, PROTOCOL_CHOICE_KILL | PROTOCOL_CHOICE_KERNEL), 0);
	assert_int_equal(protocol_put_end(&b), 0);
	size_t second = b.len;
	assert_int_equal(protocol_put_error(&b, "no job \033[2J\n."), 0);
	assert_int_equal(protocol_put_end(&b), 0);

	/* Exactly three frames: no name ended one early. */
	assert_int_equal(protocol_frame_end(out, b.len), first);
	assert_int_equal(protocol_frame_end(out + first, b.len - first), second - first);
	assert_int_equal(protocol_frame_end(out + second, b.len - second), b.len - second);
	assert_int_equal(protocol_frame_end(out, first - 1), 0);

	struct protocol_reader rd;
	struct protocol_status st;
	struct protocol_record r;
	protocol_reader_init(&rd, out, first);
	assert_int_equal(protocol_parse_status(protocol_next_line(&rd), &st), 0);
	assert_int_equal(st.kind, PROTOCOL_OK);

	struct protocol_machine m2;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_machine(&r, &m2), 0);
	assert_string_equal(m2.cgroup, m.cgroup);
	assert_true(m2.limit_bytes == UINT64_MAX && m2.under_oom && m2.ooms == 3 && m2.kills == 2);
	assert_string_equal(m2.last_action, m.last_action);

	struct protocol_job j2;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_job(&r, &j2), 0);
	assert_string_equal(j2.name, "web");
	assert_true(j2.priority == 900 && j2.limit_bytes == 64 << 20 && j2.limit_max_bytes == UINT64_MAX);
	assert_true(j2.has_owner && j2.owner == 1000 && j2.processes == 4);
	assert_string_equal(j2.chain, j.chain);

	struct protocol_proc p2;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_proc(&r, &p2), 0);
	assert_true(p2.pid == 42 && p2.oom_score_adj == -1000 && p2.uid == 65534);
	assert_string_equal(p2.comm, p.comm);
	assert_string_equal(p2.cmdline, p.cmdline);

	struct protocol_report rep2;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_report(&r, &rep2), 0);
	assert_true(rep2.id == 7 && rep2.time_ms == 1700000000042 && rep2.victim_pid == 42);
	assert_string_equal(rep2.reason, rep.reason);
	assert_string_equal(rep2.instance, rep.instance);
	/* A job's report ("-"), and one from a daemon before instances: none. */
	char job_rep[] = "report\t8\tweb\t10\t1.000\tkill\t5\tr\t-";
	char old_rep[] = "report\t9\tweb\t10\t1.000\tkill\t5\tr";
	struct protocol_record r_rep;
	assert_int_equal(protocol_parse_record(job_rep, &r_rep), 0);
	assert_int_equal(protocol_parse_report(&r_rep, &rep2), 0);
	assert_true(rep2.id == 8 && rep2.instance == NULL);
	assert_int_equal(protocol_parse_record(old_rep, &r_rep), 0);
	assert_int_equal(protocol_parse_report(&r_rep, &rep2), 0);
	assert_true(rep2.id == 9 && rep2.victim_pid == 5 && rep2.instance == NULL);

	const char *chunk, *text;
	size_t chunk_len;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_data(&r, &chunk, &chunk_len), 0);
	assert_int_equal(chunk_len, sizeof(data) - 1);
	assert_memory_equal(chunk, data, chunk_len);

	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_text(&r, &text), 0);
	assert_string_equal(text, "done\n.");
	assert_null(protocol_next_line(&rd));

	protocol_reader_init(&rd, out + first, second - first);
	assert_int_equal(protocol_parse_status(protocol_next_line(&rd), &st), 0);
	assert_int_equal(st.kind, PROTOCOL_QUESTION);
	assert_true(st.question.id == 7 && st.question.timeout_ms == 1000);
	assert_string_equal(st.question.scope, "web");
	assert_true(st.question.has_usage && st.question.usage_bytes == 48 << 20 &&
		    st.question.limit_bytes == UINT64_MAX);
	struct protocol_candidate c2;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_candidate(&r, &c2), 0);
	assert_true(c2.pid == 43 && c2.rss_bytes == 1 << 30 && c2.uid == 1000);
	assert_string_equal(c2.comm, c.comm);
	assert_string_equal(c2.place, "prefer");
	assert_string_equal(c2.rule, c.rule);
	/* A daemon from before the rules: placed by none. */
	char old[] = "candidate\t44\tweb\t500\t4096\tx\t0";
	struct protocol_record r_old;
	assert_int_equal(protocol_parse_record(old, &r_old), 0);
	assert_int_equal(protocol_parse_candidate(&r_old, &c2), 0);
	assert_true(c2.pid == 44 && strcmp(c2.place, "none") == 0 && strcmp(c2.rule, "-") == 0);
	unsigned choices;
	assert_int_equal(protocol_parse_record(protocol_next_line(&rd), &r), 0);
	assert_int_equal(protocol_parse_choices(&r, &choices), 0);
	assert_int_equal(choices, PROTOCOL_CHOICE_KILL | PROTOCOL_CHOICE_KERNEL);
	assert_null(protocol_next_line(&rd));

	protocol_reader_init(&rd, out + second, b.len - second);
	assert_int_equal(protocol_parse_status(protocol_next_line(&rd), &st), 0);
	assert_int_equal(st.kind, PROTOCOL_ERROR);
	assert_string_equal(st.message, "no job \033[2J\n.");
}

/* A line of text that starts with "." is stuffed, and read back whole. */
static void test_dot_stuffing(void **state)
{
	char frame[] = "ok\n..hidden\n...\n.\nafter\n";
	struct protocol_reader rd;

	(void)state;
	assert_int_equal(protocol_frame_end(frame, strlen(frame)), strlen("ok\n..hidden\n...\n.\n"));
	protocol_reader_init(&rd, frame, protocol_frame_end(frame, strlen(frame)));
	assert_string_equal(protocol_next_line(&rd), "ok");
	assert_string_equal(protocol_next_line(&rd), ".hidden");
	assert_string_equal(protocol_next_line(&rd), "..");
	assert_null(protocol_next_line(&rd));
	assert_null(protocol_next_line(&rd));
}

/* Whole lines or nothing; strings cut to their bound so a record always fits. */
static void test_bounds(void **state)
{
	char small[8], big[8192], name[3000];
	struct protocol_buf b = {.data = small, .cap = sizeof(small)};
	const struct protocol_proc p = {.pid = 1, .job = "j", .comm = "c", .cmdline = "x"};

	(void)state;
	assert_int_equal(protocol_put_ok(&b), 0);
	assert_int_equal(b.len, 3);
	assert_int_equal(protocol_put_proc(&b, &p), -ENOBUFS);
	assert_int_equal(b.len, 3);
	assert_int_equal(protocol_put_end(&b), 0);
	assert_int_equal(protocol_put_end(&b), 0);
	assert_int_equal(protocol_put_end(&b), -ENOBUFS);
	assert_int_equal(b.len, 7);

	/* Every byte escaped four times over, in every string field. */
	memset(name, '\033', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	b = (struct protocol_buf){.data = big, .cap = sizeof(big)};
	const struct protocol_machine m = {.cgroup = name, .last_action = name};
	assert_int_equal(protocol_put_machine(&b, &m), 0);
	assert_true(b.len <= PROTOCOL_RECORD_MAX);
	const struct protocol_job j = {.name = name, .chain = name, .last_action = name};
	b.len = 0;
	assert_int_equal(protocol_put_job(&b, &j), 0);
	assert_true(b.len <= PROTOCOL_RECORD_MAX);
	const struct protocol_proc hp = {.job = name, .comm = name, .cmdline = name};
	b.len = 0;
	assert_int_equal(protocol_put_proc(&b, &hp), 0);
	assert_true(b.len <= PROTOCOL_RECORD_MAX);
	b.len = 0;
	assert_int_equal(protocol_put_data(&b, name, strlen(name)), PROTOCOL_DATA_CHUNK);
	assert_true(b.len <= PROTOCOL_RECORD_MAX);
	/* A cut never leaves half a UTF-8 sequence. */
	char u[300];
	memset(u, 'a', sizeof(u));
	memcpy(u + 255, "\xc3\xa9", 2);
	u[sizeof(u) - 1] = '\0';
	const struct protocol_candidate c = {.pid = 1, .job = "j", .comm = u + 240};
	b.len = 0;
	assert_int_equal(protocol_put_candidate(&b, &c), 0);
	big[b.len] = '\0';
	assert_non_null(strstr(big, "\taaaaaaaaaaaaaaa\t")); /* 15 bytes: the é cut in two is left out */
	/* NUL never goes into a field: data stops before one. */
	b.len = 0;
	assert_int_equal(protocol_put_data(&b, "ab\0cd", 5), 2);
	assert_int_equal(protocol_put_data(&b, "\0cd", 3), -EINVAL);
}

static void test_parse_refuses(void **state)
{
	static const char *const bad_status[] = {
	    "", "OK", "ok ", "error", "error \\q", "oom\t1\tweb", "oom\tx\tweb\t1", "candidate\t1"};
	static const char *const bad_proc[] = {
	    "proc\t0\t-\t1\t1\t0\t0\tc\tx",    "proc\t1\t-\t1\t1\t0\t-1\tc\tx",
	    "proc\t1\t-\t1\t1\t-0\t0\tc\tx",   "proc\t1\t-\t1\t1\t0\t0\tc",
	    "job\t1\t-\t1\t1\t0\t0\tc\tx",     "proc\t1\t-\t+1\t1\t0\t0\tc\tx",
	    "proc\t1\t-\t1\t1\t0\t0\tc\t\\x0", "proc\t1\t-\t18446744073709551615\t1\t0\t0\tc\tx",
	};
	char line[128];
	struct protocol_status st;
	struct protocol_record r;
	struct protocol_proc p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_status) / sizeof(bad_status[0]); i++) {
		snprintf(line, sizeof(line), "%s", bad_status[i]);
		assert_int_equal(protocol_parse_status(line, &st), -EBADMSG);
	}
	for (size_t i = 0; i < sizeof(bad_proc) / sizeof(bad_proc[0]); i++) {
		snprintf(line, sizeof(line), "%s", bad_proc[i]);
		int rr = protocol_parse_record(line, &r);
		assert_true(rr == -EBADMSG || protocol_parse_proc(&r, &p) == -EBADMSG);
	}
	/* Later versions may add fields: they are ignored. */
	snprintf(line, sizeof(line), "proc\t1\t-\t1\t1\t0\t0\tc\tx\tnew");
	assert_int_equal(protocol_parse_record(line, &r), 0);
	assert_int_equal(protocol_parse_proc(&r, &p), 0);
	/* Too many fields for a record. */
	snprintf(line, sizeof(line), "a\tb\tc\td\te\tf\tg\th\ti\tj\tk\tl\tm\tn\to\tp\tq");
	assert_int_equal(protocol_parse_record(line, &r), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_unescape_refuses),
	    cmocka_unit_test(test_requests),
	    cmocka_unit_test(test_answers),
	    cmocka_unit_test(test_records_round_trip),
	    cmocka_unit_test(test_dot_stuffing),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_parse_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
