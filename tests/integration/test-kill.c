/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-kill.c - oomkit_kill() and oomkit_kill_cgroup() on real processes in
 * real memcgs: one process of three is killed and the others live; a kill
 * aimed at a pid that was reused (forced in a pid namespace) leaves the new
 * process alone; a tree of processes and a process that keeps forking are all
 * killed, with the freezer and without it, and the freezer cgroup is removed;
 * a memcg blocked under OOM leaves it when its allocator is killed; reports
 * written while processes come and go stay valid and say who vanished; trees
 * a job's owner could make (70 levels deep, paths of 8 KiB, more processes
 * than the context's buffers) are listed, placed, reported and killed whole.
 *
 * The freezer cgroups the library makes are put below the test's freezer
 * parent (testlib's oomkit-test-PID), passed as the context's freezer root.
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../helpers/jsoncheck.h"
#include "oomkit.h"
#include "testlib.h"

#define TREE_SIZE 20

static char freezer_parent[PATH_MAX]; /* tl_freezer_parent() */
static char logbuf[16384];

static void log_to_buf(enum oomkit_log_level level, const char *msg, void *userdata)
{
	(void)level;
	(void)userdata;
	size_t n = strlen(logbuf);
	snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", msg);
}

/* A context; freezer: true for the test's freezer parent, false for none. */
static oomkit_ctx *new_ctx(bool freezer, bool guardian)
{
	struct oomkit_options o;
	oomkit_ctx *ctx = NULL;

	oomkit_options_init(&o);
	o.freezer_root = freezer ? freezer_parent : "";
	o.guardian = guardian;
	o.log = log_to_buf;
	logbuf[0] = 0;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	return ctx;
}

static uint64_t start_time_of(oomkit_ctx *ctx, pid_t pid)
{
	struct oomkit_process p;
	assert_int_equal(oomkit_process_info(ctx, pid, &p), 0);
	return p.start_time;
}

static int count_pids(oomkit_ctx *ctx, const char *cg)
{
	static pid_t pids[8192];
	return oomkit_cgroup_pids(ctx, cg, true, pids, 8192);
}

static bool has_pid(oomkit_ctx *ctx, const char *cg, pid_t pid)
{
	static pid_t pids[8192];
	int n = oomkit_cgroup_pids(ctx, cg, true, pids, 8192);
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Reaps every exited child (orphans come to us: we are a subreaper). */
static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void deep_cleanup(void);

static void fatal(int sig)
{
	deep_cleanup();
	tl_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The test's freezer parent (testlib's, which tl_cleanup() thaws and
 * removes with what the library left below it, at exit and on fatal
 * signals, so no task stays frozen); skips (or fails with
 * OOMKIT_REQUIRE_KERNEL=1) without a v1 freezer hierarchy. */
static void make_freezer_parent(void)
{
	bool required = tl_kernel_required();
	const char *p = tl_freezer_parent();
	char state[PATH_MAX + 16];

	if (p)
		snprintf(state, sizeof(state), "%s/freezer.state", p);
	if (!p || access(state, W_OK) != 0) {
		fprintf(stderr, "%s: no cgroup v1 freezer hierarchy at %s (%s)\n",
			required ? "FAIL (OOMKIT_REQUIRE_KERNEL=1)" : "SKIP", TL_FREEZER_ROOT,
			strerror(errno));
		exit(required ? 1 : 77);
	}
	snprintf(freezer_parent, sizeof(freezer_parent), "%s", p);
	int sigs[] = {SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGALRM};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], fatal);
}

/* A forked child that does not exec: our cleanup handlers are not its own. */
static void child_init(void)
{
	int sigs[] = {SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGALRM};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

static bool freezer_child_exists(void)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/oomkit-kill-%d", freezer_parent, (int)getpid());
	return access(path, F_OK) == 0;
}

/* ------------------------------------------------- (a) one of three */

