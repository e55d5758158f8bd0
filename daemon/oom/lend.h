/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lend.h - headroom lent to scopes at their limit (liboomkit's oomkit_lend()),
 * so that a job asked to give memory back or to exit cleanly can run: on
 * cgroup v1 with the kernel killer held off, every task that needs memory in
 * the OOMing memcg sleeps in the kernel until memory is freed; on v2 memory.high
 * throttles it.  A scope has at most one loan.  It is held while a shed or a
 * grace window uses it, then repaid on the loop's timer as soon as usage is
 * below the scope's own limit again -- never by forcing the kernel to reclaim
 * or kill.  What is lent is bounded by the library (half of what each
 * limited ancestor and the machine can spare, the daemon's reserve kept).
 * Nothing here allocates.
 */
#ifndef OOMKITD_LEND_H
#define OOMKITD_LEND_H

#include <stdbool.h>
#include <stdint.h>

#include "base/loop.h"
#include "oomkit.h"
#include "scope/scope.h"

#define LEND_MAX 64

struct loan_slot {
	bool used;
	struct scope_ref scope;
	char rel[SCOPE_REL_MAX]; /* repaid even if a reload removed the scope */
	char label[SCOPE_LABEL_MAX];
	struct oomkit_loan loan;
	uint64_t hold_until_ns; /* not repaid before: a shed or a grace uses it */
	uint64_t since_ns;	/* when it was released for repayment */
	bool told;		/* "not repaid yet" was logged */
};

struct lend {
	oomkit_ctx *ctx;
	uint64_t keep_bytes; /* of the machine's MemAvailable: never lent */
	struct loop_timer timer;
	struct loan_slot slots[LEND_MAX];
};

int lend_init(struct lend *l, struct loop *loop, oomkit_ctx *ctx);
/* What a scope at limit_bytes is lent to run for a moment (a handler, a
 * command, a clean exit), not to go on growing: an eighth, 4M to 256M. */
uint64_t lend_want_bytes(uint64_t limit_bytes);

/* What a loan must leave the machine: the daemon's reserve, and more. */
void lend_configure(struct lend *l, uint64_t reserve_bytes);

/* Lends scope up to want_bytes of headroom, held until hold_until_ns.  A
 * scope that has a loan out keeps it and its hold is extended.  The loan,
 * or NULL with -errno in *ret_err (-EINVAL: no limit; -ENOSPC: nothing to
 * spare; -EBUSY: no slot). */
const struct oomkit_loan *lend_take(struct lend *l, struct scope *scope, uint64_t want_bytes,
				    uint64_t hold_until_ns, int *ret_err);
/* The scope's loan, or NULL. */
const struct oomkit_loan *lend_of(const struct lend *l, const struct scope *scope);
/* The loan may be repaid from now on, as soon as usage allows. */
void lend_release(struct lend *l, const struct scope *scope);
/* At a stop: every loan repaid that can be, the others logged. */
void lend_repay_all(struct lend *l);

#endif
