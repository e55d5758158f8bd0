/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-report.c - oomkit_write_report() on fixture cgroup and /proc trees:
 * the output is checked by a strict JSON validator (RFC 8259, UTF-8
 * included), and for what it says: every process, the escaped hostile
 * strings, vanished processes counted, every memory.stat key, a report
 * larger than the context's buffer (so flushed part by part), and write errors.
 */
#include "unit.h"
#include "../../helpers/jsoncheck.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The cgroup's name holds a quote, a backslash, a valid two-byte UTF-8
 * character and a byte that is not UTF-8. */
#define CG "job \"q\" \\ \xc3\xa9 \xff"
#define N_CHILDREN 200

static char root[PATH_MAX];

static void test_validator(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		bool ok;
	} rows[] = {
	    {"{}", true},
	    {"{\"a\":[1,-2.5e+3,true,false,null,\"x\\u00ff\\n\"]}", true},
	    {"{\"a\":1,}", false},
	    {"[1 2]", false},
	    {"\"\n\"", false},		 /* raw control byte */
	    {"\"\xff\"", false},	 /* not UTF-8 */
	    {"\"\xc0\xaf\"", false},	 /* overlong */
	    {"\"\xed\xa0\x80\"", false}, /* surrogate */
	    {"\"\xc3\xa9\"", true},
	    {"\"\\x\"", false},
	    {"01", false},
	    {"{\"a\":1}{}", false},
	};
	for (size_t i = 0; i < N_ELEMENTS(rows); i++)
		EXPECT_INT(rows[i].in, json_valid(rows[i].in, strlen(rows[i].in)), rows[i].ok);
}

/* -------------------------------------------------------------- fixture */

