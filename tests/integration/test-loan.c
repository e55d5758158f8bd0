/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-loan.c - oomkit_lend() and oomkit_repay() on real memcgs with the
 * kernel killer held off, and the signals of a graceful kill
 * (oomkit_signal_start(), oomkit_kill_pidfd()).
 *
 * The victim (tests/helpers/victim.c) sleeps in the kernel at its memcg's
 * limit, so its SIGUSR1 handler cannot run; lent headroom lets it run, it
 * gives half its memory back, and the loan is repaid.  One that keeps the
 * headroom cannot be repaid (-EBUSY) until it is killed; a limit changed
 * meanwhile voids the loan (-ESTALE); an ancestor's room bounds the loan.
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

#define KEEP (64ull * TL_MIB)

static char dir[64];

static const char *victim_path(void)
{
	const char *env = getenv("OOMKIT_VICTIM");
	return env && *env ? env : OOMKIT_VICTIM;
}

static const char *file_in_dir(const char *name)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static pid_t spawn_victim(const char *rel, unsigned mib, const char *mode, const char *file)
{
	char m[16];
	struct th_spawn how = {.cgroup = tl_abs(rel), .die_with_parent = true, .reset_oom_score_adj = true};
	snprintf(m, sizeof(m), "%u", mib);
	char *argv[] = {(char *)victim_path(), m, (char *)mode, (char *)file, NULL};
	pid_t pid = th_spawn(&how, argv);
	assert_true(pid > 0);
	return pid;
}

static oomkit_ctx *new_ctx(void)
{
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;

	oomkit_options_init(&o);
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	return ctx;
}

/* A memcg of limit_mib whose kernel killer is held off. */
static const char *held(const char *name, unsigned limit_mib)
{
	const char *rel = tl_cgroup(name, limit_mib * TL_MIB);
	assert_int_equal(tl_write(rel, "memory.oom_control", "1"), 0);
	return rel;
}

static bool has_file(void *arg)
{
	return access(arg, F_OK) == 0;
}

struct below {
	const char *rel;
	uint64_t bytes;
};

static bool usage_below(void *arg)
{
	struct below *b = arg;
	return tl_read_u64(b->rel, "memory.usage_in_bytes") < b->bytes;
}

struct allocated {
	oomkit_ctx *ctx;
	pid_t pid;
	uint64_t kib;
};

/* The victim sets its signal dispositions before it allocates: one that
 * holds its memory is ready for the signals a test sends. */
static bool has_allocated(void *arg)
{
	struct allocated *a = arg;
	struct oomkit_process p;
	return oomkit_process_info(a->ctx, a->pid, &p) == 0 && p.rss_anon_kib >= a->kib;
}

static void wait_allocated(oomkit_ctx *ctx, pid_t pid, unsigned mib)
{
	struct allocated a = {ctx, pid, (uint64_t)mib * 1024};
	assert_true(tl_wait_for(has_allocated, &a, 60000));
}

static void finish(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_true(tl_wait_exit(pid, 60000) != -1);
}

/* A victim that frees half its memory on SIGUSR1 does so once lent headroom,
 * and the loan is then repaid: the limit is what it was. */
static void test_lend_lets_the_job_shed(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx();
	const char *rel = held("shed", 32);
	const char *shed = file_in_dir("shed");
	pid_t v = spawn_victim(rel, 60, "shed", shed);
	struct oomkit_loan loan;

	assert_true(tl_wait_under_oom(rel, 60000));
	assert_int_equal(kill(v, SIGUSR1), 0);
	assert_int_equal(oomkit_lend(ctx, rel, 8 * TL_MIB, KEEP, &loan), 0);
	assert_int_equal(loan.limit_bytes, 32 * TL_MIB);
	assert_int_equal(loan.lent_bytes, 8 * TL_MIB);
	assert_int_equal(loan.clear_bytes, 32 * TL_MIB);
	assert_int_equal(tl_read_u64(rel, "memory.limit_in_bytes"), 40 * TL_MIB);
	assert_true(tl_wait_for(has_file, (void *)shed, 60000));
	struct below b = {rel, loan.clear_bytes};
	assert_true(tl_wait_for(usage_below, &b, 60000));
	assert_int_equal(oomkit_repay(ctx, rel, &loan), 0);
	assert_int_equal(tl_read_u64(rel, "memory.limit_in_bytes"), 32 * TL_MIB);
	assert_true(tl_alive(v));
	finish(v);
	oomkit_free(ctx);
}

