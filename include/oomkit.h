/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit.h - the whole public API of liboomkit.
 *
 * liboomkit lets user space decide what happens when a memory cgroup runs out
 * of memory.  A program creates a context, watches cgroups, optionally takes
 * over their OOM handling (the kernel OOM killer is held off for a bounded
 * delay), and supplies one handler callback.  The library runs the event loop,
 * preallocates every buffer the handler path needs, keeps a separate guardian
 * process that hands an OOM back to the kernel if the handler hangs or dies,
 * and offers allocation-free helpers to inspect and act on cgroups and
 * processes.
 *
 * Conventions: every function that can fail returns >= 0 on success and
 * -errno on failure; out-parameters are named ret_* and are written only on
 * success.  The library never prints and never exits; it logs through an
 * optional callback.  Cgroup arguments are paths relative to the root of the
 * hierarchy ("" or "/" is the root, "jobs/web" a child); an absolute path
 * under the mount point is accepted as well.
 *
 * Compatibility: a program built against this header keeps working with
 * later versions of the library, which add fields to these structs so:
 *   - struct oomkit_options starts with sz, its size as the program was
 *     compiled, which oomkit_options_init() sets (it is inline for that
 *     reason).  The library reads the first sz bytes only and takes any field
 *     past them as 0: every field added later has 0 as its default.
 *   - the other structs a program allocates (oomkit_process,
 *     oomkit_cgroup_memory, oomkit_system_memory, oomkit_event,
 *     oomkit_decision) end in reserved space, where later fields go, with 0
 *     meaning "not known" or "not set".  Zero a struct you fill in yourself
 *     ({0} or designated initialisers); the library zeroes what it writes.
 *   - structs the library hands out (oomkit_pid_entry) may grow at the end.
 */
#ifndef OOMKIT_H
#define OOMKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OOMKIT_VERSION_MAJOR 0
#define OOMKIT_VERSION_MINOR 1

/* "No limit": what memory.limit_in_bytes / memory.max report when unlimited. */
#define OOMKIT_UNLIMITED UINT64_MAX

typedef struct oomkit_ctx oomkit_ctx;
typedef struct oomkit_watch oomkit_watch;

/* ---------------------------------------------------------------- logging */

enum oomkit_log_level {
	OOMKIT_LOG_ERR = 3,
	OOMKIT_LOG_WARNING = 4,
	OOMKIT_LOG_NOTICE = 5,
	OOMKIT_LOG_INFO = 6,
	OOMKIT_LOG_DEBUG = 7,
};

/* Receives one formatted message (no trailing newline).  Called on the
 * handler path too, so it must not allocate if the caller cares about that. */
typedef void (*oomkit_log_fn)(enum oomkit_log_level level, const char *msg, void *userdata);

/* Told after the library wrote a cgroup v2 memcg's memory.high or memory.max
 * (a take-over's hold and its release, oomkit_set_limit(), a loan), with the
 * cgroup relative to the memory root and what both files read now
 * (OOMKIT_UNLIMITED: "max").  For a caller that must tell the cgroup's owner
 * (systemd, for the cgroup of a unit) what was changed.  Called on the
 * handler path: it must not allocate or block if the caller cares. */
typedef void (*oomkit_limits_fn)(oomkit_ctx *ctx, const char *cgroup, uint64_t high_bytes, uint64_t max_bytes,
				 void *userdata);

/* ---------------------------------------------------------------- context */

struct oomkit_options {
	size_t sz;		  /* sizeof(struct oomkit_options), set by oomkit_options_init() */
	const char *memory_root;  /* cgroup v1 memory mount; NULL: from /proc/self/mounts */
	const char *cgroup2_root; /* cgroup2 mount; NULL: from /proc/self/mounts */
	const char *freezer_root; /* cgroup v1 freezer mount; NULL: from /proc/self/mounts */
	const char *proc_root;	  /* NULL: "/proc" */
	unsigned max_cgroups;	  /* watches and cgroup walks are sized for this; 0: 1024 */
	unsigned max_pids;	  /* pid buffers are sized for this; 0: 4096 */
	bool mlock;		  /* prefault and mlockall() after setup */
	bool guardian;		  /* start a guardian process for taken-over cgroups */
	bool protect;		  /* set oom_score_adj -1000 on self and guardian (root);
				   * children inherit it: reset it in a child you fork */
	oomkit_log_fn log;	  /* NULL: no logging */
	void *log_userdata;
	/* The oomkit-guardian program to exec as the guardian.  NULL: the
	 * environment's OOMKIT_GUARDIAN, else the installed one; "" (here or
	 * there): none, the guardian is a fork of this process.  Where the
	 * program cannot run the guardian is a fork too. */
	const char *guardian_path;
	oomkit_limits_fn limits; /* NULL: nobody is told (cgroup v1: never called) */
	void *limits_userdata;
	const char *sys_root; /* NULL: "/sys" (zram devices' mm_stat) */
};

/* Fills *opts with defaults: autodetected mounts, guardian on, mlock off,
 * and sz.  Inline, so that sz is the size this program was compiled with. */
