/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hooks.c - see hooks.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "oom/hooks.h"
#include "json.h"
#include "base/log.h"
#include "common/value.h"

#ifndef OOMKIT_HOOK_RUNNER_PROGRAM
#define OOMKIT_HOOK_RUNNER_PROGRAM "/usr/lib/oomkit/oomkit-hook-runner"
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define READY_TIMEOUT_MS 5000
/* How long after a hook's timeout the runner has to say how it ended. */
#define LOST_AFTER_NS (1000ull * NS_PER_MS)

static void on_sock(void *data, uint32_t index, uint32_t events);
static void on_timer(void *data, uint64_t now);

const char *hooks_name(enum config_hook hook)
{
	static const char *const names[] = {"before_kill", "after_kill", "shed_command"};
	return hook < HOOK__COUNT ? names[hook] : "hook";
}

static const char *runner_program(const char *program)
{
	const char *p = program ? program : secure_getenv("OOMKIT_HOOK_RUNNER");
	return p && p[0] ? p : OOMKIT_HOOK_RUNNER_PROGRAM;
}

const char *hooks_runner(void)
{
	return runner_program(NULL);
}

static int wait_ready(int sock)
{
	struct hookproto_done m;
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int r = poll(&p, 1, READY_TIMEOUT_MS);

	if (r <= 0)
		return r == 0 ? -ETIMEDOUT : -errno;
	ssize_t n = recv(sock, &m, sizeof(m), MSG_DONTWAIT);
	return n == (ssize_t)sizeof(m) && m.op == HOOKPROTO_READY ? 0 : -ECHILD;
}

void hooks_start(struct hooks *h, const char *program, bool needed)
{
	const char *prog = runner_program(program);
	char *argv[] = {"oomkit-hook-runner", NULL}, *envp[] = {NULL};
	int sv[2], r;

	memset(h, 0, sizeof(*h));
	h->sock = -1;
	/* A runner that is not there is named as such, not as the child's
	 * exit (which would read "No child processes"). */
	if (access(prog, X_OK) < 0) {
		log_at(needed ? LOG_LEVEL_ERR : LOG_LEVEL_NOTICE,
		       "hooks: the hook runner %s: %s; hooks will not run", prog, strerror(errno));
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_err("hooks: no socket pair for the hook runner: %s; hooks will not run", strerror(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (dup2(sv[1], HOOKPROTO_FD) < 0)
			_exit(127);
		syscall(SYS_close_range, (unsigned)HOOKPROTO_FD + 1, ~0u, 0u);
		execve(prog, argv, envp);
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0 || (r = wait_ready(sv[0])) < 0) {
		r = pid < 0 ? -errno : r;
		log_at(needed ? LOG_LEVEL_ERR : LOG_LEVEL_NOTICE,
		       "hooks: the hook runner %s did not start: %s; hooks will not run", prog, strerror(-r));
		if (pid > 0) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
		}
		close(sv[0]);
		return;
	}
	h->sock = sv[0];
	h->pid = pid;
	log_info("hooks: runner %d started (%s)", (int)pid, prog);
}

static int set_limits(struct hooks *h, bool create)
{
	char slot[sizeof(h->rel) + 16];
	int r;

	r = create ? oomkit_cgroup_create(h->ctx, h->rel, h->memory_bytes * HOOKPROTO_SLOTS)
		   : oomkit_set_limit(h->ctx, h->rel, h->memory_bytes * HOOKPROTO_SLOTS);
	for (unsigned i = 0; i < HOOKPROTO_SLOTS && r >= 0; i++) {
		snprintf(slot, sizeof(slot), "%s/%u", h->rel, i);
		r = create ? oomkit_cgroup_create(h->ctx, slot, h->memory_bytes)
			   : oomkit_set_limit(h->ctx, slot, h->memory_bytes);
	}
	return r < 0 ? r : 0;
}

/* Each slot's process list, to the runner. */
static int send_slots(struct hooks *h)
{
	struct hookproto_slots m = {.op = HOOKPROTO_SLOTS_MSG, .n = HOOKPROTO_SLOTS};
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int) * HOOKPROTO_SLOTS)];
	} control;
	int fds[HOOKPROTO_SLOTS], r = 0;
	char slot[sizeof(h->rel) + 16];
	unsigned n = 0;

	for (; n < HOOKPROTO_SLOTS; n++) {
		snprintf(slot, sizeof(slot), "%s/%u", h->rel, n);
		if ((fds[n] = oomkit_cgroup_procs_fd(h->ctx, slot)) < 0) {
			r = fds[n];
			break;
		}
	}
	if (r == 0) {
		struct iovec iov = {&m, sizeof(m)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = &control,
				    .msg_controllen = sizeof(control)};
		memset(&control, 0, sizeof(control));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(c), fds, sizeof(fds));
		if (sendmsg(h->sock, &mh, MSG_NOSIGNAL) < 0)
			r = -errno;
	}
	while (n-- > 0)
		close(fds[n]);
	return r;
}

