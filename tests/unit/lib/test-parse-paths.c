/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-parse-paths.c - tables for everything that yields a path: mount points
 * from /proc/self/mounts, a process's cgroup from /proc/PID/cgroup, and the
 * normalisation of cgroup arguments.
 */
#include "unit.h"

#include <errno.h>
#include <stdio.h>

/* ------------------------------------------------------------- mounts */

static const char hybrid_mounts[] = "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
				    "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
				    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
				    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
				    "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0\n"
				    "cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0\n"
				    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";

struct mounts_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	const char *memory, *cgroup2, *freezer;
};

static const struct mounts_row mounts_rows[] = {
    {"hybrid", BUF(hybrid_mounts), 0, "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified",
     "/sys/fs/cgroup/freezer"},
    {"pure v2", BUF("cgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate,memory_recursiveprot 0 0\n"), 0, "",
     "/sys/fs/cgroup", ""},
    {"none", BUF("proc /proc proc rw 0 0\n"), 0, "", "", ""},
    {"empty", BUF(""), 0, "", "", ""},
    {"combined controllers", BUF("cgroup /cg/cpu,memory cgroup rw,cpu,memory,freezer 0 0\n"), 0,
     "/cg/cpu,memory", "", "/cg/cpu,memory"},
    {"memory first in options", BUF("cgroup /m cgroup memory,rw 0 0"), 0, "/m", "", ""},
    {"escaped space", BUF("cgroup /mnt/my\\040memory cgroup rw,memory 0 0\n"), 0, "/mnt/my memory", "", ""},
    {"escaped tab newline backslash", BUF("cgroup2 /a\\011b\\012c\\134d cgroup2 rw 0 0\n"), 0, "",
     "/a\tb\nc\\d", ""},
    {"lone backslash kept", BUF("cgroup2 /a\\b\\04 cgroup2 rw 0 0\n"), 0, "", "/a\\b\\04", ""},
    {"first mount wins", BUF("cgroup /first cgroup memory 0 0\ncgroup /second cgroup memory 0 0\n"), 0,
     "/first", "", ""},
    {"option prefixes", BUF("cgroup /x cgroup rw,memoryx,xfreezer 0 0\n"), 0, "", "", ""},
    {"memory in the device name only", BUF("memory /x cgroup rw,cpu 0 0\n"), 0, "", "", ""},
    {"tmpfs with memory option", BUF("tmpfs /x tmpfs rw,memory 0 0\n"), 0, "", "", ""},
    {"short line skipped", BUF("cgroup\ncgroup2 /u cgroup2 rw 0 0\n"), 0, "", "/u", ""},
    {"no trailing newline", BUF("cgroup2 /u cgroup2 rw 0 0"), 0, "", "/u", ""},
    {"options missing", BUF("cgroup /x cgroup\n"), 0, "", "", ""},
    {"NUL in another line", BUF("tmp\0fs /x tmpfs rw 0 0\ncgroup2 /u cgroup2 rw 0 0\n"), 0, "", "/u", ""},
    {"escaped NUL", BUF("cgroup2 /a\\000b cgroup2 rw 0 0\n"), -EINVAL, NULL, NULL, NULL},
    {"relative mount point", BUF("cgroup /m cgroup memory 0 0\ncgroup2 u cgroup2 rw 0 0\n"), -EINVAL, NULL,
     NULL, NULL},
};

static void test_parse_mounts(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(mounts_rows); i++) {
		const struct mounts_row *t = &mounts_rows[i];
		struct oomkit__mounts m;
		memset(&m, 'Z', sizeof(m));
		int r = oomkit__parse_mounts(t->buf, t->len, &m);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_INT(t->name, m.memory_root[0], 'Z');
			continue;
		}
		EXPECT_STR(t->name, m.memory_root, t->memory);
		EXPECT_STR(t->name, m.cgroup2_root, t->cgroup2);
		EXPECT_STR(t->name, m.freezer_root, t->freezer);
		EXPECT_INT(t->name, m.cgroup2_has_memory, false);
	}
}

