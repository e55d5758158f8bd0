/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hookproto.h - what oomkitd and its hook runner (hook-runner.c, the program
 * oomkit-hook-runner) say to each other over their SOCK_SEQPACKET pair:
 * fixed-size messages, one per datagram, so that neither side ever parses a
 * length it was sent or allocates to read one.
 *
 *   daemon -> runner  SLOTS  with one fd per slot (SCM_RIGHTS): each slot's
 *                            memcg's process list (oomkit_cgroup_procs_fd()),
 *                            which a hook's process writes "0" to before it
 *                            execs; sent again after a reload
 *                     RUN    one command: its words as the file wrote them,
 *                            its environment, its slot and its timeout
 *   runner -> daemon  READY  once, at start
 *                     DONE   how a RUN ended: exit status, signal, timeout,
 *                            or why it could not run
 *                     OUTPUT a line the hook wrote, already escaped
 */
#ifndef OOMKITD_HOOKPROTO_H
#define OOMKITD_HOOKPROTO_H

#include <stdint.h>

#include "common/value.h"

#define HOOKPROTO_FD 3	  /* the runner's end of the pair */
#define HOOKPROTO_SLOTS 8 /* hooks that may run at once, each in a memcg of its own */
#define HOOKPROTO_ENV_MAX 2048
#define HOOKPROTO_LINE_MAX 240

enum hookproto_op {
	HOOKPROTO_READY = 1,
	HOOKPROTO_SLOTS_MSG,
	HOOKPROTO_RUN,
	HOOKPROTO_DONE,
	HOOKPROTO_OUTPUT,
};

/* How a hook ended. */
enum hookproto_how {
	HOOK_EXITED = 0, /* code: its exit status */
	HOOK_SIGNALLED,	 /* code: the signal (a crash, or its memcg's OOM killer) */
	HOOK_TIMED_OUT,	 /* killed (its process group) at its timeout */
	HOOK_NOT_RUN,	 /* code: the errno of what failed (execve, the memcg, fork) */
	HOOK_LOST,	 /* the runner did not answer in time, or is gone (the daemon's own) */
};

struct hookproto_slots {
	uint32_t op;
	uint32_t n; /* fds that come with it, slot 0 first */
};

struct hookproto_run {
	uint32_t op;
	uint32_t id;
	uint32_t slot;
	uint32_t timeout_ms;
	char command[VALUE_COMMAND_MAX]; /* checked by value_parse_command() */
	uint32_t env_len;		 /* "KEY=value\0KEY=value\0" */
	char env[HOOKPROTO_ENV_MAX];
};

struct hookproto_done {
	uint32_t op;
	uint32_t id;
	int32_t pid; /* 0: none was started */
	uint32_t how;
	int32_t code;
	uint32_t duration_ms;
};

struct hookproto_output {
	uint32_t op;
	uint32_t id;
	int32_t pid;
	char line[HOOKPROTO_LINE_MAX]; /* escaped (json.h), NUL-terminated */
};

#endif