int hooks_setup(struct hooks *h, oomkit_ctx *ctx, struct loop *loop, const char *machine_rel,
		uint64_t memory_bytes)
{
	int r;

	h->ctx = ctx;
	h->loop = loop;
	h->memory_bytes = memory_bytes;
	h->timer = (struct loop_timer){.fn = on_timer, .data = h};
	if ((r = loop_add_timer(loop, &h->timer)) < 0)
		return r;
	if (h->sock < 0)
		return 0;
	snprintf(h->rel, sizeof(h->rel), "%s-hooks", machine_rel);
	if ((r = set_limits(h, true)) < 0 || (r = send_slots(h)) < 0) {
		log_err("hooks: cannot prepare the hooks' memcgs %s: %s; hooks will not run", h->rel,
			strerror(-r));
		return 0;
	}
	if ((h->source = loop_add_source(loop, on_sock, h)) < 0 ||
	    (r = loop_add_fd(loop, h->sock, h->source, 0, EPOLLIN)) < 0) {
		log_err("hooks: cannot listen to the hook runner: %s; hooks will not run", strerror(-r));
		return 0;
	}
	h->slots_ready = true;
	char size[32];
	value_format_bytes(memory_bytes, size, sizeof(size));
	log_info("hooks: %d slots below %s, %s each", HOOKPROTO_SLOTS, h->rel, size);
	return 0;
}

void hooks_configure(struct hooks *h, uint64_t memory_bytes)
{
	int r;

	if (!h->slots_ready || memory_bytes == h->memory_bytes)
		return;
	h->memory_bytes = memory_bytes;
	if ((r = set_limits(h, false)) < 0)
		log_warning("hooks: cannot set the hooks' memcgs' limit: %s", strerror(-r));
}

/* "KEY=value\0", the value escaped, appended to the message's environment. */
static void put_env(struct hookproto_run *m, const char *key, const char *value)
{
	size_t klen = strlen(key), room = sizeof(m->env) - m->env_len;
	size_t vlen = strlen(value);

	if (klen + 2 + 4 * vlen + 1 > room)
		return; /* cannot happen with the sizes the daemon uses; never cut */
	memcpy(m->env + m->env_len, key, klen);
	m->env[m->env_len + klen] = '=';
	m->env_len += (uint32_t)klen + 1;
	m->env_len += (uint32_t)oomkit__escape_text(m->env + m->env_len, room - klen - 1, value, vlen) + 1;
}

static void put_env_u64(struct hookproto_run *m, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	put_env(m, key, buf);
}

static void fill_env(struct hooks *h, struct hookproto_run *m, enum config_hook hook,
		     const struct hook_env *env)
{
	char cgroup[CONFIG_PATH_MAX * 2];

	snprintf(cgroup, sizeof(cgroup), "%s/%s", oomkit_memory_root(h->ctx), env->cgroup ? env->cgroup : "");
	put_env(m, "OOMKIT_HOOK", hooks_name(hook));
	put_env(m, "OOMKIT_JOB", env->job ? env->job : "");
	put_env(m, "OOMKIT_CGROUP", cgroup);
	if (env->pid > 0) {
		put_env_u64(m, "OOMKIT_PID", (uint64_t)env->pid);
		put_env(m, "OOMKIT_COMM", env->comm ? env->comm : "");
		put_env_u64(m, "OOMKIT_RSS_BYTES", env->rss_bytes);
	}
	put_env(m, "OOMKIT_REASON", env->reason ? env->reason : "");
	if (env->report)
		put_env(m, "OOMKIT_REPORT", env->report);
}

