/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kill.c - killing processes: one process through a pidfd (pidfd_open,
 * a start-time check against pid reuse, pidfd_send_signal, process_mrelease,
 * poll for exit), and a whole cgroup (cgroup2 cgroup.kill; v1 through the
 * freezer controller's freezer.state, with rounds of kill-until-empty as the
 * fallback).
 *
 * Nothing here allocates.  Pids are enumerated into ctx->pidbuf; while a
 * round waits for its victims, the slots already handled hold their pidfds.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The generic syscall numbers, for a libc that predates the calls. */
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

/* Rounds of "list the cgroup, kill what is listed, wait": each round only
 * has processes forked after the previous one listed, so a few suffice;
 * the bound stops a fork storm that outruns us from looping forever. */
#define KILL_ROUNDS 64
/* Rounds of moving a memcg's tasks into the freezer cgroup until a whole
 * round finds every task already there. */
#define MOVE_ROUNDS 32
/* Pidfds held open at once while waiting for victims to exit.  Past this,
 * frozen victims are let go unwatched; the sweep after the thaw knows them
 * by their place in the freezer cgroup, waits for them and does not count
 * them again. */
#define HOLD_MAX 256
/* How long to wait for freezer.state to reach FROZEN.  Tasks blocked in a
 * memcg OOM sleep killable, never freezable; for those we do not wait. */
#define FREEZE_WAIT_NS (100ull * 1000 * 1000)
/* Polling period for conditions the kernel does not notify (v1 freezer.state,
 * rmdir of a cgroup whose last task is exiting). */
#define POLL_PERIOD_NS (1000ull * 1000)
#define NO_DEADLINE UINT64_MAX

/* An errno's name for the log: strerror() may load message catalogs. */
static const char *errname(int err)
{
	const char *name = strerrorname_np(err);
	return name ? name : "unknown error";
}

/* ------------------------------------------------------------ syscalls */

static int sys_pidfd_open(pid_t pid)
{
	long fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
}

static int sys_pidfd_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

static int sys_pidfd_kill(int pidfd)
{
	return sys_pidfd_signal(pidfd, SIGKILL);
}

/* Frees the memory of a process that is dying without waiting for it to
 * finish exiting.  Best effort: older kernels lack it (ENOSYS), and a
 * process that is not yet marked as exiting is refused (EINVAL). */
static void release_memory(const oomkit_ctx *ctx, int pidfd, pid_t pid)
{
	if (syscall(SYS_process_mrelease, pidfd, 0) < 0 && errno != ENOSYS && errno != EINVAL &&
	    errno != ESRCH)
		oomkit__log(ctx, OOMKIT_LOG_DEBUG, "process_mrelease(%d): %s", (int)pid, errname(errno));
}

/* The kernel wakes a killed task on the CPU it last ran on unless it finds
 * an idle one that shares that CPU's cache, and on a machine whose CPUs
 * share none (a VM with a socket per vCPU: the 2-CPU one this was measured
 * on) it looks no further.  When that CPU is the killer's own, the victim's
 * exit and process_mrelease take turns on it while another CPU idles, and
 * the memory comes back as slowly as from the exit alone (bench 2: 13.5-14.5
 * ms against 9.8-11.9 ms with the two on different CPUs, 12 kills).  So
 * the killer steps off that CPU for the kill and the release, and back:
 * two sched_setaffinity calls, on its own thread only. */
struct aside {
	bool moved;
	cpu_set_t saved;
};

static void step_aside(const oomkit_ctx *ctx, int victim_cpu, struct aside *a)
{
	a->moved = false;
	if (victim_cpu < 0 || victim_cpu >= CPU_SETSIZE || sched_getcpu() != victim_cpu ||
	    sched_getaffinity(0, sizeof(a->saved), &a->saved) < 0)
		return;
	cpu_set_t others = a->saved;
	CPU_CLR(victim_cpu, &others);
	/* Pinned to that CPU alone, or a cpuset that leaves no other: stay. */
	if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof(others), &others) < 0)
		return;
	a->moved = true;
	oomkit__log(ctx, OOMKIT_LOG_DEBUG, "kill: stepped off CPU %d, where the victim wakes", victim_cpu);
}