static inline void oomkit_options_init(struct oomkit_options *opts)
{
	struct oomkit_options defaults = {0};
	defaults.sz = sizeof(defaults);
	defaults.guardian = true;
	*opts = defaults;
}

/* Creates a context: detects mounts, allocates every buffer, starts the
 * guardian if asked.  -ENOENT: no memory cgroup hierarchy was found;
 * -EINVAL: opts->sz is not set; -E2BIG: opts is larger than this library
 * knows and sets a field it does not have. */
int oomkit_new(const struct oomkit_options *opts, oomkit_ctx **ret_ctx);

/* Hands every taken-over cgroup back to the kernel OOM killer, stops the
 * guardian, closes every watch and frees the context.  NULL is a no-op. */
void oomkit_free(oomkit_ctx *ctx);

/* Which cgroup interface a path is served by. */
enum oomkit_backend {
	OOMKIT_BACKEND_NONE = 0,
	OOMKIT_BACKEND_V1 = 1, /* memory.oom_control, cgroup.event_control */
	OOMKIT_BACKEND_V2 = 2, /* memory.events, memory.high/max, cgroup.kill */
};

/* The backend of the context's memory hierarchy. */
enum oomkit_backend oomkit_backend(const oomkit_ctx *ctx);

/* The mount point the context resolves relative cgroup paths against. */
const char *oomkit_memory_root(const oomkit_ctx *ctx);

/* --------------------------------------------------------------- events */

enum oomkit_event_kind {
	OOMKIT_EVENT_OOM = 1,	    /* the memcg (or an ancestor) is at its limit, nothing reclaimable */
	OOMKIT_EVENT_THRESHOLD = 2, /* usage crossed a threshold, either way */
	OOMKIT_EVENT_PRESSURE = 3,  /* memory.pressure_level reported a level */
	OOMKIT_EVENT_GONE = 4,	    /* the cgroup was removed; the watch is closed after this */
};

enum oomkit_pressure_level {
	OOMKIT_PRESSURE_LOW = 0,
	OOMKIT_PRESSURE_MEDIUM = 1,
	OOMKIT_PRESSURE_CRITICAL = 2,
};

/* Why a cgroup v2 cgroup counts as out of memory (v1 has the kernel's own
 * under_oom, which says no more).  Near its limit -- held at memory.high, or
 * at memory.max -- a cgroup that can still swap is swapping, not out of
 * memory: it is out of memory once it cannot swap, or once its own
 * memory.pressure says it is stuck. */
enum oomkit_oom_cause {
	OOMKIT_OOM_CAUSE_NONE = 0, /* not out of memory, or not told (v1) */
	OOMKIT_OOM_CAUSE_NO_SWAP =
	    1, /* at its limit, with no swap on the machine or a memory.swap.max of 0 */
	OOMKIT_OOM_CAUSE_SWAP_MAX = 2,	/* at its limit, its memory.swap.max reached */
	OOMKIT_OOM_CAUSE_SWAP_FULL = 3, /* at its limit, the machine's swap full */
	OOMKIT_OOM_CAUSE_STALLED = 4,	/* at its limit and stalled: memory.pressure "full" for long */
	OOMKIT_OOM_CAUSE_LIMIT = 5,	/* at its limit, swap not counted (OOMKIT_WATCH_AT_LIMIT) */
};

struct oomkit_event {
	enum oomkit_event_kind kind;
	oomkit_watch *watch;
	const char *cgroup;		  /* the watched cgroup, relative to the root */
	const char *origin;		  /* OOM: the cgroup whose limit was hit (cgroup or an ancestor) */
	bool own;			  /* OOM: origin is the watched cgroup itself */
	bool under_oom;			  /* state when the event was read */
	uint64_t usage_bytes;		  /* of the watched cgroup */
	uint64_t limit_bytes;		  /* of the watched cgroup; OOMKIT_UNLIMITED if none */
	uint64_t threshold_bytes;	  /* THRESHOLD: the threshold crossed */
	bool rising;			  /* THRESHOLD: usage is now at or above it */
	enum oomkit_pressure_level level; /* PRESSURE */
	uint64_t time_ns;		  /* CLOCK_MONOTONIC when the kernel event was read */
	/* cgroup v2: memory.events of the watched cgroup (hierarchical); 0 on v1. */
	uint64_t events_high, events_max, events_oom, events_oom_kill;
	/* OOM, cgroup v2: why under_oom (NONE when it is not), and what the
	 * rule read: the cgroup's memory.swap.current and .max (OOMKIT_UNLIMITED
	 * for max or without swap accounting), the machine's free swap, and the
	 * share of the last stall_span_ms its memory.pressure was "full"
	 * (percent times 100; stall_span_ms 0 while not known yet). */
	uint32_t oom_cause; /* enum oomkit_oom_cause */
	uint32_t stall_full_x100;
	uint64_t stall_span_ms;
	uint64_t swap_bytes, swap_max_bytes, swap_free_bytes;
	uint64_t reserved[3]; /* for later fields; 0 */
};

