/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-util.c - the file readers and writer on fixture files in a private
 * temporary directory (and on this process's own /proc files, read and
 * parsed end to end), the clock, the log callback and the enum names.
 */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char dir[64];
	int dirfd;
};

static void put_file(const struct fixture *f, const char *name, const char *data, size_t len)
{
	int fd = openat(f->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/oomkit-unit-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = f;
	return f->dirfd >= 0 ? 0 : -1;
}

/* Removes the fixture directory and whatever a test, passing or not, left in
 * it (one level: the tests make no deeper trees). */
static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = fdopendir(f->dirfd);
	struct dirent *e;
	int r;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, e->d_type == DT_DIR ? AT_REMOVEDIR : 0);
	closedir(d);
	r = rmdir(f->dir);
	free(f);
	return r;
}

static void test_read_file_at(void **state)
{
	struct fixture *f = *state;
	char buf[8];

	memset(buf, 'Z', sizeof(buf));
	put_file(f, "small", "abc\n", 4);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "small", buf, sizeof(buf)), 4);
	assert_string_equal(buf, "abc\n");
	assert_int_equal(buf[5], 'Z');

	/* len - 1 bytes fit with the NUL; one byte more is -EFBIG. */
	put_file(f, "exact", "1234567", 7);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "exact", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "1234567");
	put_file(f, "big", "12345678", 8);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "big", buf, sizeof(buf)), -EFBIG);

	put_file(f, "empty", "", 0);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "empty", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	/* NUL bytes in a file are data: the length says where it ends. */
	put_file(f, "nul", "a\0b", 3);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "nul", buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "a\0b\0", 4);

	assert_int_equal(oomkit__read_file_at(f->dirfd, "missing", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(mkdirat(f->dirfd, "dir", 0755), 0);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "dir", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "small", buf, 0), -EINVAL);
	assert_int_equal(oomkit__read_file_at(-1, "small", buf, sizeof(buf)), -EBADF);
	/* An absolute name ignores dirfd, as openat does. */
	char path[128];
	snprintf(path, sizeof(path), "%s/small", f->dir);
	assert_int_equal(oomkit__read_file_at(-1, path, buf, sizeof(buf)), 4);
}

static void test_read_file_at_len_1(void **state)
{
	struct fixture *f = *state;
	char c = 'Z';

	put_file(f, "empty", "", 0);
	put_file(f, "small", "x", 1);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "empty", &c, 1), 0);
	assert_int_equal(c, '\0');
	assert_int_equal(oomkit__read_file_at(f->dirfd, "small", &c, 1), -EFBIG);
}

static void test_pread_all(void **state)
{
	struct fixture *f = *state;
	char buf[8];
	int fd;

	put_file(f, "value", "4096\n", 5);
	fd = openat(f->dirfd, "value", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* Read twice from the same fd: each read starts at offset 0. */
	for (int i = 0; i < 2; i++) {
		memset(buf, 'Z', sizeof(buf));
		assert_int_equal(oomkit__pread_all(fd, buf, sizeof(buf)), 5);
		assert_string_equal(buf, "4096\n");
	}
	/* The file grows between reads: the second read sees it. */
	put_file(f, "value", "1234567", 7);
	assert_int_equal(oomkit__pread_all(fd, buf, sizeof(buf)), 7);
	put_file(f, "value", "12345678", 8);
	assert_int_equal(oomkit__pread_all(fd, buf, sizeof(buf)), -EFBIG);
	close(fd);
	assert_int_equal(oomkit__pread_all(fd, buf, sizeof(buf)), -EBADF);
}

static void test_write_file_at(void **state)
{
	struct fixture *f = *state;
	char buf[16];

	put_file(f, "value", "", 0);
	assert_int_equal(oomkit__write_file_at(f->dirfd, "value", "268435456"), 0);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "value", buf, sizeof(buf)), 9);
	assert_string_equal(buf, "268435456");
	/* Without O_TRUNC, as on cgroupfs: a shorter value overwrites the start only. */
	assert_int_equal(oomkit__write_file_at(f->dirfd, "value", "1"), 0);
	assert_int_equal(oomkit__read_file_at(f->dirfd, "value", buf, sizeof(buf)), 9);
	assert_string_equal(buf, "168435456");
	/* Never creates a file: a control file that is missing is an error. */
	assert_int_equal(oomkit__write_file_at(f->dirfd, "missing", "1"), -ENOENT);
	assert_int_equal(faccessat(f->dirfd, "missing", F_OK, 0), -1);
	assert_int_equal(mkdirat(f->dirfd, "dir", 0755), 0);
	assert_int_equal(oomkit__write_file_at(f->dirfd, "dir", "1"), -EISDIR);
	assert_int_equal(oomkit__write_file_at(f->dirfd, "value", NULL), -EINVAL);
}

