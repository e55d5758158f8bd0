/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes cgroup path normalisation.  Byte 0 is the output size; the rest is
 * "in" and "root" separated by a NUL.
 */
#include "fuzz.h"

/* A normalised path: no leading, trailing or doubled '/', no "." or "..". */
static void check_normal(const char *p)
{
	const char *c = p;

	if (!*p)
		return;
	FUZZ_CHECK(p[0] != '/' && p[strlen(p) - 1] != '/' && !strstr(p, "//"));
	while (c) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		FUZZ_CHECK(!(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.'));
		c = slash ? slash + 1 : NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[1024], root[1024], out[256 + 32], again[256 + 32];
	const uint8_t *sep;
	size_t out_len, in_len, root_len;
	int r;

	if (size < 1)
		return 0;
	out_len = data[0];
	data++;
	size--;
	sep = memchr(data, '\0', size);
	in_len = sep ? (size_t)(sep - data) : size;
	root_len = sep ? size - in_len - 1 : 0;
	if (in_len >= sizeof(in) || root_len >= sizeof(root))
		return 0;
	memcpy(in, data, in_len);
	in[in_len] = '\0';
	if (sep)
		memcpy(root, sep + 1, root_len);
	root[root_len] = '\0';

	memset(out, 0xa5, sizeof(out));
	r = oomkit__cgroup_relpath(in, sep ? root : NULL, out, out_len);
	FUZZ_CHECK(r >= 0 || r == -EINVAL || r == -ENAMETOOLONG);
	if (r < 0) {
		FUZZ_CHECK(fuzz_all(out, 0xa5, sizeof(out)));
		return 0;
	}
	FUZZ_CHECK((size_t)r < out_len && strlen(out) == (size_t)r);
	FUZZ_CHECK(fuzz_all(out + out_len, 0xa5, sizeof(out) - out_len));
	check_normal(out);
	/* Normalising is idempotent. */
	FUZZ_CHECK(oomkit__cgroup_relpath(out, sep ? root : NULL, again, sizeof(again)) == r);
	FUZZ_CHECK(strcmp(again, out) == 0);
	return 0;
}