/* What a handler tells the library about an OOM it was shown. */
enum oomkit_verdict {
	OOMKIT_RESOLVED = 0, /* memory was freed or the limit raised */
	OOMKIT_KERNEL = 1,   /* hand the OOM to the kernel OOM killer now */
	OOMKIT_WAIT = 2,     /* keep waiting; the kernel steps in after the delay */
};

/* The one callback a program writes.  Runs on the loop's thread; must not
 * allocate if the program wants the reserve guarantees.  The verdict matters
 * only for OOM events on taken-over cgroups whose origin is the cgroup itself. */
typedef enum oomkit_verdict (*oomkit_handler_fn)(oomkit_ctx *ctx, const struct oomkit_event *event,
						 void *userdata);

/* Watch flags. */
#define OOMKIT_WATCH_ALLOW_SELF 0x1u /* allow watching a cgroup that contains this process */
/* PRESSURE watches: a PSI trigger instead of v1 memory.pressure_level.  For
 * the root it is the machine's /proc/pressure/memory; on a v1 machine with a
 * cgroup2 mount, a cgroup's memory.pressure at the same path in the cgroup2
 * hierarchy (which reports stalls even without its memory controller).  On
 * v2, pressure watches are always PSI triggers. */
#define OOMKIT_WATCH_PSI 0x2u
/* OOM watches on cgroup v2: the cgroup is out of memory at its limit,
 * whatever swap it could use (OOMKIT_OOM_CAUSE_LIMIT).  For a cgroup whose
 * reclaim takes from cgroups below it of differing importance (a machine
 * holding jobs), where swapping them all alike is not what a handler that
 * ranks them wants.  The guardian keeps the swap rule: a held cgroup that
 * swaps makes progress, and is no OOM that it must hand to the kernel. */
#define OOMKIT_WATCH_AT_LIMIT 0x4u

/* Watches cgroup for OOM events (and GONE).  -ELOOP: the cgroup contains the
 * calling process (a handler there hangs in the kernel) unless
 * OOMKIT_WATCH_ALLOW_SELF; -ENOSPC: max_cgroups watches exist. */
int oomkit_watch_oom(oomkit_ctx *ctx, const char *cgroup, unsigned flags, oomkit_handler_fn handler,
		     void *userdata, oomkit_watch **ret_watch);

/* Watches usage crossing threshold_bytes in either direction (and GONE). */
int oomkit_watch_threshold(oomkit_ctx *ctx, const char *cgroup, uint64_t threshold_bytes, unsigned flags,
			   oomkit_handler_fn handler, void *userdata, oomkit_watch **ret_watch);

/* Watches memory pressure at level or above (v1 memory.pressure_level, and GONE). */
int oomkit_watch_pressure(oomkit_ctx *ctx, const char *cgroup, enum oomkit_pressure_level level,
			  unsigned flags, oomkit_handler_fn handler, void *userdata,
			  oomkit_watch **ret_watch);

/* Watches the first sign of memory running short, a PSI trigger: an event
 * (PRESSURE, level LOW) when tasks of cgroup ("" : the whole machine,
 * /proc/pressure/memory) stalled on memory for stall_us within window_us
 * ("some"), at most once a window.  window_us is 500000..10000000 and, for a
 * process without CAP_SYS_RESOURCE, a multiple of 2 s; stall_us is
 * 1..window_us.  -EINVAL on other values; -EOPNOTSUPP: no PSI here.
 * Embedded through oomkit_fd() in another epoll set, such an event can be
 * lost: the kernel clears a trigger's event when it is polled, and the
 * outer epoll polls it first.  Look at oomkit_pressure_read() after each
 * wakeup of oomkit_fd() to tell. */
int oomkit_watch_stall(oomkit_ctx *ctx, const char *cgroup, uint32_t stall_us, uint32_t window_us,
		       unsigned flags, oomkit_handler_fn handler, void *userdata, oomkit_watch **ret_watch);

/* Stops a watch and frees it.  If it was the last watch holding a take-over
 * of its cgroup, the kernel OOM killer is given back first. */
int oomkit_unwatch(oomkit_ctx *ctx, oomkit_watch *watch);

/* The cgroup a watch is on, relative to the root. */
const char *oomkit_watch_cgroup(const oomkit_watch *watch);

/* Takes over the OOM handling of an OOM-watched cgroup: the kernel OOM killer
 * is disabled for it, and if it is still under OOM delay_ms after an event,
 * the kernel killer is re-enabled so the kernel resolves it.  The guardian
 * process enforces the same delay if this process hangs or dies.  The delay
 * runs from the OOM's first event until it is over: at the first clear
 * under_oom after the handler answered OOMKIT_RESOLVED, else once under_oom
 * has stayed clear for a quarter of a second (a page given back in the
 * cgroup wakes the waiting tasks, which clear it until they fail their charge
 * again: a 0 now and then must not start the delay again).  After the
 * kernel has resolved an OOM the library disables its killer again: once the
 * kernel's oom_kill count has moved and under_oom is clear, or once under_oom
 * has stayed clear for a second (an OOM that ended without a kill, or whose
 * victim a v1 kernel counts in a cgroup below).  A clear under_oom alone is
 * not taken for the end: giving the killer back wakes the waiting tasks,
 * which clear it until they fail their charge again and meet the killer.
 * Called again on a watch taken over (a new delay, or the hold written again
 * after someone wrote over it), it holds the killer off again, except during
 * an OOM already handed to the kernel: that stays the kernel's until it is
 * over.  -EINVAL: not an OOM watch. */
