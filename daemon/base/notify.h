/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.h - the service manager's notification protocol (sd_notify(3)),
 * spoken natively: a state such as "READY=1" is one datagram to the AF_UNIX
 * socket named by $NOTIFY_SOCKET.  No library: libsystemd and what it loads
 * would be locked in memory by the daemon and its guardian for two calls.
 */
#ifndef OOMKITD_NOTIFY_H
#define OOMKITD_NOTIFY_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct notifier {
	int fd; /* -1: nobody to notify */
	struct sockaddr_un addr;
	socklen_t addr_len;
};

/* Opens a datagram socket for address (the value of $NOTIFY_SOCKET: an
 * absolute path, or '@' and a name in the abstract namespace).  1 when there
 * is a receiver to notify, 0 when address is NULL or empty (n->fd stays -1),
 * -EINVAL or -ENAMETOOLONG for an address that cannot be one, -errno if no
 * socket can be made. */
int notify_open(struct notifier *n, const char *address);

/* Sends state (one or more "KEY=VALUE" lines) as one datagram: 0, 0 when
 * there is nobody to notify, or -errno.  Allocates nothing. */
int notify_send(const struct notifier *n, const char *state);

void notify_close(struct notifier *n);

/* Whether the service manager wants watchdog pings, from the values of
 * $WATCHDOG_USEC and $WATCHDOG_PID: 1 and *ret_usec when usec is a positive
 * number and pid is unset or names self; 0 when there is no watchdog for
 * this process; -EINVAL when a value is not a number. */
int notify_watchdog(const char *usec, const char *pid, pid_t self, uint64_t *ret_usec);

#endif
