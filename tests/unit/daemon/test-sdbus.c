/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-sdbus.c - which cgroups daemon/scope/sdbus.c takes for systemd's (a unit's
 * cgroup under slices only: what oomkitd changes there goes through systemd)
 * and which it leaves to direct writes, with a table of good and hostile
 * paths; where the helper's state file goes; and what happens when the
 * helper falls behind: on a real socket pair whose far end is not read until
 * the queue is full, changes wait in their scopes, the latest per unit, and
 * go in order once it is read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sys/socket.h>
#include <unistd.h>

#include "scope/sdbus.h"

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

/* ------------------------------------------------------------ behind */

struct helper_end {
	int fd;
	unsigned n;
	struct sdbus_msg last[4]; /* the latest SET per unit, by unit index */
	unsigned sets[4];	  /* SETs per unit */
};

static const char *const units[] = {"system.slice/u0.service", "system.slice/u1.service",
				    "system.slice/u2.service", "system.slice/ghost.service"};

/* Reads everything the daemon's side sent. */
static void drain(struct helper_end *h)
{
	struct sdbus_msg m;

	while (recv(h->fd, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m)) {
		h->n++;
		assert_int_equal(m.op, SDBUS_SET);
		for (unsigned i = 0; i < 4; i++)
			if (strcmp(m.unit, strrchr(units[i], '/') + 1) == 0) {
				h->last[i] = m;
				h->sets[i]++;
			}
	}
}

static void stop_when_caught_up(void *data)
{
	struct sdbus *b = data;
	if (!b->behind)
		loop_stop(b->loop);
}

static void test_behind(void **state)
{
	static struct config_job job = {.name = "units"};
	struct scopes t;
	struct loop loop;
	struct sdbus b = {.sock = -1};
	struct helper_end h = {0};
	int sv[2], err;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(scopes_init(&t, 8), 0);
	assert_int_equal(scope_set_machine_rel(&t, ""), 0);
	struct scope *s[3];
	for (unsigned i = 0; i < 3; i++)
		assert_non_null(s[i] = scope_add_instance(&t, &job, units[i], &err));
	assert_int_equal(loop_init(&loop), 0);
	b.sock = sv[0];
	b.pid = getpid();
	h.fd = sv[1];
	assert_int_equal(sdbus_attach(&b, &loop, &t), 0);

	/* Unit 0 changes until the queue is full (93 changes here): nothing is
	 * lost from then on. */
	uint64_t v = 0;
	while (!b.behind && v < 1000000) {
		v++;
		sdbus_limits(&b, units[0], v, v + 1);
	}
	assert_true(b.behind);
	assert_true(s[0]->sd_waiting);
	uint64_t queued = v - 1; /* the last one waits */
	/* Behind, every change waits, the latest per scope; one of no scope is lost. */
	sdbus_limits(&b, units[1], 11, 12);
	sdbus_limits(&b, units[1], 13, 14);
	sdbus_limits(&b, units[2], 21, 22);
	sdbus_limits(&b, units[0], 7, 8);
	sdbus_limits(&b, units[3], 31, 32);
	assert_int_equal(b.dropped, 1);
	/* A scope removed while its change waits: nobody to tell. */
	scope_remove(&t, s[2]);
	/* Not a unit's cgroup: never sent, never waits. */
	sdbus_limits(&b, "outside/x", 1, 2);

	/* The helper reads what was queued; the rest goes once there is room. */
	drain(&h);
	assert_int_equal(h.n, queued);
	assert_int_equal(h.last[0].high_bytes, queued);
	loop_on_turn(&loop, stop_when_caught_up, &b);
	assert_int_equal(loop_run(&loop), 0);
	assert_false(b.behind);
	drain(&h);
	assert_int_equal(h.n, queued + 2);
	assert_true(h.last[0].high_bytes == 7 && h.last[0].max_bytes == 8);
	assert_true(h.last[1].high_bytes == 13 && h.last[1].max_bytes == 14);
	assert_int_equal(h.sets[1], 1);
	assert_int_equal(h.sets[2], 0);
	assert_int_equal(h.sets[3], 0);
	assert_false(s[0]->sd_waiting || s[1]->sd_waiting);

	/* Caught up, a change goes at once again. */
	sdbus_limits(&b, units[1], 15, 16);
	assert_false(b.behind);
	drain(&h);
	assert_true(h.last[1].high_bytes == 15 && h.sets[1] == 2);

	loop_close(&loop);
	close(sv[0]);
	close(sv[1]);
	scopes_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unit_of),	 cmocka_unit_test(test_behind),
	    cmocka_unit_test(test_unit_of_long), cmocka_unit_test(test_scope_for),
	    cmocka_unit_test(test_state_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
