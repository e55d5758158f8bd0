/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.c - benchmark 7: a job's OOM handled by oomkitd with 10, 100 and
 * 1000 jobs (the time to a decision should not grow with the
 * jobs), and the same OOM resolved by the kernel OOM killer.  Three daemons
 * run at once, each with its own machine memcg of N jobs of 32 MiB; a hog
 * wanting 64 MiB is started in the last job of one of them (or in a plain
 * 32 MiB memcg for the kernel), one OOM at a time, the four sides in turn,
 * each round starting with the next side so that none always follows the
 * same one.
 *
 * Measured, per OOM: from the daemon's report (its own clock, from reading
 * the kernel's event) the time to the decision and to the job leaving OOM
 * (memory freed); and by this observer for all four sides, from the hog's
 * last touch to its exit and to the job's usage back under half its limit.
 * An oomkitd side where the kernel's killer fired instead is a failure.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"
#include "oomkitd.h"

#define JOB_LIMIT_MIB 32
#define HOG_MIB 64
#define RUN_TIMEOUT_MS 20000
#define REPORT_TIMEOUT_MS 10000
#define SIDES 4

static const unsigned jobs_of[SIDES - 1] = {10, 100, 1000};

struct side {
	char name[16]; /* "oomkitd@10", "kernel" */
	struct bench_daemon d;
	const char *cg; /* where the hog runs */
	unsigned last_report;
	double decision_ms; /* its last OOM's */
};

static struct side sides[SIDES];
static char tmpdir[64];
static const char *bench_name = "daemon"; /* the samples' bench: "daemon" or "rules" */
static unsigned job_limit_mib = JOB_LIMIT_MIB;

struct outcome {
	uint64_t exit_ns, resolved_ns;
	double decision_ms, freed_ms; /* from the report; < 0: none */
};

/* The report id in "oom-00000012-<job>.json", or 0 for another file. */
static unsigned report_id(const char *name, const char *job)
{
	size_t n = strlen(name), j = strlen(job);

	if (n != 4 + 8 + 1 + j + 5 || strncmp(name, "oom-", 4) != 0 || name[12] != '-' ||
	    strncmp(name + 13, job, j) != 0 || strcmp(name + n - 5, ".json") != 0)
		return 0;
	return (unsigned)strtoul(name + 4, NULL, 10);
}

/* The highest report id for job in dir, and its file in path. */
static unsigned newest_report(const char *dir, const char *job, char *path, size_t len)
{
	unsigned best = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		unsigned id = report_id(e->d_name, job);
		if (id > best) {
			best = id;
			snprintf(path, len, "%s/%s", dir, e->d_name);
		}
	}
	if (d)
		closedir(d);
	return best;
}

/* The number after "key": within the report's timings, -1 for null or none. */
static double timing(const char *text, const char *key)
{
	char want[32];
	const char *t = strstr(text, "\"timings_ms\"");

	snprintf(want, sizeof(want), "\"%s\"", key);
	const char *k = t ? strstr(t, want) : NULL;
	const char *colon = k ? strchr(k, ':') : NULL;
	if (!colon)
		return -1;
	char *end;
	double v = strtod(colon + 1, &end);
	return end == colon + 1 ? -1 : v;
}

/* The last len-1 bytes of the file (the timings end a report, after the
 * jobs a thousand-job daemon lists), NUL-terminated; their length or -1. */
static ssize_t read_tail(const char *path, char *buf, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		off_t from = st.st_size > (off_t)len - 1 ? st.st_size - ((off_t)len - 1) : 0;
		n = pread(fd, buf, len - 1, from);
	}
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* Waits for the side's next report to be finished (its timings written)
 * and reads them into o. */
