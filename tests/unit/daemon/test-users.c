/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-users.c - the daemon's one reader of user names (daemon/base/users.c):
 * passwd(5) lines good and hostile (comments, NIS "+" lines, a uid past
 * 32 bits, a name too long, missing fields), a file with a line longer than
 * a read block and a last line without its newline, and the seal: before it
 * the name service answers and is remembered; after it the fixture file as
 * it is now answers first, what was remembered next, the name service never.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/users.h"

static void test_parse_line(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int r;
		const char *name;
		unsigned uid, gid;
	} cases[] = {
	    {"root:x:0:0:root:/root:/bin/bash", 0, "root", 0, 0},
	    {"alice:x:1000:100::/home/alice:", 0, "alice", 1000, 100},
	    {"bob::4294967294:7:::", 0, "bob", 4294967294u, 7},
	    {"a:x:1:2:", 0, "a", 1, 2},
	    {"big:x:4294967295:0::/:", -EINVAL, NULL, 0, 0}, /* (uid_t)-1 is no uid */
	    {"big:x:99999999999:0::/:", -EINVAL, NULL, 0, 0},
	    {"neg:x:-1:0::/:", -EINVAL, NULL, 0, 0},
	    {"sp:x: 1:0::/:", -EINVAL, NULL, 0, 0},
	    {"nogid:x:1::/:", -EINVAL, NULL, 0, 0},
	    {":x:1:1::/:", -EINVAL, NULL, 0, 0},
	    {"+ldapuser:x:1:1::/:", -EINVAL, NULL, 0, 0},
	    {"-excluded:x:1:1::/:", -EINVAL, NULL, 0, 0},
	    {"+", -EINVAL, NULL, 0, 0},
	    {"# a comment", -EINVAL, NULL, 0, 0},
	    {"", -EINVAL, NULL, 0, 0},
	    {"short:x:1:1", -EINVAL, NULL, 0, 0}, /* no fifth field */
	    {"nameaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:x:1:1::/:", -EINVAL,
	     NULL, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct users_entry e = {.name = "unchanged", .uid = 77, .gid = 77};
		int r = users_parse_line(cases[i].line, strlen(cases[i].line), &e);
		if (r != cases[i].r)
			fail_msg("'%s': %d, want %d", cases[i].line, r, cases[i].r);
		if (r < 0) {
			if (strcmp(e.name, "unchanged") != 0 || e.uid != 77)
				fail_msg("'%s': written on failure", cases[i].line);
			continue;
		}
		if (strcmp(e.name, cases[i].name) != 0 || e.uid != cases[i].uid || e.gid != cases[i].gid)
			fail_msg("'%s': %s %u %u", cases[i].line, e.name, (unsigned)e.uid, (unsigned)e.gid);
	}
	/* The length counts, not a NUL: a line is read out of a larger buffer. */
	struct users_entry e;
	assert_int_equal(users_parse_line("carol:x:5:6:\nzed:x:9:9:", 12, &e), 0);
	assert_string_equal(e.name, "carol");
	assert_int_equal(users_parse_line("carol:x:5:6:", 10, &e), -EINVAL);
}

