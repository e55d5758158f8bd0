/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * resolve.c - benchmark 2: the same OOM (a 256 MiB memcg, a hog wanting
 * 512 MiB) resolved by the kernel OOM killer and by oomkit's kill path (the
 * watcher's handler: pick the largest process, pidfd kill with a start-time
 * check, process_mrelease, wait for the exit).  Measured from the hog's last
 * touch to the moment the victim has exited and the memcg's usage is back
 * under half its limit, by the same observer for both, alternating.
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

static const char *const side_name[2] = {"oomkit", "kernel"};

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

/* One OOM on cg; the figure in ms, or -1. */
static double one_run(int side, const char *cg, const char *hog_path, struct bl_hog_stamp *hs)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", bl_abs(cg));
	int usage_fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t kills = th_cg_key(BL_MEMORY_ROOT, cg, "memory.oom_control", "oom_kill");
	hs->pages = 0;
	hs->last_touch_ns = 0;
	pid_t pid = usage_fd < 0 ? -1 : bl_spawn_hog(cg, HOG_MIB, 1024, 0, hog_path);
	uint64_t done = pid > 0 ? wait_resolved(pid, usage_fd) : 0;
	if (usage_fd >= 0)
		close(usage_fd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
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
	const char *cg[2];
	int failed = 0;

	if (bl_init("resolve", 600 * BL_MIB) < 0)
		return 1;
	struct bl_hog_stamp *hs = bl_stamp_new(hog_path, sizeof(hog_path));
	for (int s = 0; s < 2; s++) {
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
	    "under half the limit",
	    pairs, RESOLVE_LIMIT / BL_MIB, HOG_MIB);
	for (unsigned i = 0; i < pairs && failed < 5; i++)
		for (int s = 0; s < 2; s++) {
			double ms = one_run(s, cg[s], hog_path, hs);
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