static int read_report(struct side *s, struct outcome *o)
{
	char path[512], text[4096], last[16];

	snprintf(last, sizeof(last), "j%u", s->d.jobs - 1);
	for (int waited = 0; waited < REPORT_TIMEOUT_MS; waited += 5) {
		unsigned id = newest_report(s->d.reports, last, path, sizeof(path));
		if (id > s->last_report && read_tail(path, text, sizeof(text)) > 0 &&
		    strstr(text, "\"timings_ms\"")) {
			s->last_report = id;
			o->decision_ms = timing(text, "decision");
			o->freed_ms = timing(text, "freed");
			return 0;
		}
		bl_sleep_us(5000);
	}
	bl_fail("daemon: %s wrote no report of its OOM in %d ms", s->name, REPORT_TIMEOUT_MS);
	return -1;
}

/* Waits for the hog to exit, then for the usage to fall under half the limit. */
static int wait_gone(pid_t pid, const char *cg, struct outcome *o)
{
	char path[512];
	int pidfd = bl_pidfd_open(pid);
	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", bl_abs(cg));
	int usage_fd = open(path, O_RDONLY | O_CLOEXEC);
	int ready = pidfd >= 0 && usage_fd >= 0 ? bl_wait_fd(pidfd, RUN_TIMEOUT_MS) : -1;

	o->exit_ns = ready > 0 ? bl_now_ns() : 0;
	for (uint64_t end = o->exit_ns + 5000000000ull; o->exit_ns && bl_now_ns() < end; bl_sleep_us(20))
		if (bl_pread_u64(usage_fd) <= job_limit_mib * BL_MIB / 2) {
			o->resolved_ns = bl_now_ns();
			break;
		}
	if (pidfd >= 0)
		close(pidfd);
	if (usage_fd >= 0)
		close(usage_fd);
	return o->resolved_ns ? 0 : -1;
}

static void sample_ms(const char *series, const char *side, double ms)
{
	char key[64];

	snprintf(key, sizeof(key), "%s-%s", series, side);
	bl_sample(bench_name, key, ms);
}

/* One OOM on side s; 0, or -1 after a bl_fail(). */
static int one_run(struct side *s, const char *stamp_path, struct bl_hog_stamp *hs)
{
	struct outcome o = {.decision_ms = -1, .freed_ms = -1};
	uint64_t kills = th_cg_key(BL_MEMORY_ROOT, s->cg, "memory.oom_control", "oom_kill");
	bool daemon = s->d.pid > 0;

	hs->pages = 0;
	hs->last_touch_ns = 0;
	pid_t pid = bl_spawn_hog(s->cg, HOG_MIB, 1024, 0, stamp_path);
	int r = pid > 0 ? wait_gone(pid, s->cg, &o) : -1;
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (r < 0 || !hs->last_touch_ns) {
		bl_fail("%s: the OOM of %s (%s) was not resolved", bench_name, s->cg, s->name);
		return -1;
	}
	if (daemon && th_cg_key(BL_MEMORY_ROOT, s->cg, "memory.oom_control", "oom_kill") != kills) {
		bl_fail("%s: the kernel killed in %s, not oomkitd", bench_name, s->cg);
		return -1;
	}
	if (daemon && read_report(s, &o) < 0)
		return -1;
	s->decision_ms = o.decision_ms;
	sample_ms("exit", s->name, (double)(o.exit_ns - hs->last_touch_ns) / 1e6);
	sample_ms("resolved", s->name, (double)(o.resolved_ns - hs->last_touch_ns) / 1e6);
	if (o.decision_ms >= 0)
		sample_ms("decision", s->name, o.decision_ms);
	if (o.freed_ms >= 0)
		sample_ms("freed", s->name, o.freed_ms);
	return 0;
}

static int setup(void)
{
	for (unsigned i = 0; i < SIDES - 1; i++) {
		struct side *s = &sides[i];
		snprintf(s->name, sizeof(s->name), "oomkitd@%u", jobs_of[i]);
		if (bench_daemon_start(&s->d, tmpdir, bl_child("d%u", jobs_of[i]), jobs_of[i],
				       JOB_LIMIT_MIB) < 0)
			return -1;
		s->cg = bl_child("d%u/j%u", jobs_of[i], jobs_of[i] - 1);
	}
	struct side *k = &sides[SIDES - 1];
	snprintf(k->name, sizeof(k->name), "kernel");
	k->cg = bl_child("kernel");
	return bl_mkcg(k->cg, JOB_LIMIT_MIB * BL_MIB);
}

