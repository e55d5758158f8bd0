/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-storm.c - an OOM storm: 500 memcgs of 8 MiB, each with a hog that
 * wants 12 MiB, all released at once, all watched and taken over by one
 * liboomkit context in this process.  The handler kills each hog on its
 * memcg's OOM.  Every OOM must be handled (the handler called for every
 * memcg, none lost), every memcg must leave its OOM, and the kernel killer,
 * which a lost or late event would bring in after the delay, must kill none.
 *
 * The memcgs sit under one parent whose limit bounds the whole storm
 * (500 x 8 MiB plus a margin), so the parent itself never runs out.
 */
#include <errno.h>
#include <fcntl.h>
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

#define STORM 500
#define STORM_LIMIT (8 * TL_MIB)
#define STORM_HOG_MIB 12
/* Longer than the storm can take: an OOM still unhandled this long after its
 * event is handed to the kernel, which then shows up as a kernel kill. */
#define STORM_DELAY_MS 60000
/* Failure bound for the whole storm (not a timing claim). */
#define STORM_DEADLINE_MS 120000

struct slot {
	char cg[256];
	pid_t hog;
	uint64_t hog_start;
	int calls; /* own OOM events delivered */
	int kill_result;
	int hog_status;
};

static struct slot slots[STORM];
static int handled, duplicates, foreign;
static uint64_t first_ms, last_ms; /* first and last OOM handled */

static enum oomkit_verdict storm_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct slot *s = userdata;
	if (ev->kind != OOMKIT_EVENT_OOM)
		return OOMKIT_RESOLVED;
	if (!ev->own) {
		foreign++;
		return OOMKIT_WAIT;
	}
	if (!ev->under_oom)
		return OOMKIT_RESOLVED;
	if (s->calls++) {
		duplicates++;
		return OOMKIT_RESOLVED;
	}
	/* Signal and move on: waiting for each exit in turn would make the
	 * last memcgs wait for all the others' exits. */
	s->kill_result = oomkit_kill(ctx, s->hog, s->hog_start, 0);
	if (!handled++)
		first_ms = th_now_ms();
	last_ms = th_now_ms();
	return OOMKIT_RESOLVED;
}

/* A child that enters cg, waits for the start (EOF on go_fd), then becomes
 * the hog. */
static pid_t spawn_waiting_hog(const char *cg, int go_fd, int go_wfd)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid != 0)
		return pid;
	/* testlib's cleanup on a signal is the test's, not a hog's. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	close(go_wfd);
	char v[32], c, mib[16];
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (tl_write(cg, "cgroup.procs", v) != 0)
		_exit(126);
	if (read(go_fd, &c, 1) != 0)
		_exit(125);
	snprintf(mib, sizeof(mib), "%d", STORM_HOG_MIB);
	char *argv[] = {(char *)tl_hog_path(), mib, NULL};
	execv(argv[0], argv);
	_exit(127);
}

static bool all_entered(void *arg)
{
	(void)arg;
	for (int i = 0; i < STORM; i++)
		if (tl_read_u64(slots[i].cg, "cgroup.procs") != (uint64_t)slots[i].hog)
			return false;
	return true;
}

static int count_under_oom(void)
{
	int n = 0;
	for (int i = 0; i < STORM; i++)
		n += tl_under_oom(slots[i].cg);
	return n;
}

/* Dispatches until every memcg was handled and none is under OOM any more. */
static bool storm_resolved(oomkit_ctx *ctx, uint64_t deadline)
{
	while (th_now_ms() < deadline) {
		assert_true(oomkit_dispatch(ctx, 100) >= 0);
		if (handled + duplicates < STORM)
			continue;
		if (count_under_oom() == 0)
			return true;
	}
	return false;
}

