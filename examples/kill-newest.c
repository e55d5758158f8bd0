/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kill-newest: when CGROUP runs out of memory, kill its newest process
 * instead of the one using the most memory -- the reference design's "kill
 * the newest instead of the year-old web server".
 *
 *   kill-newest CGROUP [DELAY_MS [COUNT]]
 *
 * Takes over CGROUP's OOM handling (the kernel killer is held off for
 * DELAY_MS, default 2000) and handles COUNT OOMs (default: forever).
 * Run it outside CGROUP: a handler inside the memcg it handles hangs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <oomkit.h>

struct state {
	int handled;
	int count;
};

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* The newest process of the cgroup that may be killed, or 0. */
static pid_t newest(oomkit_ctx *ctx, const char *cgroup, struct oomkit_process *ret)
{
	static pid_t pids[4096];
	int n = oomkit_cgroup_pids(ctx, cgroup, true, pids, 4096);
	pid_t best = 0;
	for (int i = 0; i < n; i++) {
		struct oomkit_process p;
		if (oomkit_process_info(ctx, pids[i], &p) < 0 || p.oom_score_adj == -1000)
			continue;
		printf("  candidate pid %d (%s): started at tick %llu, rss %.1f MiB\n", (int)p.pid, p.comm,
		       (unsigned long long)p.start_time,
		       (double)(p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) / 1024.0);
		if (!best || p.start_time > ret->start_time ||
		    (p.start_time == ret->start_time && p.pid > best)) {
			best = p.pid;
			*ret = p;
		}
	}
	return best;
}

static enum oomkit_verdict handle(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct state *st = userdata;
	struct oomkit_process victim;

	if (ev->kind == OOMKIT_EVENT_GONE) {
		printf("%s was removed; exiting\n", ev->cgroup);
		oomkit_stop(ctx);
		return OOMKIT_RESOLVED;
	}
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	printf("OOM in %s: usage %.1f MiB of %.1f MiB\n", ev->cgroup, mib(ev->usage_bytes),
	       mib(ev->limit_bytes));
	if (!newest(ctx, ev->cgroup, &victim)) {
		printf("  decision: nothing may be killed; the kernel decides\n");
		return OOMKIT_KERNEL;
	}
	printf("  decision: kill pid %d (%s), the newest process\n", (int)victim.pid, victim.comm);
	int r = oomkit_kill(ctx, victim.pid, victim.start_time, 2000);
	struct oomkit_cgroup_memory m;
	if (r < 0 && r != -ESRCH) {
		printf("  outcome: kill failed: %s; waiting for the delay\n", strerror(-r));
		return OOMKIT_WAIT;
	}
	if (oomkit_cgroup_memory(ctx, ev->cgroup, &m) == 0)
		printf("  outcome: pid %d is gone; usage now %.1f MiB\n", (int)victim.pid,
		       mib(m.usage_bytes));
	if (++st->handled == st->count)
		oomkit_stop(ctx);
	fflush(stdout);
	return OOMKIT_RESOLVED;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CGROUP [DELAY_MS [COUNT]]\n", argv[0]);
		return 2;
	}
	uint64_t delay_ms = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000;
	struct state st = {.count = argc > 3 ? atoi(argv[3]) : -1};
	oomkit_ctx *ctx;
	oomkit_watch *w;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((r = oomkit_new(NULL, &ctx)) < 0) {
		fprintf(stderr, "kill-newest: cannot start: %s\n", strerror(-r));
		return 1;
	}
	if ((r = oomkit_watch_oom(ctx, argv[1], 0, handle, &st, &w)) < 0 ||
	    (r = oomkit_take_over(ctx, w, delay_ms)) < 0) {
		fprintf(stderr, "kill-newest: cannot watch %s: %s\n", argv[1], strerror(-r));
		oomkit_free(ctx);
		return 1;
	}
	printf("watching %s; the kernel OOM killer is held off for %llu ms per OOM\n", argv[1],
	       (unsigned long long)delay_ms);
	r = oomkit_run(ctx);
	oomkit_free(ctx);
	return r < 0 ? 1 : 0;
}
