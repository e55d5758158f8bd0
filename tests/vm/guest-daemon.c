/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guest-daemon.c - oomkitd and oomkit in the qemu guest: the daemon itself
 * (fork/exec of the real binaries, copied into the guest with vm.sh --with)
 * on cgroup v2 and on cgroup v1, configured exactly as on a v1 host; only the
 * machine's path differs (v2 /sys/fs/cgroup/..., v1 /sys/fs/cgroup/memory/...).
 *
 *   guest-daemon memcg    a machine of 160 MiB with jobs web (900), batch (100)
 *                         and player (500) that runs out while no job is at its
 *                         own limit: oomkitd kills batch's process, web and
 *                         player live, the report names batch and kill-lowest,
 *                         the kernel killed nothing, `oomkit --json status`
 *                         counts one machine OOM; then a job OOM with policy
 *                         grow raises that job's limit to its limit_max; the
 *                         owner of a delegated job organises it but cannot
 *                         write its limits; a job without a limit that SIGHUP
 *                         gives one is held and handled like the others;
 *                         oomkitd --dry-run reports a kernel-resolved OOM once.
 *   guest-daemon system   the machine sized to the guest's RAM less a reserve:
 *                         a batch hog that wants more than the whole RAM is
 *                         killed by oomkitd before the kernel OOM killer fires
 *                         (/proc/vmstat oom_kill unchanged), while the daemon
 *                         and its guardian (mlocked, oom_score_adj -1000) live;
 *                         then oomkitd is stopped, SIGKILLed during an OOM, and
 *                         the kernel resolves it: its guardian gives the
 *                         kernel killer back, nothing stays blocked; oomkitd
 *                         started again adopts the machine and handles the
 *                         next OOM itself.
 *
 * The checks read the kernel's own files (memory.events, memory.oom_control,
 * /proc/vmstat, /proc/PID/status), not liboomkit, so the daemon is judged by
 * something that does not share its code.  Runs only in the guest
 * (OOMKIT_VM=1): it creates cgroups at the top of the hierarchy and fills the
 * machine's memory.  Needs OOMKIT_HOG, OOMKITD and OOMKIT (the command line).
 *
 * Exit 0 when every check passed, 1 otherwise, 77 outside the guest.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json-reader.h"
#include "testhelp.h"

#define MIB ((uint64_t)1 << 20)
#define MACHINE "oomkit-vm-machine"

static bool v2;
static const char *cgroot; /* the memory hierarchy's mount */
static const char *hog_path, *oomkitd_path, *oomkit_path, *victim_path;
static char dir[64]; /* this run's config, socket, log and reports */
static char sock[128], conf[128], logpath[128], reports[128];
static pid_t daemon_pid;

/* ------------------------------------------------------------ files */

/* The value of "key value" (or "key: value") in a file of such lines; def
 * when the file or the key is missing. */
static uint64_t key_u64(const char *path, const char *key, uint64_t def)
{
	uint64_t v;
	return th_read_key(path, key, &v) < 0 ? def : v;
}

static uint64_t vmstat_oom_kill(void)
{
	return key_u64("/proc/vmstat", "oom_kill", UINT64_MAX);
}

/* ------------------------------------------------------------ cgroups */

static const char *cg_file(const char *rel, const char *file)
{
	return th_cg_path(cgroot, rel, file);
}

/* A single-number file; "max" is UINT64_MAX. */
static uint64_t cg_u64(const char *rel, const char *file)
{
	uint64_t v;
	return th_read_u64(cg_file(rel, file), &v) < 0 ? 0 : v;
}

static uint64_t cg_limit(const char *rel)
{
	return cg_u64(rel, v2 ? "memory.max" : "memory.limit_in_bytes");
}

/* Kernel OOM kills counted by the cgroup (v2 memory.events, v1 oom_control). */
static uint64_t cg_oom_kills(const char *rel)
{
	return v2 ? key_u64(cg_file(rel, "memory.events"), "oom_kill", UINT64_MAX)
		  : key_u64(cg_file(rel, "memory.oom_control"), "oom_kill", UINT64_MAX);
}

/* Kernel OOM kills in the machine and its jobs.  v2's memory.events is
 * hierarchical; v1 counts a kill only in the victim's own memcg, so there the
 * machine's children are added up. */
static uint64_t machine_oom_kills(void)
{
	uint64_t sum = cg_oom_kills(MACHINE);
	DIR *d = v2 ? NULL : opendir(cg_file(MACHINE, ""));
	struct dirent *de;
	char rel[300];
	while (d && (de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(rel, sizeof(rel), MACHINE "/%s", de->d_name);
			sum += cg_oom_kills(rel);
		}
	if (d)
		closedir(d);
	return sum;
}

/* Times the cgroup's own limit was reached: v1 memory.failcnt; v2 the
 * memory.events.local max and high counts (high is where the daemon holds it). */
static uint64_t cg_limit_hits(const char *rel)
{
	if (!v2)
		return cg_u64(rel, "memory.failcnt");
	return key_u64(cg_file(rel, "memory.events.local"), "max", 0) +
	       key_u64(cg_file(rel, "memory.events.local"), "high", 0);
}

/* Whether the kernel OOM killer is held off: v1 oom_kill_disable, v2
 * memory.high below memory.max. */
static bool cg_held(const char *rel)
{
	if (!v2)
		return key_u64(cg_file(rel, "memory.oom_control"), "oom_kill_disable", 0) == 1;
	return cg_u64(rel, "memory.high") < cg_limit(rel);
}

/* Under OOM with the kernel killer held off: v1 under_oom; v2 the high
 * counter has moved past since0 (an allocation was throttled at memory.high). */
static bool cg_under_oom(const char *rel, uint64_t since0)
{
	if (!v2)
		return key_u64(cg_file(rel, "memory.oom_control"), "under_oom", 0) == 1;
	return key_u64(cg_file(rel, "memory.events.local"), "high", 0) > since0;
}

/* Kills everything in rel and below, then removes the cgroups, deepest first. */
static bool cg_destroy(const char *rel)
{
	return th_cg_remove_tree(cg_file(rel, ""), 10000) == 0;
}

/* ------------------------------------------------------------ processes */

static uint64_t status_kib(pid_t pid, const char *key)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return key_u64(path, key, 0);
}

