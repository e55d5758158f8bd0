/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-proc.c - the /proc readers of lib/proc.c against a fixture /proc tree
 * in a temporary directory (hostile comms, missing keys, processes that
 * vanish between two reads), and against the real /proc for this process
 * and a child of it.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[PATH_MAX];
/* The child of test_real_exited_leader(), killed by teardown_real() if
 * the test fails before it does. */
static pid_t real_child;

/* A /proc/PID/stat line with the given comm, ppid and start time: every
 * field up to 52 is present, as on a current kernel. */
static void stat_line(char *buf, size_t len, int pid, const char *comm, int ppid, unsigned long long start)
{
	snprintf(buf, len,
		 "%d (%s) S %d %d %d 0 -1 4194560 1000 0 0 0 10 5 0 0 20 0 1 0 %llu 10000000 500 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 pid, comm, ppid, pid, pid, start);
}

static void put(const char *rel, const char *data, size_t len)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put_str(const char *rel, const char *s)
{
	put(rel, s, strlen(s));
}

static void mkdir_rel(const char *rel)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static const char status_full[] = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\nPid:\t100\n"
				  "PPid:\t1\nUid:\t1000\t1001\t1002\t1003\nGid:\t1000\t1000\t1000\t1000\n"
				  "VmRSS:\t    6000 kB\nRssAnon:\t    4096 kB\nRssFile:\t    1800 kB\n"
				  "RssShmem:\t     104 kB\nVmSwap:\t      12 kB\nThreads:\t1\n";

/* One fixture process (or thread) directory, at dir. */
static void fixture_at(const char *dir, int pid, const char *comm, int ppid, unsigned long long start,
		       const char *status, const char *adj, const char *cmdline, size_t cmdline_len,
		       const char *cgroup)
{
	char rel[128], line[1024];

	mkdir_rel(dir);
	stat_line(line, sizeof(line), pid, comm, ppid, start);
	snprintf(rel, sizeof(rel), "%s/stat", dir);
	put_str(rel, line);
	snprintf(rel, sizeof(rel), "%s/status", dir);
	put_str(rel, status);
	snprintf(rel, sizeof(rel), "%s/oom_score_adj", dir);
	put_str(rel, adj);
	snprintf(rel, sizeof(rel), "%s/cmdline", dir);
	put(rel, cmdline, cmdline_len);
	snprintf(rel, sizeof(rel), "%s/cgroup", dir);
	put_str(rel, cgroup);
}

static void fixture_process(int pid, const char *comm, int ppid, unsigned long long start, const char *status,
			    const char *adj, const char *cmdline, size_t cmdline_len, const char *cgroup)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "proc/%d", pid);
	fixture_at(dir, pid, comm, ppid, start, status, adj, cmdline, cmdline_len, cgroup);
}

/* Rewrites dir/stat with state Z, as an exited thread's. */
static void make_zombie(const char *dir, int pid, const char *comm, unsigned long long start)
{
	char rel[128], line[1024];

	stat_line(line, sizeof(line), pid, comm, 1, start);
	char *state = strstr(line, ") S ");
	assert_non_null(state);
	state[2] = 'Z';
	snprintf(rel, sizeof(rel), "%s/stat", dir);
	put_str(rel, line);
}

static const char status_zombie[] = "Name:\thog\nState:\tZ (zombie)\nTgid:\t110\nPid:\t110\nPPid:\t1\n"
				    "Uid:\t1000\t1000\t1000\t1000\nThreads:\t3\n";
static const char status_thread[] = "Name:\thog\nState:\tR (running)\nTgid:\t110\nPid:\t112\nPPid:\t1\n"
				    "Uid:\t1000\t1000\t1000\t1000\nVmRSS:\t  204800 kB\n"
				    "RssAnon:\t  204000 kB\nRssFile:\t     800 kB\nRssShmem:\t       0 kB\n"
				    "VmSwap:\t       0 kB\nSigCgt:\t0000000000004000\nThreads:\t3\n";

/* A leader that called pthread_exit() while its threads run on: the
 * leader is a zombie whose cgroup reads the root and that has no memory;
 * thread 111 exited too, thread 112 is alive in the job with the memory.
 * Process 113 is a plain zombie: every thread has exited. */
