/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run-target.c - the process `oomkit run` moves (run-target.h).
 */
#include "control/run-target.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scope/sdbus.h"

bool run_target_exited(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return poll(&p, 1, 0) != 0;
}

/* The real, effective and saved uids of a process (/proc/PID/status). */
static int process_uids(pid_t pid, uid_t ret[3])
{
	char path[64], buf[2048];
	unsigned u[3];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	const char *line = strstr(buf, "\nUid:");
	if (!line || sscanf(line, "\nUid: %u %u %u", &u[0], &u[1], &u[2]) != 3)
		return -EIO;
	for (int i = 0; i < 3; i++)
		ret[i] = u[i];
	return 0;
}

int run_target_open(int conn_pidfd, pid_t conn_pid, pid_t req_sender, uid_t req_sender_uid, uid_t uid,
		    pid_t *ret_pid)
{
	if (conn_pidfd >= 0) {
		int fd = fcntl(conn_pidfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		*ret_pid = conn_pid;
		return fd;
	}
	if (req_sender <= 0)
		return -EBADMSG;
	if (req_sender_uid != uid)
		return -EPERM;
	int fd = (int)syscall(SYS_pidfd_open, req_sender, 0);
	if (fd < 0)
		return -errno;
	*ret_pid = req_sender;
	return fd;
}

/* Whether the process behind pidfd is alive and entirely uid's (root's peer: any). */
int run_target_check(int pidfd, pid_t pid, uid_t uid)
{
	uid_t ids[3] = {(uid_t)-1, (uid_t)-1, (uid_t)-1};

	if (run_target_exited(pidfd))
		return -ESRCH;
	int r = process_uids(pid, ids);
	/* Alive after the read: the status read was this process's, not a reuser's. */
	if (r < 0 || run_target_exited(pidfd))
		return r < 0 ? r : -ESRCH;
	if (uid != 0 && (ids[0] != uid || ids[1] != uid || ids[2] != uid))
		return -EPERM;
	return 0;
}

/* The transient scope for pid in job j: the first of its patterns that
 * can name one (sdbus_scope_for()). */
bool run_target_scope_name(const struct config_job *j, pid_t pid, char *unit, size_t unit_len, char *slice,
			   size_t slice_len)
{
	for (unsigned i = 0; i < j->n_cgroups; i++)
		if (sdbus_scope_for(j->cgroups[i].pattern, pid, unit, unit_len, slice, slice_len))
			return true;
	return false;
}