int bench_daemon(int argc, char **argv)
{
	unsigned rounds = bench_opt(argc, argv, "rounds", 15);
	char stamp_path[64];
	int failed = 0;

	if (!bl_oomkitd()) {
		bl_note("daemon: oomkitd is not built; nothing measured");
		return 0;
	}
	if (bl_init("daemon", 512 * BL_MIB) < 0)
		return 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/oomkit-bench-daemon-XXXXXX");
	struct bl_hog_stamp *hs = bl_stamp_new(stamp_path, sizeof(stamp_path));
	if (!hs || !mkdtemp(tmpdir) || setup() < 0) {
		bl_fail("daemon: setup failed");
		failed = 1;
		goto out;
	}
	bl_note("daemon: %u rounds; jobs of %d MiB, a hog wanting %d MiB in the last job; decision and freed "
		"from the daemon's report (from its read of the event), exit and resolved (usage under half "
		"the limit) from the hog's last touch",
		rounds, JOB_LIMIT_MIB, HOG_MIB);
	for (unsigned r = 0; r < rounds && failed < 5; r++)
		for (unsigned i = 0; i < SIDES; i++)
			failed += one_run(&sides[(r + i) % SIDES], stamp_path, hs) < 0;
out:
	if (hs)
		unlink(stamp_path);
	bl_cleanup();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (tmpdir[0] && system(cmd) != 0)
		fprintf(stderr, "oomkit-bench: could not remove %s\n", tmpdir);
	return failed ? 1 : 0;
}

/* ------------------------------------------------------------ rules */

/*
 * Benchmark 9: what protect/prefer/avoid cost a decision.  Two daemons of
 * one job each, the same N idle processes in each job beside the hog; one
 * has rules that read every process's command line and executable (and
 * test its uid) and match none, so both decide the same; the other has
 * none.  One OOM on each per round, the first side alternating; per round
 * the ratio of the two decisions (each from its own report) is a sample.
 */
#define RULES_PROCS 100

static int idle_procs(const char *cg, unsigned n)
{
	char *const argv[] = {"/bin/sleep", "3600", NULL};

	for (unsigned i = 0; i < n; i++) {
		pid_t pid = bl_spawn(cg, argv, -1);
		if (pid <= 0)
			return -1;
		bl_track(pid); /* killed at the end, so that the memcg can go */
	}
	return 0;
}

int bench_rules(int argc, char **argv)
{
	static const char rules[] = "prefer = cmdline:*--oomkit-bench-no-such-flag*\n"
				    "avoid = exe:/nonexistent/oomkit-bench, uid:4242\n";
	unsigned rounds = bench_opt(argc, argv, "rounds", 15);
	static char dir[2][160], cg[2][512];
	char stamp_path[64];
	int failed = 0;

	bench_name = "rules";
	job_limit_mib = 2 * JOB_LIMIT_MIB; /* the idle processes hold about 16 MiB */
	if (!bl_oomkitd()) {
		bl_note("rules: oomkitd is not built; nothing measured");
		return 0;
	}
	if (bl_init("rules", 512 * BL_MIB) < 0)
		return 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/oomkit-bench-rules-XXXXXX");
	struct bl_hog_stamp *hs = bl_stamp_new(stamp_path, sizeof(stamp_path));
	if (!hs || !mkdtemp(tmpdir)) {
		failed = 1;
		goto out;
	}
	for (unsigned i = 0; i < 2; i++) {
		struct side *s = &sides[i];
		snprintf(s->name, sizeof(s->name), "%s", i ? "none" : "rules");
		snprintf(dir[i], sizeof(dir[i]), "%s/%s", tmpdir, i ? "none" : "rules");
		snprintf(cg[i], sizeof(cg[i]), "%s", bl_child("%s/j0", i ? "none" : "rules"));
		s->cg = cg[i];
		if (mkdir(dir[i], 0700) < 0 ||
		    bench_daemon_start_with(&s->d, dir[i], bl_child("%s", i ? "none" : "rules"), 1,
					    job_limit_mib, i ? NULL : rules) < 0 ||
		    idle_procs(s->cg, RULES_PROCS) < 0) {
			failed = 1;
			goto out;
		}
	}
	bl_note("rules: %u rounds; a job of %d MiB holding %d idle processes and a hog; decision from each "
		"daemon's report; rules: a cmdline glob, an exe path and a uid, matching none",
		rounds, job_limit_mib, RULES_PROCS);
	for (unsigned r = 0; r < rounds && failed < 5; r++) {
		bool ok = true;
		for (unsigned i = 0; i < 2; i++)
			ok &= one_run(&sides[(r + i) % 2], stamp_path, hs) == 0;
		failed += !ok;
		if (ok && sides[0].decision_ms > 0 && sides[1].decision_ms > 0)
			bl_sample("rules", "ratio", sides[0].decision_ms / sides[1].decision_ms);
	}
out:
	if (failed == 1 && rounds)
		bl_fail("rules: setup failed");
	if (hs)
		unlink(stamp_path);
	bl_cleanup();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (failed) /* the daemons' logs and configurations, for whoever reads why */
		bl_note("rules: kept %s", tmpdir);
	else if (tmpdir[0] && system(cmd) != 0)
		fprintf(stderr, "oomkit-bench: could not remove %s\n", tmpdir);
	return failed ? 1 : 0;
}

