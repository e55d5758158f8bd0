/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-bench-watcher: the handler side of the benchmarks.  With liboomkit
 * it does what a daemon does for its jobs: enters a reserve memcg, locks its
 * memory, watches every cgroup given, takes over their OOM handling and, on
 * an OOM of a cgroup's own limit (or a usage threshold crossed upwards),
 * kills the cgroup's largest process through the pidfd path.  With --raw it
 * does the same with nothing but the kernel's cgroup v1 interface (eventfd,
 * cgroup.event_control, kill(2)): the baseline that shows what the library
 * costs.
 *
 *   oomkit-bench-watcher [--raw] [--threshold BYTES] [--delay MS] [--kill-wait MS]
 *                        [--stamp FILE] [--reserve CGROUP] [--count N] [--rt] CGROUP...
 *
 * --rt runs the handler under SCHED_FIFO (priority 10), as a deployment that
 * wants its OOM handler to run the moment it is woken would; the guardian
 * keeps the normal policy.
 * With --count N, the single CGROUP is a printf pattern taking one unsigned
 * (e.g. "bench/idle/%u") expanded for 0..N-1.  Cgroups are relative to the
 * memory root.  Prints "ready PID GUARDIAN_PID" on stdout once every watch
 * is set up, then runs until SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <oomkit.h>

#include "bench.h"

#define MEMORY_ROOT "/sys/fs/cgroup/memory"
#define MAX_PIDS 4096
#define RESERVE_BYTES (16ull << 20)

struct options {
	bool raw;
	uint64_t threshold_bytes; /* 0: watch OOMs */
	uint64_t delay_ms;
	int kill_wait_ms;
	const char *stamp_path;
	const char *reserve;
	unsigned count; /* 0: the cgroups are listed */
	char **cgroups;
	unsigned n_cgroups;
	bool rt;
};

static struct options opt = {.delay_ms = 10000, .kill_wait_ms = 1000};
static struct bench_stamp *stamp;
static volatile sig_atomic_t stop;
static oomkit_ctx *the_ctx;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Records the handler's entry time of the first event after the driver
 * reset it, and when its side read the event; entry last, which the driver
 * waits for. */
static void mark_entry(uint64_t entry, uint64_t read)
{
	if (!stamp)
		return;
	if (stamp->entry_ns == 0) {
		stamp->read_ns = read;
		__atomic_store_n(&stamp->entry_ns, entry, __ATOMIC_RELEASE);
	}
	stamp->events++;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
	if (the_ctx)
		oomkit_stop(the_ctx);
}

static const char *cgroup_name(unsigned i, char *buf, size_t len)
{
	if (!opt.count)
		return opt.cgroups[i];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(buf, len, opt.cgroups[0], i);
#pragma GCC diagnostic pop
	return buf;
}

static unsigned n_watches(void)
{
	return opt.count ? opt.count : opt.n_cgroups;
}

