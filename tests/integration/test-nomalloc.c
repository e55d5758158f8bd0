/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-nomalloc.c - nothing between a kernel OOM event and a completed
 * action calls malloc.  This program replaces malloc and its relatives for
 * the whole process (liboomkit is a shared library, so its calls resolve
 * here too) and counts every call made while oomkit_dispatch() runs.  The
 * handler does what a real one does: lists the processes (into an array and
 * with a walk), reads each one's memory, places its victim, reads the
 * memcg's counters and memory.stat, reads its victim's whole command line
 * and executable (what oomkitd's cmdline: and exe: rules test) and whether its
 * cgroup is root's to write (a cgroup: protect rule's test), writes a
 * JSON report, kills its victim and a whole sub-cgroup.  One process of the
 * cgroup has an exited leader, read through a live thread of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "oomkit.h"
#include "testlib.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile int armed;
static volatile unsigned long allocations_while_armed;

static void count(void)
{
	if (armed)
		allocations_while_armed++;
}

void *malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	count();
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}

void *memalign(size_t al, size_t n)
{
	count();
	return __libc_memalign(al, n);
}

void *aligned_alloc(size_t al, size_t n)
{
	count();
	return __libc_memalign(al, n);
}

int posix_memalign(void **ret, size_t al, size_t n)
{
	count();
	void *p = __libc_memalign(al, n);
	if (!p)
		return ENOMEM;
	*ret = p;
	return 0;
}

void free(void *p)
{
	__libc_free(p);
}

struct rec {
	int handled;
	int report_result;
	int kill_result;
	int walk_result, proc_walk_result, in_cgroup_result, kill_cgroup_result, cmdline_result, exe_result,
	    swap_result;
	int writable_root, writable_other; /* oomkitd's test of a cgroup: protect rule */
	char cmdline[4096], exe[4096];
	pid_t victim, walked_victim, proc_walked_victim;
	int report_fd;
	const char *extra; /* a sub-cgroup the handler kills whole */
};

static int find_largest(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct oomkit_process *largest = userdata, p;
	if (oomkit_process_info(ctx, e->pid, &p) == 0 && p.rss_anon_kib >= largest->rss_anon_kib)
		*largest = p;
	return 0;
}

static enum oomkit_verdict handler(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	static pid_t pids[256];
	struct rec *r = userdata;
	struct oomkit_process p, largest = {0};
	struct oomkit_cgroup_memory m;
	struct oomkit_system_memory sys;
	uint64_t rss;

	if (ev->kind != OOMKIT_EVENT_OOM || !ev->own || !ev->under_oom)
		return OOMKIT_WAIT;
	int n = oomkit_cgroup_pids(ctx, ev->cgroup, true, pids, 256);
	for (int i = 0; i < n; i++)
		if (oomkit_process_info(ctx, pids[i], &p) == 0 && p.rss_anon_kib >= largest.rss_anon_kib)
			largest = p;
	struct oomkit_process walked = {0};
	r->walk_result =
	    oomkit_cgroup_walk_pids(ctx, ev->cgroup, OOMKIT_WALK_RECURSIVE, find_largest, &walked);
	r->walked_victim = walked.pid;
	/* The bounded walk past its deadline, and the walk through /proc. */
	walked = (struct oomkit_process){0};
	(void)oomkit_cgroup_walk_pids_until(ctx, ev->cgroup, OOMKIT_WALK_RECURSIVE, 1, find_largest, &walked);
	walked = (struct oomkit_process){0};
	r->proc_walk_result = oomkit_cgroup_walk_pids(
	    ctx, ev->cgroup, OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC, find_largest, &walked);
	r->proc_walked_victim = walked.pid;
	r->in_cgroup_result = oomkit_process_in_cgroup(ctx, largest.pid, ev->cgroup);
	r->cmdline_result = oomkit_process_cmdline(ctx, largest.pid, r->cmdline, sizeof(r->cmdline));
	r->exe_result = oomkit_process_exe(ctx, largest.pid, r->exe, sizeof(r->exe));
	r->writable_root = oomkit_cgroup_procs_writable(ctx, ev->cgroup, 0);
	r->writable_other = oomkit_cgroup_procs_writable(ctx, ev->cgroup, 65534);
	(void)oomkit_cgroup_memory(ctx, ev->cgroup, &m);
	(void)oomkit_cgroup_stat(ctx, ev->cgroup, "rss", &rss);
	(void)oomkit_system_memory(ctx, &sys);
	/* The machine rule's reading of swap (oomkitd's lowmem.c). */
	struct oomkit_system_swap sw;
	r->swap_result = oomkit_system_swap(ctx, &sw);
	struct oomkit_decision d = {
	    .action = "kill", .reason = "the largest process", .victim_pid = largest.pid};
	r->report_result = oomkit_write_report(ctx, r->report_fd, ev, &d);
	r->victim = largest.pid;
	r->kill_result = oomkit_kill(ctx, largest.pid, largest.start_time, 5000);
	r->kill_cgroup_result = oomkit_kill_cgroup(ctx, r->extra, 5000);
	r->handled++;
	return OOMKIT_RESOLVED;
}

