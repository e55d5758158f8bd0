/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-scenarios.c - liboomkit's integration scenarios, written against the
 * public API only so that the same program runs in a cgroup v2 guest and in
 * a cgroup v1 guest: the handler cannot tell which one it is on.
 *
 *   guest-scenarios memcg    kill, grow, delay, handler killed, GONE, pressure
 *   guest-scenarios system   whole-machine OOM: a machine cgroup below RAM,
 *                            the lowest-priority job killed before the kernel
 *                            OOM killer fires; without a handler the kernel
 *                            still resolves it
 *
 * Exit 0 when every check passed, 1 otherwise.  Needs OOMKIT_HOG.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oomkit.h"
#include "testhelp.h"

#define MIB (1024ull * 1024ull)
/* Overridable so that the memcg scenarios can also run on a host under a
 * parent of the caller's choosing. */
#define PARENT parent
static const char *parent = "oomkit-vm";

static const char *hog_path;

static oomkit_ctx *ctx_new(bool guardian)
{
	struct oomkit_options o;
	oomkit_ctx *ctx;
	oomkit_options_init(&o);
	o.guardian = guardian;
	o.protect = true;
	int r = oomkit_new(&o, &ctx);
	if (r < 0) {
		printf("FAIL: oomkit_new: %s\n", strerror(-r));
		exit(1);
	}
	/* The guardian is the program the guest carries, not a fork. */
	const char *program = getenv("OOMKIT_GUARDIAN");
	if (guardian && program && program[0]) {
		char link[64], exe[256] = "";
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)oomkit_guardian_pid(ctx));
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		th_check(strcmp(exe, program) == 0, "guardian: runs %s (%s)", program, exe);
	}
	return ctx;
}

struct attach {
	oomkit_ctx *ctx;
	const char *cgroup;
};

static int attach_self(void *p)
{
	struct attach *a = p;
	return oomkit_cgroup_attach(a->ctx, a->cgroup, getpid()) < 0;
}

/* Starts the hog in cgroup: mib MiB, then sleeps.  0 MiB: a sleeper.  It
 * joins through the library, which knows the v1 or v2 hierarchy. */
static pid_t spawn(oomkit_ctx *ctx, const char *cgroup, unsigned mib)
{
	struct attach a = {ctx, cgroup};
	/* The handler protects itself with oom_score_adj -1000, which a child
	 * inherits: the kernel must be free to kill the hog. */
	struct th_spawn how = {.reset_oom_score_adj = true, .in_child = attach_self, .arg = &a};
	return th_spawn_hog(&how, hog_path, mib, 1024, 0, NULL);
}

static struct oomkit_cgroup_memory mem(oomkit_ctx *ctx, const char *cg)
{
	struct oomkit_cgroup_memory m = {0};
	int r = oomkit_cgroup_memory(ctx, cg, &m);
	if (r < 0)
		printf("note: reading %s: %s\n", cg, strerror(-r));
	return m;
}

/* Kills everything below PARENT and removes it. */
static void cleanup(oomkit_ctx *ctx, const char *cg)
{
	(void)oomkit_set_kernel_killer(ctx, cg, true);
	(void)oomkit_kill_cgroup(ctx, cg, 5000);
	for (int i = 0; i < 200 && oomkit_cgroup_remove(ctx, cg) == -EBUSY; i++)
		usleep(10000);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

struct rec {
	int oom, gone, pressure;
	pid_t victim;
	uint64_t victim_start;
	int kill_result;
	uint64_t grow_to;
	enum oomkit_verdict verdict;
	int report_fd;
};

static enum oomkit_verdict handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct rec *r = userdata;
	if (ev->kind == OOMKIT_EVENT_GONE) {
		r->gone++;
		return OOMKIT_RESOLVED;
	}
	if (ev->kind == OOMKIT_EVENT_PRESSURE) {
		r->pressure++;
		return OOMKIT_RESOLVED;
	}
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	r->oom++;
	if (r->victim)
		r->kill_result = oomkit_kill(ctx, r->victim, r->victim_start, 5000);
	if (r->grow_to)
		(void)oomkit_set_limit(ctx, ev->cgroup, r->grow_to);
	return r->verdict;
}

