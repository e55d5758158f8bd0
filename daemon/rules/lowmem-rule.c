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

/* The newest sample taken at or before t_ns; -1 if none is that old. */
static int sample_before(const struct lowmem_full *f, uint64_t t_ns)
{
	for (unsigned back = 0; back < f->n; back++) {
		unsigned i = slot(f, back);
		if (f->s[i].at_ns <= t_ns)
			return (int)i;
	}
	return -1;
}

/* The oldest sample taken at or after t_ns; -1 if none is. */
static int sample_after(const struct lowmem_full *f, uint64_t t_ns)
{
	int found = -1;
	for (unsigned back = 0; back < f->n; back++) {
		unsigned i = slot(f, back);
		if (f->s[i].at_ns < t_ns)
			break;
		found = (int)i;
	}
	return found;
}

/* The share of the time from at0_ns to at1_ns, in percent times 100, that
 * the full total grew. */
static int64_t share_between(uint64_t full0_us, uint64_t at0_ns, uint64_t full1_us, uint64_t at1_ns)
{
	if (at1_ns <= at0_ns || full1_us < full0_us)
		return 0;
	/* At most 100 %: the kernel's total grows by at most the time passed;
	 * the division keeps a stray sample sane. */
	unsigned __int128 x = (unsigned __int128)(full1_us - full0_us) * 1000u * 10000u / (at1_ns - at0_ns);
	return x > 10000 ? 10000 : (int64_t)x;
}

int64_t lowmem_full_share(struct lowmem_full *f, uint64_t now_ns, uint64_t full_us, uint64_t span_ns)
{
	uint64_t step_ns = span_ns / LOWMEM_FULL_PER_SPAN, piece_ns = span_ns / LOWMEM_FULL_PIECES;
	int64_t least = 10000;

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
	if (!span_ns || now_ns < span_ns || sample_before(f, now_ns - span_ns) < 0)
		return -1;
	/* Each piece from the newest sample at or before its start to the
	 * oldest at or after its end (now's for the newest piece): where the
	 * daemon did not look for a while (no stall, or a daemon stalled
	 * itself), the stall over the gap stands for the piece.  The least of
	 * the pieces is the share the stall held all through the span. */
	for (unsigned k = 1; k <= LOWMEM_FULL_PIECES; k++) {
		int b = sample_before(f, now_ns - k * piece_ns);
		int e = k == 1 ? -1 : sample_after(f, now_ns - (k - 1) * piece_ns);
		uint64_t end_ns = e < 0 ? now_ns : f->s[e].at_ns, end_us = e < 0 ? full_us : f->s[e].full_us;
		int64_t s = b < 0 ? 0 : share_between(f->s[b].full_us, f->s[b].at_ns, end_us, end_ns);
		if (s < least)
			least = s;
	}
	return least;
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