static void test_kill_one_of_three(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("three", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(false, false);
	pid_t a = tl_spawn_hog(cg, 4, 1024, 0), b = tl_spawn_hog(cg, 4, 1024, 0),
	      c = tl_spawn_hog(cg, 4, 1024, 0);

	assert_true(tl_wait_usage(cg, 12 * TL_MIB, 10000));
	uint64_t sa = start_time_of(ctx, a), sb = start_time_of(ctx, b);

	/* A wrong start time is another process: nothing is sent. */
	assert_int_equal(oomkit_kill(ctx, a, sa + 1, 1000), -ESTALE);
	assert_true(tl_alive(a));

	assert_int_equal(oomkit_kill(ctx, b, sb, 5000), 0);
	/* 0 means it has exited already: no waiting needed to see it. */
	assert_false(tl_alive(b));
	assert_false(has_pid(ctx, cg, b));
	/* A zombie is gone as far as memory goes. */
	assert_int_equal(oomkit_kill(ctx, b, sb, 1000), -ESRCH);
	int st = tl_wait_exit(b, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(oomkit_kill(ctx, b, sb, 1000), -ESRCH);

	assert_true(tl_alive(a));
	assert_true(tl_alive(c));
	assert_int_equal(count_pids(ctx, cg), 2);
	assert_true(has_pid(ctx, cg, a) && has_pid(ctx, cg, c));
	oomkit_free(ctx);
}

/* ------------------------------------------------- (b) pid reuse */

struct reuse {
	int stage; /* how far the namespace side got */
	char err[160];
	int trials;	 /* completed trials */
	int reused;	 /* trials whose new process had the old pid and another start time */
	int stale;	 /* kills aimed at the old process that gave -ESTALE */
	int wrong_kills; /* new processes that such a kill hurt */
	int controls;	 /* kills aimed at the new process that killed it */
	uint64_t example_old, example_new;
};

#define REUSE_FIRST_PID 300
#define REUSE_TRIALS 50

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -errno;
	close(fd);
	return r;
}

/* Forks a sleeping child that gets pid want in our pid namespace. */
static pid_t spawn_at(const char *proc, pid_t want)
{
	char path[PATH_MAX + 32], v[16];
	snprintf(path, sizeof(path), "%s/sys/kernel/ns_last_pid", proc);
	snprintf(v, sizeof(v), "%d", (int)want - 1);
	if (write_str(path, v) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static bool alive_child(pid_t pid)
{
	siginfo_t si = {0};
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0;
}

/* One trial: a process at pid, gone, the pid reused by a process with
 * another start time; then a kill aimed at the first. */
static int reuse_trial(oomkit_ctx *ctx, const char *procdir, pid_t pid, struct reuse *res)
{
	struct oomkit_process p;
	pid_t old_pid, new_pid;
	uint64_t old_start;
	int st;

	old_pid = spawn_at(procdir, pid);
	if (old_pid <= 0 || oomkit_process_info(ctx, old_pid, &p) != 0)
		return -1;
	old_start = p.start_time;
	reap(old_pid);
	/* Reuse the pid until the new process's start time differs (the clock
	 * ticks every few ms): then only the start time tells them apart. */
	for (int tries = 0;; tries++) {
		new_pid = spawn_at(procdir, pid);
		if (tries == 10000 || new_pid <= 0 || oomkit_process_info(ctx, new_pid, &p) != 0)
			return -1;
		if (new_pid != old_pid || p.start_time != old_start)
			break;
		reap(new_pid);
	}
	if (new_pid == old_pid && p.start_time != old_start)
		res->reused++;
	res->example_old = old_start;
	res->example_new = p.start_time;
	if (oomkit_kill(ctx, old_pid, old_start, 1000) == -ESTALE)
		res->stale++;
	if (!alive_child(new_pid))
		res->wrong_kills++;
	/* The control: aimed at the right identity, the same call kills. */
	if (oomkit_kill(ctx, new_pid, p.start_time, 5000) == 0 && waitpid(new_pid, &st, 0) == new_pid &&
	    WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		res->controls++;
	else
		reap(new_pid);
	return 0;
}

/* Runs as pid 1 of a new pid namespace with its own /proc at procdir. */
static void reuse_in_namespace(const char *procdir, struct reuse *res)
{
	struct oomkit_options o;
	oomkit_ctx *ctx;

	res->stage = 1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("proc", procdir, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		snprintf(res->err, sizeof(res->err), "mount proc: %s", strerror(errno));
		return;
	}
	oomkit_options_init(&o);
	o.proc_root = procdir;
	o.guardian = false;
	if (oomkit_new(&o, &ctx) != 0) {
		snprintf(res->err, sizeof(res->err), "oomkit_new failed");
		return;
	}
	res->stage = 2;
	for (int i = 0; i < REUSE_TRIALS; i++, res->trials++)
		if (reuse_trial(ctx, procdir, REUSE_FIRST_PID + i, res) < 0) {
			snprintf(res->err, sizeof(res->err), "could not place a process at pid %d",
				 REUSE_FIRST_PID + i);
			break;
		}
	res->stage = 3;
	oomkit_free(ctx);
}

/* (b) Pids are reused on purpose inside a pid namespace, where
 * ns_last_pid picks the next pid without disturbing the machine. */
/* oomkit_kill_start(): signalled at once, the pidfd polls readable once the
 * victim has exited, a wrong start time sends nothing and gives no pidfd. */
static void test_kill_start(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("start", 32 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(false, false);
	pid_t a = tl_spawn_hog(cg, 4, 1024, 0);
	int pidfd = -1;

	assert_true(tl_wait_usage(cg, 4 * TL_MIB, 10000));
	uint64_t sa = start_time_of(ctx, a);
	assert_int_equal(oomkit_kill_start(ctx, a, sa + 1, &pidfd), -ESTALE);
	assert_int_equal(pidfd, -1);
	assert_true(tl_alive(a));
	assert_int_equal(oomkit_kill_start(ctx, a, sa, &pidfd), 0);
	assert_true(pidfd >= 0);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_false(tl_alive(a));
	close(pidfd);
	int st = tl_wait_exit(a, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(oomkit_kill_start(ctx, a, sa, &pidfd), -ESRCH);
	oomkit_free(ctx);
}

/* oomkit_kill() steps off the CPU where its victim will wake, so that the
 * victim's exit and process_mrelease free its memory side by side (kill.c),
 * and gives the caller its own CPU mask back; pinned to that CPU alone it
 * stays.  The caller is put on the victim's CPU just before each kill, but
 * the scheduler may move it between that and the library's look: of five
 * tries, at least one must find it there and step aside, and every one
 * must leave the mask as it was and kill the victim. */
static void test_kill_steps_aside(void **state)
{
	(void)state;
	cpu_set_t mine, one, after;
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	if (CPU_COUNT(&mine) < 2)
		skip(); /* one CPU: there is nowhere to step to */
	int cpu = 0;
	while (!CPU_ISSET(cpu, &mine))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	const char *cg = tl_cgroup("aside", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(false, false);
	char want[64];
	snprintf(want, sizeof(want), "stepped off CPU %d, where the victim wakes", cpu);
	int stepped = 0;
	for (int i = 0; i < 6; i++) {
		bool pinned = i == 5; /* the last try: the caller may use that CPU alone */
		/* The victim inherits the one CPU, so stat names it when it sleeps. */
		assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
		pid_t v = tl_spawn_hog(cg, 4, 1024, 0);
		assert_true(tl_wait_usage(cg, 4 * TL_MIB, 10000));
		assert_int_equal(tl_proc_cpu(v), cpu);
		uint64_t st = start_time_of(ctx, v);
		logbuf[0] = 0;
		if (!pinned)
			assert_int_equal(sched_setaffinity(0, sizeof(mine), &mine), 0);
		assert_int_equal(oomkit_kill(ctx, v, st, 10000), 0);
		int status = tl_wait_exit(v, 5000);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
		assert_true(CPU_EQUAL(&after, pinned ? &one : &mine));
		if (pinned)
			assert_null(strstr(logbuf, "stepped off"));
		else
			stepped += strstr(logbuf, want) != NULL;
	}
	assert_int_equal(sched_setaffinity(0, sizeof(mine), &mine), 0);
	print_message("kill: stepped off the victim's CPU in %d of 5 tries\n", stepped);
	assert_true(stepped >= 1);
	oomkit_free(ctx);
}

static void test_kill_pid_reuse(void **state)
{
	(void)state;
	char procdir[] = "/tmp/oomkit-test-kill-proc-XXXXXX";
	int fds[2];
	struct reuse res = {0};

	assert_non_null(mkdtemp(procdir));
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid_t outer = fork();
	assert_true(outer >= 0);
	if (outer == 0) {
		child_init();
		/* The namespace's first child is its pid 1. */
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
			snprintf(res.err, sizeof(res.err), "unshare: %s", strerror(errno));
			(void)!write(fds[1], &res, sizeof(res));
			_exit(1);
		}
		pid_t init = fork();
		if (init == 0) {
			reuse_in_namespace(procdir, &res);
			(void)!write(fds[1], &res, sizeof(res));
			_exit(0);
		}
		_exit(init > 0 && waitpid(init, NULL, 0) == init ? 0 : 1);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], &res, sizeof(res));
	close(fds[0]);
	assert_true(tl_wait_exit(outer, 60000) != -1);
	rmdir(procdir);
	assert_int_equal(n, (ssize_t)sizeof(res));
	if (res.stage < 3 || res.trials < REUSE_TRIALS)
		fail_msg("stage %d, %d trials: %s", res.stage, res.trials, res.err);

	print_message("pid reuse: %d trials (e.g. start time %llu, then %llu at the same pid): %d refused "
		      "with ESTALE, %d wrong kills, %d control kills\n",
		      res.trials, (unsigned long long)res.example_old, (unsigned long long)res.example_new,
		      res.stale, res.wrong_kills, res.controls);
	/* Each trial really had the same pid with another start time... */
	assert_int_equal(res.reused, REUSE_TRIALS);
	/* ...the kill aimed at the old process touched nothing... */
	assert_int_equal(res.stale, REUSE_TRIALS);
	assert_int_equal(res.wrong_kills, 0);
	/* ...and aimed at the new one it kills. */
	assert_int_equal(res.controls, REUSE_TRIALS);
}

/* ------------------------------------------- (c) a tree and a forker */

static void enter(const char *rel)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (tl_write(rel, "cgroup.procs", v) != 0)
		_exit(126);
}

/* Where a tree's parent lives in the job (named name below the test's
 * parent): the job itself on v1; on v2 a leaf below it, "top" (a cgroup
 * whose children have the memory controller holds no processes: the kernel
 * refuses them with EBUSY). */
static const char *tree_top(const char *job, const char *name)
{
	char rel[80];
	if (!tl_v2())
		return job;
	snprintf(rel, sizeof(rel), "%s/top", name);
	return tl_cgroup(rel, 0);
}

/* A parent and TREE_SIZE - 1 children spread over top and two cgroups
 * below the job. */
static pid_t spawn_tree(const char *top, const char *sub1, const char *sub2)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_init();
		enter(top);
		for (int i = 1; i < TREE_SIZE; i++) {
			if (fork() == 0) {
				if (i % 3)
					enter(i % 3 == 1 ? sub1 : sub2);
				for (;;)
					pause();
			}
		}
		for (;;)
			pause();
	}
	return pid;
}

/* A process that forks without pause: most children exit at once, every
 * 16th stays (up to 100 of them). */
static pid_t spawn_forker(const char *cg)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		child_init();
		enter(cg);
		signal(SIGCHLD, SIG_IGN);
		for (unsigned i = 0;; i++) {
			pid_t c = fork();
			if (c == 0) {
				if (i % 16 == 0 && i < 1600)
					for (;;)
						pause();
				_exit(0);
			}
			if (c < 0)
				usleep(1000); /* out of memory in the memcg: let it settle */
		}
	}
	return pid;
}

