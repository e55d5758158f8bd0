/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sdbus.c - which cgroups daemon/sdbus.c takes for systemd's (a unit's
 * cgroup under slices only: what oomkitd changes there goes through systemd)
 * and which it leaves to direct writes, with a table of good and hostile
 * paths; and where the helper's state file goes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sdbus.h"

static void test_unit_of(void **state)
{
	static const struct {
		const char *rel, *unit; /* unit NULL: not systemd's */
	} cases[] = {
	    {"system.slice/batch-17.service", "batch-17.service"},
	    {"system.slice", "system.slice"},
	    {"batch.slice/batch-oomkit-run-42.scope", "batch-oomkit-run-42.scope"},
	    {"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice",
	     "kubepods-besteffort-pod1.slice"},
	    {"system.slice/var-lib.mount", "var-lib.mount"},
	    {"init.scope", "init.scope"},
	    /* Below a unit's cgroup: delegated (a user manager's, a container's). */
	    {"user.slice/user-1000.slice/user@1000.service/app.slice/app-x.scope", NULL},
	    {"system.slice/docker.service/container", NULL},
	    /* oomkitd's own tree, and other names that are no units. */
	    {"oomkit.slice/machine", NULL},
	    {"oomkit.slice/machine/batch", NULL},
	    {"machine/batch", NULL},
	    {"system.slice/.service", NULL},
	    {"system.slice/", NULL},
	    {"", NULL},
	    {"a.slice/b.slicex/c.service", NULL},
	    {"service", NULL},
	};
	char unit[SDBUS_UNIT_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(unit, 'x', sizeof(unit));
		bool r = sdbus_unit_of(cases[i].rel, unit, sizeof(unit));
		if (r != (cases[i].unit != NULL))
			fail_msg("%s: %s", cases[i].rel, r ? "taken for a unit's" : "not taken for a unit's");
		if (r)
			assert_string_equal(unit, cases[i].unit);
	}
}

static void test_unit_of_long(void **state)
{
	char rel[SDBUS_UNIT_MAX + 32], unit[SDBUS_UNIT_MAX];

	(void)state;
	/* A last component longer than a unit name can be is none. */
	memset(rel, 'a', sizeof(rel));
	memcpy(rel, "system.slice/", 13);
	strcpy(rel + sizeof(rel) - 9, ".service");
	assert_false(sdbus_unit_of(rel, unit, sizeof(unit)));
	/* Nor one that does not fit the caller's buffer. */
	assert_false(sdbus_unit_of("system.slice/batch-17.service", unit, 8));
}

static void test_scope_for(void **state)
{
	static const struct {
		const char *pattern, *unit, *slice; /* unit NULL: none */
	} cases[] = {
	    {"system.slice/batch-*.scope", "batch-oomkit-run-42.scope", "system.slice"},
	    {"batch.slice/*", "oomkit-run-42.scope", "batch.slice"},
	    {"batch.slice/*.scope", "oomkit-run-42.scope", "batch.slice"},
	    {"a.slice/a-b.slice/x-*.scope", "x-oomkit-run-42.scope", "a-b.slice"},
	    {"run-*.scope", "run-oomkit-run-42.scope", "-.slice"},
	    /* systemd would put bar.slice at the root, not below foo.slice. */
	    {"foo.slice/bar.slice/x-*.scope", NULL, NULL},
	    /* Not a scope, or a "*" above the last component. */
	    {"system.slice/batch-*.service", NULL, NULL},
	    {"system.slice/batch-*-x", NULL, NULL},
	    {"*.slice/x-*.scope", NULL, NULL},
	    /* Below a unit: a delegated subtree, not systemd's to place. */
	    {"system.slice/docker.service/x-*.scope", NULL, NULL},
	    {"user.slice/user-*.slice/user@*.service/app.slice/app-*.scope", NULL, NULL},
	    /* A fixed name is no place for a new scope of each run. */
	    {"system.slice/fixed.scope", NULL, NULL},
	};
	char unit[SDBUS_UNIT_MAX], slice[SDBUS_UNIT_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool r = sdbus_scope_for(cases[i].pattern, 42, unit, sizeof(unit), slice, sizeof(slice));
		if (r != (cases[i].unit != NULL))
			fail_msg("%s: %s", cases[i].pattern, r ? unit : "no scope");
		if (r) {
			assert_string_equal(unit, cases[i].unit);
			assert_string_equal(slice, cases[i].slice);
		}
	}
	/* A name that does not fit is none, never a cut one. */
	assert_false(sdbus_scope_for("system.slice/batch-*.scope", 42, unit, 12, slice, sizeof(slice)));
}

static void test_state_path(void **state)
{
	char p[64];

	(void)state;
	assert_int_equal(sdbus_state_path("/run/oomkit/oomkitd.sock", p, sizeof(p)), 0);
	assert_string_equal(p, "/run/oomkit/systemd-units");
	assert_int_equal(sdbus_state_path("oomkitd.sock", p, sizeof(p)), -EINVAL);
	assert_int_equal(sdbus_state_path("/oomkitd.sock", p, sizeof(p)), -EINVAL);
	assert_int_equal(sdbus_state_path("/run/a-directory-name-far-too-long-for-the-buffer/x.sock", p, 32),
			 -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unit_of),
	    cmocka_unit_test(test_unit_of_long),
	    cmocka_unit_test(test_scope_for),
	    cmocka_unit_test(test_state_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
