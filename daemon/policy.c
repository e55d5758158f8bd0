/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy.c - the policies of a chain, as pure functions of a snapshot.
 *
 * The same code decides for a job and for the machine; only the scope
 * differs.  At machine level every job is in scope and kill-lowest ranks jobs
 * by their configured priority.  Inside a job's own OOM only that job's
 * processes are candidates, and kill-lowest ranks them by oom_score_adj, the
 * knob a job sets on its own processes (highest first), then by size.
 * Ties always go to the larger process, then the newer one, then the higher
 * pid, so a decision never depends on the order of the snapshot.
 */
#include "policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "oomkit.h"
#include "value.h"

static const char *const policy_names[POLICY__COUNT] = {
    [POLICY_GROW] = "grow",
    [POLICY_KILL_LOWEST] = "kill-lowest",
    [POLICY_KILL_NEWEST] = "kill-newest",
    [POLICY_KILL_LARGEST] = "kill-largest",
    [POLICY_KILL_OVER_EXPECTED] = "kill-over-expected",
    [POLICY_REPORT] = "report",
    [POLICY_PROMPT] = "prompt",
    [POLICY_KERNEL] = "kernel",
    [POLICY_SHED] = "shed",
};

const char *policy_kind_name(enum policy_kind kind)
{
	if ((unsigned)kind >= POLICY__COUNT)
		return NULL;
	return policy_names[kind];
}

int policy_kind_from_name(const char *name, enum policy_kind *ret_kind)
{
	for (unsigned k = 0; k < POLICY__COUNT; k++)
		if (strcmp(name, policy_names[k]) == 0) {
			*ret_kind = (enum policy_kind)k;
			return 0;
		}
	return -EINVAL;
}

const char *policy_action_name(enum policy_action action)
{
	switch (action) {
	case ACTION_NONE:
		return "none";
	case ACTION_GROW:
		return "grow";
	case ACTION_KILL:
		return "kill";
	case ACTION_KILL_JOB:
		return "kill-job";
	case ACTION_PROMPT:
		return "prompt";
	case ACTION_KERNEL:
		return "kernel";
	case ACTION_SHED:
		return "shed";
	}
	return "?";
}

bool policy_protected(const struct policy_input *in, const struct policy_proc *proc)
{
	if (proc->oom_score_adj <= -1000)
		return true;
	for (unsigned i = 0; i < in->n_protected_pids; i++)
		if (in->protected_pids[i] == proc->pid)
			return true;
	if (proc->group < 0 || (unsigned)proc->group >= in->n_groups)
		return false;
	const struct policy_group *g = &in->groups[proc->group];
	for (unsigned i = 0; i < g->n_protect; i++)
		if (strncmp(g->protect[i], proc->comm, POLICY_COMM_MAX) == 0)
			return true;
	return false;
}

static bool in_scope(const struct policy_input *in, const struct policy_proc *proc)
{
	if (in->scope == SCOPE_JOB)
		return proc->group == (int)in->scope_group;
	return true;
}

static const char *group_name(const struct policy_input *in, int group)
{
	if (group < 0 || (unsigned)group >= in->n_groups)
		return "(no job)";
	return in->groups[group].name;
}

/* Human sizes for reasons: whole MiB above 10 MiB, else KiB. */
static void fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes == OOMKIT_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else if (bytes >= (10u << 20))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
}

/* Larger first, then newer, then higher pid: a total order on candidates. */
static bool bigger(const struct policy_proc *a, const struct policy_proc *b)
{
	if (a->rss_bytes != b->rss_bytes)
		return a->rss_bytes > b->rss_bytes;
	if (a->start_time != b->start_time)
		return a->start_time > b->start_time;
	return a->pid > b->pid;
}

static bool newer(const struct policy_proc *a, const struct policy_proc *b)
{
	if (a->start_time != b->start_time)
		return a->start_time > b->start_time;
	return bigger(a, b);
}

