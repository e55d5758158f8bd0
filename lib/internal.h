/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - liboomkit internals shared between its files (not installed).
 *
 * Everything here is prefixed oomkit__.  Parsers take a buffer and its length
 * and never read files; readers fill caller (context) buffers and never
 * allocate.  Every function returns >= 0 or -errno.
 */
#ifndef OOMKIT_INTERNAL_H
#define OOMKIT_INTERNAL_H

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oomkit.h"

#define OOMKIT__EXPORT __attribute__((visibility("default")))

/* Paths inside the hierarchy are bounded; a cgroup path longer than this is
 * refused with -ENAMETOOLONG rather than truncated. */
#define OOMKIT__PATH_MAX 512
/* One file read on the handler path (memory.stat, cgroup.procs chunks, /proc/PID/status). */
#define OOMKIT__IOBUF_SIZE (64 * 1024)
/* JSON report buffer, flushed to the fd whenever it fills. */
#define OOMKIT__REPORT_BUF_SIZE (16 * 1024)

/* ------------------------------------------------------------ parse.c */

struct oomkit__oom_control {
	bool oom_kill_disable;
	bool under_oom;
	uint64_t oom_kill; /* 0 when the kernel does not report it */
};

struct oomkit__proc_stat {
	pid_t pid;
	char comm[16]; /* truncated to 15 chars, NUL-terminated */
	char state;
	pid_t ppid;
	pid_t pgid;	     /* field 5 */
	pid_t sid;	     /* field 6: the session leader's pid */
	int tty_nr;	     /* field 7: the controlling terminal; 0 for none */
	uint64_t start_time; /* field 22, clock ticks */
	int processor;	     /* field 39: the CPU it last ran on; -1 if not told */
};

struct oomkit__proc_status {
	uid_t uid; /* real uid (first field of Uid:) */
	uint64_t rss_anon_kib;
	uint64_t rss_file_kib;
	uint64_t rss_shmem_kib;
	uint64_t swap_kib;
	bool has_rss; /* RssAnon present (absent for kernel threads) */
};

struct oomkit__mounts {
	char memory_root[OOMKIT__PATH_MAX];  /* "" if not mounted */
	char cgroup2_root[OOMKIT__PATH_MAX]; /* "" if not mounted */
	char freezer_root[OOMKIT__PATH_MAX]; /* "" if not mounted */
	bool cgroup2_has_memory;	     /* not known from mounts; filled by the caller */
};

/* cgroup v2 memory.events (and memory.events.local) counters. */
struct oomkit__memory_events {
	uint64_t low;
	uint64_t high;
	uint64_t max;
	uint64_t oom;
	uint64_t oom_kill;
	uint64_t oom_group_kill;
};

/* One line of a PSI file; averages are percentages times 100 ("1.50" -> 150). */
struct oomkit__psi_line {
	uint64_t avg10_x100;
	uint64_t avg60_x100;
	uint64_t avg300_x100;
	uint64_t total_us; /* total stall time, microseconds */
};

/* One swap area of /proc/swaps. */
struct oomkit__swap_area {
	uint64_t size_bytes;
	uint64_t used_bytes;
	int zram; /* N of a /dev/zramN partition; -1: a file or another device */
};

/* The first columns of /sys/block/zramN/mm_stat, in bytes. */
struct oomkit__zram_mm_stat {
	uint64_t orig_bytes;  /* data stored, uncompressed */
	uint64_t compr_bytes; /* the same compressed */
	uint64_t used_bytes;  /* RAM the device uses for it, overhead included */
	uint64_t limit_bytes; /* mem_limit; 0: none */
};

/* Below this much stored, zram's compression ratio so far says little. */
#define OOMKIT__ZRAM_RATIO_MIN_BYTES (4u << 20)

/* Parses memory.oom_control ("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").
 * -EINVAL if oom_kill_disable or under_oom is missing or malformed. */
int oomkit__parse_oom_control(const char *buf, size_t len, struct oomkit__oom_control *ret);

/* Parses cgroup v2 memory.events; keys not present stay 0, unknown keys are
 * skipped.  -EINVAL on any malformed line (overflow included). */
int oomkit__parse_memory_events(const char *buf, size_t len, struct oomkit__memory_events *ret);

/* Parses the line of kind "some" or "full" of a PSI file (/proc/pressure/memory,
 * memory.pressure).  -ENOENT if absent; -EINVAL if malformed or without avg10/total. */
int oomkit__parse_psi_line(const char *buf, size_t len, const char *kind, struct oomkit__psi_line *ret);

