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
#include "rules/policy.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "oomkit.h"
#include "common/value.h"

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
	if (proc->oom_score_adj <= -1000 || proc->place == PLACE_PROTECT)
		return true;
	for (unsigned i = 0; i < in->n_protected_pids; i++)
		if (in->protected_pids[i] == proc->pid)
			return true;
	return false;
}

const char *policy_cmdline(const struct policy_input *in, const struct policy_proc *proc)
{
	if (!in->cmdlines || proc < in->procs || proc >= in->procs + in->n_procs)
		return "";
	return in->cmdlines[proc - in->procs];
}

const char *policy_place_name(enum policy_place place)
{
	switch (place) {
	case PLACE_NONE:
		return "none";
	case PLACE_PREFER:
		return "prefer";
	case PLACE_AVOID:
		return "avoid";
	case PLACE_PROTECT:
		return "protect";
	}
	return "?";
}

enum policy_place policy_systemd_place(enum policy_place ruled, bool omit, bool avoid)
{
	if (ruled != PLACE_NONE)
		return ruled;
	return omit ? PLACE_PROTECT : avoid ? PLACE_AVOID : PLACE_NONE;
}

bool policy_escaped(int delegated, bool cgroup_truncated)
{
	return delegated != 0 || cgroup_truncated;
}

unsigned policy_escaped_priority(const struct policy_group *groups, unsigned n_jobs)
{
	unsigned lowest = n_jobs ? UINT_MAX : 0;

	for (unsigned i = 0; i < n_jobs; i++)
		if (groups[i].priority < lowest)
			lowest = groups[i].priority;
	return lowest;
}

void policy_format_rule(const struct policy_proc *proc, char *buf, size_t len)
{
	char expr[MATCH_TEXT_MAX + 16];

	if (!proc->rule) {
		/* Placed by no rule of the file: by systemd's ManagedOOMPreference=,
		 * or (protected) in no job of a machine at the v2 root. */
		snprintf(buf, len, "%s",
			 proc->place == PLACE_PROTECT ? "protect (ManagedOOMPreference=omit, or in no job)"
			 : proc->place == PLACE_AVOID ? "avoid (ManagedOOMPreference=avoid)"
						      : "");
		return;
	}
	match_format(proc->rule, expr, sizeof(expr));
	snprintf(buf, len, "%s = %s (%sline %u)", policy_place_name(proc->place), expr,
		 proc->rule_machine ? "[oomkitd], " : "", proc->rule_line);
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

/* The shells a person types into.  A shell running a script is usually
 * in its caller's process group; an interactive one, under job control,
 * leads its own and has the terminal. */
static bool is_shell(const char *comm)
{
	static const char *const shells[] = {"sh",   "bash", "dash", "zsh", "fish",    "ksh",
					     "mksh", "tcsh", "csh",  "ash", "busybox", "nu"};

	if (comm[0] == '-') /* a login shell's argv[0] is "-bash", some set comm so */
		comm++;
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(comm, shells[i]) == 0)
			return true;
	return false;
}

/* The processes kill = largest-leaf spares, a session leader and an
 * interactive shell: NULL for any other, else what it is. */
static const char *leaf_kind(const struct policy_input *in, const struct policy_proc *p)
{
	if (p->group < 0 || (unsigned)p->group >= in->n_groups ||
	    in->groups[p->group].kill != KILL_LARGEST_LEAF)
		return NULL;
	if (p->pid == p->sid)
		return "the session leader (kill = largest-leaf)";
	if (p->tty_nr != 0 && p->pid == p->pgid && is_shell(p->comm))
		return "an interactive shell (kill = largest-leaf)";
	return NULL;
}

void policy_count_leaves(struct policy_group *groups, const struct policy_input *in)
{
	for (unsigned g = 0; g < in->n_groups; g++)
		groups[g].leaf_bytes = 0;
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (p->group >= 0 && (unsigned)p->group < in->n_groups &&
		    in->groups[p->group].kill == KILL_LARGEST_LEAF && !policy_protected(in, p) &&
		    !leaf_kind(in, p))
			groups[p->group].leaf_bytes += p->rss_bytes;
	}
}

