/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes /proc/self/mounts parsing and its octal-escape decoding. */
#include "fuzz.h"

static void check_root(const char *root, size_t size)
{
	FUZZ_CHECK(memchr(root, '\0', size) != NULL);
	FUZZ_CHECK(root[0] == '\0' || root[0] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct oomkit__mounts m, before;
	int r;

	memset(&m, 0xa5, sizeof(m));
	before = m;
	r = oomkit__parse_mounts((const char *)data, size, &m);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&m, &before, sizeof(m)) == 0);
		return 0;
	}
	check_root(m.memory_root, sizeof(m.memory_root));
	check_root(m.cgroup2_root, sizeof(m.cgroup2_root));
	check_root(m.freezer_root, sizeof(m.freezer_root));
	FUZZ_CHECK(!m.cgroup2_has_memory);
	/* A decoded mount point is never longer than the encoded one. */
	FUZZ_CHECK(strlen(m.memory_root) <= size && strlen(m.cgroup2_root) <= size &&
		   strlen(m.freezer_root) <= size);
	return 0;
}