/* Parses one unsigned decimal number followed by optional whitespace; "max"
 * gives OOMKIT_UNLIMITED.  -ERANGE on overflow, -EINVAL on anything else. */
int oomkit__parse_u64(const char *buf, size_t len, uint64_t *ret);

/* Finds "key value" on its own line (memory.stat, memory.events) and parses
 * value.  -ENOENT if the key is absent, -EINVAL/-ERANGE if malformed. */
int oomkit__parse_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *ret);

/* Parses /proc/PID/stat, whose comm may contain spaces and parentheses: the
 * comm ends at the last ')'.  -ESRCH: the task is being reaped (its process
 * group and session read -1). */
int oomkit__parse_proc_stat(const char *buf, size_t len, struct oomkit__proc_stat *ret);

/* Parses /proc/PID/status for Uid, RssAnon, RssFile, RssShmem, VmSwap (kB). */
int oomkit__parse_proc_status(const char *buf, size_t len, struct oomkit__proc_status *ret);

/* The SigCgt line of /proc/PID/status: bit n-1 set for each signal n the
 * process has a handler for.  0 when there is no such line; -EINVAL when
 * it is not 16 lower-case hex digits at most. */
int oomkit__parse_proc_sigcgt(const char *buf, size_t len, uint64_t *ret);

/* Parses /proc/self/mounts (octal escapes such as \040 decoded) for the v1
 * memory and freezer hierarchies and the cgroup2 mount; the first of each
 * wins.  -ENAMETOOLONG if its mount point does not fit, -EINVAL if it is not
 * an absolute path or decodes to a NUL. */
int oomkit__parse_mounts(const char *buf, size_t len, struct oomkit__mounts *ret);

/* The kernel writes a /proc/PID/cgroup path into a PATH_MAX buffer and cuts a
 * longer one there without a sign (seen on 6.18): a path of this many bytes,
 * its leading '/' included, may be the start of a longer one. */
#define OOMKIT__PROC_CGROUP_CUT (PATH_MAX - 1)

/* Finds a process's cgroup in /proc/PID/cgroup contents: controller "memory"
 * matches a v1 line "N:...memory...:/path", NULL matches the v2 line "0::/path".
 * Writes the path without its leading '/' ("" for the root) and returns its
 * length. -ENOENT if absent; -EINVAL for a path that is not canonical ("..":
 * outside our cgroup namespace; "//", "." or a trailing '/'); -ENAMETOOLONG
 * if it does not fit, or if the kernel may have cut it. */
int oomkit__parse_proc_cgroup(const char *buf, size_t len, const char *controller, char *out, size_t out_len);

/* Whether the path of controller's line in /proc/PID/cgroup contents is rel
 * (relative, canonical) or lies below it: 1 yes, 0 no (a path outside our
 * cgroup namespace included).  Exact for a path of any length, one the
 * kernel cut included, as long as rel is shorter than the cut.  -ENOENT if
 * the line is absent, -EINVAL if it is malformed. */
/* The path of controller's line without its '/', into out: a path the
 * kernel cut, or one longer than out, keeps its first whole components and
 * sets *ret_cut.  Its length; -EINVAL for a path outside our cgroup
 * namespace or a malformed line, -ENOENT if controller has no line. */
int oomkit__parse_proc_cgroup_head(const char *buf, size_t len, const char *controller, char *out,
				   size_t out_len, bool *ret_cut);
int oomkit__parse_proc_cgroup_under(const char *buf, size_t len, const char *controller, const char *rel);

/* Parses newline-separated pids (cgroup.procs) into pids[0..n).  Returns the
 * count; -ENOBUFS if more than n (pids[0..n) then holds the first n);
 * -EINVAL on a malformed line. */
int oomkit__parse_pids(const char *buf, size_t len, pid_t *pids, size_t n);

/* Calls fn for each pid of newline-separated pids until fn returns non-zero.
 * Returns 0, fn's value, or -EINVAL on a malformed line; *ret_count is the
 * number of pids parsed either way. */
int oomkit__parse_pids_each(const char *buf, size_t len, int (*fn)(pid_t pid, void *userdata), void *userdata,
			    size_t *ret_count);

/* Parses /proc/swaps (a header line, then "name type size used priority"
 * with sizes in KiB) into areas[0..n).  Returns the number of areas;
 * -ENOBUFS if more than n (areas[0..n) then holds the first n); -EINVAL if
 * the header is missing or a line is malformed (used above size included). */
