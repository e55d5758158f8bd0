/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-notify.c - the sd_notify protocol of daemon/base/notify.c against real
 * sockets that the test binds, as a service manager would: a path and an
 * abstract name, each datagram received whole and credited (SCM_CREDENTIALS)
 * to this process; addresses that cannot be a socket; and the watchdog
 * variables, with a table of good and hostile values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/notify.h"

/* Binds a datagram socket at address (a path, or '@' and an abstract name)
 * that asks for its senders' credentials, as the service manager's does. */
static int bind_receiver(const char *address)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(address);
	socklen_t sa_len;
	int one = 1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(len < sizeof(sa.sun_path));
	memcpy(sa.sun_path, address, len);
	if (address[0] == '@') {
		sa.sun_path[0] = '\0';
		sa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		sa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sa_len), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	return fd;
}

/* Receives one datagram (without waiting) into buf; returns the sender's pid. */
static pid_t receive(int fd, char *buf, size_t len)
{
	char control[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = {.iov_base = buf, .iov_len = len - 1};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof(control)};
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
	pid_t pid = 0;

	assert_true(n >= 0);
	assert_false(msg.msg_flags & MSG_TRUNC);
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cred;
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			pid = cred.pid;
		}
	return pid;
}

static void exchange(const char *address)
{
	struct notifier n;
	char buf[256];
	int fd = bind_receiver(address);

	assert_int_equal(notify_open(&n, address), 1);
	assert_int_equal(notify_send(&n, "READY=1"), 0);
	assert_int_equal(receive(fd, buf, sizeof(buf)), getpid());
	assert_string_equal(buf, "READY=1");
	/* Several assignments travel in one datagram, as the protocol has them. */
	assert_int_equal(notify_send(&n, "RELOADING=1\nMONOTONIC_USEC=12345"), 0);
	assert_int_equal(receive(fd, buf, sizeof(buf)), getpid());
	assert_string_equal(buf, "RELOADING=1\nMONOTONIC_USEC=12345");
	assert_int_equal(notify_send(&n, "WATCHDOG=1"), 0);
	receive(fd, buf, sizeof(buf));
	assert_string_equal(buf, "WATCHDOG=1");
	/* One datagram each: nothing else is waiting. */
	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	notify_close(&n);
	assert_int_equal(n.fd, -1);
	close(fd);
}

static void test_path(void **state)
{
	(void)state;
	char dir[] = "/tmp/oomkit-test-notify-XXXXXX", path[128];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	exchange(path);
	unlink(path);
	rmdir(dir);
}

static void test_abstract(void **state)
{
	(void)state;
	char address[64];

	snprintf(address, sizeof(address), "@oomkit-test-notify-%d", (int)getpid());
	exchange(address);
}

static void test_nobody(void **state)
{
	(void)state;
	struct notifier n;

	assert_int_equal(notify_open(&n, NULL), 0);
	assert_int_equal(n.fd, -1);
	assert_int_equal(notify_send(&n, "READY=1"), 0);
	assert_int_equal(notify_open(&n, ""), 0);
	assert_int_equal(n.fd, -1);
	notify_close(&n);
}

/* A receiver that went away is an error for the caller to log, not a crash
 * and not a SIGPIPE. */
static void test_receiver_gone(void **state)
{
	(void)state;
	char dir[] = "/tmp/oomkit-test-notify-XXXXXX", path[128];
	struct notifier n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	close(bind_receiver(path));
	assert_int_equal(notify_open(&n, path), 1);
	assert_int_equal(notify_send(&n, "READY=1"), -ECONNREFUSED);
	unlink(path);
	assert_int_equal(notify_send(&n, "READY=1"), -ENOENT);
	notify_close(&n);
	rmdir(dir);
}

static void test_bad_addresses(void **state)
{
	(void)state;
	char longest_path[108], too_long_path[109], longest_abstract[109], too_long_abstract[110];
	struct notifier n;

	/* sun_path holds 108 bytes: a path and its NUL, or '\0' and a name. */
	memset(longest_path, 'a', sizeof(longest_path));
	longest_path[0] = '/';
	longest_path[107] = '\0';
	memcpy(too_long_path, longest_path, 107);
	too_long_path[107] = 'a';
	too_long_path[108] = '\0';
	memset(longest_abstract, 'a', sizeof(longest_abstract));
	longest_abstract[0] = '@';
	longest_abstract[108] = '\0';
	memcpy(too_long_abstract, longest_abstract, 108);
	too_long_abstract[108] = 'a';
	too_long_abstract[109] = '\0';

	static const struct {
		const char *address;
		int r;
	} cases[] = {
	    {"relative/notify", -EINVAL},
	    {"notify", -EINVAL},
	    {"@", -EINVAL},
	    {"vsock:2:1234", -EINVAL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = notify_open(&n, cases[i].address);
		if (r != cases[i].r)
			fail_msg("'%s': %d, wanted %d", cases[i].address, r, cases[i].r);
		assert_int_equal(n.fd, -1);
	}
	assert_int_equal(notify_open(&n, too_long_path), -ENAMETOOLONG);
	assert_int_equal(n.fd, -1);
	assert_int_equal(notify_open(&n, too_long_abstract), -ENAMETOOLONG);
	assert_int_equal(n.fd, -1);
	assert_int_equal(notify_open(&n, longest_path), 1);
	notify_close(&n);
	assert_int_equal(notify_open(&n, longest_abstract), 1);
	notify_close(&n);
}

static void test_watchdog(void **state)
{
	(void)state;
	static const struct {
		const char *usec, *pid;
		int r;
		uint64_t want;
	} cases[] = {
	    {"30000000", NULL, 1, 30000000},
	    {"30000000", "", 1, 30000000},
	    {"30000000", "4242", 1, 30000000}, /* for us: self is 4242 below */
	    {"30000000", "4243", 0, 0},	       /* for another process */
	    {NULL, NULL, 0, 0},
	    {"", "4242", 0, 0},
	    {"0", NULL, 0, 0},
	    {"1", NULL, 1, 1},
	    {"18446744073709551615", NULL, 1, UINT64_MAX},
	    {"18446744073709551616", NULL, -EINVAL, 0},
	    {"-1", NULL, -EINVAL, 0},
	    {"30s", NULL, -EINVAL, 0},
	    {" 30", NULL, -EINVAL, 0},
	    {"30000000", "abc", -EINVAL, 0},
	    {"30000000", "0", -EINVAL, 0},
	    {"30000000", "99999999999", -EINVAL, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t usec = 7;
		int r = notify_watchdog(cases[i].usec, cases[i].pid, 4242, &usec);
		if (r != cases[i].r)
			fail_msg("case %zu (%s, %s): %d, wanted %d", i,
				 cases[i].usec ? cases[i].usec : "unset",
				 cases[i].pid ? cases[i].pid : "unset", r, cases[i].r);
		assert_int_equal(usec, cases[i].r == 1 ? cases[i].want : 7);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path),	  cmocka_unit_test(test_abstract),
	    cmocka_unit_test(test_nobody),	  cmocka_unit_test(test_receiver_gone),
	    cmocka_unit_test(test_bad_addresses), cmocka_unit_test(test_watchdog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