/* kill = largest-leaf spares the shell for its build while the job has
 * something else worth killing: its other candidates together hold at
 * least a quarter of what the shell does.  A process that is what holds
 * the job's memory (its only candidate, or by far its largest) is spared no
 * more: anyone can call setsid(), and a spared hog would pass its job's OOM
 * to another job.  A decoy kept beside it must be a quarter of its size,
 * so each kill in the job frees that much.  NULL for a process it does not
 * spare, else why. */
#define LEAF_SPARE_RATIO 4

static const char *leaf_spared(const struct policy_input *in, const struct policy_proc *p)
{
	const char *kind = leaf_kind(in, p);

	if (!kind || (unsigned __int128)in->groups[p->group].leaf_bytes * LEAF_SPARE_RATIO < p->rss_bytes)
		return NULL;
	return kind;
}

bool policy_excluded(const struct policy_input *in, const struct policy_proc *proc, char *buf, size_t len)
{
	char rule[POLICY_RULE_MAX];
	const char *spared;

	for (unsigned i = 0; i < in->n_protected_pids; i++)
		if (in->protected_pids[i] == proc->pid) {
			snprintf(buf, len, "the daemon or its guardian");
			return true;
		}
	if (proc->oom_score_adj <= -1000) {
		snprintf(buf, len, "oom_score_adj -1000");
		return true;
	}
	if (proc->place == PLACE_PROTECT) {
		policy_format_rule(proc, rule, sizeof(rule));
		snprintf(buf, len, "protected by %s", rule);
		return true;
	}
	if ((spared = leaf_spared(in, proc))) {
		snprintf(buf, len, "%s", spared);
		return true;
	}
	if (!in_scope(in, proc)) {
		snprintf(buf, len, "not in job %s", group_name(in, (int)in->scope_group));
		return true;
	}
	return false;
}

/* Whether any policy may choose the process. */
static bool candidate(const struct policy_input *in, const struct policy_proc *p)
{
	return in_scope(in, p) && !policy_protected(in, p) && !leaf_spared(in, p);
}

/* Avoided by systemd's ManagedOOMPreference=avoid, not by a rule of the file. */
static bool systemd_avoided(const struct policy_proc *p)
{
	return p->place == PLACE_AVOID && !p->rule;
}

/* Preferred first, avoided last: the first key of every policy's order.
 * systemd's avoid does not outrank the file's priorities: in kill-lowest at
 * machine level it orders only among its priority (lowest_before). */
static unsigned tier(const struct policy_input *in, bool by_priority, const struct policy_proc *p)
{
	if (p->place == PLACE_PREFER)
		return 0;
	if (p->place != PLACE_AVOID || (by_priority && in->scope == SCOPE_MACHINE && systemd_avoided(p)))
		return 1;
	return 2;
}

/* A policy that chooses a process: which candidates it takes, and whether a
 * goes before b among them (a strict order, total on distinct processes). */
struct order {
	bool (*eligible)(const struct policy_input *in, const struct policy_proc *p);
	bool (*before)(const struct policy_input *in, const struct policy_proc *a,
		       const struct policy_proc *b);
};

static bool any(const struct policy_input *in, const struct policy_proc *p)
{
	(void)in;
	(void)p;
	return true;
}

static bool largest_before(const struct policy_input *in, const struct policy_proc *a,
			   const struct policy_proc *b)
{
	(void)in;
	return bigger(a, b);
}

static bool newest_before(const struct policy_input *in, const struct policy_proc *a,
			  const struct policy_proc *b)
{
	(void)in;
	return newer(a, b);
}

/* Inside a job: the highest oom_score_adj, then the largest.  At machine
 * level: the job of lowest priority, ties to the job using more memory,
 * then to the later name; within it the largest. */
static bool lowest_before(const struct policy_input *in, const struct policy_proc *a,
			  const struct policy_proc *b)
{
	if (in->scope == SCOPE_JOB) {
		if (a->oom_score_adj != b->oom_score_adj)
			return a->oom_score_adj > b->oom_score_adj;
		return bigger(a, b);
	}
	if (a->group != b->group) {
		const struct policy_group *ga = &in->groups[a->group], *gb = &in->groups[b->group];
		if (ga->priority != gb->priority)
			return ga->priority < gb->priority;
		if (systemd_avoided(a) != systemd_avoided(b))
			return systemd_avoided(b);
		if (ga->usage_bytes != gb->usage_bytes)
			return ga->usage_bytes > gb->usage_bytes;
		return strcmp(ga->name, gb->name) > 0;
	}
	return bigger(a, b);
}

