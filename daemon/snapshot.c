/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.c - see snapshot.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"

static const char other_name[] = "(other)";

int snapshot_init(struct snapshot *s, oomkit_ctx *ctx, struct scopes *scopes, size_t max_pids)
{
	unsigned n = scopes->max_jobs;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->scopes = scopes;
	s->max_pids = max_pids;
	s->pids = calloc(max_pids, sizeof(*s->pids));
	s->procs = calloc(max_pids, sizeof(*s->procs));
	s->groups = calloc(n + 1, sizeof(*s->groups));
	s->group_scope = calloc(n + 1, sizeof(*s->group_scope));
	s->group_of_slot = calloc(n, sizeof(*s->group_of_slot));
	return s->pids && s->procs && s->groups && s->group_scope && s->group_of_slot ? 0 : -ENOMEM;
}

void snapshot_free(struct snapshot *s)
{
	free(s->pids);
	free(s->procs);
	free(s->groups);
	free(s->group_scope);
	free(s->group_of_slot);
	memset(s, 0, sizeof(*s));
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
	/* A limit raised earlier (grow, or before a restart) is never "above" limit_max. */
	g->limit_max_bytes = c->limit_max_bytes > g->limit_bytes ? c->limit_max_bytes : g->limit_bytes;
	g->expect_bytes = c->expect_bytes;
	g->kill = c->kill;
	g->protect = c->protect;
	g->n_protect = c->n_protect;
}

/* Groups are the jobs in slot order, then "(other)" for processes of the
 * machine that are in no configured job. */
static unsigned build_groups(struct snapshot *s)
{
	struct oomkit_cgroup_memory m;
	uint64_t sum = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < s->scopes->n_slots; i++)
		s->group_of_slot[i] = -1;
	SCOPE_FOREACH_JOB (j, s->scopes) {
		fill_group(s, &s->groups[n], j);
		sum += s->groups[n].usage_bytes;
		s->group_scope[n] = j;
		s->group_of_slot[scope_index(s->scopes, j)] = (int)n++;
	}
	struct policy_group *o = &s->groups[n];
	memset(o, 0, sizeof(*o));
	o->name = other_name;
	o->limit_bytes = o->limit_max_bytes = OOMKIT_UNLIMITED;
	s->group_scope[n] = NULL;
	if (oomkit_cgroup_memory(s->ctx, s->scopes->machine.rel, &m) >= 0)
		o->usage_bytes = m.usage_bytes > sum ? m.usage_bytes - sum : 0;
	return n + 1;
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

/* One process of the scope into pp; false if it is gone or no longer inside.
 * Its job is found from the path it was listed at: a job's owner can make
 * paths too long to read back from /proc, and a process left out here is a
 * process its owner hid from the policy. */
static bool read_proc(struct snapshot *s, const struct oomkit_pid_entry *e, const char *scope_rel,
		      unsigned n_groups, struct policy_proc *pp)
{
	struct oomkit_process p;
	pid_t pid = e->pid;

	if (oomkit_process_info(s->ctx, pid, &p) < 0)
		return false; /* gone meanwhile */
	/* Listed in the scope a moment ago but no longer inside it: it is
	 * exiting (a dying task can show its cgroup as the root) or moved. */
	if (oomkit_process_in_cgroup(s->ctx, pid, scope_rel) != 1)
		return false;
	struct scope *j = scope_of_cgroup(s->scopes, e->cgroup);
	pp->pid = p.pid;
	pp->start_time = p.start_time;
	pp->group = j ? s->group_of_slot[scope_index(s->scopes, j)] : (int)n_groups - 1;
	pp->rss_bytes = (p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) * 1024;
	pp->oom_score_adj = p.oom_score_adj;
	pp->uid = p.uid;
	memcpy(pp->comm, p.comm, sizeof(pp->comm));
	pp->comm[sizeof(pp->comm) - 1] = '\0';
	return true;
}

struct take {
	struct snapshot *s;
	const char *scope_rel;
	unsigned n_groups, n_procs;
};

static int take_proc(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct take *t = userdata;
	(void)ctx;
	if (t->n_procs >= t->s->max_pids)
		return -ENOBUFS;
	if (read_proc(t->s, e, t->scope_rel, t->n_groups, &t->s->procs[t->n_procs]))
		t->n_procs++;
	return 0;
}

int snapshot_take(struct snapshot *s, const struct scope *scope, uint64_t capacity_bytes,
		  struct policy_input *in)
{
	struct take t = {s, scope->rel, build_groups(s), 0};
	int n = oomkit_cgroup_walk_pids(s->ctx, scope->rel, OOMKIT_WALK_RECURSIVE, take_proc, &t);
	unsigned n_groups = t.n_groups, n_procs = t.n_procs;

	if (n < 0)
		return n;
	s->protected_pids[0] = getpid();
	s->protected_pids[1] = oomkit_guardian_pid(s->ctx);
	memset(in, 0, sizeof(*in));
	in->scope = scope->kind == SCOPE_KIND_MACHINE ? SCOPE_MACHINE : SCOPE_JOB;
	in->scope_group =
	    scope->kind == SCOPE_KIND_MACHINE ? 0 : (unsigned)s->group_of_slot[scope_index(s->scopes, scope)];
	in->groups = s->groups;
	in->n_groups = n_groups;
	in->procs = s->procs;
	in->n_procs = n_procs;
	in->capacity_bytes = capacity_bytes;
	in->protected_pids = s->protected_pids;
	in->n_protected_pids = s->protected_pids[1] > 0 ? 2 : 1;
	in->chain = scope->chain;
	return (int)n_procs;
}

struct scope *snapshot_group_scope(const struct snapshot *s, int group)
{
	return group >= 0 && (unsigned)group <= s->scopes->max_jobs ? s->group_scope[group] : NULL;
}
