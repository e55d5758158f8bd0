/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-faults.c - liboomkit under faults, on real memcgs:
 *   - the handling process SIGKILLed at a different moment of each of 100
 *     OOMs (inside oomkit_take_over(), right after it, while the hog grows,
 *     at the event, in the middle of the handler, hung in it, after it
 *     returned): no memcg is ever left blocked, every guardian exits;
 *   - the guardian SIGKILLed 20 times while memcgs are held: the handler
 *     restarts it each time without leaking, and the last one releases every
 *     memcg when the handler dies;
 *   - a watched cgroup removed by the handler's own callback, or by another
 *     process while the handler walks it: the handler carries on, GONE
 *     arrives for every watch, no fd is leaked;
 *   - processes exiting while the handler lists and reads them: -ESRCH and
 *     nothing else; reports stay valid JSON and count the vanished;
 *   - cgroup files vanishing between and during reads (a fixture tree): a
 *     clear -errno, nothing written to ret_*, no crash.
 * Each part prints its figure on one line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../helpers/jsoncheck.h"
#include "oomkit.h"
#include "testhelp.h"
#include "testlib.h"

/* ------------------------------------------------------------ helpers */

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Spins for us microseconds: a deliberate, trial-dependent offset of the
 * moment a SIGKILL lands, not a wait for anything. */
static void jitter(unsigned us)
{
	uint64_t end = now_us() + us;
	while (now_us() < end)
		;
}

/* A forked child of the test must not run testlib's cleanup on a signal:
 * that would tear down the test's cgroups from under it. */
static void child_init(void)
{
	const int sigs[] = {SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGALRM};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	/* A test that fails leaves its handler running: it must not outlive
	 * the test, holding its memcg and the output meson waits on. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static int fd_count(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	/* opendir's own fd, when counting ourselves. */
	return pid == getpid() ? n - 1 : n;
}

/* Reads len bytes from fd within timeout_ms; false on timeout or EOF. */
static bool read_within(int fd, void *buf, size_t len, int timeout_ms)
{
	uint64_t end = now_us() + (uint64_t)timeout_ms * 1000u;
	size_t got = 0;
	while (got < len) {
		uint64_t now = now_us();
		if (now >= end)
			return false;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int r = poll(&pfd, 1, (int)((end - now) / 1000u) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t k = read(fd, (char *)buf + got, len - got);
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* Reads bytes until c arrives, within timeout_ms. */
static bool wait_byte(int fd, char c, int timeout_ms)
{
	uint64_t end = now_us() + (uint64_t)timeout_ms * 1000u;
	char x;
	while (now_us() < end) {
		int left = (int)((end - now_us()) / 1000u) + 1;
		if (!read_within(fd, &x, 1, left))
			return false;
		if (x == c)
			return true;
	}
	return false;
}

static uint64_t oom_key(const char *cg, const char *key)
{
	return tl_read_key(cg, "memory.oom_control", key);
}

static bool oom_over(void *p)
{
	return oom_key(p, "under_oom") == 0;
}

static bool killer_back(void *p)
{
	return oom_key(p, "oom_kill_disable") == 0;
}

static oomkit_ctx *new_ctx(bool guardian, unsigned max_cgroups)
{
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;
	oomkit_options_init(&o);
	o.guardian = guardian;
	o.max_cgroups = max_cgroups;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	return ctx;
}

static uint64_t start_time_of(oomkit_ctx *ctx, pid_t pid)
{
	struct oomkit_process p;
	assert_int_equal(oomkit_process_info(ctx, pid, &p), 0);
	return p.start_time;
}

/* ================================= a. the handler killed at any moment */

#define TRIALS 100
#define TRIAL_DELAY_MS 60000
/* A memcg still blocked this long after its handler died counts as left
 * blocked: the guardian releases it as soon as the handler dies, and
 * otherwise nothing would until the 60 s delay, if ever. */
#define BLOCKED_AFTER_MS 20000

enum moment {
	IN_TAKEOVER,	 /* somewhere in oomkit_take_over() */
	AFTER_TAKEOVER,	 /* the take-over has just returned; the guardian may not have read it yet */
	DURING_GROWTH,	 /* the hog is growing, no OOM yet */
	AT_EVENT,	 /* the handler has just been called */
	IN_HANDLER,	 /* somewhere in the handler's reads and report */
	HUNG_IN_HANDLER, /* the handler is stuck inside its callback */
	AFTER_RETURN,	 /* the handler said WAIT; the loop is polling the pending OOM */
	N_MOMENTS
};

static const char *const moment_names[N_MOMENTS] = {
    "in take-over",   "after take-over",     "during growth", "at the event",
    "in the handler", "hung in the handler", "after return",
};

struct trial_child {
	int fd; /* to the test: 'S'+guardian pid, 'R' taken over, 'O' called, 'M' work done, 'W' returning */
	int devnull;
	bool hang;
};

static enum oomkit_verdict trial_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct trial_child *c = userdata;
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->under_oom)
		return OOMKIT_WAIT;
	(void)!write(c->fd, "O", 1);
	/* What a handler does before it decides: list, read, report. */
	pid_t pids[64];
	struct oomkit_process p;
	int n = oomkit_cgroup_pids(ctx, ev->cgroup, true, pids, 64);
	for (int i = 0; i < n; i++)
		(void)oomkit_process_info(ctx, pids[i], &p);
	(void)oomkit_write_report(ctx, c->devnull, ev, NULL);
	(void)!write(c->fd, "M", 1);
	if (c->hang)
		for (;;)
			pause();
	(void)!write(c->fd, "W", 1);
	return OOMKIT_WAIT;
}

struct handler_proc {
	pid_t pid;
	pid_t guardian;
	int fd;
};

/* Forks a handling process that takes cg over; returns when it is about to
 * (it has a context, a guardian and a watch). */
static bool start_trial_handler(const char *cg, bool hang, struct handler_proc *h)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_init();
		close(p[0]);
		struct trial_child c = {
		    .fd = p[1], .devnull = open("/dev/null", O_WRONLY | O_CLOEXEC), .hang = hang};
		oomkit_ctx *ctx;
		oomkit_watch *w;
		if (oomkit_new(NULL, &ctx) < 0 || oomkit_watch_oom(ctx, cg, 0, trial_handler, &c, &w) < 0)
			_exit(1);
		char msg[1 + sizeof(pid_t)] = {'S'};
		pid_t g = oomkit_guardian_pid(ctx);
		memcpy(msg + 1, &g, sizeof(g));
		(void)!write(p[1], msg, sizeof(msg));
		if (oomkit_take_over(ctx, w, TRIAL_DELAY_MS) < 0)
			_exit(1);
		(void)!write(p[1], "R", 1);
		oomkit_run(ctx);
		_exit(0);
	}
	close(p[1]);
	char msg[1 + sizeof(pid_t)];
	*h = (struct handler_proc){.pid = pid, .fd = p[0]};
	if (!read_within(h->fd, msg, sizeof(msg), 10000) || msg[0] != 'S')
		return false;
	memcpy(&h->guardian, msg + 1, sizeof(h->guardian));
	return h->guardian > 0;
}

