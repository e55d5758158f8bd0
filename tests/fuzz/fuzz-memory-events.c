/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes cgroup v2 memory.events parsing and checks it against the keyed lookup. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct oomkit__memory_events ev, before;
	int r;

	memset(&ev, 0xa5, sizeof(ev));
	before = ev;
	r = oomkit__parse_memory_events(buf, size, &ev);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&ev, &before, sizeof(ev)) == 0);
		return 0;
	}
	const struct {
		const char *key;
		uint64_t value;
	} keys[] = {
	    {"low", ev.low}, {"high", ev.high},		{"max", ev.max},
	    {"oom", ev.oom}, {"oom_kill", ev.oom_kill}, {"oom_group_kill", ev.oom_group_kill},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t v;
		int k = oomkit__parse_keyed_u64(buf, size, keys[i].key, &v);
		/* Missing keys stay 0; present ones are the first occurrence. */
		FUZZ_CHECK(k == 0 || k == -ENOENT);
		FUZZ_CHECK(keys[i].value == (k == 0 ? v : 0));
	}
	return 0;
}