/* ------------------------------------------------------------ churn */

/*
 * Benchmark 10: a job's owner fills its job with empty cgroups.
 * Three daemons of one job each, the job holding 0, 1 000 and 10 000
 * empty sub-cgroups (each costs the job about 10 KiB of kernel memory, so
 * its limit has room for them); a hog in the job outgrows it, one OOM per
 * side per round, the first side turning.  Per OOM, from the daemon's
 * report the time to its decision, and from the hog's last touch to its
 * exit, and to the daemon's read of the kernel's event (before it, the
 * kernel reclaims through every memcg of the job, and that grows with them
 * too); a side whose OOM the kernel's killer resolved is a failure.  The
 * daemons' delay is 10 s, so that a slow decision is measured, not cut
 * short by the kernel.
 */
#define CHURN_SIDES 3
#define CHURN_BASE_MIB 48

static const unsigned churn_of[CHURN_SIDES] = {0, 1000, 10000};

static int churn_fill(const char *cg, unsigned n)
{
	char path[1024];

	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/c%u", bl_abs(cg), i);
		if (mkdir(path, 0755) < 0)
			return -1;
	}
	return 0;
}

/* The job's limit: room for its empty cgroups' kernel memory and the hog. */
static unsigned churn_limit_mib(unsigned n)
{
	return CHURN_BASE_MIB + (unsigned)((uint64_t)n * 16 / 1024);
}

/* The time the daemon read the kernel's OOM event (the library's state in
 * its newest report, CLOCK_MONOTONIC like the hog's stamp), or 0. */
