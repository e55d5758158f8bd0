/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * idle.c - benchmarks 3 and 4: what watching costs while nothing happens.
 * Everything runs at once for one window (10 s): the watcher holding 10, 100
 * and 1000 memcgs (taken over, guardian, reserve, mlock: what a daemon does
 * for its jobs), oomkitd itself with 10, 100 and 1000 jobs (its default
 * metrics_interval = 0: no periodic work), and earlyoom with thresholds it
 * never reaches.  Measured over
 * the window: voluntary context switches (each one a wakeup) and CPU time,
 * of the process and its guardian together; after it: resident, locked and
 * private memory (resident counts the shared C library each locked process
 * maps in whole; private is what the process alone costs the machine), and
 * the proportional share (PSS: private, plus each shared page divided by the
 * processes that map it; what the machine pays for it, which depends on how
 * many other processes share its libraries).
 *
 * earlyoom runs as pid 1 of a pid namespace with a private /proc and with
 * --dryrun, so it could not kill anything even if memory ran low.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"
#include "oomkitd.h"

#define JOB_LIMIT (64 * BL_MIB)
#define MAX_SUBJECTS 8

struct subject {
	char side[16]; /* "oomkit", "oomkitd", "earlyoom" */
	unsigned n;    /* memcgs watched; 0 for earlyoom */
	pid_t pid, guardian;
	uint64_t switches, cpu_ns;
};

static struct subject subjects[MAX_SUBJECTS];
static unsigned n_subjects;
static char tmpdir[64];

static void add_subject(const char *side, unsigned n, pid_t pid, pid_t guardian)
{
	struct subject *s = &subjects[n_subjects++];
	snprintf(s->side, sizeof(s->side), "%s", side);
	s->n = n;
	s->pid = pid;
	s->guardian = guardian;
}

static uint64_t sum2(uint64_t (*fn)(pid_t), const struct subject *s)
{
	uint64_t a = fn(s->pid), b = s->guardian > 0 ? fn(s->guardian) : 0;
	return a == UINT64_MAX || b == UINT64_MAX ? UINT64_MAX : a + b;
}

