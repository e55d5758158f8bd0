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
 * alternate, one OOM each, and the side that goes first turns each round,
 * so that no side always follows the same one.
 *
 * Besides the samples it notes, per pair, the ratio of medians and of 99th
 * percentiles with a 95% interval (resampling whole rounds, so that what
 * the machine was doing at the time stays paired), and the library's own
 * time: from its read of the kernel's event to the handler's entry.
 */
#include <stdio.h>
#include <stdlib.h>
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
 * ns, or -1 if it could not be measured; *ret_inside_ns the library's part. */
static double one_oom(const char *cg, const char *hog_path, struct bl_hog_stamp *hs, struct bench_stamp *ws,
		      double *ret_inside_ns)
{
	ws->entry_ns = 0;
	ws->read_ns = 0;
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
	*ret_inside_ns =
	    ws->read_ns && ws->read_ns <= ws->entry_ns ? (double)(ws->entry_ns - ws->read_ns) : -1;
	return (double)(ws->entry_ns - hs->last_touch_ns);
}

/* --------------------------------------------------------------- figures */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorted into tmp). */
static double quantile(const double *v, size_t n, double q, double *tmp)
{
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return tmp[i < n ? i : n - 1];
}

/* Ratio of the q-quantiles of a and b over the rounds idx[0..n). */
static double ratio_at(const double *a, const double *b, const unsigned *idx, size_t n, double q, double *tmp,
		       double *tmp2)
{
	for (size_t i = 0; i < n; i++) {
		tmp2[i] = a[idx[i]];
		tmp2[n + i] = b[idx[i]];
	}
	double qa = quantile(tmp2, n, q, tmp), qb = quantile(tmp2 + n, n, q, tmp);
	return qb > 0 ? qa / qb : 0;
}

/* Notes side a against side b at quantile q: the ratio in this run and a
 * 95% interval from 1000 resamplings of whole rounds. */
static void note_ratio(const char *what, const double *a, const double *b, size_t n, double q)
{
	enum { RESAMPLES = 1000 };
	unsigned *idx = calloc(n, sizeof(*idx));
	double *tmp = calloc(n, sizeof(*tmp)), *tmp2 = calloc(2 * n, sizeof(*tmp2));
	double *ratios = calloc(RESAMPLES, sizeof(*ratios)), *rtmp = calloc(RESAMPLES, sizeof(*rtmp));
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	if (!idx || !tmp || !tmp2 || !ratios || !rtmp || n == 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		idx[i] = (unsigned)i;
	double r = ratio_at(a, b, idx, n, q, tmp, tmp2);
	for (int k = 0; k < RESAMPLES; k++) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			idx[i] = (unsigned)((seed >> 33) % n);
		}
		ratios[k] = ratio_at(a, b, idx, n, q, tmp, tmp2);
	}
	bl_note("notify: %s p%.0f ratio %.3f (95%% interval %.3f-%.3f, %zu paired rounds)", what, q * 100, r,
		quantile(ratios, RESAMPLES, 0.025, rtmp), quantile(ratios, RESAMPLES, 0.975, rtmp), n);
out:
	free(idx);
	free(tmp);
	free(tmp2);
	free(ratios);
	free(rtmp);
}

static void note_inside(const char *side, const double *v, size_t n)
{
	double *tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (tmp && n)
		bl_note("notify: %s: from reading the kernel's event to the handler p50 %.1f us, p99 %.1f us",
			side, quantile(v, n, 0.5, tmp), quantile(v, n, 0.99, tmp));
	free(tmp);
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
	struct bench_stamp *ws[SIDES];
	double *lat[SIDES], *inside = calloc(count, sizeof(double));
	size_t rounds = 0, n_inside = 0;
	int failed = 0;

	for (int s = 0; s < SIDES; s++)
		lat[s] = calloc(count, sizeof(double));
	if (bl_init("notify", 256 * BL_MIB) < 0)
		return 1;
	struct bl_hog_stamp *hs = bl_stamp_new(hog_path, sizeof(hog_path));
	for (int s = 0; s < SIDES; s++) {
		cg[s] = bl_child("%s", side_name[s]);
		ws[s] = bl_stamp_new(wpath[s], sizeof(wpath[s]));
		if (!hs || !ws[s] || !lat[s] || !inside || bl_mkcg(cg[s], NOTIFY_LIMIT) < 0 ||
		    start_watcher(s, cg[s], wpath[s]) < 0) {
			bl_fail("notify: setup of the %s side failed", side_name[s]);
			failed = 1;
			goto out;
		}
	}
	bl_note("notify: %u OOMs per side, memcg limit %llu MiB, hog touching 1 MiB steps with no pause",
		count, NOTIFY_LIMIT / BL_MIB);
	for (unsigned i = 0; i < count && failed < 5; i++) {
		double round[SIDES], in[SIDES];
		bool ok = true;
		for (int k = 0; k < SIDES; k++) {
			int s = (int)((i + (unsigned)k) % SIDES);
			round[s] = one_oom(cg[s], hog_path, hs, ws[s], &in[s]);
			if (round[s] < 0) {
				failed++;
				ok = false;
				continue;
			}
			bl_sample("notify", side_name[s], round[s] / 1000.0);
			if (s == 0 && in[s] >= 0)
				bl_sample("notify", "inside-oomkit", in[s] / 1000.0);
		}
		if (!ok)
			continue;
		for (int s = 0; s < SIDES; s++)
			lat[s][rounds] = round[s];
		if (in[0] >= 0)
			inside[n_inside++] = in[0] / 1000.0;
		rounds++;
	}
	note_ratio("oomkit/eventfd", lat[0], lat[1], rounds, 0.5);
	note_ratio("oomkit/eventfd", lat[0], lat[1], rounds, 0.99);
	note_ratio("oomkit-rt/eventfd-rt", lat[2], lat[3], rounds, 0.5);
	note_ratio("oomkit-rt/eventfd-rt", lat[2], lat[3], rounds, 0.99);
	note_inside("oomkit", inside, n_inside);
out:
	for (int s = 0; s < SIDES; s++) {
		if (wpath[s][0])
			unlink(wpath[s]);
		free(lat[s]);
	}
	free(inside);
	if (hog_path[0])
		unlink(hog_path);
	bl_cleanup();
	return failed ? 1 : 0;
}
