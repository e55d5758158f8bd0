/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-json.c - the JSON writer and the text escaper (lib/json.c) with
 * tables of hostile input: control bytes, a comm cut by the kernel in the
 * middle of a UTF-8 sequence, overlong forms and surrogates, terminal
 * escapes, C1 controls and direction overrides; structure (commas, nesting,
 * too deep, closed too often); a buffer too small; a write that fails or
 * makes no progress (never a spin).
 */
#include "unit.h"
#include "../../helpers/jsoncheck.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "json.h"

static void test_strings(void **state)
{
	(void)state;
	static const struct {
		const char *name, *in, *want;
	} rows[] = {
	    {"ascii", "web-1", "\"web-1\""},
	    {"quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\""},
	    {"newline tab cr", "a\nb\tc\rd", "\"a\\nb\\tc\\rd\""},
	    {"escape and bell", "\x1b]0;x\x07", "\"\\u001b]0;x\\u0007\""},
	    {"del", "\x7f", "\"\\u007f\""},
	    {"valid utf-8 kept", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	     "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""},
	    {"cut mid-sequence", "ab\xe2\x82", "\"ab\\u00e2\\u0082\""},
	    {"overlong slash", "\xc0\xaf", "\"\\u00c0\\u00af\""},
	    {"surrogate", "\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""},
	    {"above U+10FFFF", "\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\""},
	    {"lone continuation", "\x80", "\"\\u0080\""},
	    {"ff", "\xff", "\"\\u00ff\""},
	    /* Valid UTF-8 that fools a terminal or a reader, as the text escaper sees it. */
	    {"right-to-left override", "gpg\xe2\x80\xaetxt", "\"gpg\\u202etxt\""},
	    {"isolate", "\xe2\x81\xa6", "\"\\u2066\""},
	    {"line separator",
	     "a\xe2\x80\xa8"
	     "b",
	     "\"a\\u2028b\""},
	    {"bom", "\xef\xbb\xbf", "\"\\ufeff\""},
	    {"c1 csi",
	     "\xc2\x9b"
	     "2J",
	     "\"\\u00c2\\u009b2J\""},
	    {"markup stays (JSON is not markup)", "<b>x</b>&", "\"<b>x</b>&\""},
	};
	char buf[256];
	struct oomkit__json w;

	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		oomkit__json_init(&w, -1, buf, sizeof(buf));
		oomkit__json_str(&w, NULL, rows[i].in);
		int n = oomkit__json_end(&w);
		EXPECT_INT(rows[i].name, n, strlen(rows[i].want));
		if (memcmp(buf, rows[i].want, (size_t)n) != 0)
			fail_msg("%s: %.*s, want %s", rows[i].name, n, buf, rows[i].want);
		if (!json_valid(buf, (size_t)n))
			fail_msg("%s: not valid JSON", rows[i].name);
	}
}

static void test_structure(void **state)
{
	(void)state;
	static const char want[] = "{\"a\":1,\"b\":[true,null,{\"c\":-2}],\"lim\":null,\"n\":7,\"ms\":1.005,"
				   "\"s\":0.042}\n";
	char buf[256];
	struct oomkit__json w;

	oomkit__json_init(&w, -1, buf, sizeof(buf));
	oomkit__json_open(&w, NULL, '{');
	oomkit__json_u64(&w, "a", 1);
	oomkit__json_open(&w, "b", '[');
	oomkit__json_bool(&w, NULL, true);
	oomkit__json_null(&w, NULL);
	oomkit__json_open(&w, NULL, '{');
	oomkit__json_i64(&w, "c", -2);
	oomkit__json_close(&w, '}');
	oomkit__json_close(&w, ']');
	oomkit__json_limit(&w, "lim", UINT64_MAX);
	oomkit__json_limit(&w, "n", 7);
	oomkit__json_fixed(&w, "ms", 1005, 3);
	oomkit__json_fixed(&w, "s", 42, 3);
	oomkit__json_close(&w, '}');
	oomkit__json_newline(&w);
	int n = oomkit__json_end(&w);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(buf, want, strlen(want));
	assert_true(json_valid(buf, (size_t)n));
}

static void test_errors(void **state)
{
	(void)state;
	char buf[64];
	struct oomkit__json w;
	int p[2];

	/* Too small, no fd: an error, and nothing past the buffer. */
	oomkit__json_init(&w, -1, buf, 8);
	oomkit__json_str(&w, NULL, "longer than eight bytes");
	assert_int_equal(oomkit__json_end(&w), -EMSGSIZE);

	/* Nested deeper than the writer tracks, or closed more than opened. */
	oomkit__json_init(&w, -1, buf, sizeof(buf));
	for (int i = 0; i < OOMKIT__JSON_MAX_DEPTH + 1; i++)
		oomkit__json_open(&w, NULL, '[');
	assert_int_equal(oomkit__json_end(&w), -E2BIG);
	oomkit__json_init(&w, -1, buf, sizeof(buf));
	oomkit__json_close(&w, ']');
	assert_int_equal(oomkit__json_end(&w), -EINVAL);

	/* A write that fails: the error is kept, later output dropped. */
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	oomkit__json_init(&w, p[1], buf, 16);
	for (int i = 0; i < 10; i++)
		oomkit__json_str(&w, NULL, "more than the buffer holds");
	assert_int_equal(oomkit__json_end(&w), -EPIPE);
	close(p[1]);

	/* A file that takes no more bytes (a full device): an error, no spin. */
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		oomkit__json_init(&w, fd, buf, 16);
		oomkit__json_str(&w, NULL, "more than the buffer holds");
		assert_int_equal(oomkit__json_end(&w), -ENOSPC);
		close(fd);
	}
}