/* Dispatches until done(r) or timeout_ms. */
static bool run_until(oomkit_ctx *ctx, bool (*done)(oomkit_ctx *, void *), void *arg, int timeout_ms)
{
	uint64_t end = th_now_ms() + (uint64_t)timeout_ms;
	while (th_now_ms() < end) {
		if (done(ctx, arg))
			return true;
		oomkit_dispatch(ctx, 20);
	}
	return done(ctx, arg);
}

static bool saw_oom(oomkit_ctx *ctx, void *p)
{
	(void)ctx;
	return ((struct rec *)p)->oom > 0;
}

static bool oom_over(oomkit_ctx *ctx, void *cg)
{
	return !mem(ctx, cg).under_oom;
}

static uint64_t start_time(oomkit_ctx *ctx, pid_t pid)
{
	struct oomkit_process p = {0};
	(void)oomkit_process_info(ctx, pid, &p);
	return p.start_time;
}

static void scenario_kill(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/kill", PARENT);
	struct rec r = {.verdict = OOMKIT_RESOLVED};
	oomkit_watch *w;
	th_check(oomkit_cgroup_create(ctx, cg, 64 * MIB) >= 0, "kill: created %s with a 64 MiB limit", cg);
	pid_t a = spawn(ctx, cg, 0), b = spawn(ctx, cg, 0);
	th_check(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w) == 0 && oomkit_take_over(ctx, w, 10000) == 0,
		 "kill: watching and holding the kernel killer off");
	/* Its start time is known from the fork on, and the handler runs only
	 * inside run_until: no need to wait before naming it the victim. */
	pid_t hog = spawn(ctx, cg, 128);
	r.victim = hog;
	r.victim_start = start_time(ctx, hog);
	th_check(run_until(ctx, saw_oom, &r, 30000), "kill: the OOM reached the handler");
	th_check(r.kill_result == 0, "kill: oomkit_kill returned %d", r.kill_result);
	th_check(th_sigkilled(th_wait_exit(hog, 10000)), "kill: the hog died of SIGKILL");
	th_check(run_until(ctx, oom_over, cg, 10000), "kill: the cgroup left OOM");
	th_check(th_alive(a) && th_alive(b), "kill: the other two processes live");
	th_check(mem(ctx, cg).oom_kill == 0, "kill: the kernel killed nothing");
	oomkit_unwatch(ctx, w);
	cleanup(ctx, cg);
}

static void scenario_grow(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/grow", PARENT);
	struct rec r = {.verdict = OOMKIT_RESOLVED, .grow_to = 96 * MIB};
	oomkit_watch *w;
	th_check(oomkit_cgroup_create(ctx, cg, 32 * MIB) >= 0, "grow: created %s with a 32 MiB limit", cg);
	th_check(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w) == 0 && oomkit_take_over(ctx, w, 10000) == 0,
		 "grow: watching and holding the kernel killer off");
	pid_t hog = spawn(ctx, cg, 48);
	th_check(run_until(ctx, saw_oom, &r, 30000), "grow: the OOM reached the handler");
	uint64_t end = th_now_ms() + 20000;
	while (mem(ctx, cg).usage_bytes < 48 * MIB && th_now_ms() < end)
		oomkit_dispatch(ctx, 20);
	struct oomkit_cgroup_memory m = mem(ctx, cg);
	th_check(m.usage_bytes >= 48 * MIB, "grow: the hog got its 48 MiB (usage %llu MiB)",
		 (unsigned long long)(m.usage_bytes / MIB));
	th_check(th_alive(hog), "grow: the hog lives");
	th_check(m.limit_bytes == 96 * MIB, "grow: the limit is 96 MiB");
	th_check(m.oom_kill == 0, "grow: the kernel killed nothing");
	oomkit_unwatch(ctx, w);
	cleanup(ctx, cg);
}

