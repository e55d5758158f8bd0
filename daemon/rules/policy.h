/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.h - oomkitd's decisions: pure functions of a snapshot.  The daemon
 * gathers the jobs and processes of the scope that ran out of memory (a job,
 * or the whole machine), and policy_decide() walks the policy chain and says
 * what to do and why.  No I/O and no allocation happen here, so every rule
 * is tested with tables and the daemon's handler path stays allocation-free.
 */
#ifndef OOMKITD_POLICY_H
#define OOMKITD_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules/match.h"

#define POLICY_REASON_MAX 256
#define POLICY_RULE_MAX (MATCH_TEXT_MAX + 48) /* "prefer = cmdline:... ([oomkitd], line 12)" */
#define POLICY_TRAIL_MAX 512
#define POLICY_MAX_CHAIN 8
#define POLICY_COMM_MAX 16 /* process names as the kernel keeps them (15 + NUL) */
/* A process's command line as a report shows it: its arguments joined by
 * spaces, cut to this (NUL included); a snapshot keeps one per process. */
#define POLICY_CMDLINE_MAX 128

/* The policies a chain is made of. */
enum policy_kind {
	POLICY_GROW = 0,
	POLICY_KILL_LOWEST,
	POLICY_KILL_NEWEST,
	POLICY_KILL_LARGEST,
	POLICY_KILL_OVER_EXPECTED,
	POLICY_REPORT,
	POLICY_PROMPT,
	POLICY_KERNEL,
	POLICY_SHED, /* ask the job to give memory back */
	POLICY__COUNT,
};

/* The steps tried, in order, for one scope's OOMs. */
struct policy_chain {
	enum policy_kind steps[POLICY_MAX_CHAIN];
	unsigned n_steps;
};

/* What a job loses when a policy picks one of its processes. */
enum kill_scope {
	KILL_PROCESS = 0,
	KILL_JOB = 1,
	/* A terminal's or a session's scope: its largest process that is not
	 * the session leader or an interactive shell (the build, not the
	 * terminal); those two are never candidates. */
	KILL_LARGEST_LEAF = 2,
};

/* Where the rules (protect, prefer, avoid) put a process. */
enum policy_place {
	PLACE_NONE = 0, /* no rule matched */
	PLACE_PREFER,	/* first within every policy */
	PLACE_AVOID,	/* last within every policy */
	PLACE_PROTECT,	/* never chosen */
};

/* "kill-lowest" for POLICY_KILL_LOWEST; NULL for an unknown kind. */
const char *policy_kind_name(enum policy_kind kind);

/* The kind named name ("kill-lowest"); -EINVAL if there is none. */
int policy_kind_from_name(const char *name, enum policy_kind *ret_kind);

/* A job at machine level.  Inside a job's own OOM only that job is in scope. */
struct policy_group {
	const char *name;
	unsigned priority; /* 0..1000, higher is more important */
	uint64_t usage_bytes;
	uint64_t limit_bytes; /* UINT64_MAX: none */
	uint64_t limit_max_bytes;
	uint64_t expect_bytes; /* 0: unknown */
	enum kill_scope kill;
	bool can_shed; /* it says how to ask it for memory (shed_signal, shed_command) */
	/* systemd's ManagedOOMPreference= of its cgroup (user.oomd_omit,
	 * user.oomd_avoid), or the rest of a machine at the v2 root (omit):
	 * snapshot.c places its processes by policy_systemd_place(). */
	bool omit, avoid;
	/* kill = largest-leaf: the memory of the job's candidates it does not
	 * spare, by policy_count_leaves(). */
	uint64_t leaf_bytes;
	/* "(escaped)": the processes in no job of the machine that lie in a
	 * cgroup a user may write (policy_escaped()).  At the v2 root its
	 * priority is the lowest job's (policy_escaped_priority()), below a
	 * machine cgroup 0 as "(other)"'s; its usage what its candidates hold. */
	bool escaped;
};

struct policy_proc {
	pid_t pid;
	uint64_t start_time; /* clock ticks after boot: larger is newer */
	int group;	     /* index into the groups; -1: none */
	uint64_t rss_bytes;
	int oom_score_adj;
	uid_t uid; /* real uid: whose process it is, for whom a prompt may show it */
	char comm[16];
	pid_t pgid, sid; /* process group and session, for kill = largest-leaf */
	int tty_nr;	 /* controlling terminal; 0: none */
	/* What the rules made of it (the snapshot tests them), and the rule
	 * that did: valid while the configuration the snapshot was taken with
	 * is, so a decision copies its text (policy_format_rule()). */
	enum policy_place place;
	const struct match_expr *rule; /* NULL: no rule matched */
	unsigned rule_line;
	bool rule_machine; /* written in [oomkitd], not in the job's section */
	/* In the "(escaped)" group: the cgroup it is in (NULL: not recorded,
	 * the snapshot keeps a bounded few; cut: only its start), and the user
	 * who may write it ((uid_t)-1: unknown, it could not be read). */
	const char *cgroup;
	bool cgroup_cut;
	uid_t cgroup_owner;
};

enum policy_scope {
	SCOPE_MACHINE = 0,
	SCOPE_JOB = 1,
};