struct trial_tally {
	int blocked;	   /* memcgs left under OOM or with their killer held */
	int guardian_left; /* guardians that outlived their handler */
	int kernel_kills;
	int by_moment[N_MOMENTS];
};

/* Puts a memcg a failed trial left behind back to a clean state. */
static void unblock(const char *cg, pid_t hog)
{
	(void)tl_write(cg, "memory.oom_control", "0");
	kill(hog, SIGKILL);
	(void)tl_wait_exit(hog, 10000);
}

/* Kills the handler at the trial's moment; false if it never got there. */
static bool kill_at_moment(int trial, enum moment m, const char *cg, struct handler_proc *h)
{
	bool ok = true;
	switch (m) {
	case IN_TAKEOVER:
	case AFTER_TAKEOVER:
		break; /* killed before the hog started */
	case DURING_GROWTH:
		ok = tl_wait_usage(cg, (2 + (uint64_t)(trial % 12)) * TL_MIB, 10000);
		break;
	case AT_EVENT:
		ok = wait_byte(h->fd, 'O', 20000);
		break;
	case IN_HANDLER:
		ok = wait_byte(h->fd, 'O', 20000);
		jitter((unsigned)(trial * 53) % 1500u);
		break;
	case HUNG_IN_HANDLER:
		ok = wait_byte(h->fd, 'M', 20000);
		break;
	case AFTER_RETURN:
		ok = wait_byte(h->fd, 'W', 20000);
		jitter((unsigned)(trial * 977) % 30000u);
		break;
	case N_MOMENTS:
		break;
	}
	kill(h->pid, SIGKILL);
	return ok;
}

static void run_trial(const char *cg, int trial, struct trial_tally *t)
{
	enum moment m = (enum moment)(trial % N_MOMENTS);
	uint64_t kills0 = oom_key(cg, "oom_kill");
	struct handler_proc h;
	assert_true(start_trial_handler(cg, m == HUNG_IN_HANDLER, &h));
	if (m == IN_TAKEOVER) {
		/* oomkit_take_over() takes some tens of microseconds. */
		jitter((unsigned)(trial * 7) % 60u);
		kill(h.pid, SIGKILL);
	} else if (m == AFTER_TAKEOVER) {
		assert_true(wait_byte(h.fd, 'R', 10000));
		jitter((unsigned)(trial * 31) % 300u);
		kill(h.pid, SIGKILL);
	} else {
		assert_true(wait_byte(h.fd, 'R', 10000));
	}
	/* 24 MiB in a 16 MiB memcg, slowly enough to be caught growing. */
	pid_t hog = tl_spawn_hog(cg, 24, 256, 1000);
	bool reached = m <= AFTER_TAKEOVER || kill_at_moment(trial, m, cg, &h);
	int st = tl_wait_exit(h.pid, 10000);
	if (st == -1 || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		print_message("trial %d (%s%s): the handler %s: status %#x, state %c\n", trial,
			      moment_names[m], reached ? "" : ", moment missed",
			      st == -1 ? "is still there" : "ended", (unsigned)st,
			      st == -1 ? th_proc_state(h.pid) : '-');
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	int hst = tl_wait_exit(hog, BLOCKED_AFTER_MS);
	bool blocked = hst == -1 || !tl_wait_for(oom_over, (void *)cg, 5000) ||
		       !tl_wait_for(killer_back, (void *)cg, 5000);
	if (blocked) {
		print_message(
		    "trial %d (%s%s): memcg left blocked: hog %s, under_oom %llu, oom_kill_disable %llu\n",
		    trial, moment_names[m], reached ? "" : ", moment missed", hst == -1 ? "alive" : "gone",
		    (unsigned long long)oom_key(cg, "under_oom"),
		    (unsigned long long)oom_key(cg, "oom_kill_disable"));
		t->blocked++;
		t->by_moment[m]++;
		if (hst == -1)
			unblock(cg, hog);
	} else if (WIFSIGNALED(hst) && oom_key(cg, "oom_kill") > kills0) {
		t->kernel_kills++;
	}
	/* The guardian is ours to reap now (we are the subreaper). */
	if (tl_wait_exit(h.guardian, 5000) == -1) {
		char wchan[64] = "?", path[64];
		snprintf(path, sizeof(path), "/proc/%d/wchan", (int)h.guardian);
		(void)th_read_file(path, wchan, sizeof(wchan));
		print_message("trial %d (%s): guardian %d outlived its handler (state %c, in %s)\n", trial,
			      moment_names[m], (int)h.guardian, th_proc_state(h.guardian), wchan);
		t->guardian_left++;
		kill(h.guardian, SIGKILL);
		(void)tl_wait_exit(h.guardian, 5000);
	}
	close(h.fd);
}

static void test_handler_killed_trials(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("trials", 16 * TL_MIB);
	struct trial_tally t = {0};
	for (int i = 0; i < TRIALS; i++)
		run_trial(cg, i, &t);
	print_message("faults: %d trials, %d memcgs left blocked, %d guardians left behind; "
		      "%d resolved by the kernel killer\n",
		      TRIALS, t.blocked, t.guardian_left, t.kernel_kills);
	for (int m = 0; m < N_MOMENTS; m++)
		if (t.by_moment[m])
			print_message("  %s: %d blocked\n", moment_names[m], t.by_moment[m]);
	assert_int_equal(t.blocked, 0);
	assert_int_equal(t.guardian_left, 0);
	/* Every trial ended with the kernel's kill: the only way out once the handler is dead. */
	assert_int_equal(t.kernel_kills, TRIALS);
}

/* ============================== b. the guardian killed again and again */

#define GUARDIAN_KILLS 20

struct restart_child {
	int fd;
};

static enum oomkit_verdict wait_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	(void)ctx;
	struct restart_child *c = userdata;
	if (ev->kind == OOMKIT_EVENT_OOM && ev->own && ev->under_oom)
		(void)!write(c->fd, "O", 1);
	return OOMKIT_WAIT;
}