int oomkit_take_over(oomkit_ctx *ctx, oomkit_watch *watch, uint64_t delay_ms);

/* Hands the OOM under way in a taken-over watch's cgroup to the kernel OOM
 * killer now, from outside the handler (a person answered, a timer of the
 * caller's ran out); the library holds the killer off again once the kernel
 * has resolved it.  -EINVAL: not taken over. */
int oomkit_hand_to_kernel(oomkit_ctx *ctx, oomkit_watch *watch);

/* Gives the kernel OOM killer back to a taken-over watch's cgroup. */
int oomkit_release(oomkit_ctx *ctx, oomkit_watch *watch);

/* ------------------------------------------------------------------ loop */

/* Runs the event loop until oomkit_stop() or an error. */
int oomkit_run(oomkit_ctx *ctx);

/* Makes oomkit_run() return after the current dispatch.  Async-signal-safe. */
void oomkit_stop(oomkit_ctx *ctx);

/* An fd that becomes readable when oomkit_dispatch() has work, for embedding
 * the library in another event loop. */
int oomkit_fd(const oomkit_ctx *ctx);

/* Handles what is ready, waiting up to timeout_ms (-1: forever, 0: not at
 * all).  Returns the number of kernel events and timers handled. */
int oomkit_dispatch(oomkit_ctx *ctx, int timeout_ms);

/* --------------------------------------------- helpers: cgroups (no malloc) */

struct oomkit_cgroup_memory {
	uint64_t usage_bytes;
	uint64_t limit_bytes;	  /* OOMKIT_UNLIMITED if none */
	uint64_t max_usage_bytes; /* v1 memory.max_usage_in_bytes, v2 memory.peak */
	uint64_t failcnt;	  /* v1 memory.failcnt, v2 memory.events max */
	uint64_t oom_kill;	  /* kernel OOM kills counted by the cgroup */
	bool under_oom;
	bool oom_kill_disable; /* the kernel killer is held off (v2: memory.high below memory.max) */
	bool oom_group;	       /* v2 memory.oom.group: the kernel kills the whole cgroup at once */
	/* cgroup v2: memory.events (hierarchical); 0 on v1. */
	uint64_t events_high, events_max, events_oom, events_oom_kill;
	/* cgroup v2: why under_oom and what the rule read, as in struct
	 * oomkit_event (no stall history here: a stall is only known to a
	 * watch, which samples its memory.pressure over time). */
	uint32_t oom_cause; /* enum oomkit_oom_cause */
	uint32_t stall_full_x100;
	uint64_t stall_span_ms;
	uint64_t swap_bytes, swap_max_bytes, swap_free_bytes;
	uint64_t reserved[3]; /* for later fields; 0 */
};

/* Reads a cgroup's memory counters. */
int oomkit_cgroup_memory(oomkit_ctx *ctx, const char *cgroup, struct oomkit_cgroup_memory *ret_mem);

/* Reads one memory.stat key (e.g. "total_rss", "anon").  -ENOENT: no such key. */
int oomkit_cgroup_stat(oomkit_ctx *ctx, const char *cgroup, const char *key, uint64_t *ret_value);

/* Writes up to n pids of cgroup (and its descendants if recursive) into
 * pids; returns how many were written.  -ENOBUFS: more than n (pids then
 * holds the first n found; oomkit_cgroup_walk_pids() sees every one). */
int oomkit_cgroup_pids(oomkit_ctx *ctx, const char *cgroup, bool recursive, pid_t *pids, size_t n);

/* A process found by oomkit_cgroup_walk_pids().  The library owns it; it is
 * valid during the callback only, and later versions may add fields at its
 * end. */
struct oomkit_pid_entry {
	pid_t pid;
	/* The cgroup it is listed in, relative to the root.  A job's owner can
	 * nest cgroups without limit: a path of 4 KiB or more keeps only its
	 * first whole components and cgroup_truncated is set.  It then names
	 * an ancestor of the real cgroup, long enough that whether the process
	 * lies inside a cgroup that can be named here stays exact. */
	const char *cgroup;
	bool cgroup_truncated;
	unsigned depth; /* levels below the walked cgroup: 0 is the cgroup itself */
};

typedef int (*oomkit_pid_fn)(oomkit_ctx *ctx, const struct oomkit_pid_entry *entry, void *userdata);