/* The largest unprotected candidate in scope, restricted to group if >= 0. */
static const struct policy_proc *largest_in(const struct policy_input *in, int group)
{
	const struct policy_proc *best = NULL;

	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (!in_scope(in, p) || policy_protected(in, p) || (group >= 0 && p->group != group))
			continue;
		if (!best || bigger(p, best))
			best = p;
	}
	return best;
}

static bool group_has_protected(const struct policy_input *in, int group)
{
	for (unsigned i = 0; i < in->n_procs; i++)
		if (in->procs[i].group == group && policy_protected(in, &in->procs[i]))
			return true;
	return false;
}

/* Turns a chosen process into a kill of it or of its whole job.  A job with
 * kill = job loses every process, unless one of them is protected: then only
 * the chosen one goes, since protected processes are never killed. */
static void choose(const struct policy_input *in, const struct policy_proc *victim, struct policy_decision *d,
		   const char *why)
{
	char size[32];
	int g = victim->group;
	bool whole = g >= 0 && (unsigned)g < in->n_groups && in->groups[g].kill == KILL_JOB;

	fmt_bytes(victim->rss_bytes, size, sizeof(size));
	d->victim_pid = victim->pid;
	d->victim_start_time = victim->start_time;
	d->victim_group = g;
	if (whole && !group_has_protected(in, g)) {
		d->action = ACTION_KILL_JOB;
		snprintf(d->reason, sizeof(d->reason),
			 "%s; job %s is killed whole (kill = job), from process %d (%s, %s)", why,
			 group_name(in, g), victim->pid, victim->comm, size);
		return;
	}
	d->action = ACTION_KILL;
	snprintf(d->reason, sizeof(d->reason), "%s; killing process %d (%s, %s) of job %s%s", why,
		 victim->pid, victim->comm, size, group_name(in, g),
		 whole ? " (not the whole job: it has protected processes)" : "");
}

/* Each policy returns true if it decided, false (with a note) if it does not apply. */
typedef bool (*policy_fn)(const struct policy_input *in, struct policy_decision *d, char *note, size_t len);

static bool do_grow(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	char a[32], b[32], c[32];

	if (in->scope != SCOPE_JOB) {
		snprintf(note, len, "the machine cannot grow");
		return false;
	}
	const struct policy_group *job = &in->groups[in->scope_group];
	if (job->limit_bytes >= job->limit_max_bytes) {
		value_format_size(job->limit_max_bytes, a, sizeof(a));
		snprintf(note, len, "job %s is at its limit_max %s", job->name, a);
		return false;
	}
	uint64_t others = 0;
	for (unsigned i = 0; i < in->n_groups; i++)
		if (i != in->scope_group)
			others += in->groups[i].usage_bytes;
	uint64_t room = in->capacity_bytes > others ? in->capacity_bytes - others : 0;
	uint64_t target = job->limit_max_bytes < room ? job->limit_max_bytes : room;
	if (target <= job->limit_bytes) {
		fmt_bytes(room, a, sizeof(a));
		snprintf(note, len, "the machine has no room for job %s (%s left for it)", job->name, a);
		return false;
	}
	d->action = ACTION_GROW;
	d->new_limit_bytes = target;
	value_format_size(job->limit_bytes, a, sizeof(a));
	value_format_size(target, b, sizeof(b));
	fmt_bytes(room, c, sizeof(c));
	char m[32];
	value_format_size(job->limit_max_bytes, m, sizeof(m));
	snprintf(d->reason, sizeof(d->reason),
		 "job %s grows from %s to %s (limit_max %s, %s of the machine left for it)", job->name, a, b,
		 m, c);
	return true;
}

/* Machine level: the lowest-priority job that has a candidate; ties go to
 * the job using more memory, then to the later name. */