/* A fixture passwd file in a fresh temporary file: its path in path. */
static void write_fixture(char *path, size_t len, const char *text)
{
	snprintf(path, len, "/tmp/test-users.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int find(const char *path, const char *name, uid_t uid, struct users_entry *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	assert_true(fd >= 0);
	r = users_file_find(fd, name, uid, e);
	close(fd);
	return r;
}

static void test_file(void **state)
{
	(void)state;
	char path[64], *text;
	struct users_entry e;
	size_t cap = 3 * 4096 + 1024, n = 0;

	/* A line longer than a read block (a comment, say) must not be read as
	 * lines of its own: a fake entry inside it is not found. */
	text = malloc(cap);
	assert_non_null(text);
	n += (size_t)snprintf(text + n, cap - n, "root:x:0:0:root:/root:/bin/sh\n# ");
	while (n < 2 * 4096)
		text[n++] = 'a';
	n += (size_t)snprintf(text + n, cap - n, "\nfake:x:0:0::/:\n");
	/* An entry's text inside the long line, wherever a read block may start. */
	for (size_t at = 512; at + 16 < 2 * 4096; at += 509)
		memcpy(text + at, "evil:x:0:0::/:", 14);
	n += (size_t)snprintf(text + n, cap - n,
			      "# comment\n+nis::::::\nalice:x:1000:100::/home/alice:\n"
			      "dup:x:1000:5::/:\nlast:x:2000:200::/:");
	text[n] = '\0';
	write_fixture(path, sizeof(path), text);
	free(text);

	assert_int_equal(find(path, "root", 0, &e), 1);
	assert_int_equal(e.uid, 0);
	assert_int_equal(find(path, "alice", 0, &e), 1);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(e.gid, 100);
	/* By uid: the first entry of it. */
	assert_int_equal(find(path, NULL, 1000, &e), 1);
	assert_string_equal(e.name, "alice");
	/* The last line, without its newline. */
	assert_int_equal(find(path, "last", 0, &e), 1);
	assert_int_equal(e.gid, 200);
	assert_int_equal(find(path, NULL, 2000, &e), 1);
	assert_string_equal(e.name, "last");
	/* What sits inside the long line is no entry ("fake" follows it on a
	 * line of its own, so it is one). */
	assert_int_equal(find(path, "evil", 0, &e), 0);
	assert_int_equal(find(path, "fake", 0, &e), 1);
	assert_int_equal(find(path, "nis", 0, &e), 0);
	assert_int_equal(find(path, "+nis", 0, &e), 0);
	assert_int_equal(find(path, "nobody-here", 0, &e), 0);
	assert_int_equal(find(path, NULL, 4242, &e), 0);
	unlink(path);
}

static void test_seal(void **state)
{
	(void)state;
	char path[64];
	struct users_entry e;

	/* Before the seal, the name service (root is in every one). */
	assert_false(users_sealed());
	assert_int_equal(users_by_name("root", &e), 1);
	assert_int_equal(e.uid, 0);
	assert_int_equal(users_by_uid(0, &e), 1);
	assert_string_equal(e.name, "root");

	/* After it, a fixture that has no root: what the service said stays
	 * known, the fixture answers for the rest, and an edit counts. */
	write_fixture(path, sizeof(path), "late:x:4321:4322::/:/bin/sh\n");
	users_set_passwd(path);
	users_seal();
	assert_true(users_sealed());
	assert_int_equal(users_by_name("late", &e), 1);
	assert_int_equal(e.uid, 4321);
	assert_int_equal(e.gid, 4322);
	assert_int_equal(users_by_uid(4321, &e), 1);
	assert_string_equal(e.name, "late");
	assert_int_equal(users_by_name("root", &e), 1);
	assert_int_equal(e.uid, 0);
	assert_int_equal(users_by_uid(0, &e), 1);
	assert_string_equal(e.name, "root");
	/* Known to the name service but never asked before the seal: unknown now. */
	assert_int_equal(users_by_name("daemon", &e), 0);
	assert_int_equal(users_by_name("", &e), 0);

	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("late:x:5555:5556::/:/bin/sh\nlater:x:6000:6000::/:\n", f);
	fclose(f);
	assert_int_equal(users_by_name("late", &e), 1);
	assert_int_equal(e.uid, 5555);
	assert_int_equal(users_by_name("later", &e), 1);
	assert_int_equal(e.uid, 6000);

	/* No file, or a FIFO in its place: what was remembered, nothing blocks. */
	unlink(path);
	assert_int_equal(users_by_name("root", &e), 1);
	assert_true(users_by_name("later", &e) <= 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(users_by_name("later", &e) <= 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_line),
	    cmocka_unit_test(test_file),
	    cmocka_unit_test(test_seal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
