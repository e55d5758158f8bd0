/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * grow-or-kill: when CGROUP runs out of memory, raise its limit by STEP if
 * the machine has that much available and the limit stays under MAX; else
 * kill its largest process.  The reference design's "increase the memcg
 * limit if there is memory available on the system".
 *
 *   grow-or-kill CGROUP STEP_MIB MAX_MIB [COUNT]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oomkit.h>

struct config {
	uint64_t step, max;
	int handled, count;
};

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

static enum oomkit_verdict grow(oomkit_ctx *ctx, const struct oomkit_event *ev, const struct config *c)
{
	struct oomkit_system_memory sys;
	uint64_t want = ev->limit_bytes + c->step;
	if (want > c->max) {
		printf("  no growth: %.1f MiB would pass the maximum of %.1f MiB\n", mib(want), mib(c->max));
		return OOMKIT_WAIT;
	}
	if (oomkit_system_memory(ctx, &sys) < 0 || sys.available_bytes < c->step) {
		printf("  no growth: the machine has too little memory available\n");
		return OOMKIT_WAIT;
	}
	int r = oomkit_set_limit(ctx, ev->cgroup, want);
	printf("  decision: grow the limit to %.1f MiB (%.1f MiB available on the machine): %s\n", mib(want),
	       mib(sys.available_bytes), r < 0 ? strerror(-r) : "done");
	return r < 0 ? OOMKIT_WAIT : OOMKIT_RESOLVED;
}

static enum oomkit_verdict kill_largest(oomkit_ctx *ctx, const struct oomkit_event *ev)
{
	static pid_t pids[4096];
	struct oomkit_process best = {0}, p;
	int n = oomkit_cgroup_pids(ctx, ev->cgroup, true, pids, 4096);
	for (int i = 0; i < n; i++) {
		if (oomkit_process_info(ctx, pids[i], &p) < 0 || p.oom_score_adj == -1000)
			continue;
		if (p.rss_anon_kib + p.rss_shmem_kib + p.swap_kib >
		    best.rss_anon_kib + best.rss_shmem_kib + best.swap_kib)
			best = p;
	}
	if (!best.pid)
		return OOMKIT_KERNEL;
	int r = oomkit_kill(ctx, best.pid, best.start_time, 2000);
	printf("  decision: kill pid %d (%s), the largest at %.1f MiB: %s\n", (int)best.pid, best.comm,
	       (double)(best.rss_anon_kib + best.rss_shmem_kib) / 1024.0, r < 0 ? strerror(-r) : "killed");
	return r < 0 && r != -ESRCH ? OOMKIT_WAIT : OOMKIT_RESOLVED;
}

static enum oomkit_verdict handle(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct config *c = userdata;
	if (ev->kind == OOMKIT_EVENT_GONE) {
		oomkit_stop(ctx);
		return OOMKIT_RESOLVED;
	}
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	printf("OOM in %s: usage %.1f MiB of %.1f MiB\n", ev->cgroup, mib(ev->usage_bytes),
	       mib(ev->limit_bytes));
	enum oomkit_verdict v = grow(ctx, ev, c);
	if (v != OOMKIT_RESOLVED)
		v = kill_largest(ctx, ev);
	if (++c->handled == c->count)
		oomkit_stop(ctx);
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s CGROUP STEP_MIB MAX_MIB [COUNT]\n", argv[0]);
		return 2;
	}
	struct config c = {.step = strtoull(argv[2], NULL, 10) << 20,
			   .max = strtoull(argv[3], NULL, 10) << 20,
			   .count = argc > 4 ? atoi(argv[4]) : -1};
	oomkit_ctx *ctx;
	oomkit_watch *w;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((r = oomkit_new(NULL, &ctx)) < 0) {
		fprintf(stderr, "grow-or-kill: cannot start: %s\n", strerror(-r));
		return 1;
	}
	if ((r = oomkit_watch_oom(ctx, argv[1], 0, handle, &c, &w)) < 0 ||
	    (r = oomkit_take_over(ctx, w, 2000)) < 0) {
		fprintf(stderr, "grow-or-kill: cannot watch %s: %s\n", argv[1], strerror(-r));
		oomkit_free(ctx);
		return 1;
	}
	printf("watching %s: grow by %s MiB up to %s MiB, else kill the largest\n", argv[1], argv[2],
	       argv[3]);
	r = oomkit_run(ctx);
	oomkit_free(ctx);
	return r < 0 ? 1 : 0;
}