static bool over_expected(const struct policy_input *in, const struct policy_proc *p)
{
	const struct policy_group *g = &in->groups[p->group];

	return g->expect_bytes != 0 && g->usage_bytes > g->expect_bytes;
}

/* The job with the largest usage/expect ratio (compared as a*d > c*b in
 * 128 bits to stay exact), ties to the job listed first; within it the
 * largest. */
static bool over_expected_before(const struct policy_input *in, const struct policy_proc *a,
				 const struct policy_proc *b)
{
	if (a->group != b->group) {
		const struct policy_group *ga = &in->groups[a->group], *gb = &in->groups[b->group];
		unsigned __int128 lhs = (unsigned __int128)ga->usage_bytes * gb->expect_bytes;
		unsigned __int128 rhs = (unsigned __int128)gb->usage_bytes * ga->expect_bytes;
		if (lhs != rhs)
			return lhs > rhs;
		return a->group < b->group;
	}
	return bigger(a, b);
}

static const struct order orders[POLICY__COUNT] = {
    [POLICY_KILL_LOWEST] = {any, lowest_before},
    [POLICY_KILL_NEWEST] = {any, newest_before},
    [POLICY_KILL_LARGEST] = {any, largest_before},
    [POLICY_KILL_OVER_EXPECTED] = {over_expected, over_expected_before},
};

static bool before(const struct policy_input *in, const struct order *o, const struct policy_proc *a,
		   const struct policy_proc *b)
{
	bool by_priority = o == &orders[POLICY_KILL_LOWEST];
	unsigned ta = tier(in, by_priority, a), tb = tier(in, by_priority, b);

	if (ta != tb)
		return ta < tb;
	return o->before(in, a, b);
}

static bool takes(const struct policy_input *in, const struct order *o, const struct policy_proc *p)
{
	return candidate(in, p) && o->eligible(in, p);
}

/* The first of the policy's order, in one pass: what policy_rank() puts first. */
static const struct policy_proc *best_of(const struct policy_input *in, const struct order *o)
{
	const struct policy_proc *best = NULL;

	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (takes(in, o, p) && (!best || before(in, o, p, best)))
			best = p;
	}
	return best;
}

bool policy_ranks(enum policy_kind kind)
{
	return (unsigned)kind < POLICY__COUNT && orders[kind].before != NULL;
}

unsigned policy_rank(const struct policy_input *in, enum policy_kind kind, unsigned *order, unsigned n)
{
	unsigned count = 0;

	if (!policy_ranks(kind))
		return 0;
	const struct order *o = &orders[kind];
	/* Insertion sort, keeping the best n: explain's path, never an OOM's. */
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (!takes(in, o, p))
			continue;
		unsigned at = count < n ? count : n;
		while (at > 0 && before(in, o, p, &in->procs[order[at - 1]])) {
			if (at < n)
				order[at] = order[at - 1];
			at--;
		}
		if (at < n)
			order[at] = i;
		count++;
	}
	return count;
}

static bool group_has_protected(const struct policy_input *in, int group)
{
	for (unsigned i = 0; i < in->n_procs; i++)
		if (in->procs[i].group == group && policy_protected(in, &in->procs[i]))
			return true;
	return false;
}

/* kill = largest-leaf: the job's largest candidate (preferred first, avoided
 * last), whichever of its processes the policy chose. */
static const struct policy_proc *leaf_victim(const struct policy_input *in, const struct policy_proc *chosen)
{
	static const struct order largest = {any, largest_before};
	const struct policy_proc *best = chosen;

	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (p->group == chosen->group && candidate(in, p) && before(in, &largest, p, best))
			best = p;
	}
	return best;
}

/* " (placed first by prefer = comm:x (line 3))": what the rules did to it. */
static void placed_by(const struct policy_input *in, const struct order *o, const struct policy_proc *p,
		      char *buf, size_t len)
{
	char rule[POLICY_RULE_MAX];

	policy_format_rule(p, rule, sizeof(rule));
	if (p->place == PLACE_AVOID && tier(in, o == &orders[POLICY_KILL_LOWEST], p) == 1)
		snprintf(buf, len, " (%s: no other candidate of its priority or lower)", rule);
	else if (p->place == PLACE_PREFER)
		snprintf(buf, len, " (placed first by %s)", rule);
	else if (p->place == PLACE_AVOID)
		snprintf(buf, len, " (placed last by %s: no other candidate)", rule);
	else
		buf[0] = '\0';
}

