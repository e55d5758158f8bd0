/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-options.c - struct oomkit_options across versions: a program built
 * with an older, shorter struct gets 0 (the default) for every field it
 * lacks; one built with a newer, longer struct is accepted as long as the
 * fields this library does not know are not set; sz must be set.
 */
#include "unit.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char root[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/oomkit-unit-options-XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(root);
}

static void test_init_sets_sz(void **state)
{
	(void)state;
	struct oomkit_options o;
	memset(&o, 0x5a, sizeof(o));
	oomkit_options_init(&o);
	assert_int_equal(o.sz, sizeof(o));
	assert_true(o.guardian);
	assert_false(o.mlock);
	assert_null(o.memory_root);
	assert_int_equal(o.max_pids, 0);
}

/* An older program's struct: the fields up to max_cgroups, nothing after. */
static void test_shorter_struct(void **state)
{
	(void)state;
	struct oomkit_options o;
	oomkit_ctx *ctx;
	oomkit_options_init(&o);
	o.memory_root = root;
	o.max_cgroups = 7;
	o.max_pids = 99;   /* past sz: never read */
	o.guardian = true; /* past sz: never read, so off */
	o.sz = offsetof(struct oomkit_options, max_pids);
	assert_int_equal(oomkit_new(&o, &ctx), 0);
	assert_int_equal(ctx->max_cgroups, 7);
	assert_int_equal(ctx->max_pids, 4096);
	assert_int_equal(oomkit_guardian_pid(ctx), 0);
	oomkit_free(ctx);
}

/* A newer program's struct: more than we know, accepted while it is 0. */
static void test_longer_struct(void **state)
{
	(void)state;
	struct {
		struct oomkit_options known;
		uint64_t later[4];
	} o = {0};
	oomkit_ctx *ctx;
	oomkit_options_init(&o.known);
	o.known.sz = sizeof(o);
	o.known.memory_root = root;
	o.known.guardian = false;
	assert_int_equal(oomkit_new(&o.known, &ctx), 0);
	oomkit_free(ctx);
	o.later[3] = 1;
	assert_int_equal(oomkit_new(&o.known, &ctx), -E2BIG);
}

static void test_sz_unset(void **state)
{
	(void)state;
	struct oomkit_options o = {0};
	oomkit_ctx *ctx = NULL;
	o.memory_root = root;
	assert_int_equal(oomkit_new(&o, &ctx), -EINVAL);
	assert_null(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_sets_sz),
	    cmocka_unit_test_setup_teardown(test_shorter_struct, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_longer_struct, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sz_unset, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
