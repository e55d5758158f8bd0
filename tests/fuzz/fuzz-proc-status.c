/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes /proc/PID/status parsing, and its SigCgt line. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oomkit__proc_status st, before;
	uint64_t caught = 0xa5;
	int r;

	r = oomkit__parse_proc_sigcgt((const char *)data, size, &caught);
	FUZZ_CHECK(r == 0 || (r == -EINVAL && caught == 0xa5));

	memset(&st, 0xa5, sizeof(st));
	before = st;
	r = oomkit__parse_proc_status((const char *)data, size, &st);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&st, &before, sizeof(st)) == 0);
		return 0;
	}
	FUZZ_CHECK(st.uid != (uid_t)-1);
	if (!st.has_rss)
		FUZZ_CHECK(st.rss_anon_kib == 0);
	return 0;
}
