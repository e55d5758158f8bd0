/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-cgroup-v2.c - when a cgroup v2 cgroup held at memory.high is out of
 * memory (oomkit__v2_oom_rule): at its limit and unable to swap, or stalled;
 * and the share of time its memory.pressure says it was fully stalled
 * (oomkit__stall_share).  Both pure: tables of inputs.  And which counts of
 * memory.events.local tell the handler of an OOM (oomkit__v2_consume), on a
 * memfd for the file.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define SEC (1000ull * 1000 * 1000)
#define MAX OOMKIT_UNLIMITED

/* 64M limit: held at 56M (a margin of 8M), counted near from 54M (the
 * margin and a quarter of it). */
static void test_rule(void **state)
{
	(void)state;
	static const struct {
		const char *row;
		struct oomkit__v2_oom_input in;
		enum oomkit_oom_cause want;
	} t[] = {
	    /* No limit: no OOM of its own, whatever else. */
	    {"no limit",
	     {.usage_bytes = 1 * GIB, .limit_bytes = MAX, .full_x100 = 10000},
	     OOMKIT_OOM_CAUSE_NONE},
	    /* Without swap, exactly the old rule: near the limit is out of memory. */
	    {"no swap, far",
	     {.usage_bytes = 53 * MIB, .limit_bytes = 64 * MIB, .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"no swap, near",
	     {.usage_bytes = 54 * MIB, .limit_bytes = 64 * MIB, .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NO_SWAP},
	    {"no swap, at the hold",
	     {.usage_bytes = 56 * MIB, .limit_bytes = 64 * MIB, .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NO_SWAP},
	    {"no swap on the machine, accounting says max",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_max_bytes = MAX,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NO_SWAP},
	    /* Swap the cgroup may not use. */
	    {"swap.max 0",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_max_bytes = 0,
	      .swap_total_bytes = 1 * GIB,
	      .swap_free_bytes = 1 * GIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NO_SWAP},
	    /* Swap it may use: held, swapping, not out of memory. */
	    {"swap free, swap.max max",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 40 * MIB,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"swap free, no swap accounting",
	     {.usage_bytes = 60 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = 5000},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"swap.max not reached",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 13 * MIB,
	      .swap_max_bytes = 16 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = 0},
	     OOMKIT_OOM_CAUSE_NONE},
	    /* Its swap.max reached (within a slack of 2 MiB): out of memory. */
	    {"swap.max reached",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 16 * MIB,
	      .swap_max_bytes = 16 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    {"swap.max within the slack",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 15 * MIB,
	      .swap_max_bytes = 16 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    {"swap.max smaller than the slack",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 0,
	      .swap_max_bytes = 1 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    {"swap.current above swap.max (lowered under it)",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 40 * MIB,
	      .swap_max_bytes = 16 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    /* The machine's swap full. */
	    {"machine swap full",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 100 * MIB,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 1 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_FULL},
	    {"machine swap full, swap.max reached too: its own limit first",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 16 * MIB,
	      .swap_max_bytes = 16 * MIB,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 0,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    /* It can swap, but its own pressure says it is stuck. */
	    {"stalled at the limit",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 40 * MIB,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = OOMKIT__STALL_PERCENT * 100},
	     OOMKIT_OOM_CAUSE_STALLED},
	    {"stalled just under the share",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 40 * MIB,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = OOMKIT__STALL_PERCENT * 100 - 1},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"stalled far below the limit: not its limit's doing",
	     {.usage_bytes = 20 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 0,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = 10000},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"stall unknown yet",
	     {.usage_bytes = 63 * MIB,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = 40 * MIB,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 200 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NONE},
	    /* OOMKIT_WATCH_AT_LIMIT (a machine holding jobs): at its limit,
	     * swap or not; below it, not. */
	    {"at limit, swap free",
	     {.usage_bytes = 56 * MIB,
	      .limit_bytes = 64 * MIB,
	      .at_limit = true,
	      .swap_known = true,
	      .swap_max_bytes = MAX,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 256 * MIB,
	      .full_x100 = 0},
	     OOMKIT_OOM_CAUSE_LIMIT},
	    {"at limit, far below",
	     {.usage_bytes = 20 * MIB,
	      .limit_bytes = 64 * MIB,
	      .at_limit = true,
	      .swap_total_bytes = 256 * MIB,
	      .swap_free_bytes = 256 * MIB,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NONE},
	    {"at limit, no limit",
	     {.usage_bytes = 1 * GIB, .limit_bytes = MAX, .at_limit = true, .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_NONE},
	    /* Numbers at their ends do not wrap. */
	    {"usage near 2^64",
	     {.usage_bytes = UINT64_MAX - 1,
	      .limit_bytes = 64 * MIB,
	      .swap_known = true,
	      .swap_bytes = UINT64_MAX,
	      .swap_max_bytes = UINT64_MAX - 1,
	      .swap_total_bytes = UINT64_MAX,
	      .swap_free_bytes = UINT64_MAX,
	      .full_x100 = -1},
	     OOMKIT_OOM_CAUSE_SWAP_MAX},
	    {"a tiny limit", {.usage_bytes = 0, .limit_bytes = 1, .full_x100 = -1}, OOMKIT_OOM_CAUSE_NO_SWAP},
	};
	for (size_t i = 0; i < N_ELEMENTS(t); i++)
		EXPECT_INT(t[i].row, oomkit__v2_oom_rule(&t[i].in), t[i].want);
}

/* Without swap the rule is the old one, for every usage around the limit:
 * under OOM exactly where oomkit__v2_clear_level() says it is not clear. */
static void test_rule_without_swap_is_the_old_one(void **state)
{
	(void)state;
	static const uint64_t limits[] = {1 * MIB, 8 * MIB, 64 * MIB, 3 * GIB, 100 * GIB};
	for (size_t i = 0; i < N_ELEMENTS(limits); i++) {
		uint64_t clear = oomkit__v2_clear_level(limits[i]);
		for (uint64_t u = clear > 4096 ? clear - 4096 : 0; u <= clear + 4096; u += 512) {
			struct oomkit__v2_oom_input in = {
			    .usage_bytes = u, .limit_bytes = limits[i], .full_x100 = -1};
			char row[64];
			snprintf(row, sizeof(row), "limit %llu usage %llu", (unsigned long long)limits[i],
				 (unsigned long long)u);
			EXPECT_INT(row, oomkit__v2_oom_rule(&in) != OOMKIT_OOM_CAUSE_NONE, u >= clear);
		}
	}
}

struct sample {
	uint64_t at_s10; /* tenths of a second */
	uint64_t full_ms;
	int64_t want_x100;	/* -1: not known yet */
	uint64_t want_span_s10; /* when known */
};

static void run_samples(const char *name, const struct sample *s, size_t n, uint64_t span_ns)
{
	struct oomkit__stall st = {0};
	for (size_t i = 0; i < n; i++) {
		char row[64];
		uint64_t span = 0;
		snprintf(row, sizeof(row), "%s, sample %zu", name, i);
		int64_t got =
		    oomkit__stall_share(&st, s[i].at_s10 * SEC / 10, s[i].full_ms * 1000, span_ns, &span);
		EXPECT_INT(row, got, s[i].want_x100);
		if (got >= 0)
			EXPECT_U64(row, span, s[i].want_span_s10 * SEC / 10);
	}
}

static void test_stall_share(void **state)
{
	(void)state;
	/* A span of 8 s: a sample kept every second at most. */
	static const struct sample steady[] = {
	    {0, 0, -1, 0},	  {10, 500, -1, 0},	{40, 2000, -1, 0},     {79, 3950, -1, 0},
	    {80, 4000, 5000, 80}, {90, 5000, 5625, 80}, {120, 5000, 3750, 80}, {200, 5000, 0, 80},
	};
	run_samples("steady", steady, N_ELEMENTS(steady), 8 * SEC);
	/* Samples closer than a step are not kept: the share is over the
	 * newest kept sample a span old. */
	static const struct sample dense[] = {
	    {0, 0, -1, 0},	   {1, 100, -1, 0},	 {2, 200, -1, 0},	 {80, 8000, 10000, 80},
	    {81, 8100, 10000, 81}, {82, 8100, 9878, 82}, {100, 8100, 8100, 100},
	};
	run_samples("dense", dense, N_ELEMENTS(dense), 8 * SEC);
	/* A counter or a clock that goes back (a cgroup removed and made
	 * again under the same name): start again. */
	static const struct sample back[] = {
	    {0, 5000, -1, 0},	   {80, 9000, 5000, 80}, {90, 100, -1, 0},
	    {170, 4100, 5000, 80}, {100, 4100, -1, 0},
	};
	run_samples("back", back, N_ELEMENTS(back), 8 * SEC);
	/* At most 100 %: a stray total past the time that went by. */
	static const struct sample stray[] = {{0, 0, -1, 0}, {80, 100000, 10000, 80}};
	run_samples("stray", stray, N_ELEMENTS(stray), 8 * SEC);
	/* More samples than the ring holds: the oldest go, a span is still found. */
	struct oomkit__stall st = {0};
	uint64_t span = 0;
	int64_t got = -1;
	for (uint64_t t = 0; t <= 600; t++)
		got = oomkit__stall_share(&st, t * SEC / 10, t * 50 * 1000, 8 * SEC, &span);
	EXPECT_INT("ring", got, 5000);
	EXPECT_U64("ring", span, 8 * SEC);
}

/* memory.events.local of a held cgroup after n throttlings at its hold. */
static void events_high(int fd, unsigned n)
{
	char buf[128];
	int len = snprintf(buf, sizeof(buf), "low 0\nhigh %u\nmax 0\noom 0\noom_kill 0\n", n);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, buf, (size_t)len, 0), len);
}

/* Which counts of memory.events.local are an OOM for the handler
 * (oomkit__v2_consume): the first throttling at the hold, not the next
 * ones of the same OOM -- unless that OOM was under way when the cgroup
 * was taken over and the handler has not heard of it. */
static void test_consume_high(void **state)
{
	(void)state;
	struct oomkit_watch w = {.kind = OOMKIT_EVENT_OOM, .taken_over = true};
	w.efd = memfd_create("events", MFD_CLOEXEC);
	assert_true(w.efd >= 0);
	events_high(w.efd, 1);
	EXPECT_INT("idle: the first throttling", oomkit__v2_consume(&w), 1);
	w.state = 1; /* pending */
	events_high(w.efd, 2);
	EXPECT_INT("pending: more of the same OOM", oomkit__v2_consume(&w), 0);
	w.untold = true;
	events_high(w.efd, 3);
	EXPECT_INT("pending since the take-over, untold", oomkit__v2_consume(&w), 1);
	EXPECT_INT("no new count", oomkit__v2_consume(&w), 0);
	w.taken_over = false;
	w.state = 0;
	events_high(w.efd, 4);
	EXPECT_INT("not held: throttling is no OOM", oomkit__v2_consume(&w), 0);
	close(w.efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rule),
	    cmocka_unit_test(test_rule_without_swap_is_the_old_one),
	    cmocka_unit_test(test_stall_share),
	    cmocka_unit_test(test_consume_high),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
