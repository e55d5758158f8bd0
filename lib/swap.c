/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * swap.c - /proc/swaps and /sys/block/zramN/mm_stat: the swap the machine
 * can still use.  A swap file or partition frees a page of RAM for each
 * page it takes; zram takes RAM itself, the compressed size of each page,
 * so it frees less, and nothing once RAM holds only compressed pages.
 * Nothing here allocates: /proc/swaps is read into the context's second
 * buffer, mm_stat onto the stack.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Adds one zram area: its statistics where sysfs has them. */
static void add_zram(oomkit_ctx *ctx, const struct oomkit__swap_area *a, struct oomkit_system_swap *s)
{
	struct oomkit__zram_mm_stat st;
	bool known = false;
	char name[48], buf[256];
	uint64_t free_bytes = a->size_bytes - a->used_bytes;

	snprintf(name, sizeof(name), "block/zram%d/mm_stat", a->zram);
	if (ctx->sys_fd >= 0) {
		int n = oomkit__read_file_at(ctx->sys_fd, name, buf, sizeof(buf));
		known = n >= 0 && oomkit__parse_zram_mm_stat(buf, (size_t)n, &st) == 0;
	}
	s->zram_areas++;
	s->zram_total_bytes += a->size_bytes;
	s->zram_free_bytes += free_bytes;
	if (known) {
		s->zram_stored_bytes += st.orig_bytes;
		s->zram_ram_bytes += st.used_bytes;
	}
	s->usable_bytes += oomkit__zram_usable(free_bytes, known ? &st : NULL);
}

OOMKIT__EXPORT int oomkit_system_swap(oomkit_ctx *ctx, struct oomkit_system_swap *ret_swap)
{
	struct oomkit__swap_area areas[OOMKIT_SWAP_AREAS_MAX];
	struct oomkit_system_swap s = {0};
	int n = oomkit__read_file_at(ctx->proc_fd, "swaps", ctx->iobuf2, OOMKIT__IOBUF_SIZE);

	if (n == -ENOENT) {
		*ret_swap = s;
		return 0;
	}
	if (n < 0)
		return n;
	n = oomkit__parse_swaps(ctx->iobuf2, (size_t)n, areas, OOMKIT_SWAP_AREAS_MAX);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const struct oomkit__swap_area *a = &areas[i];
		s.areas++;
		s.total_bytes += a->size_bytes;
		s.free_bytes += a->size_bytes - a->used_bytes;
		if (a->zram >= 0)
			add_zram(ctx, a, &s);
		else
			s.usable_bytes += a->size_bytes - a->used_bytes;
	}
	*ret_swap = s;
	return 0;
}
