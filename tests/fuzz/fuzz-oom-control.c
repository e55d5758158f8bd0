/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes memory.oom_control parsing and checks it against the keyed lookup. */
#include "fuzz.h"

static void check_key(const char *buf, size_t len, const char *key, uint64_t got, int absent_ok)
{
	uint64_t v;
	int r = oomkit__parse_keyed_u64(buf, len, key, &v);

	if (absent_ok && r == -ENOENT)
		FUZZ_CHECK(got == 0);
	else
		FUZZ_CHECK(r == 0 && v == got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct oomkit__oom_control c, before;
	int r;

	memset(&c, 0xa5, sizeof(c));
	before = c;
	r = oomkit__parse_oom_control(buf, size, &c);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&c, &before, sizeof(c)) == 0);
		return 0;
	}
	/* A success means every line parsed, so the keyed lookup of each key
	 * (first occurrence) must agree. */
	check_key(buf, size, "oom_kill_disable", c.oom_kill_disable, 0);
	check_key(buf, size, "under_oom", c.under_oom, 0);
	check_key(buf, size, "oom_kill", c.oom_kill, 1);
	return 0;
}
