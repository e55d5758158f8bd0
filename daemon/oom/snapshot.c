/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.c - see snapshot.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "rules/rules.h"
#include "oom/snapshot.h"

static const char other_name[] = "(other)";
static const char escaped_name[] = "(escaped)";

int snapshot_init(struct snapshot *s, oomkit_ctx *ctx, struct scopes *scopes, size_t max_pids)
{
	unsigned n = scopes->max_jobs;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->scopes = scopes;
	s->max_pids = max_pids;
	s->pids = calloc(max_pids, sizeof(*s->pids));
	s->procs = calloc(max_pids, sizeof(*s->procs));
	s->groups = calloc(n + 2, sizeof(*s->groups));
	s->group_scope = calloc(n + 2, sizeof(*s->group_scope));
	s->group_of_slot = calloc(n, sizeof(*s->group_of_slot));
	s->slots_set = calloc(n, sizeof(*s->slots_set));
	for (unsigned i = 0; s->group_of_slot && i < n; i++)
		s->group_of_slot[i] = -1;
	s->per_group = calloc(n + 2, sizeof(*s->per_group));
	s->escaped = calloc(SNAPSHOT_ESCAPED_CGROUPS, sizeof(*s->escaped));
	s->other_group = s->escaped_group = -1;
	s->cmdline = calloc(1, SNAPSHOT_CMDLINE_MAX);
	s->cmdlines = calloc(max_pids, sizeof(*s->cmdlines));
	s->exe = calloc(1, SNAPSHOT_EXE_MAX);
	long hz = sysconf(_SC_CLK_TCK);
	s->ticks_per_sec = hz > 0 ? (unsigned)hz : 0;
	return s->pids && s->procs && s->groups && s->group_scope && s->group_of_slot && s->slots_set &&
		       s->per_group && s->escaped && s->cmdline && s->cmdlines && s->exe
		   ? 0
		   : -ENOMEM;
}

void snapshot_configure(struct snapshot *s, const struct config *cfg)
{
	s->cfg = cfg;
}

void snapshot_free(struct snapshot *s)
{
	free(s->pids);
	free(s->procs);
	free(s->groups);
	free(s->group_scope);
	free(s->group_of_slot);
	free(s->slots_set);
	free(s->per_group);
	free(s->escaped);
	free(s->cmdline);
	free(s->cmdlines);
	free(s->exe);
	memset(s, 0, sizeof(*s));
}

/* systemd writes ManagedOOMPreference= as the xattrs user.oomd_omit and
 * user.oomd_avoid on the unit's cgroup.  Only a cgroup owned by root is
 * believed: a user may write the xattrs of the cgroups it owns (a user
 * manager's units), and avoid, like a rule, puts a process after every
 * other candidate, of any job. */
static void read_preference(struct snapshot *s, struct policy_group *g, const struct scope *j)
{
	char v[8];
	uid_t owner;

	if (j->kind != SCOPE_KIND_INSTANCE || !j->job->managed_oom_preference)
		return;
	if (oomkit_cgroup_xattr(s->ctx, j->rel, "user.oomd_omit", v, sizeof(v), &owner) >= 0 && owner == 0)
		g->omit = true;
	else if (oomkit_cgroup_xattr(s->ctx, j->rel, "user.oomd_avoid", v, sizeof(v), &owner) >= 0 &&
		 owner == 0)
		g->avoid = true;
}

static void fill_group(struct snapshot *s, struct policy_group *g, const struct scope *j)
{
	const struct config_job *c = j->job;
	struct oomkit_cgroup_memory m;

	memset(g, 0, sizeof(*g));
	g->name = j->label; /* an instance's tells it apart: "batch [batch-17.service]" */
	g->priority = c->priority;
	g->limit_bytes = c->limit_bytes;
	if (oomkit_cgroup_memory(s->ctx, j->rel, &m) >= 0) {
		g->usage_bytes = m.usage_bytes;
		g->limit_bytes = m.limit_bytes;
	}
	/* Headroom lent for a moment is not the job's limit (lend.h). */
	const struct oomkit_loan *loan = s->lend ? lend_of(s->lend, j) : NULL;
	if (loan)
		g->limit_bytes = loan->limit_bytes;
	/* A limit raised earlier (grow, or before a restart) is never "above" limit_max. */
	g->limit_max_bytes = c->limit_max_bytes > g->limit_bytes ? c->limit_max_bytes : g->limit_bytes;
	g->expect_bytes = c->expect_bytes;
	g->kill = c->kill;
	g->can_shed = c->shed_signal != 0 || c->hooks[HOOK_SHED_COMMAND] != NULL;
	read_preference(s, g, j);
}