static bool kernel_killed(oomkit_ctx *ctx, void *cg)
{
	return mem(ctx, cg).oom_kill >= 1;
}

static void scenario_delay(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/delay", PARENT);
	struct rec r = {.verdict = OOMKIT_WAIT};
	oomkit_watch *w;
	th_check(oomkit_cgroup_create(ctx, cg, 32 * MIB) >= 0, "delay: created %s with a 32 MiB limit", cg);
	th_check(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w) == 0 && oomkit_take_over(ctx, w, 300) == 0,
		 "delay: watching with a 300 ms delay");
	pid_t hog = spawn(ctx, cg, 64);
	th_check(run_until(ctx, saw_oom, &r, 30000), "delay: the OOM reached the handler, which waits");
	th_check(run_until(ctx, kernel_killed, cg, 30000), "delay: after the delay the kernel killed");
	th_check(th_sigkilled(th_wait_exit(hog, 10000)), "delay: the hog died of SIGKILL");
	uint64_t end = th_now_ms() + 5000;
	while (!mem(ctx, cg).oom_kill_disable && th_now_ms() < end)
		oomkit_dispatch(ctx, 20);
	struct oomkit_cgroup_memory m = mem(ctx, cg);
	th_check(m.oom_kill_disable,
		 "delay: the kernel killer is held off again for the next OOM (under_oom %d, usage %llu MiB)",
		 m.under_oom, (unsigned long long)(m.usage_bytes / MIB));
	oomkit_unwatch(ctx, w);
	cleanup(ctx, cg);
}

static void scenario_handler_killed(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/orphan", PARENT);
	int p[2];
	th_check(oomkit_cgroup_create(ctx, cg, 32 * MIB) >= 0, "handler killed: created %s", cg);
	if (pipe(p) < 0)
		return;
	pid_t handler_pid = fork();
	if (handler_pid == 0) {
		oomkit_ctx *c = ctx_new(true);
		oomkit_watch *w;
		struct rec r = {.verdict = OOMKIT_WAIT};
		if (oomkit_watch_oom(c, cg, 0, handler, &r, &w) < 0 || oomkit_take_over(c, w, 60000) < 0)
			_exit(1);
		(void)!write(p[1], "R", 1);
		while (!r.oom)
			oomkit_dispatch(c, -1);
		(void)!write(p[1], "O", 1);
		for (;;)
			oomkit_dispatch(c, -1);
	}
	char ch = 0;
	th_check(read(p[0], &ch, 1) == 1 && ch == 'R', "handler killed: the handler holds the cgroup");
	pid_t hog = spawn(ctx, cg, 64);
	th_check(read(p[0], &ch, 1) == 1 && ch == 'O', "handler killed: the handler saw the OOM");
	uint64_t t0 = th_now_ms();
	kill(handler_pid, SIGKILL);
	th_wait_exit(handler_pid, 5000);
	th_check(th_sigkilled(th_wait_exit(hog, 30000)),
		 "handler killed: the guardian let the kernel kill the hog");
	th_check(th_now_ms() - t0 < 60000, "handler killed: long before the 60 s delay (%llu ms)",
		 (unsigned long long)(th_now_ms() - t0));
	th_check(!mem(ctx, cg).oom_kill_disable, "handler killed: the kernel killer is back");
	close(p[0]);
	close(p[1]);
	cleanup(ctx, cg);
}

