/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowmem.c - see lowmem.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "scope/lowmem.h"

static void on_recheck(void *data, uint64_t now);

int lowmem_init(struct lowmem *lm, struct loop *loop)
{
	lm->recheck = (struct loop_timer){.fn = on_recheck, .data = lm};
	return loop_add_timer(loop, &lm->recheck);
}

void lowmem_configure(struct lowmem *lm, const struct config *cfg)
{
	lm->cfg = cfg;
	lowmem_full_reset(&lm->full);
}

/* What one look read: the machine's memory, its swap, its stall. */
struct reading {
	struct oomkit_system_memory mem;
	struct oomkit_system_swap swap;
	struct oomkit_pressure psi;
	struct lowmem_input in;
};

static void say_out(const struct lowmem *lm, const struct reading *r, enum lowmem_out out)
{
	if (out == LOWMEM_THRASHING)
		log_notice("machine: every task stalled on memory at least %" PRId64 ".%02" PRId64
			   "%% of each third of the last %" PRIu64
			   " s (machine_full_stall %u%%), MemAvailable %" PRIu64 " MiB, usable swap %" PRIu64
			   " MiB: the machine is thrashing, out of memory",
			   r->in.full_share_x100 / 100, r->in.full_share_x100 % 100,
			   lm->cfg->machine_full_stall_ms / 1000, lm->cfg->machine_full_stall_percent,
			   r->mem.available_bytes >> 20, r->swap.usable_bytes >> 20);
	else
		log_notice("machine: MemAvailable %" PRIu64 " MiB + usable swap %" PRIu64
			   " MiB (free %" PRIu64 " of %" PRIu64 " MiB) is below machine_available %" PRIu64
			   " MiB: the machine is out of memory",
			   r->mem.available_bytes >> 20, r->swap.usable_bytes >> 20, r->swap.free_bytes >> 20,
			   r->swap.total_bytes >> 20, r->in.min_room_bytes >> 20);
}

/* The machine's OOM: its chain, with an event that tells what the machine
 * has (usage: what is not available, limit: all of it). */
static void run_chain(struct lowmem *lm, const struct reading *r, enum lowmem_out out, uint64_t now)
{
	struct scope *machine = &lm->scopes->machine;
	uint64_t room = lowmem_room(&r->in), all = r->mem.total_bytes + r->swap.total_bytes;
	struct oomkit_event ev = {.kind = OOMKIT_EVENT_OOM,
				  .watch = lm->watch,
				  .cgroup = machine->rel,
				  .origin = machine->rel,
				  .own = true,
				  .under_oom = true,
				  .usage_bytes = all > room ? all - room : 0,
				  .limit_bytes = all,
				  .time_ns = now};

	/* The victim of the last look is still exiting: the same shortage. */
	if (chain_victim_exiting(lm->chain, machine))
		return;
	counters_oom(&machine->counters);
	say_out(lm, r, out);
	/* One action for a duration of full stall: the stall before it says
	 * nothing of the machine after it. */
	if (out == LOWMEM_THRASHING)
		lowmem_full_reset(&lm->full);
	/* There is no hold on the root to hand over: "kernel" leaves it to the
	 * kernel's killer when reclaim fails. */
	if (chain_run(lm->chain, machine, &ev, 0) == OOMKIT_KERNEL)
		log_notice("machine: left to the kernel OOM killer");
}