static uint64_t churn_event_ns(struct side *s)
{
	static char text[65536];
	char path[512], last[16];
	ssize_t n = -1;

	snprintf(last, sizeof(last), "j%u", s->d.jobs - 1);
	if (newest_report(s->d.reports, last, path, sizeof(path)) == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	const char *t = strstr(text, "\"time_ns\":");
	return t ? strtoull(t + strlen("\"time_ns\":"), NULL, 10) : 0;
}

static int churn_run(struct side *s, unsigned n, const char *stamp_path, struct bl_hog_stamp *hs)
{
	struct outcome o = {.decision_ms = -1};
	uint64_t kills = th_cg_key(BL_MEMORY_ROOT, s->cg, "memory.oom_control", "oom_kill");
	char key[64];

	hs->pages = 0;
	hs->last_touch_ns = 0;
	pid_t pid = bl_spawn_hog(s->cg, churn_limit_mib(n) + 64, 1024, 0, stamp_path);
	int pidfd = pid > 0 ? bl_pidfd_open(pid) : -1;
	int ready = pidfd >= 0 ? bl_wait_fd(pidfd, RUN_TIMEOUT_MS) : -1;
	uint64_t exit_ns = bl_now_ns();

	if (pidfd >= 0)
		close(pidfd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (ready <= 0 || !hs->last_touch_ns) {
		bl_fail("churn: the OOM of %s (%s) was not resolved", s->cg, s->name);
		return -1;
	}
	if (th_cg_key(BL_MEMORY_ROOT, s->cg, "memory.oom_control", "oom_kill") != kills) {
		bl_fail("churn: the kernel killed in %s, not oomkitd", s->cg);
		return -1;
	}
	if (read_report(s, &o) < 0)
		return -1;
	s->decision_ms = o.decision_ms;
	/* Before the event, the kernel's own reclaim goes through every memcg of the job. */
	uint64_t event_ns = churn_event_ns(s);
	snprintf(key, sizeof(key), "event-%s", s->name);
	if (event_ns > hs->last_touch_ns)
		bl_sample("churn", key, (double)(event_ns - hs->last_touch_ns) / 1e6);
	snprintf(key, sizeof(key), "exit-%s", s->name);
	bl_sample("churn", key, (double)(exit_ns - hs->last_touch_ns) / 1e6);
	snprintf(key, sizeof(key), "decision-%s", s->name);
	if (o.decision_ms >= 0)
		bl_sample("churn", key, o.decision_ms);
	return 0;
}

int bench_churn(int argc, char **argv)
{
	unsigned rounds = bench_opt(argc, argv, "rounds", 10);
	static char dir[CHURN_SIDES][160], cg[CHURN_SIDES][512];
	char stamp_path[64];
	int failed = 0;

	if (!bl_oomkitd()) {
		bl_note("churn: oomkitd is not built; nothing measured");
		return 0;
	}
	if (bl_init("churn", 768 * BL_MIB) < 0)
		return 1;
	bench_daemon_delay = "10s";
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/oomkit-bench-churn-XXXXXX");
	struct bl_hog_stamp *hs = bl_stamp_new(stamp_path, sizeof(stamp_path));
	if (!hs || !mkdtemp(tmpdir)) {
		failed = 1;
		goto out;
	}
	for (unsigned i = 0; i < CHURN_SIDES; i++) {
		struct side *s = &sides[i];
		snprintf(s->name, sizeof(s->name), "oomkitd@%u", churn_of[i]);
		snprintf(dir[i], sizeof(dir[i]), "%s/c%u", tmpdir, churn_of[i]);
		snprintf(cg[i], sizeof(cg[i]), "%s", bl_child("c%u/j0", churn_of[i]));
		s->cg = cg[i];
		if (mkdir(dir[i], 0700) < 0 ||
		    bench_daemon_start(&s->d, dir[i], bl_child("c%u", churn_of[i]), 1,
				       churn_limit_mib(churn_of[i])) < 0 ||
		    churn_fill(s->cg, churn_of[i]) < 0) {
			failed = 1;
			goto out;
		}
	}
	bl_note(
	    "churn: %u rounds; a job of %d MiB (and 16 KiB per empty sub-cgroup) holding 0, 1000 or 10000 "
	    "empty sub-cgroups and a hog outgrowing it; decision from each daemon's report, exit from the "
	    "hog's last touch; delay 10 s",
	    rounds, CHURN_BASE_MIB);
	for (unsigned r = 0; r < rounds && failed < 5; r++) {
		bool ok = true;
		for (unsigned i = 0; i < CHURN_SIDES; i++) {
			unsigned k = (r + i) % CHURN_SIDES;
			ok &= churn_run(&sides[k], churn_of[k], stamp_path, hs) == 0;
		}
		failed += !ok;
	}
out:
	if (failed == 1 && rounds)
		bl_fail("churn: setup failed");
	if (hs)
		unlink(stamp_path);
	bl_cleanup();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (failed)
		bl_note("churn: kept %s", tmpdir);
	else if (tmpdir[0] && system(cmd) != 0)
		fprintf(stderr, "oomkit-bench: could not remove %s\n", tmpdir);
	return failed ? 1 : 0;
}