/* "; it is in no job, in a cgroup uid 1000 may write": why a process of
 * "(escaped)" is a candidate at all; "" for any other. */
static void escaped_note(const struct policy_input *in, const struct policy_proc *p, char *buf, size_t len)
{
	if (p->group < 0 || (unsigned)p->group >= in->n_groups || !in->groups[p->group].escaped) {
		if (len)
			buf[0] = '\0';
		return;
	}
	if (p->cgroup_owner == (uid_t)-1)
		snprintf(buf, len, "; it is in no job, in a cgroup whose owner could not be read");
	else
		snprintf(buf, len, "; it is in no job, in a cgroup uid %u may write",
			 (unsigned)p->cgroup_owner);
}

/* Turns a chosen process into a kill of it or of its whole job.  A job with
 * kill = job loses every process, unless one of them is protected: then only
 * the chosen one goes, since protected processes are never killed.  A job
 * with kill = largest-leaf loses its largest candidate instead. */
static void choose(const struct policy_input *in, const struct order *o, const struct policy_proc *victim,
		   struct policy_decision *d, const char *why)
{
	char size[32], placed[POLICY_RULE_MAX + 48], leaf[192] = "";
	int g = victim->group;
	bool whole = g >= 0 && (unsigned)g < in->n_groups && in->groups[g].kill == KILL_JOB;

	if (g >= 0 && (unsigned)g < in->n_groups && in->groups[g].kill == KILL_LARGEST_LEAF) {
		const struct policy_proc *v = leaf_victim(in, victim);
		if (v != victim)
			snprintf(leaf, sizeof(leaf),
				 "; its job kills its largest process instead (kill = largest-leaf)");
		victim = v;
		if (leaf_kind(in, victim))
			snprintf(leaf + strlen(leaf), sizeof(leaf) - strlen(leaf),
				 "; %s is not spared: it holds more than four times the rest of its job",
				 victim->pid == victim->sid ? "the session leader" : "the shell");
	}
	value_format_bytes(victim->rss_bytes, size, sizeof(size));
	placed_by(in, o, victim, placed, sizeof(placed));
	escaped_note(in, victim, leaf + strlen(leaf), sizeof(leaf) - strlen(leaf));
	d->victim_pid = victim->pid;
	d->victim_start_time = victim->start_time;
	d->victim_group = g;
	d->victim_place = victim->place;
	policy_format_rule(victim, d->victim_rule, sizeof(d->victim_rule));
	if (whole && !group_has_protected(in, g)) {
		d->action = ACTION_KILL_JOB;
		snprintf(d->reason, sizeof(d->reason),
			 "%s; job %s is killed whole (kill = job), from process %d (%s, %s)%s", why,
			 group_name(in, g), victim->pid, victim->comm, size, placed);
		return;
	}
	d->action = ACTION_KILL;
	snprintf(d->reason, sizeof(d->reason), "%s%s; killing process %d (%s, %s) of job %s%s%s", why, leaf,
		 victim->pid, victim->comm, size, group_name(in, g),
		 whole ? " (not the whole job: it has protected processes)" : "", placed);
}

/* Which candidates a reason speaks of, from the chosen one's tier. */
static const char *among(const struct policy_proc *p)
{
	return p->place == PLACE_PREFER	 ? " of the preferred candidates"
	       : p->place == PLACE_AVOID ? " of the candidates, all of them avoided"
					 : "";
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
		value_format_bytes(job->limit_max_bytes, a, sizeof(a));
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
		value_format_bytes(room, a, sizeof(a));
		snprintf(note, len, "the machine has no room for job %s (%s left for it)", job->name, a);
		return false;
	}
	d->action = ACTION_GROW;
	d->new_limit_bytes = target;
	value_format_bytes(job->limit_bytes, a, sizeof(a));
	value_format_bytes(target, b, sizeof(b));
	value_format_bytes(room, c, sizeof(c));
	char m[32];
	value_format_bytes(job->limit_max_bytes, m, sizeof(m));
	snprintf(d->reason, sizeof(d->reason),
		 "job %s grows from %s to %s (limit_max %s, %s of the machine left for it)", job->name, a, b,
		 m, c);
	return true;
}