/* A write that the kernel refuses comes back as its errno. */
static void test_write_file_at_refused(void **state)
{
	int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(oomkit__write_file_at(fd, "oom_score_adj", "not a number"), -EINVAL);
	close(fd);
}

/* The readers and parsers together on this process's real /proc files. */
static void test_read_and_parse_proc_self(void **state)
{
	static char buf[OOMKIT__IOBUF_SIZE];
	struct oomkit__proc_stat st;
	struct oomkit__proc_status status;
	struct oomkit__mounts mounts;
	int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC), n;

	(void)state;
	assert_true(fd >= 0);
	n = oomkit__read_file_at(fd, "stat", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(oomkit__parse_proc_stat(buf, (size_t)n, &st), 0);
	assert_int_equal(st.pid, getpid());
	assert_int_equal(st.ppid, getppid());
	assert_true(st.start_time > 0);

	n = oomkit__read_file_at(fd, "status", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(oomkit__parse_proc_status(buf, (size_t)n, &status), 0);
	assert_int_equal(status.uid, getuid());
	assert_true(status.has_rss);
	assert_true(status.rss_anon_kib + status.rss_file_kib > 0);

	n = oomkit__read_file_at(fd, "mounts", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(oomkit__parse_mounts(buf, (size_t)n, &mounts), 0);
	close(fd);
}

static void test_now_ns(void **state)
{
	uint64_t a, b;

	(void)state;
	a = oomkit__now_ns();
	b = oomkit__now_ns();
	assert_true(a > 0);
	assert_true(b >= a);
}

struct log_record {
	int calls;
	enum oomkit_log_level level;
	char msg[600];
};

static void record_log(enum oomkit_log_level level, const char *msg, void *userdata)
{
	struct log_record *rec = userdata;

	rec->calls++;
	rec->level = level;
	snprintf(rec->msg, sizeof(rec->msg), "%s", msg);
}

static void test_log(void **state)
{
	static oomkit_ctx ctx;
	struct log_record rec = {0};
	char long_arg[700];

	(void)state;
	oomkit__log(NULL, OOMKIT_LOG_ERR, "no context %d", 1);
	oomkit__log(&ctx, OOMKIT_LOG_ERR, "no callback %d", 2);

	ctx.log = record_log;
	ctx.log_userdata = &rec;
	oomkit__log(&ctx, OOMKIT_LOG_WARNING, "cgroup %s: %d%%", "jobs/web", 93);
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.level, OOMKIT_LOG_WARNING);
	assert_string_equal(rec.msg, "cgroup jobs/web: 93%");

	oomkit__log(&ctx, OOMKIT_LOG_DEBUG, "trailing newlines\n\n");
	assert_string_equal(rec.msg, "trailing newlines");

	/* Longer messages are cut at the 512-byte stack buffer, not overflowed. */
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	oomkit__log(&ctx, OOMKIT_LOG_INFO, "%s", long_arg);
	assert_int_equal(rec.calls, 3);
	assert_int_equal(strlen(rec.msg), 511);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(oomkit_event_kind_name(OOMKIT_EVENT_OOM), "oom");
	assert_string_equal(oomkit_event_kind_name(OOMKIT_EVENT_THRESHOLD), "threshold");
	assert_string_equal(oomkit_event_kind_name(OOMKIT_EVENT_PRESSURE), "pressure");
	assert_string_equal(oomkit_event_kind_name(OOMKIT_EVENT_GONE), "gone");
	assert_string_equal(oomkit_event_kind_name((enum oomkit_event_kind)0), "unknown");
	assert_string_equal(oomkit_verdict_name(OOMKIT_RESOLVED), "resolved");
	assert_string_equal(oomkit_verdict_name(OOMKIT_KERNEL), "kernel");
	assert_string_equal(oomkit_verdict_name(OOMKIT_WAIT), "wait");
	assert_string_equal(oomkit_verdict_name((enum oomkit_verdict)7), "unknown");
	assert_string_equal(oomkit_pressure_level_name(OOMKIT_PRESSURE_LOW), "low");
	assert_string_equal(oomkit_pressure_level_name(OOMKIT_PRESSURE_MEDIUM), "medium");
	assert_string_equal(oomkit_pressure_level_name(OOMKIT_PRESSURE_CRITICAL), "critical");
	assert_string_equal(oomkit_pressure_level_name((enum oomkit_pressure_level) - 1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_read_file_at, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_file_at_len_1, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pread_all, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_file_at, setup, teardown),
	    cmocka_unit_test(test_write_file_at_refused),
	    cmocka_unit_test(test_read_and_parse_proc_self),
	    cmocka_unit_test(test_now_ns),
	    cmocka_unit_test(test_log),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