/* Takes over every cgroup of cgs, then reports its guardian's pid ('G' +
 * pid) whenever it changes. */
static pid_t start_restart_handler(const char *const *cgs, int n, int fd)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid != 0)
		return pid;
	child_init();
	struct restart_child c = {fd};
	oomkit_ctx *ctx;
	oomkit_watch *w;
	if (oomkit_new(NULL, &ctx) < 0)
		_exit(1);
	for (int i = 0; i < n; i++)
		if (oomkit_watch_oom(ctx, cgs[i], 0, wait_handler, &c, &w) < 0 ||
		    oomkit_take_over(ctx, w, 60000) < 0)
			_exit(1);
	pid_t last = 0;
	for (;;) {
		pid_t g = oomkit_guardian_pid(ctx);
		if (g != last) {
			char msg[1 + sizeof(pid_t)] = {'G'};
			memcpy(msg + 1, &g, sizeof(g));
			(void)!write(fd, msg, sizeof(msg));
			last = g;
		}
		if (oomkit_dispatch(ctx, -1) < 0)
			_exit(2);
	}
}

static bool read_guardian(int fd, pid_t *ret)
{
	char msg[1 + sizeof(pid_t)];
	/* An 'O' may come first. */
	if (!wait_byte(fd, 'G', 10000) || !read_within(fd, msg + 1, sizeof(pid_t), 1000))
		return false;
	memcpy(ret, msg + 1, sizeof(*ret));
	return *ret > 0;
}

static bool not_alive(void *p)
{
	return !tl_alive(*(pid_t *)p);
}

static void test_guardian_killed_repeatedly(void **state)
{
	(void)state;
	enum { N = 3 };
	static char names[N][256];
	const char *cgs[N];
	for (int i = 0; i < N; i++) {
		char n[32];
		snprintf(n, sizeof(n), "held-%d", i);
		snprintf(names[i], sizeof(names[i]), "%s", tl_cgroup(n, 16 * TL_MIB));
		cgs[i] = names[i];
	}
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t h = start_restart_handler(cgs, N, p[1]);
	close(p[1]);
	pid_t g;
	assert_true(read_guardian(p[0], &g));
	/* One memcg blocked under OOM through all of it, waiting for its handler. */
	pid_t hog = tl_spawn_hog(cgs[0], 24, 1024, 0);
	assert_true(wait_byte(p[0], 'O', 20000));
	int fds0 = fd_count(h);

	int restarts = 0;
	for (int i = 0; i < GUARDIAN_KILLS; i++) {
		pid_t next;
		assert_int_equal(kill(g, SIGKILL), 0);
		assert_true(read_guardian(p[0], &next));
		assert_true(next != g);
		/* The handler reaped the old one. */
		assert_true(tl_wait_for(not_alive, &g, 5000));
		g = next;
		restarts++;
		/* Killing a guardian hands nothing to the kernel: the handler still holds every memcg. */
		for (int j = 0; j < N; j++)
			assert_int_equal(oom_key(cgs[j], "oom_kill_disable"), 1);
		/* Any charge given back in the memcg wakes the hog, which
		 * clears under_oom until it fails its charge again. */
		assert_true(tl_wait_under_oom(cgs[0], 20000));
		assert_true(tl_alive(hog));
	}
	int fds1 = fd_count(h);
	/* The handler dies right after its last restart: the newest guardian
	 * must release everything it was told about, even so soon. */
	assert_int_equal(kill(h, SIGKILL), 0);
	int st = tl_wait_exit(h, 5000);
	assert_true(st != -1 && WIFSIGNALED(st));
	st = tl_wait_exit(hog, BLOCKED_AFTER_MS);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	int released = 0;
	for (int j = 0; j < N; j++) {
		if (tl_wait_for(killer_back, (void *)cgs[j], 5000))
			released++;
	}
	assert_true(tl_wait_exit(g, 5000) != -1);
	print_message("guardian: killed %d times, restarted %d times, handler fds %d -> %d; "
		      "handler killed: %d of %d memcgs released\n",
		      GUARDIAN_KILLS, restarts, fds0, fds1, released, N);
	assert_int_equal(restarts, GUARDIAN_KILLS);
	assert_int_equal(fds1, fds0);
	assert_int_equal(released, N);
	assert_int_equal(oom_key(cgs[0], "under_oom"), 0);
	assert_true(oom_key(cgs[0], "oom_kill") >= 1);
	close(p[0]);
}

