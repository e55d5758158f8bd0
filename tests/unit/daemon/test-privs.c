/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-privs.c - oomkitd's privileges (daemon/base/privs.c) in forked children:
 * under the seccomp allow-list the kill path and every call of the guardian
 * still work, calls off the list fail with EPERM and the process lives on
 * (no SIGSYS), clone3 says ENOSYS; as root, the capabilities left are the
 * daemon's run-time set, in the bounding set too, and CAP_SYS_RESOURCE goes
 * after setup.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include "base/privs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* The child reports the first failed expectation by its line as exit code. */
#define EXPECT(cond)                                                                                         \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "line %d: %s (errno %d)\n", __LINE__, #cond, errno);                 \
			_exit(__LINE__ % 250 + 1);                                                           \
		}                                                                                            \
	} while (0)

static void run_in_child(void (*fn)(void))
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("the child was killed by signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		fail_msg("the child failed an expectation (exit %d; its line is on stderr)",
			 WEXITSTATUS(status));
}

static void listed_calls(void)
{
	EXPECT(privs_install_seccomp() == 0);

	/* The kill path, on ourselves: signal 0, and a release of a process
	 * that is not dying, which the kernel refuses with EINVAL, not EPERM. */
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	EXPECT(pidfd >= 0);
	EXPECT(syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0);
	EXPECT(syscall(SYS_process_mrelease, pidfd, 0) < 0 && errno == EINVAL);
	EXPECT(kill(getpid(), 0) == 0);

	/* What the guardian does. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	EXPECT(sigprocmask(SIG_BLOCK, &mask, NULL) == 0);
	int ep = epoll_create1(EPOLL_CLOEXEC), sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), efd = eventfd(0, EFD_CLOEXEC);
	EXPECT(ep >= 0 && sfd >= 0 && tfd >= 0 && efd >= 0);
	struct epoll_event ev = {.events = EPOLLIN};
	EXPECT(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) == 0);
	EXPECT(write(efd, &(uint64_t){1}, 8) == 8);
	EXPECT(epoll_wait(ep, &ev, 1, 1000) == 1);
	struct itimerspec its = {.it_value.tv_nsec = 1000};
	EXPECT(timerfd_settime(tfd, 0, &its, NULL) == 0);
	EXPECT(prctl(PR_SET_NAME, "privs-test", 0, 0, 0) == 0);
	/* Bad flags: EINVAL from the kernel, so the call got through (a sanitizer intercepts mlockall()). */
	EXPECT(syscall(SYS_mlockall, 0) < 0 && errno == EINVAL);
	int sv[2];
	EXPECT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	EXPECT(s >= 0);
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	char buf[512];
	EXPECT(fd >= 0 && pread(fd, buf, sizeof(buf), 0) > 0);

	/* A guardian is forked, makes its own session and closes what it does not keep. */
	pid_t child = fork();
	if (child == 0) {
		if (setsid() < 0 || syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
			_exit(1);
		_exit(0);
	}
	int status;
	EXPECT(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0);
}

static void test_listed_calls_work(void **state)
{
	(void)state;
	run_in_child(listed_calls);
}

static void unlisted_calls(void)
{
	struct utsname u;
	char *argv[] = {"true", NULL};

	EXPECT(privs_install_seccomp() == 0);
	EXPECT(uname(&u) < 0 && errno == EPERM);
	EXPECT(execv("/bin/true", argv) < 0 && errno == EPERM);
	EXPECT(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM);
	EXPECT(socket(AF_NETLINK, SOCK_RAW, 0) < 0 && errno == EPERM);
	EXPECT(ioctl(0, FIONREAD, &(int){0}) < 0 && errno == EPERM);
	EXPECT(unshare(CLONE_NEWUSER) < 0 && errno == EPERM);
	/* fork() is allowed, a clone into a new user namespace is not. */
	EXPECT(syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) < 0 && errno == EPERM);
	/* clone3 says "not here", so a C library falls back to clone. */
	EXPECT(syscall(SYS_clone3, NULL, 0) < 0 && errno == ENOSYS);
	/* Still alive: a refused call does not kill. */
	EXPECT(getpid() > 0);
}

static void test_unlisted_calls_fail_with_eperm(void **state)
{
	(void)state;
	run_in_child(unlisted_calls);
}

static unsigned long long status_mask(const char *key)
{
	char line[256];
	unsigned long long v = ~0ull;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':')
			v = strtoull(line + strlen(key) + 1, NULL, 16);
	fclose(f);
	return v;
}

static void caps(void)
{
	unsigned long long before = status_mask("CapPrm");
	unsigned long long run = privs_run_caps_mask() & before;
	unsigned long long resource = before & (1ull << CAP_SYS_RESOURCE);

	/* As the daemon does it: with the filter on before setup is done. */
	EXPECT(privs_restrict(true, false) == 0);
	EXPECT(status_mask("CapEff") == (run | resource));
	EXPECT(status_mask("CapPrm") == (run | resource));
	EXPECT(status_mask("CapBnd") == run);
	EXPECT(status_mask("CapInh") == 0 && status_mask("CapAmb") == 0);
	EXPECT(status_mask("NoNewPrivs") == 1 && status_mask("Seccomp") == 2);
	EXPECT(privs_setup_done() == 0);
	EXPECT(status_mask("CapEff") == run && status_mask("CapPrm") == run);
	/* What was dropped cannot come back. */
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct c[2] = {{.effective = ~0u, .permitted = ~0u},
					      {.effective = ~0u, .permitted = ~0u}};
	EXPECT(syscall(SYS_capset, &h, c) < 0 && errno == EPERM);
	EXPECT(status_mask("CapEff") == run);
}

static void test_caps_are_the_run_set(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		const char *req = getenv("OOMKIT_REQUIRE_KERNEL");
		if (req && strcmp(req, "1") == 0)
			fail_msg("capabilities can only be dropped by root (OOMKIT_REQUIRE_KERNEL=1)");
		skip();
	}
	run_in_child(caps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listed_calls_work),
	    cmocka_unit_test(test_unlisted_calls_fail_with_eperm),
	    cmocka_unit_test(test_caps_are_the_run_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