/* A job that keeps what it was lent cannot be repaid until it lets go. */
static void test_repay_waits_for_usage(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx();
	const char *rel = held("keep", 32);
	pid_t v = spawn_victim(rel, 60, "ignore", NULL);
	struct oomkit_loan loan;

	assert_true(tl_wait_under_oom(rel, 60000));
	assert_int_equal(oomkit_lend(ctx, rel, 8 * TL_MIB, KEEP, &loan), 0);
	assert_true(tl_wait_usage(rel, 40 * TL_MIB, 60000));
	assert_int_equal(oomkit_repay(ctx, rel, &loan), -EBUSY);
	assert_int_equal(tl_read_u64(rel, "memory.limit_in_bytes"), 40 * TL_MIB);
	finish(v);
	assert_int_equal(oomkit_repay(ctx, rel, &loan), 0);
	assert_int_equal(tl_read_u64(rel, "memory.limit_in_bytes"), 32 * TL_MIB);
	oomkit_free(ctx);
}

/* A limit someone else changed is not the loan's to undo. */
static void test_repay_after_change_is_void(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx();
	const char *rel = held("changed", 32);
	struct oomkit_loan loan;
	char v[32];

	assert_int_equal(oomkit_lend(ctx, rel, 4 * TL_MIB, KEEP, &loan), 0);
	snprintf(v, sizeof(v), "%llu", 48 * TL_MIB);
	assert_int_equal(tl_write(rel, "memory.limit_in_bytes", v), 0);
	assert_int_equal(oomkit_repay(ctx, rel, &loan), -ESTALE);
	assert_int_equal(tl_read_u64(rel, "memory.limit_in_bytes"), 48 * TL_MIB);
	oomkit_free(ctx);
}

/* A parent's room bounds the loan (half of it); no limit, nothing to lend. */
static void test_lend_bounds(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx();
	const char *parent = tl_cgroup("bounded", 40 * TL_MIB);
	const char *rel = held("bounded/job", 32);
	pid_t v = spawn_victim(rel, 60, "ignore", NULL);
	struct oomkit_loan loan;

	assert_true(tl_wait_under_oom(rel, 60000));
	uint64_t used = tl_read_u64(parent, "memory.usage_in_bytes");
	assert_int_equal(oomkit_lend(ctx, rel, 64 * TL_MIB, KEEP, &loan), 0);
	assert_true(loan.lent_bytes <= (40 * TL_MIB - used) / 2);
	assert_true(loan.lent_bytes > 0);
	finish(v);
	assert_int_equal(oomkit_repay(ctx, rel, &loan), 0);

	const char *free_rel = tl_cgroup("unlimited", 0);
	assert_int_equal(oomkit_lend(ctx, free_rel, TL_MIB, KEEP, &loan), -EINVAL);
	assert_int_equal(oomkit_lend(ctx, "", TL_MIB, KEEP, &loan), -EINVAL);
	/* Keeping more than the machine has leaves nothing to lend. */
	assert_int_equal(oomkit_lend(ctx, rel, TL_MIB, UINT64_MAX / 2, &loan), -ENOSPC);
	oomkit_free(ctx);
}

/* A graceful kill: SIGTERM through the pidfd, and SIGKILL through the same
 * pidfd for one that ignores it. */
static void test_signal_then_kill(void **state)
{
	(void)state;
	oomkit_ctx *ctx = new_ctx();
	const char *rel = tl_cgroup("graceful", 64 * TL_MIB);
	const char *term = file_in_dir("term");
	pid_t a = spawn_victim(rel, 4, "term", term), b = spawn_victim(rel, 4, "ignore", NULL);
	struct oomkit_process pa, pb;
	int fa, fb;

	wait_allocated(ctx, a, 4);
	wait_allocated(ctx, b, 4);
	assert_int_equal(oomkit_process_info(ctx, a, &pa), 0);
	assert_int_equal(oomkit_process_info(ctx, b, &pb), 0);
	assert_int_equal(oomkit_signal_start(ctx, a, pa.start_time + 1, SIGTERM, &fa), -ESTALE);
	assert_int_equal(oomkit_signal_start(ctx, a, pa.start_time, SIGTERM, &fa), 0);
	int status = tl_wait_exit(a, 60000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(has_file((void *)term));
	close(fa);

	assert_int_equal(oomkit_signal_start(ctx, b, pb.start_time, SIGTERM, &fb), 0);
	assert_true(tl_alive(b));
	assert_int_equal(oomkit_kill_pidfd(ctx, fb), 0);
	status = tl_wait_exit(b, 60000);
	assert_true(th_sigkilled(status));
	assert_int_equal(oomkit_kill_pidfd(ctx, fb), -ESRCH);
	close(fb);
	oomkit_free(ctx);
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

int main(void)
{
	tl_require_kernel();
	snprintf(dir, sizeof(dir), "/tmp/oomkit-test-loan.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	atexit(remove_dir);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lend_lets_the_job_shed),     cmocka_unit_test(test_repay_waits_for_usage),
	    cmocka_unit_test(test_repay_after_change_is_void), cmocka_unit_test(test_lend_bounds),
	    cmocka_unit_test(test_signal_then_kill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
