/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * machine.c - benchmark 6: a hog grows past a threshold 64 MiB above where
 * it started; how long after the crossing is it stopped and dead, and how
 * much did it allocate past the threshold?  oomkit: a usage threshold on the
 * hog's memcg (the watcher kills the largest process when it is crossed
 * upwards).  earlyoom: -M set 64 MiB under the machine's MemAvailable just
 * before the hog starts.  Alternating, 10 pairs.
 *
 * Why 64 MiB: the hog may grow to 240 MiB (its memcg allows 256), and
 * MemAvailable follows a growing process with a lag of tens of MiB (pages
 * come from per-CPU lists first) plus whatever else the machine does; with
 * 128 MiB, earlyoom missed 7 runs of 10 here because the hog stopped growing
 * before MemAvailable had fallen far enough.
 *
 * Safety: the hog lives in a 256 MiB memcg, so nothing can run away whatever
 * either side does.  earlyoom acts on the whole machine's memory, so it runs
 * in a pid namespace of its own with a private /proc: the only processes it
 * can see, let alone kill, are the namespace's init (which it never kills),
 * itself and the hog.  Its threshold is MemAvailable at start minus 64 MiB,
 * so it never acts on memory it was not shown being taken by the hog (other
 * activity on a shared machine can move it either way; such pairs are
 * reported as misses, not as figures).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "benchlib.h"

#define MACHINE_LIMIT (256 * BL_MIB)
#define GROWTH (64 * BL_MIB) /* the threshold, above the hog's start */
/* The crossing, counted in the hog's pages: its memcg's usage reaches the
 * threshold up to 512 KiB before its pages alone do (the page tables, 1/512
 * of the growth, and up to 64 pages the kernel charges ahead per CPU).  The
 * earliest possible crossing is taken, for both sides alike. */
#define CROSS_SLACK (512 * BL_KIB)
#define GROWTH_PAGES ((GROWTH - CROSS_SLACK) / BL_PAGE)
#define HOG_MIB 240
#define HOG_STEP_KIB 64
#define HOG_PAUSE_US 100
#define ACT_TIMEOUT_NS (3ull * 1000000000u)

static const char *const side_name[2] = {"oomkit", "earlyoom"};

struct outcome {
	uint64_t cross_ns;
	uint64_t death_ns;
	uint64_t final_pages;
	uint64_t final_touch_ns; /* the hog's last touch: when the kill stopped it */
};

/* A consistent (time, pages) pair from the hog's stamp. */
static void read_stamp(const struct bl_hog_stamp *hs, uint64_t *t, uint64_t *p)
{
	uint64_t p1;
	do {
		p1 = hs->pages;
		*t = hs->last_touch_ns;
		*p = hs->pages;
	} while (p1 != *p);
}

/* Follows the hog until it dies: when it crossed GROWTH_PAGES (interpolated
 * between two looks at its stamp, 100 us apart) and when it died.  0, or
 * -1 if it was not dead within ACT_TIMEOUT_NS of the crossing. */
static int observe(pid_t pid, const struct bl_hog_stamp *hs, struct outcome *out)
{
	int pidfd = bl_pidfd_open(pid);
	uint64_t prev_t = 0, prev_p = 0, end = bl_now_ns() + 20 * ACT_TIMEOUT_NS;
	struct timespec tick = {0, 100000};
	memset(out, 0, sizeof(*out));
	if (pidfd < 0)
		return -1;
	for (;;) {
		struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
		int r = ppoll(&pfd, 1, &tick, NULL);
		uint64_t now = bl_now_ns(), t, p;
		if (r > 0) {
			out->death_ns = now;
			break;
		}
		read_stamp(hs, &t, &p);
		if (!out->cross_ns && p >= GROWTH_PAGES && p > prev_p) {
			out->cross_ns = prev_t + (uint64_t)((double)(GROWTH_PAGES - prev_p) *
							    (double)(t - prev_t) / (double)(p - prev_p));
			end = now + ACT_TIMEOUT_NS;
		}
		prev_t = t;
		prev_p = p;
		if (now > end)
			break;
	}
	close(pidfd);
	read_stamp(hs, &out->final_touch_ns, &out->final_pages);
	return out->death_ns && out->cross_ns ? 0 : -1;
}

/* Whether pid runs the hog binary and sleeps: with nothing to allocate, the
 * hog's only sleep is its final pause(). */
static bool hog_idle(pid_t pid)
{
	char path[64], exe[512], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	const char *name = strrchr(exe, '/');
	if (!name || strcmp(name, "/oomkit-hog") != 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] == 'S';
}

/* The hog's memcg usage when it has started and allocated nothing: what it
 * costs before its growth. */
static uint64_t hog_base(const char *cg, const char *stamp)
{
	pid_t pid = bl_spawn_hog(cg, 0, HOG_STEP_KIB, 0, stamp);
	uint64_t usage = UINT64_MAX;
	for (int i = 0; i < 2000 && pid > 0; i++) {
		if (hog_idle(pid)) {
			usage = th_cg_u64(BL_MEMORY_ROOT, cg, "memory.usage_in_bytes");
			break;
		}
		bl_sleep_us(1000);
	}
	if (pid > 0)
		bl_wait_child(pid, 0);
	return usage;
}