/* Walk flags. */
#define OOMKIT_WALK_RECURSIVE 0x1u /* the descendants too, at any depth, parents first */
/* Found through /proc rather than cgroupfs: every process of the machine is
 * read (its /proc/PID/cgroup), and those in cgroup (or below it) are
 * passed, in pid order.  It costs what the machine's processes cost however
 * many cgroups lie below cgroup, and a process that moves between them
 * meanwhile is found once; a process whose cgroup path is cut is passed
 * with the first whole components of it and cgroup_truncated, and one whose
 * leader has exited before its other threads (its own file reads the root)
 * where a live thread of it is. */
#define OOMKIT_WALK_PROC 0x2u

/* Calls fn for every process of cgroup (and its descendants with
 * OOMKIT_WALK_RECURSIVE), however many there are, however deep and long
 * their paths: no file is opened by path and the state is on the stack
 * (about 20 KiB, at most 33 directories open).  A cgroup removed meanwhile
 * is skipped; a process may be listed twice if it moves during the walk.
 * fn may call any helper, another walk included.  Returns the number of
 * processes, or fn's value if it returned non-zero (the walk stops there). */
int oomkit_cgroup_walk_pids(oomkit_ctx *ctx, const char *cgroup, unsigned flags, oomkit_pid_fn fn,
			    void *userdata);

/* oomkit_cgroup_walk_pids() that stops at deadline_ns (CLOCK_MONOTONIC; 0:
 * never) with -ETIMEDOUT, fn having seen some of the processes: a cgroupfs
 * walk costs a little for each cgroup, and a job's owner makes as many as
 * it likes.  The time spent on cgroups that hold processes (fn's included)
 * moves the deadline on: it bounds what cgroups cost, not processes.  A caller that must see every process
 * then walks again with OOMKIT_WALK_PROC, whose cost does not depend on cgroups. */
int oomkit_cgroup_walk_pids_until(oomkit_ctx *ctx, const char *cgroup, unsigned flags, uint64_t deadline_ns,
				  oomkit_pid_fn fn, void *userdata);

/* Calls fn for every direct child cgroup name; stops early and returns fn's
 * value if it is non-zero.  Returns the number of children otherwise. */
int oomkit_cgroup_children(oomkit_ctx *ctx, const char *cgroup, int (*fn)(const char *name, void *userdata),
			   void *userdata);

/* Whether the cgroup exists: 1 yes, 0 no. */
int oomkit_cgroup_exists(oomkit_ctx *ctx, const char *cgroup);

/* Whether uid may have moved a process into the cgroup itself: 1 if the
 * cgroup's cgroup.procs is owned by uid (a subtree delegated to it, which
 * its owner chowns) or writable by a group or by anyone, else 0; -errno if
 * it cannot be read.  Allocates nothing. */
int oomkit_cgroup_procs_writable(oomkit_ctx *ctx, const char *cgroup, uid_t uid);

/* Whether the cgroup, or one of its ancestors strictly below the cgroup
 * below, lies in a subtree delegated to a user: its directory, its
 * cgroup.procs or the file threads move by (cgroup.threads, v1's tasks) is
 * owned by a uid other than root, or writable by a group or by anyone.  1 with *ret_owner the owner of
 * the outermost such cgroup's file, 0 if root alone may have put a process
 * there; -errno if one of them cannot be read (removed meanwhile), -EINVAL
 * if cgroup is not below below.  Looks from the top down and stops at the
 * first delegated cgroup, so a user's nesting costs nothing.  Allocates
 * nothing. */
int oomkit_cgroup_delegated(oomkit_ctx *ctx, const char *cgroup, const char *below, uid_t *ret_owner);

/* Reads the extended attribute name of the cgroup's directory into buf (at
 * most len bytes) and who owns the directory into *ret_owner (the user who
 * may write its user.* attributes; systemd writes user.oomd_avoid and
 * user.oomd_omit for ManagedOOMPreference=).  Returns the value's length;
 * -ENODATA: not set; -EOPNOTSUPP: no such attributes here. */
int oomkit_cgroup_xattr(oomkit_ctx *ctx, const char *cgroup, const char *name, char *buf, size_t len,
			uid_t *ret_owner);

/* Sets the memory limit (v1 memory.limit_in_bytes, v2 memory.max). */
int oomkit_set_limit(oomkit_ctx *ctx, const char *cgroup, uint64_t limit_bytes);

/* cgroup v2's memory.low: the memory of cgroup that reclaim leaves alone
 * while unprotected memory is found elsewhere (effective only up to what its
 * ancestors are given in turn).  oomkit_cgroup_protection() reads it
 * (OOMKIT_UNLIMITED: "max"), oomkit_set_protection() writes it.
 * -EOPNOTSUPP on cgroup v1, which has no such file. */
int oomkit_cgroup_protection(oomkit_ctx *ctx, const char *cgroup, uint64_t *ret_low_bytes);
int oomkit_set_protection(oomkit_ctx *ctx, const char *cgroup, uint64_t low_bytes);

