/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shed.c - see shed.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oom/actions.h"
#include "base/clock.h"
#include "base/log.h"
#include "oom/shed.h"
#include "common/value.h"

/* How often a shedding scope's usage is read: the kernel does not tell. */
#define POLL_NS (5ull * NS_PER_MS)
/* Once below the target, usage is followed until it has not fallen for this
 * long, so that the report says what came back, not what had by then.  A
 * job gives memory back in steps, and a busy machine keeps it off a CPU
 * between two of them for far longer than a scheduler tick: as long as the
 * library's own settle (a 0 of under_oom is believed after 250 ms).  The
 * OOM is over already; only the report's figure waits (and the loan, which
 * the job no longer needs, is held that much longer). */
#define SETTLE_NS (250ull * NS_PER_MS)
#define MiB (1ull << 20)

static void on_timer(void *data, uint64_t now);

int shed_init(struct shed *s, struct loop *loop)
{
	memset(s->runs, 0, sizeof(s->runs));
	s->timer = (struct loop_timer){.fn = on_timer, .data = s};
	return loop_add_timer(loop, &s->timer);
}

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Shedding is done when usage is this far below the limit: an OOM a page
 * later would not be "resolved". */
static uint64_t margin_of(uint64_t limit)
{
	return clamp(limit / 16, MiB, 64 * MiB);
}

static bool ours(const struct policy_input *in, pid_t pid)
{
	for (unsigned i = 0; i < in->n_protected_pids; i++)
		if (in->protected_pids[i] == pid)
			return true;
	return false;
}

/* Sends sig to every process of group g that catches it: a SIGUSR1 ends a
 * process that has no handler for it, so one without is not asked.  The
 * count of those asked. */
static unsigned signal_group(struct shed *s, const struct policy_input *in, int g, int sig)
{
	unsigned n = 0;

	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		struct oomkit_process info;
		int pidfd;
		if (p->group != g || ours(in, p->pid) || oomkit_process_info(s->ctx, p->pid, &info) < 0 ||
		    info.start_time != p->start_time || !(info.sig_caught & (1ull << (sig - 1))))
			continue;
		if (oomkit_signal_start(s->ctx, p->pid, p->start_time, sig, &pidfd) == 0) {
			close(pidfd);
			n++;
		}
	}
	return n;
}

/* Starts job js's shed_command for the shed fl reports, for up to wait_ms:
 * 1 if it runs. */
static unsigned run_command(struct shed *s, const struct scope *js, struct flight *fl, uint64_t wait_ms)
{
	struct flight_victim *v = &fl->victim;

	*v = (struct flight_victim){0};
	snprintf(v->job, sizeof(v->job), "%s", js->name);
	snprintf(v->cgroup, sizeof(v->cgroup), "%s", js->rel);
	if (fl->report_fd >= 0)
		reports_path(s->reports, fl->report_id, fl->scope_name, v->report, sizeof(v->report));
	return inflight_run_hook(s->inflight, fl, HOOK_SHED_COMMAND, js->job->hooks[HOOK_SHED_COMMAND],
				 wait_ms) == 0;
}

/* Asks the groups dec names: their shed_signal to the processes that catch
 * it, their shed_command started.  The number of processes signalled, and
 * of commands started in *ret_commands. */
static unsigned ask(struct shed *s, const struct policy_input *in, const struct policy_decision *dec,
		    struct flight *fl, uint64_t wait_ms, int *ret_sig, unsigned *ret_commands)
{
	unsigned n = 0;

	*ret_sig = 0;
	*ret_commands = 0;
	for (unsigned g = 0; g < in->n_groups; g++) {
		if (!shed_asks(in, dec, g))
			continue;
		const struct scope *js = snapshot_group_scope(s->snap, (int)g);
		if (!js || !js->job)
			continue;
		if (js->job->hooks[HOOK_SHED_COMMAND])
			*ret_commands += run_command(s, js, fl, wait_ms);
		if (!js->job->shed_signal)
			continue;
		n += signal_group(s, in, (int)g, js->job->shed_signal);
		*ret_sig = js->job->shed_signal;
	}
	return n;
}