static void step_back(const struct aside *a)
{
	if (a->moved)
		(void)sched_setaffinity(0, sizeof(a->saved), &a->saved);
}

/* ------------------------------------------------------------ deadlines */

static uint64_t deadline_after(int timeout_ms)
{
	if (timeout_ms < 0)
		return NO_DEADLINE;
	return oomkit__now_ns() + (uint64_t)timeout_ms * 1000000u;
}

static bool expired(uint64_t end)
{
	return end != NO_DEADLINE && oomkit__now_ns() >= end;
}

static void nap(void)
{
	struct timespec ts = {0, (long)POLL_PERIOD_NS};
	nanosleep(&ts, NULL);
}

/* Waits for the process behind pidfd to exit: 0, or -ETIMEDOUT. */
static int wait_exit(int pidfd, uint64_t end)
{
	for (;;) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int r = poll(&p, 1, oomkit__ms_until(end));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* ---------------------------------------------------------- one process */

/* Confirms that pid is still the process that started at start_time.  Called
 * with a pidfd on pid already held: if /proc/PID shows the expected start
 * time now, the process that held the pid when the pidfd was opened is still
 * the one holding it, so the pidfd refers to it. */
static int confirm_identity(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int *ret_cpu)
{
	struct oomkit__proc_stat leader, live;
	int fd;

	*ret_cpu = -1;
	if (start_time == 0)
		return 0;
	fd = oomkit__proc_open_live(ctx, pid, &leader, &live);
	if (fd < 0)
		return fd;
	close(fd);
	if (leader.start_time != start_time)
		return -ESTALE;
	/* A zombie has freed its memory already: there is nothing to kill.  A
	 * leader that exited before its threads is a zombie too, but the
	 * process lives on in them: live is one of those. */
	if (live.state == 'Z' || live.state == 'X')
		return -ESRCH;
	*ret_cpu = live.processor;
	return 0;
}

OOMKIT__EXPORT int oomkit_signal_start(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int sig,
				       int *ret_pidfd)
{
	int r, pidfd;

	if (!ctx || pid <= 0 || sig <= 0 || !ret_pidfd)
		return -EINVAL;
	pidfd = sys_pidfd_open(pid);
	if (pidfd < 0)
		return pidfd;
	int cpu;
	struct aside aside = {.moved = false};
	r = confirm_identity(ctx, pid, start_time, &cpu);
	if (r == 0 && sig == SIGKILL)
		step_aside(ctx, cpu, &aside);
	if (r == 0)
		r = sys_pidfd_signal(pidfd, sig);
	if (r == 0 && sig == SIGKILL)
		release_memory(ctx, pidfd, pid);
	step_back(&aside);
	if (r < 0) {
		close(pidfd);
		return r;
	}
	*ret_pidfd = pidfd;
	return 0;
}

OOMKIT__EXPORT int oomkit_kill_start(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int *ret_pidfd)
{
	return oomkit_signal_start(ctx, pid, start_time, SIGKILL, ret_pidfd);
}

OOMKIT__EXPORT int oomkit_kill_pidfd(oomkit_ctx *ctx, int pidfd)
{
	if (!ctx || pidfd < 0)
		return -EINVAL;
	int r = sys_pidfd_kill(pidfd);
	if (r < 0)
		return r;
	release_memory(ctx, pidfd, 0);
	return 0;
}

OOMKIT__EXPORT int oomkit_kill(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int timeout_ms)
{
	uint64_t end = deadline_after(timeout_ms);
	int pidfd, r = oomkit_kill_start(ctx, pid, start_time, &pidfd);

	if (r < 0)
		return r;
	r = wait_exit(pidfd, end);
	oomkit__log(ctx, OOMKIT_LOG_DEBUG, "kill %d: %s", (int)pid, r == 0 ? "exited" : "not yet gone");
	close(pidfd);
	return r;
}

/* ----------------------------------------------------- a set of processes */

struct kill_run {
	oomkit_ctx *ctx;
	char rel[OOMKIT__PATH_MAX];  /* the cgroup, relative to the memory root */
	uint64_t end;		     /* deadline */
	int signalled;		     /* processes sent SIGKILL */
	size_t held;		     /* pidfds kept in ctx->pidbuf[0..held) */
	pid_t held_pid[HOLD_MAX];    /* their pids, as listed */
	bool can_wait;		     /* the processes can exit now (not frozen) */
	const struct freezer *swept; /* after the freezer: its tasks are signalled */
};

static int in_freezer(struct kill_run *run, const struct freezer *fz, pid_t pid);

/* Whether pid is this process or its guardian: killing, let alone freezing,
 * either would leave nobody to finish the job. */
static bool is_ours(const oomkit_ctx *ctx, pid_t pid)
{
	return pid == getpid() || (ctx->guardian_pid > 0 && pid == ctx->guardian_pid);
}

/* Sends SIGKILL to pid if it is still in the cgroup being killed, checked
 * after its pidfd is held so that a reused pid is never hit.  A task still
 * in the freezer cgroup of this kill was signalled there and is only waited
 * for (*fresh false).  Returns the pidfd, -ESRCH if it is gone, -ESTALE if it
 * has left the cgroup. */
static int kill_member(struct kill_run *run, pid_t pid, bool *fresh)
{
	int r, pidfd = sys_pidfd_open(pid);

	if (pidfd < 0)
		return pidfd;
	r = oomkit__process_in(run->ctx, pid, run->rel);
	if (r == 0)
		r = -ESTALE;
	*fresh = r > 0 && !(run->swept && in_freezer(run, run->swept, pid) > 0);
	if (*fresh)
		r = sys_pidfd_kill(pidfd);
	if (r < 0) {
		close(pidfd);
		return r;
	}
	if (*fresh)
		release_memory(run->ctx, pidfd, pid);
	return pidfd;
}

/* Waits for every held pidfd to become readable (its process exited), up to
 * the deadline, and closes them.  0 if all exited, else -ETIMEDOUT. */
static int wait_held(struct kill_run *run)
{
	int r = 0;

	for (size_t i = 0; i < run->held; i++) {
		int fd = run->ctx->pidbuf[i];
		if (r == 0)
			r = wait_exit(fd, run->end);
		close(fd);
	}
	run->held = 0;
	return r;
}

static void close_held(struct kill_run *run)
{
	for (size_t i = 0; i < run->held; i++)
		close(run->ctx->pidbuf[i]);
	run->held = 0;
}

/* Makes room for one more pidfd: waits for the held ones if their processes
 * can exit now, else lets them go unwatched. */
static void make_room(struct kill_run *run)
{
	if (run->can_wait)
		(void)wait_held(run);
	else
		close_held(run);
}

static size_t hold_max(const struct kill_run *run)
{
	return run->ctx->max_pids < HOLD_MAX ? run->ctx->max_pids : HOLD_MAX;
}

/* Kills one listed process and keeps its pidfd in ctx->pidbuf. */
static int kill_one(pid_t pid, void *userdata)
{
	struct kill_run *run = userdata;
	bool fresh = false;
	int fd;

	if (is_ours(run->ctx, pid))
		return -ELOOP;
	/* Listed again in the same round (a cgroupfs walk cut short, then
	 * /proc): signalled already and not yet exited; once is counted. */
	for (size_t i = 0; i < run->held; i++)
		if (run->held_pid[i] == pid)
			return 0;
	fd = kill_member(run, pid, &fresh);
	if ((fd == -EMFILE || fd == -ENFILE) && run->held > 0) {
		make_room(run);
		fd = kill_member(run, pid, &fresh);
	}
	if (fd < 0) {
		if (fd != -ESRCH && fd != -ESTALE)
			oomkit__log(run->ctx, OOMKIT_LOG_WARNING, "kill %d in %s: %s", (int)pid, run->rel,
				    errname(-fd));
		return 0;
	}
	run->signalled += fresh;
	if (run->held >= hold_max(run))
		make_room(run);
	run->held_pid[run->held] = pid;
	run->ctx->pidbuf[run->held++] = fd;
	return 0;
}

static int kill_entry(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	(void)ctx;
	return kill_one(e->pid, userdata);
}

/* How long one listing of the cgroup walks its descendants before it lists
 * through /proc instead: a job's owner makes empty cgroups by the thousand,
 * and a kill lists the cgroup a few times. */
#define KILL_WALK_MS 20

/* Every process of the memcg and its descendants, through fn: a cgroupfs
 * walk for KILL_WALK_MS, then through /proc, which finds them all again
 * (each callback here may see a process twice: signalling, moving or
 * counting it again does no harm). */
static int walk_members(struct kill_run *run, oomkit_pid_fn fn, void *userdata)
{
	uint64_t deadline = oomkit__now_ns() + KILL_WALK_MS * 1000000ull;
	int n =
	    oomkit_cgroup_walk_pids_until(run->ctx, run->rel, OOMKIT_WALK_RECURSIVE, deadline, fn, userdata);

	if (n != -ETIMEDOUT)
		return n;
	return oomkit_cgroup_walk_pids(run->ctx, run->rel, OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC, fn,
				       userdata);
}

static int refuse_ours(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	(void)userdata;
	return is_ours(ctx, e->pid) ? -ELOOP : 0;
}

/* Counts the memcg's processes (with descendants); -ELOOP if one is ours. */
static int count_memcg(struct kill_run *run)
{
	return walk_members(run, refuse_ours, NULL);
}

/* Lists, kills and waits until the cgroup is empty: the whole method without
 * a freezer, and the sweep after one.  Each round kills what it lists as it
 * goes, so a cgroup of any size is killed. */
static int kill_rounds(struct kill_run *run)
{
	int before = run->signalled;

	run->can_wait = true;
	for (int round = 0; round < KILL_ROUNDS; round++) {
		/* The first round always signals, even with a zero timeout. */
		if (round > 0 && expired(run->end)) {
			int n = count_memcg(run);
			return n <= 0 ? n : -ETIMEDOUT;
		}
		int n = walk_members(run, kill_entry, run);
		if (n == 0 && round > 0)
			oomkit__log(run->ctx, OOMKIT_LOG_INFO, "kill %s: %d signalled in %d rounds", run->rel,
				    run->signalled - before, round);
		if (n <= 0) {
			close_held(run);
			return n;
		}
		(void)wait_held(run);
	}
	return -ETIMEDOUT;
}

/* ---------------------------------------------------------- v1 freezer */

struct freezer {
	int rootfd;    /* freezer hierarchy root */
	int fd;	       /* our cgroup in it */
	char name[32]; /* its name: oomkit-kill-<pid> */
};

/* Creates the freezer cgroup and freezes it while still empty, so that
 * every task moved in is frozen on arrival, and every child a not yet frozen
 * task forks is born inside. */
static int freezer_create(oomkit_ctx *ctx, struct freezer *fz)
{
	int r;

	snprintf(fz->name, sizeof(fz->name), "oomkit-kill-%d", (int)getpid());
	fz->fd = -1;
	fz->rootfd = open(ctx->freezer_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fz->rootfd < 0)
		return -errno;
	/* A leftover of an earlier run with our pid is removed if it is empty;
	 * one that still holds tasks is not ours to reuse. */
	if (mkdirat(fz->rootfd, fz->name, 0755) < 0 &&
	    (errno != EEXIST || unlinkat(fz->rootfd, fz->name, AT_REMOVEDIR) < 0 ||
	     mkdirat(fz->rootfd, fz->name, 0755) < 0)) {
		r = -errno;
		close(fz->rootfd);
		return r;
	}
	fz->fd = openat(fz->rootfd, fz->name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	r = fz->fd < 0 ? -errno : oomkit__write_file_at(fz->fd, "freezer.state", "FROZEN");
	if (r < 0) {
		if (fz->fd >= 0)
			close(fz->fd);
		(void)unlinkat(fz->rootfd, fz->name, AT_REMOVEDIR);
		close(fz->rootfd);
	}
	return r;
}

/* Whether pid sits in our freezer cgroup.  /proc shows paths from the
 * hierarchy's root, and freezer_root may be a cgroup below it.  A freezer
 * path too long to read is not ours, which is short. */
static int in_freezer(struct kill_run *run, const struct freezer *fz, pid_t pid)
{
	char path[OOMKIT__PATH_MAX];
	int r = oomkit__proc_cgroup(run->ctx, pid, "freezer", path, sizeof(path));
	if (r == -ENAMETOOLONG)
		return 0;
	if (r < 0)
		return r;
	size_t n = strlen(path), k = strlen(fz->name);
	return n >= k && strcmp(path + n - k, fz->name) == 0 && (n == k || path[n - k - 1] == '/');
}

struct gather {
	struct kill_run *run;
	const struct freezer *fz;
	int moved;
};

/* Moves one task of the memcg into the freezer cgroup unless it is there. */
static int gather_one(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct gather *g = userdata;
	char v[16];

	if (is_ours(ctx, e->pid))
		return -ELOOP;
	int r = in_freezer(g->run, g->fz, e->pid);
	if (r == 0) {
		snprintf(v, sizeof(v), "%d", (int)e->pid);
		r = oomkit__write_file_at(g->fz->fd, "cgroup.procs", v);
		g->moved++;
	}
	return r < 0 && r != -ESRCH ? r : 0;
}

/* Moves every task of the memcg into the freezer cgroup, round after round,
 * until a round finds them all there.  A task forked by one not yet moved is
 * listed by the next round; tasks already inside can only fork inside. */
static int freezer_gather(struct kill_run *run, const struct freezer *fz)
{
	for (int round = 0; round < MOVE_ROUNDS; round++) {
		struct gather g = {run, fz, 0};
		int n = walk_members(run, gather_one, &g);
		if (n < 0)
			return n;
		if (g.moved == 0)
			return 0;
		if (expired(run->end))
			return -ETIMEDOUT;
	}
	return -EAGAIN;
}

/* Waits briefly for every task to be frozen.  Not reaching FROZEN is no
 * error: tasks blocked in the memcg's OOM wait never freeze, but they cannot
 * fork either. */
static bool freezer_wait_frozen(struct kill_run *run, const struct freezer *fz)
{
	uint64_t end = oomkit__now_ns() + FREEZE_WAIT_NS;
	struct oomkit__oom_control oc;
	char state[32];

	for (;;) {
		int n = oomkit__read_file_at(fz->fd, "freezer.state", state, sizeof(state));
		if (n >= 6 && strncmp(state, "FROZEN", 6) == 0)
			return true;
		if (n < 0 || oomkit__now_ns() >= end || expired(run->end))
			return false;
		if (oomkit__oom_state_at(run->ctx, run->rel, &oc) == 0 && oc.under_oom)
			return false;
		nap();
	}
}

/* Kills every task in the freezer cgroup while they cannot run.  Returns
 * how many were listed. */
static int freezer_kill(struct kill_run *run, const struct freezer *fz)
{
	int r, before = run->signalled;

	run->can_wait = false;
	r = oomkit__procs_each(fz->fd, kill_one, run);
	run->can_wait = true;
	return r < 0 ? r : run->signalled - before;
}

/* Removes the freezer cgroup once its last task has left. */
static void freezer_remove(struct kill_run *run, struct freezer *fz, bool wait)
{
	/* Exiting tasks leave the cgroup a moment after their pidfd fires;
	 * give them a little time past the caller's deadline. */
	uint64_t end = oomkit__now_ns() + (wait ? 100 * POLL_PERIOD_NS : 0);

	close(fz->fd);
	while (unlinkat(fz->rootfd, fz->name, AT_REMOVEDIR) < 0) {
		if (errno != EBUSY || oomkit__now_ns() >= end) {
			oomkit__log(run->ctx, OOMKIT_LOG_WARNING, "cannot remove freezer cgroup %s/%s: %s",
				    run->ctx->freezer_root, fz->name, errname(errno));
			break;
		}
		nap();
	}
	close(fz->rootfd);
}

/* Gathers the memcg's tasks in the (frozen) freezer cgroup, kills them,
 * thaws them and waits for them to exit. */
static int kill_frozen(struct kill_run *run, struct freezer *fz)
{
	int r = freezer_gather(run, fz);
	bool frozen = r == 0 && freezer_wait_frozen(run, fz);

	/* Not every task may have been gathered (a fork storm, the deadline):
	 * kill those that were; the sweep that follows takes the rest. */
	if (r == 0 || r == -EAGAIN || r == -ETIMEDOUT)
		r = freezer_kill(run, fz);
	/* Thaw whatever happened: killed tasks die only once thawed, and a
	 * task left frozen after a failure would hang forever. */
	int t = oomkit__write_file_at(fz->fd, "freezer.state", "THAWED");
	if (t < 0)
		oomkit__log(run->ctx, OOMKIT_LOG_ERR, "cannot thaw %s/%s: %s", run->ctx->freezer_root,
			    fz->name, errname(-t));
	if (r >= 0)
		oomkit__log(run->ctx, OOMKIT_LOG_INFO,
			    "kill %s: %d tasks %s in freezer cgroup %s, %d signalled", run->rel, r,
			    frozen ? "frozen" : "held (not all frozen)", fz->name, run->signalled);
	(void)wait_held(run);
	return r < 0 ? r : 0;
}

/* ----------------------------------------------------------------- v2 */

/* Kills the whole subtree at once where the backend can (cgroup.kill):
 * forks included, nothing to list first but the count. */
static int kill_at_once(struct kill_run *run)
{
	int r, n = count_memcg(run);
	if (n < 0)
		return n;
	int fd = oomkit__cgroup_open(run->ctx, run->rel);
	if (fd < 0)
		return fd;
	r = oomkit__kill_all(run->ctx, fd, run->end);
	close(fd);
	if (r < 0)
		return r;
	run->signalled = n;
	return 0;
}

/* ------------------------------------------------------------- cgroup */

/* Refuses a cgroup that holds this process or its guardian, checked before
 * anything is frozen or signalled. */
static int check_self_outside(struct kill_run *run)
{
	pid_t self[2] = {getpid(), run->ctx->guardian_pid};

	for (int i = 0; i < 2; i++)
		if (self[i] > 0 && oomkit__process_in(run->ctx, self[i], run->rel) == 1)
			return -ELOOP;
	return 0;
}

OOMKIT__EXPORT int oomkit_kill_cgroup(oomkit_ctx *ctx, const char *cgroup, int timeout_ms)
{
	struct kill_run run = {.ctx = ctx, .end = deadline_after(timeout_ms)};
	struct freezer fz;
	bool have_freezer = false;
	int r;

	if (!ctx || !cgroup)
		return -EINVAL;
	r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, run.rel, sizeof(run.rel));
	if (r < 0)
		return r;
	/* The root cgroup is the whole machine. */
	if (!run.rel[0])
		return -EINVAL;
	if ((r = oomkit_cgroup_exists(ctx, run.rel)) <= 0)
		return r < 0 ? r : -ENOENT;
	if ((r = check_self_outside(&run)) < 0)
		return r;
	if (ctx->cg_caps & OOMKIT__CAN_KILL_ALL) {
		r = kill_at_once(&run);
		return r < 0 ? r : run.signalled;
	}
	if (ctx->freezer_root[0]) {
		r = freezer_create(ctx, &fz);
		have_freezer = r == 0;
		if (r == 0)
			r = kill_frozen(&run, &fz);
		if (r == -ELOOP) {
			if (have_freezer)
				freezer_remove(&run, &fz, false);
			return r;
		}
		if (r < 0)
			oomkit__log(ctx, OOMKIT_LOG_WARNING,
				    "kill %s: freezer not usable (%s); killing in rounds", run.rel,
				    errname(-r));
	}
	/* After the freezer this only sweeps up children forked in the instant
	 * before their parent was killed, and waits for the frozen victims it
	 * let go unwatched; without one it is the whole method. */
	if (have_freezer)
		run.swept = &fz;
	r = kill_rounds(&run);
	if (have_freezer)
		freezer_remove(&run, &fz, true);
	return r < 0 ? r : run.signalled;
}
