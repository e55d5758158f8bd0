/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-lowmem-rule.c - the machine's out-of-memory rule (lowmem-rule.h) in
 * tables: the room a share of RAM + swap leaves, the full-stall share held
 * through each third of a duration as the daemon samples it, and the
 * decision of one look.
 */
#include "unit.h"

#include "base/clock.h"
#include "rules/lowmem-rule.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define S (1000ull * NS_PER_MS)

static void test_min_room(void **state)
{
	static const struct {
		const char *name;
		struct config_share share;
		uint64_t ram, swap, want;
	} rows[] = {
	    {"a size is taken as it is", {.bytes = 128 * MiB}, 512 * MiB, 512 * MiB, 128 * MiB},
	    {"a size ignores swap", {.bytes = 64 * MiB}, 64 * GiB, 8 * GiB, 64 * MiB},
	    {"2% of a 512 MiB guest with 512 MiB swap: the floor",
	     {.percent = 2},
	     512 * MiB,
	     512 * MiB,
	     LOWMEM_ROOM_FLOOR},
	    {"2% of 8 GiB + 8 GiB", {.percent = 2}, 8 * GiB, 8 * GiB, 16 * GiB / 50},
	    {"2% of a 64 GiB server: the cap", {.percent = 2}, 64 * GiB, 8 * GiB, LOWMEM_ROOM_CAP},
	    {"no swap: a share of RAM", {.percent = 10}, 4 * GiB, 0, 4 * GiB / 10},
	    {"nothing read: the floor", {.percent = 2}, 0, 0, LOWMEM_ROOM_FLOOR},
	    {"sizes that overflow: the cap", {.percent = 50}, UINT64_MAX, UINT64_MAX, LOWMEM_ROOM_CAP},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++)
		EXPECT_U64(rows[i].name, lowmem_min_room(&rows[i].share, rows[i].ram, rows[i].swap),
			   rows[i].want);
}

/* Feeds the share a stall that grows by pct of the time, a look every 20 ms
 * for secs seconds from *now; returns the last share. */
static int64_t stall(struct lowmem_full *f, uint64_t *now, uint64_t *full_us, unsigned pct, unsigned secs,
		     uint64_t span_ns)
{
	int64_t share = -1;
	for (unsigned i = 0; i < secs * 50; i++) {
		*now += 20 * NS_PER_MS;
		*full_us += 20000ull * pct / 100;
		share = lowmem_full_share(f, *now, *full_us, span_ns);
	}
	return share;
}

static void test_full_share(void **state)
{
	struct lowmem_full f;
	uint64_t now = 1000 * S, full = 123456789;
	(void)state;

	lowmem_full_reset(&f);
	/* Less than a span of history: not known. */
	assert_int_equal(stall(&f, &now, &full, 100, 19, 20 * S), -1);
	/* A span of 100 % stall, then one of 60 %: the share follows. */
	int64_t s = stall(&f, &now, &full, 100, 2, 20 * S);
	assert_true(s >= 9900 && s <= 10000);
	s = stall(&f, &now, &full, 60, 21, 20 * S);
	assert_true(s >= 5900 && s <= 6100);
	/* An idle gap of ten minutes without looks: the old samples dilute
	 * the share below any limit until a span of new ones is in. */
	now += 600 * S;
	s = stall(&f, &now, &full, 100, 5, 20 * S);
	assert_true(s >= 0 && s < 5000);
	s = stall(&f, &now, &full, 100, 16, 20 * S);
	assert_true(s >= 9900);
	/* Bursts: a job growing into swap stalls fully for seconds, then
	 * runs.  Two thirds of the span at 100 % and one idle: the average is
	 * 67 %, but the stall did not hold all through the span. */
	lowmem_full_reset(&f);
	s = stall(&f, &now, &full, 0, 31, 30 * S);
	assert_int_equal(s, 0);
	s = stall(&f, &now, &full, 100, 20, 30 * S);
	assert_true(s >= 0 && s < 100);
	/* (A piece begins at the newest sample before its start, up to a
	 * thirty-second of the span early: here some of the burst.) */
	s = stall(&f, &now, &full, 0, 10, 30 * S);
	assert_true(s >= 0 && s < 1000);
	/* The same at 60 % held through every third of the span: its level. */
	s = stall(&f, &now, &full, 60, 31, 30 * S);
	assert_true(s >= 5900 && s <= 6100);
	/* One third below the limit is enough to stay below it. */
	s = stall(&f, &now, &full, 90, 20, 30 * S);
	s = stall(&f, &now, &full, 40, 10, 30 * S);
	assert_true(s >= 3800 && s <= 4200);
	/* A daemon stalled itself looks seldom: a look every 12 s of a
	 * machine stalled all the time still finds it stalled in each third. */
	for (int i = 0; i < 5; i++) {
		now += 12 * S;
		full += 12000000;
		s = lowmem_full_share(&f, now, full, 30 * S);
	}
	assert_true(s >= 9900);
	/* After a reset (a kill) a whole span again before it is known. */
	lowmem_full_reset(&f);
	assert_int_equal(stall(&f, &now, &full, 100, 19, 20 * S), -1);
	/* A counter that went back starts again rather than underflowing. */
	assert_int_equal(lowmem_full_share(&f, now + NS_PER_MS, 5, 20 * S), -1);
	/* A clock that went back likewise. */
	assert_int_equal(lowmem_full_share(&f, 1, 6, 20 * S), -1);
	/* Never above 100 %, whatever the samples say. */
	lowmem_full_reset(&f);
	assert_int_equal(lowmem_full_share(&f, 0, 0, S), -1);
	assert_int_equal(lowmem_full_share(&f, 2 * S, UINT64_MAX / 2, S), 10000);
}