/* ====================== c. a watched cgroup removed during handling */

struct tally {
	int ok, enoent, enodev, other;
	int last_other;
};

static void count(struct tally *t, int r)
{
	if (r >= 0)
		t->ok++;
	else if (r == -ENOENT)
		t->enoent++;
	else if (r == -ENODEV)
		t->enodev++;
	else {
		t->other++;
		t->last_other = r;
	}
}

struct removed_rec {
	pid_t hog;
	uint64_t hog_start;
	int own_ooms, gones;
	int kill_result, remove_result;
};

/* Kills the hog, then removes the cgroup it is handling before it returns. */
static enum oomkit_verdict remove_self_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct removed_rec *r = userdata;
	if (ev->kind == OOMKIT_EVENT_GONE) {
		r->gones++;
		return OOMKIT_RESOLVED;
	}
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom || r->own_ooms++)
		return OOMKIT_WAIT;
	r->kill_result = oomkit_kill(ctx, r->hog, r->hog_start, 5000);
	(void)tl_wait_exit(r->hog, 5000);
	uint64_t end = now_us() + 5000000u;
	do
		r->remove_result = oomkit_cgroup_remove(ctx, ev->cgroup);
	while (r->remove_result == -EBUSY && now_us() < end);
	return OOMKIT_RESOLVED;
}

static bool gones_reached(oomkit_ctx *ctx, const int *gones, int want, int timeout_ms)
{
	uint64_t end = now_us() + (uint64_t)timeout_ms * 1000u;
	while (*gones < want && now_us() < end)
		assert_true(oomkit_dispatch(ctx, 20) >= 0);
	return *gones >= want;
}

static void test_removed_by_its_handler(void **state)
{
	(void)state;
	int fd0 = fd_count(getpid());
	const char *cg = tl_cgroup("remove-self", 16 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(true, 0);
	int fd1 = fd_count(getpid());
	struct removed_rec r = {0};
	oomkit_watch *w;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, remove_self_handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, TRIAL_DELAY_MS), 0);
	assert_int_equal(oomkit_watch_threshold(ctx, cg, 4 * TL_MIB, 0, remove_self_handler, &r, NULL), 0);
	r.hog = tl_spawn_hog(cg, 32, 1024, 0);
	r.hog_start = start_time_of(ctx, r.hog);
	bool both_gone = gones_reached(ctx, &r.gones, 2, 20000);
	int fd2 = fd_count(getpid());
	oomkit_free(ctx);
	int fd3 = fd_count(getpid());
	print_message(
	    "removed by its own handler: %d OOM handled, kill %d, rmdir %d, %d GONE; fds %d, %d with the "
	    "context, %d after GONE, %d after free\n",
	    r.own_ooms, r.kill_result, r.remove_result, r.gones, fd0, fd1, fd2, fd3);
	assert_true(both_gone);
	assert_int_equal(r.own_ooms, 1);
	assert_int_equal(r.kill_result, 0);
	assert_int_equal(r.remove_result, 0);
	assert_int_equal(r.gones, 2);
	assert_int_equal(fd2, fd1);
	assert_int_equal(fd3, fd0);
}

#define WALK_CHILDREN 32

struct walk_rec {
	oomkit_ctx *ctx;
	const char *cg;
	pid_t hog;
	uint64_t hog_start;
	int go_fd;
	int own_ooms, other_ooms, gones, walks;
	bool vanished;
	struct tally t;
};

static int walk_child(const char *name, void *userdata)
{
	struct walk_rec *r = userdata;
	char path[512];
	pid_t pids[64];
	struct oomkit_cgroup_memory m;
	snprintf(path, sizeof(path), "%s/%s", r->cg, name);
	count(&r->t, oomkit_cgroup_memory(r->ctx, path, &m));
	count(&r->t, oomkit_cgroup_pids(r->ctx, path, true, pids, 64));
	return 0;
}

/* One pass over the cgroup and everything below it, each result counted. */
static void walk_once(struct walk_rec *r, const struct oomkit_event *ev, int report_fd)
{
	pid_t pids[64];
	uint64_t v;
	struct oomkit_cgroup_memory m;
	count(&r->t, oomkit_cgroup_children(r->ctx, r->cg, walk_child, r));
	count(&r->t, oomkit_cgroup_pids(r->ctx, r->cg, true, pids, 64));
	count(&r->t, oomkit_cgroup_memory(r->ctx, r->cg, &m));
	count(&r->t, oomkit_cgroup_stat(r->ctx, r->cg, "total_rss", &v));
	(void)!ftruncate(report_fd, 0);
	count(&r->t, oomkit_write_report(r->ctx, report_fd, ev, NULL));
	r->walks++;
}