/* Asks the kernel to reclaim want_bytes from cgroup now (cgroup v2's
 * memory.reclaim, kernel 5.19 and later): its cold pages to swap, its clean
 * cache dropped.  Synchronous: the caller waits while the kernel reclaims,
 * so keep want_bytes small, or call it from a thread of its own: it uses no
 * buffer of the context, only its memory root's descriptor.  0: at least
 * want_bytes were reclaimed; -EAGAIN: less could be; -EOPNOTSUPP: cgroup v1
 * or an older kernel. */
int oomkit_cgroup_reclaim(oomkit_ctx *ctx, const char *cgroup, uint64_t want_bytes);

/* Enables or disables the kernel OOM killer for a cgroup (v1 oom_control). */
int oomkit_set_kernel_killer(oomkit_ctx *ctx, const char *cgroup, bool enabled);

/* Creates cgroup (and missing parents) with a limit; existing ones are kept
 * and their limit set.  Returns 1 if created, 0 if it existed. */
int oomkit_cgroup_create(oomkit_ctx *ctx, const char *cgroup, uint64_t limit_bytes);

/* Moves a process into a cgroup. */
int oomkit_cgroup_attach(oomkit_ctx *ctx, const char *cgroup, pid_t pid);

/* An fd (write-only, close-on-exec) on the cgroup's process list: a process
 * that writes "0" to it joins the cgroup, as a child between fork and exec
 * does to run a command in a cgroup of its own.  The fd, or -errno. */
int oomkit_cgroup_procs_fd(oomkit_ctx *ctx, const char *cgroup);

/* Removes an empty cgroup.  -EBUSY: it still has processes or children. */
int oomkit_cgroup_remove(oomkit_ctx *ctx, const char *cgroup);

/* Delegates a cgroup to uid:gid: the directory and an allow-list of control
 * files change owner -- cgroup.procs, and v1 tasks and cgroup.event_control
 * (eventfd notifications of the cgroup's OOMs, thresholds and pressure), v2
 * cgroup.threads and cgroup.subtree_control.  The owner may create child
 * cgroups (which are then wholly its own: their limits, their OOM handling),
 * move its processes between them and watch the cgroup's events; it may not
 * change the cgroup's own limits, its kernel OOM killer switch (v1
 * memory.oom_control, v2 memory.high: the handler's hold) or any other file.
 * Returns the number of files given.  Not for the handler path. */
int oomkit_cgroup_delegate(oomkit_ctx *ctx, const char *cgroup, uid_t uid, gid_t gid);

/* Writes the cgroup the process belongs to in the memory hierarchy into buf
 * (relative to the root).  -ENAMETOOLONG: its path does not fit in len, or
 * is too long for the kernel to show whole (4 KiB): a job's owner can make
 * such paths, so place the process with oomkit_process_in_cgroup() or the
 * path oomkit_cgroup_walk_pids() found it at, never by skipping it. */
int oomkit_process_cgroup(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len);

/* Whether the process is in cgroup or below it: 1 yes, 0 no, for a path of
 * any length and depth.  -ESRCH: it is gone. */
int oomkit_process_in_cgroup(oomkit_ctx *ctx, pid_t pid, const char *cgroup);

/* -------------------------------------------- helpers: processes (no malloc) */

struct oomkit_process {
	pid_t pid;
	pid_t ppid;
	uid_t uid;	     /* real uid */
	uint64_t start_time; /* clock ticks after boot (/proc/PID/stat field 22) */
	uint64_t rss_anon_kib;
	uint64_t rss_file_kib;
	uint64_t rss_shmem_kib;
	uint64_t swap_kib;
	int oom_score_adj;
	char comm[16];
	char cmdline[256];    /* arguments joined by spaces, truncated */
	pid_t pgid;	      /* process group (/proc/PID/stat field 5) */
	pid_t sid;	      /* session: its leader's pid (field 6) */
	int tty_nr;	      /* controlling terminal (field 7); 0: none */
	uint64_t sig_caught;  /* SigCgt: bit n-1 is set if signal n has a handler */
	uint64_t reserved[6]; /* for later fields; 0 */
};

/* Reads a process's identity and memory.  -ESRCH: it is gone. */
int oomkit_process_info(oomkit_ctx *ctx, pid_t pid, struct oomkit_process *ret_proc);

/* The whole command line, arguments joined by spaces and every byte outside
 * printable ASCII shown as '?' (as in struct oomkit_process), into buf: at
 * most len - 1 bytes (and at most 64 KiB) are read.  Returns its length.
 * -ESRCH: gone; -ENOMEM: its memory could not be read (a memcg out of
 * memory), buf then untouched. */
int oomkit_process_cmdline(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len);

/* The path /proc/PID/exe links to (" (deleted)" appended by the kernel if
 * the file was removed) into buf.  Returns its length.  -ENOENT: no
 * executable (a kernel thread, a zombie); -ENAMETOOLONG: it does not fit. */
int oomkit_process_exe(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len);

/* Kills one process without races: pidfd_open, check start_time (0: skip the
 * check), pidfd_send_signal(SIGKILL), process_mrelease, then wait up to
 * timeout_ms (-1: no limit) for it to exit.  A caller on the CPU the victim
 * last ran on steps off it for the signal and the release (its affinity mask
 * is given back), so the victim's exit and the release run side by side.
 * -ESRCH: gone already (a zombie included, but not a leader that exited
 * while other threads run on: that process lives); -ESTALE: the pid now belongs to
 * another process (nothing was sent); -ETIMEDOUT: signalled but not yet gone. */
