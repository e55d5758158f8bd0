/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-guardian.c - the OOM delay holds when the handling process cannot
 * keep it: a handler SIGKILLed during an OOM, a handler that hangs, a
 * guardian that is killed and restarted; and an idle loop watching 100
 * memcgs makes no wakeups at all.
 *
 * The handling process is a forked child here so that the test can kill it.
 * Every test runs twice: with the guardian the oomkit-guardian program
 * ($OOMKIT_GUARDIAN, which the test checks it is), and with the guardian a
 * fork of the handler, as where the program cannot run.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"
#include "testhelp.h"
#include "testlib.h"

enum child_mode { WAIT_FOREVER, HANG_IN_HANDLER, KILL_GUARDIAN_FIRST };

struct child_arg {
	int fd; /* reports to the test: 'R' ready, 'O' OOM seen */
	enum child_mode mode;
};

static enum oomkit_verdict child_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	(void)ctx;
	struct child_arg *a = userdata;
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->under_oom)
		return OOMKIT_WAIT;
	(void)!write(a->fd, "O", 1);
	if (a->mode == HANG_IN_HANDLER)
		for (;;)
			pause();
	return OOMKIT_WAIT;
}

struct handler_proc {
	pid_t pid;
	pid_t guardian;
	int fd;
};

/* The handling process and guardian of the test under way.  A failed
 * assertion leaves the test early: they are killed in its teardown, or a
 * handler holding its memcg forever would keep the hog stuck and meson
 * waiting on the output pipe it inherited. */
static pid_t running[3]; /* handler, guardian, a test's helper (our child) */

static bool not_alive(void *p)
{
	return !tl_alive(*(pid_t *)p);
}

static int kill_running(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		if (running[i] > 0 && tl_alive(running[i])) {
			kill(running[i], SIGKILL);
			/* The handler is our child; its guardian is not. */
			if (i != 1)
				(void)tl_wait_exit(running[i], 5000);
			else
				(void)tl_wait_for(not_alive, &running[i], 5000);
		}
		running[i] = 0;
	}
	return 0;
}

/* Starts a handling process for cg with the given delay; returns once it
 * has taken the cgroup over and reported its guardian's pid. */
/* The guardian runs the program $OOMKIT_GUARDIAN names, or, with it "", is a
 * fork of the handler. */
static void check_guardian_program(pid_t guardian)
{
	const char *want = getenv("OOMKIT_GUARDIAN");
	char link[64], exe[4096] = "";
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)guardian);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	if (want && want[0])
		assert_string_equal(exe, want);
	else
		assert_null(strstr(exe, "oomkit-guardian"));
}

static struct handler_proc start_handler(const char *cg, uint64_t delay_ms, enum child_mode mode)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* Not past the test, whatever becomes of it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		struct child_arg a = {p[1], mode};
		oomkit_ctx *ctx;
		oomkit_watch *w;
		if (oomkit_new(NULL, &ctx) < 0 || oomkit_watch_oom(ctx, cg, 0, child_handler, &a, &w) < 0 ||
		    oomkit_take_over(ctx, w, delay_ms) < 0)
			_exit(1);
		if (mode == KILL_GUARDIAN_FIRST) {
			pid_t old = oomkit_guardian_pid(ctx);
			kill(old, SIGKILL);
			while (oomkit_guardian_pid(ctx) == old)
				oomkit_dispatch(ctx, 100);
		}
		pid_t g = oomkit_guardian_pid(ctx);
		(void)!write(p[1], "R", 1);
		(void)!write(p[1], &g, sizeof(g));
		oomkit_run(ctx);
		_exit(0);
	}
	close(p[1]);
	struct handler_proc h = {.pid = pid, .fd = p[0]};
	running[0] = pid;
	char c = 0;
	assert_int_equal(read(h.fd, &c, 1), 1);
	assert_int_equal(c, 'R');
	assert_int_equal(read(h.fd, &h.guardian, sizeof(h.guardian)), (ssize_t)sizeof(h.guardian));
	assert_true(h.guardian > 0);
	running[1] = h.guardian;
	assert_true(tl_alive(h.guardian));
	check_guardian_program(h.guardian);
	return h;
}