static void arm(struct hooks *h)
{
	h->timer.due_ns = 0;
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (h->runs[i].used && (!h->timer.due_ns || h->runs[i].lost_ns < h->timer.due_ns))
			h->timer.due_ns = h->runs[i].lost_ns;
}

int hooks_run(struct hooks *h, enum config_hook hook, const char *command, const struct hook_env *env,
	      uint64_t timeout_ms, hook_done_fn fn, void *data, uint64_t token)
{
	struct hookproto_run *m = &h->msg;
	unsigned slot = 0;

	if (!h->slots_ready || h->sock < 0) {
		log_warning("%s: %s not run: no hook runner", env->job ? env->job : "machine",
			    hooks_name(hook));
		return -ENOTCONN;
	}
	while (slot < HOOKPROTO_SLOTS && h->runs[slot].used)
		slot++;
	if (slot == HOOKPROTO_SLOTS) {
		log_warning("%s: %s not run: %d hooks run already", env->job ? env->job : "machine",
			    hooks_name(hook), HOOKPROTO_SLOTS);
		return -EBUSY;
	}
	memset(m, 0, sizeof(*m));
	m->op = HOOKPROTO_RUN;
	m->id = ++h->next_id;
	m->slot = slot;
	m->timeout_ms = (uint32_t)(timeout_ms < UINT32_MAX ? timeout_ms : UINT32_MAX);
	snprintf(m->command, sizeof(m->command), "%s", command);
	fill_env(h, m, hook, env);
	if (send(h->sock, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		int r = -errno;
		log_warning("%s: %s not run: the hook runner does not take it: %s",
			    env->job ? env->job : "machine", hooks_name(hook), strerror(-r));
		return r;
	}
	h->runs[slot] = (struct hook_run){.used = true,
					  .id = m->id,
					  .hook = hook,
					  .fn = fn,
					  .data = data,
					  .token = token,
					  .timeout_ms = timeout_ms,
					  .lost_ns = now_ns() + timeout_ms * NS_PER_MS + LOST_AFTER_NS};
	arm(h);
	return 0;
}

void hooks_forget(struct hooks *h, void *data, uint64_t token)
{
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (h->runs[i].used && h->runs[i].data == data && h->runs[i].token == token)
			h->runs[i].fn = NULL;
}

void hooks_describe(const struct hook_result *res, char *buf, size_t len)
{
	char name[32], t[32];

	switch (res->how) {
	case HOOK_EXITED:
		snprintf(buf, len, "exited %d", res->code);
		break;
	case HOOK_SIGNALLED:
		value_format_signal(res->code, name, sizeof(name));
		snprintf(buf, len, "killed by %s", name);
		break;
	case HOOK_TIMED_OUT:
		value_format_duration(res->timeout_ms, t, sizeof(t));
		snprintf(buf, len, "timed out after %s: killed with its process group", t);
		break;
	case HOOK_NOT_RUN:
		snprintf(buf, len, "not run: %s", strerror(res->code));
		break;
	case HOOK_LOST:
		snprintf(buf, len, "no answer from the hook runner");
		break;
	}
}

void hooks_record(const struct hook_result *res, struct report_hook *out)
{
	static const char *const ended[] = {"exited", "signal", "timeout", "not run", "lost"};

	out->hook = hooks_name(res->hook);
	out->ended = res->how <= HOOK_LOST ? ended[res->how] : "lost";
	out->code = res->code;
	out->pid = res->pid;
	out->duration_ms = res->duration_ms;
	out->timeout_ms = res->timeout_ms;
}

/* A run is over: its slot is free, its owner told. */
static void end_run(struct hooks *h, struct hook_run *run, const struct hook_result *res)
{
	hook_done_fn fn = run->fn;
	void *data = run->data;
	uint64_t token = run->token;
	char how[96];

	hooks_describe(res, how, sizeof(how));
	log_at(res->how == HOOK_EXITED && res->code == 0 ? LOG_LEVEL_INFO : LOG_LEVEL_WARNING,
	       "hook %s %d: %s", hooks_name(res->hook), (int)res->pid, how);
	*run = (struct hook_run){0};
	arm(h);
	if (fn)
		fn(data, token, res);
}

static struct hook_run *find(struct hooks *h, uint32_t id)
{
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (h->runs[i].used && h->runs[i].id == id)
			return &h->runs[i];
	return NULL;
}

static void runner_gone(struct hooks *h)
{
	log_err("hooks: the hook runner %d is gone; hooks will not run", (int)h->pid);
	loop_del_fd(h->loop, h->sock);
	close(h->sock);
	h->sock = -1;
	h->slots_ready = false;
	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (h->runs[i].used) {
			struct hook_result res = {.hook = h->runs[i].hook, .how = HOOK_LOST};
			end_run(h, &h->runs[i], &res);
		}
}

static void on_message(struct hooks *h, const void *buf, ssize_t n)
{
	const struct hookproto_done *d = buf;
	const struct hookproto_output *o = buf;
	struct hook_run *run;

	if (n == (ssize_t)sizeof(*d) && d->op == HOOKPROTO_DONE && (run = find(h, d->id))) {
		struct hook_result res = {.hook = run->hook,
					  .how = (enum hookproto_how)d->how,
					  .code = d->code,
					  .pid = d->pid,
					  .duration_ms = d->duration_ms,
					  .timeout_ms = run->timeout_ms};
		end_run(h, run, &res);
	} else if (n == (ssize_t)sizeof(*o) && o->op == HOOKPROTO_OUTPUT && (run = find(h, o->id))) {
		/* Escaped by the runner; cut at its end whatever it sent. */
		log_info("hook %s %d: %.*s", hooks_name(run->hook), (int)o->pid,
			 (int)strnlen(o->line, sizeof(o->line)), o->line);
	}
}

static void on_sock(void *data, uint32_t index, uint32_t events)
{
	struct hooks *h = data;
	union {
		struct hookproto_done d;
		struct hookproto_output o;
	} m;

	(void)index;
	for (;;) {
		ssize_t n = recv(h->sock, &m, sizeof(m), MSG_DONTWAIT);
		if (n > 0) {
			on_message(h, &m, n);
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR) || (events & (EPOLLHUP | EPOLLERR)))
			runner_gone(h);
		return;
	}
}