bool shed_asks(const struct policy_input *in, const struct policy_decision *dec, unsigned g)
{
	return dec->victim_group >= 0 ? (int)g == dec->victim_group : in->groups[g].can_shed;
}

static void arm(struct shed *s, uint64_t now)
{
	s->timer.due_ns = 0;
	for (unsigned i = 0; i < SHED_MAX; i++)
		if (s->runs[i].used)
			s->timer.due_ns = now + POLL_NS;
}

int shed_start(struct shed *s, struct scope *scope, const struct policy_input *in,
	       const struct policy_decision *dec, struct flight *fl, uint64_t event_ns, uint64_t wait_ms,
	       char *result, size_t len)
{
	struct shed_run *run = NULL;
	struct oomkit_cgroup_memory m;
	char signame[32] = "";
	int sig, err = 0;

	for (unsigned i = 0; i < SHED_MAX && !run; i++)
		if (!s->runs[i].used)
			run = &s->runs[i];
	if (!run || !fl->used) {
		snprintf(result, len, "no room to follow a shed (%d under way)", SHED_MAX);
		return -EBUSY;
	}
	if (oomkit_cgroup_memory(s->ctx, scope->rel, &m) < 0) {
		snprintf(result, len, "cannot read the memory of %s", scope->label);
		return -EIO;
	}
	/* Asked first, lent after: a signal stays pending while its process
	 * sleeps at the limit, and is handled as soon as the loan wakes it. */
	unsigned commands;
	unsigned n = ask(s, in, dec, fl, wait_ms, &sig, &commands);
	if (n == 0 && commands == 0) {
		snprintf(result, len, "nobody to ask: no process catches its shed_signal%s",
			 fl->more.n_hooks ? ", and its shed_command did not start" : "");
		return -ESRCH;
	}
	uint64_t now = now_ns(), deadline = now + wait_ms * NS_PER_MS;
	const struct oomkit_loan *loan =
	    lend_take(s->lend, scope, lend_want_bytes(m.limit_bytes), deadline, &err);
	value_format_signal(sig, signame, sizeof(signame));
	*run = (struct shed_run){.used = true,
				 .scope = scope_ref(scope),
				 .fl = fl,
				 .next_step = dec->step + 1,
				 .event_ns = event_ns,
				 .asked_ns = now,
				 .deadline_ns = deadline,
				 .lent = loan != NULL,
				 .limit_bytes = m.limit_bytes};
	snprintf(run->rel, sizeof(run->rel), "%s", scope->rel);
	snprintf(run->label, sizeof(run->label), "%s", scope->label);
	uint64_t level = loan ? loan->clear_bytes : m.limit_bytes;
	run->seen = (struct report_shed){.before_bytes = m.usage_bytes,
					 .after_bytes = m.usage_bytes,
					 .target_bytes = level - margin_of(level),
					 .lent_bytes = loan ? loan->lent_bytes : 0,
					 .signalled = n};
	if (!loan)
		log_notice("%s: no headroom to lend (%s): the job may not run to shed", scope->label,
			   strerror(-err));
	if (n && commands)
		snprintf(result, len, "asked %u process%s to give memory back (%s) and ran its shed_command",
			 n, n == 1 ? "" : "es", signame);
	else if (n)
		snprintf(result, len, "asked %u process%s to give memory back (%s)", n, n == 1 ? "" : "es",
			 signame);
	else
		snprintf(result, len, "ran its shed_command to give memory back");
	fl->t.acted_ns = now;
	arm(s, now);
	return 0;
}

bool shed_active(const struct shed *s, const struct scope *scope)
{
	for (unsigned i = 0; i < SHED_MAX; i++)
		if (s->runs[i].used && scope_get(s->runs[i].scope) == scope)
			return true;
	return false;
}

