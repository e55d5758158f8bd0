/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * storm.c - benchmark 5: N memcgs (10, 100, 500) whose hogs hit their limits
 * at nearly the same moment.  Each hog is a child of the driver that fills
 * its memcg to just under the limit, waits at a gate (a pipe), and when the
 * gate opens touches pages until it blocks.  Side A: one liboomkit watcher
 * holding all N memcgs, killing each hog; side B: the kernel OOM killer.
 * Measured: the time from the gate to the last hog's exit (all resolved),
 * that time divided by N (the per-event cost, flat if handling scales), and
 * each hog's last touch to its exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"

#define STORM_LIMIT (2 * BL_MIB)
/* A hog stops filling this far under its limit, so that after the gate it
 * blocks within a few dozen pages. */
#define STORM_SLACK (64 * BL_KIB)
#define STORM_MAX 500
#define STORM_TIMEOUT_NS (30ull * 1000000000u)

static const char *const side_name[2] = {"oomkit", "kernel"};

struct slot {
	volatile uint64_t last_touch_ns;
	volatile uint64_t pages;
};

struct shared {
	volatile uint32_t ready;
	uint32_t pad;
	struct slot slot[STORM_MAX];
};

struct run {
	unsigned n;
	pid_t pid[STORM_MAX];
	int pidfd[STORM_MAX];
	uint64_t exit_ns[STORM_MAX];
	int status[STORM_MAX];
};

/* The hog, in a forked child: fill, wait at the gate, then touch until blocked. */
static void __attribute__((noreturn)) hog(const char *cg, struct shared *sh, unsigned i, int gate_r)
{
	char path[512], v[32];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (th_cg_write(BL_MEMORY_ROOT, cg, "cgroup.procs", v) < 0)
		_exit(3);
	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", bl_abs(cg));
	int ufd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 2 * STORM_LIMIT, off = 0;
	char *mem =
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ufd < 0 || mem == MAP_FAILED)
		_exit(4);
	for (; off < len; off += BL_PAGE) {
		if (off % (8 * BL_PAGE) == 0 && bl_pread_u64(ufd) >= STORM_LIMIT - STORM_SLACK)
			break;
		mem[off] = 1;
	}
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	char c;
	while (read(gate_r, &c, 1) < 0 && errno == EINTR)
		;
	for (; off < len; off += BL_PAGE) {
		sh->slot[i].last_touch_ns = bl_now_ns();
		sh->slot[i].pages++;
		mem[off] = 1;
	}
	_exit(5); /* never reached: the limit stops it first */
}

static int fork_hogs(struct run *run, const char *const *cgs, struct shared *sh, int gate[2], int epfd)
{
	for (unsigned i = 0; i < run->n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			close(gate[1]);
			hog(cgs[i], sh, i, gate[0]);
		}
		run->pid[i] = pid;
		run->pidfd[i] = bl_pidfd_open(pid);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
		if (run->pidfd[i] < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, run->pidfd[i], &ev) < 0)
			return -1;
	}
	return 0;
}

static bool wait_ready(struct shared *sh, unsigned n)
{
	uint64_t end = bl_now_ns() + STORM_TIMEOUT_NS;
	while (sh->ready < n && bl_now_ns() < end)
		bl_sleep_us(1000);
	return sh->ready >= n;
}

/* Collects every exit with its time; returns how many exited. */
static unsigned collect(struct run *run, int epfd)
{
	unsigned done = 0;
	uint64_t end = bl_now_ns() + STORM_TIMEOUT_NS;
	while (done < run->n && bl_now_ns() < end) {
		struct epoll_event evs[64];
		int k = epoll_wait(epfd, evs, 64, 100);
		uint64_t now = bl_now_ns();
		for (int j = 0; j < k; j++) {
			unsigned i = evs[j].data.u32;
			run->exit_ns[i] = now;
			waitpid(run->pid[i], &run->status[i], 0);
			epoll_ctl(epfd, EPOLL_CTL_DEL, run->pidfd[i], NULL);
			close(run->pidfd[i]);
			run->pid[i] = 0;
			done++;
		}
	}
	return done;
}

static void reap_rest(struct run *run)
{
	for (unsigned i = 0; i < run->n; i++)
		if (run->pid[i] > 0) {
			kill(run->pid[i], SIGKILL);
			waitpid(run->pid[i], NULL, 0);
			close(run->pidfd[i]);
			run->pid[i] = 0;
		}
}

static void report(int side, const struct run *run, const struct shared *sh, uint64_t t0)
{
	char series[64];
	uint64_t last = t0;
	for (unsigned i = 0; i < run->n; i++) {
		if (run->exit_ns[i] > last)
			last = run->exit_ns[i];
		snprintf(series, sizeof(series), "%s-hog@%u", side_name[side], run->n);
		bl_sample("storm", series, (double)(run->exit_ns[i] - sh->slot[i].last_touch_ns) / 1e6);
	}
	snprintf(series, sizeof(series), "%s-all@%u", side_name[side], run->n);
	bl_sample("storm", series, (double)(last - t0) / 1e6);
	snprintf(series, sizeof(series), "%s-event@%u", side_name[side], run->n);
	bl_sample("storm", series, (double)(last - t0) / 1e3 / run->n);
}