static void on_timer(void *data, uint64_t now)
{
	struct hooks *h = data;

	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++)
		if (h->runs[i].used && now >= h->runs[i].lost_ns) {
			struct hook_result res = {
			    .hook = h->runs[i].hook, .how = HOOK_LOST, .timeout_ms = h->runs[i].timeout_ms};
			end_run(h, &h->runs[i], &res);
		}
	arm(h);
}

/* A runner told to go, and its hooks gone, within about a second. */
static void reap_runner(struct hooks *h)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 100 && h->pid > 0; i++) {
		if (waitpid(h->pid, NULL, WNOHANG) != 0)
			return;
		nanosleep(&ts, NULL);
	}
	(void)kill(h->pid, SIGKILL);
	(void)waitpid(h->pid, NULL, 0);
}

static void remove_slots(struct hooks *h)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	char slot[sizeof(h->rel) + 16];
	int r = 0;

	for (unsigned i = 0; i < HOOKPROTO_SLOTS; i++) {
		snprintf(slot, sizeof(slot), "%s/%u", h->rel, i);
		/* A hook killed as the runner went may take a moment to be gone. */
		for (int tries = 0; tries < 50 && (r = oomkit_cgroup_remove(h->ctx, slot)) == -EBUSY; tries++)
			nanosleep(&ts, NULL);
		if (r < 0 && r != -ENOENT)
			log_info("hooks: the memcg %s: %s; left as it is", slot, strerror(-r));
	}
	if ((r = oomkit_cgroup_remove(h->ctx, h->rel)) < 0 && r != -ENOENT)
		log_info("hooks: the memcg %s: %s; left as it is", h->rel, strerror(-r));
}

void hooks_stop(struct hooks *h)
{
	if (h->sock >= 0) {
		if (h->slots_ready)
			loop_del_fd(h->loop, h->sock);
		close(h->sock);
		h->sock = -1;
	}
	if (h->pid > 0)
		reap_runner(h);
	h->pid = 0;
	if (h->ctx && h->rel[0])
		remove_slots(h);
	h->slots_ready = false;
}
