/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-soak-handler: the long-running handler of tests/soak.sh.
 *
 *   oomkit-soak-handler PARENT COUNT DELAY_MS
 *
 * Watches and takes over the memcgs PARENT/0 .. PARENT/COUNT-1 with one
 * liboomkit context.  On each OOM it lists the memcg's processes, writes a
 * report of it (to /dev/null: the path is exercised, nothing kept), kills the
 * largest process and prints "oom CGROUP PID RESULT".  It prints
 * "ready GUARDIAN_PID" once everything is taken over and "handled N" when
 * SIGTERM stops it.  Its fd count and RSS are what the soak watches, so the
 * handler path must not allocate or leak: all its buffers are static.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <oomkit.h>

static oomkit_ctx *ctx;
static unsigned long handled, failed;
static int devnull = -1;
static pid_t pids[4096];

static void on_term(int sig)
{
	(void)sig;
	oomkit_stop(ctx);
}

/* The process of the cgroup using the most memory, or 0. */
static pid_t largest(const char *cgroup, struct oomkit_process *ret)
{
	int n = oomkit_cgroup_pids(ctx, cgroup, true, pids, sizeof(pids) / sizeof(pids[0]));
	uint64_t best_kib = 0;
	pid_t best = 0;
	for (int i = 0; i < n; i++) {
		struct oomkit_process p;
		if (oomkit_process_info(ctx, pids[i], &p) < 0)
			continue;
		uint64_t kib = p.rss_anon_kib + p.rss_shmem_kib + p.swap_kib;
		if (!best || kib > best_kib) {
			best = p.pid;
			best_kib = kib;
			*ret = p;
		}
	}
	return best;
}

static enum oomkit_verdict handle(oomkit_ctx *c, const struct oomkit_event *ev, void *userdata)
{
	(void)userdata;
	struct oomkit_process victim;
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	pid_t pid = largest(ev->cgroup, &victim);
	struct oomkit_decision d = {.action = "kill", .reason = "the largest process", .victim_pid = pid};
	(void)oomkit_write_report(c, devnull, ev, &d);
	if (!pid)
		return OOMKIT_WAIT;
	int r = oomkit_kill(c, pid, victim.start_time, 5000);
	if (r < 0 && r != -ESRCH)
		failed++;
	else
		handled++;
	printf("oom %s %d %d\n", ev->cgroup, (int)pid, r);
	return r < 0 && r != -ESRCH ? OOMKIT_WAIT : OOMKIT_RESOLVED;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s PARENT COUNT DELAY_MS\n", argv[0]);
		return 2;
	}
	const char *parent = argv[1];
	unsigned count = (unsigned)strtoul(argv[2], NULL, 10);
	uint64_t delay_ms = strtoull(argv[3], NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	struct oomkit_options o;
	oomkit_options_init(&o);
	o.max_cgroups = count + 16;
	int r = oomkit_new(&o, &ctx);
	if (r < 0) {
		fprintf(stderr, "oomkit_new: %s\n", strerror(-r));
		return 1;
	}
	for (unsigned i = 0; i < count; i++) {
		char cg[512];
		oomkit_watch *w;
		snprintf(cg, sizeof(cg), "%s/%u", parent, i);
		if ((r = oomkit_watch_oom(ctx, cg, 0, handle, NULL, &w)) < 0 ||
		    (r = oomkit_take_over(ctx, w, delay_ms)) < 0) {
			fprintf(stderr, "%s: %s\n", cg, strerror(-r));
			oomkit_free(ctx);
			return 1;
		}
	}
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready %d\n", (int)oomkit_guardian_pid(ctx));
	r = oomkit_run(ctx);
	printf("handled %lu failed %lu\n", handled, failed);
	oomkit_free(ctx);
	return r < 0 ? 1 : 0;
}
