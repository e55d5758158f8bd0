/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-oom.c - liboomkit's core on real memcgs: an OOM is delivered and the
 * handler's kill resolves it; growing the limit resolves it with no kill;
 * thresholds both ways, pressure, GONE; the OOM delay hands a waiting OOM to
 * the kernel; an OOM in a parent names the parent as origin everywhere below;
 * watching one's own memcg is refused.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"
#include "testhelp.h"
#include "testlib.h"

struct rec {
	int oom, threshold, pressure, gone;
	int live; /* OOM events that found the cgroup under OOM */
	int rising, falling;
	bool own;
	char origin[256];
	bool under_oom;
	enum oomkit_verdict verdict; /* what to answer */
	pid_t victim;		     /* kill this one on OOM */
	uint64_t victim_start;
	int kill_result;
	uint64_t grow_to; /* or raise the limit to this */
	int grow_result;
};

static enum oomkit_verdict handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct rec *r = userdata;
	switch (ev->kind) {
	case OOMKIT_EVENT_OOM:
		r->oom++;
		if (ev->under_oom)
			r->live++;
		r->own = ev->own;
		r->under_oom = ev->under_oom;
		snprintf(r->origin, sizeof(r->origin), "%s", ev->origin);
		if (!ev->own)
			return OOMKIT_WAIT;
		if (r->victim)
			r->kill_result = oomkit_kill(ctx, r->victim, r->victim_start, 5000);
		if (r->grow_to)
			r->grow_result = oomkit_set_limit(ctx, ev->cgroup, r->grow_to);
		return r->verdict;
	case OOMKIT_EVENT_THRESHOLD:
		r->threshold++;
		if (ev->rising)
			r->rising++;
		else
			r->falling++;
		return OOMKIT_RESOLVED;
	case OOMKIT_EVENT_PRESSURE:
		r->pressure++;
		return OOMKIT_RESOLVED;
	case OOMKIT_EVENT_GONE:
		r->gone++;
		return OOMKIT_RESOLVED;
	}
	return OOMKIT_RESOLVED;
}

static oomkit_ctx *new_ctx(void)
{
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;
	oomkit_options_init(&o);
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_non_null(ctx);
	return ctx;
}

/* Dispatches until cond holds or timeout_ms passes (a failure bound, not a timing claim). */
static bool run_until(oomkit_ctx *ctx, bool (*cond)(void *), void *arg, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (cond(arg))
			return true;
		assert_true(oomkit_dispatch(ctx, 20) >= 0);
	}
	return cond(arg);
}

static bool oom_seen(void *p)
{
	return ((struct rec *)p)->oom > 0;
}

static bool oom_cleared(void *p)
{
	return !tl_under_oom(p);
}

static uint64_t start_time_of(oomkit_ctx *ctx, pid_t pid)
{
	struct oomkit_process p;
	assert_int_equal(oomkit_process_info(ctx, pid, &p), 0);
	return p.start_time;
}

/* 1. The handler kills the chosen victim; the memcg leaves under_oom; the others live. */
static void test_kill_resolves(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("kill", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {.verdict = OOMKIT_RESOLVED};
	oomkit_watch *w;
	pid_t a = tl_spawn_sleeper(cg), b = tl_spawn_sleeper(cg);

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, 10000), 0);
	assert_true(tl_held(cg));
	pid_t hog = tl_spawn_hog(cg, 128, 1024, 0);
	assert_true(tl_wait_usage(cg, 8 * TL_MIB, 10000));
	r.victim = hog;
	r.victim_start = start_time_of(ctx, hog);

	assert_true(run_until(ctx, oom_seen, &r, 20000));
	assert_true(r.own);
	assert_true(r.under_oom);
	assert_string_equal(r.origin, cg);
	assert_int_equal(r.kill_result, 0);
	int st = tl_wait_exit(hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(run_until(ctx, oom_cleared, (void *)cg, 5000));
	assert_true(tl_alive(a));
	assert_true(tl_alive(b));
	/* oomkit, not the kernel, resolved it, and the kernel killer is still held off. */
	assert_int_equal(tl_kernel_kills(cg), 0);
	assert_true(tl_held(cg));
	oomkit_free(ctx);
	/* A clean shutdown gives the kernel its killer back. */
	assert_false(tl_held(cg));
}