/* The report of a shed, finished with its outcome. */
static void land(struct shed *s, struct shed_run *run, const char *result)
{
	struct flight *fl = run->fl;

	snprintf(fl->result, sizeof(fl->result), "%s", result);
	fl->more.has_shed = true;
	fl->more.shed = run->seen;
	inflight_land(s->inflight, fl);
	metrics_changed(s->metrics);
}

static void resolved(struct shed *s, struct shed_run *run, uint64_t now)
{
	struct scope *scope = scope_get(run->scope);
	const struct report_shed *seen = &run->seen;
	char got[32], a[32], b[32], result[INFLIGHT_RESULT_MAX];

	(void)now;
	run->seen.resolved = true;
	run->fl->t.freed_ns = run->below_ns;
	value_format_bytes(seen->before_bytes > seen->after_bytes ? seen->before_bytes - seen->after_bytes
								  : 0,
			   got, sizeof(got));
	value_format_bytes(seen->before_bytes, a, sizeof(a));
	value_format_bytes(seen->after_bytes, b, sizeof(b));
	snprintf(result, sizeof(result), "resolved by shedding: %s came back (%s -> %s); nothing killed", got,
		 a, b);
	if (scope) {
		lend_release(s->lend, scope);
		actions_set_last(scope, "shed %s", got);
		counters_shed_resolved(&scope->counters);
	}
	run->used = false;
	land(s, run, result); /* and the metrics are rewritten */
}

static void timed_out(struct shed *s, struct shed_run *run)
{
	struct scope *scope = scope_get(run->scope);
	const struct report_shed *seen = &run->seen;
	char got[32], t[32], w[32], result[INFLIGHT_RESULT_MAX];
	uint64_t event_ns = run->event_ns;
	unsigned next = run->next_step;

	value_format_bytes(seen->before_bytes > seen->after_bytes ? seen->before_bytes - seen->after_bytes
								  : 0,
			   got, sizeof(got));
	value_format_bytes(seen->target_bytes, t, sizeof(t));
	value_format_duration((run->deadline_ns - run->asked_ns) / NS_PER_MS, w, sizeof(w));
	snprintf(result, sizeof(result),
		 "shedding gave back %.20s in %.20s, not enough (below %.20s needed); the chain goes on", got,
		 w, t);
	run->used = false;
	land(s, run, result);
	if (!scope)
		return; /* a reload removed it meanwhile */
	lend_release(s->lend, scope);
	s->resume(s->resume_data, scope, event_ns, next);
}

static void on_timer(void *data, uint64_t now)
{
	struct shed *s = data;

	for (unsigned i = 0; i < SHED_MAX; i++) {
		struct shed_run *run = &s->runs[i];
		struct oomkit_cgroup_memory m;
		if (!run->used)
			continue;
		if (oomkit_cgroup_memory(s->ctx, run->rel, &m) < 0) {
			run->used = false;
			land(s, run, "its memcg is gone");
			continue;
		}
		if (m.usage_bytes < run->seen.after_bytes) {
			run->seen.after_bytes = m.usage_bytes;
			run->fell_ns = now;
		}
		/* Without a loan the limit is the real one: it must have left OOM too. */
		if (!run->below_ns && m.usage_bytes < run->seen.target_bytes && (run->lent || !m.under_oom))
			run->below_ns = now;
		/* A shed_command is waited for: what it frees last (MEMORY PURGE
		 * after FLUSHDB) counts too. */
		bool command_done = run->fl->hooks_running == 0;
		if (run->below_ns &&
		    ((command_done && now - run->fell_ns >= SETTLE_NS) || now >= run->deadline_ns))
			resolved(s, run, now);
		else if (!run->below_ns && now >= run->deadline_ns)
			timed_out(s, run);
	}
	arm(s, now_ns());
}

void shed_stop(struct shed *s)
{
	for (unsigned i = 0; i < SHED_MAX; i++)
		if (s->runs[i].used) {
			s->runs[i].used = false;
			land(s, &s->runs[i], "oomkitd stopped while the job was shedding");
		}
	s->timer.due_ns = 0;
}
