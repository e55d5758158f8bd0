/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes /proc/swaps and zram mm_stat parsing.  Byte 0 picks the parser (and,
 * for /proc/swaps, how many areas fit); the rest is the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data + 1;
	int r;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		struct oomkit__zram_mm_stat st, before;
		memset(&st, 0xa5, sizeof(st));
		before = st;
		r = oomkit__parse_zram_mm_stat(buf, size - 1, &st);
		FUZZ_CHECK(r == 0 || r == -EINVAL);
		if (r < 0) {
			FUZZ_CHECK(memcmp(&st, &before, sizeof(st)) == 0);
			return 0;
		}
		/* What a device can free: never more than its free space. */
		FUZZ_CHECK(oomkit__zram_usable(st.orig_bytes, &st) <= st.orig_bytes);
		return 0;
	}
	struct oomkit__swap_area areas[8];
	size_t n = (size_t)(data[0] >> 1) % 9;
	r = oomkit__parse_swaps(buf, size - 1, areas, n);
	FUZZ_CHECK(r == -EINVAL || r == -ENOBUFS || (r >= 0 && (size_t)r <= n));
	for (int i = 0; r > 0 && i < r; i++)
		FUZZ_CHECK(areas[i].used_bytes <= areas[i].size_bytes && areas[i].zram >= -1);
	return 0;
}
