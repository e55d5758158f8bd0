/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testlib.h - helpers for integration tests on the real memory cgroup
 * hierarchy, v1 or v2 (whichever has the memory controller here): a private parent memcg per test process,
 * child memcgs with limits, hog processes, and cleanup that runs even when a test fails (on libtesthelp,
 * tests/helpers/testhelp.h, which test programs may use too).
 */
#ifndef OOMKIT_TESTLIB_H
#define OOMKIT_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TL_MEMORY_ROOT "/sys/fs/cgroup/memory"
#define TL_MIB (1024ull * 1024ull)

/* Exits 77 (skip) with a reason unless root and a memory controller (cgroup
 * v1's, else v2's) are available; with OOMKIT_REQUIRE_KERNEL=1 exits 1
 * instead.  On a systemd machine on cgroup v2 it runs the test again in a
 * transient scope with Delegate=yes, where its cgroups go.  Installs cleanup
 * handlers. */
void tl_require_kernel(void);

/* Whether the tests run on cgroup v2 (after tl_require_kernel()). */
bool tl_v2(void);

/* The memory cgroup mount the relative paths are below (v1's or v2's). */
const char *tl_root(void);

/* Exits 77 on cgroup v2, saying "cgroup v1 only: why" (a test of a v1
 * kernel file or behaviour); OOMKIT_REQUIRE_KERNEL=1 does not change that:
 * the v1 run covers it. */
void tl_require_v1(const char *why);

/* Whether OOMKIT_REQUIRE_KERNEL=1: what a test would skip for fails instead. */
bool tl_kernel_required(void);

/* The test's private parent memcg, relative to the memory root
 * ("oomkit-test-PID-N", on a systemd v2 machine below the test's scope),
 * created on first use with a 1 GiB limit. */
const char *tl_parent(void);

/* Creates parent/name with limit_bytes (0: no limit of its own) and returns
 * its path relative to the memory root (static storage, one per name). */
const char *tl_cgroup(const char *name, uint64_t limit_bytes);

/* Absolute path of a relative cgroup path. */
const char *tl_abs(const char *rel);

/* Starts the hog in cgroup rel: allocates mib MiB in step_kib steps with
 * pause_us between them, then sleeps.  Returns its pid. */
pid_t tl_spawn_hog(const char *rel, unsigned mib, unsigned step_kib, unsigned pause_us);

/* Starts a process in rel that only sleeps. */
pid_t tl_spawn_sleeper(const char *rel);

/* Waits up to timeout_ms for pid (a child) to exit; returns its wait status or
 * -1 on timeout. */
int tl_wait_exit(pid_t pid, int timeout_ms);

/* Whether pid exists and is not a zombie. */
bool tl_alive(pid_t pid);

/* The CPU pid last ran on, or -1. */
int tl_proc_cpu(pid_t pid);

/* Reads a memory.* value (e.g. "memory.usage_in_bytes") of rel; UINT64_MAX on error. */
uint64_t tl_read_u64(const char *rel, const char *file);

/* Reads "key value" from a keyed file (memory.oom_control, memory.stat). */
uint64_t tl_read_key(const char *rel, const char *file, const char *key);

/* Writes a string to a control file of rel; returns 0 or -errno. */
int tl_write(const char *rel, const char *file, const char *value);

/* Polls cond(arg) every 5 ms until it is true or timeout_ms passes. */
bool tl_wait_for(bool (*cond)(void *arg), void *arg, int timeout_ms);

/* Waits until usage of rel is at least bytes (the hog has got that far). */
bool tl_wait_usage(const char *rel, uint64_t bytes, int timeout_ms);

/* Whether rel is in an OOM with the kernel killer held off: v1 under_oom 1;
 * v2 memory.high below memory.max with usage near memory.max. */
bool tl_under_oom(const char *rel);

/* The kernel OOM killer's kills in rel and below: v1 memory.oom_control's
 * oom_kill, v2 memory.events'; UINT64_MAX on error. */
uint64_t tl_kernel_kills(const char *rel);

/* Whether rel's kernel OOM killer is held off: v1 oom_kill_disable 1; v2
 * memory.high below memory.max (lib/cgroup-v2.c). */
bool tl_held(const char *rel);

/* The limit's file: memory.limit_in_bytes (v1) or memory.max (v2). */
const char *tl_limit_file(void);

/* Waits until tl_under_oom(rel). */
bool tl_wait_under_oom(const char *rel, int timeout_ms);

#define TL_FREEZER_ROOT "/sys/fs/cgroup/freezer"

/* The test's own v1 freezer cgroup (TL_FREEZER_ROOT/oomkit-test-PID), made
 * on first use, a parent for freezer cgroups such as liboomkit's (its
 * freezer_root); removed with everything below it, thawed first, by
 * tl_cleanup().  NULL, with errno set, without a freezer hierarchy. */
const char *tl_freezer_parent(void);

/* Moves pid into a v1 freezer cgroup of the test's own (below
 * tl_freezer_parent()) and freezes it:
 * 0, or -ENOENT without a freezer hierarchy (the caller skips), or -errno.
 * A task asleep in a v1 OOM is not frozen until it wakes, and then stops
 * before it returns to user space: its retry of the charge waits for
 * tl_thaw(). */
int tl_freeze(pid_t pid);

/* Thaws what tl_freeze() froze: 0 or -errno. */
int tl_thaw(void);

/* Starts a process that holds pages pages charged to rel (it lives in the
 * test's parent) and gives one back each time tl_give() asks: a page
 * uncharged from a memcg under OOM wakes the tasks waiting there.  Returns
 * its pid; *ret_fd is the test's end. */
pid_t tl_spawn_giver(const char *rel, unsigned pages, int *ret_fd);

/* Has the giver behind fd give back one page: 0, or -1 if it could not. */
int tl_give(int fd);

/* An OOM made to flicker: the hog asleep in rel's OOM is frozen, the giver
 * gives back a page, which wakes it: it clears under_oom and stops before
 * its retry; under_oom reads 0 for hold_ms; thawed, the hog takes the page
 * and fails its charge again.  spend(arg, ms) is how the test waits, for
 * hold_ms or while it looks for under_oom (its own loop, or a sleep). */
struct tl_flicker {
	const char *cg;
	pid_t hog;
	int giver;
	unsigned hold_ms;
	void (*spend)(void *arg, unsigned ms);
	void *arg;
	/* Set by tl_flicker_until_killed(): flickers made, and the longest
	 * time one can have read 0 (from the page given back to the thaw). */
	unsigned flickers;
	uint64_t longest_ms;
};

/* How long the library takes under_oom 0 to mean an OOM is over
 * (OOMKIT__OOM_SETTLE_NS, lib/internal.h): a flicker's 0 is shorter. */
#define TL_OOM_SETTLE_MS 250

/* Flickers f's OOM until the hog is killed: 1 then.  0: it lived through
 * patience_ms of flickers each of whose 0s lasted less than settle_ms (what
 * a flicker is, as opposed to an OOM that ended), counted from the last one
 * that did not; -1: a busy machine stretched the 0s past settle_ms so often
 * that limit_ms passed first, or -ENOENT: no freezer here (the caller
 * skips).  Prints what it did, or why it could not tell. */
int tl_flicker_until_killed(struct tl_flicker *f, unsigned settle_ms, unsigned patience_ms,
			    unsigned limit_ms);

/* Kills every process in our cgroups, re-enables their kernel killers and
 * removes them, deepest first (thawing the freezer cgroup first).  Runs at
 * exit and on fatal signals too. */
void tl_cleanup(void);

/* Path of the hog binary. */
const char *tl_hog_path(void);

#endif