static void test_parse_mounts_too_long(void **state)
{
	char buf[OOMKIT__PATH_MAX + 64], *p = buf;
	struct oomkit__mounts m;

	(void)state;
	/* A mount point of exactly OOMKIT__PATH_MAX - 1 bytes fits, one more does not. */
	for (size_t extra = 0; extra < 2; extra++) {
		p = buf + sprintf(buf, "cgroup /");
		memset(p, 'a', OOMKIT__PATH_MAX - 2 + extra);
		p += OOMKIT__PATH_MAX - 2 + extra;
		p += sprintf(p, " cgroup memory 0 0\n");
		int r = oomkit__parse_mounts(buf, (size_t)(p - buf), &m);
		assert_int_equal(r, extra ? -ENAMETOOLONG : 0);
		if (r == 0)
			assert_int_equal(strlen(m.memory_root), OOMKIT__PATH_MAX - 1);
	}
	/* An escape counts as the one byte it decodes to. */
	p = buf + sprintf(buf, "cgroup /");
	memset(p, 'a', OOMKIT__PATH_MAX - 3);
	p += OOMKIT__PATH_MAX - 3;
	p += sprintf(p, "\\040 cgroup memory 0 0\n");
	assert_int_equal(oomkit__parse_mounts(buf, (size_t)(p - buf), &m), 0);
	assert_int_equal(m.memory_root[OOMKIT__PATH_MAX - 2], ' ');
}

/* -------------------------------------------------------- proc cgroup */

static const char hybrid_cgroup[] = "9:name=systemd:/\n"
				    "8:pids:/\n"
				    "6:freezer:/jobs\n"
				    "4:memory:/jobs/web\n"
				    "1:cpu:/\n"
				    "0::/user.slice/session-1.scope\n";

struct cgroup_row {
	const char *name;
	const char *buf;
	size_t len;
	const char *controller;
	size_t out_len;
	int ret;
	const char *path;
};

static const struct cgroup_row cgroup_rows[] = {
    {"v1 memory", BUF(hybrid_cgroup), "memory", 64, 8, "jobs/web"},
    {"v1 freezer", BUF(hybrid_cgroup), "freezer", 64, 4, "jobs"},
    {"v2", BUF(hybrid_cgroup), NULL, 64, 26, "user.slice/session-1.scope"},
    {"named hierarchy", BUF(hybrid_cgroup), "name=systemd", 64, 0, ""},
    {"root", BUF("4:memory:/\n"), "memory", 64, 0, ""},
    {"v2 root", BUF("0::/\n"), NULL, 64, 0, ""},
    {"v2 root no newline", BUF("0::/"), NULL, 1, 0, ""},
    {"combined controllers", BUF("4:cpu,memory:/a\n"), "memory", 64, 1, "a"},
    {"combined, memory first", BUF("4:memory,cpu:/a/b\n"), "memory", 64, 3, "a/b"},
    {"combined, ask cpu", BUF("4:cpu,memory:/a\n"), "cpu", 64, 1, "a"},
    {"colon in path", BUF("0::/a:b:c\n"), NULL, 64, 5, "a:b:c"},
    {"space in path", BUF("4:memory:/my job\n"), "memory", 64, 6, "my job"},
    {"exact fit", BUF("4:memory:/abc\n"), "memory", 4, 3, "abc"},
    {"blank line", BUF("\n4:memory:/a\n"), "memory", 64, 1, "a"},
    {"memory not on v2 line", BUF("0::/a\n"), "memory", 64, -ENOENT, NULL},
    {"v2 line absent", BUF("4:memory:/a\n"), NULL, 64, -ENOENT, NULL},
    {"controller prefix", BUF("4:memoryx:/a\n5:xmemory:/b\n"), "memory", 64, -ENOENT, NULL},
    {"cpu is not cpuacct", BUF("2:cpuacct:/a\n"), "cpu", 64, -ENOENT, NULL},
    {"v2 needs id 0", BUF("3::/a\n"), NULL, 64, -ENOENT, NULL},
    {"empty", BUF(""), "memory", 64, -ENOENT, NULL},
    {"too long", BUF("4:memory:/abcd\n"), "memory", 4, -ENAMETOOLONG, NULL},
    {"out_len 0", BUF("0::/\n"), NULL, 0, -ENAMETOOLONG, NULL},
    {"outside our namespace", BUF("4:memory:/../../x\n"), "memory", 64, -EINVAL, NULL},
    {"dot dot at the end", BUF("0::/a/..\n"), NULL, 64, -EINVAL, NULL},
    {"dot", BUF("0::/./a\n"), NULL, 64, -EINVAL, NULL},
    {"dots in a name", BUF("0::/a..b/...\n"), NULL, 64, 8, "a..b/..."},
    {"double slash at the start", BUF("0:://x\n"), NULL, 64, -EINVAL, NULL},
    {"double slash inside", BUF("0::/a//b\n"), NULL, 64, -EINVAL, NULL},
    {"trailing slash", BUF("0::/a/\n"), NULL, 64, -EINVAL, NULL},
    {"relative path", BUF("4:memory:a\n"), "memory", 64, -EINVAL, NULL},
    {"empty path", BUF("4:memory:\n"), "memory", 64, -EINVAL, NULL},
    {"one colon", BUF("4:memory\n"), "memory", 64, -EINVAL, NULL},
    {"no colon", BUF("garbage\n"), NULL, 64, -EINVAL, NULL},
    {"id not a number", BUF("x:memory:/a\n"), "memory", 64, -EINVAL, NULL},
    {"id empty", BUF(":memory:/a\n"), "memory", 64, -EINVAL, NULL},
    {"id with blank", BUF("4 :memory:/a\n"), "memory", 64, -EINVAL, NULL},
    {"NUL in path", BUF("4:memory:/a\0b\n"), "memory", 64, -EINVAL, NULL},
    {"empty controller", BUF("4:memory:/a\n"), "", 64, -EINVAL, NULL},
    {"controller with comma", BUF("4:cpu,memory:/a\n"), "cpu,memory", 64, -EINVAL, NULL},
};