/* 2. Raising the limit resolves an OOM with no kill. */
static void test_grow_resolves(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("grow", 32 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {.verdict = OOMKIT_RESOLVED, .grow_to = 96 * TL_MIB};
	oomkit_watch *w;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, 10000), 0);
	pid_t hog = tl_spawn_hog(cg, 48, 1024, 0);
	assert_true(run_until(ctx, oom_seen, &r, 20000));
	assert_int_equal(r.grow_result, 0);
	assert_true(tl_wait_usage(cg, 48 * TL_MIB, 10000));
	assert_true(tl_alive(hog));
	assert_true(run_until(ctx, oom_cleared, (void *)cg, 5000));
	assert_int_equal(tl_read_u64(cg, tl_limit_file()), 96 * TL_MIB);
	assert_int_equal(tl_kernel_kills(cg), 0);
	oomkit_free(ctx);
}

static bool rising_and_falling(void *p)
{
	struct rec *r = p;
	return r->rising > 0 && r->falling > 0;
}

static bool rising_seen(void *p)
{
	return ((struct rec *)p)->rising > 0;
}

/* 3a. A usage threshold fires when crossed upwards and again downwards. */
static void test_threshold_both_ways(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("threshold", 128 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {0};

	assert_int_equal(oomkit_watch_threshold(ctx, cg, 16 * TL_MIB, 0, handler, &r, NULL), 0);
	pid_t hog = tl_spawn_hog(cg, 32, 1024, 0);
	assert_true(run_until(ctx, rising_seen, &r, 10000));
	assert_int_equal(r.falling, 0);
	kill(hog, SIGKILL);
	assert_true(tl_wait_exit(hog, 5000) != -1);
	assert_true(run_until(ctx, rising_and_falling, &r, 10000));
	oomkit_free(ctx);
}

/* Embedding: the context's fd polls readable when there is work, and a
 * dispatch with no wait then handles it. */
static void test_embedded_loop(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("embedded", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {0};
	assert_int_equal(oomkit_watch_threshold(ctx, cg, 8 * TL_MIB, 0, handler, &r, NULL), 0);
	struct pollfd pfd = {.fd = oomkit_fd(ctx), .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);
	pid_t hog = tl_spawn_hog(cg, 16, 1024, 0);
	assert_int_equal(poll(&pfd, 1, 20000), 1);
	assert_int_equal(r.rising, 0);
	assert_true(oomkit_dispatch(ctx, 0) >= 1);
	assert_int_equal(r.rising, 1);
	kill(hog, SIGKILL);
	tl_wait_exit(hog, 5000);
	oomkit_free(ctx);
}

static bool pressure_seen(void *p)
{
	return ((struct rec *)p)->pressure > 0;
}

/* 3b. memory.pressure_level reports reclaim in a small memcg whose file
 * cache has to be reclaimed. */
static void test_pressure(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("pressure", 16 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {0};
	char file[] = "/var/tmp/oomkit-pressure-XXXXXX";
	int fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);

	char of[300];
	snprintf(of, sizeof(of), "of=%s", file);
	assert_int_equal(oomkit_watch_pressure(ctx, cg, OOMKIT_PRESSURE_LOW, 0, handler, &r, NULL), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char v[32];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		if (tl_write(cg, "cgroup.procs", v) != 0)
			_exit(126);
		execl("/bin/dd", "dd", "if=/dev/zero", of, "bs=1M", "count=96", "status=none", (char *)NULL);
		_exit(127);
	}
	assert_true(run_until(ctx, pressure_seen, &r, 30000));
	kill(pid, SIGKILL);
	tl_wait_exit(pid, 5000);
	unlink(file);
	oomkit_free(ctx);
}

static bool gone_seen(void *p)
{
	return ((struct rec *)p)->gone > 0;
}

/* 3c. Removing a watched cgroup delivers GONE and closes the watch. */
static void test_gone(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("gone", 32 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {0};
	oomkit_watch *w;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, 1000), 0);
	assert_int_equal(oomkit_cgroup_remove(ctx, cg), 0);
	assert_true(run_until(ctx, gone_seen, &r, 5000));
	assert_int_equal(r.gone, 1);
	assert_int_equal(r.oom, 0);
	/* The watch is gone: unwatching it again is refused. */
	assert_int_equal(oomkit_unwatch(ctx, w), -EINVAL);
	oomkit_free(ctx);
}

static bool killed_by_kernel(void *p)
{
	return tl_kernel_kills(p) >= 1;
}

static bool held_again(void *p)
{
	return tl_held(p);
}

/* 4. A handler that keeps waiting: after the delay the kernel killer is
 * re-enabled, the kernel kills, and oomkit holds the killer off again. */
static void test_delay_hands_to_kernel(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("delay", 32 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {.verdict = OOMKIT_WAIT};
	oomkit_watch *w;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, 300), 0);
	pid_t hog = tl_spawn_hog(cg, 64, 1024, 0);
	assert_true(run_until(ctx, oom_seen, &r, 20000));
	/* Still waiting right after the event: nothing has killed the hog. */
	assert_true(tl_alive(hog));
	assert_true(run_until(ctx, killed_by_kernel, (void *)cg, 20000));
	int st = tl_wait_exit(hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(run_until(ctx, oom_cleared, (void *)cg, 5000));
	/* The loop notices and takes the killer back. */
	assert_true(run_until(ctx, held_again, (void *)cg, 20000));
	oomkit_free(ctx);
}

static void dispatch_ms(void *arg, unsigned ms)
{
	uint64_t end = th_now_ms() + ms;
	do
		assert_true(oomkit_dispatch(arg, (int)ms) >= 0);
	while (th_now_ms() < end);
}

/* A handler that keeps waiting while a job gives back a page now and then:
 * each wakes the hog, which clears under_oom until it fails its charge
 * again.  Those 0s are not the end of the OOM: the delay runs from its
 * start, and the kernel kills at its end.  (When one 0 ended the OOM, the
 * next event began a new one with a delay of its own, and the OOM never
 * reached the kernel.)  Without a guardian, whose clock would do the same:
 * this is the loop's. */
static void test_delay_flicker(void **state)
{
	(void)state;
	const uint64_t delay_ms = 1000;
	const char *cg = tl_cgroup("delay-flicker", 32 * TL_MIB);
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;
	struct rec r = {.verdict = OOMKIT_WAIT};
	oomkit_watch *w;

	oomkit_options_init(&o);
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, delay_ms), 0);
	struct tl_flicker f = {.cg = cg, .hold_ms = 40, .spend = dispatch_ms, .arg = ctx};
	pid_t giver = tl_spawn_giver(cg, 256, &f.giver);
	assert_true(giver > 0);
	f.hog = tl_spawn_hog(cg, 64, 1024, 0);
	assert_true(run_until(ctx, oom_seen, &r, 20000));
	int k = tl_flicker_until_killed(&f, TL_OOM_SETTLE_MS, 4 * delay_ms, 60000);
	kill(giver, SIGKILL);
	(void)tl_wait_exit(giver, 5000);
	close(f.giver);
	if (k < 0) {
		assert_false(k == -ENOENT && tl_kernel_required());
		oomkit_free(ctx);
		skip();
	}
	printf("flicker: %d OOMs seen by the handler\n", r.oom);
	assert_int_equal(k, 1);
	assert_true(f.flickers > 0);
	int st = tl_wait_exit(f.hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(killed_by_kernel((void *)cg));
	assert_true(run_until(ctx, held_again, (void *)cg, 20000));
	oomkit_free(ctx);
}