static void wait_oom_report(struct handler_proc *h)
{
	char c = 0;
	assert_int_equal(read(h->fd, &c, 1), 1);
	assert_int_equal(c, 'O');
}

/* 5. The handler is SIGKILLed while its memcg is under OOM: the guardian
 * gives the kernel its killer back at once, long before the delay. */
static void test_handler_killed(void **state)
{
	(void)state;
	const uint64_t delay_ms = 60000;
	const char *cg = tl_cgroup("killed", 32 * TL_MIB);
	struct handler_proc h = start_handler(cg, delay_ms, WAIT_FOREVER);
	pid_t hog = tl_spawn_hog(cg, 64, 1024, 0);
	wait_oom_report(&h);
	/* Any charge given back in the memcg wakes the hog, which clears
	 * under_oom until it fails its charge again: wait for it, not read it. */
	assert_true(tl_wait_under_oom(cg, 20000));
	assert_true(tl_alive(hog));

	uint64_t t0 = th_now_ms();
	kill(h.pid, SIGKILL);
	assert_true(tl_wait_exit(h.pid, 5000) != -1);
	int st = tl_wait_exit(hog, 20000);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* It was the handler's death, not the delay, that ended the OOM. */
	assert_true(th_now_ms() - t0 < delay_ms);
	assert_false(tl_under_oom(cg));
	assert_false(tl_held(cg));
	assert_true(tl_kernel_kills(cg) >= 1);
	assert_true(tl_wait_for(not_alive, &h.guardian, 5000));
	close(h.fd);
}

/* The handler hangs inside its callback: the guardian hands the OOM to the
 * kernel after the delay while the handler stays stuck. */
static void test_handler_hangs(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("hangs", 32 * TL_MIB);
	struct handler_proc h = start_handler(cg, 300, HANG_IN_HANDLER);
	pid_t hog = tl_spawn_hog(cg, 64, 1024, 0);
	wait_oom_report(&h);
	int st = tl_wait_exit(hog, 20000);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(tl_kernel_kills(cg) >= 1);
	assert_true(tl_alive(h.pid));
	/* Once the stuck handler is gone the guardian releases the memcg for good. */
	kill(h.pid, SIGKILL);
	assert_true(tl_wait_exit(h.pid, 5000) != -1);
	assert_true(tl_wait_for(not_alive, &h.guardian, 5000));
	assert_false(tl_held(cg));
	close(h.fd);
}

static void sleep_ms(void *arg, unsigned ms)
{
	(void)arg;
	th_sleep_ms(ms);
}

/* The handler hangs while a job gives back a page now and then: each wakes
 * the hog, which clears under_oom until it fails its charge again.  Those
 * 0s are not the end of the OOM: the guardian's clock goes on through them,
 * and the kernel kills after the delay.  (When one 0 stopped the clock, the
 * next event started it again, and the OOM never reached the kernel.) */
static void test_handler_hangs_flicker(void **state)
{
	(void)state;
	const uint64_t delay_ms = 1000;
	const char *cg = tl_cgroup("flicker", 32 * TL_MIB);
	struct handler_proc h = start_handler(cg, delay_ms, HANG_IN_HANDLER);
	struct tl_flicker f = {.cg = cg, .hold_ms = 40, .spend = sleep_ms};
	pid_t giver = tl_spawn_giver(cg, 256, &f.giver);
	assert_true(giver > 0);
	running[2] = giver;
	f.hog = tl_spawn_hog(cg, 64, 1024, 0);
	wait_oom_report(&h);
	/* Patience: four delays of flickers, each 0 well short of the settle. */
	int r = tl_flicker_until_killed(&f, TL_OOM_SETTLE_MS, 4 * delay_ms, 60000);
	if (r < 0) {
		assert_false(r == -ENOENT && tl_kernel_required());
		skip();
	}
	assert_int_equal(r, 1);
	assert_true(f.flickers > 0);
	int st = tl_wait_exit(f.hog, 20000);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(tl_kernel_kills(cg) >= 1);
	assert_true(tl_alive(h.pid));
	close(f.giver);
	close(h.fd);
}

/* The guardian is killed: the handler starts a new one, which holds the
 * same memcgs and releases them when the handler dies in turn. */