/* Groups for a machine OOM: the jobs in slot order, then "(other)" for
 * processes of the machine that are in no configured job.  For a job's OOM
 * only that job and the rest of the machine: its policies read no other
 * job, and grow needs only what the rest uses (the machine's usage less the
 * job's), so a job OOM costs two memcg reads however many jobs there are. */
static unsigned build_groups(struct snapshot *s, const struct scope *scope)
{
	struct oomkit_cgroup_memory m;
	uint64_t sum = 0;
	unsigned n = 0;

	/* Only the slots the last snapshot gave a group are reset: a job's OOM
	 * touches its own slot, not the table. */
	for (unsigned i = 0; i < s->n_groups_set; i++)
		s->group_of_slot[s->slots_set[i]] = -1;
	s->n_groups_set = 0;
	bool machine = scope->kind == SCOPE_KIND_MACHINE;
	for (struct scope *j = machine ? scope_next(s->scopes, NULL) : (struct scope *)scope; j;
	     j = machine ? scope_next(s->scopes, j) : NULL) {
		unsigned slot = scope_index(s->scopes, j);
		fill_group(s, &s->groups[n], j);
		sum += s->groups[n].usage_bytes;
		s->group_scope[n] = j;
		s->slots_set[s->n_groups_set++] = slot;
		s->group_of_slot[slot] = (int)n++;
	}
	struct policy_group *o = &s->groups[n];
	memset(o, 0, sizeof(*o));
	o->name = other_name;
	o->limit_bytes = o->limit_max_bytes = OOMKIT_UNLIMITED;
	/* The rest of a machine at the v2 root is everything no job adopted:
	 * systemd, the sessions, sshd, journald... never chosen. */
	o->omit = s->scopes->machine.rel[0] == '\0';
	s->group_scope[n] = NULL;
	if (oomkit_cgroup_memory(s->ctx, s->scopes->machine.rel, &m) >= 0)
		o->usage_bytes = m.usage_bytes > sum ? m.usage_bytes - sum : 0;
	s->other_group = (int)n;
	s->escaped_group = -1;
	s->n_escaped = 0;
	if (!machine)
		return n + 1;
	/* Below a cgroup of the machine's own "(other)" is a candidate before
	 * every job (priority 0), and what a user may have put there is too,
	 * only named apart. */
	struct policy_group *e = &s->groups[n + 1];
	memset(e, 0, sizeof(*e));
	e->name = escaped_name;
	e->limit_bytes = e->limit_max_bytes = OOMKIT_UNLIMITED;
	e->escaped = true;
	e->priority = o->omit ? policy_escaped_priority(s->groups, n) : 0;
	s->group_scope[n + 1] = NULL;
	s->escaped_group = (int)n + 1;
	return n + 2;
}

uint64_t snapshot_capacity(oomkit_ctx *ctx, const struct scopes *scopes, uint64_t reserve_bytes)
{
	struct oomkit_cgroup_memory m;
	struct oomkit_system_memory sys;

	if (oomkit_cgroup_memory(ctx, scopes->machine.rel, &m) >= 0 && m.limit_bytes != OOMKIT_UNLIMITED)
		return m.limit_bytes;
	if (oomkit_system_memory(ctx, &sys) < 0)
		return 0;
	return sys.total_bytes > reserve_bytes ? sys.total_bytes - reserve_bytes : 0;
}

struct walk {
	struct snapshot *s;
	const struct scope *scope;
	unsigned n_groups, n_procs;
	unsigned *per_group; /* candidates kept per group */
	bool full;	     /* more processes than the buffers hold */
};

/* The slot a process replaces when the buffers are full, or -1 to drop it:
 * the smallest process of a group that keeps others, so every job keeps at
 * least its largest process as a candidate and the largest overall stay. */
