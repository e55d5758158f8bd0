/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.h - oomkitd's configuration: an INI file parsed into a fresh
 * struct, validated as a whole, and only then handed to the daemon.  A
 * configuration that has any error is never applied, not even in part.
 *
 * The daemon calls config_read() wherever it takes a configuration (start,
 * SIGHUP, --check, --release), so every one of them accepts and refuses the
 * same files.  Every key is one row of the table in config.c: its section,
 * parser, range and default.
 */
#ifndef OOMKITD_CONFIG_H
#define OOMKITD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules/match.h"
#include "rules/pattern.h"
#include "rules/policy.h"
#include "common/value.h"

#define CONFIG_MAX_JOBS 1024 /* the benchmarks go to 1000 jobs */
#define CONFIG_NAME_MAX 64   /* job names, including the NUL */
#define CONFIG_PATH_MAX 512
#define CONFIG_SOCKET_MAX 108	      /* sizeof(sun_path) */
#define CONFIG_ERRORS_MAX 4096	      /* all error lines of one parse */
#define CONFIG_MAX_CGROUPS 64	      /* cgroup patterns of one job */
#define CONFIG_MAX_CGROUPS_TOTAL 4096 /* of all jobs */

#define CONFIG_MAX_RULES 64	       /* protect, prefer and avoid expressions of one job (or the machine) */
#define CONFIG_RULE_MACHINE UINT32_MAX /* config_rule.job of a rule for the whole machine */

/* Which list of a job a rule is on. */
enum config_rule_list {
	RULE_PROTECT = 0, /* never chosen */
	RULE_PREFER,	  /* chosen first within a policy */
	RULE_AVOID,	  /* chosen last */
};

/* One match expression of protect, prefer or avoid (match.h). */
struct config_rule {
	struct match_expr expr;
	enum config_rule_list list;
	unsigned job;  /* index into the jobs; CONFIG_RULE_MACHINE: the [oomkitd] section's */
	unsigned line; /* where it is written */
};

/* The commands a job may name. */
enum config_hook {
	HOOK_BEFORE_KILL = 0,
	HOOK_AFTER_KILL,
	HOOK_SHED_COMMAND,
	HOOK__COUNT,
};

/* One command of a job, checked by value_parse_command(). */
struct config_command {
	char text[VALUE_COMMAND_MAX];
	enum config_hook hook;
	unsigned job;  /* index into the jobs */
	unsigned line; /* where it is written */
};

/* A "cgroup =" pattern of a job (pattern.h). */
struct config_cgroup {
	char pattern[PATTERN_MAX];
	unsigned job;  /* index into the jobs */
	unsigned line; /* where it is written */
};

struct config_job {
	char name[CONFIG_NAME_MAX];
	unsigned priority;	  /* 0..1000, higher is more important */
	uint64_t limit_bytes;	  /* UINT64_MAX: no limit of its own */
	uint64_t limit_max_bytes; /* grow never goes past this */
	uint64_t expect_bytes;	  /* 0: unknown */
	struct policy_chain chain;
	enum kill_scope kill;
	/* protect, prefer and avoid, in the order written (into the
	 * configuration's rules). */
	const struct config_rule *rules;
	unsigned n_rules;
	bool has_owner;
	uid_t owner;
	gid_t owner_gid; /* the owner's group, looked up with the name (users.h); -1: unknown */
	/* The cgroups this job adopts, in the order written (into the
	 * configuration's cgroups); none: the job is machine/NAME. */
	const struct config_cgroup *cgroups;
	unsigned n_cgroups;
	/* cgroup_exclude: cgroups the patterns match that are not instances
	 * (the daemon's own unit, services that must never die); into the
	 * configuration's excludes. */
	const struct config_cgroup *excludes;
	unsigned n_excludes;
	/* systemd's ManagedOOMPreference= of the job's cgroups is honoured
	 * (snapshot.c reads it); no: this configuration decides alone. */
	bool managed_oom_preference;
	/* kill_signal is SIGKILL unless set, with a kill_grace
	 * (before SIGKILL) exactly when it is not; shed_signal 0: none;
	 * shed_wait_ms: a quarter of the delay when shed is in the chain and it
	 * is not set, else 0; each timing shorter than the delay.  The hooks
	 * run through hooks.h. */
	int kill_signal;
	uint64_t kill_grace_ms;
	int shed_signal;
	uint64_t shed_wait_ms;
	const char *hooks[HOOK__COUNT]; /* NULL: none (into the configuration's commands) */
	uint64_t hook_timeout_ms;	/* each hook's; a quarter of the delay unless set */
	unsigned kill_grace_line, shed_wait_line, hook_timeout_line;
	unsigned policy_line; /* 0: the default chain */
	unsigned line;	      /* where its section starts */
};

