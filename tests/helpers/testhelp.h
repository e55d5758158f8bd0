/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testhelp.h - libtesthelp, the one set of helpers that the integration tests
 * (tests/integration/testlib.c), the qemu guest programs (tests/vm/guest-*.c,
 * linked -static) and the benchmarks (bench/benchlib.c) share: the clock,
 * control files, processes, bounded waits and memcg trees.
 *
 * Paths are absolute: each user knows its own cgroup root (the v1 memory
 * root on the host; /sys/fs/cgroup or /sys/fs/cgroup/memory in a guest).
 * Functions that can fail return 0 (or a count) or -errno and write their
 * ret_ arguments only on success.  Every wait has a bound.  It uses libc
 * alone, never liboomkit: the tests judge the library by code it does not
 * share.
 */
#ifndef OOMKIT_TESTHELP_H
#define OOMKIT_TESTHELP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TH_KIB 1024ull
#define TH_MIB (1024ull * 1024ull)

/* ---------------------------------------------------------------- time */

/* CLOCK_MONOTONIC. */
uint64_t th_now_ns(void);
uint64_t th_now_ms(void);

/* Sleeps the whole time, across signals. */
void th_sleep_us(unsigned us);
void th_sleep_ms(unsigned ms);

/* ---------------------------------------------------------------- files */

/* Reads up to len - 1 bytes of path into buf and NUL-terminates them:
 * the length, or -errno (buf untouched). */
int th_read_file(const char *path, char *buf, size_t len);

/* Writes value to path in one write(): 0, or -errno (-EIO if short). */
int th_write_file(const char *path, const char *value);

/* The number after key in a buffer of "key value" lines (also "key: value"
 * and "key\tvalue": memory.stat, memory.events, /proc/PID/status,
 * /proc/meminfo); -ENOENT if no line has that key. */
int th_find_key(const char *buf, const char *key, uint64_t *ret_value);

/* th_find_key on a file of up to 64 KiB. */
int th_read_key(const char *path, const char *key, uint64_t *ret_value);

/* A file holding one number; "max" (cgroup v2) is UINT64_MAX. */
int th_read_u64(const char *path, uint64_t *ret_value);

/* ---------------------------------------------------------------- waits */

/* Calls cond(arg) every 5 ms until it returns true (true) or timeout_ms
 * has passed (false); cond is always asked once more at the deadline, so a
 * slow machine that wakes late still sees the condition that came true. */
bool th_wait_for(bool (*cond)(void *arg), void *arg, int timeout_ms);

/* Waits up to timeout_ms for fd to be readable: 1, 0 on timeout, -errno. */
int th_wait_fd(int fd, int timeout_ms);

/* Reads one line (without its newline) from fd within timeout_ms: its
 * length, or -1 on timeout, end of file or error. */
int th_read_line(int fd, char *buf, size_t len, int timeout_ms);

/* ---------------------------------------------------------------- processes */

/* The state letter of /proc/PID/stat (the field after the last ')', so a
 * comm such as "a) Z (" cannot fool it), or 0 if there is no such process. */
char th_proc_state(pid_t pid);

/* The CPU /proc/PID/stat says pid last ran on (field 39), or -1. */
int th_proc_cpu(pid_t pid);

/* Whether pid is a live process: it exists and is neither a zombie nor dead.
 * A process that has exited is not alive, reaped or not, child or not. */
bool th_alive(pid_t pid);

/* pidfd_open(2): a pidfd, or -errno. */
int th_pidfd_open(pid_t pid);

/* Waits up to timeout_ms for the child pid to exit and reaps it: its wait
 * status, or -1 if it is still running (it is left running) or is not a
 * child of ours. */
int th_wait_exit(pid_t pid, int timeout_ms);

/* Whether a wait status says SIGKILL (-1, "still running", says no). */
bool th_sigkilled(int status);

/* How th_spawn starts a process; zero is the default for every field. */
struct th_spawn {
	const char *cgroup;	    /* absolute cgroup directory to join first; NULL: stay */
	int out_fd;		    /* > 0: its stdout; 0: inherited; -1: /dev/null */
	bool die_with_parent;	    /* SIGKILLed when its parent dies (PR_SET_PDEATHSIG) */
	int (*in_child)(void *arg); /* run in the child after joining; non-zero: it exits 126 */
	bool reset_oom_score_adj;   /* then 0: a parent protected at -1000 must not protect it */
	void *arg;		    /* in_child's */
};

/* Forks and execs argv[0] with argv as how says, and returns once the child
 * runs the program (so it is in its cgroup) or has failed to; an exec that
 * blocks (in a memcg under OOM with its killer held off) is waited for 30 s
 * at the most.  The child exits 126 if it could not be set up, 125 if its
 * parent died before it started, 127 if the exec failed.  Returns the pid,
 * or -errno. */
pid_t th_spawn(const struct th_spawn *how, char *const argv[]);

/* th_spawn of tests/helpers/hog.c: "HOG MIB STEP_KIB PAUSE_US [STAMP]"
 * allocates mib MiB in step_kib steps, pause_us apart, then sleeps (0 MiB:
 * a sleeper); stamp may be NULL. */
pid_t th_spawn_hog(const struct th_spawn *how, const char *hog, unsigned mib, unsigned step_kib,
		   unsigned pause_us, const char *stamp);

/* ---------------------------------------------------------------- control files */

/* "root/rel/file" (rel and file may be ""), in a ring of 8 buffers: a call
 * may take a few of them as arguments. */
const char *th_cg_path(const char *root, const char *rel, const char *file);

/* th_write_file on root/rel/file. */
int th_cg_write(const char *root, const char *rel, const char *file, const char *value);

/* th_read_u64 and th_read_key on root/rel/file, for tests that compare:
 * UINT64_MAX when the file or the key is missing. */
uint64_t th_cg_u64(const char *root, const char *rel, const char *file);
uint64_t th_cg_key(const char *root, const char *rel, const char *file, const char *key);

/* ---------------------------------------------------------------- memcg trees */

/* Creates the cgroup directory abs (it may exist) and, unless limit_bytes
 * is 0, writes the limit to its limit_file ("memory.limit_in_bytes" on v1,
 * "memory.max" on v2).  0 or -errno. */
int th_cg_make(const char *abs, const char *limit_file, uint64_t limit_bytes);

/* Empties and removes the cgroup directory abs and everything below it,
 * deepest first: gives each memcg its kernel OOM killer back (v1: a process
 * blocked in an OOM must be able to die), thaws each v1 freezer cgroup (a
 * frozen process cannot die either), SIGKILLs what it lists (never this
 * process), reaps our children and removes it, trying for up to timeout_ms.
 * 0 (also when abs does not exist), or -errno of what could not be removed,
 * which it names on stderr. */
int th_cg_remove_tree(const char *abs, int timeout_ms);

/* ---------------------------------------------------------------- checks */

/* Prints "ok: WHAT" or "FAIL: WHAT" on stdout (flushed) and counts a
 * failure: the guest programs' report.  Returns ok. */
bool th_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How many th_check() calls failed. */
int th_failures(void);

/* ---------------------------------------------------------------- cleanup */

/* Runs cleanup once, at exit and on SIGINT, SIGTERM, SIGHUP, SIGALRM,
 * SIGSEGV and SIGABRT (then dies of that signal), in this process only: a
 * fork that returns from main or is signalled does not run it.  One cleanup
 * per process. */
void th_cleanup_at_exit(void (*cleanup)(void));

#endif