/* Handing an OOM to the kernel from outside the handler, long before the delay. */
static void test_hand_to_kernel(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("handoff", 32 * TL_MIB);
	oomkit_ctx *ctx = new_ctx();
	struct rec r = {.verdict = OOMKIT_WAIT};
	oomkit_watch *w, *plain;

	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_watch_threshold(ctx, cg, 1 * TL_MIB, 0, handler, &r, &plain), 0);
	assert_int_equal(oomkit_hand_to_kernel(ctx, plain), -EINVAL);
	assert_int_equal(oomkit_hand_to_kernel(ctx, w), -EINVAL);
	assert_int_equal(oomkit_take_over(ctx, w, 600000), 0);
	pid_t hog = tl_spawn_hog(cg, 64, 1024, 0);
	assert_true(run_until(ctx, oom_seen, &r, 20000));
	assert_true(tl_alive(hog));
	assert_int_equal(oomkit_hand_to_kernel(ctx, w), 0);
	assert_true(run_until(ctx, killed_by_kernel, (void *)cg, 20000));
	int st = tl_wait_exit(hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(run_until(ctx, held_again, (void *)cg, 20000));
	oomkit_free(ctx);
}

/* An OOM handed to the kernel while the task waiting in it is frozen. */
struct frozen {
	const char *cg;
	oomkit_ctx *ctx;
	oomkit_watch *w;
	struct rec r;
	pid_t hog;
	uint64_t handed_ms; /* when it was handed over */
};

/* A hog in a new cgroup name is stuck in an OOM that the handler leaves
 * waiting; it is frozen, and the OOM handed to the kernel: giving the
 * killer back wakes the hog, which clears under_oom and stops in the freezer
 * before it can fail its charge again and meet the killer.  Returns false
 * (the test then skips) without a v1 freezer hierarchy. */
