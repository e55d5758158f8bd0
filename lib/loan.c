/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loan.c - lending a cgroup at its limit headroom for a moment, and taking
 * it back: the limit (v1 memory.limit_in_bytes, v2 memory.max with the hold
 * at memory.high) raised and lowered again, bounded by what the cgroup's
 * ancestors and the machine can spare.
 *
 * Why: with the kernel killer held off, a v1 task that needs memory in an
 * OOMing memcg sleeps in the kernel until memory is freed or a fatal signal
 * comes, and on v2 a task above memory.high is throttled for up to 2 s per
 * allocation.  A process asked to give memory back (a signal, a request) or
 * to exit cleanly (SIGTERM) cannot do either until it runs; the reference
 * design's reserve gives the handler such room, a loan gives it to the job.
 *
 * Nothing here allocates: the readers are cgroup.c's and meminfo.c's.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* What lending may take of any one room: half, so a loan never takes the
 * last of anything. */
#define LOAN_SHARE_DIV 2

static uint64_t room_of(uint64_t limit, uint64_t usage)
{
	if (limit == OOMKIT_UNLIMITED)
		return OOMKIT_UNLIMITED;
	return limit > usage ? (limit - usage) / LOAN_SHARE_DIV : 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The least room of rel's ancestors that have a limit, the root excluded
 * (its "limit" is the machine, bounded by MemAvailable instead). */
static int ancestors_room(oomkit_ctx *ctx, const char *rel, uint64_t *ret_room)
{
	char path[OOMKIT__PATH_MAX];
	uint64_t room = OOMKIT_UNLIMITED;
	struct oomkit_cgroup_memory m;

	if (strlen(rel) >= sizeof(path))
		return -ENAMETOOLONG;
	strcpy(path, rel);
	for (char *slash = strrchr(path, '/'); slash; slash = strrchr(path, '/')) {
		*slash = '\0';
		int r = oomkit_cgroup_memory(ctx, path, &m);
		if (r < 0)
			return r;
		room = min_u64(room, room_of(m.limit_bytes, m.usage_bytes));
	}
	*ret_room = room;
	return 0;
}

static int machine_room(oomkit_ctx *ctx, uint64_t keep_bytes, uint64_t *ret_room)
{
	struct oomkit_system_memory sys;
	int r = oomkit_system_memory(ctx, &sys);

	if (r < 0)
		return r;
	*ret_room =
	    sys.available_bytes > keep_bytes ? (sys.available_bytes - keep_bytes) / LOAN_SHARE_DIV : 0;
	return 0;
}

OOMKIT__EXPORT int oomkit_lend(oomkit_ctx *ctx, const char *cgroup, uint64_t want_bytes, uint64_t keep_bytes,
			       struct oomkit_loan *ret_loan)
{
	char rel[OOMKIT__PATH_MAX];
	struct oomkit_cgroup_memory m;
	uint64_t up, machine;
	int r;

	if (!ctx || !cgroup || !ret_loan || want_bytes == 0)
		return -EINVAL;
	if ((r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel))) < 0)
		return r;
	if (!rel[0])
		return -EINVAL; /* the root has no limit to raise */
	if ((r = oomkit_cgroup_memory(ctx, rel, &m)) < 0)
		return r;
	if (m.limit_bytes == OOMKIT_UNLIMITED)
		return -EINVAL;
	if ((r = ancestors_room(ctx, rel, &up)) < 0 || (r = machine_room(ctx, keep_bytes, &machine)) < 0)
		return r;
	uint64_t lend = min_u64(want_bytes, min_u64(up, machine));
	/* Whole pages: the kernel rounds limits down to them anyway. */
	lend &= ~(uint64_t)4095;
	if (lend == 0 || m.limit_bytes > OOMKIT_UNLIMITED - lend)
		return -ENOSPC;
	if ((r = oomkit_set_limit(ctx, rel, m.limit_bytes + lend)) < 0)
		return r;
	*ret_loan = (struct oomkit_loan){.limit_bytes = m.limit_bytes,
					 .lent_bytes = lend,
					 .clear_bytes = oomkit__clear_level(ctx, m.limit_bytes)};
	/* Sizes in a log line as the daemon writes them: KiB below 10 MiB, else MiB. */
	oomkit__log(ctx, OOMKIT_LOG_DEBUG, "%s: lent %llu %s above its limit", rel,
		    (unsigned long long)(lend >= (10ull << 20) ? lend >> 20 : lend >> 10),
		    lend >= (10ull << 20) ? "MiB" : "KiB");
	return 0;
}

OOMKIT__EXPORT int oomkit_repay(oomkit_ctx *ctx, const char *cgroup, const struct oomkit_loan *loan)
{
	char rel[OOMKIT__PATH_MAX];
	struct oomkit_cgroup_memory m;
	int r;

	if (!ctx || !cgroup || !loan || loan->lent_bytes == 0)
		return -EINVAL;
	if ((r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel))) < 0)
		return r;
	if ((r = oomkit_cgroup_memory(ctx, rel, &m)) < 0)
		return r;
	/* Raised or lowered by someone else meanwhile (a grow, a reload): not
	 * ours to undo.  The kernel keeps limits in whole pages. */
	if (m.limit_bytes != ((loan->limit_bytes + loan->lent_bytes) & ~(uint64_t)4095))
		return -ESTALE;
	/* Never below usage: v1 would reclaim and fail, v2 would OOM-kill. */
	if (m.usage_bytes >= loan->limit_bytes)
		return -EBUSY;
	r = oomkit_set_limit(ctx, rel, loan->limit_bytes);
	/* Usage rose past it between the read and the write (v1 refuses then). */
	return r == -EBUSY || r == -EINVAL ? -EBUSY : r;
}