/* Kills the hog, starts the remover, and walks the cgroup until it is gone. */
static enum oomkit_verdict walk_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct walk_rec *r = userdata;
	if (ev->kind == OOMKIT_EVENT_GONE) {
		r->gones++;
		return OOMKIT_RESOLVED;
	}
	if (ev->kind != OOMKIT_EVENT_OOM)
		return OOMKIT_WAIT;
	if (!ev->own || !ev->under_oom || r->own_ooms++) {
		r->other_ooms++;
		return OOMKIT_WAIT;
	}
	(void)oomkit_kill(ctx, r->hog, r->hog_start, 5000);
	(void)tl_wait_exit(r->hog, 5000);
	int report_fd = memfd_create("report", MFD_CLOEXEC);
	assert_true(report_fd >= 0);
	(void)!write(r->go_fd, "g", 1);
	uint64_t end = now_us() + 10000000u;
	while (oomkit_cgroup_exists(ctx, r->cg) == 1 && now_us() < end)
		walk_once(r, ev, report_fd);
	r->vanished = oomkit_cgroup_exists(ctx, r->cg) == 0;
	/* And on a little longer, on what is no longer there. */
	for (int i = 0; i < 3; i++)
		walk_once(r, ev, report_fd);
	close(report_fd);
	return OOMKIT_RESOLVED;
}

/* Removes the directory at path, waiting out a moment's -EBUSY (a child's
 * css still going offline); true if it is gone. */
static bool remove_dir(const char *path)
{
	uint64_t end = now_us() + 5000000u;
	while (rmdir(path) != 0 && errno == EBUSY && now_us() < end)
		;
	return access(path, F_OK) != 0;
}

/* A process that removes the children of cg, then cg, once told to. */
static pid_t spawn_remover(const char *cg, int go_fd)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid != 0)
		return pid;
	child_init();
	char c, path[PATH_MAX];
	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	int failed = 0;
	for (int i = WALK_CHILDREN - 1; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/c%d", tl_abs(cg), i);
		failed += !remove_dir(path);
	}
	failed += !remove_dir(tl_abs(cg));
	_exit(failed ? 1 : 0);
}

static void test_removed_while_walked(void **state)
{
	(void)state;
	static char cg[256], children[WALK_CHILDREN][256];
	snprintf(cg, sizeof(cg), "%s", tl_cgroup("walked", 16 * TL_MIB));
	for (int i = 0; i < WALK_CHILDREN; i++) {
		char n[32];
		snprintf(n, sizeof(n), "walked/c%d", i);
		snprintf(children[i], sizeof(children[i]), "%s", tl_cgroup(n, 0));
	}
	int go[2];
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	int fd0 = fd_count(getpid());
	oomkit_ctx *ctx = new_ctx(true, 0);
	int fd1 = fd_count(getpid());
	struct walk_rec r = {.ctx = ctx, .cg = cg, .go_fd = go[1]};
	oomkit_watch *w;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, walk_handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, TRIAL_DELAY_MS), 0);
	for (int i = 0; i < WALK_CHILDREN; i++)
		assert_int_equal(oomkit_watch_oom(ctx, children[i], 0, walk_handler, &r, NULL), 0);
	pid_t remover = spawn_remover(cg, go[0]);
	r.hog = tl_spawn_hog(children[0], 32, 1024, 0);
	r.hog_start = start_time_of(ctx, r.hog);
	bool all_gone = gones_reached(ctx, &r.gones, WALK_CHILDREN + 1, 30000);
	int rst = tl_wait_exit(remover, 10000);
	int fd2 = fd_count(getpid());
	oomkit_free(ctx);
	int fd3 = fd_count(getpid());
	close(go[0]);
	close(go[1]);
	print_message(
	    "removed while walked: %d walks, %d reads ok, %d -ENOENT, %d -ENODEV, %d other (last %d); "
	    "%d GONE of %d watches; fds %d, %d with the context, %d after GONE, %d after free\n",
	    r.walks, r.t.ok, r.t.enoent, r.t.enodev, r.t.other, r.t.last_other, r.gones, WALK_CHILDREN + 1,
	    fd0, fd1, fd2, fd3);
	assert_true(rst != -1 && WIFEXITED(rst) && WEXITSTATUS(rst) == 0);
	assert_int_equal(r.own_ooms, 1);
	assert_true(r.vanished);
	assert_true(all_gone);
	assert_int_equal(r.gones, WALK_CHILDREN + 1);
	/* Gone is -ENOENT, also for a file removed between open and read. */
	assert_int_equal(r.t.other, 0);
	assert_int_equal(r.t.enodev, 0);
	/* The walk did see the tree go: some reads found it, some did not. */
	assert_true(r.t.ok > 0);
	assert_true(r.t.enoent > 0);
	assert_int_equal(fd2, fd1);
	assert_int_equal(fd3, fd0);
}

/* ====================== d. processes exiting during enumeration */

#define CHURNERS 4
#define CHURN_POOL 16
#define CHURN_LISTINGS 300

/* A shell in cg that forks CHURN_POOL subshells, each exiting at once,
 * waits for them and starts again: a small process forks fast whatever
 * build the test is. */