static int start_watcher(unsigned n)
{
	char pattern[256], count[16];
	pid_t guardian;
	if (bl_mkcg(bl_child("n%u", n), 0) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (bl_mkcg(bl_child("n%u/%u", n, i), JOB_LIMIT) < 0)
			return -1;
	snprintf(pattern, sizeof(pattern), "%s", bl_child("n%u/%%u", n));
	snprintf(count, sizeof(count), "%u", n);
	const char *args[] = {"--count", count, "--reserve", bl_child("res-%u", n), pattern, NULL};
	pid_t pid = bl_start_watcher(args, &guardian, 60000);
	if (pid < 0)
		return -1;
	add_subject("oomkit", n, pid, guardian);
	return 0;
}

/* ------------------------------------------------------------ oomkitd */

/* oomkitd's machine memcg and the reserve it makes beside it
 * (<machine>-daemon) both lie in this benchmark's tree. */
static int start_oomkitd(unsigned jobs)
{
	struct bench_daemon d;

	if (bench_daemon_start(&d, tmpdir, bl_child("d%u", jobs), jobs, 64) < 0)
		return -1;
	add_subject("oomkitd", jobs, d.pid, d.guardian);
	return 0;
}

/* ------------------------------------------------------------ earlyoom */

static int start_earlyoom(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			_exit(125);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		/* Acts only under 1 % of memory available, and then only pretends. */
		char *argv[] = {(char *)bl_earlyoom(), "-m", "1", "-s", "1", "-r", "0", "--dryrun", NULL};
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	bl_track((pid_t)pid);
	add_subject("earlyoom", 0, (pid_t)pid, 0);
	return 0;
}

/* ------------------------------------------------------------ measuring */

static void snapshot(void)
{
	for (unsigned i = 0; i < n_subjects; i++) {
		subjects[i].switches = sum2(bl_proc_wakeups, &subjects[i]);
		subjects[i].cpu_ns = sum2(bl_proc_cpu_ns, &subjects[i]);
	}
}

static uint64_t rss_kib(pid_t pid)
{
	return bl_proc_status(pid, "VmRSS");
}

static uint64_t lck_kib(pid_t pid)
{
	return bl_proc_status(pid, "VmLck");
}

static int report(unsigned seconds)
{
	int failed = 0;
	for (unsigned i = 0; i < n_subjects; i++) {
		struct subject *s = &subjects[i];
		uint64_t sw = sum2(bl_proc_wakeups, s), cpu = sum2(bl_proc_cpu_ns, s);
		uint64_t rss = sum2(rss_kib, s), lck = sum2(lck_kib, s), own = sum2(bl_proc_private_kib, s);
		uint64_t pss = sum2(bl_proc_pss_kib, s);
		char series[512];
		if (sw == UINT64_MAX || cpu == UINT64_MAX || rss == UINT64_MAX || lck == UINT64_MAX ||
		    own == UINT64_MAX || pss == UINT64_MAX || s->switches == UINT64_MAX) {
			bl_fail("idle: cannot read the counters of %s (pid %d): did it exit?", s->side,
				(int)s->pid);
			failed = 1;
			continue;
		}
		const char *at = s->n ? "@" : "";
		char n[16] = "";
		if (s->n)
			snprintf(n, sizeof(n), "%u", s->n);
		snprintf(series, sizeof(series), "wakeups-%s%s%s", s->side, at, n);
		bl_sample("idle", series, (double)(sw - s->switches) * 10.0 / seconds);
		snprintf(series, sizeof(series), "cpu-%s%s%s", s->side, at, n);
		bl_sample("idle", series, (double)(cpu - s->cpu_ns) / 1e6 * 10.0 / seconds);
		snprintf(series, sizeof(series), "rss-%s%s%s", s->side, at, n);
		bl_sample("footprint", series, (double)rss);
		snprintf(series, sizeof(series), "locked-%s%s%s", s->side, at, n);
		bl_sample("footprint", series, (double)lck);
		snprintf(series, sizeof(series), "private-%s%s%s", s->side, at, n);
		bl_sample("footprint", series, (double)own);
		snprintf(series, sizeof(series), "pss-%s%s%s", s->side, at, n);
		bl_sample("footprint", series, (double)pss);
	}
	return failed;
}

static int start_all(void)
{
	static const unsigned ns[] = {10, 100, 1000};
	static const unsigned jobs[] = {10, 100, 1000};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (start_watcher(ns[i]) < 0) {
			bl_fail("idle: the watcher for %u memcgs did not start", ns[i]);
			return -1;
		}
	if (bl_oomkitd()) {
		for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
			if (start_oomkitd(jobs[i]) < 0)
				return -1;
	} else {
		bl_note("idle: oomkitd is not built; only the watcher (liboomkit as a daemon uses it) is "
			"measured");
	}
	if (!bl_earlyoom()) {
		bl_fail("idle: earlyoom is not installed (Debian package earlyoom)");
		return -1;
	}
	return start_earlyoom();
}

int bench_idle(int argc, char **argv)
{
	unsigned seconds = bench_opt(argc, argv, "seconds", 10);
	int failed = 1;
	if (bl_init("idle", 256 * BL_MIB) < 0)
		return 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/oomkit-bench-idle-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	if (start_all() == 0) {
		bl_note(
		    "idle: one %u s window for all at once; figures per 10 s, process and guardian together; "
		    "oomkit = the bench watcher on liboomkit, oomkitd = the daemon",
		    seconds);
		/* Let start-up work (the guardian's registrations, first timers) finish. */
		bl_sleep_us(1000000);
		snapshot();
		bl_sleep_us(seconds * 1000000u);
		failed = report(seconds);
	}
	bl_cleanup();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "oomkit-bench: could not remove %s\n", tmpdir);
	return failed;
}