/* One storm on the memcgs cgs; 0, or -1 if it could not be measured. */
static int storm_once(int side, unsigned n, const char *const *cgs, struct shared *sh, struct run *run)
{
	int gate[2], epfd = epoll_create1(EPOLL_CLOEXEC), r = -1;
	memset(sh, 0, sizeof(*sh));
	memset(run, 0, sizeof(*run));
	run->n = n;
	if (epfd < 0 || pipe2(gate, O_CLOEXEC) < 0)
		return -1;
	if (fork_hogs(run, cgs, sh, gate, epfd) < 0 || !wait_ready(sh, n)) {
		bl_fail("storm: %u %s hogs did not all get ready", n, side_name[side]);
		goto out;
	}
	uint64_t t0 = bl_now_ns();
	close(gate[1]);
	gate[1] = -1;
	unsigned done = collect(run, epfd);
	bool all_killed = done == n;
	for (unsigned i = 0; i < n && all_killed; i++)
		all_killed = WIFSIGNALED(run->status[i]) && WTERMSIG(run->status[i]) == SIGKILL &&
			     sh->slot[i].last_touch_ns >= t0;
	if (!all_killed)
		bl_fail("storm: %u of %u %s hogs killed after blocking", done, n, side_name[side]);
	else {
		report(side, run, sh, t0);
		r = 0;
	}
out:
	reap_rest(run);
	if (gate[1] >= 0)
		close(gate[1]);
	close(gate[0]);
	close(epfd);
	return r;
}

/* Creates <parent>/<side>-<n>/<i> for i < n and fills cgs. */
static int make_set(const char *side, unsigned n, char (*names)[128], const char **cgs)
{
	if (bl_mkcg(bl_child("%s-%u", side, n), 0) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", bl_child("%s-%u/%u", side, n, i));
		cgs[i] = names[i];
		if (bl_mkcg(cgs[i], STORM_LIMIT) < 0)
			return -1;
	}
	return 0;
}

static uint64_t kernel_kills(const char *const *cgs, unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += th_cg_key(BL_MEMORY_ROOT, cgs[i], "memory.oom_control", "oom_kill");
	return sum;
}

static int storm_n(unsigned n, unsigned reps, struct shared *sh, struct run *run)
{
	static char names[2][STORM_MAX][128];
	static const char *cgs[2][STORM_MAX];
	char pattern[256];
	int failed = 0;
	if (make_set("oomkit", n, names[0], cgs[0]) < 0 || make_set("kernel", n, names[1], cgs[1]) < 0)
		return 1;
	snprintf(pattern, sizeof(pattern), "%s", bl_child("oomkit-%u/%%u", n));
	char count[16];
	snprintf(count, sizeof(count), "%u", n);
	const char *args[] = {"--count", count, "--reserve", bl_child("res-%u", n), pattern, NULL};
	pid_t w = bl_start_watcher(args, NULL, 60000);
	if (w < 0) {
		bl_fail("storm: the watcher for %u memcgs did not start", n);
		return 1;
	}
	for (unsigned k = 0; k < reps; k++)
		for (int s = 0; s < 2; s++)
			failed |= storm_once(s, n, cgs[s], sh, run) < 0;
	if (kernel_kills(cgs[0], n) != 0) {
		bl_fail("storm: the kernel killed in oomkit's memcgs at N=%u", n);
		failed = 1;
	}
	bl_stop(w, 5000);
	return failed;
}

int bench_storm(int argc, char **argv)
{
	static const unsigned ns[] = {10, 100, 500};
	unsigned reps[] = {bench_opt(argc, argv, "reps10", 5), bench_opt(argc, argv, "reps100", 3),
			   bench_opt(argc, argv, "reps500", 3)};
	unsigned max_n = bench_opt(argc, argv, "max", STORM_MAX);
	int failed = 0;
	if (bl_init("storm", STORM_MAX * STORM_LIMIT + 64 * BL_MIB) < 0)
		return 1;
	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct run *run = calloc(1, sizeof(*run));
	if (sh == MAP_FAILED || !run)
		return 1;
	bl_note(
	    "storm: memcgs of %llu MiB each, hogs filled to %llu KiB under the limit before the gate opens",
	    STORM_LIMIT / BL_MIB, STORM_SLACK / BL_KIB);
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]) && ns[i] <= max_n; i++)
		failed |= storm_n(ns[i], reps[i], sh, run);
	bl_cleanup();
	return failed;
}