static pid_t spawn_churner(const char *cg)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid != 0)
		return pid;
	child_init();
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (tl_write(cg, "cgroup.procs", v) != 0)
		_exit(126);
	snprintf(v, sizeof(v), "%d", CHURN_POOL);
	execl("/bin/sh", "sh", "-c",
	      "while :; do i=0; while [ $i -lt $1 ]; do (:) & i=$((i + 1)); done; wait; done", "sh", v,
	      (char *)NULL);
	_exit(127);
}

static char report_buf[1 << 20];

/* Writes a report of cg; false if it is not valid JSON, else its
 * "vanished" and "unreadable" counts. */
static bool churn_report(oomkit_ctx *ctx, const char *cg, int *ret_vanished, int *ret_unreadable)
{
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM, .cgroup = cg, .origin = cg, .own = true};
	struct oomkit_decision d = {.action = "none", .reason = "enumeration under churn"};
	int fd = memfd_create("report", MFD_CLOEXEC);
	assert_true(fd >= 0);
	int r = oomkit_write_report(ctx, fd, &ev, &d);
	if (r <= 0 || (size_t)r >= sizeof(report_buf)) {
		print_message("oomkit_write_report: %d\n", r);
		close(fd);
		return false;
	}
	assert_int_equal(pread(fd, report_buf, sizeof(report_buf), 0), r);
	close(fd);
	report_buf[r] = 0;
	const char *v = strstr(report_buf, "\"vanished\":"), *u = strstr(report_buf, "\"unreadable\":");
	if (!json_valid(report_buf, (size_t)r) || !v || !u) {
		print_message("invalid report:\n%s\n", report_buf);
		return false;
	}
	*ret_vanished = atoi(v + strlen("\"vanished\":"));
	*ret_unreadable = atoi(u + strlen("\"unreadable\":"));
	return true;
}

struct pids_arg {
	oomkit_ctx *ctx;
	const char *cg;
	int min; /* at least this many */
};

static bool enough_pids(void *p)
{
	struct pids_arg *a = p;
	static pid_t pids[4096];
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	int n = oomkit_cgroup_pids(a->ctx, a->cg, true, pids, 4096);
	return a->min > 0 ? n >= a->min : n == 0;
}

static void test_exits_during_enumeration(void **state)
{
	(void)state;
	static pid_t pids[4096];
	const char *cg = tl_cgroup("churn", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(false, 0);
	pid_t churners[CHURNERS];
	for (int i = 0; i < CHURNERS; i++)
		churners[i] = spawn_churner(cg);
	struct pids_arg want = {ctx, cg, CHURNERS * 4};
	assert_true(tl_wait_for(enough_pids, &want, 10000));

	struct tally t = {0};
	int vanished = 0, listed = 0, reports = 0, invalid = 0, rep_vanished = 0, rep_unreadable = 0;
	struct oomkit_process p;
	int i;
	/* At least CHURN_LISTINGS, and on until both the reads and the reports
	 * have met a process that vanished (slow builds churn less), within a
	 * bound. */
	uint64_t end = now_us() + 60000000u;
	for (i = 0; i < CHURN_LISTINGS || ((!vanished || !rep_vanished) && now_us() < end); i++) {
		int n = oomkit_cgroup_pids(ctx, cg, true, pids, 4096);
		assert_true(n >= 0);
		listed += n;
		for (int j = 0; j < n; j++) {
			int r = oomkit_process_info(ctx, pids[j], &p);
			if (r == -ESRCH)
				vanished++;
			else
				count(&t, r);
		}
		if (i % 5 == 0) {
			int v = 0, u = 0;
			reports++;
			if (!churn_report(ctx, cg, &v, &u))
				invalid++;
			rep_vanished += v;
			rep_unreadable += u;
		}
	}
	for (int c = 0; c < CHURNERS; c++)
		kill(churners[c], SIGKILL);
	want.min = 0;
	assert_true(tl_wait_for(enough_pids, &want, 10000));
	oomkit_free(ctx);
	print_message(
	    "churn: %d listings of %d pids, %d read, %d vanished (-ESRCH), %d other errors (last %d); "
	    "%d reports, %d invalid, %d processes vanished while written, %d unreadable\n",
	    i, listed, t.ok, vanished, t.enoent + t.enodev + t.other, t.last_other, reports, invalid,
	    rep_vanished, rep_unreadable);
	assert_int_equal(t.enoent + t.enodev + t.other, 0);
	assert_true(t.ok > 0);
	/* The race was really run: some processes did go between list and read. */
	assert_true(vanished > 0);
	assert_int_equal(invalid, 0);
	assert_true(rep_vanished > 0);
	assert_int_equal(rep_unreadable, 0);
}

/* ===================== e. cgroup files vanishing between and during reads */

static char fx_root[PATH_MAX];

static void fx_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", fx_root, rel);
}

/* Writes a fixture file whole: a temporary name, then rename(), so a
 * concurrent reader sees the old file, the new one, or none. */
static bool fx_put(const char *rel, const char *content)
{
	char path[PATH_MAX * 2], tmp[PATH_MAX * 2 + 8];
	fx_path(path, sizeof(path), rel);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	bool ok = write(fd, content, strlen(content)) == (ssize_t)strlen(content);
	return close(fd) == 0 && ok && rename(tmp, path) == 0;
}

static void fx_unlink(const char *rel)
{
	char path[PATH_MAX * 2];
	fx_path(path, sizeof(path), rel);
	assert_int_equal(unlink(path), 0);
}

#define FX_CG "jobs/web"