static void test_parse_proc_cgroup(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(cgroup_rows); i++) {
		const struct cgroup_row *t = &cgroup_rows[i];
		char out[80];
		memset(out, 'Z', sizeof(out));
		int r = oomkit__parse_proc_cgroup(t->buf, t->len, t->controller, out, t->out_len);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_INT(t->name, out[0], 'Z');
			continue;
		}
		EXPECT_STR(t->name, out, t->path);
		EXPECT_INT(t->name, out[t->out_len], 'Z');
	}
}

struct under_row {
	const char *name;
	const char *buf;
	size_t len;
	const char *controller;
	const char *rel;
	int ret;
};

static const struct under_row under_rows[] = {
    {"itself", BUF("4:memory:/jobs/web\n"), "memory", "jobs/web", 1},
    {"below", BUF("4:memory:/jobs/web/a/b\n"), "memory", "jobs/web", 1},
    {"above", BUF("4:memory:/jobs\n"), "memory", "jobs/web", 0},
    {"a name that starts the same", BUF("4:memory:/jobs/webby\n"), "memory", "jobs/web", 0},
    {"beside", BUF("4:memory:/jobs/db\n"), "memory", "jobs/web", 0},
    {"anything is below the root", BUF("4:memory:/jobs\n"), "memory", "", 1},
    {"the root in the root", BUF("4:memory:/\n"), "memory", "", 1},
    {"the root is not below a job", BUF("4:memory:/\n"), "memory", "jobs", 0},
    {"v2 line", BUF(hybrid_cgroup), NULL, "user.slice", 1},
    {"v1 line of a hybrid", BUF(hybrid_cgroup), "memory", "jobs", 1},
    {"outside our namespace", BUF("4:memory:/../x\n"), "memory", "", 0},
    {"outside, just ..", BUF("0::/..\n"), NULL, "", 0},
    {"a name starting with ..", BUF("0::/..x/y\n"), NULL, "..x", 1},
    /* The kernel cuts long paths mid-name, after a '/', inside "..": the
     * part before still places them. */
    {"cut after a slash", BUF("0::/jobs/web/\n"), NULL, "jobs/web", 1},
    {"cut to ..", BUF("0::/jobs/web/..\n"), NULL, "jobs/web", 1},
    {"line absent", BUF("0::/a\n"), "memory", "a", -ENOENT},
    {"relative path", BUF("0::a\n"), NULL, "a", -EINVAL},
    {"empty path", BUF("0::\n"), NULL, "", -EINVAL},
    {"no rel", BUF("0::/a\n"), NULL, NULL, -EINVAL},
    {"garbage", BUF("garbage\n"), NULL, "a", -EINVAL},
};

static void test_parse_proc_cgroup_under(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(under_rows); i++) {
		const struct under_row *t = &under_rows[i];
		EXPECT_INT(t->name, oomkit__parse_proc_cgroup_under(t->buf, t->len, t->controller, t->rel),
			   t->ret);
	}
}

/* A path of PATH_MAX - 1 bytes may have been cut by the kernel: never
 * returned as a path, still placed by prefix. */