static int evictable(const struct walk *w, const struct policy_proc *pp)
{
	int best = -1;

	for (unsigned i = 0; i < w->n_procs; i++) {
		const struct policy_proc *q = &w->s->procs[i];
		if (w->per_group[q->group] < 2 && q->group != pp->group)
			continue;
		if (best < 0 || q->rss_bytes < w->s->procs[best].rss_bytes)
			best = (int)i;
	}
	if (best >= 0 && w->per_group[pp->group] > 0 && w->s->procs[best].rss_bytes >= pp->rss_bytes)
		return -1;
	return best;
}

/* A process's command line into its slot, cut to what a report shows. */
static void keep_cmdline(struct snapshot *s, unsigned slot, const char *cmdline)
{
	size_t n = strnlen(cmdline, POLICY_CMDLINE_MAX - 1);

	memcpy(s->cmdlines[slot], cmdline, n);
	s->cmdlines[slot][n] = '\0';
}

static void keep(struct walk *w, const struct policy_proc *pp, const char *cmdline)
{
	if (w->n_procs < w->s->max_pids) {
		keep_cmdline(w->s, w->n_procs, cmdline);
		w->s->procs[w->n_procs++] = *pp;
		w->per_group[pp->group]++;
		return;
	}
	w->full = true;
	int k = evictable(w, pp);
	if (k < 0)
		return;
	w->per_group[w->s->procs[k].group]--;
	w->s->procs[k] = *pp;
	keep_cmdline(w->s, (unsigned)k, cmdline);
	w->per_group[pp->group]++;
}

/* Tests the rules of the process's job and the machine's on what was read
 * of it; the command line and executable only if a rule needs them. */
static void place(struct snapshot *s, const struct scope *job, const struct oomkit_process *p,
		  const struct oomkit_pid_entry *e, struct policy_proc *pp)
{
	struct rules_set jr = {0}, mr = {0};
	struct match_subject subj = {.comm = pp->comm, .uid = p->uid, .cgroup = e->cgroup};

	if (job && job->job)
		jr = (struct rules_set){job->job->rules, job->job->n_rules};
	if (s->cfg)
		mr = (struct rules_set){s->cfg->machine_rules, s->cfg->n_machine_rules};
	if (jr.n == 0 && mr.n == 0)
		return;
	unsigned needs = rules_needs(&jr, &mr);
	/* A command line that cannot be read (its memory is in a memcg out of
	 * memory) is matched as far as the process's own record has it. */
	if (needs & (1u << MATCH_CMDLINE))
		subj.cmdline = oomkit_process_cmdline(s->ctx, p->pid, s->cmdline, SNAPSHOT_CMDLINE_MAX) >= 0
				   ? s->cmdline
				   : p->cmdline;
	if ((needs & (1u << MATCH_EXE)) && oomkit_process_exe(s->ctx, p->pid, s->exe, SNAPSHOT_EXE_MAX) >= 0)
		subj.exe = s->exe;
	rules_place(&jr, &mr, &subj, pp);
	/* Protected by a cgroup: rule: unless its user could not have moved it
	 * there, it is placed again without it.  A path cut short (4 KiB, only
	 * an owner nests that deep) names an ancestor, not its cgroup. */
	if (rules_cgroup_protected(pp, &subj) &&
	    (e->cgroup_truncated || oomkit_cgroup_procs_writable(s->ctx, e->cgroup, p->uid) != 0)) {
		subj.cgroup_self_placed = true;
		rules_place(&jr, &mr, &subj, pp);
	}
}

/* The escaped cgroup recorded for the path e names, if it is whole (a cut
 * one is a different cgroup for each process that shares its start). */
static struct snapshot_cgroup *recorded(struct snapshot *s, const struct oomkit_pid_entry *e)
{
	for (unsigned i = 0; i < s->n_escaped && !e->cgroup_truncated; i++) {
		struct snapshot_cgroup *c = &s->escaped[i];
		if (!c->cut && strcmp(c->path, e->cgroup) == 0)
			return c;
	}
	return NULL;
}

/* The cgroup of an escaped process, as the report names it: kept once for
 * all its processes, for the first SNAPSHOT_ESCAPED_CGROUPS cgroups. */