int oomkit_kill(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int timeout_ms);

/* oomkit_kill() without the wait, for an event loop: on success *ret_pidfd
 * is the victim's pidfd (close-on-exec), which polls readable once it has
 * exited; the caller closes it.  Errors as oomkit_kill()'s. */
int oomkit_kill_start(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int *ret_pidfd);

/* oomkit_kill_start() with another signal: sig (SIGTERM for a graceful
 * kill, SIGUSR1 to ask for memory back) goes through the pidfd after the
 * start-time check, and *ret_pidfd stays the caller's, to wait for an exit
 * or to escalate with oomkit_kill_pidfd().  Errors as oomkit_kill()'s. */
int oomkit_signal_start(oomkit_ctx *ctx, pid_t pid, uint64_t start_time, int sig, int *ret_pidfd);

/* SIGKILL through a pidfd held from oomkit_signal_start() (no pid reuse can
 * redirect it), then process_mrelease.  -ESRCH: it has exited already. */
int oomkit_kill_pidfd(oomkit_ctx *ctx, int pidfd);

/* Kills every process of a cgroup and its descendants (v2: cgroup.kill; v1:
 * freeze with the freezer controller where mounted, kill, thaw; else kill
 * until empty) and waits up to timeout_ms (-1: no limit) until it is empty.
 * Returns the number of processes signalled.  -EINVAL: the root cgroup;
 * -ELOOP: it holds this process or its guardian (nothing is done);
 * -ETIMEDOUT: processes remain; -ENOBUFS: more than max_pids processes. */
int oomkit_kill_cgroup(oomkit_ctx *ctx, const char *cgroup, int timeout_ms);

/* Freezes (frozen: true) or thaws cgroup's processes, its descendants'
 * too: on cgroup v2 by its cgroup.freeze; on v1 by the freezer controller,
 * moving the memcg's tasks that sit at the freezer hierarchy's root into a
 * frozen freezer cgroup "oomkit-freeze/<cgroup>" and, at the thaw, back to
 * the root (a task in another freezer cgroup is left alone).  A frozen task
 * still dies of SIGKILL on v2; on v1 only once thawed.  Returns the tasks
 * moved (v1) or 0; -EINVAL: the root; -EOPNOTSUPP: v1 without a freezer.
 * Thawing a cgroup that is gone, or was never frozen, succeeds. */
int oomkit_cgroup_freeze(oomkit_ctx *ctx, const char *cgroup, bool frozen);

/* Whether every task of cgroup is frozen (v2 cgroup.events "frozen 1", v1
 * the mirror's freezer.state FROZEN): 1 or 0. */
int oomkit_cgroup_frozen(oomkit_ctx *ctx, const char *cgroup);

/* ------------------------------------------ helpers: the machine (no malloc) */

struct oomkit_system_memory {
	uint64_t total_bytes;	   /* MemTotal */
	uint64_t available_bytes;  /* MemAvailable */
	uint64_t free_bytes;	   /* MemFree */
	uint64_t swap_total_bytes; /* SwapTotal */
	uint64_t swap_free_bytes;  /* SwapFree */
	uint64_t reserved[8];	   /* for later fields; 0 */
};

/* Reads the machine's memory from /proc/meminfo under the proc root. */
int oomkit_system_memory(oomkit_ctx *ctx, struct oomkit_system_memory *ret_mem);

/* The machine's swap, from /proc/swaps and, for each zram device, its
 * /sys/block/zramN/mm_stat.  Swap can be turned on and off at any time:
 * every call reads it again. */
struct oomkit_system_swap {
	uint64_t total_bytes;	   /* every area's size */
	uint64_t free_bytes;	   /* every area's unused space (SwapFree) */
	uint64_t zram_total_bytes; /* of these, zram devices' */
	uint64_t zram_free_bytes;
	uint64_t zram_stored_bytes; /* zram: the data stored, uncompressed */
	uint64_t zram_ram_bytes;    /* zram: the RAM it uses to store it */
	/* The RAM swapping can still free: the free space of swap files and
	 * partitions, and for zram its free space times what compression
	 * saves (each page stored still takes its compressed size of RAM: the
	 * ratio so far, one half before a few MiB are stored or where mm_stat
	 * cannot be read), within its mem_limit. */
	uint64_t usable_bytes;
	unsigned areas;
	unsigned zram_areas;
	uint64_t reserved[8]; /* for later fields; 0 */
};

/* Reads the machine's swap (no malloc).  No swap, or a kernel without swap
 * (no /proc/swaps): all zero.  -EINVAL: /proc/swaps is malformed; -ENOBUFS:
 * more than OOMKIT_SWAP_AREAS_MAX areas. */