static void fixture_exited_leader(void)
{
	fixture_process(110, "hog", 1, 11, status_zombie, "300\n", "", 0, "3:memory:/\n");
	make_zombie("proc/110", 110, "hog", 11);
	mkdir_rel("proc/110/task");
	fixture_at("proc/110/task/110", 110, "hog", 1, 11, status_zombie, "300\n", "", 0, "3:memory:/\n");
	make_zombie("proc/110/task/110", 110, "hog", 11);
	fixture_at("proc/110/task/111", 111, "hog", 1, 12, status_zombie, "300\n", "", 0, "3:memory:/\n");
	make_zombie("proc/110/task/111", 111, "hog", 12);
	fixture_at("proc/110/task/112", 112, "hog-alloc", 1, 13, status_thread, "300\n", BUF("hog\0-x\0"),
		   "12:freezer:/f\n3:memory:/jobs/batch/deep\n");
	char target[PATH_MAX + 32];
	snprintf(target, sizeof(target), "%s/proc/110/task/112/exe", root);
	assert_int_equal(symlink("/usr/bin/hog", target), 0);

	fixture_process(113, "gone", 1, 14, status_zombie, "0\n", "", 0, "3:memory:/\n");
	make_zombie("proc/113", 113, "gone", 14);
	mkdir_rel("proc/113/task");
	fixture_at("proc/113/task/113", 113, "gone", 1, 14, status_zombie, "0\n", "", 0, "3:memory:/\n");
	make_zombie("proc/113/task/113", 113, "gone", 14);
}

static const char cgroup_v1[] = "12:freezer:/\n11:pids:/user.slice\n4:cpu,cpuacct:/\n3:memory:/jobs/web\n"
				"1:name=systemd:/user.slice\n0::/user.slice/session-1.scope\n";

static int setup_fixture(void **state)
{
	static char big[100000];
	oomkit_ctx *ctx;
	struct oomkit_options o;

	snprintf(root, sizeof(root), "/tmp/oomkit-test-proc-XXXXXX");
	assert_non_null(mkdtemp(root));
	mkdir_rel("proc");
	mkdir_rel("memory");

	fixture_process(100, "sleep", 1, 123456, status_full, "-500\n", BUF("sleep\0001000\0"), cgroup_v1);
	/* A comm that looks like the fields after it. */
	fixture_process(101, "a) Z (", 7, 987654, status_full, "0\n", BUF("x\0"), cgroup_v1);
	/* A kernel thread: no memory lines, empty cmdline, root cgroup. */
	fixture_process(102, "kworker/0:1", 2, 5, "Name:\tkworker/0:1\nUid:\t0\t0\t0\t0\n", "0\n", "", 0,
			"3:memory:/\n");
	/* No Uid line: malformed. */
	fixture_process(103, "nouid", 1, 7, "Name:\tnouid\nRssAnon:\t1 kB\n", "0\n", BUF("nouid\0"),
			cgroup_v1);
	/* Malformed oom_score_adj. */
	fixture_process(104, "badadj", 1, 8, status_full, "lots\n", BUF("badadj\0"), cgroup_v1);
	/* A command line far longer than what is kept, with a control byte. */
	memset(big, 'a', sizeof(big));
	big[0] = 'b';
	big[1] = '\n';
	big[2] = '\0';
	fixture_process(105, "long", 1, 9, status_full, "1000\n", big, sizeof(big), "3:cpu:/\n");
	/* A process that exited after its directory was opened: the directory
	 * is there, its files are not. */
	mkdir_rel("proc/106");
	/* A command line that cannot be read (as when the page holding it
	 * cannot be charged to a memcg under OOM): the rest still counts. */
	fixture_process(108, "nocmd", 1, 10, status_full, "0\n", "", 0, cgroup_v1);
	char cmdline[PATH_MAX + 32];
	snprintf(cmdline, sizeof(cmdline), "%s/proc/108/cmdline", root);
	assert_int_equal(unlink(cmdline), 0);
	mkdir_rel("proc/108/cmdline");
	fixture_exited_leader();

	oomkit_options_init(&o);
	char proc[PATH_MAX + 8], memory[PATH_MAX + 8];
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(memory, sizeof(memory), "%s/memory", root);
	o.proc_root = proc;
	o.memory_root = memory;
	o.cgroup2_root = "";
	o.freezer_root = "";
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	*state = ctx;
	return 0;
}