static void test_parse_proc_cgroup_cut(void **state)
{
	(void)state;
	static char buf[PATH_MAX + 64], out[PATH_MAX * 2];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "0::/jobs/web/");
	memset(buf + n, 'x', OOMKIT__PROC_CGROUP_CUT - (n - 3));
	n = 3 + OOMKIT__PROC_CGROUP_CUT;
	buf[n] = '\n';
	assert_int_equal(oomkit__parse_proc_cgroup(buf, n + 1, NULL, out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(oomkit__parse_proc_cgroup_under(buf, n + 1, NULL, "jobs/web"), 1);
	assert_int_equal(oomkit__parse_proc_cgroup_under(buf, n + 1, NULL, "jobs/db"), 0);
	/* One byte shorter cannot have been cut: a path like any other. */
	buf[n - 1] = '\n';
	assert_int_equal(oomkit__parse_proc_cgroup(buf, n, NULL, out, sizeof(out)), (int)(n - 5));
}

/* ------------------------------------------------------------ relpath */

struct relpath_row {
	const char *name;
	const char *in;
	const char *root;
	size_t out_len;
	int ret;
	const char *out;
};

#define ROOT "/sys/fs/cgroup/memory"

static const struct relpath_row relpath_rows[] = {
    {"relative", "jobs/web", ROOT, 64, 8, "jobs/web"},
    {"empty is the root", "", ROOT, 64, 0, ""},
    {"slash is the root", "/", ROOT, 64, 0, ""},
    {"slashes", "//jobs///web//", ROOT, 64, 8, "jobs/web"},
    {"leading slash is relative", "/jobs/web", ROOT, 64, 8, "jobs/web"},
    {"absolute under root", "/sys/fs/cgroup/memory/jobs/web", ROOT, 64, 8, "jobs/web"},
    {"absolute root itself", "/sys/fs/cgroup/memory", ROOT, 64, 0, ""},
    {"absolute root with slash", "/sys/fs/cgroup/memory/", ROOT, 64, 0, ""},
    {"untidy absolute", "//sys/fs//cgroup/memory//jobs/", ROOT, 64, 4, "jobs"},
    {"untidy root", "/sys/fs/cgroup/memory/jobs", "//sys/fs/cgroup/memory//", 64, 4, "jobs"},
    {"root /", "/jobs", "/", 64, 4, "jobs"},
    {"no root", "/sys/fs/cgroup/memory/x", NULL, 64, 22, "sys/fs/cgroup/memory/x"},
    {"empty root", "/a", "", 64, 1, "a"},
    {"relative is never stripped", "sys/fs/cgroup/memory/x", ROOT, 64, 22, "sys/fs/cgroup/memory/x"},
    {"dots in a name", "a..b/.c/d.", ROOT, 64, 10, "a..b/.c/d."},
    {"exact fit", "abc", ROOT, 4, 3, "abc"},
    {"too long", "abcd", ROOT, 4, -ENAMETOOLONG, NULL},
    {"too long after collapsing", "a//b//c//d", ROOT, 7, -ENAMETOOLONG, NULL},
    {"fits after collapsing", "a//b//c", ROOT, 6, 5, "a/b/c"},
    {"out_len 0", "", ROOT, 0, -ENAMETOOLONG, NULL},
    {"dot dot", "jobs/../etc", ROOT, 64, -EINVAL, NULL},
    {"leading dot dot", "../x", ROOT, 64, -EINVAL, NULL},
    {"trailing dot dot", "x/..", ROOT, 64, -EINVAL, NULL},
    {"dot", "./x", ROOT, 64, -EINVAL, NULL},
    {"dot dot under root", "/sys/fs/cgroup/memory/../cpu", ROOT, 64, -EINVAL, NULL},
    {"sibling mount", "/sys/fs/cgroup/freezer/x", ROOT, 64, -EINVAL, NULL},
    {"name sharing the root's prefix", "/sys/fs/cgroup/memoryx/y", ROOT, 64, -EINVAL, NULL},
    {"parent of root", "/sys/fs/cgroup", ROOT, 64, -EINVAL, NULL},
    {"outside at the top", "/sys", ROOT, 64, -EINVAL, NULL},
};

static void test_cgroup_relpath(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(relpath_rows); i++) {
		const struct relpath_row *t = &relpath_rows[i];
		char out[80];
		memset(out, 'Z', sizeof(out));
		int r = oomkit__cgroup_relpath(t->in, t->root, out, t->out_len);
		EXPECT_INT(t->name, r, t->ret);
		if (r < 0) {
			EXPECT_INT(t->name, out[0], 'Z');
			continue;
		}
		EXPECT_STR(t->name, out, t->out);
		EXPECT_INT(t->name, out[t->out_len], 'Z');
		/* Normalising twice changes nothing. */
		char again[80];
		EXPECT_INT(t->name, oomkit__cgroup_relpath(out, t->root, again, sizeof(again)), r);
		EXPECT_STR(t->name, again, out);
	}
	char out[8];
	assert_int_equal(oomkit__cgroup_relpath(NULL, ROOT, out, sizeof(out)), -EINVAL);
	assert_int_equal(oomkit__cgroup_relpath("a", ROOT, NULL, 8), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_mounts),	  cmocka_unit_test(test_parse_mounts_too_long),
	    cmocka_unit_test(test_parse_proc_cgroup),	  cmocka_unit_test(test_parse_proc_cgroup_under),
	    cmocka_unit_test(test_parse_proc_cgroup_cut), cmocka_unit_test(test_cgroup_relpath),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
