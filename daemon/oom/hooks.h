/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hooks.h - the jobs' commands (before_kill, after_kill, shed_command),
 * run by the hook runner (hook-runner.c), a small program exec'd at
 * start, before the daemon cuts its privileges: the daemon itself never
 * forks, execs or waits for a hook.  It sends a fixed-size RUN over a
 * socket pair and goes on; the runner's DONE comes back through the loop,
 * and so does a hook's output, escaped, into the log.
 *
 * Each hook runs in a memcg of its own, one of HOOKPROTO_SLOTS slots below
 * MACHINE-hooks (a sibling of the machine and of the daemon's reserve), each
 * limited to hook_memory, with the kernel OOM killer on: a hook that runs
 * out is the kernel's to kill there, and nothing of the daemon's waits for
 * it.  A hook is killed at its timeout (the runner's), and if the runner
 * does not answer a second after that, the hook is taken as lost (the
 * daemon's own timer): whoever waits for a hook waits a bounded time.
 * Nothing here allocates after hooks_setup().
 */
#ifndef OOMKITD_HOOKS_H
#define OOMKITD_HOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "common/hookproto.h"
#include "base/loop.h"
#include "oomkit.h"
#include "report/report.h"

/* How a hook run ended, for the report and its owner. */
struct hook_result {
	enum config_hook hook;
	enum hookproto_how how;
	int code; /* exit status, signal, or errno (HOOK_NOT_RUN) */
	pid_t pid;
	uint64_t duration_ms, timeout_ms;
};

/* What a hook is told, in its environment (every value escaped). */
struct hook_env {
	const char *job;
	const char *cgroup; /* relative to the memory mount */
	pid_t pid;	    /* 0: no victim (shed_command) */
	const char *comm;
	uint64_t rss_bytes;
	const char *reason;
	const char *report; /* NULL: none */
};

/* Called once per started hook, from the loop, when it has ended. */
typedef void (*hook_done_fn)(void *data, uint64_t token, const struct hook_result *res);

struct hook_run {
	bool used;
	uint32_t id;
	enum config_hook hook;
	hook_done_fn fn;
	void *data;
	uint64_t token;
	uint64_t timeout_ms, lost_ns;
};

struct hooks {
	int sock; /* -1: no runner */
	pid_t pid;
	oomkit_ctx *ctx;
	struct loop *loop;
	int source;
	struct loop_timer timer;
	char rel[CONFIG_PATH_MAX + 8]; /* MACHINE-hooks */
	bool slots_ready;
	uint64_t memory_bytes;
	uint32_t next_id;
	struct hook_run runs[HOOKPROTO_SLOTS];
	struct hookproto_run msg; /* the one being sent */
};

/* Before privileges are cut: the runner exec'd from program (NULL: the
 * installed one, or $OOMKIT_HOOK_RUNNER), its READY awaited.  A runner that
 * does not start is logged (an error if the configuration has hooks:
 * needed), and every hook is then "not run". */
void hooks_start(struct hooks *h, const char *program, bool needed);

/* Once liboomkit runs: the slots' memcgs below machine_rel-hooks are made
 * and handed to the runner, and its socket joins the loop.  0 or -errno
 * (logged; hooks then do not run, the daemon does). */
int hooks_setup(struct hooks *h, oomkit_ctx *ctx, struct loop *loop, const char *machine_rel,
		uint64_t memory_bytes);
/* A reload's hook_memory. */
void hooks_configure(struct hooks *h, uint64_t memory_bytes);

/* Runs command (a job's hook) with env for at most timeout_ms; fn(data,
 * token, ...) is called when it has ended, never from within this call.
 * 0: started; -errno: not started (logged; fn is not called). */
int hooks_run(struct hooks *h, enum config_hook hook, const char *command, const struct hook_env *env,
	      uint64_t timeout_ms, hook_done_fn fn, void *data, uint64_t token);

/* Forgets the callbacks for data (its owner is gone): their hooks run on. */
void hooks_forget(struct hooks *h, void *data, uint64_t token);

/* "exited 0", "killed by SIGSEGV", "timed out after 2s", "not run: ...". */
void hooks_describe(const struct hook_result *res, char *buf, size_t len);
const char *hooks_name(enum config_hook hook);

/* The hook runner hooks_start(h, NULL, ...) runs: $OOMKIT_HOOK_RUNNER, else
 * the installed one. */
const char *hooks_runner(void);
/* The run as the report tells it. */
void hooks_record(const struct hook_result *res, struct report_hook *out);

/* At a stop: the runner is told by the socket's close and kills what runs;
 * the slots' memcgs are removed when empty. */
void hooks_stop(struct hooks *h);

#endif