static void test_decide(void **state)
{
	static const struct {
		const char *name;
		struct lowmem_input in;
		enum lowmem_out out;
	} rows[] = {
	    {"RAM full, swap empty: swapping, not out",
	     {.available_bytes = 12 * MiB,
	      .swap_usable_bytes = 511 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = -1,
	      .full_limit_percent = 50},
	     LOWMEM_NOT_OUT},
	    {"RAM and swap both nearly full: out",
	     {.available_bytes = 12 * MiB,
	      .swap_usable_bytes = 40 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = 1000,
	      .full_limit_percent = 50},
	     LOWMEM_NO_ROOM},
	    {"no swap: the RAM rule",
	     {.available_bytes = 63 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = -1,
	      .full_limit_percent = 50},
	     LOWMEM_NO_ROOM},
	    {"no swap, room just enough",
	     {.available_bytes = 64 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = -1,
	      .full_limit_percent = 50},
	     LOWMEM_NOT_OUT},
	    {"room, but fully stalled at the limit: thrashing",
	     {.available_bytes = 200 * MiB,
	      .swap_usable_bytes = 300 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = 5000,
	      .full_limit_percent = 50},
	     LOWMEM_THRASHING},
	    {"room, fully stalled just below the limit",
	     {.available_bytes = 200 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = 4999,
	      .full_limit_percent = 50},
	     LOWMEM_NOT_OUT},
	    {"thrashing not looked at (0%)",
	     {.available_bytes = 200 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = 10000,
	      .full_limit_percent = 0},
	     LOWMEM_NOT_OUT},
	    {"no room and thrashing: no room is said",
	     {.available_bytes = 1 * MiB,
	      .min_room_bytes = 64 * MiB,
	      .full_share_x100 = 10000,
	      .full_limit_percent = 50},
	     LOWMEM_NO_ROOM},
	    {"sums that overflow are room",
	     {.available_bytes = UINT64_MAX,
	      .swap_usable_bytes = UINT64_MAX,
	      .min_room_bytes = UINT64_MAX - 1,
	      .full_share_x100 = -1},
	     LOWMEM_NOT_OUT},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++)
		EXPECT_INT(rows[i].name, lowmem_decide(&rows[i].in).out, rows[i].out);
}

static void test_recheck(void **state)
{
	struct lowmem_input in = {.available_bytes = GiB, .min_room_bytes = 64 * MiB, .full_share_x100 = -1};
	(void)state;

	/* Stalled within the last window: look again in LOWMEM_RECHECK_MS. */
	in.now_ns = 100 * S;
	in.stalled_ns = in.now_ns - 1 * S;
	assert_int_equal(lowmem_decide(&in).next_ns, in.now_ns + LOWMEM_RECHECK_MS * NS_PER_MS);
	/* A whole window without a stall: no more looks. */
	in.stalled_ns = in.now_ns - (uint64_t)LOWMEM_WINDOW_US * 1000u;
	assert_int_equal(lowmem_decide(&in).next_ns, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_min_room),
	    cmocka_unit_test(test_full_share),
	    cmocka_unit_test(test_decide),
	    cmocka_unit_test(test_recheck),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