/* After the guardian is forked: it inherits nothing of this. */
static void maybe_realtime(void)
{
	struct sched_param sp = {.sched_priority = 10};
	if (opt.rt && sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		fprintf(stderr, "watcher: SCHED_FIFO: %s\n", strerror(errno));
}

/* ------------------------------------------------------------ liboomkit */

/* The process of cgroup with the most resident memory, like the kernel's choice. */
static pid_t largest(oomkit_ctx *ctx, const char *cgroup, uint64_t *ret_start)
{
	static pid_t pids[MAX_PIDS];
	uint64_t best_rss = 0;
	pid_t best = 0;
	int n = oomkit_cgroup_pids(ctx, cgroup, true, pids, MAX_PIDS);
	for (int i = 0; i < n; i++) {
		struct oomkit_process p;
		if (oomkit_process_info(ctx, pids[i], &p) < 0 || p.oom_score_adj == -1000)
			continue;
		uint64_t rss = p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib;
		if (!best || rss > best_rss) {
			best = p.pid;
			best_rss = rss;
			*ret_start = p.start_time;
		}
	}
	return best;
}

static enum oomkit_verdict handle(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	uint64_t entry = now_ns(), start = 0;
	(void)userdata;
	if (ev->kind == OOMKIT_EVENT_OOM && (!ev->own || !ev->under_oom))
		return OOMKIT_WAIT;
	if (ev->kind == OOMKIT_EVENT_THRESHOLD && !ev->rising)
		return OOMKIT_RESOLVED;
	if (ev->kind != OOMKIT_EVENT_OOM && ev->kind != OOMKIT_EVENT_THRESHOLD)
		return OOMKIT_RESOLVED;
	mark_entry(entry, ev->time_ns);
	pid_t victim = largest(ctx, ev->cgroup, &start);
	if (!victim)
		return OOMKIT_KERNEL;
	int r = oomkit_kill(ctx, victim, start, opt.kill_wait_ms);
	return r == 0 || r == -ESRCH || r == -ETIMEDOUT ? OOMKIT_RESOLVED : OOMKIT_WAIT;
}

static int watch_all(oomkit_ctx *ctx)
{
	char buf[512];
	for (unsigned i = 0; i < n_watches(); i++) {
		const char *cg = cgroup_name(i, buf, sizeof(buf));
		oomkit_watch *w;
		int r = opt.threshold_bytes
			    ? oomkit_watch_threshold(ctx, cg, opt.threshold_bytes, 0, handle, NULL, &w)
			    : oomkit_watch_oom(ctx, cg, 0, handle, NULL, &w);
		if (r == 0 && !opt.threshold_bytes)
			r = oomkit_take_over(ctx, w, opt.delay_ms);
		if (r < 0) {
			fprintf(stderr, "watcher: %s: %s\n", cg, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int run_oomkit(void)
{
	struct oomkit_options o;
	oomkit_ctx *ctx;
	int r;

	oomkit_options_init(&o);
	o.max_cgroups = n_watches() + 8;
	o.max_pids = MAX_PIDS;
	o.guardian = true;
	o.protect = true;
	o.mlock = true;
	if ((r = oomkit_new(&o, &ctx)) < 0) {
		fprintf(stderr, "watcher: oomkit_new: %s\n", strerror(-r));
		return 1;
	}
	the_ctx = ctx;
	if (opt.reserve && (r = oomkit_enter_reserve(ctx, opt.reserve, RESERVE_BYTES)) < 0)
		fprintf(stderr, "watcher: reserve %s: %s\n", opt.reserve, strerror(-r));
	if (r >= 0)
		r = watch_all(ctx);
	maybe_realtime();
	if (r >= 0) {
		printf("ready %d %d\n", (int)getpid(), (int)oomkit_guardian_pid(ctx));
		fflush(stdout);
		while (!stop && r >= 0)
			r = oomkit_dispatch(ctx, -1);
	}
	the_ctx = NULL;
	oomkit_free(ctx);
	return r < 0 ? 1 : 0;
}

/* ------------------------------------------------------------ raw kernel interface */

struct raw_watch {
	int efd;
	char cgroup[256];
};

static int write_at(const char *cgroup, const char *file, const char *value)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s", MEMORY_ROOT, cgroup, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write(fd, value, strlen(value)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int open_at(const char *cgroup, const char *file, int flags)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s", MEMORY_ROOT, cgroup, file);
	int fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* eventfd + cgroup.event_control, as the kernel documentation describes. */
static int raw_register(struct raw_watch *w)
{
	int target = open_at(w->cgroup, opt.threshold_bytes ? "memory.usage_in_bytes" : "memory.oom_control",
			     O_RDONLY);
	if (target < 0)
		return target;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	char line[96];
	if (opt.threshold_bytes)
		snprintf(line, sizeof(line), "%d %d %llu", w->efd, target,
			 (unsigned long long)opt.threshold_bytes);
	else
		snprintf(line, sizeof(line), "%d %d", w->efd, target);
	int r = w->efd < 0 ? -errno : write_at(w->cgroup, "cgroup.event_control", line);
	close(target);
	if (r < 0)
		return r;
	return opt.threshold_bytes ? 0 : write_at(w->cgroup, "memory.oom_control", "1");
}

/* Kills every process listed in the cgroup.  cgroup.procs is opened for each
 * read: v1 keeps the pid list of an open file for a second, so re-reading an
 * fd kept open would show processes that are long gone. */
static void raw_kill_all(struct raw_watch *w)
{
	char buf[4096];
	int fd = open_at(w->cgroup, "cgroup.procs", O_RDONLY);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		kill((pid_t)pid, SIGKILL);
		p = end;
		while (*p == '\n')
			p++;
	}
}

static int raw_setup(struct raw_watch *ws, unsigned n, int epfd)
{
	for (unsigned i = 0; i < n; i++) {
		char buf[256];
		ws[i].efd = -1;
		snprintf(ws[i].cgroup, sizeof(ws[i].cgroup), "%s", cgroup_name(i, buf, sizeof(buf)));
		int r = raw_register(&ws[i]);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
		if (r == 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, ws[i].efd, &ev) < 0)
			r = -errno;
		if (r < 0) {
			fprintf(stderr, "watcher: %s: %s\n", ws[i].cgroup, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int run_raw(void)
{
	unsigned n = n_watches();
	struct raw_watch *ws = calloc(n, sizeof(*ws));
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (!ws || epfd < 0)
		return 1;
	if (opt.reserve && write_at(opt.reserve, "cgroup.procs", pid) < 0)
		fprintf(stderr, "watcher: cannot enter %s\n", opt.reserve);
	int r = raw_setup(ws, n, epfd);
	maybe_realtime();
	if (r >= 0 && mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		fprintf(stderr, "watcher: mlockall: %s\n", strerror(errno));
	if (r >= 0) {
		printf("ready %d 0\n", (int)getpid());
		fflush(stdout);
	}
	while (r >= 0 && !stop) {
		struct epoll_event evs[64];
		int k = epoll_wait(epfd, evs, 64, -1);
		for (int i = 0; i < k; i++) {
			struct raw_watch *w = &ws[evs[i].data.u32];
			uint64_t count;
			if (read(w->efd, &count, sizeof(count)) != sizeof(count))
				continue;
			uint64_t t = now_ns();
			mark_entry(t, t);
			raw_kill_all(w);
		}
	}
	for (unsigned i = 0; i < n && !opt.threshold_bytes; i++)
		(void)write_at(ws[i].cgroup, "memory.oom_control", "0");
	return 0;
}

/* ------------------------------------------------------------ main */

static struct bench_stamp *map_stamp(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = mmap(NULL, sizeof(struct bench_stamp), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"raw", no_argument, NULL, 'r'},
	    {"threshold", required_argument, NULL, 't'},
	    {"delay", required_argument, NULL, 'd'},
	    {"kill-wait", required_argument, NULL, 'k'},
	    {"stamp", required_argument, NULL, 's'},
	    {"reserve", required_argument, NULL, 'R'},
	    {"count", required_argument, NULL, 'n'},
	    {"rt", no_argument, NULL, 'T'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.raw = true;
			break;
		case 't':
			opt.threshold_bytes = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			opt.delay_ms = strtoull(optarg, NULL, 10);
			break;
		case 'k':
			opt.kill_wait_ms = atoi(optarg);
			break;
		case 's':
			opt.stamp_path = optarg;
			break;
		case 'R':
			opt.reserve = optarg;
			break;
		case 'n':
			opt.count = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'T':
			opt.rt = true;
			break;
		default:
			return -1;
		}
	}
	opt.cgroups = argv + optind;
	opt.n_cgroups = (unsigned)(argc - optind);
	return opt.n_cgroups == 0 || (opt.count && opt.n_cgroups != 1) ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv) < 0) {
		fprintf(stderr,
			"usage: %s [--raw] [--threshold BYTES] [--delay MS] [--kill-wait MS] "
			"[--stamp FILE] [--reserve CGROUP] [--count N] [--rt] CGROUP...\n",
			argv[0]);
		return 2;
	}
	if (opt.stamp_path && !(stamp = map_stamp(opt.stamp_path))) {
		fprintf(stderr, "watcher: cannot map %s\n", opt.stamp_path);
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return opt.raw ? run_raw() : run_oomkit();
}