/* The memory cgroup mount a configuration is resolved against: where it is,
 * whether it is cgroup v2 (where the mount itself may be the machine), and
 * whether systemd runs the machine. */
struct config_mount {
	const char *root;
	bool v2;
	bool systemd;
	uint64_t mem_total_bytes; /* MemTotal, what a size of "25%" is a share of; 0: not known */
};

/* A size, or a share of something (the machine's RAM + swap): percent
 * given, bytes 0. */
struct config_share {
	uint64_t bytes;
	unsigned percent;
};

struct config {
	char source[CONFIG_PATH_MAX];  /* file name used in messages */
	char machine[CONFIG_PATH_MAX]; /* absolute and normalised */
	unsigned machine_line;	       /* where it was set; 0: the default */
	unsigned machine_limit_line;
	unsigned policy_line, delay_line; /* [oomkitd]'s; 0: the default */
	/* The machine is the cgroup v2 root (config_resolve_machine()): no
	 * memory.events, no limit; its OOM is the rule of lowmem-rule.h, looked
	 * at when a PSI trigger fires: MemAvailable plus usable swap below
	 * machine_available, or the full stall at machine_full_stall_percent
	 * or more for machine_full_stall_ms. */
	bool machine_is_root;
	struct config_share machine_available;
	unsigned machine_full_stall_percent; /* 0: not looked at */
	uint64_t machine_full_stall_ms;
	/* Memory priority before any kill (protect-rule.h): on cgroup v2,
	 * while the machine stalls "some" memory_priority_stall percent or more
	 * (avg10), protect the higher-priority jobs' working sets (memory.low)
	 * and reclaim from the lowest-priority jobs, memory_priority_step a
	 * second (memory.reclaim). */
	bool memory_priority;
	unsigned memory_priority_stall_percent;
	uint64_t memory_priority_step_bytes;
	/* machine relative to the memory cgroup mount, as liboomkit takes it;
	 * "" until the configuration is resolved against the mount
	 * (config_read() with a memory_root, or config_resolve_machine()). */
	char machine_rel[CONFIG_PATH_MAX];
	uint64_t machine_limit_bytes; /* UINT64_MAX: no extra limit */
	struct policy_chain chain;    /* for machine-level OOMs */
	uint64_t delay_ms;
	uint64_t reserve_bytes;
	char report_dir[CONFIG_PATH_MAX];
	unsigned report_max_count;
	uint64_t report_max_bytes;
	char socket[CONFIG_SOCKET_MAX];
	char metrics[CONFIG_PATH_MAX]; /* "": no metrics file */
	uint64_t metrics_interval_ms;  /* 0: rewritten only on events */
	bool readonly_status;	       /* anyone may read status and ps */
	bool prompt_freeze;	       /* a question's growers are frozen (freeze.h) */
	uint64_t hook_memory_bytes;    /* the limit of each hook's memcg */
	/* Exactly n_jobs, on the heap: a job is about 420 bytes, and a daemon
	 * with ten jobs should not carry room for a thousand (twice: it and its
	 * guardian lock their memory).  Owned by the struct: config_free(). */
	struct config_job *jobs;
	unsigned n_jobs;
	struct config_cgroup *cgroups; /* every job's, job by job; owned likewise */
	unsigned n_cgroups;
	struct config_cgroup *excludes; /* every job's cgroup_exclude, likewise */
	unsigned n_excludes;
	/* No file was read: the built-in default (for a systemd machine on
	 * cgroup v2 when the mount said so, config_builtin_text()). */
	bool builtin;
	struct config_rule *rules; /* likewise: the machine's where [oomkitd] is, then job by job */
	unsigned n_rules;
	/* The [oomkitd] section's protect, prefer and avoid (into rules). */
	const struct config_rule *machine_rules;
	unsigned n_machine_rules;
	struct config_command *commands; /* likewise */
	unsigned n_commands;
};