static int teardown_fixture(void **state)
{
	char cmd[PATH_MAX + 16];
	oomkit_free(*state);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_info_full(void **state)
{
	struct oomkit_process p;

	assert_int_equal(oomkit_process_info(*state, 100, &p), 0);
	assert_int_equal(p.pid, 100);
	assert_int_equal(p.ppid, 1);
	assert_int_equal(p.uid, 1000);
	assert_string_equal(p.comm, "sleep");
	assert_string_equal(p.cmdline, "sleep 1000");
	assert_int_equal(p.start_time, 123456);
	assert_int_equal(p.rss_anon_kib, 4096);
	assert_int_equal(p.rss_file_kib, 1800);
	assert_int_equal(p.rss_shmem_kib, 104);
	assert_int_equal(p.swap_kib, 12);
	assert_int_equal(p.oom_score_adj, -500);
}

static void test_info_hostile_comm(void **state)
{
	struct oomkit_process p;
	struct oomkit__proc_stat st;

	assert_int_equal(oomkit_process_info(*state, 101, &p), 0);
	assert_string_equal(p.comm, "a) Z (");
	assert_int_equal(p.ppid, 7);
	assert_int_equal(p.start_time, 987654);
	assert_int_equal(oomkit__proc_stat(*state, 101, &st), 0);
	/* The state is the field after the last ')', not the 'Z' inside the comm. */
	assert_int_equal(st.state, 'S');
	assert_string_equal(st.comm, "a) Z (");
}

static void test_info_kernel_thread(void **state)
{
	struct oomkit_process p;

	assert_int_equal(oomkit_process_info(*state, 102, &p), 0);
	assert_string_equal(p.comm, "kworker/0:1");
	assert_string_equal(p.cmdline, "");
	assert_int_equal(p.uid, 0);
	assert_int_equal(p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib + p.swap_kib, 0);
}

/* On failure the out-parameter is left exactly as it was. */
static void expect_fail_untouched(oomkit_ctx *ctx, pid_t pid, int want)
{
	struct oomkit_process p, before;
	char row[32];

	memset(&p, 0xa5, sizeof(p));
	before = p;
	snprintf(row, sizeof(row), "pid %d", (int)pid);
	EXPECT_INT(row, oomkit_process_info(ctx, pid, &p), want);
	if (memcmp(&p, &before, sizeof(p)) != 0)
		fail_msg("%s: ret_proc written on failure", row);
}

static void test_info_failures(void **state)
{
	expect_fail_untouched(*state, 103, -EINVAL); /* no Uid */
	expect_fail_untouched(*state, 104, -EINVAL); /* bad oom_score_adj */
	expect_fail_untouched(*state, 106, -ESRCH);  /* files gone */
	expect_fail_untouched(*state, 107, -ESRCH);  /* directory gone */
	expect_fail_untouched(*state, 0, -EINVAL);
	expect_fail_untouched(*state, -1, -EINVAL);
	assert_int_equal(oomkit_process_info(*state, 100, NULL), -EINVAL);
}

static void test_info_unreadable_cmdline(void **state)
{
	struct oomkit_process p;

	assert_int_equal(oomkit_process_info(*state, 108, &p), 0);
	assert_string_equal(p.comm, "nocmd");
	assert_string_equal(p.cmdline, "");
	assert_int_equal(p.rss_anon_kib, 4096);
}

static void test_info_long_cmdline(void **state)
{
	struct oomkit_process p;
	char want[sizeof(p.cmdline)];

	assert_int_equal(oomkit_process_info(*state, 105, &p), 0);
	memset(want, 'a', sizeof(want));
	want[0] = 'b';
	want[1] = '?';
	want[2] = ' ';
	want[sizeof(want) - 1] = 0;
	assert_string_equal(p.cmdline, want);
	assert_int_equal(p.oom_score_adj, 1000);
}

static void test_process_cgroup(void **state)
{
	char buf[64], small[8];

	assert_int_equal(oomkit_process_cgroup(*state, 100, buf, sizeof(buf)), (int)strlen("jobs/web"));
	assert_string_equal(buf, "jobs/web");
	assert_int_equal(oomkit_process_cgroup(*state, 102, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	memcpy(small, "untouch", 8);
	assert_int_equal(oomkit_process_cgroup(*state, 100, small, sizeof(small)), -ENAMETOOLONG);
	assert_string_equal(small, "untouch");
	assert_int_equal(oomkit_process_cgroup(*state, 105, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(oomkit_process_cgroup(*state, 106, buf, sizeof(buf)), -ESRCH);
	assert_int_equal(oomkit_process_cgroup(*state, 107, buf, sizeof(buf)), -ESRCH);
	/* Other controllers' lines, for the freezer-based kill. */
	assert_int_equal(oomkit__proc_cgroup(*state, 100, "freezer", buf, sizeof(buf)), 0);
	assert_int_equal(oomkit__proc_cgroup(*state, 100, "pids", buf, sizeof(buf)),
			 (int)strlen("user.slice"));
	assert_int_equal(oomkit__proc_cgroup(*state, 100, NULL, buf, sizeof(buf)),
			 (int)strlen("user.slice/session-1.scope"));
	assert_string_equal(buf, "user.slice/session-1.scope");
}

/* A process is alive while any of its threads is: its memory, cgroup,
 * command line and executable come from a live thread, its identity from
 * the leader. */
static void test_exited_leader(void **state)
{
	struct oomkit_process p;
	char buf[256];

	assert_int_equal(oomkit_process_info(*state, 110, &p), 0);
	assert_int_equal(p.pid, 110);
	assert_int_equal(p.start_time, 11);
	assert_string_equal(p.comm, "hog");
	assert_int_equal(p.uid, 1000);
	assert_int_equal(p.rss_anon_kib, 204000);
	assert_int_equal(p.rss_file_kib, 800);
	assert_int_equal(p.oom_score_adj, 300);
	assert_string_equal(p.cmdline, "hog -x");
	assert_int_equal(p.sig_caught, 1u << 14);
	assert_int_equal(oomkit_process_cgroup(*state, 110, buf, sizeof(buf)),
			 (int)strlen("jobs/batch/deep"));
	assert_string_equal(buf, "jobs/batch/deep");
	assert_int_equal(oomkit__proc_cgroup(*state, 110, "freezer", buf, sizeof(buf)), 1);
	assert_int_equal(oomkit_process_in_cgroup(*state, 110, "jobs/batch"), 1);
	assert_int_equal(oomkit_process_cmdline(*state, 110, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "hog -x");
	assert_int_equal(oomkit_process_exe(*state, 110, buf, sizeof(buf)), (int)strlen("/usr/bin/hog"));
	assert_string_equal(buf, "/usr/bin/hog");

	struct oomkit__proc_stat leader, live;
	int fd = oomkit__proc_open_live(*state, 110, &leader, &live);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(leader.state, 'Z');
	assert_int_equal(live.pid, 112);
	assert_int_not_equal(live.state, 'Z');

	/* Every thread gone: a zombie, read as it is, holding nothing. */
	assert_int_equal(oomkit_process_info(*state, 113, &p), 0);
	assert_int_equal(p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib, 0);
	assert_int_equal(oomkit_process_cgroup(*state, 113, buf, sizeof(buf)), 0);
	fd = oomkit__proc_open_live(*state, 113, NULL, &live);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(live.state, 'Z');
}

/* ------------------------------------------------------------ real /proc */

static int setup_real(void **state)
{
	oomkit_ctx *ctx;
	struct oomkit_options o;

	oomkit_options_init(&o);
	/* A real /proc, but no cgroup hierarchy is needed: any directory will do. */
	o.memory_root = "/";
	o.cgroup2_root = "";
	o.freezer_root = "";
	o.guardian = false;
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	*state = ctx;
	return 0;
}

static int teardown_real(void **state)
{
	if (real_child > 0) {
		kill(real_child, SIGKILL);
		waitpid(real_child, NULL, 0);
	}
	oomkit_free(*state);
	return 0;
}

/* Field 22 of /proc/PID/stat, read independently of the library. */
static unsigned long long start_time_of(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	assert_non_null(p);
	unsigned long long v = 0;
	/* After ')' come fields 3..; skip to field 22. */
	for (int field = 3; field <= 22; field++) {
		p = strchr(p + 1, ' ');
		assert_non_null(p);
	}
	v = strtoull(p + 1, NULL, 10);
	return v;
}

static void test_real_self(void **state)
{
	struct oomkit_process p;
	char want_comm[16];

	assert_int_equal(oomkit_process_info(*state, getpid(), &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.ppid, getppid());
	assert_int_equal(p.uid, getuid());
	snprintf(want_comm, sizeof(want_comm), "%s", program_invocation_short_name);
	assert_string_equal(p.comm, want_comm);
	assert_int_equal(p.start_time, start_time_of(getpid()));
	assert_true(p.rss_anon_kib > 0);
	assert_non_null(strstr(p.cmdline, "test-proc"));
}

static void *hold_memory(void *arg)
{
	size_t len = 16u << 20;
	/* Mapped and touched by hand: a sanitizer's allocator and memset do
	 * not leave it to chance whether the pages are resident. */
	volatile char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	if (m == MAP_FAILED)
		_exit(1);
	for (size_t off = 0; off < len; off += 4096)
		m[off] = 1;
	/* Says it holds the memory, then waits to be killed. */
	if (write(3, "x", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* A real process whose leader called pthread_exit() after starting a
 * thread that holds 16 MiB: the library reads it through that thread. */
static void test_real_exited_leader(void **state)
{
	int fds[2];
	char c, self_cg[512], cg[512];

	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pthread_t t;
		/* Not the test runner's output: it waits for that to close. */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2 || dup2(fds[1], 3) != 3 ||
		    pthread_create(&t, NULL, hold_memory, NULL) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	real_child = child;
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	/* The leader's exit is the event: wait for it to show as a zombie. */
	struct oomkit__proc_stat leader, live;
	for (;;) {
		int fd = oomkit__proc_open_live(*state, child, &leader, &live);
		assert_true(fd >= 0);
		close(fd);
		if (leader.state == 'Z')
			break;
		sched_yield();
	}
	assert_int_not_equal(live.pid, child);
	assert_int_not_equal(live.state, 'Z');

	struct oomkit_process p;
	assert_int_equal(oomkit_process_info(*state, child, &p), 0);
	assert_int_equal(p.pid, child);
	assert_int_equal(p.start_time, start_time_of(child));
	assert_true(p.rss_anon_kib >= 16 * 1024);
	assert_non_null(strstr(p.cmdline, "test-proc"));
	assert_true(oomkit_process_cgroup(*state, getpid(), self_cg, sizeof(self_cg)) >= 0);
	assert_true(oomkit_process_cgroup(*state, child, cg, sizeof(cg)) >= 0);
	assert_string_equal(cg, self_cg);
	assert_true(oomkit_process_exe(*state, child, cg, sizeof(cg)) > 0);

	/* Killed through its leader's pid, as the daemon kills: it goes. */
	assert_int_equal(oomkit_kill(*state, child, p.start_time, -1), 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	real_child = 0;
}

static void test_real_vanished(void **state)
{
	struct oomkit_process p;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	/* A zombie still has its /proc entry, without memory. */
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(oomkit_process_info(*state, child, &p), 0);
	assert_int_equal(p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib, 0);
	uint64_t zombie_start = p.start_time;
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* Reaped: gone, unless the pid was reused in between by a new process. */
	int r = oomkit_process_info(*state, child, &p);
	if (r == 0)
		assert_int_not_equal(p.start_time, zombie_start);
	else
		assert_int_equal(r, -ESRCH);
}

int main(void)
{
	const struct CMUnitTest fixture[] = {
	    cmocka_unit_test(test_info_full),	       cmocka_unit_test(test_info_hostile_comm),
	    cmocka_unit_test(test_info_kernel_thread), cmocka_unit_test(test_info_failures),
	    cmocka_unit_test(test_info_long_cmdline),  cmocka_unit_test(test_info_unreadable_cmdline),
	    cmocka_unit_test(test_process_cgroup),     cmocka_unit_test(test_exited_leader),
	};
	const struct CMUnitTest real[] = {
	    cmocka_unit_test(test_real_self),
	    cmocka_unit_test(test_real_vanished),
	    cmocka_unit_test(test_real_exited_leader),
	};
	int failed = cmocka_run_group_tests_name("proc fixture", fixture, setup_fixture, teardown_fixture);
	return failed + cmocka_run_group_tests_name("proc real", real, setup_real, teardown_real);
}
