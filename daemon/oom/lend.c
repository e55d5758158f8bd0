/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lend.c - see lend.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "oom/lend.h"
#include "base/log.h"
#include "common/value.h"

/* How often a released loan is tried: often while its victim's memory is
 * on its way out, rarely once the job has settled above its limit. */
#define REPAY_FAST_NS (10ull * NS_PER_MS)
#define REPAY_SLOW_NS (500ull * NS_PER_MS)
#define REPAY_FAST_FOR_NS (2ull * NS_PER_SEC)
/* Besides the daemon's reserve, a loan leaves the machine this much. */
#define KEEP_BYTES (64ull << 20)

static void on_timer(void *data, uint64_t now);

int lend_init(struct lend *l, struct loop *loop, oomkit_ctx *ctx)
{
	memset(l->slots, 0, sizeof(l->slots));
	l->ctx = ctx;
	l->keep_bytes = KEEP_BYTES;
	l->timer = (struct loop_timer){.fn = on_timer, .data = l};
	return loop_add_timer(loop, &l->timer);
}

uint64_t lend_want_bytes(uint64_t limit_bytes)
{
	const uint64_t lo = 4ull << 20, hi = 256ull << 20;
	uint64_t v = limit_bytes / 8;

	return v < lo ? lo : v > hi ? hi : v;
}

void lend_configure(struct lend *l, uint64_t reserve_bytes)
{
	l->keep_bytes = KEEP_BYTES + 2 * reserve_bytes;
}

static struct loan_slot *slot_of(const struct lend *l, const struct scope *scope)
{
	for (unsigned i = 0; i < LEND_MAX; i++) {
		const struct loan_slot *s = &l->slots[i];
		if (s->used && scope_get(s->scope) == scope)
			return (struct loan_slot *)s;
	}
	return NULL;
}

static uint64_t due_of(const struct loan_slot *s, uint64_t now)
{
	if (s->hold_until_ns > now)
		return s->hold_until_ns;
	return now + (now - s->since_ns < REPAY_FAST_FOR_NS ? REPAY_FAST_NS : REPAY_SLOW_NS);
}

static void arm(struct lend *l, uint64_t now)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < LEND_MAX; i++)
		if (l->slots[i].used) {
			uint64_t due = due_of(&l->slots[i], now);
			if (!next || due < next)
				next = due;
		}
	l->timer.due_ns = next;
}

const struct oomkit_loan *lend_take(struct lend *l, struct scope *scope, uint64_t want_bytes,
				    uint64_t hold_until_ns, int *ret_err)
{
	struct loan_slot *s = slot_of(l, scope);
	int r;

	if (s) {
		if (hold_until_ns > s->hold_until_ns)
			s->hold_until_ns = hold_until_ns;
		arm(l, now_ns());
		return &s->loan;
	}
	for (unsigned i = 0; i < LEND_MAX && !s; i++)
		if (!l->slots[i].used)
			s = &l->slots[i];
	if (!s) {
		*ret_err = -EBUSY;
		return NULL;
	}
	if ((r = oomkit_lend(l->ctx, scope->rel, want_bytes, l->keep_bytes, &s->loan)) < 0) {
		*ret_err = r;
		return NULL;
	}
	s->used = true;
	s->scope = scope_ref(scope);
	snprintf(s->rel, sizeof(s->rel), "%s", scope->rel);
	snprintf(s->label, sizeof(s->label), "%s", scope->label);
	s->hold_until_ns = hold_until_ns;
	s->since_ns = hold_until_ns;
	s->told = false;
	char lent[32], limit[32];
	value_format_bytes(s->loan.lent_bytes, lent, sizeof(lent));
	value_format_bytes(s->loan.limit_bytes, limit, sizeof(limit));
	log_info("%s: lent %s of headroom above its limit of %s", s->label, lent, limit);
	arm(l, now_ns());
	return &s->loan;
}

const struct oomkit_loan *lend_of(const struct lend *l, const struct scope *scope)
{
	const struct loan_slot *s = slot_of(l, scope);
	return s ? &s->loan : NULL;
}

void lend_release(struct lend *l, const struct scope *scope)
{
	struct loan_slot *s = slot_of(l, scope);
	uint64_t now = now_ns();

	if (!s)
		return;
	s->hold_until_ns = 0;
	s->since_ns = now;
	arm(l, now);
}

/* 1: settled (repaid, or no longer ours to repay), 0: not yet. */
static int try_repay(struct lend *l, struct loan_slot *s, uint64_t now)
{
	int r = oomkit_repay(l->ctx, s->rel, &s->loan);
	char limit[32];

	value_format_bytes(s->loan.limit_bytes, limit, sizeof(limit));
	if (r == -EBUSY) {
		if (!s->told && now - s->since_ns >= REPAY_FAST_FOR_NS) {
			s->told = true;
			log_notice("%s: the headroom lent is still in use; taken back once usage is below %s",
				   s->label, limit);
		}
		return 0;
	}
	if (r == 0)
		log_info("%s: headroom taken back, limit %s again", s->label, limit);
	else if (r == -ESTALE)
		log_info("%s: its limit was changed meanwhile: the loan is void", s->label);
	else if (r != -ENOENT)
		log_warning("%s: cannot take the headroom back: %s", s->label, strerror(-r));
	return 1;
}

static void on_timer(void *data, uint64_t now)
{
	struct lend *l = data;

	for (unsigned i = 0; i < LEND_MAX; i++) {
		struct loan_slot *s = &l->slots[i];
		if (s->used && s->hold_until_ns <= now && try_repay(l, s, now))
			s->used = false;
	}
	arm(l, now_ns());
}

void lend_repay_all(struct lend *l)
{
	for (unsigned i = 0; i < LEND_MAX; i++) {
		struct loan_slot *s = &l->slots[i];
		if (!s->used)
			continue;
		s->told = true; /* said below instead */
		if (!try_repay(l, s, now_ns())) {
			char lent[32], limit[32];
			value_format_bytes(s->loan.lent_bytes, lent, sizeof(lent));
			value_format_bytes(s->loan.limit_bytes, limit, sizeof(limit));
			log_warning(
			    "%s: stopping with %s of headroom still lent (limit %s, not lowered below its "
			    "usage)",
			    s->label, lent, limit);
		}
		s->used = false;
	}
	l->timer.due_ns = 0;
}
