/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reserve.c - the user-space counterpart of memory.oom_reserve_in_bytes.
 *
 * The kernel half of the reference design was never merged, so the same
 * guarantee is built here: the handler lives in a memcg of its own whose limit
 * leaves headroom above what it uses (oomkit_enter_reserve), never in a memcg
 * it handles; every page it will touch on the handler path is faulted in
 * before mlockall(), so handling an OOM needs no new memory at all.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Stack the handler path may use below the frame that locks: a cgroup walk
 * keeps about 16 KiB whatever the depth (walk.c), a kill or report calls one
 * from its frames, and the user's handler frames come on top.  Measured by
 * painting this region and reading its high-water mark at exit (December
 * 2026, x86-64, glibc 2.36): the deepest oomkitd went, over everything it
 * did in the daemon-policies, -hooks, -machine, -shed and -prompt-rules tests
 * (their OOMs, kills, grows, sheds, hooks and reports, and the paths off the
 * OOM's: start, reload, control), was 34 KiB; test-nomalloc's handler 23 KiB.
 * 96 KiB is near three times that: the 160 KiB above it were locked for
 * nothing. */
#define STACK_PREFAULT (96 * 1024)

static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char stack[STACK_PREFAULT];
	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 0;
	stack[sizeof(stack) - 1] = 0;
}

/* Runs each reader once so lazily bound symbols and any first-use state in
 * libc are resolved before the lock; their results do not matter. */
static void warm_paths(oomkit_ctx *ctx)
{
	struct oomkit_process p;
	struct oomkit_cgroup_memory m;
	uint64_t v;
	(void)oomkit_process_info(ctx, getpid(), &p);
	(void)oomkit_cgroup_memory(ctx, "", &m);
	(void)oomkit_cgroup_stat(ctx, "", "cache", &v);
	(void)oomkit_cgroup_pids(ctx, ctx->self_cgroup, false, ctx->pidbuf, ctx->max_pids);
	(void)oomkit__now_ns();
}

int oomkit__reserve_lock(oomkit_ctx *ctx)
{
	memset(ctx->iobuf, 0, OOMKIT__IOBUF_SIZE);
	memset(ctx->iobuf2, 0, OOMKIT__IOBUF_SIZE);
	memset(ctx->reportbuf, 0, OOMKIT__REPORT_BUF_SIZE);
	memset(ctx->pidbuf, 0, ctx->max_pids * sizeof(pid_t));
	prefault_stack();
	warm_paths(ctx);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		return -errno;
	return 0;
}

/* Whether rel is a watched cgroup or lies below one. */
static bool inside_watched(const oomkit_ctx *ctx, const char *rel)
{
	for (unsigned i = 0; i < ctx->max_cgroups; i++) {
		const struct oomkit_watch *w = &ctx->watches[i];
		size_t n = w->kind ? strlen(w->cgroup) : 0;
		/* The root never has a memcg OOM of its own, so living below it is fine. */
		if (n == 0)
			continue;
		if (strncmp(rel, w->cgroup, n) == 0 && (rel[n] == 0 || rel[n] == '/'))
			return true;
	}
	return false;
}

OOMKIT__EXPORT int oomkit_enter_reserve(oomkit_ctx *ctx, const char *cgroup, uint64_t reserve_bytes)
{
	char rel[OOMKIT__PATH_MAX];
	struct oomkit_cgroup_memory m;
	int r = oomkit__cgroup_relpath(cgroup ? cgroup : "", ctx->memory_root, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0] || reserve_bytes == 0)
		return -EINVAL;
	if (inside_watched(ctx, rel))
		return -ELOOP;
	if ((r = oomkit_cgroup_create(ctx, rel, 0)) < 0 || (r = oomkit_cgroup_attach(ctx, rel, getpid())) < 0)
		return r;
	if (ctx->guardian_pid > 0 && (r = oomkit_cgroup_attach(ctx, rel, ctx->guardian_pid)) < 0)
		return r;
	/* Pages already charged stay with the old memcg (v1 does not move
	 * charges by default), so the usage here is what we allocate from now
	 * on; the reserve is the headroom above it. */
	if ((r = oomkit_cgroup_memory(ctx, rel, &m)) < 0 ||
	    (r = oomkit_set_limit(ctx, rel, m.usage_bytes + reserve_bytes)) < 0)
		return r;
	memcpy(ctx->self_cgroup, rel, sizeof(rel));
	ctx->self_cgroup_known = true;
	return 0;
}