static void *hold_and_wait(void *arg)
{
	size_t len = 2u << 20;
	char *m = arg;

	for (size_t off = 0; off < len; off += 4096)
		m[off] = 1;
	for (;;)
		pause();
	return NULL;
}

/* A process in rel whose leader called pthread_exit() while a thread holds
 * 2 MiB: the library reads it through /proc/PID/task, with no malloc. */
static pid_t spawn_exited_leader(const char *rel)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char self[16];
		pthread_t t;
		static char mem[2u << 20];
		snprintf(self, sizeof(self), "%d", (int)getpid());
		if (tl_write(rel, "cgroup.procs", self) < 0 ||
		    pthread_create(&t, NULL, hold_and_wait, mem) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* The leader's exit is the event: its state turns Z. */
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		assert_true(n > 0);
		buf[n] = '\0';
		const char *st = strrchr(buf, ')');
		assert_non_null(st);
		if (st[2] == 'Z')
			return pid;
		sched_yield();
	}
}

static void test_no_malloc_on_handler_path(void **state)
{
	(void)state;
	const char *cg = tl_cgroup("nomalloc", 48 * TL_MIB);
	struct oomkit_options o;
	oomkit_ctx *ctx;
	oomkit_watch *w;
	struct rec r = {.report_fd = open("/dev/null", O_WRONLY | O_CLOEXEC),
			.extra = tl_cgroup("nomalloc/extra", 0)};

	oomkit_options_init(&o);
	o.mlock = true;
	/* Kill the sub-cgroup in rounds: a freezer cgroup would be made outside our parent. */
	o.freezer_root = "";
	o.max_pids = 256;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_int_equal(oomkit_watch_oom(ctx, cg, 0, handler, &r, &w), 0);
	assert_int_equal(oomkit_take_over(ctx, w, 10000), 0);
	pid_t a = tl_spawn_sleeper(cg), b = tl_spawn_sleeper(cg), c = tl_spawn_sleeper(r.extra);
	pid_t z = spawn_exited_leader(cg);
	pid_t hog = tl_spawn_hog(cg, 96, 1024, 0);

	for (int i = 0;
	     i < 1000 && (r.handled == 0 || tl_read_key(cg, "memory.oom_control", "under_oom") != 0); i++) {
		armed = 1;
		int d = oomkit_dispatch(ctx, 20);
		armed = 0;
		assert_true(d >= 0);
	}
	printf("allocations between event and completed action: %lu\n", allocations_while_armed);
	int st;
	assert_int_equal(r.handled, 1);
	assert_int_equal(r.victim, hog);
	assert_int_equal(r.kill_result, 0);
	assert_int_equal(r.walk_result, 5);
	assert_int_equal(r.walked_victim, hog);
	assert_int_equal(r.proc_walk_result, 5); /* the exited leader's process too */
	assert_int_equal(r.proc_walked_victim, hog);
	assert_int_equal(r.in_cgroup_result, 1);
	/* The test's cgroup is root's, 0644: root's to write, not nobody's. */
	assert_int_equal(r.writable_root, 1);
	assert_int_equal(r.writable_other, 0);
	/* The hog runs as "HOG 96 1024 0", from its own path. */
	char want[4096];
	snprintf(want, sizeof(want), "%s 96 1024 0", tl_hog_path());
	assert_int_equal(r.cmdline_result, (int)strlen(want));
	assert_int_equal(r.swap_result, 0);
	assert_string_equal(r.cmdline, want);
	char *real = realpath(tl_hog_path(), NULL);
	assert_non_null(real);
	assert_int_equal(r.exe_result, (int)strlen(real));
	assert_string_equal(r.exe, real);
	free(real);
	assert_int_equal(r.kill_cgroup_result, 1);
	st = tl_wait_exit(c, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_true(r.report_result > 0); /* bytes written */
	assert_int_equal(allocations_while_armed, 0);
	assert_true(tl_alive(a) && tl_alive(b));
	st = tl_wait_exit(hog, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	kill(z, SIGKILL);
	st = tl_wait_exit(z, 5000);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	oomkit_free(ctx);
	close(r.report_fd);
}

/* The counter itself works: an allocation while armed is seen. */
static void test_counter_counts(void **state)
{
	(void)state;
	unsigned long before = allocations_while_armed;
	armed = 1;
	void *volatile p = malloc(32);
	armed = 0;
	free(p);
	assert_int_equal(allocations_while_armed, before + 1);
	allocations_while_armed = before;
}

int main(void)
{
	tl_require_kernel();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counter_counts),
	    cmocka_unit_test(test_no_malloc_on_handler_path),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	tl_cleanup();
	return failed ? 1 : 0;
}
