/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowmem.c - see lowmem.h. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "lowmem.h"

static void on_recheck(void *data, uint64_t now);

int lowmem_init(struct lowmem *lm, struct loop *loop)
{
	lm->recheck = (struct loop_timer){.fn = on_recheck, .data = lm};
	return loop_add_timer(loop, &lm->recheck);
}

void lowmem_configure(struct lowmem *lm, const struct config *cfg)
{
	lm->cfg = cfg;
}

struct lowmem_look lowmem_decide(uint64_t available_bytes, uint64_t min_bytes, uint64_t now_ns,
				 uint64_t stalled_ns)
{
	struct lowmem_look l = {.out = available_bytes < min_bytes};
	/* The longer window: a trigger of either kind fires again within it. */
	uint64_t window_ns = (uint64_t)LOWMEM_WINDOW_US * 1000u;

	/* Still stalling (a stall within the last window): look again soon. */
	if (now_ns < stalled_ns + window_ns)
		l.next_ns = now_ns + (uint64_t)LOWMEM_RECHECK_MS * NS_PER_MS;
	return l;
}

/* The machine's OOM: its chain, with an event that tells what the machine
 * has (usage: what is not available, limit: all of it). */
static void run_chain(struct lowmem *lm, const struct oomkit_system_memory *m, uint64_t now)
{
	struct scope *machine = &lm->scopes->machine;
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM,
				  .watch = lm->watch,
				  .cgroup = machine->rel,
				  .origin = machine->rel,
				  .own = true,
				  .under_oom = true,
				  .usage_bytes = m->total_bytes - m->available_bytes,
				  .limit_bytes = m->total_bytes,
				  .time_ns = now};

	/* The victim of the last look is still exiting: the same shortage. */
	if (chain_victim_exiting(lm->chain, machine))
		return;
	machine->ooms++;
	log_notice("machine: MemAvailable %" PRIu64 " MiB is below machine_available %" PRIu64
		   " MiB: the machine is out of memory",
		   m->available_bytes >> 20, lm->cfg->machine_available_bytes >> 20);
	/* There is no hold on the root to hand over: "kernel" leaves it to the
	 * kernel's killer when reclaim fails. */
	if (chain_run(lm->chain, machine, &ev, 0) == OOMKIT_KERNEL)
		log_notice("machine: left to the kernel OOM killer");
}

static void look(struct lowmem *lm, uint64_t now, bool triggered)
{
	struct oomkit_system_memory m;
	struct oomkit_pressure p = {0};

	lm->looks++;
	if (oomkit_pressure_read(lm->ctx, "", &p) == 0) {
		if (p.some_total_us > lm->stall_us)
			triggered = true;
		lm->stall_us = p.some_total_us;
	}
	if (triggered)
		lm->stalled_ns = now;
	if (oomkit_system_memory(lm->ctx, &m) < 0) {
		lm->recheck.due_ns = 0;
		return;
	}
	struct lowmem_look l =
	    lowmem_decide(m.available_bytes, lm->cfg->machine_available_bytes, now, lm->stalled_ns);
	/* Once per episode of stalls: at most a line a trigger window. */
	if (!lm->recheck.due_ns && l.next_ns)
		log_info("machine: memory stalls (%" PRIu64 " ms so far), MemAvailable %" PRIu64
			 " MiB; looking every %d ms while they go on",
			 p.some_total_us / 1000, m.available_bytes >> 20, LOWMEM_RECHECK_MS);
	else if (lm->recheck.due_ns && !l.next_ns)
		log_info("machine: no memory stall for %d ms, MemAvailable %" PRIu64 " MiB (%" PRIu64
			 " looks so far)",
			 lm->window_us / 1000, m.available_bytes >> 20, lm->looks);
	if (l.out)
		run_chain(lm, &m, now);
	lm->recheck.due_ns = l.next_ns;
}

static enum oomkit_verdict on_stall(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct lowmem *lm = userdata;
	(void)ctx;

	if (ev->kind == OOMKIT_EVENT_GONE) {
		lm->watch = NULL;
		return OOMKIT_WAIT;
	}
	if (ev->kind == OOMKIT_EVENT_PRESSURE) {
		log_debug("machine: memory stalls began; looking at MemAvailable");
		look(lm, ev->time_ns, true);
	}
	return OOMKIT_WAIT;
}

void lowmem_woken(struct lowmem *lm, uint64_t now)
{
	struct oomkit_pressure p;

	/* While rechecking, the timer looks anyway. */
	if (!lm->watch || lm->recheck.due_ns || oomkit_pressure_read(lm->ctx, "", &p) < 0 ||
	    p.some_total_us <= lm->stall_us)
		return;
	look(lm, now, true);
}

static void on_recheck(void *data, uint64_t now)
{
	look(data, now, false);
}

int lowmem_start(struct lowmem *lm)
{
	struct oomkit_pressure p;
	int r;

	if (!lm->cfg->machine_is_root)
		return 0;
	if (oomkit_pressure_read(lm->ctx, "", &p) == 0)
		lm->stall_us = p.some_total_us;
	/* A short window (polled by the kernel every tenth of it) where the
	 * kernel allows it: with CAP_SYS_RESOURCE, which setup may have. */
	lm->window_us = LOWMEM_WINDOW_SHORT_US;
	r = oomkit_watch_stall(lm->ctx, "", LOWMEM_STALL_US, lm->window_us, 0, on_stall, lm, &lm->watch);
	if (r == -EINVAL || r == -EPERM) {
		lm->window_us = LOWMEM_WINDOW_US;
		r = oomkit_watch_stall(lm->ctx, "", LOWMEM_STALL_US, lm->window_us, 0, on_stall, lm,
				       &lm->watch);
	}
	if (r < 0) {
		log_err("machine: cannot watch the machine's memory stalls (/proc/pressure/memory): %s",
			strerror(-r));
		return r;
	}
	log_info("machine: the cgroup v2 root; out of memory when MemAvailable < %" PRIu64
		 " MiB, looked at on memory stalls (PSI some %d ms in %d ms)",
		 lm->cfg->machine_available_bytes >> 20, LOWMEM_STALL_US / 1000, lm->window_us / 1000);
	return 0;
}

void lowmem_stop(struct lowmem *lm)
{
	if (lm->watch)
		(void)oomkit_unwatch(lm->ctx, lm->watch);
	lm->watch = NULL;
	lm->recheck.due_ns = 0;
}