/* A whole job killed at once: cgroup.kill on v2, the freezer on v1. */
static void scenario_kill_cgroup(oomkit_ctx *ctx)
{
	char cg[128], a[160], b[160];
	pid_t pids[6];
	snprintf(cg, sizeof(cg), "%s/job", PARENT);
	/* Processes only in leaves: v2 allows none beside child cgroups. */
	snprintf(a, sizeof(a), "%s/job/a", PARENT);
	snprintf(b, sizeof(b), "%s/job/b", PARENT);
	th_check(oomkit_cgroup_create(ctx, a, 0) >= 0 && oomkit_cgroup_create(ctx, b, 0) >= 0 &&
		     oomkit_set_limit(ctx, cg, 64 * MIB) == 0,
		 "kill job: created %s with two child cgroups", cg);
	for (int i = 0; i < 6; i++)
		pids[i] = spawn(ctx, i % 2 ? a : b, 1);
	uint64_t end = th_now_ms() + 5000;
	pid_t seen[16];
	/* Each child joins its cgroup itself after fork: wait until all six have. */
	while (oomkit_cgroup_pids(ctx, cg, true, seen, 16) != 6 && th_now_ms() < end)
		usleep(1000);
	int n = oomkit_kill_cgroup(ctx, cg, 5000);
	th_check(n == 6, "kill job: %d processes signalled", n);
	bool all = true;
	for (int i = 0; i < 6; i++)
		all = th_sigkilled(th_wait_exit(pids[i], 5000)) && all;
	th_check(all, "kill job: every process died of SIGKILL");
	th_check(oomkit_cgroup_pids(ctx, cg, true, NULL, 0) == 0,
		 "kill job: the cgroup and its child are empty");
	cleanup(ctx, a);
	cleanup(ctx, b);
	cleanup(ctx, cg);
}

static bool saw_gone(oomkit_ctx *ctx, void *p)
{
	(void)ctx;
	return ((struct rec *)p)->gone > 0;
}

static void scenario_gone(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/gone", PARENT);
	struct rec r = {0};
	oomkit_watch *w;
	th_check(oomkit_cgroup_create(ctx, cg, 32 * MIB) >= 0, "gone: created %s", cg);
	th_check(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w) == 0 && oomkit_take_over(ctx, w, 1000) == 0,
		 "gone: watching it");
	th_check(oomkit_cgroup_remove(ctx, cg) == 0, "gone: removed it");
	th_check(run_until(ctx, saw_gone, &r, 5000), "gone: GONE was delivered");
}

static bool saw_pressure(oomkit_ctx *ctx, void *p)
{
	(void)ctx;
	return ((struct rec *)p)->pressure > 0;
}

static void scenario_pressure(oomkit_ctx *ctx)
{
	char cg[128];
	snprintf(cg, sizeof(cg), "%s/pressure", PARENT);
	struct rec r = {.verdict = OOMKIT_WAIT}, ro = {.verdict = OOMKIT_WAIT};
	oomkit_watch *w;
	th_check(oomkit_cgroup_create(ctx, cg, 32 * MIB) >= 0, "pressure: created %s", cg);
	int rp = oomkit_watch_pressure(ctx, cg, OOMKIT_PRESSURE_LOW, 0, handler, &r, NULL);
	th_check(rp == 0, "pressure: watching pressure (%s)", rp ? strerror(-rp) : "ok");
	/* Held at the limit, the hog stalls on reclaim: pressure, not a kill. */
	th_check(oomkit_watch_oom(ctx, cg, 0, handler, &ro, &w) == 0 && oomkit_take_over(ctx, w, 20000) == 0,
		 "pressure: holding the kernel killer off");
	pid_t hog = spawn(ctx, cg, 64);
	th_check(run_until(ctx, saw_pressure, &r, 20000), "pressure: a pressure event arrived");
	kill(hog, SIGKILL);
	th_wait_exit(hog, 5000);
	oomkit_unwatch(ctx, w);
	cleanup(ctx, cg);
}

/* ------------------------------------------------------- whole machine */

static uint64_t vmstat_oom_kill(void)
{
	uint64_t v;
	return th_read_key("/proc/vmstat", "oom_kill", &v) < 0 ? UINT64_MAX : v;
}

static bool has_16_mib(oomkit_ctx *ctx, void *cg)
{
	return mem(ctx, cg).usage_bytes >= 16 * MIB;
}

struct machine {
	const char *low_job;
	int handled;
	int killed;
};