static bool hand_over_frozen(struct frozen *f, const char *name)
{
	*f = (struct frozen){.cg = tl_cgroup(name, 32 * TL_MIB), .ctx = new_ctx(), .r.verdict = OOMKIT_WAIT};
	assert_int_equal(oomkit_watch_oom(f->ctx, f->cg, 0, handler, &f->r, &f->w), 0);
	assert_int_equal(oomkit_take_over(f->ctx, f->w, 600000), 0);
	f->hog = tl_spawn_hog(f->cg, 64, 1024, 0);
	assert_true(run_until(f->ctx, oom_seen, &f->r, 20000));
	int r = tl_freeze(f->hog);
	if (r == -ENOENT) {
		assert_false(tl_kernel_required());
		oomkit_free(f->ctx);
		return false;
	}
	assert_int_equal(r, 0);
	f->handed_ms = th_now_ms();
	assert_int_equal(oomkit_hand_to_kernel(f->ctx, f->w), 0);
	assert_true(run_until(f->ctx, oom_cleared, (void *)f->cg, 20000));
	return true;
}

/* Thaws f's hog, which must then meet the kernel's killer (kill_disable,
 * read while it was frozen, 0: the killer given back), and the killer be
 * held off again after.  After a second of under_oom 0 the loop takes the
 * OOM as ended without a kill (test_hand_to_kernel_no_kill): a machine that
 * kept this test off its CPUs that long cannot tell the two apart, and the
 * test skips (false). */
