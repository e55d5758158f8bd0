/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-delegate.c - oomkit_cgroup_delegate() on a real memcg, tried as its
 * owner would: every control file of the job is opened for writing as the
 * owner, and only the allow-list opens (cgroup.procs, tasks,
 * cgroup.event_control); the hold (memory.oom_control), the limits and any
 * file this kernel has that the library has never heard of stay root's.
 * The owner creates a sub-memcg, which is then wholly its own: its limit, its
 * kernel OOM killer switch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"
#include "testlib.h"

#define OWNER 65534

/* lib/cgroup-v1.c's and lib/cgroup-v2.c's delegation files. */
static const char *const allowed_v1[] = {"cgroup.procs", "tasks", "cgroup.event_control"};
static const char *const allowed_v2[] = {"cgroup.procs", "cgroup.threads", "cgroup.subtree_control"};

static bool is_allowed(const char *name)
{
	const char *const *allowed = tl_v2() ? allowed_v2 : allowed_v1;
	for (size_t i = 0; i < 3; i++)
		if (strcmp(name, allowed[i]) == 0)
			return true;
	return false;
}

/* As the owner: 0 if path opens for writing (and, with value, takes it),
 * else the errno. */
static int as_owner(const char *path, const char *value)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(OWNER) < 0 || setuid(OWNER) < 0)
			_exit(100);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(errno);
		_exit(value && write(fd, value, strlen(value)) < 0 ? errno : 0);
	}
	int st = tl_wait_exit(pid, 10000);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int owner_mkdir(const char *path)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(OWNER) < 0 || setuid(OWNER) < 0)
			_exit(100);
		_exit(mkdir(path, 0755) < 0 ? errno : 0);
	}
	int st = tl_wait_exit(pid, 10000);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_delegate_allow_list(void **state)
{
	(void)state;
	const char *job = tl_cgroup("job", 64 * TL_MIB);
	char path[4096 + 64], sub[4096];
	oomkit_ctx *ctx;
	struct oomkit_options o;
	oomkit_options_init(&o);
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_int_equal(oomkit_set_kernel_killer(ctx, job, false), 0);

	int given = oomkit_cgroup_delegate(ctx, job, OWNER, OWNER);
	assert_int_equal(given, 3);
	struct stat st;
	assert_int_equal(stat(tl_abs(job), &st), 0);
	assert_int_equal(st.st_uid, OWNER);

	/* Every file of the job: only the allow-list is the owner's to write. */
	DIR *d = opendir(tl_abs(job));
	assert_non_null(d);
	int files = 0, writable = 0, wrong = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_REG)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tl_abs(job), de->d_name);
		struct stat fst;
		/* Read-only files are no one's to write. */
		if (stat(path, &fst) < 0 || !(fst.st_mode & 0222))
			continue;
		files++;
		int r = as_owner(path, NULL);
		bool ok = is_allowed(de->d_name) ? r == 0 : (r == EACCES || r == EPERM);
		writable += r == 0;
		if (!ok) {
			print_message("owner opening %s for writing: %s\n", de->d_name,
				      r ? strerror(r) : "ok");
			wrong++;
		}
	}
	closedir(d);
	print_message("delegated job: %d writable control files, the owner may write %d of them\n", files,
		      writable);
	assert_int_equal(wrong, 0);
	assert_int_equal(writable, 3);

	/* The hold stays: the owner cannot give the OOM to the kernel (v1
	 * oom_control's kill-disable, v2 memory.high below memory.max). */
	const char *hold = tl_v2() ? "memory.high" : "memory.oom_control";
	snprintf(path, sizeof(path), "%s/%s", tl_abs(job), hold);
	assert_int_equal(as_owner(path, tl_v2() ? "max" : "0"), EACCES);
	assert_true(tl_held(job));

	/* Its own sub-memcg is wholly its own; on v2 the memory controller
	 * for it is the owner's to give. */
	if (tl_v2()) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", tl_abs(job));
		assert_int_equal(as_owner(path, "+memory"), 0);
	}
	snprintf(sub, sizeof(sub), "%s/sub", tl_abs(job));
	assert_int_equal(owner_mkdir(sub), 0);
	snprintf(path, sizeof(path), "%s/%s", sub, tl_limit_file());
	assert_int_equal(as_owner(path, "16777216"), 0);
	snprintf(path, sizeof(path), "%s/%s", sub, hold);
	assert_int_equal(as_owner(path, tl_v2() ? "14680064" : "1"), 0);
	char rel[512];
	snprintf(rel, sizeof(rel), "%s/sub", job);
	assert_int_equal(tl_read_u64(rel, tl_limit_file()), 16 * TL_MIB);
	assert_true(tl_held(rel));

	assert_int_equal(oomkit_cgroup_delegate(ctx, "", OWNER, OWNER), -EINVAL);
	assert_int_equal(oomkit_set_kernel_killer(ctx, rel, true), 0);
	assert_int_equal(oomkit_set_kernel_killer(ctx, job, true), 0);
	oomkit_free(ctx);
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_delegate_allow_list),
	};
	return cmocka_run_group_tests_name("delegate", tests, NULL, NULL);
}