#define OOMKIT_SWAP_AREAS_MAX 64
int oomkit_system_swap(oomkit_ctx *ctx, struct oomkit_system_swap *ret_swap);

/* Memory stall time so far, from a PSI file. */
struct oomkit_pressure {
	uint64_t some_total_us;	  /* some task stalled on memory */
	uint64_t full_total_us;	  /* every non-idle task stalled at once */
	uint64_t some_avg10_x100; /* "some" over the last 10 s, percent times 100 */
	uint64_t full_avg10_x100;
	uint64_t reserved[4]; /* for later fields; 0 */
};

/* Reads cgroup's memory stall ("" : the machine's, /proc/pressure/memory;
 * else its cgroup v2 memory.pressure).  -EOPNOTSUPP: no PSI here. */
int oomkit_pressure_read(oomkit_ctx *ctx, const char *cgroup, struct oomkit_pressure *ret_pressure);

/* ------------------------------------------------------------- reports */

struct oomkit_decision {
	const char *action;	  /* "kill", "grow", "kernel", "wait", "none", ... */
	const char *reason;	  /* one sentence */
	pid_t victim_pid;	  /* 0 if none */
	uint64_t new_limit_bytes; /* grow: the new limit, else 0 */
	uint64_t reserved[8];	  /* for later fields: leave 0 */
};

/* Writes a JSON debug artifact to fd: time, cgroup, memory counters,
 * oom_control, memory.stat, every process with its memory, and the decision.
 * Buffered in the context; no allocation.  event and decision may be NULL.
 * Returns the number of bytes written; a write error stops it (-errno). */
int oomkit_write_report(oomkit_ctx *ctx, int fd, const struct oomkit_event *event,
			const struct oomkit_decision *decision);

/* Report flags. */
/* The processes are left out: a caller that lists them already, from the
 * walk it decided on, spares the cgroup's tree a second walk. */
#define OOMKIT_REPORT_NO_PROCESSES 0x1u

/* oomkit_write_report() with flags (0: the same report). */
int oomkit_write_report_flags(oomkit_ctx *ctx, int fd, const struct oomkit_event *event,
			      const struct oomkit_decision *decision, unsigned flags);

/* ----------------------------------------------------- lending headroom */

/* Headroom lent to a cgroup at its limit (oomkit_lend()). */
struct oomkit_loan {
	uint64_t limit_bytes; /* the limit before the loan: oomkit_repay() restores it */
	uint64_t lent_bytes;  /* how far above it the limit is now */
	uint64_t clear_bytes; /* usage below which the cgroup is out of OOM at limit_bytes */
	uint64_t reserved[5]; /* for later fields; 0 */
};

/* Raises a cgroup's limit by up to want_bytes for a moment, so that its
 * processes can run: with the kernel killer held off, a cgroup v1 task that
 * needs memory in an OOMing memcg sleeps in the kernel (no signal handler
 * runs, no request is served) until memory is freed, and on v2 one above
 * memory.high is throttled.  What is lent is bounded by half the room of each
 * ancestor that has a limit and by half of the machine's MemAvailable less
 * keep_bytes, so a loan never takes the last of anything; the hold (v2
 * memory.high) moves with the limit.  -EINVAL: the cgroup has no limit (or is
 * the root); -ENOSPC: nothing can be spared.  No allocation. */
int oomkit_lend(oomkit_ctx *ctx, const char *cgroup, uint64_t want_bytes, uint64_t keep_bytes,
		struct oomkit_loan *ret_loan);

/* Takes a loan back: the limit returns to loan->limit_bytes, but only once
 * usage is below it -- never by making the kernel reclaim or kill to get
 * there (v1 refuses a limit below usage after reclaiming, v2 OOM-kills).
 * 0: repaid; -EBUSY: usage is still at or above it, try again later;
 * -ESTALE: the limit was changed meanwhile and is left as it is (the loan is
 * void); -ENOENT: the cgroup is gone.  No allocation. */
int oomkit_repay(oomkit_ctx *ctx, const char *cgroup, const struct oomkit_loan *loan);

/* ------------------------------------------------------------- reserve */

/* Creates (if needed) cgroup with limit reserve_bytes above current usage of
 * this process, and moves this process and its guardian into it: the user-space
 * counterpart of memory.oom_reserve_in_bytes.  The cgroup must not be one
 * that is watched. */
int oomkit_enter_reserve(oomkit_ctx *ctx, const char *cgroup, uint64_t reserve_bytes);

/* Pid of the guardian process, 0 if none. */
pid_t oomkit_guardian_pid(const oomkit_ctx *ctx);

/* Human readable name of an event kind, verdict or pressure level. */
const char *oomkit_event_kind_name(enum oomkit_event_kind kind);
const char *oomkit_verdict_name(enum oomkit_verdict verdict);
const char *oomkit_pressure_level_name(enum oomkit_pressure_level level);
/* "none", "no-swap", "swap-max", "swap-full", "stalled", "limit". */
const char *oomkit_oom_cause_name(enum oomkit_oom_cause cause);

#ifdef __cplusplus
}
#endif

#endif /* OOMKIT_H */
