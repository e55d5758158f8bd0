/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-run-target.c - the process `oomkit run` moves
 * (daemon/control/run-target.c): this test's own process and a child that
 * has exited, as any user runs it.
 */
#include "unit.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/run-target.h"

static int pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	assert_true(fd >= 0);
	return fd;
}

/* The process itself: alive, its own uid's; another uid's peer may not move it. */
static void test_check_self(void **state)
{
	int fd = pidfd_of(getpid());
	uid_t other = getuid() == 0 ? 65534 : getuid() + 1;

	(void)state;
	assert_false(run_target_exited(fd));
	assert_int_equal(run_target_check(fd, getpid(), getuid()), 0);
	assert_int_equal(run_target_check(fd, getpid(), other), -EPERM);
	assert_int_equal(run_target_check(fd, getpid(), 0), 0); /* root's peer: any process */
	close(fd);
}

/* A child that has exited (a zombie, its pid not reused): gone. */
static void test_check_exited(void **state)
{
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	int fd = pidfd_of(pid);
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_true(run_target_exited(fd));
	assert_int_equal(run_target_check(fd, pid, getuid()), -ESRCH);
	close(fd);
	waitpid(pid, NULL, 0);
}

static void test_open(void **state)
{
	pid_t pid = 0;
	int conn = pidfd_of(getpid());

	(void)state;
	/* The connection's pidfd, duplicated, wins over the sender. */
	int fd = run_target_open(conn, getpid(), 1, 0, getuid(), &pid);
	assert_true(fd >= 0 && fd != conn);
	assert_int_equal(pid, getpid());
	close(fd);
	/* Without it: the request's one sender, of the client's uid. */
	pid = 0;
	fd = run_target_open(-1, 0, getpid(), getuid(), getuid(), &pid);
	assert_true(fd >= 0);
	assert_int_equal(pid, getpid());
	close(fd);
	pid = 0;
	assert_int_equal(run_target_open(-1, 0, 0, getuid(), getuid(), &pid), -EBADMSG);
	assert_int_equal(run_target_open(-1, 0, getpid(), getuid() + 1, getuid(), &pid), -EPERM);
	assert_int_equal(pid, 0); /* written only on success */
	close(conn);
}

/* The first of a job's patterns that names a scope. */
static void test_scope_name(void **state)
{
	struct config_cgroup cg[2] = {{.pattern = "system.slice/batch"},
				      {.pattern = "system.slice/batch-*.scope"}};
	struct config_job job = {.cgroups = cg, .n_cgroups = 2};
	char unit[128], slice[128];

	(void)state;
	assert_true(run_target_scope_name(&job, 42, unit, sizeof(unit), slice, sizeof(slice)));
	assert_string_equal(unit, "batch-oomkit-run-42.scope");
	assert_string_equal(slice, "system.slice");
	job.n_cgroups = 1;
	assert_false(run_target_scope_name(&job, 42, unit, sizeof(unit), slice, sizeof(slice)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check_self),
	    cmocka_unit_test(test_check_exited),
	    cmocka_unit_test(test_open),
	    cmocka_unit_test(test_scope_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
