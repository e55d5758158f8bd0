/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run-target.h - the process `oomkit run` moves into a job: found as a
 * pidfd (the connecting process, or the sender of the request), checked to
 * be alive and entirely the client's uid's, and the systemd scope it would
 * start in for a job of patterns.  The control socket's request handling
 * (control.c) says what comes of it.
 */
#ifndef OOMKITD_RUN_TARGET_H
#define OOMKITD_RUN_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"

/* Whether the process behind pidfd has exited. */
bool run_target_exited(int pidfd);

/* The process to move, as a new pidfd: conn_pidfd (the connecting process's,
 * conn_pid) where the kernel offered one, else a pidfd of req_sender, the
 * request's sender, whose uid must be uid.  Returns the pidfd and sets
 * *ret_pid; -ESRCH: it is gone; -EBADMSG: the request was sent by more than
 * one process (req_sender <= 0); -EPERM: by another uid. */
int run_target_open(int conn_pidfd, pid_t conn_pid, pid_t req_sender, uid_t req_sender_uid, uid_t uid,
		    pid_t *ret_pid);

/* 0 if the process behind pidfd (pid) is alive and its real, effective and
 * saved uids are all uid (root's peer: any); -ESRCH if it has exited, -EPERM
 * if it is not uid's alone, -errno if its status cannot be read. */
int run_target_check(int pidfd, pid_t pid, uid_t uid);

/* The transient scope (unit, and the slice it goes in) for pid in job j: the
 * first of its patterns that can name one (sdbus_scope_for()). */
bool run_target_scope_name(const struct config_job *j, pid_t pid, char *unit, size_t unit_len, char *slice,
			   size_t slice_len);

#endif