static const char *const fx_files[][2] = {
    {"cgroup.procs", "1\n"},
    {"memory.usage_in_bytes", "8388608\n"},
    {"memory.limit_in_bytes", "16777216\n"},
    {"memory.max_usage_in_bytes", "16777216\n"},
    {"memory.failcnt", "12\n"},
    {"memory.oom_control", "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n"},
    {"memory.stat", "cache 0\nrss 8388608\ntotal_rss 8388608\n"},
};
#define FX_NFILES (sizeof(fx_files) / sizeof(fx_files[0]))

static bool fx_file(const char *cg, size_t i)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s%s%s", cg, cg[0] ? "/" : "", fx_files[i][0]);
	return fx_put(rel, fx_files[i][1]);
}

static int count_child(const char *name, void *userdata)
{
	(void)name;
	(*(int *)userdata)++;
	return 0;
}

static void fx_memcg(const char *cg)
{
	char path[PATH_MAX * 2];
	if (cg[0]) {
		fx_path(path, sizeof(path), cg);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	for (size_t i = 0; i < FX_NFILES; i++)
		assert_true(fx_file(cg, i));
}

static oomkit_ctx *fx_ctx(void)
{
	snprintf(fx_root, sizeof(fx_root), "/tmp/oomkit-faults-XXXXXX");
	assert_non_null(mkdtemp(fx_root));
	fx_memcg("");
	fx_memcg("jobs");
	fx_memcg(FX_CG);
	fx_memcg(FX_CG "/inner");
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;
	oomkit_options_init(&o);
	o.memory_root = fx_root;
	o.cgroup2_root = "";
	o.freezer_root = "";
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	return ctx;
}

static void fx_free(oomkit_ctx *ctx)
{
	oomkit_free(ctx);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_root);
	assert_int_equal(system(cmd), 0);
}

/* Every reader and writer on FX_CG; each result is checked against want
 * (0 meaning success) and nothing may be written on failure. */
static int fx_readers(oomkit_ctx *ctx, int want, int *ret_checked)
{
	struct oomkit_cgroup_memory m, m0;
	pid_t pids[16];
	uint64_t v = 4242;
	int children = 0;
	int bad = 0, r;
	memset(&m, 0x5a, sizeof(m));
	m0 = m;
#define CHECK(call, ok_when)                                                                                 \
	do {                                                                                                 \
		r = (call);                                                                                  \
		(*ret_checked)++;                                                                            \
		if (want ? r != want : !(ok_when)) {                                                         \
			print_message("%s: %d, want %d\n", #call, r, want);                                  \
			bad++;                                                                               \
		}                                                                                            \
	} while (0)
	CHECK(oomkit_cgroup_memory(ctx, FX_CG, &m), r == 0);
	if (want && memcmp(&m, &m0, sizeof(m)) != 0) {
		print_message("oomkit_cgroup_memory wrote ret_mem on failure\n");
		bad++;
	}
	CHECK(oomkit_cgroup_stat(ctx, FX_CG, "total_rss", &v), r == 0);
	if (want && v != 4242) {
		print_message("oomkit_cgroup_stat wrote ret_value on failure\n");
		bad++;
	}
	CHECK(oomkit_cgroup_pids(ctx, FX_CG, false, pids, 16), r >= 0);
	CHECK(oomkit_cgroup_children(ctx, FX_CG, count_child, &children), r == 1);
	CHECK(oomkit_set_limit(ctx, FX_CG, 16 * TL_MIB), r == 0);
	CHECK(oomkit_set_kernel_killer(ctx, FX_CG, false), r == 0);
#undef CHECK
	/* The writers wrote over the fixture's files as over cgroupfs's. */
	if (!want) {
		assert_true(fx_file(FX_CG, 2));
		assert_true(fx_file(FX_CG, 5));
	}
	return bad;
}

/* Each file removed in turn, emptied, turned into a directory; then the
 * whole cgroup gone. */
static void test_files_vanish_between_calls(void **state)
{
	(void)state;
	oomkit_ctx *ctx = fx_ctx();
	int checked = 0, bad = fx_readers(ctx, 0, &checked);
	char rel[PATH_MAX], path[PATH_MAX * 2];
	struct oomkit_cgroup_memory m;
	uint64_t v;
	pid_t pids[16];

	for (size_t i = 0; i < FX_NFILES; i++) {
		snprintf(rel, sizeof(rel), FX_CG "/%s", fx_files[i][0]);
		fx_unlink(rel);
		int want = -ENOENT;
		/* Only the reader of the missing file fails. */
		struct oomkit_cgroup_memory m0;
		memset(&m, 0x5a, sizeof(m));
		m0 = m;
		int r = oomkit_cgroup_memory(ctx, FX_CG, &m);
		bool reads_it = i >= 1 && i <= 5;
		checked++;
		if (reads_it ? (r != want || memcmp(&m, &m0, sizeof(m)) != 0) : r != 0) {
			print_message("memory without %s: %d\n", fx_files[i][0], r);
			bad++;
		}
		v = 4242;
		r = oomkit_cgroup_stat(ctx, FX_CG, "total_rss", &v);
		checked++;
		if (i == 6 ? (r != want || v != 4242) : r != 0) {
			print_message("stat without %s: %d\n", fx_files[i][0], r);
			bad++;
		}
		r = oomkit_cgroup_pids(ctx, FX_CG, false, pids, 16);
		checked++;
		if (i == 0 ? r != want : r < 0) {
			print_message("pids without %s: %d\n", fx_files[i][0], r);
			bad++;
		}
		/* A recursive walk from the parent skips a child caught half removed. */
		r = oomkit_cgroup_pids(ctx, "jobs", true, pids, 16);
		checked++;
		if (r < 0) {
			print_message("recursive pids without " FX_CG "/%s: %d\n", fx_files[i][0], r);
			bad++;
		}
		if (i == 2 || i == 5) {
			r = i == 2 ? oomkit_set_limit(ctx, FX_CG, TL_MIB)
				   : oomkit_set_kernel_killer(ctx, FX_CG, true);
			checked++;
			if (r != want) {
				print_message("write without %s: %d\n", fx_files[i][0], r);
				bad++;
			}
		}
		/* Emptied: a clear -EINVAL from the parser. */
		assert_true(fx_put(rel, ""));
		if (i >= 1 && i <= 5) {
			r = oomkit_cgroup_memory(ctx, FX_CG, &m);
			checked++;
			if (r != -EINVAL) {
				print_message("memory with an empty %s: %d\n", fx_files[i][0], r);
				bad++;
			}
		}
		/* A directory where the file was. */
		fx_unlink(rel);
		fx_path(path, sizeof(path), rel);
		assert_int_equal(mkdir(path, 0755), 0);
		r = i == 0   ? oomkit_cgroup_pids(ctx, FX_CG, false, pids, 16)
		    : i == 6 ? oomkit_cgroup_stat(ctx, FX_CG, "total_rss", &v)
			     : oomkit_cgroup_memory(ctx, FX_CG, &m);
		checked++;
		if (r != -EISDIR) {
			print_message("%s as a directory: %d\n", fx_files[i][0], r);
			bad++;
		}
		assert_int_equal(rmdir(path), 0);
		assert_true(fx_file(FX_CG, i));
	}
	bad += fx_readers(ctx, 0, &checked);

	/* The whole cgroup gone. */
	char cmd[PATH_MAX * 3];
	fx_path(path, sizeof(path), FX_CG);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
	bad += fx_readers(ctx, -ENOENT, &checked);
	assert_int_equal(oomkit_cgroup_exists(ctx, FX_CG), 0);
	int fd = memfd_create("report", MFD_CLOEXEC);
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM, .cgroup = FX_CG, .origin = FX_CG, .own = true};
	int n = oomkit_write_report(ctx, fd, &ev, NULL);
	checked++;
	if (n <= 0 || (size_t)n >= sizeof(report_buf) || pread(fd, report_buf, sizeof(report_buf), 0) != n) {
		print_message("report of a removed cgroup: %d\n", n);
		bad++;
	} else {
		report_buf[n] = 0;
		if (!json_valid(report_buf, (size_t)n) || !strstr(report_buf, "\"ENOENT\"")) {
			print_message("report of a removed cgroup:\n%s\n", report_buf);
			bad++;
		}
	}
	close(fd);
	fx_free(ctx);
	print_message("vanished files: %d calls on files removed, emptied or replaced, %d wrong\n", checked,
		      bad);
	assert_int_equal(bad, 0);
}

