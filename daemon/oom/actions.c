/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* actions.c - see actions.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oom/actions.h"
#include "base/clock.h"
#include "base/log.h"
#include "common/value.h"

/* How long a whole-job kill may wait for the job to empty.  (Still a wait
 * on the loop: liboomkit's whole-cgroup kill has no form that returns the
 * processes it signalled without waiting.) */
#define KILL_JOB_TIMEOUT_MS 1000

void actions_init(struct actions *a, oomkit_ctx *ctx, struct snapshot *snap, struct stats *stats,
		  struct lend *lend)
{
	a->ctx = ctx;
	a->snap = snap;
	a->stats = stats;
	a->lend = lend;
}

void actions_set_last(struct scope *scope, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(scope->last_action, sizeof(scope->last_action), fmt, ap);
	va_end(ap);
}

static void count_kills(struct scope *scope, struct scope *victim, const struct policy_decision *dec,
			uint64_t n)
{
	counters_killed(&scope->counters, scope->kind == SCOPE_KIND_MACHINE,
			victim ? &victim->counters : NULL, dec->policy, n);
}

/* A grace shorter than this is no grace: SIGKILL at once. */
#define GRACE_MIN_MS 10

/* The victim's job's kill_signal, and its grace cut to the budget. */
static int kill_signal(const struct actions *a, const struct policy_decision *dec, uint64_t budget_ms,
		       uint64_t *ret_grace_ms)
{
	const struct scope *vs = snapshot_group_scope(a->snap, dec->victim_group);
	const struct config_job *job = vs ? vs->job : NULL;

	*ret_grace_ms = 0;
	if (!job || job->kill_signal == SIGKILL || job->kill_signal <= 0 || job->kill_grace_ms == 0)
		return SIGKILL;
	uint64_t grace = job->kill_grace_ms < budget_ms ? job->kill_grace_ms : budget_ms;
	if (grace < GRACE_MIN_MS)
		return SIGKILL;
	*ret_grace_ms = grace;
	return job->kill_signal;
}

/* A victim asleep at the scope's limit must run to handle its signal. */
static void lend_for_grace(struct actions *a, struct scope *scope, uint64_t grace_ms)
{
	struct oomkit_cgroup_memory m;
	int err = 0;

	if (oomkit_cgroup_memory(a->ctx, scope->rel, &m) < 0 || m.limit_bytes == OOMKIT_UNLIMITED)
		return;
	if (!lend_take(a->lend, scope, lend_want_bytes(m.limit_bytes), now_ns() + grace_ms * NS_PER_MS, &err))
		log_notice("%s: no headroom to lend (%s): the victim may not run to exit", scope->label,
			   strerror(-err));
}

static int kill_one(struct actions *a, struct scope *scope, const struct policy_input *in,
		    const struct policy_decision *dec, uint64_t budget_ms, char *result, size_t len,
		    struct action_started *ret)
{
	char name[32], grace[32];
	int sig = kill_signal(a, dec, budget_ms, &ret->grace_ms);
	int r = oomkit_signal_start(a->ctx, dec->victim_pid, dec->victim_start_time, sig, &ret->pidfd);

	if (r < 0) {
		ret->pidfd = -1;
		snprintf(result, len, "kill of %d failed: %s", (int)dec->victim_pid, strerror(-r));
		return r;
	}
	ret->sig = sig;
	if (ret->grace_ms) {
		lend_for_grace(a, scope, ret->grace_ms);
		value_format_signal(sig, name, sizeof(name));
		value_format_duration(ret->grace_ms, grace, sizeof(grace));
		snprintf(result, len, "sent %s to %d, SIGKILL after %s", name, (int)dec->victim_pid, grace);
	} else {
		snprintf(result, len, "killed %d", (int)dec->victim_pid);
	}
	actions_set_last(scope, "%s killed %d (%s)", policy_kind_name(dec->policy), (int)dec->victim_pid,
			 in->groups[dec->victim_group].name);
	count_kills(scope, snapshot_group_scope(a->snap, dec->victim_group), dec, 1);
	return 0;
}

/* The processes of group the snapshot saw: what a kill of the job signalled
 * when it cannot say itself. */
static unsigned group_procs(const struct policy_input *in, int group)
{
	unsigned n = 0;

	for (unsigned i = 0; i < in->n_procs; i++)
		n += in->procs[i].group == group;
	return n;
}

static int kill_job(struct actions *a, struct scope *scope, const struct policy_input *in,
		    const struct policy_decision *dec, char *result, size_t len)
{
	struct scope *victim = snapshot_group_scope(a->snap, dec->victim_group);

	if (!victim) {
		snprintf(result, len, "kill of a job failed: the job is gone");
		return -ESRCH;
	}
	int r = oomkit_kill_cgroup(a->ctx, victim->rel, KILL_JOB_TIMEOUT_MS);
	if (r == -ETIMEDOUT) {
		/* Every process it found was signalled, but not all had exited
		 * in the wait: a large one takes longer than that to free its
		 * memory on a slow or loaded machine.  The kill is done; handing
		 * the OOM to the kernel now would have it kill another process
		 * beside the dying ones.  Its end is watched as any kill's is,
		 * and one still left (forked between two rounds) makes the OOM
		 * come back, to be decided again. */
		unsigned n = group_procs(in, dec->victim_group);
		snprintf(result, len, "killed job %s (%u processes; some still exiting after %d ms)",
			 victim->label, n, KILL_JOB_TIMEOUT_MS);
		r = (int)n;
	} else if (r < 0) {
		snprintf(result, len, "kill of job %s failed: %s", victim->label, strerror(-r));
		return r;
	} else {
		snprintf(result, len, "killed job %s (%d processes)", victim->label, r);
	}
	actions_set_last(scope, "%s killed job %s", policy_kind_name(dec->policy), victim->label);
	count_kills(scope, victim, dec, (uint64_t)r);
	return 0;
}

static int grow(struct actions *a, struct scope *scope, const struct policy_decision *dec, char *result,
		size_t len)
{
	char sz[32];
	int r = oomkit_set_limit(a->ctx, scope->rel, dec->new_limit_bytes);

	if (r < 0) {
		snprintf(result, len, "grow failed: %s", strerror(-r));
		return r;
	}
	value_format_bytes(dec->new_limit_bytes, sz, sizeof(sz));
	snprintf(result, len, "limit raised to %s", sz);
	actions_set_last(scope, "grew to %s", sz);
	counters_grew(&scope->counters);
	return 0;
}

int actions_start(struct actions *a, struct scope *scope, const struct policy_input *in,
		  const struct policy_decision *dec, uint64_t budget_ms, char *result, size_t len,
		  struct action_started *ret)
{
	*ret = (struct action_started){.pidfd = -1, .sig = SIGKILL};
	switch (dec->action) {
	case ACTION_KILL:
		return kill_one(a, scope, in, dec, budget_ms, result, len, ret);
	case ACTION_KILL_JOB:
		return kill_job(a, scope, in, dec, result, len);
	case ACTION_GROW:
		return grow(a, scope, dec, result, len);
	default:
		snprintf(result, len, "nothing to do");
		return -EINVAL;
	}
}