static void put(const char *rel, const char *data)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static void mkdir_rel(const char *rel)
{
	char path[PATH_MAX * 2];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (mkdir(path, 0755) != 0)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

static void fixture_process(int pid, const char *comm, const char *cgroup)
{
	char rel[64], line[1024];

	snprintf(rel, sizeof(rel), "proc/%d", pid);
	mkdir_rel(rel);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(line, sizeof(line),
		 "%d (%s) S 1 %d %d 0 -1 4194560 1000 0 0 0 10 5 0 0 20 0 1 0 %d 10000000 500 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 pid, comm, pid, pid, 1000 + pid);
	put(rel, line);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	snprintf(line, sizeof(line),
		 "Name:\tx\nUid:\t%d\t0\t0\t0\nRssAnon:\t%d kB\nRssFile:\t2 kB\nRssShmem:\t3 kB\n"
		 "VmSwap:\t4 kB\n",
		 pid, pid * 10);
	put(rel, line);
	snprintf(rel, sizeof(rel), "proc/%d/oom_score_adj", pid);
	put(rel, "-17\n");
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", pid);
	put(rel, "prog");
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	snprintf(line, sizeof(line), "3:memory:/%s\n0::/\n", cgroup);
	put(rel, line);
}

static void fixture_memcg(const char *rel, const char *procs)
{
	char path[PATH_MAX];
	static const struct {
		const char *file, *value;
	} files[] = {
	    {"memory.usage_in_bytes", "67100672\n"},
	    {"memory.limit_in_bytes", "9223372036854771712\n"},
	    {"memory.max_usage_in_bytes", "67108864\n"},
	    {"memory.failcnt", "42\n"},
	    {"memory.oom_control", "oom_kill_disable 1\nunder_oom 1\noom_kill 3\n"},
	    {"memory.stat", "cache 4096\nrss 67000000\nweird value\ntotal_rss 123\nhierarchical_memory_limit "
			    "9223372036854771712\n"},
	};
	mkdir_rel(rel);
	for (size_t i = 0; i < N_ELEMENTS(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", rel, files[i].file);
		put(path, files[i].value);
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", rel);
	put(path, procs);
}

static int setup(void **state)
{
	static char procs[N_CHILDREN * 8];
	char proc[PATH_MAX + 8], memory[PATH_MAX + 8];
	struct oomkit_options o;
	oomkit_ctx *ctx;
	size_t off = 0;

	snprintf(root, sizeof(root), "/tmp/oomkit-test-report-XXXXXX");
	assert_non_null(mkdtemp(root));
	mkdir_rel("proc");
	mkdir_rel("memory");
	/* 100: plain; 101: a comm with a quote, a newline and a byte that is
	 * not UTF-8; 102: listed but gone; 103: gone between two reads. */
	fixture_memcg("memory/" CG, "100\n101\n102\n103\n");
	fixture_process(100, "plain", CG);
	fixture_process(101, "a\"b\nc\xff", CG);
	mkdir_rel("proc/103");
	/* Enough processes in a child cgroup that the report outgrows the
	 * context's buffer several times. */
	for (int i = 0; i < N_CHILDREN; i++) {
		fixture_process(1000 + i, "child", CG "/kids");
		off += (size_t)snprintf(procs + off, sizeof(procs) - off, "%d\n", 1000 + i);
	}
	fixture_memcg("memory/" CG "/kids", procs);

	oomkit_options_init(&o);
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

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	oomkit_free(*state);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* ---------------------------------------------------------------- tests */

static char out[1 << 20];

/* Writes a report into a memfd and returns it NUL-terminated in out. */
static size_t report(oomkit_ctx *ctx, const struct oomkit_event *ev, const struct oomkit_decision *d)
{
	int fd = memfd_create("report", MFD_CLOEXEC);
	assert_true(fd >= 0);
	int r = oomkit_write_report(ctx, fd, ev, d);
	assert_true(r > 0);
	ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_int_equal(n, r);
	out[n] = 0;
	if (!json_valid(out, (size_t)n))
		fail_msg("report is not valid JSON:\n%s", out);
	return (size_t)n;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned c = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		c++;
	return c;
}

static void expect_contains(const char *needle)
{
	if (!strstr(out, needle))
		fail_msg("report lacks %s:\n%.4000s", needle, out);
}

static void test_report_oom(void **state)
{
	struct oomkit_event ev = {
	    .kind = OOMKIT_EVENT_OOM,
	    .cgroup = CG,
	    .origin = CG,
	    .own = true,
	    .under_oom = true,
	    .usage_bytes = 67100672,
	    .limit_bytes = 64 << 20,
	    .time_ns = 123456789,
	};
	struct oomkit_decision d = {
	    .action = "kill",
	    .reason = "largest \"rss\"\nof\tall \x01 \xc3\x28",
	    .victim_pid = 100,
	};

	size_t n = report(*state, &ev, &d);
	assert_true(n > 2 * OOMKIT__REPORT_BUF_SIZE);
	expect_contains("{\"version\":1,");
	expect_contains("\"event\":{\"kind\":\"oom\",\"cgroup\":\"job \\\"q\\\" \\\\ \xc3\xa9 \\u00ff\"");
	expect_contains("\"own\":true,\"under_oom\":true,\"usage_bytes\":67100672,\"limit_bytes\":67108864");
	expect_contains("\"level\":null,\"time_ns\":123456789}");
	/* The fixture's "no limit" is null, not a huge number. */
	expect_contains("\"limit_bytes\":null,\"max_usage_bytes\":67108864,\"failcnt\":42,\"oom_kill\":3,"
			"\"under_oom\":true,\"oom_kill_disable\":true}");
	expect_contains(
	    "\"memory_stat\":{\"cache\":4096,\"rss\":67000000,\"weird\":\"value\",\"total_rss\":123,"
	    "\"hierarchical_memory_limit\":9223372036854771712}");
	expect_contains(
	    "{\"pid\":100,\"ppid\":1,\"uid\":100,\"comm\":\"plain\",\"cmdline\":\"prog\","
	    "\"cgroup\":\"job \\\"q\\\" \\\\ \xc3\xa9 \\u00ff\",\"start_time\":1100,\"rss_anon_kib\":1000,"
	    "\"rss_file_kib\":2,\"rss_shmem_kib\":3,\"swap_kib\":4,\"oom_score_adj\":-17}");
	expect_contains("\"comm\":\"a\\\"b\\nc\\u00ff\"");
	/* Every process, each once: 2 in the cgroup, N_CHILDREN below it. */
	assert_int_equal(count(out, "{\"pid\":"), 2 + N_CHILDREN);
	assert_int_equal(count(out, "\"pid\":1199,"), 1);
	expect_contains("\"vanished\":2,\"unreadable\":0");
	expect_contains(
	    "\"decision\":{\"action\":\"kill\",\"reason\":\"largest \\\"rss\\\"\\nof\\tall \\u0001 "
	    "\\u00c3(\",\"victim_pid\":100,\"new_limit_bytes\":0}}\n");
}

static void test_report_no_event(void **state)
{
	report(*state, NULL, NULL);
	expect_contains("\"event\":null,\"cgroup\":null,\"decision\":null}");
}

static void test_report_gone_cgroup(void **state)
{
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_GONE, .cgroup = "removed"};
	report(*state, &ev, NULL);
	expect_contains("\"cgroup\":{\"path\":\"removed\",\"error\":\"ENOENT\"}");
	expect_contains("\"memory_stat\":null,\"memory_stat_error\":\"ENOENT\"");
	expect_contains("\"processes\":[],\"processes_error\":\"ENOENT\",\"vanished\":0");
}

/* The wall-clock time is this second (or the next), in UTC. */
static void test_report_time(void **state)
{
	char before[32], after[32];
	struct tm tm;
	time_t t0 = time(NULL);

	report(*state, NULL, NULL);
	time_t t1 = time(NULL);
	strftime(before, sizeof(before), "%Y-%m-%dT%H:%M:%S.", gmtime_r(&t0, &tm));
	strftime(after, sizeof(after), "%Y-%m-%dT%H:%M:%S.", gmtime_r(&t1, &tm));
	const char *p = strstr(out, "\"time_realtime\":\"");
	assert_non_null(p);
	p += strlen("\"time_realtime\":\"");
	if (strncmp(p, before, strlen(before)) != 0 && strncmp(p, after, strlen(after)) != 0)
		fail_msg("time_realtime %.24s, want %s or %s", p, before, after);
	assert_true(p[20] >= '0' && p[20] <= '9' && p[21] >= '0' && p[22] >= '0' && p[23] == 'Z');
}

static void test_report_write_error(void **state)
{
	char path[PATH_MAX + 8];
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM, .cgroup = CG};

	snprintf(path, sizeof(path), "%s/ro", root);
	put("ro", "");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(oomkit_write_report(*state, fd, &ev, NULL), -EBADF);
	close(fd);
	assert_int_equal(oomkit_write_report(*state, -1, &ev, NULL), -EINVAL);
	/* A full disk: /dev/full fails every write with ENOSPC. */
	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		assert_int_equal(oomkit_write_report(*state, fd, &ev, NULL), -ENOSPC);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_validator),	    cmocka_unit_test(test_report_oom),
	    cmocka_unit_test(test_report_no_event), cmocka_unit_test(test_report_gone_cgroup),
	    cmocka_unit_test(test_report_time),	    cmocka_unit_test(test_report_write_error),
	};
	return cmocka_run_group_tests_name("report", tests, setup, teardown);
}