int oomkit__parse_swaps(const char *buf, size_t len, struct oomkit__swap_area *areas, size_t n);

/* Parses /sys/block/zramN/mm_stat: at least its first four numbers, then
 * any number of numbers.  -EINVAL otherwise. */
int oomkit__parse_zram_mm_stat(const char *buf, size_t len, struct oomkit__zram_mm_stat *ret);

/* How much RAM a zram device with free_bytes of free swap space can still
 * free by storing pages: each page it takes frees a page of RAM and uses its
 * compressed size (the ratio so far, or one half before
 * OOMKIT__ZRAM_RATIO_MIN_BYTES are stored; st NULL: unknown), and no more
 * than its mem_limit holds.  Pure. */
uint64_t oomkit__zram_usable(uint64_t free_bytes, const struct oomkit__zram_mm_stat *st);

/* Turns a NUL-separated /proc/PID/cmdline into a space-separated string,
 * truncated to out_len - 1 bytes; non-printable bytes become '?'. */
void oomkit__format_cmdline(const char *buf, size_t len, char *out, size_t out_len);

/* Normalises a cgroup argument into a path relative to root: strips root if
 * in is an absolute path under it, strips leading and trailing '/', collapses
 * "//".  An absolute path sharing root's first component but not under root
 * is outside it; any other absolute path is taken as relative to root.
 * Returns the length.  -EINVAL for "." or ".." components or a path outside
 * root; -ENAMETOOLONG if it does not fit. */
int oomkit__cgroup_relpath(const char *in, const char *root, char *out, size_t out_len);

/* ---------------------------------------------------------- meminfo.c */

/* The machine's SwapTotal and SwapFree from /proc/meminfo, open at fd, read
 * onto the stack (the guardian reads it too).  A kernel without swap has no
 * such lines: 0 and 0. */
int oomkit__swap_space(int fd, uint64_t *ret_total, uint64_t *ret_free);

/* ------------------------------------------------------------- util.c */

/* Reads a whole small file at dirfd/name into buf (NUL-terminated, at most
 * len - 1 bytes).  Returns its length; -EFBIG if it did not fit. */
int oomkit__read_file_at(int dirfd, const char *name, char *buf, size_t len);

/* pread()s an already open cgroup control file from offset 0, like
 * oomkit__read_file_at; a read that leaves room in buf is taken as the whole
 * file (cgroupfs writes a control file out in one go). */
int oomkit__pread_all(int fd, char *buf, size_t len);

/* Writes a string to dirfd/name (O_WRONLY|O_TRUNC not used: cgroupfs). */
int oomkit__write_file_at(int dirfd, const char *name, const char *s);

/* Appends a string, or the decimal digits of a number, to out (size bytes,
 * *len used, kept NUL-terminated).  -ENAMETOOLONG if it does not fit.  No
 * stdio: these serve the guardian program, which links no printf. */
int oomkit__append(char *out, size_t size, size_t *len, const char *s);
int oomkit__append_u64(char *out, size_t size, size_t *len, uint64_t v);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t oomkit__now_ns(void);

/* Milliseconds from now until end_ns for poll(): -1 for UINT64_MAX (no
 * deadline), rounded up so that a wait never ends just short of it. */
int oomkit__ms_until(uint64_t end_ns);