/* Reads the file at path (NULL: the built-in configuration, "(built-in)" in
 * messages) and validates it exactly as oomkitd does at start, on SIGHUP and
 * for --check.  The file must be a regular file of at most 1 MiB; nothing
 * that can block is opened (a FIFO is refused, not waited on).
 *
 * mount is the memory cgroup mount (oomkit_memory_root(), oomkit_backend()):
 * the machine is resolved against it into machine_rel, and a size written as
 * a percent is a share of its mem_total_bytes.  Pass NULL only when
 * the mount is not known yet (before liboomkit starts) and call
 * config_resolve_machine() as soon as it is.
 *
 * Returns 0 and fills *ret, which then owns its jobs (config_free()).  On
 * error leaves *ret untouched and writes one line per error into errors, each
 * "file:line: [section] key: what": -EINVAL for a bad configuration, -errno
 * when the file cannot be read, -ENOMEM. */
int config_read(const char *path, const struct config_mount *mount, struct config *ret, char *errors,
		size_t errors_len);

/* Checks cfg->machine against the memory cgroup mount and fills machine_rel:
 * the machine must be a cgroup strictly below the mount, or on cgroup v2 the
 * mount itself, named explicitly (machine_is_root: then it has no limit and
 * every job adopts cgroups).  0, or -EINVAL with the errors in errors (as
 * above). */
int config_resolve_machine(struct config *cfg, const struct config_mount *mount, char *errors,
			   size_t errors_len);

/* Parses text (named source in messages) into a fresh *ret, as config_read()
 * does with a file's contents but without resolving the machine, and taking
 * keys that are parsed and checked but not acted on by the daemon yet (which
 * config_read() refuses, rather than have them silently ignored).  Errors
 * and ownership as for config_read(). */
int config_parse_string(const char *text, const char *source, struct config *ret, char *errors,
			size_t errors_len);

/* Frees what a parsed configuration owns (not the struct itself) and empties it. */
void config_free(struct config *cfg);

/* Refuses a configuration with a job whose cgroup pattern takes in self (a
 * cgroup relative to the root: the daemon's own) or one of its ancestors.
 * 0, or -EINVAL with one error per such pattern (as above). */
/* Whether rel is one of the job's cgroup_exclude: matched by a pattern of
 * the job, yet not an instance of it. */
bool config_excluded(const struct config *cfg, unsigned job, const char *rel);

/* The text of the built-in default for this mount: on a systemd machine at
 * a cgroup v2 root the machine is that root and systemd's units are jobs;
 * else empty (every key at its default, no jobs).  mount may be NULL. */
const char *config_builtin_text(const struct config_mount *mount, char *buf, size_t len);

int config_check_self(const struct config *cfg, const char *self, char *errors, size_t errors_len);

/* Finds a job by name; NULL if there is none. */
const struct config_job *config_find_job(const struct config *cfg, const char *name);

/* A person needs time to notice the question, read which process would go
 * and choose: prompt waits half the delay for an answer, and less than
 * this is too short to answer. */
#define CONFIG_PROMPT_ANSWER_MIN_MS 5000

/* Writes one warning line per chain that has prompt while half the delay
 * is under CONFIG_PROMPT_ANSWER_MIN_MS, "file:line: [section] policy:
 * ...", into buf (truncated to len); returns how many. */
unsigned config_prompt_warnings(const struct config *cfg, char *buf, size_t len);

/* A chain as the file writes it, "report, kill-lowest, kernel"; 0 or
 * -EINVAL/-E2BIG with the offending item in bad ("" for an empty one). */
int config_parse_chain(const char *s, struct policy_chain *ret, char *bad, size_t bad_len);

/* The line of the first exe: rule (which needs CAP_SYS_PTRACE to be tested
 * on other users' processes: privs.c); 0 if there is none. */
unsigned config_exe_rule_line(const struct config *cfg);

/* "process", "job" or "largest-leaf", as the file writes kill =. */
const char *config_kill_name(enum kill_scope kill);

/* Formats a chain as "report, kill-lowest, kernel". */
void config_format_chain(const struct policy_chain *chain, char *buf, size_t len);

#endif
