/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-runlock.c - the lock files that keep one daemon per socket, machine
 * and report directory (daemon/base/runlock.c), in a directory of the test's:
 * a second take is refused while the first holds, a released lock is free
 * again, a removal while held leaves no second holder of "the same" lock,
 * the file is 0600 and holds the text, and directories another user could
 * write or reach through a link are refused.
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
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/runlock.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test-runlock.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_take(void **state)
{
	(void)state;
	struct runlock a = RUNLOCK_INIT, b = RUNLOCK_INIT;
	char path[128], text[32] = {0};
	struct stat st;
	int dir_fd = runlock_open_dir(dir);

	assert_true(dir_fd >= 0);
	assert_int_equal(runlock_take_at(&a, dir_fd, "x.lock", "first\n"), 0);
	/* Another open file of it is another holder to flock: refused. */
	assert_int_equal(runlock_take_at(&b, dir_fd, "x.lock", "second\n"), -EBUSY);
	assert_int_equal(b.fd, -1);
	snprintf(path, sizeof(path), "%s/x.lock", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, text, sizeof(text) - 1) > 0);
	assert_string_equal(text, "first\n");
	/* Anyone who opens it sees it held. */
	assert_int_equal(flock(fd, LOCK_SH | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(fd);

	/* Released and kept: free again, and taken. */
	runlock_release(&a, false);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(runlock_take_at(&b, dir_fd, "x.lock", "second\n"), 0);
	/* Released and removed: gone. */
	runlock_release(&b, true);
	assert_int_equal(stat(path, &st), -1);
	runlock_release(&b, true); /* twice is nothing */

	/* A holder that opened the file before its removal cannot hold it
	 * beside a new holder of the name: its take sees another file. */
	assert_int_equal(runlock_take_at(&a, dir_fd, "y.lock", NULL), 0);
	int stale = openat(dir_fd, "y.lock", O_RDWR);
	assert_true(stale >= 0);
	runlock_release(&a, true);
	assert_int_equal(runlock_take_at(&b, dir_fd, "y.lock", NULL), 0);
	assert_int_equal(flock(stale, LOCK_EX | LOCK_NB), 0); /* the old file: no one's */
	struct stat old_st, now;
	assert_int_equal(fstat(stale, &old_st), 0);
	assert_int_equal(fstatat(dir_fd, "y.lock", &now, 0), 0);
	assert_true(old_st.st_ino != now.st_ino);
	close(stale);
	runlock_release(&b, true);
	close(dir_fd);
}

static void test_socket(void **state)
{
	(void)state;
	struct runlock a = RUNLOCK_INIT, b = RUNLOCK_INIT;
	char sock[128], path[160];
	struct stat st;

	snprintf(sock, sizeof(sock), "%s/run/oomkitd.sock", dir);
	/* The last directory is made (0755) if it is missing. */
	assert_int_equal(runlock_socket(&a, sock), 0);
	snprintf(path, sizeof(path), "%s.lock", sock);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(runlock_socket(&b, sock), -EBUSY);
	runlock_release(&a, true);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(runlock_socket(&b, "relative.sock"), -EINVAL);
	assert_int_equal(runlock_socket(&b, "/"), -EINVAL);
}

static void test_unsafe_dirs(void **state)
{
	(void)state;
	char open_dir[96], link[96], sock[160];
	struct runlock a = RUNLOCK_INIT;

	snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
	assert_int_equal(mkdir(open_dir, 0777), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	assert_int_equal(runlock_open_dir(open_dir), -EPERM);
	snprintf(sock, sizeof(sock), "%s/s.sock", open_dir);
	assert_int_equal(runlock_socket(&a, sock), -EPERM);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(dir, link), 0);
	assert_true(runlock_open_dir(link) < 0);
	snprintf(sock, sizeof(sock), "%s/../x", dir);
	assert_int_equal(runlock_open_dir(sock), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_take),
	    cmocka_unit_test(test_socket),
	    cmocka_unit_test(test_unsafe_dirs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