static void record_escaped(struct snapshot *s, const struct oomkit_pid_entry *e, struct policy_proc *pp)
{
	size_t len = strnlen(e->cgroup, SNAPSHOT_ESCAPED_PATH_MAX);
	bool cut = e->cgroup_truncated || len == SNAPSHOT_ESCAPED_PATH_MAX;
	size_t keep = len == SNAPSHOT_ESCAPED_PATH_MAX ? len - 1 : len;

	if (s->n_escaped == SNAPSHOT_ESCAPED_CGROUPS)
		return;
	struct snapshot_cgroup *c = &s->escaped[s->n_escaped++];
	memcpy(c->path, e->cgroup, keep);
	c->path[keep] = '\0';
	c->cut = cut;
	c->owner = pp->cgroup_owner;
	pp->cgroup = c->path;
	pp->cgroup_cut = cut;
}

/* A process of "(other)" at a machine's OOM: in "(escaped)" instead, if a
 * user may have put it where it is (policy_escaped()).  A cgroup already
 * found escaped is not read again: a user's thousand processes in one
 * cgroup cost one walk. */
static void classify_other(struct walk *w, const struct oomkit_pid_entry *e, struct policy_proc *pp)
{
	struct snapshot *s = w->s;
	struct snapshot_cgroup *c;
	uid_t owner = (uid_t)-1;
	int r;

	if (s->escaped_group < 0 || pp->group != s->other_group)
		return;
	if ((c = recorded(s, e))) {
		pp->group = s->escaped_group;
		pp->cgroup_owner = c->owner;
		pp->cgroup = c->path;
		return;
	}
	r = oomkit_cgroup_delegated(s->ctx, e->cgroup, w->scope->rel, &owner);
	if (!policy_escaped(r, e->cgroup_truncated))
		return;
	pp->group = s->escaped_group;
	pp->cgroup_owner = r == 1 ? owner : (uid_t)-1;
	record_escaped(s, e, pp);
}

/* One process the walk found, where it found it (a path an owner made may be
 * cut, but still names the job exactly). */
static int on_pid(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct walk *w = userdata;
	struct snapshot *s = w->s;
	struct oomkit_process p;
	struct policy_proc pp;

	if (oomkit_process_info(ctx, e->pid, &p) < 0)
		return 0; /* gone meanwhile */
	/* Listed in the scope a moment ago but no longer inside it: it is
	 * exiting (a dying task can show its cgroup as the root) or moved.
	 * Asked of the kernel for a path of any length and depth. */
	if (oomkit_process_in_cgroup(ctx, e->pid, w->scope->rel) != 1)
		return 0;
	/* In a job's OOM the other jobs have no group: a process of another
	 * job's instance nested inside this job is in "(other)", as it is no
	 * candidate of this job's. */
	struct scope *j = scope_of_cgroup_in(s->scopes, (struct scope *)w->scope, e->cgroup);
	int g = j ? s->group_of_slot[scope_index(s->scopes, j)] : -1;
	pp = (struct policy_proc){.pid = p.pid,
				  .start_time = p.start_time,
				  .group = g >= 0 ? g : s->other_group,
				  .rss_bytes = (p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) * 1024,
				  .oom_score_adj = p.oom_score_adj,
				  .uid = p.uid,
				  .pgid = p.pgid,
				  .sid = p.sid,
				  .tty_nr = p.tty_nr,
				  .cgroup_owner = (uid_t)-1};
	memcpy(pp.comm, p.comm, sizeof(pp.comm));
	pp.comm[sizeof(pp.comm) - 1] = '\0';
	classify_other(w, e, &pp);
	/* A process of another job's instance nested here is placed by that
	 * job's rules: they are what its configuration says of it. */
	place(s, j, &p, e, &pp);
	const struct policy_group *grp = &s->groups[pp.group];
	pp.place = policy_systemd_place(pp.place, grp->omit, grp->avoid);
	/* "(escaped)" is as large as what may be killed of it: a protected
	 * process beside the hogs would have its small ones chosen first. */
	if (pp.group == s->escaped_group && pp.place != PLACE_PROTECT && pp.oom_score_adj > -1000)
		s->groups[pp.group].usage_bytes += pp.rss_bytes;
	/* The command line its record has (already read, bounded): a report
	 * names the process by it. */
	keep(w, &pp, p.cmdline);
	return 0;
}