struct count_arg {
	oomkit_ctx *ctx;
	const char *cg;
	int at_least;
};

static bool enough_pids(void *p)
{
	struct count_arg *a = p;
	return count_pids(a->ctx, a->cg) >= a->at_least;
}

static void kill_tree(bool freezer)
{
	char name[32], rel[64], cg[300], sub1[300], subb[300], subc[300];

	snprintf(name, sizeof(name), "tree-%s", freezer ? "freezer" : "rounds");
	snprintf(cg, sizeof(cg), "%s", tl_cgroup(name, 256 * TL_MIB));
	snprintf(rel, sizeof(rel), "%s/a", name);
	snprintf(sub1, sizeof(sub1), "%s", tl_cgroup(rel, 0));
	snprintf(rel, sizeof(rel), "%s/b", name);
	snprintf(subb, sizeof(subb), "%s", tl_cgroup(rel, 0));
	snprintf(rel, sizeof(rel), "%s/b/c", name);
	snprintf(subc, sizeof(subc), "%s", tl_cgroup(rel, 0));
	oomkit_ctx *ctx = new_ctx(freezer, false);

	pid_t tree = spawn_tree(tree_top(cg, name), sub1, subc);
	/* The whole tree first (counted with the forker's short-lived children,
	 * the total could be reached before the tree is), then the forker and a
	 * few of its children. */
	struct count_arg want = {ctx, cg, TREE_SIZE};
	assert_true(tl_wait_for(enough_pids, &want, 20000));
	pid_t forker = spawn_forker(sub1);
	want.at_least = TREE_SIZE + 1 + 5;
	assert_true(tl_wait_for(enough_pids, &want, 20000));

	int r = oomkit_kill_cgroup(ctx, cg, 20000);
	print_message("kill_cgroup (%s): %d signalled; log:\n%s", freezer ? "freezer" : "rounds", r, logbuf);
	assert_true(r >= TREE_SIZE + 1);
	/* Done means empty: nothing left anywhere below. */
	assert_int_equal(count_pids(ctx, cg), 0);
	assert_int_equal(count_pids(ctx, subb), 0);
	int st = tl_wait_exit(tree, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	st = tl_wait_exit(forker, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	reap_all();
	/* Which method did the killing.  With the freezer, the freezer killed
	 * what it held; when every task was caught frozen the sweep after the
	 * thaw found nothing.  A loaded machine may not freeze them all within
	 * the library's short wait ("held (not all frozen)"): then the sweep
	 * may have taken a child forked meanwhile, and the two add up. */
	int in_freezer = -1, rounds = -1, in_rounds = -1;
	const char *line = strstr(logbuf, " in freezer cgroup ");
	bool all_frozen = strstr(logbuf, " tasks frozen in freezer cgroup ") != NULL;
	if (line)
		sscanf(strchr(line, ',') + 1, "%d signalled", &in_freezer);
	if ((line = strstr(logbuf, " signalled in ")))
		sscanf(strrchr(logbuf, ':') + 1, "%d signalled in %d rounds", &in_rounds, &rounds);
	if (freezer && all_frozen) {
		assert_int_equal(in_freezer, r);
		assert_int_equal(in_rounds, -1);
	} else if (freezer) {
		assert_true(in_freezer > 0);
		assert_int_equal(in_freezer + (in_rounds > 0 ? in_rounds : 0), r);
	} else if (tl_v2()) {
		/* cgroup.kill: the whole subtree at once, neither frozen nor
		 * killed in rounds. */
		assert_int_equal(in_freezer, -1);
		assert_int_equal(in_rounds, -1);
	} else {
		assert_int_equal(in_freezer, -1);
		assert_int_equal(in_rounds, r);
		assert_true(rounds >= 1);
	}
	assert_null(strstr(logbuf, "cannot"));
	assert_false(freezer_child_exists());
	/* The cgroups themselves are empty and can be removed. */
	assert_int_equal(oomkit_cgroup_remove(ctx, subc), 0);
	oomkit_free(ctx);
}

static void test_kill_cgroup_freezer(void **state)
{
	(void)state;
	if (tl_v2())
		skip(); /* the v1 freezer hierarchy */
	kill_tree(true);
}

static void test_kill_cgroup_rounds(void **state)
{
	(void)state;
	kill_tree(false);
}

/* ------------------------------------------------- (d) a real OOM */

struct oom_arg {
	oomkit_ctx *ctx;
	const char *cg;
};

static bool left_oom(void *p)
{
	struct oom_arg *a = p;
	struct oomkit_cgroup_memory m;
	return oomkit_cgroup_memory(a->ctx, a->cg, &m) == 0 && !m.under_oom;
}

static void test_kill_resolves_oom(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("oom", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(false, false);
	struct oomkit_cgroup_memory m;

	assert_int_equal(oomkit_set_kernel_killer(ctx, cg, false), 0);
	pid_t sleeper = tl_spawn_sleeper(cg);
	pid_t hog = tl_spawn_hog(cg, 128, 1024, 0);
	assert_true(tl_wait_under_oom(cg, 20000));
	assert_int_equal(oomkit_cgroup_memory(ctx, cg, &m), 0);
	assert_true(m.under_oom);
	assert_true(m.oom_kill_disable);

	assert_int_equal(oomkit_kill(ctx, hog, start_time_of(ctx, hog), 5000), 0);
	struct oom_arg a = {ctx, cg};
	assert_true(tl_wait_for(left_oom, &a, 5000));
	assert_int_equal(oomkit_cgroup_memory(ctx, cg, &m), 0);
	assert_true(m.usage_bytes < 32 * TL_MIB);
	/* The kernel killed nothing; the bystander lives. */
	assert_int_equal(m.oom_kill, 0);
	assert_true(tl_alive(sleeper));
	int st = tl_wait_exit(hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	oomkit_free(ctx);
}

/* kill_cgroup of a memcg blocked under OOM: its allocators cannot be frozen. */
static void test_kill_cgroup_under_oom(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("oom-cgroup", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(true, false);

	assert_int_equal(oomkit_set_kernel_killer(ctx, cg, false), 0);
	pid_t s1 = tl_spawn_sleeper(cg), s2 = tl_spawn_sleeper(cg);
	pid_t h1 = tl_spawn_hog(cg, 48, 1024, 0), h2 = tl_spawn_hog(cg, 48, 1024, 0);
	assert_true(tl_wait_under_oom(cg, 20000));

	int r = oomkit_kill_cgroup(ctx, cg, 20000);
	print_message("kill_cgroup under OOM: %d signalled; log:\n%s", r, logbuf);
	assert_int_equal(r, 4);
	assert_int_equal(count_pids(ctx, cg), 0);
	struct oom_arg a = {ctx, cg};
	assert_true(tl_wait_for(left_oom, &a, 5000));
	pid_t all[] = {s1, s2, h1, h2};
	for (int i = 0; i < 4; i++) {
		int st = tl_wait_exit(all[i], 5000);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	assert_false(freezer_child_exists());
	assert_int_equal(tl_kernel_kills(cg), 0);
	oomkit_free(ctx);
}

/* ------------------------------------------ reports while processes churn */

static char report_buf[1 << 20];

/* Writes a report of cg and returns the value of its "vanished" count. */
static int live_report(oomkit_ctx *ctx, const char *cg, const struct oomkit_decision *d, int *ret_procs)
{
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM, .cgroup = cg, .origin = cg, .own = true};
	int fd = memfd_create("report", MFD_CLOEXEC);
	assert_true(fd >= 0);
	int r = oomkit_write_report(ctx, fd, &ev, d);
	assert_true(r > 0 && (size_t)r < sizeof(report_buf));
	assert_int_equal(pread(fd, report_buf, sizeof(report_buf), 0), r);
	close(fd);
	report_buf[r] = 0;
	if (!json_valid(report_buf, (size_t)r))
		fail_msg("report is not valid JSON:\n%s", report_buf);
	const char *v = strstr(report_buf, "\"vanished\":");
	assert_non_null(v);
	*ret_procs = 0;
	for (const char *p = report_buf; (p = strstr(p, "{\"pid\":")); p++)
		(*ret_procs)++;
	return atoi(v + strlen("\"vanished\":"));
}

static void test_report_during_churn(void **state)
{
	(void)state;
	char rel[64], cg[300], sub[300];
	struct oomkit_decision d = {.action = "kill", .reason = "the whole job"};
	int vanished = 0, procs, min_procs = INT_MAX;

	snprintf(cg, sizeof(cg), "%s", tl_cgroup("churn", 128 * TL_MIB));
	snprintf(rel, sizeof(rel), "churn/a");
	snprintf(sub, sizeof(sub), "%s", tl_cgroup(rel, 0));
	oomkit_ctx *ctx = new_ctx(true, false);
	pid_t tree = spawn_tree(tree_top(cg, "churn"), sub, sub);
	/* The whole tree first: counted together with the forker's short-lived
	 * children, TREE_SIZE + 1 pids could be reached before the tree is. */
	struct count_arg want = {ctx, cg, TREE_SIZE};
	assert_true(tl_wait_for(enough_pids, &want, 20000));
	pid_t forker = spawn_forker(sub);
	want.at_least = TREE_SIZE + 1;
	assert_true(tl_wait_for(enough_pids, &want, 20000));

	for (int i = 0; i < 50; i++) {
		vanished += live_report(ctx, cg, &d, &procs);
		if (procs < min_procs)
			min_procs = procs;
	}
	print_message(
	    "50 reports during churn: all valid JSON, >= %d processes each, %d vanished while read\n",
	    min_procs, vanished);
	/* The tree and the forker are in every report, whatever else vanished. */
	assert_true(min_procs >= TREE_SIZE + 1);

	assert_true(oomkit_kill_cgroup(ctx, cg, 20000) >= TREE_SIZE + 1);
	assert_int_equal(live_report(ctx, cg, &d, &procs), 0);
	assert_int_equal(procs, 0);
	assert_non_null(strstr(report_buf, "\"processes\":[],"));
	tl_wait_exit(tree, 5000);
	tl_wait_exit(forker, 5000);
	reap_all();
	oomkit_free(ctx);
}

/* ------------------------------------------ trees a job's owner could make */

/* A chain of DEEP_LEVELS cgroups with DEEP_NAME-byte names below a job:
 * 8.5 KB of path, deeper than the library's stack of open directories, and
 * longer than the kernel shows in /proc/PID/cgroup.  Made, filled and
 * removed through directory fds: no path to it fits in PATH_MAX. */
#define DEEP_LEVELS 70
#define DEEP_NAME 120

struct deep {
	int fds[DEEP_LEVELS + 1]; /* [0] the job, [l + 1] level l */
	int made;		  /* levels made */
};

static struct deep deep = {.made = -1};

static void deep_name(char *buf, int level)
{
	memset(buf, 'a' + level % 26, DEEP_NAME);
	buf[DEEP_NAME] = 0;
	buf[0] = (char)('0' + level / 10 % 10);
	buf[1] = (char)('0' + level % 10);
}

static void deep_make(const char *job)
{
	char name[DEEP_NAME + 1];
	deep.fds[0] = open(tl_abs(job), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(deep.fds[0] >= 0);
	deep.made = 0;
	for (int l = 0; l < DEEP_LEVELS; l++) {
		deep_name(name, l);
		assert_int_equal(mkdirat(deep.fds[l], name, 0755), 0);
		deep.fds[l + 1] = openat(deep.fds[l], name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(deep.fds[l + 1] >= 0);
		deep.made = l + 1;
	}
}

/* A sleeper at level l, which moves itself there through the fd. */
static pid_t deep_spawn(int level)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char v[16];
		child_init();
		snprintf(v, sizeof(v), "%d", (int)getpid());
		int fd = openat(deep.fds[level + 1], "cgroup.procs", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, v, strlen(v)) < 0)
			_exit(126);
		execl(tl_hog_path(), tl_hog_path(), "0", "1024", "0", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Kills what is left in the chain and removes it, deepest first.  Runs
 * at exit too, before testlib's cleanup, which goes by path. */
static void deep_cleanup(void)
{
	char name[DEEP_NAME + 1];
	for (int l = deep.made; l > 0; l--) {
		for (int round = 0; round < 400; round++) {
			char buf[4096];
			int fd = openat(deep.fds[l], "cgroup.procs", O_RDONLY | O_CLOEXEC);
			ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			buf[n > 0 ? n : 0] = 0;
			for (char *p = buf; *p;) {
				kill((pid_t)strtol(p, &p, 10), SIGKILL);
				p += *p == '\n';
			}
			reap_all();
			deep_name(name, l - 1);
			if (unlinkat(deep.fds[l - 1], name, AT_REMOVEDIR) == 0 || errno == ENOENT)
				break;
			usleep(5000);
		}
		close(deep.fds[l]);
	}
	if (deep.made >= 0)
		close(deep.fds[0]);
	deep.made = -1;
}

struct deep_seen {
	pid_t pid[3];
	unsigned depth[3];
	bool truncated[3];
	int listed, others;
};

static int note_entry(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct deep_seen *s = userdata;
	(void)ctx;
	s->listed++;
	for (int i = 0; i < 3; i++)
		if (s->pid[i] == e->pid) {
			s->depth[i] = e->depth;
			s->truncated[i] = e->cgroup_truncated;
			return 0;
		}
	s->others++;
	return 0;
}

/* Processes 5, 41 and 70 levels below a job: the first has a path longer
 * than oomkit's argument buffers, the others one the kernel cuts.  Each is
 * listed at its depth, placed inside the job and not inside its neighbour,
 * in the report, and killed with the job; the neighbour lives. */
static void owner_tree(bool freezer)
{
	static const int levels[3] = {4, 40, DEEP_LEVELS - 1};
	char job[300], buf[8192];
	struct deep_seen s = {0};
	snprintf(job, sizeof(job), "%s", tl_cgroup(freezer ? "deep-freezer" : "deep-rounds", 128 * TL_MIB));
	const char *other = tl_cgroup(freezer ? "beside-freezer" : "beside-rounds", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(freezer, false);
	deep_make(job);
	for (int i = 0; i < 3; i++)
		s.pid[i] = deep_spawn(levels[i]);
	pid_t neighbour = tl_spawn_sleeper(other);
	struct count_arg want = {ctx, job, 3};
	assert_true(tl_wait_for(enough_pids, &want, 20000));

	assert_int_equal(oomkit_cgroup_walk_pids(ctx, job, OOMKIT_WALK_RECURSIVE, note_entry, &s), 3);
	assert_int_equal(s.others, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s.depth[i], levels[i] + 1);
		/* The walk's path keeps 4 KiB: level 40 (5 KB) and below are cut. */
		assert_int_equal(s.truncated[i], i > 0);
		assert_int_equal(oomkit_process_in_cgroup(ctx, s.pid[i], job), 1);
		assert_int_equal(oomkit_process_in_cgroup(ctx, s.pid[i], tl_parent()), 1);
		assert_int_equal(oomkit_process_in_cgroup(ctx, s.pid[i], other), 0);
		assert_int_equal(oomkit_process_cgroup(ctx, s.pid[i], buf, 512), -ENAMETOOLONG);
		/* Past 4 KiB not even a large buffer helps: the kernel cut it. */
		if (i > 0)
			assert_int_equal(oomkit_process_cgroup(ctx, s.pid[i], buf, sizeof(buf)),
					 -ENAMETOOLONG);
	}
	assert_int_equal(oomkit_process_in_cgroup(ctx, neighbour, job), 0);
	assert_int_equal(oomkit_process_in_cgroup(ctx, neighbour, other), 1);

	int procs;
	struct oomkit_decision d = {.action = "kill", .reason = "the whole job"};
	assert_int_equal(live_report(ctx, job, &d, &procs), 0);
	assert_int_equal(procs, 3);
	assert_non_null(strstr(report_buf, "\"unreadable\":0"));
	assert_non_null(strstr(report_buf, "\"cgroup_truncated\":true"));

	int r = oomkit_kill_cgroup(ctx, job, 20000);
	print_message("owner's tree (%s): 3 processes 5 to 70 levels deep, kill_cgroup %d; log:\n%s",
		      freezer ? "freezer" : "rounds", r, logbuf);
	assert_int_equal(r, 3);
	for (int i = 0; i < 3; i++) {
		int st = tl_wait_exit(s.pid[i], 5000);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	assert_int_equal(count_pids(ctx, job), 0);
	assert_true(tl_alive(neighbour));
	assert_false(freezer_child_exists());
	deep_cleanup();
	oomkit_free(ctx);
}

static void test_owner_tree_freezer(void **state)
{
	(void)state;
	if (tl_v2())
		skip(); /* the v1 freezer hierarchy */
	owner_tree(true);
}

static void test_owner_tree_rounds(void **state)
{
	(void)state;
	owner_tree(false);
}

struct sum_arg {
	int n;
};

static int count_entry(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	(void)ctx;
	(void)e;
	((struct sum_arg *)userdata)->n++;
	return 0;
}

/* Three times more processes than the context's max_pids: the array form
 * says -ENOBUFS, the walk sees them all, and the kill takes them all. */
static void more_than_max_pids(bool freezer)
{
	enum { PER = 8, SUBS = 3, MAX_PIDS = 8 };
	char name[64], rel[80], job[300];
	pid_t pids[SUBS * PER], few[MAX_PIDS];
	struct oomkit_options o;
	oomkit_ctx *ctx;

	snprintf(name, sizeof(name), "many-%s", freezer ? "freezer" : "rounds");
	snprintf(job, sizeof(job), "%s", tl_cgroup(name, 128 * TL_MIB));
	for (int i = 0; i < SUBS; i++) {
		snprintf(rel, sizeof(rel), "%s/s%d", name, i);
		const char *sub = tl_cgroup(rel, 0);
		for (int k = 0; k < PER; k++)
			pids[i * PER + k] = tl_spawn_sleeper(sub);
	}
	oomkit_options_init(&o);
	o.freezer_root = freezer ? freezer_parent : "";
	o.guardian = false;
	o.max_pids = MAX_PIDS;
	o.log = log_to_buf;
	logbuf[0] = 0;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	struct count_arg want = {NULL, job, SUBS * PER};
	oomkit_ctx *big = new_ctx(false, false);
	want.ctx = big;
	assert_true(tl_wait_for(enough_pids, &want, 20000));
	oomkit_free(big);
	logbuf[0] = 0;

	assert_int_equal(oomkit_cgroup_pids(ctx, job, true, few, MAX_PIDS), -ENOBUFS);
	struct sum_arg n = {0};
	assert_int_equal(oomkit_cgroup_walk_pids(ctx, job, OOMKIT_WALK_RECURSIVE, count_entry, &n),
			 SUBS * PER);
	int r = oomkit_kill_cgroup(ctx, job, 20000);
	print_message("%d processes, max_pids %d (%s): kill_cgroup %d\n", SUBS * PER, MAX_PIDS,
		      freezer ? "freezer" : "rounds", r);
	assert_int_equal(r, SUBS * PER);
	for (int i = 0; i < SUBS * PER; i++) {
		int st = tl_wait_exit(pids[i], 5000);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	assert_null(strstr(logbuf, "cannot"));
	assert_false(freezer_child_exists());
	oomkit_free(ctx);
}

static void test_more_than_max_pids_freezer(void **state)
{
	(void)state;
	if (tl_v2())
		skip(); /* the v1 freezer hierarchy */
	more_than_max_pids(true);
}

static void test_more_than_max_pids_rounds(void **state)
{
	(void)state;
	more_than_max_pids(false);
}

/* ------------------------------------------------- refusals */

/* A job's owner fills its job with empty cgroups: a kill of the job lists
 * it a few times, each listing bounded (a cgroupfs walk for a while, then
 * /proc), and still kills every process, wherever it lies among them; the
 * neighbour lives.  The /proc listing places each at its own cgroup. */
#define CHURN_SUBS 3000
static void churned(bool freezer)
{
	char job[300], path[PATH_MAX];
	snprintf(job, sizeof(job), "%s", tl_cgroup(freezer ? "churn-freezer" : "churn-rounds", 128 * TL_MIB));
	const char *other = tl_cgroup(freezer ? "churn-beside-freezer" : "churn-beside-rounds", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(freezer, false);
	for (int i = 0; i < CHURN_SUBS; i++) {
		snprintf(path, sizeof(path), "%s/c%d", tl_abs(job), i);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	pid_t pids[3];
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/c%d", job, i * (CHURN_SUBS / 2 - 1));
		pids[i] = tl_spawn_sleeper(path);
	}
	pid_t neighbour = tl_spawn_sleeper(other);
	struct count_arg want = {ctx, job, 3};
	assert_true(tl_wait_for(enough_pids, &want, 20000));
	struct deep_seen s = {.pid = {pids[0], pids[1], pids[2]}};
	assert_int_equal(
	    oomkit_cgroup_walk_pids(ctx, job, OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC, note_entry, &s), 3);
	assert_int_equal(s.others, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(s.depth[i], 1);

	int r = oomkit_kill_cgroup(ctx, job, 20000);
	print_message("churned job (%s): 3 processes among %d empty cgroups, kill_cgroup %d\n",
		      freezer ? "freezer" : "rounds", CHURN_SUBS, r);
	assert_int_equal(r, 3);
	for (int i = 0; i < 3; i++) {
		int st = tl_wait_exit(pids[i], 5000);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	assert_int_equal(count_pids(ctx, job), 0);
	assert_true(tl_alive(neighbour));
	for (int i = 0; i < CHURN_SUBS; i++) {
		snprintf(path, sizeof(path), "%s/c%d", tl_abs(job), i);
		(void)rmdir(path);
	}
	oomkit_free(ctx);
}

static void test_churned_freezer(void **state)
{
	(void)state;
	if (tl_v2())
		skip(); /* the v1 freezer hierarchy */
	churned(true);
}

static void test_churned_rounds(void **state)
{
	(void)state;
	churned(false);
}

static void test_kill_cgroup_refuses(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("refuse", 64 * TL_MIB);
	oomkit_ctx *ctx = new_ctx(true, true);
	pid_t guardian = oomkit_guardian_pid(ctx);

	assert_int_equal(oomkit_kill_cgroup(ctx, "", 1000), -EINVAL);
	assert_int_equal(oomkit_kill_cgroup(ctx, "/", 1000), -EINVAL);
	/* An empty cgroup: nothing to do, nothing left behind. */
	assert_int_equal(oomkit_kill_cgroup(ctx, tl_cgroup("refuse-empty", 0), 1000), 0);
	assert_false(freezer_child_exists());
	char gone[300];
	snprintf(gone, sizeof(gone), "%s/never-made", tl_parent());
	assert_int_equal(oomkit_kill_cgroup(ctx, gone, 1000), -ENOENT);

	/* A cgroup holding the guardian is refused before anything happens. */
	assert_true(guardian > 0);
	pid_t bystander = tl_spawn_sleeper(cg);
	assert_int_equal(oomkit_cgroup_attach(ctx, cg, guardian), 0);
	assert_int_equal(oomkit_kill_cgroup(ctx, cg, 1000), -ELOOP);
	assert_true(tl_alive(guardian));
	assert_true(tl_alive(bystander));
	assert_false(freezer_child_exists());
	oomkit_free(ctx);
}

int main(void)
{
	tl_require_kernel();
	/* cgroup v2 has no freezer hierarchy of its own: the library kills a
	 * cgroup with cgroup.kill there, and the _freezer cases skip. */
	if (!tl_v2())
		make_freezer_parent();
	atexit(deep_cleanup);
	/* Orphaned grandchildren come back to us to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kill_one_of_three),
	    cmocka_unit_test(test_kill_start),
	    cmocka_unit_test(test_kill_steps_aside),
	    cmocka_unit_test(test_kill_pid_reuse),
	    cmocka_unit_test(test_kill_cgroup_freezer),
	    cmocka_unit_test(test_kill_cgroup_rounds),
	    cmocka_unit_test(test_kill_resolves_oom),
	    cmocka_unit_test(test_kill_cgroup_under_oom),
	    cmocka_unit_test(test_report_during_churn),
	    cmocka_unit_test(test_kill_cgroup_refuses),
	    cmocka_unit_test(test_owner_tree_freezer),
	    cmocka_unit_test(test_owner_tree_rounds),
	    cmocka_unit_test(test_more_than_max_pids_freezer),
	    cmocka_unit_test(test_more_than_max_pids_rounds),
	    cmocka_unit_test(test_churned_freezer),
	    cmocka_unit_test(test_churned_rounds),
	};
	return cmocka_run_group_tests_name("kill", tests, NULL, NULL);
}