static void test_escape(void **state)
{
	(void)state;
	static const struct {
		const char *name, *in, *want;
	} rows[] = {
	    {"plain", "sshd: root@pts/0", "sshd: root@pts/0"},
	    {"backslash", "a\\b", "a\\\\b"},
	    {"newline forges a line", "x\n<0>oomkitd: all is well", "x\\x0a<0>oomkitd: all is well"},
	    {"tab splits a field", "a\tb", "a\\x09b"},
	    {"lone dot line", "\n.\n", "\\x0a.\\x0a"},
	    {"terminal title", "\x1b]0;owned\x07", "\\x1b]0;owned\\x07"},
	    {"del", "\x7f", "\\x7f"},
	    {"utf-8 kept", "caf\xc3\xa9", "caf\xc3\xa9"},
	    {"c1 csi",
	     "\xc2\x9b"
	     "2J",
	     "\\xc2\\x9b2J"},
	    {"right-to-left override",
	     "a\xe2\x80\xae"
	     "b",
	     "a\\xe2\\x80\\xaeb"},
	    {"cut sequence", "ab\xe2\x82", "ab\\xe2\\x82"},
	    {"ff", "\xff", "\\xff"},
	};
	char buf[128], back[128];

	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		size_t n = oomkit__escape_text(buf, sizeof(buf), rows[i].in, strlen(rows[i].in));
		EXPECT_STR(rows[i].name, buf, rows[i].want);
		EXPECT_INT(rows[i].name, n, strlen(rows[i].want));
		int k = oomkit__unescape_text(back, sizeof(back), buf, n);
		EXPECT_INT(rows[i].name, k, strlen(rows[i].in));
		if (memcmp(back, rows[i].in, (size_t)k) != 0)
			fail_msg("%s: does not unescape to the input", rows[i].name);
	}
	/* Cut at a whole escape, never inside one; the needed length is returned. */
	assert_int_equal(oomkit__escape_text(buf, 6, "ab\ncd", 5), 8);
	assert_string_equal(buf, "ab");
	assert_int_equal(oomkit__escape_text(buf, 8, "ab\ncd", 5), 8);
	assert_string_equal(buf, "ab\\x0ac");
	/* A NUL inside the bytes is escaped too. */
	assert_int_equal(oomkit__escape_text(buf, sizeof(buf), "a\0b", 3), 6);
	assert_string_equal(buf, "a\\x00b");
	assert_string_equal(oomkit__escape_str(buf, sizeof(buf), NULL), "");
	assert_int_equal(oomkit__unescape_text(back, sizeof(back), "\\q", 2), -EINVAL);
	assert_int_equal(oomkit__unescape_text(back, sizeof(back), "\\x4", 3), -EINVAL);
}

