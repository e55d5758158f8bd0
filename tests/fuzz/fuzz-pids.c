/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes cgroup.procs parsing.  Byte 0 is the room n; the rest is the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pid_t pids[256 + 16];
	size_t n;
	int r;

	if (size < 1)
		return 0;
	n = data[0];
	memset(pids, 0xa5, sizeof(pids));
	r = oomkit__parse_pids((const char *)data + 1, size - 1, pids, n);
	FUZZ_CHECK(r >= 0 || r == -EINVAL || r == -ENOBUFS);
	/* Never a write past n. */
	FUZZ_CHECK(fuzz_all(pids + n, 0xa5, sizeof(pids) - n * sizeof(pids[0])));
	if (r < 0)
		return 0;
	FUZZ_CHECK((size_t)r <= n);
	for (int i = 0; i < r; i++)
		FUZZ_CHECK(pids[i] > 0);
	return 0;
}
