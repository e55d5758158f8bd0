/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes PSI line parsing.  Byte 0 picks "some" or "full"; the rest is the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oomkit__psi_line psi, before;
	const char *kind;
	int r;

	if (size < 1)
		return 0;
	kind = data[0] & 1 ? "full" : "some";
	memset(&psi, 0xa5, sizeof(psi));
	before = psi;
	r = oomkit__parse_psi_line((const char *)data + 1, size - 1, kind, &psi);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOENT);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&psi, &before, sizeof(psi)) == 0);
		return 0;
	}
	/* The averages' text has at most two decimals: no value exceeds what
	 * fits in uint64 after scaling by 100. */
	FUZZ_CHECK(psi.avg10_x100 <= UINT64_MAX - 99 && psi.avg60_x100 <= UINT64_MAX - 99 &&
		   psi.avg300_x100 <= UINT64_MAX - 99);
	return 0;
}