/* Every process of the scope, through on_pid.  A job's owner makes as many
 * cgroups in its job as it likes, empty ones too, and moves its processes
 * between them while they are walked.  A machine's OOM, where a process
 * missed makes another job pay, finds them through /proc: what that costs
 * grows with the machine's processes, not with anyone's cgroups, and a
 * process is found wherever it moves.  A job's OOM walks the job's cgroups
 * (a few, for most jobs), for SNAPSHOT_WALK_MS at most, not counting the
 * time its processes take to read: past that, it starts
 * again through /proc, so that the cut-off hides none of the job's
 * processes. */
static int find_processes(struct snapshot *s, const struct scope *scope, struct walk *w)
{
	unsigned flags = OOMKIT_WALK_RECURSIVE;
	uint64_t deadline = now_ns() + SNAPSHOT_WALK_MS * NS_PER_MS;
	int n;

	if (scope->kind == SCOPE_KIND_MACHINE)
		flags |= OOMKIT_WALK_PROC;
	memset(s->per_group, 0, w->n_groups * sizeof(*s->per_group));
	n = oomkit_cgroup_walk_pids_until(s->ctx, scope->rel, flags, deadline, on_pid, w);
	if (n != -ETIMEDOUT)
		return n;
	log_notice("%s: its cgroups took more than %u ms to walk: its processes are found through /proc",
		   scope->label, SNAPSHOT_WALK_MS);
	w->n_procs = 0;
	w->full = false;
	memset(s->per_group, 0, w->n_groups * sizeof(*s->per_group));
	s->n_escaped = 0;
	if (s->escaped_group >= 0)
		s->groups[s->escaped_group].usage_bytes = 0;
	return oomkit_cgroup_walk_pids(s->ctx, scope->rel, flags | OOMKIT_WALK_PROC, on_pid, w);
}

int snapshot_take(struct snapshot *s, const struct scope *scope, uint64_t capacity_bytes,
		  struct policy_input *in)
{
	struct walk w = {.s = s, .scope = scope, .per_group = s->per_group};

	w.n_groups = build_groups(s, scope);
	int n = find_processes(s, scope, &w);
	if (n < 0)
		return n;
	/* What "(escaped)" holds is no longer the rest of the machine's: below a
	 * machine cgroup, where both are candidates, "(other)" would otherwise
	 * look larger by the hog that left it. */
	if (s->escaped_group >= 0) {
		struct policy_group *o = &s->groups[s->other_group];
		uint64_t e = s->groups[s->escaped_group].usage_bytes;
		o->usage_bytes = o->usage_bytes > e ? o->usage_bytes - e : 0;
	}
	if (w.full)
		log_warning(
		    "%s: %d processes, more than the %zu a snapshot holds: each job's largest are the "
		    "candidates",
		    scope->name, n, s->max_pids);
	s->protected_pids[0] = getpid();
	s->protected_pids[1] = oomkit_guardian_pid(s->ctx);
	memset(in, 0, sizeof(*in));
	in->scope = scope->kind == SCOPE_KIND_MACHINE ? SCOPE_MACHINE : SCOPE_JOB;
	in->scope_group =
	    scope->kind == SCOPE_KIND_MACHINE ? 0 : (unsigned)s->group_of_slot[scope_index(s->scopes, scope)];
	in->groups = s->groups;
	in->n_groups = w.n_groups;
	in->procs = s->procs;
	in->n_procs = w.n_procs;
	in->cmdlines = (const char(*)[POLICY_CMDLINE_MAX])s->cmdlines;
	in->taken_boot_ms = boot_ms();
	in->ticks_per_sec = s->ticks_per_sec;
	in->capacity_bytes = capacity_bytes;
	in->protected_pids = s->protected_pids;
	in->n_protected_pids = s->protected_pids[1] > 0 ? 2 : 1;
	in->chain = scope->chain;
	policy_count_leaves(s->groups, in);
	return (int)w.n_procs;
}

struct scope *snapshot_group_scope(const struct snapshot *s, int group)
{
	return group >= 0 && (unsigned)group <= s->scopes->max_jobs + 1 ? s->group_scope[group] : NULL;
}