struct policy_input {
	enum policy_scope scope;
	unsigned scope_group; /* SCOPE_JOB: the job whose limit was hit */
	const struct policy_group *groups;
	unsigned n_groups;
	const struct policy_proc *procs;
	unsigned n_procs;
	/* procs[i]'s command line is cmdlines[i] (never decides anything: a
	 * report and explain show it); NULL: not read. */
	const char (*cmdlines)[POLICY_CMDLINE_MAX];
	/* When the snapshot was taken, in ms since boot (CLOCK_BOOTTIME, the
	 * clock start times count on), and the ticks per second they count in:
	 * how long before it a process started.  0: not known. */
	uint64_t taken_boot_ms;
	unsigned ticks_per_sec;
	uint64_t capacity_bytes;     /* the machine limit, or RAM less the reserve */
	const pid_t *protected_pids; /* the daemon and its guardian */
	unsigned n_protected_pids;
	const struct policy_chain *chain;
	unsigned first_step;   /* where to resume, e.g. after an unanswered prompt */
	bool prompt_available; /* a person is connected to answer */
};

enum policy_action {
	ACTION_NONE = 0, /* nothing resolved it: the kernel steps in after the delay */
	ACTION_GROW,
	ACTION_KILL,	 /* one process */
	ACTION_KILL_JOB, /* every process of the victim's job */
	ACTION_PROMPT,
	ACTION_KERNEL, /* hand it to the kernel OOM killer now */
	ACTION_SHED,   /* ask the victim's job (-1: every job that can) to give memory back */
};

struct policy_decision {
	enum policy_action action;
	enum policy_kind policy; /* the step that decided (unset for ACTION_NONE) */
	unsigned step;		 /* its index; n_steps for ACTION_NONE */
	pid_t victim_pid;	 /* KILL, KILL_JOB: the chosen process */
	uint64_t victim_start_time;
	int victim_group;		   /* -1 if none */
	uint64_t new_limit_bytes;	   /* GROW */
	enum policy_place victim_place;	   /* KILL, KILL_JOB: where the rules put the victim */
	char victim_rule[POLICY_RULE_MAX]; /* and the rule that did; "" for none */
	char reason[POLICY_REASON_MAX];
	char trail[POLICY_TRAIL_MAX]; /* why the steps before it did not apply */
};

/* Walks in->chain from in->first_step and fills *ret.  Always succeeds for a
 * consistent input; -EINVAL if an index is out of range. */
int policy_decide(const struct policy_input *in, struct policy_decision *ret);

/* Whether a process may never be chosen: listed pid, oom_score_adj -1000,
 * or a protect rule. */
bool policy_protected(const struct policy_input *in, const struct policy_proc *proc);

/* Fills groups[].leaf_bytes (groups is in->groups) from in's processes:
 * what kill = largest-leaf spares a session leader or a shell against.
 * Called once the snapshot is complete, before any decision on it. */
void policy_count_leaves(struct policy_group *groups, const struct policy_input *in);

/* Why a process of the scope is no candidate of any policy ("protected by
 * protect = comm:sshd (line 4)", "the session leader (kill = largest-leaf)"),
 * into buf; false if it is a candidate. */
bool policy_excluded(const struct policy_input *in, const struct policy_proc *proc, char *buf, size_t len);

/* Whether the policy chooses among processes (the kill-* ones): only those
 * have a ranking. */
bool policy_ranks(enum policy_kind kind);

/* The candidates the policy would choose from, best first, as indices into
 * in->procs: the order policy_decide() takes its victim by (its first is the
 * one chosen, before kill = job or largest-leaf widen or move the kill).
 * Writes at most n; returns how many there are in all.  Sorting happens
 * here, never on the OOM path: policy_decide() takes the best in one pass
 * with the same comparison. */
unsigned policy_rank(const struct policy_input *in, enum policy_kind kind, unsigned *order, unsigned n);

/* "prefer", "avoid", "protect" or "none". */
const char *policy_place_name(enum policy_place place);

/* proc's command line (proc is one of in->procs); "" if it was not read. */
const char *policy_cmdline(const struct policy_input *in, const struct policy_proc *proc);

/* Where systemd's ManagedOOMPreference= (omit, avoid) of a process's cgroup
 * puts it, given where the configuration's rules put it: a rule of the
 * file wins (the job's configuration says otherwise), else omit protects
 * and avoid avoids. */
enum policy_place policy_systemd_place(enum policy_place ruled, bool omit, bool avoid);

/* Whether a process in no job of a machine at the cgroup v2 root is out of
 * the protection the rest of the machine has, from
 * oomkit_cgroup_delegated()'s answer for its cgroup below the machine
 * (delegated: 1, 0, or -errno) and whether its path was cut: a cgroup a
 * user may write (made, or moved into, by a job's owner), one whose owner
 * cannot be read, or one nested past what the kernel shows whole (only an
 * owner nests that deep) is escaped.  Only a cgroup root alone may have put
 * it in stays protected: leaving the jobs must never make a process safer. */
bool policy_escaped(int delegated, bool cgroup_truncated);

/* The priority the "(escaped)" group ranks at in kill-lowest: the lowest of
 * the jobs' (groups that are neither escaped nor the rest of the machine,
 * the first n_jobs), 0 with no job.  Escaping puts a process with the least
 * important job, whatever job it left. */
unsigned policy_escaped_priority(const struct policy_group *groups, unsigned n_jobs);

/* "prefer = comm:hog (line 12)" or "avoid = uid:0 ([oomkitd], line 3)" for
 * the rule that placed proc; "" if none did. */
void policy_format_rule(const struct policy_proc *proc, char *buf, size_t len);

/* "kill", "kill-job", "grow", "prompt", "kernel", "shed", "none". */
const char *policy_action_name(enum policy_action action);

#endif
