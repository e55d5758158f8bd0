/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-protect-rule.c - memory priority's rule (protect-rule.h) in tables:
 * when an episode starts and may end, whom it protects and how much, and
 * whom it reclaims from, how much, and when not at all.
 */
#include "unit.h"

#include "rules/protect-rule.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A 512 MiB guest with free swap, stalling 20 % of the time. */
static struct protect_machine guest(void)
{
	return (struct protect_machine){.ram_bytes = 512 * MiB,
					.room_bytes = 400 * MiB,
					.min_room_bytes = 64 * MiB,
					.some_x100 = 2000,
					.stall_percent = 10,
					.step_bytes = 16 * MiB};
}

static void test_pressed_calm(void **state)
{
	static const struct {
		const char *name;
		unsigned some_x100, stall;
		bool pressed, calm;
	} rows[] = {
	    {"no stall", 0, 10, false, true},
	    {"below the threshold, above half of it", 900, 10, false, false},
	    {"at the threshold", 1000, 10, true, false},
	    {"far above", 8000, 10, true, false},
	    {"just below half", 499, 10, false, true},
	    {"off (0 %) never presses", 9000, 0, false, true},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		struct protect_machine m = guest();
		m.some_x100 = rows[i].some_x100;
		m.stall_percent = rows[i].stall;
		EXPECT_U64(rows[i].name, protect_pressed(&m), rows[i].pressed);
		EXPECT_U64(rows[i].name, protect_calm(&m), rows[i].calm);
	}
}

struct row {
	const char *name;
	struct protect_machine m;
	unsigned n;
	struct protect_job jobs[4];
	int pick;
	uint64_t low[4], reclaim[4];
};

static void test_decide(void **state)
{
	const struct protect_machine g = guest();
	struct protect_machine tight = g, big = g, nostep = g;
	tight.room_bytes = 100 * MiB; /* below twice the OOM rule's minimum */
	big.ram_bytes = 64 * GiB;
	big.room_bytes = 60 * GiB;
	big.step_bytes = 64 * MiB;
	nostep.step_bytes = 0;
	const struct row rows[] = {
	    {"redis above a batch job: redis protected at its start, batch reclaimed a step",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 100 * MiB},
	      {.priority = 100, .usage_bytes = 300 * MiB, .start_usage_bytes = 200 * MiB}},
	     1,
	     {100 * MiB, 0},
	     {0, 16 * MiB}},
	    {"every job at one priority: nothing to prefer",
	     g,
	     2,
	     {{.priority = 500, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 500, .usage_bytes = 300 * MiB, .start_usage_bytes = 300 * MiB}},
	     -1,
	     {0, 0},
	     {0, 0}},
	    {"a job with no memory does not set the lowest priority",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 0}},
	     -1,
	     {0, 0},
	     {0, 0}},
	    {"the largest lowest-priority job is reclaimed from, the middle one is protected",
	     g,
	     4,
	     {{.priority = 900, .usage_bytes = 50 * MiB, .start_usage_bytes = 50 * MiB},
	      {.priority = 500, .usage_bytes = 60 * MiB, .start_usage_bytes = 60 * MiB},
	      {.priority = 100, .usage_bytes = 100 * MiB, .start_usage_bytes = 100 * MiB},
	      {.priority = 100, .usage_bytes = 200 * MiB, .start_usage_bytes = 200 * MiB}},
	     3,
	     {50 * MiB, 60 * MiB, 0, 0},
	     {0, 0, 0, 16 * MiB}},
	    {"protection within half of RAM, the highest priority first",
	     g,
	     3,
	     {{.priority = 500, .usage_bytes = 200 * MiB, .start_usage_bytes = 200 * MiB},
	      {.priority = 900, .usage_bytes = 200 * MiB, .start_usage_bytes = 200 * MiB},
	      {.priority = 100, .usage_bytes = 100 * MiB, .start_usage_bytes = 100 * MiB}},
	     2,
	     {56 * MiB, 200 * MiB, 0},
	     {0, 0, 16 * MiB}},
	    {"a higher memory.low someone set is left alone",
	     g,
	     2,
	     {{.priority = 900,
	       .usage_bytes = 90 * MiB,
	       .start_usage_bytes = 90 * MiB,
	       .low_bytes = 128 * MiB},
	      {.priority = 100, .usage_bytes = 300 * MiB, .start_usage_bytes = 300 * MiB}},
	     1,
	     {0, 0},
	     {0, 16 * MiB}},
	    {"never below a quarter of its usage at the start: the last step is what is left",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 105 * MiB, .start_usage_bytes = 400 * MiB}},
	     1,
	     {90 * MiB, 0},
	     {0, 5 * MiB}},
	    {"at its floor: not reclaimed",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 100 * MiB, .start_usage_bytes = 400 * MiB}},
	     -1,
	     {90 * MiB, 0},
	     {0, 0}},
	    {"a small job: never below PROTECT_FLOOR_MIN",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 20 * MiB, .start_usage_bytes = 20 * MiB}},
	     1,
	     {90 * MiB, 0},
	     {0, 4 * MiB}},
	    {"a batch job stalled on its own memory is not pushed further",
	     g,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 300 * MiB, .start_usage_bytes = 300 * MiB, .full_x100 = 1500}},
	     -1,
	     {90 * MiB, 0},
	     {0, 0}},
	    {"no room left to reclaim into: protection stays, reclaim is the OOM rule's turn",
	     tight,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 300 * MiB, .start_usage_bytes = 300 * MiB}},
	     -1,
	     {90 * MiB, 0},
	     {0, 0}},
	    {"a step of 0: protection only",
	     nostep,
	     2,
	     {{.priority = 900, .usage_bytes = 90 * MiB, .start_usage_bytes = 90 * MiB},
	      {.priority = 100, .usage_bytes = 300 * MiB, .start_usage_bytes = 300 * MiB}},
	     -1,
	     {90 * MiB, 0},
	     {0, 0}},
	    {"a 64 GiB server: a step of its own size",
	     big,
	     2,
	     {{.priority = 900, .usage_bytes = 8 * GiB, .start_usage_bytes = 8 * GiB},
	      {.priority = 100, .usage_bytes = 40 * GiB, .start_usage_bytes = 40 * GiB}},
	     1,
	     {8 * GiB, 0},
	     {0, 64 * MiB}},
	};
	(void)state;
	for (size_t i = 0; i < N_ELEMENTS(rows); i++) {
		const struct row *r = &rows[i];
		struct protect_plan plan[4];
		int pick = protect_decide(&r->m, r->jobs, r->n, plan);
		EXPECT_U64(r->name, (uint64_t)(int64_t)pick, (uint64_t)(int64_t)r->pick);
		for (unsigned j = 0; j < r->n; j++) {
			EXPECT_U64(r->name, plan[j].low_bytes, r->low[j]);
			EXPECT_U64(r->name, plan[j].reclaim_bytes, r->reclaim[j]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pressed_calm),
	    cmocka_unit_test(test_decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