static bool thaw_into_kernel_kill(struct frozen *f, uint64_t kill_disable, const char *what)
{
	uint64_t frozen_ms = th_now_ms() - f->handed_ms;
	assert_int_equal(tl_thaw(), 0);
	if (frozen_ms >= 900) {
		printf("%s took %llu ms: not checked\n", what, (unsigned long long)frozen_ms);
		oomkit_free(f->ctx);
		return false;
	}
	assert_int_equal(kill_disable, 0);
	assert_true(run_until(f->ctx, killed_by_kernel, (void *)f->cg, 20000));
	int st = tl_wait_exit(f->hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(run_until(f->ctx, held_again, (void *)f->cg, 20000));
	printf("%s: %llu ms\n", what, (unsigned long long)frozen_ms);
	oomkit_free(f->ctx);
	return true;
}

/* While the tasks woken by the hand-over have not failed their charge again,
 * under_oom reads 0 with nothing resolved: the loop keeps the killer given
 * back, and the kernel kills once they do.  (Taking the 0 for the end of the
 * OOM held the killer off again in that gap, and the same OOM came back to
 * the handler as a new one, to wait its 600 s.) */
static void test_hand_to_kernel_woken(void **state)
{
	(void)state;
	struct frozen f;
	if (!hand_over_frozen(&f, "handoff-woken"))
		skip();
	/* Several of the loop's polls read under_oom 0 and no kill. */
	for (int i = 0; i < 5; i++)
		assert_true(oomkit_dispatch(f.ctx, 20) >= 0);
	uint64_t kill_disable = tl_read_key(f.cg, "memory.oom_control", "oom_kill_disable");
	if (!thaw_into_kernel_kill(&f, kill_disable, "hand-over to thaw"))
		skip();
}

/* An OOM handed to the kernel that ends without a kill -- here the limit
 * is raised while the woken hog is frozen -- still gets its killer held off
 * again, once under_oom has stayed 0 a while. */
static void test_hand_to_kernel_no_kill(void **state)
{
	(void)state;
	struct frozen f;
	if (!hand_over_frozen(&f, "handoff-nokill"))
		skip();
	/* From here the hog cannot be in an OOM again: frozen, then under a
	 * limit twice what it wants.  (Before, it may have been: a page of its
	 * own reclaimed wakes it to fault and notify again, and that event may
	 * be read only now, under_oom 0.) */
	int live = f.r.live;
	assert_int_equal(oomkit_set_limit(f.ctx, f.cg, 128 * TL_MIB), 0);
	assert_int_equal(tl_thaw(), 0);
	assert_true(tl_wait_usage(f.cg, 64 * TL_MIB, 20000));
	assert_true(run_until(f.ctx, held_again, (void *)f.cg, 20000));
	assert_int_equal(tl_kernel_kills(f.cg), 0);
	assert_true(tl_alive(f.hog));
	assert_int_equal(f.r.live, live);
	oomkit_free(f.ctx);
}

/* A watch taken over again while its OOM is the kernel's (a daemon that
 * writes its hold again after systemd wrote over it, or a new delay): the
 * killer stays given back until the kernel is done, then held off again.
 * (Holding it off again there left the hog waiting in an OOM nobody
 * handled, for a new delay.) */
static void test_take_over_during_hand_over(void **state)
{
	(void)state;
	struct frozen f;
	if (!hand_over_frozen(&f, "handoff-again"))
		skip();
	assert_int_equal(oomkit_take_over(f.ctx, f.w, 600000), 0);
	uint64_t kill_disable = tl_read_key(f.cg, "memory.oom_control", "oom_kill_disable");
	if (!thaw_into_kernel_kill(&f, kill_disable, "hand-over to take-over"))
		skip();
}

/* Parent OOM: every watch below sees it, with the parent as origin. */
static void test_origin_is_parent(void **state)
{
	(void)state;
	const char *p = tl_cgroup("origin", 48 * TL_MIB);
	const char *a = tl_cgroup("origin/a", 0);
	const char *b = tl_cgroup("origin/b", 0);
	oomkit_ctx *ctx = new_ctx();
	struct rec rp = {.verdict = OOMKIT_RESOLVED}, ra = {0}, rb = {0};
	oomkit_watch *wp;

	assert_int_equal(oomkit_watch_oom(ctx, p, 0, handler, &rp, &wp), 0);
	assert_int_equal(oomkit_watch_oom(ctx, a, 0, handler, &ra, NULL), 0);
	assert_int_equal(oomkit_watch_oom(ctx, b, 0, handler, &rb, NULL), 0);
	assert_int_equal(oomkit_take_over(ctx, wp, 10000), 0);
	pid_t hog = tl_spawn_hog(a, 96, 1024, 0);
	assert_true(tl_wait_usage(a, 4 * TL_MIB, 10000));
	rp.victim = hog;
	rp.victim_start = start_time_of(ctx, hog);
	assert_true(run_until(ctx, oom_seen, &rp, 20000));
	assert_true(run_until(ctx, oom_seen, &ra, 5000));
	assert_true(run_until(ctx, oom_seen, &rb, 5000));
	assert_true(rp.own);
	assert_false(ra.own);
	assert_false(rb.own);
	assert_string_equal(ra.origin, p);
	assert_string_equal(rb.origin, p);
	assert_int_equal(rp.kill_result, 0);
	assert_true(run_until(ctx, oom_cleared, (void *)p, 5000));
	oomkit_free(ctx);
}

/* 9. Watching the memcg this process lives in, or an ancestor, is refused. */
static void test_refuse_self(void **state)
{
	(void)state;
	const char *parent = tl_cgroup("self", 64 * TL_MIB);
	const char *child = tl_cgroup("self/inner", 0);
	/* Moving this test process would touch the memcg it came from; a child does it instead. */
	pid_t pid = fork();
	if (pid == 0) {
		char v[32];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		if (tl_write(child, "cgroup.procs", v) != 0)
			_exit(10);
		struct oomkit_options o;
		oomkit_ctx *ctx;
		oomkit_options_init(&o);
		o.guardian = false;
		if (oomkit_new(&o, &ctx) < 0)
			_exit(11);
		int r1 = oomkit_watch_oom(ctx, child, 0, handler, NULL, NULL);
		int r2 = oomkit_watch_oom(ctx, parent, 0, handler, NULL, NULL);
		int r3 = oomkit_watch_oom(ctx, child, OOMKIT_WATCH_ALLOW_SELF, handler, NULL, NULL);
		oomkit_free(ctx);
		_exit(r1 == -ELOOP && r2 == -ELOOP && r3 == 0 ? 0 : 12);
	}
	int st = tl_wait_exit(pid, 10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kill_resolves),
	    cmocka_unit_test(test_grow_resolves),
	    cmocka_unit_test(test_threshold_both_ways),
	    cmocka_unit_test(test_embedded_loop),
	    cmocka_unit_test(test_pressure),
	    cmocka_unit_test(test_gone),
	    cmocka_unit_test(test_delay_hands_to_kernel),
	    cmocka_unit_test(test_delay_flicker),
	    cmocka_unit_test(test_hand_to_kernel),
	    cmocka_unit_test(test_hand_to_kernel_woken),
	    cmocka_unit_test(test_hand_to_kernel_no_kill),
	    cmocka_unit_test(test_take_over_during_hand_over),
	    cmocka_unit_test(test_origin_is_parent),
	    cmocka_unit_test(test_refuse_self),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
