/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowmem-rule.c - see lowmem-rule.h. */
#include "rules/lowmem-rule.h"
#include "base/clock.h"

uint64_t lowmem_min_room(const struct config_share *share, uint64_t ram_bytes, uint64_t swap_bytes)
{
	uint64_t total, v;

	if (!share->percent)
		return share->bytes;
	total = ram_bytes + swap_bytes < ram_bytes ? UINT64_MAX : ram_bytes + swap_bytes;
	v = total / 100 * share->percent + total % 100 * share->percent / 100;
	if (v < LOWMEM_ROOM_FLOOR)
		return LOWMEM_ROOM_FLOOR;
	return v > LOWMEM_ROOM_CAP ? LOWMEM_ROOM_CAP : v;
}

void lowmem_full_reset(struct lowmem_full *f)
{
	f->next = 0;
	f->n = 0;
}

static unsigned slot(const struct lowmem_full *f, unsigned back)
{
	return (f->next + LOWMEM_FULL_SAMPLES - 1 - back) % LOWMEM_FULL_SAMPLES;
}

int64_t lowmem_full_share(struct lowmem_full *f, uint64_t now_ns, uint64_t full_us, uint64_t span_ns)
{
	uint64_t step_ns = span_ns / LOWMEM_FULL_PER_SPAN;

	/* A clock or a counter that went back: start again. */
	if (f->n && (now_ns < f->s[slot(f, 0)].at_ns || full_us < f->s[slot(f, 0)].full_us))
		lowmem_full_reset(f);
	if (!f->n || now_ns - f->s[slot(f, 0)].at_ns >= step_ns) {
		f->s[f->next].at_ns = now_ns;
		f->s[f->next].full_us = full_us;
		f->next = (f->next + 1) % LOWMEM_FULL_SAMPLES;
		if (f->n < LOWMEM_FULL_SAMPLES)
			f->n++;
	}
	for (unsigned back = 0; back < f->n; back++) {
		unsigned i = slot(f, back);
		uint64_t dt_ns = now_ns - f->s[i].at_ns;
		if (dt_ns < span_ns || dt_ns == 0)
			continue;
		/* At most 100 %: the kernel's total grows by at most the time
		 * passed; the division keeps a stray sample sane. */
		unsigned __int128 x = (unsigned __int128)(full_us - f->s[i].full_us) * 1000u * 10000u / dt_ns;
		return x > 10000 ? 10000 : (int64_t)x;
	}
	return -1;
}

uint64_t lowmem_room(const struct lowmem_input *in)
{
	uint64_t r = in->available_bytes + in->swap_usable_bytes;
	return r < in->available_bytes ? UINT64_MAX : r;
}

struct lowmem_look lowmem_decide(const struct lowmem_input *in)
{
	struct lowmem_look l = {.out = LOWMEM_NOT_OUT};
	/* The longer window: a trigger of either kind fires again within it. */
	uint64_t window_ns = (uint64_t)LOWMEM_WINDOW_US * 1000u;

	if (lowmem_room(in) < in->min_room_bytes)
		l.out = LOWMEM_NO_ROOM;
	else if (in->full_limit_percent && in->full_share_x100 >= 0 &&
		 (uint64_t)in->full_share_x100 >= (uint64_t)in->full_limit_percent * 100u)
		l.out = LOWMEM_THRASHING;
	/* Still stalling (a stall within the last window): look again soon. */
	if (in->now_ns < in->stalled_ns + window_ns)
		l.next_ns = in->now_ns + (uint64_t)LOWMEM_RECHECK_MS * NS_PER_MS;
	return l;
}