/* ------------------------------------------------------------ earlyoom in a pid namespace */

struct ns {
	pid_t init;   /* pid 1 of the namespace, seen from here */
	int go_w;     /* a byte here lets the hog start */
	char log[64]; /* earlyoom's output */
};

static void __attribute__((noreturn)) ns_hog(const char *cg, int go_r, const char *stamp)
{
	char c;
	while (read(go_r, &c, 1) < 0 && errno == EINTR)
		;
	char a1[16], a2[16], a3[16], v[32];
	snprintf(a1, sizeof(a1), "%d", HOG_MIB);
	snprintf(a2, sizeof(a2), "%d", HOG_STEP_KIB);
	snprintf(a3, sizeof(a3), "%d", HOG_PAUSE_US);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	if (th_cg_write(BL_MEMORY_ROOT, cg, "cgroup.procs", v) < 0)
		_exit(126);
	char *argv[] = {(char *)bl_hog(), a1, a2, a3, (char *)stamp, NULL};
	execv(argv[0], argv);
	_exit(127);
}

static void __attribute__((noreturn)) ns_earlyoom(const char *log, uint64_t min_kib)
{
	char m[64];
	snprintf(m, sizeof(m), "%llu,%llu", (unsigned long long)min_kib, (unsigned long long)min_kib);
	int fd = open(log, O_WRONLY | O_CLOEXEC | O_APPEND);
	if (fd < 0)
		_exit(126);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	/* -m 99,99: -M decides (earlyoom takes the lower of the two); -s 100,100:
	 * this machine has no swap, so only memory counts; SIGKILL at once, as
	 * oomkit does; -r 0: no periodic report.  The hog is preferred; the
	 * namespace leaves nothing else to choose from anyway. */
	char *argv[] = {
	    (char *)bl_earlyoom(), "-m",      "99,99",	    "-M", m, "-s", "100,100", "-r", "0", "--prefer",
	    "^oomkit-hog$",	   "--avoid", "^earlyoom$", NULL};
	execv(argv[0], argv);
	_exit(127);
}

/* pid 1 of the namespace: a private /proc, the gated hog, earlyoom, reaping. */
static void __attribute__((noreturn))
ns_init(const char *cg, int go_r, const char *stamp, const char *log, uint64_t min_kib)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		_exit(125);
	/* The hog's process exists before earlyoom starts, so earlyoom's
	 * start-up self test finds a process and does not sleep a second. */
	if (fork() == 0)
		ns_hog(cg, go_r, stamp);
	close(go_r);
	if (fork() == 0)
		ns_earlyoom(log, min_kib);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

static bool log_has(const char *path, const char *what)
{
	char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return strstr(buf, what) != NULL;
}

static int ns_start(struct ns *ns, const char *cg, const char *stamp, uint64_t min_kib)
{
	int go[2];
	snprintf(ns->log, sizeof(ns->log), "/dev/shm/oomkit-bench-earlyoom-XXXXXX");
	int fd = mkstemp(ns->log);
	if (fd < 0 || pipe2(go, O_CLOEXEC) < 0)
		return -1;
	close(fd);
	long pid = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		close(go[1]);
		ns_init(cg, go[0], stamp, ns->log, min_kib);
	}
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		return -1;
	}
	ns->init = (pid_t)pid;
	ns->go_w = go[1];
	bl_track(ns->init);
	/* earlyoom prints its thresholds, then runs its self test and its loop. */
	for (int i = 0; i < 5000; i++) {
		if (log_has(ns->log, "SIGKILL when"))
			return 0;
		bl_sleep_us(1000);
	}
	return -1;
}

static void ns_stop(struct ns *ns)
{
	if (ns->go_w >= 0)
		close(ns->go_w);
	ns->go_w = -1;
	if (ns->init > 0) {
		kill(ns->init, SIGKILL);
		waitpid(ns->init, NULL, 0);
		bl_untrack(ns->init);
	}
	ns->init = 0;
	if (!getenv("OOMKIT_BENCH_KEEP_LOGS"))
		unlink(ns->log);
}

/* The one process of cg, once the gated hog has joined it. */
static pid_t find_hog(const char *cg)
{
	for (int i = 0; i < 2000; i++) {
		char path[512], buf[64];
		snprintf(path, sizeof(path), "%s/cgroup.procs", bl_abs(cg));
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			return (pid_t)strtol(buf, NULL, 10);
		}
		bl_sleep_us(500);
	}
	return 0;
}

/* ------------------------------------------------------------ the runs */

static int run_oomkit(const char *cg, const char *stamp, struct bl_hog_stamp *hs, struct outcome *out)
{
	pid_t pid = bl_spawn_hog(cg, HOG_MIB, HOG_STEP_KIB, HOG_PAUSE_US, stamp);
	memset(out, 0, sizeof(*out));
	if (pid < 0)
		return -2;
	int r = observe(pid, hs, out);
	bl_wait_child(pid, 0);
	return r;
}