static bool do_kill_lowest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	const struct policy_proc *best = best_of(in, &orders[POLICY_KILL_LOWEST]);
	char why[200];

	if (!best) {
		if (in->scope == SCOPE_MACHINE)
			snprintf(note, len, "no job has a process that may be killed");
		else
			snprintf(note, len, "job %s has no process that may be killed",
				 in->groups[in->scope_group].name);
		return false;
	}
	if (in->scope == SCOPE_MACHINE && in->groups[best->group].escaped)
		snprintf(why, sizeof(why),
			 "processes that left the jobs %s rank with the lowest-priority job (%u)%s",
			 in->groups[best->group].name, in->groups[best->group].priority,
			 best->place == PLACE_PREFER  ? " preferred"
			 : best->place == PLACE_AVOID ? " (all avoided)"
						      : "");
	else if (in->scope == SCOPE_MACHINE)
		snprintf(why, sizeof(why),
			 "job %s has the lowest priority (%u) of the jobs with candidates%s",
			 in->groups[best->group].name, in->groups[best->group].priority,
			 best->place == PLACE_PREFER  ? " preferred"
			 : best->place == PLACE_AVOID ? " (all avoided)"
						      : "");
	else
		snprintf(why, sizeof(why), "process %d has the lowest rank in job %s (oom_score_adj %d)%s",
			 best->pid, in->groups[in->scope_group].name, best->oom_score_adj, among(best));
	choose(in, &orders[POLICY_KILL_LOWEST], best, d, why);
	return true;
}

/* When a process started, for a person: "12 s before the OOM", from its
 * start time and the snapshot's time on the same clock; "N s after boot"
 * if the snapshot's time is not known. */
static void started_when(const struct policy_input *in, const struct policy_proc *p, char *buf, size_t len)
{
	/* /proc counts start times in USER_HZ ticks: 100 on every Linux. */
	uint64_t hz = in->ticks_per_sec ? in->ticks_per_sec : 100;
	uint64_t start_ms = p->start_time / hz * 1000 + p->start_time % hz * 1000 / hz;
	char t[32];

	if (!in->taken_boot_ms) {
		value_format_elapsed(start_ms, t, sizeof(t));
		snprintf(buf, len, "%s after boot", t);
		return;
	}
	value_format_elapsed(in->taken_boot_ms > start_ms ? in->taken_boot_ms - start_ms : 0, t, sizeof(t));
	snprintf(buf, len, "%s before the OOM", t);
}

static bool do_kill_newest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	const struct policy_proc *best = best_of(in, &orders[POLICY_KILL_NEWEST]);
	char why[200];

	if (!best) {
		snprintf(note, len, "no process may be killed");
		return false;
	}
	char when[64];
	started_when(in, best, when, sizeof(when));
	snprintf(why, sizeof(why), "process %d started last%s, %s", best->pid, among(best), when);
	choose(in, &orders[POLICY_KILL_NEWEST], best, d, why);
	return true;
}

static bool do_kill_largest(const struct policy_input *in, struct policy_decision *d, char *note, size_t len)
{
	const struct policy_proc *best = best_of(in, &orders[POLICY_KILL_LARGEST]);
	char why[200];

	if (!best) {
		snprintf(note, len, "no process may be killed");
		return false;
	}
	snprintf(why, sizeof(why), "process %d is the largest%s", best->pid, among(best));
	choose(in, &orders[POLICY_KILL_LARGEST], best, d, why);
	return true;
}

static bool do_kill_over_expected(const struct policy_input *in, struct policy_decision *d, char *note,
				  size_t len)
{
	const struct policy_proc *best = best_of(in, &orders[POLICY_KILL_OVER_EXPECTED]);
	char why[200], e[32];

	if (!best) {
		snprintf(note, len, "no job is above its expected usage");
		return false;
	}
	const struct policy_group *g = &in->groups[best->group];
	value_format_bytes(g->expect_bytes, e, sizeof(e));
	snprintf(why, sizeof(why),
		 "job %s uses %" PRIu64 "%% of its expected %s, the most above expectation%s", g->name,
		 (uint64_t)((unsigned __int128)g->usage_bytes * 100 / g->expect_bytes), e, among(best));
	choose(in, &orders[POLICY_KILL_OVER_EXPECTED], best, d, why);
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