/* The machine's handler: kill in the lowest-priority job, never elsewhere. */
static enum oomkit_verdict machine_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct machine *m = userdata;
	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	m->handled++;
	int n = oomkit_kill_cgroup(ctx, m->low_job, 5000);
	if (n > 0)
		m->killed += n;
	return n > 0 ? OOMKIT_RESOLVED : OOMKIT_KERNEL;
}

static bool machine_handled(oomkit_ctx *ctx, void *p)
{
	(void)ctx;
	return ((struct machine *)p)->killed > 0;
}

static void scenario_system(oomkit_ctx *ctx, bool with_handler)
{
	const char *machine = "machine", *low = "machine/batch", *high = "machine/web";
	struct oomkit_system_memory sys = {0};
	const char *what = with_handler ? "system" : "system, no handler";
	int rs = oomkit_system_memory(ctx, &sys);
	th_check(rs == 0, "%s: MemTotal %llu MiB, MemAvailable %llu MiB", what,
		 (unsigned long long)(sys.total_bytes / MIB),
		 (unsigned long long)(sys.available_bytes / MIB));
	/* The machine cgroup holds every job, sized to what is available less a
	 * reserve for the handler: its limit is reached before RAM runs out. */
	uint64_t limit = sys.available_bytes - 48 * MIB;
	th_check(oomkit_cgroup_create(ctx, machine, limit) >= 0 && oomkit_cgroup_create(ctx, low, 0) >= 0 &&
		     oomkit_cgroup_create(ctx, high, 0) >= 0,
		 "%s: machine cgroup with a %llu MiB limit, jobs web and batch", what,
		 (unsigned long long)(limit / MIB));
	pid_t web = spawn(ctx, high, 16);
	/* The job that must live holds its memory before the batch hog starts. */
	th_check(run_until(ctx, has_16_mib, (void *)high, 30000), "%s: the web job holds its 16 MiB", what);
	struct machine m = {.low_job = low};
	oomkit_watch *w = NULL;
	if (with_handler)
		th_check(oomkit_watch_oom(ctx, machine, 0, machine_handler, &m, &w) == 0 &&
			     oomkit_take_over(ctx, w, 5000) == 0,
			 "%s: the handler holds the machine cgroup", what);
	uint64_t kills0 = vmstat_oom_kill();
	/* More than the whole machine: only the limits stop it. */
	pid_t hog = spawn(ctx, low, (unsigned)(sys.total_bytes / MIB));
	if (with_handler) {
		th_check(run_until(ctx, machine_handled, &m, 60000),
			 "%s: the handler killed in the batch job", what);
		th_check(th_sigkilled(th_wait_exit(hog, 20000)), "%s: the batch hog died of SIGKILL", what);
		th_check(vmstat_oom_kill() == kills0, "%s: the kernel OOM killer never fired (oom_kill %llu)",
			 what, (unsigned long long)vmstat_oom_kill());
		th_check(th_alive(web), "%s: the web job lives", what);
		pid_t g = oomkit_guardian_pid(ctx);
		th_check(g > 0 && th_alive(g), "%s: the guardian lives", what);
		oomkit_unwatch(ctx, w);
	} else {
		th_check(th_sigkilled(th_wait_exit(hog, 60000)), "%s: the kernel killed the hog", what);
		th_check(vmstat_oom_kill() > kills0, "%s: it was the kernel OOM killer (oom_kill %llu)", what,
			 (unsigned long long)vmstat_oom_kill());
	}
	kill(web, SIGKILL);
	th_wait_exit(web, 5000);
	cleanup(ctx, low);
	cleanup(ctx, high);
	cleanup(ctx, machine);
}

struct headroom {
	pid_t hog;
	uint64_t hog_start;
	int kill_result;
	bool fired;
};

static enum oomkit_verdict headroom_handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct headroom *h = userdata;
	if (ev->kind != OOMKIT_EVENT_THRESHOLD || !ev->rising || h->fired)
		return OOMKIT_RESOLVED;
	h->fired = true;
	h->kill_result = oomkit_kill(ctx, h->hog, h->hog_start, 5000);
	return OOMKIT_RESOLVED;
}