/* Reads the machine into r; false if its memory cannot be read. */
static bool read_machine(struct lowmem *lm, struct reading *r, uint64_t now, bool *triggered)
{
	*r = (struct reading){0};
	r->in.full_share_x100 = -1;
	if (oomkit_pressure_read(lm->ctx, "", &r->psi) == 0) {
		if (r->psi.some_total_us > lm->stall_us)
			*triggered = true;
		lm->stall_us = r->psi.some_total_us;
		r->in.full_share_x100 = lowmem_full_share(&lm->full, now, r->psi.full_total_us,
							  lm->cfg->machine_full_stall_ms * NS_PER_MS);
	}
	if (*triggered)
		lm->stalled_ns = now;
	if (oomkit_system_memory(lm->ctx, &r->mem) < 0)
		return false;
	/* Swap is turned on and off at any time: read on every look.  What
	 * cannot be read counts as no swap, the RAM rule. */
	if (oomkit_system_swap(lm->ctx, &r->swap) < 0)
		r->swap = (struct oomkit_system_swap){0};
	r->in.available_bytes = r->mem.available_bytes;
	r->in.swap_usable_bytes = r->swap.usable_bytes;
	r->in.min_room_bytes =
	    lowmem_min_room(&lm->cfg->machine_available, r->mem.total_bytes, r->swap.total_bytes);
	r->in.full_limit_percent = lm->cfg->machine_full_stall_percent;
	r->in.now_ns = now;
	r->in.stalled_ns = lm->stalled_ns;
	return true;
}

static void look(struct lowmem *lm, uint64_t now, bool triggered)
{
	struct reading r;

	lm->looks++;
	if (!read_machine(lm, &r, now, &triggered)) {
		lm->recheck.due_ns = 0;
		return;
	}
	struct lowmem_look l = lowmem_decide(&r.in);
	/* Once per episode of stalls: at most a line a trigger window. */
	if (!lm->recheck.due_ns && l.next_ns)
		log_info("machine: memory stalls (%" PRIu64 " ms so far, %" PRIu64
			 " ms full), MemAvailable %" PRIu64 " MiB, usable swap %" PRIu64
			 " MiB; looking every %d ms while they go on",
			 r.psi.some_total_us / 1000, r.psi.full_total_us / 1000, r.mem.available_bytes >> 20,
			 r.swap.usable_bytes >> 20, LOWMEM_RECHECK_MS);
	else if (lm->recheck.due_ns && !l.next_ns)
		log_info("machine: no memory stall for %d ms, MemAvailable %" PRIu64
			 " MiB, usable swap %" PRIu64 " MiB (%" PRIu64 " looks so far)",
			 lm->window_us / 1000, r.mem.available_bytes >> 20, r.swap.usable_bytes >> 20,
			 lm->looks);
	if (l.out != LOWMEM_NOT_OUT)
		run_chain(lm, &r, l.out, now);
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
		log_debug("machine: memory stalls began; looking at memory and swap");
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

/* The rule as it stands now (the share's size depends on today's swap). */
static void log_machine_rule(struct lowmem *lm)
{
	struct oomkit_system_memory m = {0};
	struct oomkit_system_swap sw = {0};
	const struct config *cfg = lm->cfg;
	char full[96] = "never";

	(void)oomkit_system_memory(lm->ctx, &m);
	(void)oomkit_system_swap(lm->ctx, &sw);
	if (cfg->machine_full_stall_percent)
		snprintf(full, sizeof(full), "%u%% of each third of %" PRIu64 " s",
			 cfg->machine_full_stall_percent, cfg->machine_full_stall_ms / 1000);
	log_info("machine: the cgroup v2 root; out of memory when MemAvailable + usable swap < %" PRIu64
		 " MiB (now %" PRIu64 " + %" PRIu64 " MiB of %" PRIu64 " MiB swap) or fully stalled %s, "
		 "looked at on memory stalls (PSI some %d ms in %d ms)",
		 lowmem_min_room(&cfg->machine_available, m.total_bytes, sw.total_bytes) >> 20,
		 m.available_bytes >> 20, sw.usable_bytes >> 20, sw.total_bytes >> 20, full,
		 LOWMEM_STALL_US / 1000, lm->window_us / 1000);
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
	log_machine_rule(lm);
	return 0;
}

void lowmem_stop(struct lowmem *lm)
{
	if (lm->watch)
		(void)oomkit_unwatch(lm->ctx, lm->watch);
	lm->watch = NULL;
	lm->recheck.due_ns = 0;
}