static int lowest_job(const struct policy_input *in, const struct policy_proc **ret_victim)
{
	int best = -1;
	const struct policy_proc *best_victim = NULL;

	for (unsigned i = 0; i < in->n_groups; i++) {
		const struct policy_proc *v = largest_in(in, (int)i);
		if (!v)
			continue;
		const struct policy_group *g = &in->groups[i], *b = best >= 0 ? &in->groups[best] : NULL;
		if (b && (g->priority > b->priority ||
			  (g->priority == b->priority &&
			   (g->usage_bytes < b->usage_bytes ||
			    (g->usage_bytes == b->usage_bytes && strcmp(g->name, b->name) < 0)))))
			continue;
		best = (int)i;
		best_victim = v;
	}
	*ret_victim = best_victim;
	return best;
}

static bool do_kill_lowest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	char why[160];

	if (in->scope == SCOPE_MACHINE) {
		const struct policy_proc *victim;
		int g = lowest_job(in, &victim);
		if (g < 0) {
			snprintf(note, len, "no job has a process that may be killed");
			return false;
		}
		snprintf(why, sizeof(why), "job %s has the lowest priority (%u) of the jobs with candidates",
			 in->groups[g].name, in->groups[g].priority);
		choose(in, victim, d, why);
		return true;
	}
	const struct policy_proc *best = NULL;
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (!in_scope(in, p) || policy_protected(in, p))
			continue;
		if (!best || p->oom_score_adj > best->oom_score_adj ||
		    (p->oom_score_adj == best->oom_score_adj && bigger(p, best)))
			best = p;
	}
	if (!best) {
		snprintf(note, len, "job %s has no process that may be killed",
			 in->groups[in->scope_group].name);
		return false;
	}
	snprintf(why, sizeof(why), "process %d has the lowest rank in job %s (oom_score_adj %d)", best->pid,
		 in->groups[in->scope_group].name, best->oom_score_adj);
	choose(in, best, d, why);
	return true;
}

static bool do_kill_newest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	const struct policy_proc *best = NULL;
	char why[160];

	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (in_scope(in, p) && !policy_protected(in, p) && (!best || newer(p, best)))
			best = p;
	}
	if (!best) {
		snprintf(note, len, "no process may be killed");
		return false;
	}
	snprintf(why, sizeof(why), "process %d started last (start time %" PRIu64 ")", best->pid,
		 best->start_time);
	choose(in, best, d, why);
	return true;
}

static bool do_kill_largest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	const struct policy_proc *best = largest_in(in, -1);
	char why[160];

	if (!best) {
		snprintf(note, len, "no process may be killed");
		return false;
	}
	snprintf(why, sizeof(why), "process %d is the largest", best->pid);
	choose(in, best, d, why);
	return true;
}

/* The job with the largest usage/expect ratio among those above their
 * expectation; compared as a*d > c*b in 128 bits to stay exact. */
static bool do_kill_over_expected(const struct policy_input *in, struct policy_decision *d, char *note,
				  size_t len)
{
	int best = -1;
	const struct policy_proc *victim = NULL;
	char why[160], e[32];

	for (unsigned i = 0; i < in->n_groups; i++) {
		const struct policy_group *g = &in->groups[i];
		if (in->scope == SCOPE_JOB && i != in->scope_group)
			continue;
		if (g->expect_bytes == 0 || g->usage_bytes <= g->expect_bytes)
			continue;
		const struct policy_proc *v = largest_in(in, (int)i);
		if (!v)
			continue;
		if (best >= 0) {
			const struct policy_group *b = &in->groups[best];
			unsigned __int128 lhs = (unsigned __int128)g->usage_bytes * b->expect_bytes;
			unsigned __int128 rhs = (unsigned __int128)b->usage_bytes * g->expect_bytes;
			if (lhs <= rhs)
				continue;
		}
		best = (int)i;
		victim = v;
	}
	if (best < 0) {
		snprintf(note, len, "no job is above its expected usage");
		return false;
	}
	const struct policy_group *g = &in->groups[best];
	value_format_size(g->expect_bytes, e, sizeof(e));
	snprintf(why, sizeof(why), "job %s uses %" PRIu64 "%% of its expected %s, the most above expectation",
		 g->name, (uint64_t)((unsigned __int128)g->usage_bytes * 100 / g->expect_bytes), e);
	choose(in, victim, d, why);
	return true;
}