static void test_guardian_restarted(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("restart", 32 * TL_MIB);
	struct handler_proc h = start_handler(cg, 60000, KILL_GUARDIAN_FIRST);
	pid_t hog = tl_spawn_hog(cg, 64, 1024, 0);
	wait_oom_report(&h);
	kill(h.pid, SIGKILL);
	assert_true(tl_wait_exit(h.pid, 5000) != -1);
	int st = tl_wait_exit(hog, 20000);
	assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_false(tl_held(cg));
	assert_true(tl_wait_for(not_alive, &h.guardian, 5000));
	close(h.fd);
}

static uint64_t ctxt_switches(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	uint64_t total = 0;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long long v;
		if (sscanf(buf, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(buf, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
			total += v;
	}
	fclose(f);
	return total;
}

/* 8. 100 watched, taken-over memcgs and nothing happening: neither the
 * handler nor its guardian wakes up. */
static void test_idle_no_wakeups(void **state)
{
	(void)state;
	enum { N = 100 };
	static char names[N][64];
	tl_cgroup("idle", 0);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "idle/%d", i);
		snprintf(names[i], sizeof(names[i]), "%s", tl_cgroup(names[i], 16 * TL_MIB));
	}
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		oomkit_ctx *ctx;
		oomkit_watch *w;
		if (oomkit_new(NULL, &ctx) < 0)
			_exit(1);
		for (int i = 0; i < N; i++)
			if (oomkit_watch_oom(ctx, names[i], 0, child_handler, NULL, &w) < 0 ||
			    oomkit_take_over(ctx, w, 1000) < 0)
				_exit(2);
		pid_t g = oomkit_guardian_pid(ctx);
		(void)!write(p[1], &g, sizeof(g));
		oomkit_run(ctx);
		_exit(0);
	}
	running[0] = pid;
	pid_t guardian = 0;
	assert_int_equal(read(p[0], &guardian, sizeof(guardian)), (ssize_t)sizeof(guardian));
	running[1] = guardian;
	/* The guardian may still be registering what the handler sent it: wait
	 * until both sleep and neither has switched for 200 ms, then start
	 * counting.  Asleep matters on a busy machine: a process that is still
	 * working but waits its turn for a CPU does not switch either. */
	uint64_t h0 = ctxt_switches(pid), g0 = ctxt_switches(guardian);
	for (int i = 0; i < 50; i++) {
		usleep(200 * 1000);
		uint64_t h = ctxt_switches(pid), g = ctxt_switches(guardian);
		if (h == h0 && g == g0 && th_proc_state(pid) == 'S' && th_proc_state(guardian) == 'S')
			break;
		h0 = h;
		g0 = g;
	}
	sleep(3);
	uint64_t h1 = ctxt_switches(pid), g1 = ctxt_switches(guardian);
	printf("idle 3 s with %d memcgs: handler %llu wakeups, guardian %llu wakeups\n", N,
	       (unsigned long long)(h1 - h0), (unsigned long long)(g1 - g0));
	assert_int_equal(h1 - h0, 0);
	assert_int_equal(g1 - g0, 0);
	kill(pid, SIGKILL);
	assert_true(tl_wait_exit(pid, 5000) != -1);
	assert_true(tl_wait_for(not_alive, &guardian, 5000));
	/* The guardian gave every memcg its killer back when the handler died. */
	for (int i = 0; i < N; i++)
		assert_false(tl_held(names[i]));
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_handler_killed, kill_running),
	    cmocka_unit_test_teardown(test_handler_hangs, kill_running),
	    cmocka_unit_test_teardown(test_handler_hangs_flicker, kill_running),
	    cmocka_unit_test_teardown(test_guardian_restarted, kill_running),
	    cmocka_unit_test_teardown(test_idle_no_wakeups, kill_running),
	};
	const char *program = getenv("OOMKIT_GUARDIAN");
	int failed = 0;
	if (program && program[0])
		failed += cmocka_run_group_tests_name("guardian program", tests, NULL, NULL);
	else
		printf("OOMKIT_GUARDIAN is not set: the guardian program is not tried\n");
	setenv("OOMKIT_GUARDIAN", "", 1);
	failed += cmocka_run_group_tests_name("guardian fork", tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