static int oom_score_adj(pid_t pid)
{
	char path[64], buf[32];
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	return th_read_file(path, buf, sizeof(buf)) < 0 ? 1 : atoi(buf);
}

/* The memory cgroup of pid, relative to the hierarchy's root ("" for the root). */
static const char *proc_memcg(pid_t pid)
{
	static char buf[2048];
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (th_read_file(path, buf, sizeof(buf)) < 0)
		return "?";
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && (v2 ? strncmp(line, "0::", 3) == 0 : strncmp(c1 + 1, "memory:", 7) == 0))
			return c2[1] == '/' ? c2 + 2 : c2 + 1;
		line = nl ? nl + 1 : NULL;
	}
	return "?";
}

/* A child of parent with the given comm, or 0. */
static pid_t find_child(pid_t parent, const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;
	while (d && !found && (de = readdir(d))) {
		char path[300], buf[512];
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (th_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
		if (!lp || !rp || rp[1] != ' ')
			continue;
		int ppid = 0;
		char st = 0;
		if (sscanf(rp + 2, "%c %d", &st, &ppid) == 2 && ppid == parent && st != 'Z' &&
		    (size_t)(rp - lp - 1) == strlen(comm) && strncmp(lp + 1, comm, strlen(comm)) == 0)
			found = (pid_t)atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* Waits until pid has mib MiB resident; false if it died or timed out. */
static bool wait_rss(pid_t pid, unsigned mib, unsigned timeout_ms)
{
	uint64_t end = th_now_ms() + timeout_ms;
	do {
		if (status_kib(pid, "VmRSS") >= (uint64_t)mib * 1024)
			return true;
		if (!th_alive(pid))
			return false;
		th_sleep_ms(10);
	} while (th_now_ms() < end);
	return false;
}

/* A hog started the way a user starts work in a job: oomkit run --job JOB. */
static pid_t run_in_job(const char *job, unsigned mib)
{
	char m[16];
	snprintf(m, sizeof(m), "%u", mib);
	pid_t pid = fork();
	if (pid == 0) {
		execl(oomkit_path, "oomkit", "--socket", sock, "run", "--job", job, "--", hog_path, m,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* A hog put into a job's cgroup directly, without the daemon's help. */
static pid_t spawn_in_cgroup(const char *rel, unsigned mib)
{
	struct th_spawn how = {.cgroup = cg_file(rel, "")};
	return th_spawn_hog(&how, hog_path, mib, 1024, 0, NULL);
}

/* Runs the command line with args; its stdout into out.  Returns its exit status. */
static int oomkit_cli(char *out, size_t len, const char *a1, const char *a2)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execl(oomkit_path, "oomkit", "--socket", sock, a1, a2, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t k;
	while (n + 1 < len && (k = read(p[0], out + n, len - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(p[0]);
	int st = th_wait_exit(pid, 10000);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ------------------------------------------------------------ the daemon */

struct job {
	const char *name;
	unsigned priority;
	uint64_t limit_mib;	/* 0: max */
	uint64_t limit_max_mib; /* 0: not given */
	const char *policy;	/* NULL: the default chain */
	unsigned owner;		/* 0: not delegated */
	const char *extra;	/* more lines of its section, or NULL */
};

static void write_config(uint64_t machine_limit_mib, const char *delay, const struct job *jobs, size_t n)
{
	FILE *f = fopen(conf, "w");
	if (!f) {
		printf("FAIL: cannot write %s: %s\n", conf, strerror(errno));
		exit(1);
	}
	fprintf(f,
		"[oomkitd]\n"
		"machine = %s/" MACHINE "\n"
		"machine_limit = %" PRIu64 "M\n"
		"policy = report, kill-lowest, kernel\n"
		"delay = %s\n"
		"reserve = 16M\n"
		"report_dir = %s\n"
		"socket = %s\n"
		"metrics = %s/oomkit.prom\n"
		"hook_memory = 16M\n",
		cgroot, machine_limit_mib, delay, reports, sock, dir);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "\n[job %s]\npriority = %u\n", jobs[i].name, jobs[i].priority);
		if (jobs[i].limit_mib)
			fprintf(f, "limit = %" PRIu64 "M\n", jobs[i].limit_mib);
		else
			fprintf(f, "limit = max\n");
		if (jobs[i].limit_max_mib)
			fprintf(f, "limit_max = %" PRIu64 "M\n", jobs[i].limit_max_mib);
		if (jobs[i].policy)
			fprintf(f, "policy = %s\n", jobs[i].policy);
		if (jobs[i].owner)
			fprintf(f, "owner = %u\n", jobs[i].owner);
		if (jobs[i].extra)
			fprintf(f, "%s", jobs[i].extra);
	}
	fclose(f);
}

static void dump_log(void)
{
	char buf[16384];
	if (th_read_file(logpath, buf, sizeof(buf)) > 0)
		printf("--- oomkitd log\n%s--- end of log\n", buf);
}

/* oomkitd --check on the configuration: 0 if it passed. */
static int config_check(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(oomkitd_path, "oomkitd", "--check", "-c", conf, (char *)NULL);
		_exit(127);
	}
	int st = th_wait_exit(pid, 10000);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int log_count(const char *what)
{
	static char buf[65536];
	int n = 0;
	if (th_read_file(logpath, buf, sizeof(buf)) > 0)
		for (char *p = buf; (p = strstr(p, what)); p++)
			n++;
	return n;
}

/* Waits until the daemon's log has said what more than n0 times. */
static bool wait_log(const char *what, int n0, unsigned timeout_ms)
{
	uint64_t end = th_now_ms() + timeout_ms;
	do {
		if (log_count(what) > n0)
			return true;
		th_sleep_ms(10);
	} while (th_now_ms() < end);
	return false;
}

/* Starts oomkitd (with --dry-run if asked), appending to its log, and waits
 * until this one is ready. */
static bool start_daemon_with(const char *option)
{
	int ready0 = log_count("oomkitd ready");
	daemon_pid = fork();
	if (daemon_pid == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		if (option)
			execl(oomkitd_path, "oomkitd", option, "-c", conf, (char *)NULL);
		else
			execl(oomkitd_path, "oomkitd", "-c", conf, (char *)NULL);
		_exit(127);
	}
	uint64_t end = th_now_ms() + 20000;
	while (th_now_ms() < end) {
		if (log_count("oomkitd ready") > ready0 && access(sock, F_OK) == 0)
			return true;
		if (th_wait_exit(daemon_pid, 0) != -1) {
			daemon_pid = 0;
			return false;
		}
		th_sleep_ms(10);
	}
	return false;
}

static bool start_daemon(void)
{
	return start_daemon_with(NULL);
}

/* SIGTERM, then SIGKILL if it lingers; its exit status, -1 if none was running. */
static int stop_daemon(void)
{
	if (daemon_pid <= 0)
		return -1;
	kill(daemon_pid, SIGTERM);
	int st = th_wait_exit(daemon_pid, 10000);
	if (st == -1) {
		kill(daemon_pid, SIGKILL);
		st = th_wait_exit(daemon_pid, 10000);
	}
	daemon_pid = 0;
	return st;
}

/* The newest complete report of a scope ("machine" or a job), parsed; NULL
 * if none within timeout_ms.  A report is finished after its action. */
static struct json *wait_report(const char *scope, unsigned timeout_ms)
{
	static char buf[1 << 18];
	char suffix[64], best[256] = "", path[400];
	uint64_t end = th_now_ms() + timeout_ms;
	snprintf(suffix, sizeof(suffix), "-%s.json", scope);
	do {
		DIR *d = opendir(reports);
		struct dirent *de;
		/* oom-NNNNNNNN-SCOPE.json: the zero-padded id sorts by name. */
		while (d && (de = readdir(d))) {
			size_t n = strlen(de->d_name), k = strlen(suffix);
			if (strncmp(de->d_name, "oom-", 4) == 0 && n > k &&
			    strcmp(de->d_name + n - k, suffix) == 0 && strcmp(de->d_name, best) > 0)
				snprintf(best, sizeof(best), "%s", de->d_name);
		}
		if (d)
			closedir(d);
		snprintf(path, sizeof(path), "%s/%s", reports, best);
		if (best[0] && th_read_file(path, buf, sizeof(buf)) > 0) {
			struct json *j = json_parse(buf);
			if (j && json_get(j, "outcome"))
				return j;
			json_free(j);
		}
		th_sleep_ms(20);
	} while (th_now_ms() < end);
	return NULL;
}

static const char *jstr(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->type == JSON_STRING ? v->str : "";
}

static int64_t jnum(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->type == JSON_NUMBER ? strtoll(v->str, NULL, 10) : -1;
}

static const struct json *jjob(const struct json *status, const char *name)
{
	const struct json *jobs = json_get(status, "jobs");
	for (size_t i = 0; jobs && jobs->type == JSON_ARRAY && i < jobs->n; i++)
		if (strcmp(jstr(jobs->items[i], "name"), name) == 0)
			return jobs->items[i];
	return NULL;
}

/* oomkit --json status, parsed; NULL if it failed or is not JSON. */
static struct json *status(void)
{
	static char out[65536];
	int rc = oomkit_cli(out, sizeof(out), "--json", "status");
	struct json *j = rc == 0 ? json_parse(out) : NULL;
	if (!j)
		printf("note: oomkit --json status exited %d: %s\n", rc, out);
	return j;
}

static void report_timings(const struct json *r)
{
	const struct json *t = json_get(r, "timings_ms");
	const struct json *d = t ? json_get(t, "decision") : NULL, *a = t ? json_get(t, "action") : NULL,
			  *f = t ? json_get(t, "freed") : NULL;
	printf("figure: report %" PRId64 ": event -> decision %s ms, -> action %s ms, -> freed %s ms\n",
	       jnum(r, "id"), d && d->str ? d->str : "?", a && a->str ? a->str : "?",
	       f && f->str ? f->str : "null");
}

/* Kills what is left of the machine and the daemon's reserve and removes them. */
static bool teardown(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		th_wait_exit(daemon_pid, 10000);
		daemon_pid = 0;
	}
	bool ok = cg_destroy(MACHINE);
	ok = cg_destroy(MACHINE "-daemon") && ok;
	ok = cg_destroy(MACHINE "-hooks") && ok;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return ok;
}

/* ------------------------------------------------------------ memcg */

static void check_report(const char *what, const struct json *r, const char *scope, const char *policy,
			 const char *victim_job, pid_t victim)
{
	const struct json *dec = r ? json_get(r, "decision") : NULL;
	th_check(r && dec, "%s: a complete report of the %s OOM in the report directory", what, scope);
	if (!dec)
		return;
	th_check(strcmp(jstr(r, "scope"), strcmp(scope, "machine") == 0 ? "machine" : "job") == 0 &&
		     strcmp(jstr(dec, "policy"), policy) == 0,
		 "%s: the report's decision is %s (scope %s, action %s, policy %s)", what, policy,
		 jstr(r, "scope"), jstr(dec, "action"), jstr(dec, "policy"));
	if (victim_job)
		th_check(strcmp(jstr(dec, "victim_job"), victim_job) == 0 &&
			     jnum(dec, "victim_pid") == victim,
			 "%s: the report names job %s and process %d (victim_job %s, victim_pid %" PRId64 ")",
			 what, victim_job, (int)victim, jstr(dec, "victim_job"), jnum(dec, "victim_pid"));
	printf("note: %s: reason: %s; outcome: %s\n", what, jstr(dec, "reason"), jstr(r, "outcome"));
	report_timings(r);
}

static void machine_oom(void)
{
	const char *jobs[] = {MACHINE "/web", MACHINE "/batch", MACHINE "/player"};
	uint64_t k0 = vmstat_oom_kill(), hits[3];

	for (int i = 0; i < 3; i++)
		hits[i] = cg_limit_hits(jobs[i]);
	/* web 50 + batch 40 + player 70 MiB > 160 MiB, each well within its own limit. */
	pid_t web = run_in_job("web", 50);
	th_check(wait_rss(web, 50, 30000), "machine: web (priority 900) has its 50 MiB");
	pid_t batch = run_in_job("batch", 40);
	th_check(wait_rss(batch, 40, 30000), "machine: batch (priority 100) has its 40 MiB");
	uint64_t t0 = th_now_ms();
	pid_t player = run_in_job("player", 70);
	int st = th_wait_exit(batch, 30000);
	uint64_t t1 = th_now_ms();
	th_check(th_sigkilled(st), "machine: batch's process died of SIGKILL when player grew (status 0x%x)",
		 st);
	th_check(wait_rss(player, 70, 30000), "machine: player then got all of its 70 MiB");
	printf("figure: machine: player started -> batch's process reaped: %" PRIu64 " ms\n", t1 - t0);
	th_check(th_alive(web) && th_alive(player), "machine: web and player live");
	th_check(machine_oom_kills() == 0 && vmstat_oom_kill() == k0,
		 "machine: the kernel killed nothing (oom_kill in the machine %" PRIu64
		 ", vmstat oom_kill %" PRIu64 " -> %" PRIu64 ")",
		 machine_oom_kills(), k0, vmstat_oom_kill());
	bool none = true;
	for (int i = 0; i < 3; i++)
		none = none && cg_limit_hits(jobs[i]) == hits[i];
	th_check(none && cg_limit_hits(MACHINE) > 0,
		 "machine: only the machine's limit was reached, no job's own (machine %" PRIu64 " times)",
		 cg_limit_hits(MACHINE));

	struct json *r = wait_report("machine", 10000);
	check_report("machine", r, "machine", "kill-lowest", "batch", batch);
	json_free(r);

	struct json *s = status();
	const struct json *m = s ? json_get(s, "machine") : NULL, *jb = s ? jjob(s, "batch") : NULL;
	th_check(m && jnum(m, "ooms") == 1 && jnum(m, "kills") == 1,
		 "machine: oomkit --json status parses and counts 1 machine OOM, 1 kill (ooms %" PRId64
		 ", kills %" PRId64 ")",
		 m ? jnum(m, "ooms") : -1, m ? jnum(m, "kills") : -1);
	th_check(jb && jnum(jb, "kills") == 1 && jnum(jb, "ooms") == 0 &&
		     jnum(jjob(s, "web"), "kills") == 0 && jnum(jjob(s, "player"), "kills") == 0,
		 "machine: status charges the kill to batch, no job had an OOM of its own");
	json_free(s);

	kill(web, SIGKILL);
	kill(player, SIGKILL);
	th_wait_exit(web, 10000);
	th_wait_exit(player, 10000);
}

static void job_grow(void)
{
	const char *rel = MACHINE "/build";
	uint64_t k0 = vmstat_oom_kill();
	/* build: limit 32M, limit_max 80M, policy grow; the machine is empty now. */
	pid_t hog = run_in_job("build", 56);
	th_check(wait_rss(hog, 56, 30000), "grow: build's process got its 56 MiB past the 32 MiB limit");
	th_check(th_alive(hog), "grow: it lives");
	th_check(cg_limit(rel) == 80 * MIB, "grow: build's limit is its limit_max, 80 MiB (%" PRIu64 " MiB)",
		 cg_limit(rel) / MIB);
	th_check(cg_oom_kills(rel) == 0 && vmstat_oom_kill() == k0, "grow: the kernel killed nothing");
	struct json *r = wait_report("build", 10000);
	check_report("grow", r, "build", "grow", NULL, 0);
	const struct json *dec = r ? json_get(r, "decision") : NULL;
	th_check(dec && jnum(dec, "new_limit_bytes") == (int64_t)(80 * MIB),
		 "grow: the report's new limit is 80 MiB");
	json_free(r);
	struct json *s = status();
	const struct json *jb = s ? jjob(s, "build") : NULL;
	th_check(jb && jnum(jb, "ooms") == 1 && jnum(jb, "limit_bytes") == (int64_t)(80 * MIB),
		 "grow: status shows build's one OOM and its 80 MiB limit");
	json_free(s);
	kill(hog, SIGKILL);
	th_wait_exit(hog, 10000);
}

/* The hooks' lines of job hooked: before_kill says where it runs; after_kill
 * whether the victim is still there. */
static const char *hooked_extra(void)
{
	static char extra[512];
	/* The default hook_timeout, 500 ms, is shorter than a fork and two
	 * execs take in a guest under software emulation on a busy host: the
	 * kill then went ahead without the hook's word.  The delay, 2 s, still
	 * bounds it. */
	snprintf(
	    extra, sizeof(extra),
	    "hook_timeout = 1500ms\n"
	    "before_kill = /bin/sh -c \"cat /proc/self/cgroup > %s/hook-cgroup\"\n"
	    "after_kill = /bin/sh -c \"test -e /proc/$OOMKIT_PID/status || echo gone > %s/hook-after\"\n",
	    dir, dir);
	return extra;
}

/* A job's kill with its hooks, run by the hook runner in a memcg of their
 * own below MACHINE-hooks, limited to hook_memory (memory.max on v2). */
static void job_hooks(void)
{
	const char *rel = MACHINE "/hooked";
	char path[256], buf[512] = "", slot_cg[64];
	uint64_t k0 = vmstat_oom_kill();

	pid_t hog = run_in_job("hooked", 64);
	th_check(th_wait_exit(hog, 20000) != -1, "hooks: the process in hooked (32 MiB) is killed");
	struct json *r = wait_report("hooked", 10000);
	check_report("hooks", r, "hooked", "kill-largest", "hooked", hog);
	const struct json *hooks = r ? json_get(r, "hooks") : NULL;
	bool two = hooks && hooks->type == JSON_ARRAY && hooks->n == 2;
	th_check(two && strcmp(jstr(hooks->items[0], "hook"), "before_kill") == 0 &&
		     strcmp(jstr(hooks->items[0], "ended"), "exited") == 0 &&
		     jnum(hooks->items[0], "exit_status") == 0,
		 "hooks: the report says before_kill exited 0");
	th_check(two && strcmp(jstr(hooks->items[1], "hook"), "after_kill") == 0 &&
		     strcmp(jstr(hooks->items[1], "ended"), "exited") == 0,
		 "hooks: and after_kill exited");
	json_free(r);
	snprintf(path, sizeof(path), "%s/hook-cgroup", dir);
	th_read_file(path, buf, sizeof(buf));
	char *at = strstr(buf, "/" MACHINE "-hooks/");
	th_check(at != NULL, "hooks: before_kill ran below " MACHINE "-hooks (%s)", buf);
	if (at) {
		snprintf(slot_cg, sizeof(slot_cg), "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
		th_check(cg_limit(slot_cg) == 16 * MIB,
			 "hooks: in %s, limited to hook_memory 16 MiB (%" PRIu64 ")", slot_cg,
			 cg_limit(slot_cg));
	}
	snprintf(path, sizeof(path), "%s/hook-after", dir);
	buf[0] = '\0';
	th_read_file(path, buf, sizeof(buf));
	th_check(strncmp(buf, "gone", 4) == 0, "hooks: after_kill saw the victim gone");
	th_check(cg_oom_kills(rel) == 0 && vmstat_oom_kill() == k0, "hooks: the kernel killed nothing");
}

/* The victim helper (tests/helpers/victim.c) in a job's cgroup: MIB in 1 MiB
 * steps, answering SIGUSR1 and SIGTERM as MODE says, FILE its witness. */
static pid_t spawn_victim(const char *job, unsigned mib, const char *mode, const char *file)
{
	char rel[128], m[16];
	snprintf(rel, sizeof(rel), MACHINE "/%s", job);
	snprintf(m, sizeof(m), "%u", mib);
	struct th_spawn how = {.cgroup = cg_file(rel, "")};
	char *argv[] = {(char *)victim_path, m, (char *)mode, (char *)file, NULL};
	return th_spawn(&how, argv);
}

struct witness {
	char path[300];
	char *buf;
	size_t len;
};

static bool witness_written(void *arg)
{
	struct witness *w = arg;
	return th_read_file(w->path, w->buf, w->len) > 0;
}

/* Reads a witness file the victim writes, waiting up to 20 s for it. */
static bool witness(const char *name, char *buf, size_t len)
{
	struct witness w = {.buf = buf, .len = len};
	snprintf(w.path, sizeof(w.path), "%s/%s", dir, name);
	return th_wait_for(witness_written, &w, 20000);
}

struct limit_is {
	const char *rel;
	uint64_t bytes;
};

static bool limit_is(void *arg)
{
	const struct limit_is *l = arg;
	return cg_limit(l->rel) == l->bytes;
}

/* A loan's headroom is taken back: the job's limit is bytes again (20 s). */
static void check_repaid(const char *what, const char *rel, uint64_t bytes)
{
	struct limit_is l = {rel, bytes};
	th_check(th_wait_for(limit_is, &l, 20000), "%s: the headroom is taken back (%" PRIu64 ")", what,
		 cg_limit(rel));
}

/* The shed policy where the hold is memory.high (v2) or the
 * kernel killer held off (v1): a job at its limit cannot run its SIGUSR1
 * handler until it is lent headroom; it then gives half back, and the OOM is
 * resolved with nothing killed and the headroom taken back. */
static void job_shed(void)
{
	const char *rel = MACHINE "/shedder";
	char path[300], buf[64] = "";
	uint64_t k0 = vmstat_oom_kill();

	snprintf(path, sizeof(path), "%s/shed-witness", dir);
	pid_t v = spawn_victim("shedder", 48, "shed", path);
	th_check(v > 0 && witness("shed-witness", buf, sizeof(buf)) && strncmp(buf, "shed ", 5) == 0,
		 "shed: the victim at its limit ran its handler and gave memory back (%s)", buf);
	struct json *r = wait_report("shedder", 20000);
	const struct json *dec = r ? json_get(r, "decision") : NULL;
	const struct json *shed = r ? json_get(r, "shed") : NULL;
	th_check(dec && strcmp(jstr(dec, "action"), "shed") == 0, "shed: the report's decision is shed (%s)",
		 dec ? jstr(dec, "action") : "no report");
	th_check(shed && jnum(shed, "lent_bytes") > 0 && jnum(shed, "freed_bytes") > 0,
		 "shed: it was lent headroom and says what came back (%" PRId64 " bytes)",
		 shed ? jnum(shed, "freed_bytes") : -1);
	th_check(r && strstr(jstr(r, "outcome"), "resolved by shedding") != NULL,
		 "shed: resolved by shedding (%s)", r ? jstr(r, "outcome") : "");
	json_free(r);
	th_check(th_alive(v), "shed: nothing was killed");
	check_repaid("shed", rel, 32 * MIB);
	th_check(cg_oom_kills(rel) == 0 && vmstat_oom_kill() == k0, "shed: the kernel killed nothing");
	kill(v, SIGKILL);
	th_wait_exit(v, 10000);
}

/* A graceful kill: SIGTERM reaches a victim held at its limit (lent the
 * room to run its handler), which writes its file and exits 0 within
 * kill_grace; the report says SIGTERM ended it. */
static void job_graceful(void)
{
	const char *rel = MACHINE "/graceful";
	char path[300], buf[64] = "";
	uint64_t k0 = vmstat_oom_kill();

	snprintf(path, sizeof(path), "%s/term-witness", dir);
	pid_t v = spawn_victim("graceful", 48, "term", path);
	int st = v > 0 ? th_wait_exit(v, 20000) : -1;
	th_check(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "graceful: the victim exited by its own SIGTERM handler (status 0x%x)", st);
	th_check(witness("term-witness", buf, sizeof(buf)) && strncmp(buf, "term", 4) == 0,
		 "graceful: and wrote its file first");
	struct json *r = wait_report("graceful", 20000);
	check_report("graceful", r, "graceful", "kill-largest", "graceful", v);
	th_check(r && strcmp(jstr(r, "ended_by"), "SIGTERM") == 0,
		 "graceful: the report says SIGTERM ended it (%s)", r ? jstr(r, "ended_by") : "");
	json_free(r);
	check_repaid("graceful", rel, 32 * MIB);
	th_check(cg_oom_kills(rel) == 0 && vmstat_oom_kill() == k0, "graceful: the kernel killed nothing");
}

/* Does what a delegated job's owner may try: as uid, write value to the
 * job's file (or, with value NULL, create a child cgroup named file).
 * Returns 0 or the errno it met. */
static int as_owner(unsigned uid, const char *rel, const char *file, const char *value)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(uid) < 0 || setuid(uid) < 0)
			_exit(100);
		if (!value)
			_exit(mkdir(cg_file(rel, file), 0755) < 0 ? errno : 0);
		int fd = open(cg_file(rel, file), O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(errno);
		_exit(write(fd, value, strlen(value)) < 0 ? errno : 0);
	}
	int st = th_wait_exit(pid, 10000);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A delegated job: its owner may organise it, never raise what it was given. */
static void job_delegated(void)
{
	const char *rel = MACHINE "/shared";
	int r = as_owner(1000, rel, "sub", NULL);
	th_check(r == 0, "delegation: the owner creates a child cgroup in its job (%s)",
		 r > 0 ? strerror(r) : "ok");
	/* Its limits, the daemon's hold (v1 oom_control, v2 memory.high) and
	 * whatever is not on the library's allow-list stay root's. */
	const char *limits[] = {v2 ? "memory.max" : "memory.limit_in_bytes",
				v2 ? "memory.high" : "memory.soft_limit_in_bytes",
				v2 ? "memory.low" : "memory.memsw.limit_in_bytes",
				v2 ? "memory.oom.group" : "memory.oom_control",
				v2 ? "cgroup.freeze" : "memory.use_hierarchy",
				v2 ? "cgroup.max.depth" : "notify_on_release"};
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (access(cg_file(rel, limits[i]), F_OK) < 0)
			continue;
		r = as_owner(1000, rel, limits[i], "max");
		th_check(r == EACCES || r == EPERM, "delegation: the owner cannot write %s (%s)", limits[i],
			 r > 0	  ? strerror(r)
			 : r == 0 ? "it could"
				  : "?");
	}
	th_check(cg_limit(rel) == 32 * MIB, "delegation: the job's limit is still 32 MiB");
	/* What it is given: permission passes (a blank value may be refused as such). */
	const char *given = v2 ? "cgroup.subtree_control" : "cgroup.event_control";
	r = as_owner(1000, rel, given, " ");
	th_check(r == 0 || r == EINVAL, "delegation: the owner may write %s (%s)", given,
		 r > 0 ? strerror(r) : "ok");
}

/* SIGHUP gives the job spare, unlimited so far, a limit of 32 MiB: from then
 * on its OOMs are the daemon's, held like any other job's. */
static void job_reload(struct job *jobs, size_t n)
{
	const char *rel = MACHINE "/spare";
	uint64_t k0 = vmstat_oom_kill(), kills0 = cg_oom_kills(rel);
	for (size_t i = 0; i < n; i++)
		if (strcmp(jobs[i].name, "spare") == 0)
			jobs[i].limit_mib = 32;
	write_config(160, "2s", jobs, n);
	kill(daemon_pid, SIGHUP);
	th_check(wait_log("reloaded ", 0, 10000), "reload: oomkitd reloaded its configuration on SIGHUP");
	th_check(
	    cg_limit(rel) == 32 * MIB && cg_held(rel),
	    "reload: spare has its new 32 MiB limit, and the kernel killer is held off for it (limit %" PRIu64
	    " MiB)",
	    cg_limit(rel) / MIB);
	pid_t hog = run_in_job("spare", 48);
	int st = th_wait_exit(hog, 30000);
	th_check(th_sigkilled(st), "reload: spare's 48 MiB process died of SIGKILL at its 32 MiB limit");
	th_check(cg_oom_kills(rel) == kills0 && vmstat_oom_kill() == k0,
		 "reload: by oomkitd, not the kernel (spare oom_kill %" PRIu64 " -> %" PRIu64 ")", kills0,
		 cg_oom_kills(rel));
	struct json *r = wait_report("spare", 10000);
	check_report("reload", r, "spare", "kill-newest", "spare", hog);
	json_free(r);
}

static int count_reports(const char *scope)
{
	char suffix[64];
	int n = 0;
	DIR *d = opendir(reports);
	struct dirent *de;
	snprintf(suffix, sizeof(suffix), "-%s.json", scope);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name), k = strlen(suffix);
		n += strncmp(de->d_name, "oom-", 4) == 0 && len > k &&
		     strcmp(de->d_name + len - k, suffix) == 0;
	}
	if (d)
		closedir(d);
	return n;
}

/* oomkitd --dry-run on the machine the first run left: the kernel killer
 * stays on and resolves batch's OOM; oomkitd reports it, once, and does
 * nothing else. */
static void dry_run(void)
{
	const char *rel = MACHINE "/batch";
	if (!start_daemon_with("--dry-run")) {
		th_check(false, "dry run: oomkitd --dry-run started and became ready");
		return;
	}
	th_check(!cg_held(MACHINE) && !cg_held(rel), "dry run: the kernel killer stays on");
	int n0 = count_reports("batch");
	uint64_t k0 = cg_oom_kills(rel);
	pid_t hog = run_in_job("batch", 96);
	int st = th_wait_exit(hog, 30000);
	th_check(
	    th_sigkilled(st) && cg_oom_kills(rel) == k0 + 1,
	    "dry run: the kernel killed batch's 96 MiB process at its 64 MiB limit, once (oom_kill %" PRIu64
	    " -> %" PRIu64 ")",
	    k0, cg_oom_kills(rel));
	struct json *r = wait_report("batch", 10000);
	const struct json *dry = r ? json_get(r, "dry_run") : NULL;
	th_check(r && dry && dry->type == JSON_BOOL && dry->boolean &&
		     strcmp(jstr(r, "outcome"), "dry run: nothing done") == 0,
		 "dry run: the report says dry run, nothing done (%s)", r ? jstr(r, "outcome") : "no report");
	json_free(r);
	/* Every wake-up the OOM causes has been read once status answers. */
	struct json *s = status();
	const struct json *jb = s ? jjob(s, "batch") : NULL;
	th_check(jb && jnum(jb, "ooms") == 1 && count_reports("batch") == n0 + 1,
		 "dry run: one OOM, one report (status ooms %" PRId64 ", %d new reports)",
		 jb ? jnum(jb, "ooms") : -1, count_reports("batch") - n0);
	json_free(s);
	stop_daemon();
}

static void scenario_memcg(void)
{
	char hooks_dir[256];
	struct job jobs[] = {
	    {"web", 900, 128, 0, NULL, 0, NULL},
	    {"batch", 100, 64, 0, NULL, 0, NULL},
	    {"player", 500, 96, 0, NULL, 0, NULL},
	    {"build", 300, 32, 80, "grow, kernel", 0, NULL},
	    /* No limit for now: its OOMs are the machine's until a reload gives it one. */
	    {"spare", 400, 0, 0, "report, kill-newest, kernel", 0, NULL},
	    {"shared", 200, 32, 0, NULL, 1000, NULL},
	    {"hooked", 600, 32, 0, "kill-largest, kernel", 0, hooked_extra()},
	    {"shedder", 600, 32, 0, "shed, kill-largest, kernel", 0,
	     "shed_signal = SIGUSR1\nshed_wait = 1s\n"},
	    {"graceful", 600, 32, 0, "kill-largest, kernel", 0, "kill_signal = SIGTERM\nkill_grace = 1s\n"},
	};
	size_t n_jobs = sizeof(jobs) / sizeof(jobs[0]);
	write_config(160, "2s", jobs, n_jobs);
	th_check(config_check() == 0, "memcg: oomkitd --check accepts the configuration");
	if (!start_daemon()) {
		th_check(false, "memcg: oomkitd started and became ready");
		return;
	}
	th_check(cg_limit(MACHINE) == 160 * MIB, "memcg: the machine cgroup has its 160 MiB limit");
	bool held = cg_held(MACHINE);
	for (size_t i = 0; i < n_jobs; i++) {
		if (!jobs[i].limit_mib)
			continue;
		char rel[64];
		snprintf(rel, sizeof(rel), MACHINE "/%s", jobs[i].name);
		held = held && cg_held(rel) && cg_limit(rel) == jobs[i].limit_mib * MIB;
	}
	th_check(
	    held,
	    "memcg: every job has its limit, and the kernel killer is held off for them and the machine");
	th_check(log_count("cannot take over") == 0,
		 "memcg: oomkitd took every job with a limit over without an error");
	machine_oom();
	job_grow();
	job_hooks();
	job_shed();
	job_graceful();
	job_delegated();
	job_reload(jobs, n_jobs);
	int st = stop_daemon();
	th_check(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		 "memcg: oomkitd stopped on SIGTERM (status 0x%x)", st);
	th_check(!cg_held(MACHINE) && !cg_held(MACHINE "/web"),
		 "memcg: once stopped, the kernel killer is back");
	snprintf(hooks_dir, sizeof(hooks_dir), "%s/" MACHINE "-hooks", cgroot);
	th_check(access(hooks_dir, F_OK) != 0, "memcg: once stopped, the hooks' memcgs are gone");
	dry_run();
}

/* ------------------------------------------------------------ system */

/* The daemon and its guardian as the machine needs them. */
static pid_t check_protected(void)
{
	pid_t g = find_child(daemon_pid, "oomkit-guardian");
	th_check(g > 0, "system: oomkitd's guardian is its child %d", (int)g);
	th_check(oom_score_adj(daemon_pid) == -1000 && status_kib(daemon_pid, "VmLck") > 0,
		 "system: oomkitd has oom_score_adj %d and %" PRIu64 " KiB locked", oom_score_adj(daemon_pid),
		 status_kib(daemon_pid, "VmLck"));
	if (g > 0)
		th_check(oom_score_adj(g) == -1000 && status_kib(g, "VmLck") > 0,
			 "system: the guardian has oom_score_adj %d and %" PRIu64 " KiB locked",
			 oom_score_adj(g), status_kib(g, "VmLck"));
	const char *cg = proc_memcg(daemon_pid);
	th_check(strcmp(cg, MACHINE "-daemon") == 0,
		 "system: oomkitd lives in its reserve cgroup %s, outside the machine", cg);
	return g;
}

static void scenario_system(void)
{
	uint64_t total = key_u64("/proc/meminfo", "MemTotal", 0) / 1024;
	uint64_t avail = key_u64("/proc/meminfo", "MemAvailable", 0) / 1024;
	/* The machine is what the guest has less a reserve for the daemon, the
	 * guest's own processes and the page tables of the hogs. */
	uint64_t limit = avail - 48, want = total + 64;
	const struct job jobs[] = {
	    {"web", 900, 64, 0, NULL, 0, NULL},
	    /* A job may be as large as the whole RAM: only the machine stops it. */
	    {"batch", 100, total, 0, NULL, 0, NULL},
	};
	printf("note: system: MemTotal %" PRIu64 " MiB, MemAvailable %" PRIu64 " MiB, machine_limit %" PRIu64
	       " MiB\n",
	       total, avail, limit);
	/* A delay far longer than the test: when the kernel resolves the OOM of
	 * a killed oomkitd, it is the guardian's doing, not the delay's. */
	write_config(limit, "30s", jobs, 2);
	th_check(config_check() == 0, "system: oomkitd --check accepts the configuration");
	if (!start_daemon()) {
		th_check(false, "system: oomkitd started and became ready");
		return;
	}
	pid_t dpid = daemon_pid, guardian = check_protected();

	pid_t web = run_in_job("web", 16);
	th_check(wait_rss(web, 16, 30000), "system: web has its 16 MiB");
	uint64_t k0 = vmstat_oom_kill();
	pid_t batch = run_in_job("batch", (unsigned)want);
	int st = th_wait_exit(batch, 60000);
	th_check(th_sigkilled(st), "system: the batch hog wanting %" PRIu64 " MiB died of SIGKILL", want);
	th_check(vmstat_oom_kill() == k0 && machine_oom_kills() == 0,
		 "system: before the kernel OOM killer fired (vmstat oom_kill %" PRIu64 " -> %" PRIu64 ")",
		 k0, vmstat_oom_kill());
	th_check(th_alive(web), "system: web lives");
	th_check(th_alive(dpid) && guardian > 0 && th_alive(guardian) &&
		     find_child(dpid, "oomkit-guardian") == guardian,
		 "system: oomkitd and its guardian live");
	struct json *r = wait_report("machine", 10000);
	check_report("system", r, "machine", "kill-lowest", "batch", batch);
	json_free(r);
	struct json *s = status();
	const struct json *m = s ? json_get(s, "machine") : NULL;
	th_check(m && jnum(m, "ooms") == 1 && jnum(m, "kills") == 1,
		 "system: status counts 1 machine OOM and 1 kill");
	json_free(s);

	/* oomkitd stops answering (SIGSTOP) and is SIGKILLed in the middle of the
	 * next OOM, which it holds: the guardian must give the kernel its killer. */
	uint64_t high0 = key_u64(cg_file(MACHINE, "memory.events.local"), "high", 0);
	kill(dpid, SIGSTOP);
	uint64_t end = th_now_ms() + 5000;
	while (th_proc_state(dpid) != 'T' && th_now_ms() < end)
		th_sleep_ms(5);
	th_check(th_proc_state(dpid) == 'T', "system: oomkitd is stopped");
	uint64_t k1 = vmstat_oom_kill(), c1 = machine_oom_kills();
	batch = spawn_in_cgroup(MACHINE "/batch", (unsigned)want);
	end = th_now_ms() + 30000;
	while (!cg_under_oom(MACHINE, high0) && th_alive(batch) && th_now_ms() < end)
		th_sleep_ms(5);
	th_check(cg_under_oom(MACHINE, high0) && th_alive(batch) && vmstat_oom_kill() == k1,
		 "system: with oomkitd stopped the machine is out of memory and held; the hog waits");
	uint64_t t0 = th_now_ms();
	kill(dpid, SIGKILL);
	st = th_wait_exit(dpid, 10000);
	daemon_pid = 0;
	th_check(th_sigkilled(st), "system: oomkitd died of SIGKILL");
	st = th_wait_exit(batch, 15000);
	uint64_t t1 = th_now_ms();
	th_check(th_sigkilled(st), "system: the hog died of SIGKILL, long before the 30 s delay");
	printf("figure: system: oomkitd SIGKILLed -> hog reaped by the kernel: %" PRIu64 " ms\n", t1 - t0);
	th_check(vmstat_oom_kill() > k1 && machine_oom_kills() > c1,
		 "system: it was the kernel OOM killer (vmstat oom_kill %" PRIu64 " -> %" PRIu64
		 ", in the machine %" PRIu64 " -> %" PRIu64 ")",
		 k1, vmstat_oom_kill(), c1, machine_oom_kills());
	end = th_now_ms() + 5000;
	while (th_alive(guardian) && th_now_ms() < end)
		th_sleep_ms(5);
	th_check(!th_alive(guardian), "system: the guardian exited after its daemon");
	th_check(!cg_held(MACHINE) && !cg_held(MACHINE "/web") && !cg_held(MACHINE "/batch"),
		 "system: the kernel killer is back on the machine and both jobs");
	th_check(th_alive(web), "system: the kernel chose the hog; web lives");
	pid_t after = spawn_in_cgroup(MACHINE "/batch", 32);
	th_check(wait_rss(after, 32, 30000),
		 "system: nothing is blocked: a new process in batch gets 32 MiB");
	kill(after, SIGKILL);
	th_wait_exit(after, 10000);

	/* oomkitd started again adopts what the killed one left and handles the next OOM. */
	th_check(start_daemon(), "system: oomkitd starts again");
	th_check(wait_log("web: adopted ", 0, 1) && wait_log("batch: adopted ", 0, 1) && cg_held(MACHINE) &&
		     cg_held(MACHINE "/batch"),
		 "system: it adopts the machine and both jobs and holds them again");
	uint64_t k2 = vmstat_oom_kill();
	batch = run_in_job("batch", (unsigned)want);
	st = th_wait_exit(batch, 60000);
	th_check(
	    th_sigkilled(st) && vmstat_oom_kill() == k2 && th_alive(web),
	    "system: the next hog in batch is killed by oomkitd again, web lives (vmstat oom_kill %" PRIu64
	    " -> %" PRIu64 ")",
	    k2, vmstat_oom_kill());
	r = wait_report("machine", 10000);
	th_check(r && jnum(r, "id") == 2, "system: its report is number 2: the ids go on after the restart");
	if (r)
		check_report("system, restarted", r, "machine", "kill-lowest", "batch", batch);
	json_free(r);
	kill(web, SIGKILL);
	th_wait_exit(web, 10000);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "memcg";
	const char *mode = getenv("OOMKIT_VM_MODE");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!getenv("OOMKIT_VM") || !mode) {
		/* It creates cgroups at the top of the hierarchy and fills the RAM. */
		printf("%s: runs only in the qemu guest of tests/vm (OOMKIT_VM=1)\n",
		       getenv("OOMKIT_REQUIRE_KERNEL") && strcmp(getenv("OOMKIT_REQUIRE_KERNEL"), "1") == 0
			   ? "FAIL"
			   : "SKIP");
		return getenv("OOMKIT_REQUIRE_KERNEL") && strcmp(getenv("OOMKIT_REQUIRE_KERNEL"), "1") == 0
			   ? 1
			   : 77;
	}
	v2 = strcmp(mode, "v2") == 0;
	cgroot = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
	hog_path = getenv("OOMKIT_HOG");
	oomkitd_path = getenv("OOMKITD");
	oomkit_path = getenv("OOMKIT");
	victim_path = getenv("OOMKIT_VICTIM");
	if (!hog_path || !oomkitd_path || !oomkit_path || !victim_path || access(hog_path, X_OK) ||
	    access(oomkitd_path, X_OK) || access(oomkit_path, X_OK) || access(victim_path, X_OK)) {
		printf(
		    "FAIL: OOMKIT_HOG, OOMKITD, OOMKIT and OOMKIT_VICTIM must name the hog, oomkitd, oomkit "
		    "and the victim\n");
		return 1;
	}
	snprintf(dir, sizeof(dir), "/tmp/oomkit-daemon.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("FAIL: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/oomkitd.sock", dir);
	snprintf(conf, sizeof(conf), "%s/oomkitd.conf", dir);
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	snprintf(reports, sizeof(reports), "%s/reports", dir);
	printf("mode %s: oomkitd on the memory hierarchy at %s\n", mode, cgroot);

	uint64_t t0 = th_now_ms();
	if (strcmp(which, "memcg") == 0)
		scenario_memcg();
	else if (strcmp(which, "system") == 0)
		scenario_system();
	else {
		printf("FAIL: unknown scenario %s (memcg or system)\n", which);
		return 1;
	}
	th_check(teardown(), "%s: every cgroup removed", which);
	if (th_failures())
		dump_log();
	printf("figure: %s scenario: %" PRIu64 " ms\n", which, th_now_ms() - t0);
	printf("%s: %d failed\n", which, th_failures());
	return th_failures() ? 1 : 0;
}
