/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-scope.c - the scope table: a scope's memcg path (an allocation of its
 * own length made when its slot is given, scope.h) and label read back as
 * they were given, with an instance's hostile cgroup name escaped in its
 * label (cut to fit; kept readable after its scope is removed, and kept
 * nowhere for jobs alone); a removed scope's slot reads "" and no longer
 * answers to its reference; a path too long or a full table refuses without
 * a slot taken.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scope/scope.h"

static struct config_job job(const char *name)
{
	struct config_job j;

	memset(&j, 0, sizeof(j));
	snprintf(j.name, sizeof(j.name), "%s", name);
	return j;
}

static void test_paths_and_labels(void **state)
{
	(void)state;
	struct scopes t;
	struct config_job web = job("web"), batch = job("batch");
	int err = 0;

	assert_int_equal(scopes_init(&t, 4), 0);
	assert_string_equal(t.machine.rel, "");
	assert_string_equal(t.machine.label, "machine");
	assert_int_equal(scope_set_machine_rel(&t, "oomkit.slice"), 0);
	assert_string_equal(t.machine.rel, "oomkit.slice");
	assert_string_equal(t.machine.label, "machine");

	struct scope *w = scope_add_job(&t, &web, "oomkit.slice/web", &err);
	assert_non_null(w);
	assert_string_equal(w->rel, "oomkit.slice/web");
	assert_string_equal(w->label, "web");
	assert_null(t.labels); /* jobs alone keep no table of labels */
	/* An instance's label is its cgroup's last component, escaped: the
	 * job's owner named it. */
	struct scope *b = scope_add_instance(&t, &batch, "system.slice/batch-\n1.service", &err);
	assert_non_null(b);
	assert_string_equal(b->rel, "system.slice/batch-\n1.service");
	assert_string_equal(b->label, "batch [batch-\\x0a1.service]");
	/* A snapshot's group name points at the label: it outlives the scope. */
	const char *named = b->label;
	scope_remove(&t, b);
	assert_string_equal(b->label, "");
	assert_string_equal(named, "batch [batch-\\x0a1.service]");
	/* The longest label is cut to fit, whatever the job's name. */
	struct config_job longest = job("");
	memset(longest.name, 'n', sizeof(longest.name) - 1);
	char deep[SCOPE_REL_MAX];
	memset(deep, '\n', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	struct scope *l = scope_add_instance(&t, &longest, deep, &err);
	assert_non_null(l);
	assert_true(strlen(l->label) < SCOPE_LABEL_MAX);
	assert_int_equal(strncmp(l->label, longest.name, strlen(longest.name)), 0);
	assert_int_equal(l->label[strlen(l->label) - 1], ']');
	assert_ptr_equal(scope_by_rel(&t, "oomkit.slice/web"), w);
	assert_ptr_equal(scope_of_cgroup(&t, "oomkit.slice/web/a/b"), w);
	assert_ptr_equal(scope_by_rel(&t, "oomkit.slice"), &t.machine);
	scopes_free(&t);
}

static void test_remove_and_reuse(void **state)
{
	(void)state;
	struct scopes t;
	struct config_job a = job("a"), b = job("b");
	int err = 0;

	assert_int_equal(scopes_init(&t, 4), 0);
	struct scope *s = scope_add_job(&t, &a, "m/a", &err);
	assert_non_null(s);
	struct scope_ref ref = scope_ref(s);
	scope_remove(&t, s);
	/* A removed scope reads as a free slot did: nothing, not freed memory. */
	assert_false(s->in_use);
	assert_string_equal(s->rel, "");
	assert_string_equal(s->label, "");
	assert_null(scope_get(ref));
	assert_null(scope_by_rel(&t, "m/a"));
	struct scope *again = scope_add_job(&t, &b, "m/b-with-a-longer-path", &err);
	assert_ptr_equal(again, s); /* the slot is reused, with strings of its own */
	assert_string_equal(again->rel, "m/b-with-a-longer-path");
	assert_string_equal(again->label, "b");
	assert_null(scope_get(ref));
	scopes_free(&t);
}

static void test_refused(void **state)
{
	(void)state;
	struct scopes t;
	struct config_job a = job("a");
	char rel[SCOPE_REL_MAX + 1];
	int err = 0;

	assert_int_equal(scopes_init(&t, 2), 0);
	memset(rel, 'x', SCOPE_REL_MAX);
	rel[SCOPE_REL_MAX] = 0;
	assert_null(scope_add_job(&t, &a, rel, &err));
	assert_int_equal(err, -ENAMETOOLONG);
	assert_int_equal(scope_set_machine_rel(&t, rel), -ENAMETOOLONG);
	assert_int_equal(t.n_slots, 0);
	rel[SCOPE_REL_MAX - 1] = 0; /* the longest that fits */
	struct scope *s = scope_add_job(&t, &a, rel, &err);
	assert_non_null(s);
	assert_string_equal(s->rel, rel);
	assert_non_null(scope_add_job(&t, &a, "m/2", &err));
	assert_null(scope_add_job(&t, &a, "m/3", &err));
	assert_int_equal(err, -ENOSPC);
	scopes_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths_and_labels),
	    cmocka_unit_test(test_remove_and_reuse),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
