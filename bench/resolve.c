/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolve.c - benchmark 2: the same OOM (a 256 MiB memcg, a hog wanting
 * 512 MiB) resolved by the kernel OOM killer and by oomkit's kill path (the
 * watcher's handler: pick the largest process, pidfd kill with a start-time
 * check, process_mrelease, wait for the exit).  Measured from the hog's last
 * touch to the moment the victim has exited and the memcg's usage is back
 * under half its limit, by the same observer for both, alternating.
 *
 * A third side measures the floor under both: a hog that holds nearly the
 * same memory (RESOLVE_FLOOR_MIB, the rest of the limit is its page tables
 * and the stamp) without any OOM, killed by the observer with SIGKILL, timed
 * from the kill to the same end.  That is the victim's own exit freeing its
 * memory, which every side waits for: what a handler can take off the
 * kernel killer's time is only what lies above it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"

#define RESOLVE_LIMIT (256 * BL_MIB)
#define HOG_MIB 512
#define RESOLVE_TIMEOUT_MS 20000
#define RESOLVE_FLOOR_MIB 252

#define SIDES 3
static const char *const side_name[SIDES] = {"oomkit", "kernel", "exit"};

/* Waits for the hog to exit and the usage to fall under half the limit;
 * returns the time that happened, or 0. */
static uint64_t wait_resolved(pid_t pid, int usage_fd)
{
	int pidfd = bl_pidfd_open(pid);
	if (pidfd < 0)
		return 0;
	int ready = bl_wait_fd(pidfd, RESOLVE_TIMEOUT_MS);
	close(pidfd);
	if (ready <= 0)
		return 0;
	uint64_t end = bl_now_ns() + 5000000000ull;
	while (bl_now_ns() < end) {
		uint64_t usage = bl_pread_u64(usage_fd);
		if (usage <= RESOLVE_LIMIT / 2)
			return bl_now_ns();
		bl_sleep_us(20);
	}
	return 0;
}

/* A hog of mib in cg, its stamp cleared and cg's usage file open for the
 * observer: the hog's pid and *ret_usage_fd, or -1. */
static pid_t spawn_observed(const char *cg, unsigned mib, const char *hog_path, struct bl_hog_stamp *hs,
			    int *ret_usage_fd)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", bl_abs(cg));
	*ret_usage_fd = open(path, O_RDONLY | O_CLOEXEC);
	hs->pages = 0;
	hs->last_touch_ns = 0;
	return *ret_usage_fd < 0 ? -1 : bl_spawn_hog(cg, mib, 1024, 0, hog_path);
}

/* Ends what spawn_observed() started, whatever the run came to. */
static void reap_observed(pid_t pid, int usage_fd)
{
	if (usage_fd >= 0)
		close(usage_fd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Whether the floor's hog has touched every page and sleeps in pause(),
 * the only sleep it has once its memory is touched. */
static bool filled(pid_t pid, const struct bl_hog_stamp *hs)
{
	return hs->pages >= (uint64_t)RESOLVE_FLOOR_MIB * BL_MIB / BL_PAGE && th_proc_state(pid) == 'S';
}

/* The floor: a hog of RESOLVE_FLOOR_MIB in cg, killed once it holds all of
 * it; the figure in ms, or -1. */
static double one_exit(const char *cg, const char *hog_path, struct bl_hog_stamp *hs)
{
	int usage_fd;
	pid_t pid = spawn_observed(cg, RESOLVE_FLOOR_MIB, hog_path, hs, &usage_fd);
	uint64_t end = bl_now_ns() + (uint64_t)RESOLVE_TIMEOUT_MS * 1000000u, start = 0, done = 0;
	while (pid > 0 && !filled(pid, hs) && bl_now_ns() < end)
		bl_sleep_us(1000);
	if (pid > 0 && filled(pid, hs)) {
		start = bl_now_ns();
		if (kill(pid, SIGKILL) == 0)
			done = wait_resolved(pid, usage_fd);
	}
	reap_observed(pid, usage_fd);
	if (!done) {
		bl_fail("resolve: the hog of %s did not fill %d MiB and exit when killed", cg,
			RESOLVE_FLOOR_MIB);
		return -1;
	}
	return (double)(done - start) / 1e6;
}

/* One OOM on cg; the figure in ms, or -1. */
static double one_run(int side, const char *cg, const char *hog_path, struct bl_hog_stamp *hs)
{
	uint64_t kills = th_cg_key(BL_MEMORY_ROOT, cg, "memory.oom_control", "oom_kill");
	int usage_fd;
	pid_t pid = spawn_observed(cg, HOG_MIB, hog_path, hs, &usage_fd);
	uint64_t done = pid > 0 ? wait_resolved(pid, usage_fd) : 0;
	reap_observed(pid, usage_fd);
	if (!done || !hs->last_touch_ns) {
		bl_fail("resolve: the %s side did not resolve the OOM of %s", side_name[side], cg);
		return -1;
	}
	/* The oomkit side must have resolved it without the kernel's killer. */
	if (side == 0 && th_cg_key(BL_MEMORY_ROOT, cg, "memory.oom_control", "oom_kill") != kills) {
		bl_fail("resolve: the kernel killed in %s, not oomkit", cg);
		return -1;
	}
	return (double)(done - hs->last_touch_ns) / 1e6;
}

int bench_resolve(int argc, char **argv)
{
	unsigned pairs = bench_opt(argc, argv, "pairs", 25);
	char hog_path[64];
	const char *cg[SIDES];
	int failed = 0;

	if (bl_init("resolve", 600 * BL_MIB) < 0)
		return 1;
	struct bl_hog_stamp *hs = bl_stamp_new(hog_path, sizeof(hog_path));
	for (int s = 0; s < SIDES; s++) {
		cg[s] = bl_child("%s", side_name[s]);
		if (bl_mkcg(cg[s], RESOLVE_LIMIT) < 0)
			return 1;
	}
	const char *args[] = {"--reserve", bl_child("res-oomkit"), cg[0], NULL};
	if (!hs || bl_start_watcher(args, NULL, 10000) < 0) {
		bl_fail("resolve: setup failed");
		failed = 1;
		goto out;
	}
	bl_note(
	    "resolve: %u pairs, memcg limit %llu MiB, hog wanting %d MiB; resolved = victim exited and usage "
	    "under half the limit; exit = a hog holding %d MiB killed by SIGKILL without an OOM, timed from "
	    "the "
	    "kill (the floor of both sides)",
	    pairs, RESOLVE_LIMIT / BL_MIB, HOG_MIB, RESOLVE_FLOOR_MIB);
	for (unsigned i = 0; i < pairs && failed < 5; i++)
		for (int s = 0; s < SIDES; s++) {
			double ms = s == 2 ? one_exit(cg[s], hog_path, hs) : one_run(s, cg[s], hog_path, hs);
			if (ms < 0)
				failed++;
			else
				bl_sample("resolve", side_name[s], ms);
		}
out:
	unlink(hog_path);
	bl_cleanup();
	return failed ? 1 : 0;
}
