/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * notify.c - benchmark 1: how long after the allocating process blocks at
 * its memcg limit does the handler run?  The hog stamps the time before each
 * page it touches; the watcher stamps its handler's entry.  Side A is a
 * liboomkit handler (take-over, guardian, reserve, mlock: a daemon's setup),
 * side B a bare eventfd loop on cgroup.event_control with the same kill, so
 * the ratio is what the library adds on top of the kernel's notification.
 * Each runs twice: at the normal scheduling policy, and under SCHED_FIFO
 * (what a deployment does that wants its handler to run the moment the
 * kernel wakes it, whatever else the machine is busy with).  The four
 * alternate, one OOM each, in one run.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"

#define NOTIFY_LIMIT (16 * BL_MIB)
#define HOG_MIB 64
#define OOM_TIMEOUT_MS 10000

#define SIDES 4

static const char *const side_name[SIDES] = {"oomkit", "eventfd", "oomkit-rt", "eventfd-rt"};

static bool oom_clear(const char *cg, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited++) {
		if (th_cg_key(BL_MEMORY_ROOT, cg, "memory.oom_control", "under_oom") == 0)
			return true;
		bl_sleep_us(1000);
	}
	return false;
}

/* One OOM on cg: returns the handler's entry minus the hog's last touch in
 * ns, or -1 if it could not be measured. */
static double one_oom(const char *cg, const char *hog_path, struct bl_hog_stamp *hs,
		      struct bl_watch_stamp *ws)
{
	ws->entry_ns = 0;
	hs->pages = 0;
	hs->last_touch_ns = 0;
	pid_t pid = bl_spawn_hog(cg, HOG_MIB, 1024, 0, hog_path);
	if (pid < 0)
		return -1;
	int st = bl_wait_child(pid, OOM_TIMEOUT_MS);
	if (st == -1 || !WIFSIGNALED(st)) {
		bl_fail("notify: the hog in %s was not killed within %d ms", cg, OOM_TIMEOUT_MS);
		return -1;
	}
	if (!ws->entry_ns || ws->entry_ns < hs->last_touch_ns) {
		bl_fail("notify: the handler of %s recorded no entry after the last touch", cg);
		return -1;
	}
	if (!oom_clear(cg, 2000))
		bl_fail("notify: %s still under OOM after its hog died", cg);
	return (double)(ws->entry_ns - hs->last_touch_ns);
}

static int start_watcher(int side, const char *cg, const char *stamp)
{
	const char *res = bl_child("res-%s", side_name[side]);
	const char *args[8];
	int n = 0;
	if (bl_mkcg(res, 64 * BL_MIB) < 0)
		return -1;
	if (side % 2)
		args[n++] = "--raw";
	if (side >= 2)
		args[n++] = "--rt";
	args[n++] = "--stamp";
	args[n++] = stamp;
	args[n++] = "--reserve";
	args[n++] = res;
	args[n++] = cg;
	args[n] = NULL;
	return bl_start_watcher(args, NULL, 10000) < 0 ? -1 : 0;
}

int bench_notify(int argc, char **argv)
{
	unsigned count = bench_opt(argc, argv, "count", 200);
	char hog_path[64] = "", wpath[SIDES][64] = {{0}};
	const char *cg[SIDES];
	struct bl_watch_stamp *ws[SIDES];
	int failed = 0;

	if (bl_init("notify", 256 * BL_MIB) < 0)
		return 1;
	struct bl_hog_stamp *hs = bl_stamp_new(hog_path, sizeof(hog_path));
	for (int s = 0; s < SIDES; s++) {
		cg[s] = bl_child("%s", side_name[s]);
		ws[s] = bl_stamp_new(wpath[s], sizeof(wpath[s]));
		if (!hs || !ws[s] || bl_mkcg(cg[s], NOTIFY_LIMIT) < 0 ||
		    start_watcher(s, cg[s], wpath[s]) < 0) {
			bl_fail("notify: setup of the %s side failed", side_name[s]);
			failed = 1;
			goto out;
		}
	}
	bl_note("notify: %u OOMs per side, memcg limit %llu MiB, hog touching 1 MiB steps with no pause",
		count, NOTIFY_LIMIT / BL_MIB);
	for (unsigned i = 0; i < count && failed < 5; i++)
		for (int s = 0; s < SIDES; s++) {
			double ns = one_oom(cg[s], hog_path, hs, ws[s]);
			if (ns < 0)
				failed++;
			else
				bl_sample("notify", side_name[s], ns / 1000.0);
		}
out:
	for (int s = 0; s < SIDES; s++)
		if (wpath[s][0])
			unlink(wpath[s]);
	if (hog_path[0])
		unlink(hog_path);
	bl_cleanup();
	return failed ? 1 : 0;
}