/* The notification body's escaper: the text escaper's rules, and markup
 * made inert (the freedesktop notification specification's body markup). */
static void test_markup(void **state)
{
	(void)state;
	static const struct {
		const char *name, *in, *want;
	} rows[] = {
	    {"plain", "Big Editor", "Big Editor"},
	    {"bold", "<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"},
	    {"link", "<a href=\"http://evil/\">Close</a>",
	     "&lt;a href=&quot;http://evil/&quot;&gt;Close&lt;/a&gt;"},
	    {"image", "<img src='file:///x.png'/>", "&lt;img src=&apos;file:///x.png&apos;/&gt;"},
	    {"ampersand", "AT&T &amp;", "AT&amp;T &amp;amp;"},
	    {"entity smuggled in escapes", "\\x3c", "\\\\x3c"},
	    {"newline fakes a line", "a\nKill firefox", "a\\x0aKill firefox"},
	    {"right-to-left override",
	     "txt\xe2\x80\xae"
	     "exe",
	     "txt\\xe2\\x80\\xaeexe"},
	    {"c1", "\xc2\x9b", "\\xc2\\x9b"},
	    {"invalid utf-8", "\xff<", "\\xff&lt;"},
	    {"utf-8 kept", "caf\xc3\xa9 \xe2\x80\x94", "caf\xc3\xa9 \xe2\x80\x94"},
	};
	char buf[256];

	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		size_t n = oomkit__escape_markup(buf, sizeof(buf), rows[i].in, strlen(rows[i].in));
		EXPECT_STR(rows[i].name, buf, rows[i].want);
		EXPECT_INT(rows[i].name, n, strlen(rows[i].want));
		/* Nothing a markup parser would read as a tag or an entity of ours. */
		if (strchr(buf, '<') || strchr(buf, '>') || strchr(buf, '"') || strchr(buf, '\''))
			fail_msg("%s: markup left in %s", rows[i].name, buf);
	}
	/* Cut at a whole entity, and the needed length returned. */
	assert_int_equal(oomkit__escape_markup(buf, 4, "a<b", 3), 6);
	assert_string_equal(buf, "a");
	assert_int_equal(oomkit__escape_markup(buf, 6, "a<b", 3), 6);
	assert_string_equal(buf, "a&lt;");
}

/* What the text escaper writes, and only that, passes the check. */
static void test_text_check(void **state)
{
	(void)state;
	static const char *const good[] = {
	    "",		  "plain", "a\\\\b", "\\x0a",	   "caf\xc3\xa9", "\\xe2\\x80\\xae",
	    "\\xc2\\x9b", "\\xff", "\\xc3",  "\\xe2\\x82", "\\x00",
	};
	static const char *const bad[] = {
	    "\n",    "\x7f",	   "\\",	   "\\q",      "\\x4", "\\xAB",		"\\x41",
	    "\\x5c", "\\xc3\\xa9", "\xe2\x80\xae", "\xc2\x9b", "\xff", "\\xe2\x80\xae", "\xe2\\x80\\xae",
	};

	for (size_t i = 0; i < N_ELEMENTS(good); i++)
		if (oomkit__text_check(good[i], strlen(good[i])) != 0)
			fail_msg("refused: '%s'", good[i]);
	for (size_t i = 0; i < N_ELEMENTS(bad); i++)
		if (oomkit__text_check(bad[i], strlen(bad[i])) != -EINVAL)
			fail_msg("accepted: bad[%zu]", i);
	/* A NUL inside is raw, hence refused; escaped, it is what the escaper writes. */
	assert_int_equal(oomkit__text_check("a\0b", 3), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strings), cmocka_unit_test(test_structure),
	    cmocka_unit_test(test_errors),  cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_markup),  cmocka_unit_test(test_text_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