static bool headroom_fired(oomkit_ctx *ctx, void *p)
{
	(void)ctx;
	return ((struct headroom *)p)->fired;
}

/* v1: the machine's headroom as a usage threshold on the root memcg, with no
 * machine cgroup at all: the handler acts before RAM runs out. */
static void scenario_system_headroom(oomkit_ctx *ctx)
{
	struct oomkit_system_memory sys = {0};
	struct oomkit_cgroup_memory root = {0};
	struct headroom h = {0};
	if (oomkit_backend(ctx) != OOMKIT_BACKEND_V1) {
		printf("note: headroom: v2 has no usage thresholds; the machine cgroup scenario covers v2\n");
		return;
	}
	int r1 = oomkit_system_memory(ctx, &sys), r2 = oomkit_cgroup_memory(ctx, "", &root);
	th_check(r1 == 0 && r2 == 0, "headroom: root memcg usage %llu MiB, MemAvailable %llu MiB",
		 (unsigned long long)(root.usage_bytes / MIB),
		 (unsigned long long)(sys.available_bytes / MIB));
	uint64_t threshold = root.usage_bytes + sys.available_bytes - 64 * MIB;
	oomkit_watch *w;
	th_check(oomkit_watch_threshold(ctx, "", threshold, 0, headroom_handler, &h, &w) == 0,
		 "headroom: threshold at %llu MiB of root usage", (unsigned long long)(threshold / MIB));
	uint64_t kills0 = vmstat_oom_kill();
	struct th_spawn how = {.reset_oom_score_adj = true};
	pid_t pid = th_spawn_hog(&how, hog_path, (unsigned)(sys.total_bytes / MIB), 1024, 0, NULL);
	h.hog = pid;
	h.hog_start = start_time(ctx, pid);
	th_check(run_until(ctx, headroom_fired, &h, 60000), "headroom: the threshold fired");
	th_check(h.kill_result == 0, "headroom: the handler killed the hog (%d)", h.kill_result);
	th_check(th_sigkilled(th_wait_exit(pid, 20000)), "headroom: the hog died of SIGKILL");
	th_check(vmstat_oom_kill() == kills0, "headroom: the kernel OOM killer never fired");
	oomkit_unwatch(ctx, w);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "memcg";
	hog_path = getenv("OOMKIT_HOG");
	if (getenv("OOMKIT_VM_PARENT"))
		parent = getenv("OOMKIT_VM_PARENT");
	if (!hog_path || access(hog_path, X_OK) != 0) {
		printf("FAIL: OOMKIT_HOG does not name the hog\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	oomkit_ctx *ctx = ctx_new(true);
	printf("backend: cgroup %s at %s\n", oomkit_backend(ctx) == OOMKIT_BACKEND_V2 ? "v2" : "v1",
	       oomkit_memory_root(ctx));
	if (strcmp(which, "memcg") == 0) {
		th_check(oomkit_cgroup_create(ctx, PARENT, 512 * MIB) >= 0, "created %s", PARENT);
		scenario_kill(ctx);
		scenario_grow(ctx);
		scenario_delay(ctx);
		scenario_handler_killed(ctx);
		scenario_kill_cgroup(ctx);
		scenario_gone(ctx);
		scenario_pressure(ctx);
		cleanup(ctx, PARENT);
	} else {
		/* Only in a guest: these scenarios fill the machine's memory. */
		if (!getenv("OOMKIT_VM")) {
			printf("FAIL: the system scenarios run only in the qemu guest (OOMKIT_VM=1)\n");
			return 1;
		}
		scenario_system(ctx, true);
		scenario_system(ctx, false);
		scenario_system_headroom(ctx);
	}
	oomkit_free(ctx);
	printf("%s: %d failed\n", which, th_failures());
	return th_failures() ? 1 : 0;
}
