/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-faults.c - liboomkit under faults, on real memcgs:
 *   - the handling process SIGKILLed at a different moment of each of 100
 *     OOMs (right after the take-over, while the hog grows, at the event, in
 *     the middle of the handler, hung in it, after it returned): no memcg is
 *     ever left blocked, every guardian exits;
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
	IN_TAKEOVER,      /* somewhere in oomkit_take_over() */
	AFTER_TAKEOVER,   /* the take-over has just returned; the guardian may not have read it yet */
	DURING_GROWTH,    /* the hog is growing, no OOM yet */
	AT_EVENT,         /* the handler has just been called */
	IN_HANDLER,       /* somewhere in the handler's reads and report */
	HUNG_IN_HANDLER,  /* the handler is stuck inside its callback */
	AFTER_RETURN,     /* the handler said WAIT; the loop is polling the pending OOM */
	N_MOMENTS
};

static const char *const moment_names[N_MOMENTS] = {
	"in take-over", "after take-over", "during growth", "at the event", "in the handler", "hung in the handler", "after return",
};

struct trial_child {
	int fd;      /* to the test: 'S'+guardian pid, 'R' taken over, 'O' called, 'M' work done, 'W' returning */
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
		struct trial_child c = {.fd = p[1], .devnull = open("/dev/null", O_WRONLY | O_CLOEXEC), .hang = hang};
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
	int blocked;          /* memcgs left under OOM or with their killer held */
	int guardian_left;    /* guardians that outlived their handler */
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
static bool kill_at_moment(int trial, enum moment m, const char *cg, struct handler_proc *h, pid_t hog)
{
	bool ok = true;
	switch (m) {
	case IN_TAKEOVER:
	case AFTER_TAKEOVER:
		break;  /* killed before the hog started */
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
	(void)hog;
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
	bool reached = m <= AFTER_TAKEOVER || kill_at_moment(trial, m, cg, &h, hog);
	int st = tl_wait_exit(h.pid, 10000);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	int hst = tl_wait_exit(hog, BLOCKED_AFTER_MS);
	bool blocked = hst == -1 || !tl_wait_for(oom_over, (void *)cg, 5000) || !tl_wait_for(killer_back, (void *)cg, 5000);
	if (blocked) {
		print_message("trial %d (%s%s): memcg left blocked: hog %s, under_oom %llu, oom_kill_disable %llu\n",
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
		print_message("trial %d (%s): guardian %d outlived its handler\n", trial, moment_names[m], (int)h.guardian);
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
		if (oomkit_watch_oom(ctx, cgs[i], 0, wait_handler, &c, &w) < 0 || oomkit_take_over(ctx, w, 60000) < 0)
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
		assert_int_equal(oom_key(cgs[0], "under_oom"), 1);
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

int main(void)
{
	tl_require_kernel();
	/* Guardians of killed handlers come back to us to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handler_killed_trials),
		cmocka_unit_test(test_guardian_killed_repeatedly),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