static void test_storm(void **state)
{
	(void)state;
	char v[32];
	/* The parent bounds the storm: every memcg full, plus a margin. */
	snprintf(v, sizeof(v), "%llu", (unsigned long long)(STORM * STORM_LIMIT + 256 * TL_MIB));
	assert_int_equal(tl_write(tl_parent(), tl_limit_file(), v), 0);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)(STORM * STORM_LIMIT + 128 * TL_MIB));
	const char *parent = tl_cgroup("storm", 0);
	assert_int_equal(tl_write(parent, tl_limit_file(), v), 0);

	int go[2];
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	for (int i = 0; i < STORM; i++) {
		char name[32];
		snprintf(name, sizeof(name), "storm/%d", i);
		snprintf(slots[i].cg, sizeof(slots[i].cg), "%s", tl_cgroup(name, STORM_LIMIT));
		slots[i].hog = spawn_waiting_hog(slots[i].cg, go[0], go[1]);
	}
	close(go[0]);
	assert_true(tl_wait_for(all_entered, NULL, 30000));

	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;
	oomkit_options_init(&o);
	o.max_cgroups = 600;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	for (int i = 0; i < STORM; i++) {
		struct oomkit_process p;
		oomkit_watch *w;
		assert_int_equal(oomkit_process_info(ctx, slots[i].hog, &p), 0);
		slots[i].hog_start = p.start_time;
		int r = oomkit_watch_oom(ctx, slots[i].cg, 0, storm_handler, &slots[i], &w);
		if (r < 0)
			fail_msg("watch %d (%s): %s", i, slots[i].cg, strerror(-r));
		assert_int_equal(oomkit_take_over(ctx, w, STORM_DELAY_MS), 0);
	}

	/* Go: every hog at once. */
	uint64_t t0 = th_now_ms();
	close(go[1]);
	bool resolved = storm_resolved(ctx, t0 + STORM_DEADLINE_MS);
	uint64_t t1 = th_now_ms();

	int lost = 0, failed_kills = 0, pending_kills = 0, kernel_kills = 0, not_killed = 0;
	for (int i = 0; i < STORM; i++) {
		struct slot *s = &slots[i];
		lost += s->calls == 0;
		/* -ETIMEDOUT: signalled, not yet gone when the handler returned. */
		pending_kills += s->kill_result == -ETIMEDOUT;
		if (s->calls > 0 && s->kill_result != 0 && s->kill_result != -ETIMEDOUT) {
			print_message("  %s: kill of %d: %s\n", s->cg, (int)s->hog,
				      strerror(-s->kill_result));
			failed_kills++;
		}
		uint64_t k = tl_kernel_kills(s->cg);
		kernel_kills += k != 0;
		s->hog_status = tl_wait_exit(s->hog, 5000);
		not_killed += !(s->hog_status != -1 && WIFSIGNALED(s->hog_status) &&
				WTERMSIG(s->hog_status) == SIGKILL);
	}
	int still = count_under_oom();
	print_message("storm: %d memcgs, %d handled, %d lost, %llu ms until all resolved\n", STORM, handled,
		      lost, (unsigned long long)(t1 - t0));
	print_message("  first OOM handled after %llu ms, last after %llu ms\n",
		      (unsigned long long)(first_ms - t0), (unsigned long long)(last_ms - t0));
	print_message("  %d duplicate events, %d foreign, %d failed kills (%d still exiting when signalled), "
		      "%d memcgs with kernel kills, "
		      "%d hogs not killed, %d still under OOM\n",
		      duplicates, foreign, failed_kills, pending_kills, kernel_kills, not_killed, still);
	oomkit_free(ctx);
	assert_true(resolved);
	assert_int_equal(handled, STORM);
	assert_int_equal(lost, 0);
	/* One task per memcg enters the OOM once: one event each. */
	assert_int_equal(duplicates, 0);
	assert_int_equal(failed_kills, 0);
	assert_int_equal(foreign, 0);
	assert_int_equal(kernel_kills, 0);
	assert_int_equal(not_killed, 0);
	assert_int_equal(still, 0);
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_storm),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