/* Another process removes and restores files without pause while the
 * readers run: each call succeeds or says -ENOENT. */
static void test_files_vanish_during_reads(void **state)
{
	(void)state;
	enum { ROUNDS = 20000 };
	oomkit_ctx *ctx = fx_ctx();
	pid_t flapper = fork();
	assert_true(flapper >= 0);
	if (flapper == 0) {
		child_init();
		char rel[PATH_MAX], path[PATH_MAX * 2];
		for (size_t i = 0;; i = (i + 1) % FX_NFILES) {
			snprintf(rel, sizeof(rel), FX_CG "/%s", fx_files[i][0]);
			fx_path(path, sizeof(path), rel);
			if (unlink(path) != 0 || !fx_file(FX_CG, i))
				_exit(2);
		}
	}
	struct tally t = {0};
	struct oomkit_cgroup_memory m;
	uint64_t v;
	pid_t pids[16];
	int children = 0;
	for (int i = 0; i < ROUNDS; i++) {
		count(&t, oomkit_cgroup_memory(ctx, FX_CG, &m));
		count(&t, oomkit_cgroup_stat(ctx, FX_CG, "total_rss", &v));
		count(&t, oomkit_cgroup_pids(ctx, FX_CG, true, pids, 16));
		count(&t, oomkit_cgroup_children(ctx, "jobs", count_child, &children));
	}
	kill(flapper, SIGKILL);
	int st = tl_wait_exit(flapper, 5000);
	fx_free(ctx);
	print_message("files vanishing during reads: %d calls, %d ok, %d -ENOENT, %d other (last %d)\n",
		      ROUNDS * 4, t.ok, t.enoent, t.enodev + t.other, t.last_other);
	/* The flapper was still flapping when it was stopped. */
	assert_true(st != -1 && WIFSIGNALED(st));
	assert_int_equal(t.enodev + t.other, 0);
	assert_true(t.ok > 0);
	assert_true(t.enoent > 0);
}

int main(void)
{
	tl_require_kernel();
	/* Guardians of killed handlers come back to us to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_handler_killed_trials),
	    cmocka_unit_test(test_guardian_killed_repeatedly),
	    cmocka_unit_test(test_removed_by_its_handler),
	    cmocka_unit_test(test_removed_while_walked),
	    cmocka_unit_test(test_exits_during_enumeration),
	    cmocka_unit_test(test_files_vanish_between_calls),
	    cmocka_unit_test(test_files_vanish_during_reads),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
