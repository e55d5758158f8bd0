/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.c - the notification protocol of sd_notify(3): each state is one
 * datagram on an AF_UNIX socket whose address the service manager puts in
 * $NOTIFY_SOCKET, a path or, after a leading '@', a name in the abstract
 * namespace.  The manager learns the sender from the credentials the kernel
 * attaches, so nothing but the text is sent.  The socket is made once at
 * start; a send afterwards is one sendto(2).
 */
#include "base/notify.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int notify_open(struct notifier *n, const char *address)
{
	size_t len = address ? strlen(address) : 0;

	n->fd = -1;
	if (len == 0)
		return 0;
	if (address[0] != '/' && address[0] != '@')
		return -EINVAL;
	if (len == 1 && address[0] == '@')
		return -EINVAL;
	/* A path needs its NUL; an abstract name has none but starts with one. */
	if (len >= sizeof(n->addr.sun_path) + (address[0] == '@'))
		return -ENAMETOOLONG;
	memset(&n->addr, 0, sizeof(n->addr));
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, address, len);
	if (address[0] == '@') {
		n->addr.sun_path[0] = '\0';
		n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	} else {
		n->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	}
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return n->fd < 0 ? -errno : 1;
}

int notify_send(const struct notifier *n, const char *state)
{
	size_t len = strlen(state);
	ssize_t r;

	if (n->fd < 0)
		return 0;
	do
		r = sendto(n->fd, state, len, MSG_NOSIGNAL, (const struct sockaddr *)&n->addr, n->addr_len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EMSGSIZE;
}

void notify_close(struct notifier *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int notify_watchdog(const char *usec, const char *pid, pid_t self, uint64_t *ret_usec)
{
	uint64_t u, p;

	if (!usec || !*usec)
		return 0;
	if (parse_u64(usec, &u) < 0)
		return -EINVAL;
	/* WATCHDOG_PID names the process the pings are wanted from: a child that
	 * inherited the environment must not answer for its parent. */
	if (pid && *pid) {
		if (parse_u64(pid, &p) < 0 || p == 0 || p > INT_MAX)
			return -EINVAL;
		if ((pid_t)p != self)
			return 0;
	}
	if (u == 0)
		return 0;
	*ret_usec = u;
	return 1;
}
