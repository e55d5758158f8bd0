/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * benchlib.h - what every benchmark of oomkit-bench shares: a private tree of
 * memcgs (oomkit-bench-<pid>/<benchmark>) that is removed at exit and on
 * fatal signals, helper processes that die with the bench, shared stamp
 * files, pidfd waits with deadlines, /proc counters, and the sample lines the
 * driver prints for bench/run.sh.
 */
#ifndef OOMKIT_BENCHLIB_H
#define OOMKIT_BENCHLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Control files: th_cg_write(BL_MEMORY_ROOT, rel, file, value), th_cg_u64,
 * th_cg_key; and the rest of libtesthelp. */
#include "testhelp.h"

#define BL_MEMORY_ROOT "/sys/fs/cgroup/memory"
#define BL_KIB 1024ull
#define BL_MIB (1024ull * 1024ull)
#define BL_PAGE 4096ull

/* The hog's shared stamp (tests/helpers/hog.c writes it before every page). */
struct bl_hog_stamp {
	volatile uint64_t last_touch_ns;
	volatile uint64_t pages;
};

/* The watcher's shared stamp: handler entry of the first event after the
 * driver zeroed entry_ns, and how many events it handled. */
struct bl_watch_stamp {
	volatile uint64_t entry_ns;
	volatile uint64_t events;
};

/* Paths of the programs the benchmarks run (compiled in, overridable by the
 * environment: OOMKIT_HOG, OOMKIT_BENCH_WATCHER, OOMKITD, EARLYOOM). */
const char *bl_hog(void);
const char *bl_watcher(void);
const char *bl_oomkitd(void);  /* NULL: not built */
const char *bl_earlyoom(void); /* NULL: not installed */

/* Checks root and memcg v1, creates the benchmark's memcg <top>/<name> with
 * limit_bytes and installs cleanup (atexit and fatal signals).  top is
 * $OOMKIT_BENCH_PARENT (made and bounded by run.sh, which removes it even
 * after a SIGKILL) or oomkit-bench-<pid>, made here with the same limit; it
 * must start with "oomkit-bench-".  Returns 0, or -1 with a message on
 * stderr. */
int bl_init(const char *name, uint64_t limit_bytes);

/* The benchmark's memcg, relative to the memory root. */
const char *bl_parent(void);

/* "<parent>/<name>", in a static ring of buffers. */
const char *bl_child(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Absolute path of a relative cgroup path (th_cg_path's ring of buffers). */
const char *bl_abs(const char *rel);

/* The number in an open control file (memory.usage_in_bytes), read again
 * from its start: no open() on a measured path.  UINT64_MAX on error. */
uint64_t bl_pread_u64(int fd);

/* Creates rel (mkdir, EEXIST is fine) with a limit (0: none of its own). */
int bl_mkcg(const char *rel, uint64_t limit_bytes);

/* Kills every process in rel and below, re-enables their kernel killers
 * and removes the memcgs, deepest first.  Returns 0 if all are gone. */
int bl_remove_tree(const char *rel);

/* Kills the helpers, then removes every memcg this benchmark made. */
void bl_cleanup(void);

/* Registers a helper process (watcher, daemon, namespace init) to be
 * SIGKILLed at cleanup, and forgets one that was stopped. */
void bl_track(pid_t pid);
void bl_untrack(pid_t pid);

/* Stops a helper: SIGTERM, up to timeout_ms for it to exit, then SIGKILL;
 * reaps it.  Returns its wait status, or -1. */
int bl_stop(pid_t pid, int timeout_ms);

/* Forks and execs argv with stdout on out_fd (-1: /dev/null), inside memcg
 * rel if not NULL, with SIGKILL as its parent-death signal.  Returns the pid
 * or -1. */
pid_t bl_spawn(const char *rel, char *const argv[], int out_fd);

/* Starts oomkit-bench-watcher with args (NULL-terminated), waits up to
 * timeout_ms for its "ready" line and tracks it.  Returns its pid (and its
 * guardian's in *ret_guardian) or -1. */
pid_t bl_start_watcher(const char *const args[], pid_t *ret_guardian, int timeout_ms);

/* Starts the hog in rel: oomkit-hog MIB STEP_KIB PAUSE_US STAMP. */
pid_t bl_spawn_hog(const char *rel, unsigned mib, unsigned step_kib, unsigned pause_us, const char *stamp);

/* Creates a shared stamp file of one page under /dev/shm and maps it;
 * path receives its name (at least 64 bytes).  NULL on error. */
void *bl_stamp_new(char *path, size_t len);

uint64_t bl_now_ns(void);
void bl_sleep_us(unsigned us);

int bl_pidfd_open(pid_t pid);

/* Waits up to timeout_ms for fd to become readable: 1 ready, 0 timeout. */
int bl_wait_fd(int fd, int timeout_ms);

/* Waits up to timeout_ms for child pid to exit, reaping it: its wait status,
 * or -1 (then it is SIGKILLed and reaped). */
int bl_wait_child(pid_t pid, int timeout_ms);

/* Reads a line (without the newline) from fd within timeout_ms: length, or -1. */
int bl_read_line(int fd, char *buf, size_t len, int timeout_ms);

/* A field of /proc/PID/status in its unit (kB for Vm*); UINT64_MAX if absent. */
uint64_t bl_proc_status(pid_t pid, const char *key);

/* Memory only this process holds (Private_Clean + Private_Dirty of
 * /proc/PID/smaps_rollup), KiB; UINT64_MAX if unknown. */
uint64_t bl_proc_private_kib(pid_t pid);
/* Its proportional share (Pss of /proc/PID/smaps_rollup: each page divided
 * by the processes that map it), KiB; UINT64_MAX if unknown. */
uint64_t bl_proc_pss_kib(pid_t pid);

/* Time on CPU (first field of /proc/PID/schedstat), ns; UINT64_MAX if unknown. */
uint64_t bl_proc_cpu_ns(pid_t pid);

/* Voluntary context switches: a process that sleeps, wakes and sleeps again
 * counts one.  (Involuntary ones are preemptions while it runs, which a busy
 * machine adds to any process that has work to do.) */
uint64_t bl_proc_wakeups(pid_t pid);

/* The child of pid (from /proc/PID/task/PID/children) whose comm is comm
 * (at most 15 characters, as the kernel keeps it), or 0: oomkitd's children
 * are its guardian, its hook runner and, with systemd, its helper. */
pid_t bl_child_named(pid_t pid, const char *comm);

/* MemAvailable of the machine in KiB, or 0. */
uint64_t bl_mem_available_kib(void);

/* Prints a sample line for run.sh: "S bench series value". */
void bl_sample(const char *bench, const char *series, double value);

/* Prints a note that run.sh copies into the output: "N text". */
void bl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints a failure to measure: "F text" (run.sh exits non-zero). */
void bl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sorts and returns the median of n values (n > 0). */
double bl_median(double *v, size_t n);

#endif