/* Logs through the context's callback; formats into a stack buffer. */
void oomkit__log(const oomkit_ctx *ctx, enum oomkit_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ----------------------------------------------------------- context */

/* A cgroup's memory.pressure "full" stall total, sampled at each look: the
 * share of time it was stalled over a span, with no clock of its own. */
#define OOMKIT__STALL_SAMPLES 16
struct oomkit__stall {
	struct {
		uint64_t at_ns;
		uint64_t full_us;
	} s[OOMKIT__STALL_SAMPLES];
	unsigned next; /* where the next sample goes */
	unsigned n;    /* samples kept */
};

/* A watch.  Watches live in one array of max_cgroups slots allocated by
 * oomkit_new(); a slot is free when kind == 0.  The path is allocated when
 * the watch is made, so a slot costs what it holds, not the longest path. */
struct oomkit_watch {
	enum oomkit_event_kind kind; /* OOM, THRESHOLD or PRESSURE; 0: free slot */
	char *cgroup;		     /* relative to memory_root; NULL in a free slot */
	int dirfd;		     /* O_PATH|O_DIRECTORY on the cgroup */
	int efd;		     /* eventfd registered with the kernel */
	/* What an event reads, opened once and read with pread (opening a
	 * cgroup file costs several times the read): v1 memory.oom_control,
	 * usage_in_bytes, limit_in_bytes and the parent's oom_control (for the
	 * origin); v2 memory.current, memory.max and memory.events.  -1 if
	 * not open. */
	int oomfd, usagefd, limitfd, parentfd;
	/* v2 OOM watches: memory.swap.current, memory.swap.max and
	 * memory.pressure, for the swap rule (cgroup-v2.c); -1 if not open. */
	int swapfd, swapmaxfd, pressurefd;
	struct oomkit__stall stall; /* v2 OOM: its memory.pressure, sampled at each look */
	uint64_t threshold_bytes;
	enum oomkit_pressure_level level;
	uint32_t stall_us, window_us; /* PRESSURE: oomkit_watch_stall()'s trigger; 0: the level's */
	oomkit_handler_fn handler;
	void *userdata;
	/* take-over state (OOM watches only) */
	bool taken_over;
	uint64_t delay_ms;
	int state;			     /* enum oomkit__oom_state in loop.c */
	uint64_t deadline_ns;		     /* while pending: when the kernel steps in */
	uint64_t kills_at_oom;		     /* the kernel's oom_kill count when the OOM began */
	uint64_t clear_since_ns;	     /* since when under_oom has read 0 in this OOM; 0: not */
	bool resolved;			     /* the handler's last verdict on this OOM was RESOLVED */
	bool untold;			     /* pending since the take-over, the handler not told yet */
	uint32_t gen;			     /* bumped each time the slot is reused */
	uint32_t epoll_events;		     /* what the backend's fd reports: EPOLLIN or EPOLLPRI */
	bool psi;			     /* PRESSURE: a PSI trigger (OOMKIT_WATCH_PSI) */
	bool at_limit;			     /* v2 OOM: OOMKIT_WATCH_AT_LIMIT, swap not counted */
	bool system;			     /* PRESSURE: the machine's PSI, not the cgroup's */
	int parent_wd;			     /* v2: inotify watch on the parent, for GONE */
	struct oomkit__memory_events events; /* v2: last memory.events.local read */
};

/* How many kernel events one dispatch reads before running handlers. */
#define OOMKIT__EPOLL_BATCH 64

/* Marks every fd of a watch as not open. */
void oomkit__watch_init_fds(struct oomkit_watch *w);

/* Closes every fd of a watch that is open. */
void oomkit__watch_close_fds(struct oomkit_watch *w);

/* An event read from the kernel, waiting for its handler within one dispatch. */
struct oomkit__queued {
	struct oomkit_event event;
	uint32_t gen;
	uint64_t kills; /* the kernel's oom_kill count, read with the event */
	bool gone;
	char origin[OOMKIT__PATH_MAX];
};

struct oomkit_ctx {
	char memory_root[OOMKIT__PATH_MAX];
	char cgroup2_root[OOMKIT__PATH_MAX];
	char freezer_root[OOMKIT__PATH_MAX];
	char proc_root[OOMKIT__PATH_MAX];
	enum oomkit_backend backend; /* chosen by cgroup.c: ask cg_caps or its dispatchers, not this */
	unsigned cg_caps;	     /* OOMKIT__CAN_* / OOMKIT__HAS_*: what the backend offers */
	int memory_root_fd;	     /* O_PATH|O_DIRECTORY */
	int proc_fd;		     /* O_PATH|O_DIRECTORY */
	int sys_fd;		     /* O_PATH|O_DIRECTORY; -1: no sysfs there */
	int meminfo_fd;		     /* /proc/meminfo, for the v2 swap rule; -1: not open */
	unsigned max_cgroups;
	unsigned max_pids;
	bool mlock;
	bool protect;
	oomkit_log_fn log;
	void *log_userdata;
	oomkit_limits_fn limits; /* options' limits: told after memory.high/max writes */
	void *limits_userdata;

	int epfd;
	int timerfd;		      /* armed only while an OOM is pending */
	int inotify_fd;		      /* v2: parents of watched cgroups, for GONE; -1 until needed */
	struct oomkit_watch *watches; /* max_cgroups slots */
	unsigned n_watches;
	volatile sig_atomic_t stop;

	/* Preallocated buffers for the handler path. */
	char *iobuf;		      /* OOMKIT__IOBUF_SIZE */
	char *iobuf2;		      /* second buffer for nested reads */
	pid_t *pidbuf;		      /* max_pids */
	char *reportbuf;	      /* OOMKIT__REPORT_BUF_SIZE */
	struct oomkit__queued *queue; /* OOMKIT__EPOLL_BATCH */
	char pathbuf[OOMKIT__PATH_MAX * 2];
	char self_cgroup[OOMKIT__PATH_MAX]; /* this process's memcg, relative */
	bool self_cgroup_known;
	unsigned n_pending; /* watches whose OOM is pending or with the kernel */

	/* guardian.c */
	pid_t guardian_pid;
	int guardian_pidfd;
	int guardian_sock;
	bool guardian_wanted;
	char *guardian_path; /* options' guardian_path, copied; NULL if not given */
};

/* ----------------------------------------------------------- cgroup.c */

/* What the context's cgroup interface offers beyond the common ground, set
 * by cgroup.c with the backend: the other files ask what, never which. */
#define OOMKIT__CAN_KILL_ALL 0x1u      /* kill a subtree at once (v2 cgroup.kill) */
#define OOMKIT__HAS_MEMORY_EVENTS 0x2u /* memory.events counters, memory.oom.group (v2) */
#define OOMKIT__GONE_BY_PARENT                                                                               \
	0x4u /* a removed cgroup signals nothing on its own                                                  \
	      * files: GONE comes from its parent (v2) */

/* Chooses the backend of the hierarchy at ctx->memory_root_fd (setup). */
void oomkit__cgroup_setup(oomkit_ctx *ctx);

/* Sets a context's backend (and what it offers) to a known one. */
void oomkit__cgroup_setup_backend(oomkit_ctx *ctx, enum oomkit_backend backend);

/* "" (the root) as "." for openat(). */
const char *oomkit__at(const char *rel);

/* Opens an O_PATH dirfd for a relative cgroup path under the memory root. */
int oomkit__cgroup_open(oomkit_ctx *ctx, const char *rel);

/* Reads or writes file name of cgroup rel under the memory root. */
int oomkit__cg_read(oomkit_ctx *ctx, const char *rel, const char *name, char *buf, size_t len);
int oomkit__cg_write(oomkit_ctx *ctx, const char *rel, const char *name, const char *value);

/* Reads one number ("max" is OOMKIT_UNLIMITED) from dirfd/name. */
int oomkit__read_u64_at(int dirfd, const char *name, uint64_t *ret);

/* The backend's part of a watch: registers its kernel notification and sets
 * w->efd and w->epoll_events. */
int oomkit__register(oomkit_ctx *ctx, struct oomkit_watch *w);

/* Consumes a notification on w->efd; 1 if it is an event for the handler. */
int oomkit__consume(oomkit_ctx *ctx, struct oomkit_watch *w);

/* Reads whether w's cgroup is under OOM and whether its killer is held. */
int oomkit__oom_state(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__oom_control *ret);

/* Holds the kernel OOM killer off (hold) or gives it back, for the cgroup at dirfd. */
int oomkit__hold_at(oomkit_ctx *ctx, int dirfd, bool hold);
/* oomkit__hold_at() for a handler's cgroup rel (relative), telling the
 * context's limits callback what it wrote. */
int oomkit__hold_cgroup(oomkit_ctx *ctx, const char *rel, int dirfd, bool hold);
/* Tells the context's limits callback what rel's memory.high and .max read
 * now (v2 only; nothing without a callback). */
void oomkit__limits_changed(oomkit_ctx *ctx, const char *rel, int dirfd);

/* oomkit__oom_state for a cgroup that is not watched. */
int oomkit__oom_state_at(oomkit_ctx *ctx, const char *rel, struct oomkit__oom_control *ret);

/* What an event needs to tell the handler, read through the watch's fds. */
int oomkit__event_memory(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_cgroup_memory *ret);

/* Finds the origin of an OOM that w sees (its cgroup or an ancestor) into
 * out.  -EOPNOTSUPP where each cgroup's events are its own (v2); -ESTALE if
 * w is no longer under OOM (a parent's OOM ended while it was read). */
int oomkit__oom_origin(oomkit_ctx *ctx, const struct oomkit_watch *w, char *out, size_t out_len);

/* The controller naming the memory hierarchy's line of /proc/PID/cgroup
 * ("memory", or NULL for the cgroup2 line). */
const char *oomkit__proc_controller(const oomkit_ctx *ctx);

/* An O_PATH fd on rel's directory in a hierarchy that has PSI files
 * (memory.pressure): the memory hierarchy on v2, the cgroup2 mount beside a
 * v1 one.  -EOPNOTSUPP if there is none. */
int oomkit__pressure_dir(oomkit_ctx *ctx, const char *rel);

/* The usage below which a cgroup with this limit is not out of memory:
 * the limit on v1; on v2 below the hold's memory.high and the margin that
 * oomkit_cgroup_memory() counts as "under OOM". */
uint64_t oomkit__clear_level(const oomkit_ctx *ctx, uint64_t limit);

/* Kills everything in the subtree at dirfd at once and waits (until end_ns,
 * CLOCK_MONOTONIC; UINT64_MAX: no limit) until it is empty.  Only with
 * OOMKIT__CAN_KILL_ALL; -EOPNOTSUPP otherwise. */
int oomkit__kill_all(oomkit_ctx *ctx, int dirfd, uint64_t end_ns);

/* The control files of a job's own cgroup that its owner is given (a
 * NULL-terminated allow-list; the directory itself is given too). */
const char *const *oomkit__delegated_files(const oomkit_ctx *ctx);

/* -------------------------------------------------------- cgroup-v1.c */

int oomkit__v1_register(oomkit_ctx *ctx, struct oomkit_watch *w);
int oomkit__v1_consume(struct oomkit_watch *w);
/* Reads oom_control of rel (or of an open fd if fd >= 0). */
int oomkit__v1_oom_control(oomkit_ctx *ctx, const char *rel, int fd, struct oomkit__oom_control *ret);
/* Finds the origin of an OOM seen by a watch on rel: the highest ancestor
 * (rel itself included) whose under_oom is set.  Writes it into out. */
int oomkit__v1_oom_origin(oomkit_ctx *ctx, const char *rel, char *out, size_t out_len);
int oomkit__v1_memory(int dirfd, struct oomkit_cgroup_memory *ret);
/* What an event needs and no more: oom_control, usage and limit, through
 * the watch's open fds; the other counters are left 0. */
int oomkit__v1_event_memory(struct oomkit_watch *w, struct oomkit_cgroup_memory *ret);
/* The origin of an OOM on w: its parent's oom_control through the open fd
 * first, which is all it takes unless the parent is under OOM too. */
int oomkit__v1_watch_origin(oomkit_ctx *ctx, const struct oomkit_watch *w, char *out, size_t out_len);
int oomkit__v1_set_limit(int dirfd, uint64_t limit_bytes);
int oomkit__v1_hold(int dirfd, bool hold);
extern const char *const oomkit__v1_delegated[];

/* -------------------------------------------------------- cgroup-v2.c */

int oomkit__v2_register(oomkit_ctx *ctx, struct oomkit_watch *w);
int oomkit__v2_consume(struct oomkit_watch *w);
/* Every counter; under_oom by the swap rule without a stall history (a
 * stall is known only to a watch). */
int oomkit__v2_memory(oomkit_ctx *ctx, int dirfd, struct oomkit_cgroup_memory *ret);
/* What an event needs: usage, limit, memory.events, and under_oom by the
 * swap rule with the watch's stall samples (one more taken), through the
 * watch's open fds where it has them. */
int oomkit__v2_event_memory(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_cgroup_memory *ret);
int oomkit__v2_oom_state(oomkit_ctx *ctx, int dirfd, struct oomkit__oom_control *ret);
/* The same through a watch (the loop's and the guardian's): its fds and
 * its stall samples. */
int oomkit__v2_watch_oom_state(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__oom_control *ret);
/* Holds: memory.high a margin below memory.max; releases: memory.high = max. */
int oomkit__v2_hold(int dirfd, bool hold);
/* Sets memory.max, and memory.high the same margin below it if held. */
int oomkit__v2_set_limit(int dirfd, uint64_t limit_bytes);
/* cgroup.kill, then waits for cgroup.events "populated 0". */
int oomkit__v2_kill(int dirfd, uint64_t end_ns);

/* The swap rule.  Near its limit (held at memory.high, or at memory.max)
 * a cgroup that can still swap is swapping, not out of memory, as long as
 * its own memory.pressure does not say it is stuck: "full" (every task of it
 * stalled on memory at once) for OOMKIT__STALL_PERCENT of the last
 * OOMKIT__STALL_SPAN_NS, systemd-oomd's default for a unit's pressure.  A
 * swap room of less than OOMKIT__SWAP_SLACK (one huge page) is none. */
#define OOMKIT__STALL_PERCENT 60
#define OOMKIT__STALL_SPAN_NS (30ull * 1000 * 1000 * 1000)
#define OOMKIT__SWAP_SLACK (2ull << 20)

struct oomkit__v2_oom_input {
	uint64_t usage_bytes, limit_bytes; /* memory.current, memory.max */
	bool at_limit;			   /* OOMKIT_WATCH_AT_LIMIT: swap not counted */
	bool swap_known;		   /* memory.swap.current and .max were read */
	uint64_t swap_bytes, swap_max_bytes;
	uint64_t swap_total_bytes, swap_free_bytes; /* the machine's SwapTotal, SwapFree */
	int64_t full_x100; /* oomkit__stall_share() over OOMKIT__STALL_SPAN_NS; -1: not known */
};

/* Whether the cgroup is out of memory and why (NONE: it is not).  Without
 * swap (none on the machine, or a memory.swap.max of 0) this is the rule of
 * before: out of memory within the hold's margin and a quarter of it of
 * memory.max.  Pure. */
enum oomkit_oom_cause oomkit__v2_oom_rule(const struct oomkit__v2_oom_input *in);
/* The usage below which a cgroup with memory.max at max is not "under OOM"
 * (oomkit__v2_memory()'s under_oom): below the hold and its margin. */
uint64_t oomkit__v2_clear_level(uint64_t max);
extern const char *const oomkit__v2_delegated[];

/* ------------------------------------------------------------- walk.c */

/* Longest path a walk keeps for the cgroup it visits: longer ones keep their
 * first components (see oomkit_pid_entry). */
#define OOMKIT__WALK_PATH_MAX 4096

/* A walk of a cgroup subtree, parents before children, at any depth. */
struct oomkit__walk {
	oomkit_ctx *ctx;
	/* Called for each cgroup: dirfd/name, or dirfd itself (O_RDONLY) if
	 * name is NULL (a cgroup with no subdirectory is visited through its
	 * parent, its own directory never opened); a non-zero value stops the
	 * walk and is returned. */
	int (*visit)(struct oomkit__walk *w, int dirfd, const char *name);
	bool recursive;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; past it the walk stops with -ETIMEDOUT; 0: none */
	unsigned depth;	      /* of the visited cgroup below the start */
	unsigned path_depth;  /* of those levels, how many path holds */
	size_t path_len;
	char path[OOMKIT__WALK_PATH_MAX]; /* set to the start's relative path by the caller */
};

/* Walks start_fd's cgroup (and its descendants if w->recursive). */
int oomkit__walk(struct oomkit__walk *w, int start_fd);

/* Calls fn for the name of every subdirectory of dirfd; stops at fn's
 * first non-zero value and returns it, else the number of subdirectories. */
int oomkit__for_each_subdir(int dirfd, int (*fn)(int dirfd, const char *name, void *userdata),
			    void *userdata);

/* Calls fn for every pid in dirfd's cgroup.procs, read in chunks so that any
 * number fits.  0, fn's first non-zero value, or -errno (-ENOENT: removed). */
int oomkit__procs_each(int dirfd, int (*fn)(pid_t pid, void *userdata), void *userdata);
/* The same for dirfd's child cgroup name (NULL: dirfd itself). */
int oomkit__procs_each_at(int dirfd, const char *name, int (*fn)(pid_t pid, void *userdata), void *userdata);

/* -------------------------------------------------------------- psi.c */

/* Registers a PSI trigger for a PRESSURE watch (the machine's for the root). */
int oomkit__psi_register(oomkit_ctx *ctx, struct oomkit_watch *w);

/* Records the stall total full_us at now_ns (at most one sample each
 * span_ns / (OOMKIT__STALL_SAMPLES / 2)) and returns the share of time, in
 * percent times 100, that the cgroup was fully stalled since the newest
 * sample at least span_ns old, whose age goes to *ret_span_ns; -1 while no
 * sample is that old.  A clock or a total that went back starts again.
 * Pure. */
int64_t oomkit__stall_share(struct oomkit__stall *st, uint64_t now_ns, uint64_t full_us, uint64_t span_ns,
			    uint64_t *ret_span_ns);

/* ------------------------------------------------------------ proc.c */

/* Opens dirfd for /proc/PID under the context's proc root. */
int oomkit__proc_open(oomkit_ctx *ctx, pid_t pid);

/* Opens (O_PATH) the directory to read the process's memory, cgroup,
 * command line and executable from: /proc/PID, or /proc/PID/task/TID of a
 * live thread when the leader has exited before its other threads (it is a
 * zombie that cgroup.procs still lists).  *ret_leader (may be NULL): the
 * leader's stat, the process's identity; *ret_live: the opened thread's,
 * dead ('Z', 'X') only if every thread of the process has exited. */
int oomkit__proc_open_live(oomkit_ctx *ctx, pid_t pid, struct oomkit__proc_stat *ret_leader,
			   struct oomkit__proc_stat *ret_live);

/* Reads /proc/PID/stat. */
int oomkit__proc_stat(oomkit_ctx *ctx, pid_t pid, struct oomkit__proc_stat *ret);

/* Writes the process's cgroup in the hierarchy of controller (NULL: the
 * cgroup2 line) into buf, relative to that hierarchy's root. */
int oomkit__proc_cgroup(oomkit_ctx *ctx, pid_t pid, const char *controller, char *buf, size_t len);

/* Whether the process is in rel (relative, canonical) or below it, whatever
 * the length of its path: 1 or 0. */
int oomkit__process_in(oomkit_ctx *ctx, pid_t pid, const char *rel);

/* ----------------------------------------------------------- loop.c */

/* Adds the guardian's pidfd to the loop's epoll set. */
int oomkit__loop_add_guardian(oomkit_ctx *ctx, int pidfd);

/* ------------------------------------------------------- guardian.c */

/* Starts the guardian (the oomkit-guardian program, or a fork where that
 * cannot run) and hands it every taken-over watch. */
int oomkit__guardian_start(oomkit_ctx *ctx);
void oomkit__guardian_stop(oomkit_ctx *ctx);
/* Tells the guardian to hold w's memcg (delay_ms > 0) or to drop it (0). */
int oomkit__guardian_hold(oomkit_ctx *ctx, const struct oomkit_watch *w, uint64_t delay_ms);
/* Called by the loop when the guardian's pidfd is readable: reaps and restarts it. */
int oomkit__guardian_restart(oomkit_ctx *ctx);
/* Tells the guardian that w's OOM is over as the handler sees it, so its
 * clock for w stops now rather than OOMKIT__OOM_SETTLE_NS later.  Never
 * blocks; a message that cannot be sent is dropped (the guardian's own
 * settling ends the clock). */
void oomkit__guardian_clear(oomkit_ctx *ctx, const struct oomkit_watch *w);

/* -------------------------------------------------- guardian-loop.c */

/* What the handler and its guardian say over their SOCK_SEQPACKET pair.
 * HOLD carries one directory fd per entry (SCM_RIGHTS); the guardian knows
 * memcgs by those fds and the handler's ids, never by path. */
enum {
	OOMKIT__GUARDIAN_HOLD = 1,
	OOMKIT__GUARDIAN_DROP = 2,
	OOMKIT__GUARDIAN_QUIT = 3,
	OOMKIT__GUARDIAN_READY = 4, /* guardian to handler, once, when it runs */
	OOMKIT__GUARDIAN_CLEAR = 5, /* the handler saw these memcgs' OOMs end: their clocks stop */
};

/* How long under_oom must read 0 before an OOM the handler left waiting
 * (and, in the guardian, any OOM) is taken as over.  Each charge given back
 * in a memcg under OOM wakes the tasks waiting in it, and each clears its
 * mark until it fails its charge again: a job that keeps giving back a page
 * at a time makes under_oom flicker to 0 with nothing resolved.  Were one 0
 * enough, it would start the delay again each time, and an OOM whose
 * handler waits -- or hangs -- would never reach the kernel. */
#define OOMKIT__OOM_SETTLE_NS (250ull * 1000 * 1000)
#define OOMKIT__GUARDIAN_BATCH 32

struct oomkit__guardian_msg {
	uint32_t op;
	uint32_t n; /* entries */
	struct {
		uint64_t id;
		uint64_t delay_ms;
	} e[OOMKIT__GUARDIAN_BATCH];
};

/* Guardian flags. */
#define OOMKIT__GUARDIAN_PROTECT 0x1u /* oom_score_adj -1000 */
#define OOMKIT__GUARDIAN_MLOCK 0x2u   /* mlockall() once set up */
#define OOMKIT__GUARDIAN_EXECED 0x4u  /* the oomkit-guardian program, not a fork */

/* The guardian's life, on sock (its end of the pair), for the handler
 * parent; never returns. */
void oomkit__guardian_run(int sock, pid_t parent, enum oomkit_backend backend, unsigned flags)
    __attribute__((noreturn));

/* ------------------------------------------------------- reserve.c */

/* Touches stack and buffers and runs each reader once, then mlockall(). */
int oomkit__reserve_lock(oomkit_ctx *ctx);

#endif /* OOMKIT_INTERNAL_H */
