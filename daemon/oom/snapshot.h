/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snapshot.h - what policy.c decides on: the scope that ran out of memory,
 * its processes (pid, start time, memory, oom_score_adj, comm) and the jobs
 * they belong to (priority, usage, limits, protection), read from the kernel
 * through liboomkit into arrays sized at start.  Nothing here allocates
 * after snapshot_init().
 *
 * A job's owner can nest cgroups without limit and start any number of
 * processes: no process of the scope is ever skipped for where it lives
 * (liboomkit's walk has no path or depth limit), and when there are more
 * processes than the arrays hold, each job keeps at least its largest as a
 * candidate and the largest overall stay, so hiding among many processes
 * does not take a job out of the choice.
 *
 * Each process is placed by the rules (rules.h) as it is read: the name,
 * uid and cgroup come with it, and the command line and executable are
 * read, into two buffers of the snapshot, only if a rule asks for them.
 *
 * A process in no job of a machine at the v2 root is the rest of the
 * machine's ("(other)", never chosen) only if root alone may have put it
 * where it is; in a cgroup a user may write (a job's owner made it, outside
 * the jobs' patterns) it is in "(escaped)", a candidate ranked with the
 * lowest-priority job (policy_escaped()): nothing a job's owner does hides a
 * process from the daemon.  Below a machine cgroup of its own, where
 * "(other)" is a candidate before every job, "(escaped)" is too, only named
 * apart.  Which cgroup, and whose, is kept for the first
 * SNAPSHOT_ESCAPED_CGROUPS of them, for the report.
 *
 * A machine OOM reads every job; a job's OOM reads only that job and the
 * machine (as "(other)": the rest of the machine), which is all its
 * policies need.
 *
 * A job's owner makes cgroups in its job at will, empty ones by the
 * thousand, and moves its processes between them: a machine's OOM finds the
 * processes through /proc, and a job's walks the job's cgroups for at most
 * SNAPSHOT_WALK_MS before it does too, so the time to a decision follows
 * the processes, not the cgroups, and no process is missed for where it
 * lives or moves.
 */
#ifndef OOMKITD_SNAPSHOT_H
#define OOMKITD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oom/lend.h"
#include "oomkit.h"
#include "rules/policy.h"
#include "scope/scope.h"

/* A cgroup of "(escaped)" as reports name it: its first
 * SNAPSHOT_ESCAPED_PATH_MAX - 1 bytes, raw (the report escapes them). */
#define SNAPSHOT_ESCAPED_CGROUPS 32
#define SNAPSHOT_ESCAPED_PATH_MAX 256
struct snapshot_cgroup {
	char path[SNAPSHOT_ESCAPED_PATH_MAX];
	bool cut;
	uid_t owner; /* (uid_t)-1: unknown */
};

struct snapshot {
	oomkit_ctx *ctx;
	struct scopes *scopes;
	size_t max_pids;
	pid_t *pids;
	struct policy_proc *procs;
	struct policy_group *groups;	 /* max_jobs + 2: the jobs, "(other)", "(escaped)" */
	struct scope **group_scope;	 /* the scope of each group; NULL for "(other)", "(escaped)" */
	int *group_of_slot;		 /* max_jobs: a job slot's group, or -1 */
	unsigned *slots_set;		 /* max_jobs: the slots group_of_slot gives a group now */
	unsigned n_groups_set;		 /* how many */
	unsigned *per_group;		 /* max_jobs + 2: candidates kept per group, while walking */
	pid_t protected_pids[2];	 /* the daemon and its guardian */
	const struct lend *lend;	 /* a job lent headroom is shown at its own limit */
	const struct config *cfg;	 /* the machine's rules (snapshot_configure()) */
	int other_group, escaped_group;	 /* "(other)" and "(escaped)" of the last snapshot; -1: none */
	struct snapshot_cgroup *escaped; /* SNAPSHOT_ESCAPED_CGROUPS: the cgroups of "(escaped)" */
	unsigned n_escaped;
	char *cmdline;			      /* SNAPSHOT_CMDLINE_MAX: one process's, while it is placed */
	char (*cmdlines)[POLICY_CMDLINE_MAX]; /* max_pids: each kept process's, as reports show it */
	unsigned ticks_per_sec;		      /* what start times count in */
	char *exe;			      /* SNAPSHOT_EXE_MAX */
};

#define SNAPSHOT_CMDLINE_MAX 4096 /* a cmdline: rule sees this much of a command line */
#define SNAPSHOT_EXE_MAX 4096
/* How long a job's OOM walks the job's cgroups before it finds its
 * processes through /proc instead (snapshot.c, find_processes()). */
#define SNAPSHOT_WALK_MS 50u

int snapshot_init(struct snapshot *s, oomkit_ctx *ctx, struct scopes *scopes, size_t max_pids);
void snapshot_free(struct snapshot *s);

/* The configuration whose [oomkitd] rules apply (a job's own come with its scope). */
void snapshot_configure(struct snapshot *s, const struct config *cfg);

/* Fills *in for an OOM of scope, with capacity_bytes as the machine's room
 * (snapshot_capacity()); the chain is the scope's.  Returns the number of
 * processes, or -errno if the scope's processes cannot be listed. */
int snapshot_take(struct snapshot *s, const struct scope *scope, uint64_t capacity_bytes,
		  struct policy_input *in);

/* The job behind a policy group of the last snapshot; NULL for "(other)"
 * and "(escaped)". */
struct scope *snapshot_group_scope(const struct snapshot *s, int group);

/* The machine's room: its limit, or the machine's RAM less the daemon's reserve. */
uint64_t snapshot_capacity(oomkit_ctx *ctx, const struct scopes *scopes, uint64_t reserve_bytes);

#endif