static int run_earlyoom(const char *cg, const char *stamp, uint64_t base, struct bl_hog_stamp *hs,
			struct outcome *out)
{
	struct ns ns = {.go_w = -1};
	uint64_t avail = bl_mem_available_kib();
	uint64_t min_kib = avail - base / BL_KIB - GROWTH / BL_KIB;
	int r = -2;
	memset(out, 0, sizeof(*out));
	if (avail > (base + 2 * GROWTH) / BL_KIB && ns_start(&ns, cg, stamp, min_kib) == 0 &&
	    write(ns.go_w, "g", 1) == 1) {
		pid_t pid = find_hog(cg);
		if (pid > 0)
			r = observe(pid, hs, out);
	}
	ns_stop(&ns);
	return r;
}

static void record(int side, const struct outcome *o)
{
	double ms = ((double)o->death_ns - (double)o->cross_ns) / 1e6;
	double past = ((double)o->final_pages - (double)GROWTH_PAGES) * (double)BL_PAGE / (double)BL_MIB;
	char series[32];
	snprintf(series, sizeof(series), "%s", side_name[side]);
	bl_sample("machine", series, ms);
	snprintf(series, sizeof(series), "%s-past", side_name[side]);
	bl_sample("machine", series, past);
	snprintf(series, sizeof(series), "%s-stop", side_name[side]);
	bl_sample("machine", series, ((double)o->final_touch_ns - (double)o->cross_ns) / 1e6);
}

/* Misses are outcomes, not failures: earlyoom reads the whole machine's
 * MemAvailable, which other work on a shared machine moves by tens of MiB
 * either way.  They are counted per side. */
static int run_pairs(unsigned pairs, const char *cg[2], const char *stamp, uint64_t base,
		     struct bl_hog_stamp *hs)
{
	unsigned ok[2] = {0, 0}, early[2] = {0, 0}, late[2] = {0, 0};
	for (unsigned i = 0; i < pairs; i++)
		for (int s = 0; s < 2; s++) {
			struct outcome o;
			memset((void *)hs, 0, sizeof(*hs));
			int r = s == 0 ? run_oomkit(cg[0], stamp, hs, &o)
				       : run_earlyoom(cg[1], stamp, base, hs, &o);
			if (r == -2) {
				bl_fail("machine: the %s run %u could not be set up", side_name[s], i);
				return 1;
			}
			if (r < 0) {
				bool crossed = o.cross_ns != 0;
				if (crossed)
					late[s]++;
				else
					early[s]++;
				bl_note("machine: %s missed run %u: hog at %.1f MiB, %s", side_name[s], i,
					(double)hs->pages * BL_PAGE / BL_MIB,
					crossed ? "crossed but not killed within 3 s"
						: "killed before it crossed");
				continue;
			}
			record(s, &o);
			ok[s]++;
		}
	for (int s = 0; s < 2; s++) {
		char series[32];
		snprintf(series, sizeof(series), "%s-missed", side_name[s]);
		bl_sample("machine", series, early[s] + late[s]);
		if (!ok[s]) {
			bl_fail("machine: no %s run measured (%u killed early, %u not killed)", side_name[s],
				early[s], late[s]);
			return 1;
		}
	}
	return 0;
}

int bench_machine(int argc, char **argv)
{
	unsigned pairs = bench_opt(argc, argv, "pairs", 10);
	char stamp[64], threshold[32];
	const char *cg[2];
	int failed = 1;

	if (!bl_earlyoom()) {
		bl_fail("machine: earlyoom is not installed (Debian package earlyoom)");
		return 1;
	}
	if (bl_init("machine", 2 * MACHINE_LIMIT + 64 * BL_MIB) < 0)
		return 1;
	struct bl_hog_stamp *hs = bl_stamp_new(stamp, sizeof(stamp));
	for (int s = 0; s < 2; s++) {
		cg[s] = bl_child("%s", side_name[s]);
		if (bl_mkcg(cg[s], MACHINE_LIMIT) < 0)
			return 1;
	}
	uint64_t base = hs ? hog_base(cg[0], stamp) : UINT64_MAX;
	if (base == UINT64_MAX) {
		bl_fail("machine: cannot measure the hog's starting usage");
		goto out;
	}
	snprintf(threshold, sizeof(threshold), "%llu", (unsigned long long)(base + GROWTH));
	const char *args[] = {"--threshold", threshold, "--reserve", bl_child("res-oomkit"), cg[0], NULL};
	if (bl_start_watcher(args, NULL, 10000) < 0) {
		bl_fail("machine: the watcher did not start");
		goto out;
	}
	bl_note("machine: %u pairs; hog grows by %d KiB steps with %d us pauses in a %llu MiB memcg; "
		"threshold %llu MiB above its start (%.0f KiB)",
		pairs, HOG_STEP_KIB, HOG_PAUSE_US, MACHINE_LIMIT / BL_MIB, GROWTH / BL_MIB,
		(double)base / 1024);
	failed = run_pairs(pairs, cg, stamp, base, hs);
out:
	unlink(stamp);
	bl_cleanup();
	return failed;
}