static bool do_prompt(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	if (!in->prompt_available) {
		snprintf(note, len, "nobody is connected to answer");
		return false;
	}
	d->action = ACTION_PROMPT;
	snprintf(d->reason, sizeof(d->reason), "asking a connected person what to do");
	return true;
}

static bool do_kernel(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	(void)in;
	(void)note;
	(void)len;
	d->action = ACTION_KERNEL;
	snprintf(d->reason, sizeof(d->reason), "the chain hands the OOM to the kernel OOM killer");
	return true;
}

/* A job's own OOM: the job is asked, if it says how.  The machine's: every
 * job that says how is asked, since asking costs nobody anything. */
static bool do_shed(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	unsigned n = 0;

	if (in->scope == SCOPE_JOB) {
		const struct policy_group *job = &in->groups[in->scope_group];
		if (!job->can_shed) {
			snprintf(note, len, "job %s has no shed_signal or shed_command", job->name);
			return false;
		}
		d->action = ACTION_SHED;
		d->victim_group = (int)in->scope_group;
		snprintf(d->reason, sizeof(d->reason), "asking job %s to give memory back", job->name);
		return true;
	}
	for (unsigned i = 0; i < in->n_groups; i++)
		n += in->groups[i].can_shed;
	if (n == 0) {
		snprintf(note, len, "no job has a shed_signal or shed_command");
		return false;
	}
	d->action = ACTION_SHED;
	d->victim_group = -1;
	snprintf(d->reason, sizeof(d->reason), "asking %u job%s to give memory back", n, n == 1 ? "" : "s");
	return true;
}

static bool do_report(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	/* Every OOM is reported before any action; the step itself decides nothing. */
	(void)in;
	(void)d;
	snprintf(note, len, "report written");
	return false;
}

static const policy_fn policies[POLICY__COUNT] = {
    [POLICY_GROW] = do_grow,
    [POLICY_KILL_LOWEST] = do_kill_lowest,
    [POLICY_KILL_NEWEST] = do_kill_newest,
    [POLICY_KILL_LARGEST] = do_kill_largest,
    [POLICY_KILL_OVER_EXPECTED] = do_kill_over_expected,
    [POLICY_REPORT] = do_report,
    [POLICY_PROMPT] = do_prompt,
    [POLICY_KERNEL] = do_kernel,
    [POLICY_SHED] = do_shed,
};

static void trail_add(struct policy_decision *d, enum policy_kind kind, const char *note)
{
	size_t off = strlen(d->trail);

	if (off < sizeof(d->trail))
		snprintf(d->trail + off, sizeof(d->trail) - off, "%s%s: %s", off ? "; " : "",
			 policy_kind_name(kind), note);
}

int policy_decide(const struct policy_input *in, struct policy_decision *ret)
{
	struct policy_decision d;
	char note[160];

	if (!in->chain || (in->scope == SCOPE_JOB && in->scope_group >= in->n_groups))
		return -EINVAL;
	for (unsigned i = 0; i < in->n_procs; i++)
		if (in->procs[i].group >= (int)in->n_groups)
			return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.victim_group = -1;
	for (unsigned s = in->first_step; s < in->chain->n_steps; s++) {
		enum policy_kind kind = in->chain->steps[s];
		if ((unsigned)kind >= POLICY__COUNT)
			return -EINVAL;
		note[0] = '\0';
		if (policies[kind](in, &d, note, sizeof(note))) {
			d.policy = kind;
			d.step = s;
			*ret = d;
			return 0;
		}
		/* The report is written before any action anyway: nothing to explain. */
		if (kind != POLICY_REPORT)
			trail_add(&d, kind, note);
	}
	d.action = ACTION_NONE;
	d.step = in->chain->n_steps;
	snprintf(d.reason, sizeof(d.reason),
		 "no policy in the chain resolved the OOM; the kernel OOM killer steps in after the delay");
	*ret = d;
	return 0;
}
