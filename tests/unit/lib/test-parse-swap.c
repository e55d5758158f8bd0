/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-parse-swap.c - tables of good and hostile input for the swap parsers:
 * /proc/swaps, zram's mm_stat, and what a zram device can still free.
 */
#include "unit.h"

#include <errno.h>

#define HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

struct swaps_row {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	uint64_t size0, used0;
	int zram0;
	uint64_t size1;
	int zram1;
};

static const struct swaps_row swaps_rows[] = {
    {"no swap", BUF(HEADER), 0, 0, 0, 0, 0, 0},
    {"a swap file", BUF(HEADER "/swapfile                               file\t\t524284\t\t1024\t\t-2\n"), 1,
     524284ull * 1024, 1024ull * 1024, -1, 0, 0},
    {"a file and zram",
     BUF(HEADER
	 "/swapfile file 524284 0 -2\n/dev/zram0                              partition\t1048572\t0\t100\n"),
     2, 524284ull * 1024, 0, -1, 1048572ull * 1024, 0},
    {"zram12", BUF(HEADER "/dev/zram12 partition 8 4 100\n"), 1, 8192, 4096, 12, 0, 0},
    {"a partition that is not zram", BUF(HEADER "/dev/nvme0n1p3 partition 100 0 -3\n"), 1, 102400, 0, -1, 0,
     0},
    {"a file named like zram is a file", BUF(HEADER "/dev/zram0 file 100 0 -2\n"), 1, 102400, 0, -1, 0, 0},
    {"/dev/zram alone is not zram", BUF(HEADER "/dev/zram partition 100 0 -2\n"), 1, 102400, 0, -1, 0, 0},
    {"/dev/zram0x is not zram", BUF(HEADER "/dev/zram0x partition 100 0 -2\n"), 1, 102400, 0, -1, 0, 0},
    {"an escaped blank in a name", BUF(HEADER "/swap\\040file file 100 0 -2\n"), 1, 102400, 0, -1, 0, 0},
    {"no trailing newline", BUF(HEADER "/swapfile file 100 50 -2"), 1, 102400, 51200, -1, 0, 0},
    {"blank lines are skipped", BUF(HEADER "\n/swapfile file 100 50 -2\n\n"), 1, 102400, 51200, -1, 0, 0},
    {"empty", BUF(""), -EINVAL, 0, 0, 0, 0, 0},
    {"no header", BUF("/swapfile file 100 0 -2\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"a column missing", BUF(HEADER "/swapfile file 100 0\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"a column more", BUF(HEADER "/swapfile file 100 0 -2 7\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"an unknown type", BUF(HEADER "/swapfile disk 100 0 -2\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"used above size", BUF(HEADER "/swapfile file 100 101 -2\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"a negative size", BUF(HEADER "/swapfile file -100 0 -2\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"a size that overflows in bytes", BUF(HEADER "/swapfile file 18014398509481984 0 -2\n"), -EINVAL, 0, 0,
     0, 0, 0},
    {"a size that overflows", BUF(HEADER "/swapfile file 99999999999999999999999 0 -2\n"), -EINVAL, 0, 0, 0,
     0, 0},
    {"a priority that is no number", BUF(HEADER "/swapfile file 100 0 high\n"), -EINVAL, 0, 0, 0, 0, 0},
    {"a NUL in a line", BUF(HEADER "/swapfile file 10\0000 0 -2\n"), -EINVAL, 0, 0, 0, 0, 0},
};

static void test_swaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(swaps_rows); i++) {
		const struct swaps_row *row = &swaps_rows[i];
		struct oomkit__swap_area a[4];
		memset(a, 0xa5, sizeof(a));
		int r = oomkit__parse_swaps(row->buf, row->len, a, N_ELEMENTS(a));
		EXPECT_INT(row->name, r, row->ret);
		if (r < 1)
			continue;
		EXPECT_U64(row->name, a[0].size_bytes, row->size0);
		EXPECT_U64(row->name, a[0].used_bytes, row->used0);
		EXPECT_INT(row->name, a[0].zram, row->zram0);
		if (r < 2)
			continue;
		EXPECT_U64(row->name, a[1].size_bytes, row->size1);
		EXPECT_INT(row->name, a[1].zram, row->zram1);
	}
}

static void test_swaps_too_many(void **state)
{
	struct oomkit__swap_area a[1];
	(void)state;

	assert_int_equal(oomkit__parse_swaps(BUF(HEADER "/a file 8 0 -2\n/b file 16 0 -3\n"), a, 1),
			 -ENOBUFS);
	assert_int_equal(a[0].size_bytes, 8192);
}

static void test_mm_stat(void **state)
{
	static const struct {
		const char *name;
		const char *buf;
		size_t len;
		int ret;
		uint64_t orig, compr, used, limit;
	} rows[] = {
	    {"6.x, nine columns",
	     BUF("  8388608  2097152  2359296        0  2359296      512        0        0        0\n"), 0,
	     8388608, 2097152, 2359296, 0},
	    {"four columns", BUF("1 2 3 4"), 0, 1, 2, 3, 4},
	    {"three columns", BUF("1 2 3\n"), -EINVAL, 0, 0, 0, 0},
	    {"empty", BUF(""), -EINVAL, 0, 0, 0, 0},
	    {"a word", BUF("1 2 three 4\n"), -EINVAL, 0, 0, 0, 0},
	    {"a word later", BUF("1 2 3 4 5 x\n"), -EINVAL, 0, 0, 0, 0},
	    {"negative", BUF("-1 2 3 4\n"), -EINVAL, 0, 0, 0, 0},
	    {"overflow", BUF("99999999999999999999999 2 3 4\n"), -EINVAL, 0, 0, 0, 0},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		struct oomkit__zram_mm_stat st = {0};
		int r = oomkit__parse_zram_mm_stat(rows[i].buf, rows[i].len, &st);
		EXPECT_INT(rows[i].name, r, rows[i].ret);
		if (r < 0)
			continue;
		EXPECT_U64(rows[i].name, st.orig_bytes, rows[i].orig);
		EXPECT_U64(rows[i].name, st.compr_bytes, rows[i].compr);
		EXPECT_U64(rows[i].name, st.used_bytes, rows[i].used);
		EXPECT_U64(rows[i].name, st.limit_bytes, rows[i].limit);
	}
}

#define MiB (1ull << 20)

static void test_zram_usable(void **state)
{
	static const struct {
		const char *name;
		uint64_t free;
		bool known;
		struct oomkit__zram_mm_stat st;
		uint64_t want;
	} rows[] = {
	    {"unknown: one half", 512 * MiB, false, {0}, 256 * MiB},
	    {"little stored yet: one half",
	     512 * MiB,
	     true,
	     {.orig_bytes = 1 * MiB, .used_bytes = 1 * MiB},
	     256 * MiB},
	    {"3:1 so far: two thirds",
	     300 * MiB,
	     true,
	     {.orig_bytes = 300 * MiB, .used_bytes = 100 * MiB},
	     200 * MiB},
	    {"incompressible: nothing",
	     512 * MiB,
	     true,
	     {.orig_bytes = 100 * MiB, .used_bytes = 100 * MiB},
	     0},
	    {"worse than nothing: nothing",
	     512 * MiB,
	     true,
	     {.orig_bytes = 100 * MiB, .used_bytes = 110 * MiB},
	     0},
	    {"full: nothing", 0, true, {.orig_bytes = 100 * MiB, .used_bytes = 25 * MiB}, 0},
	    {"mem_limit reached: nothing",
	     512 * MiB,
	     true,
	     {.orig_bytes = 100 * MiB, .used_bytes = 25 * MiB, .limit_bytes = 25 * MiB},
	     0},
	    /* 4:1 with 25 MiB of the limit left: 100 MiB more fit, which free 75. */
	    {"mem_limit bounds it",
	     512 * MiB,
	     true,
	     {.orig_bytes = 100 * MiB, .used_bytes = 25 * MiB, .limit_bytes = 50 * MiB},
	     75 * MiB},
	    {"only same-filled pages so far (no RAM used), a mem_limit",
	     512 * MiB,
	     true,
	     {.orig_bytes = 8 * MiB, .used_bytes = 0, .limit_bytes = 1},
	     512 * MiB},
	    {"huge numbers do not overflow",
	     UINT64_MAX,
	     true,
	     {.orig_bytes = UINT64_MAX, .used_bytes = UINT64_MAX / 2, .limit_bytes = 0},
	     UINT64_MAX / 2 + 1},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++)
		EXPECT_U64(rows[i].name,
			   oomkit__zram_usable(rows[i].free, rows[i].known ? &rows[i].st : NULL),
			   rows[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_swaps),
	    cmocka_unit_test(test_swaps_too_many),
	    cmocka_unit_test(test_mm_stat),
	    cmocka_unit_test(test_zram_usable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
