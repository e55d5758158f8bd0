/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the keyed lookup (memory.stat) and the single-value parser.  The
 * input's first line is the key, the rest the file; the whole input is also
 * parsed as a single value.
 */
#include "fuzz.h"

#include <inttypes.h>

/* A parsed single value printed back must be the input's digits. */
static void check_u64(const char *buf, size_t len)
{
	uint64_t v;
	char text[32];
	size_t n = len, start = 0;
	int r = oomkit__parse_u64(buf, len, &v);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r != 0)
		return;
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\n'))
		n--;
	if (n == 3 && memcmp(buf, "max", 3) == 0) {
		FUZZ_CHECK(v == OOMKIT_UNLIMITED);
		return;
	}
	while (start + 1 < n && buf[start] == '0')
		start++;
	snprintf(text, sizeof(text), "%" PRIu64, v);
	FUZZ_CHECK(strlen(text) == n - start && memcmp(text, buf + start, n - start) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *nl;
	char key[65];
	size_t klen;
	uint64_t v = 0xa5a5a5a5a5a5a5a5ull;
	int r;

	check_u64(buf, size);

	nl = memchr(buf, '\n', size);
	if (!nl)
		return 0;
	klen = (size_t)(nl - buf);
	if (klen >= sizeof(key))
		return 0;
	memcpy(key, buf, klen);
	key[klen] = '\0';
	buf = nl + 1;
	size -= klen + 1;

	r = oomkit__parse_keyed_u64(buf, size, key, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE || r == -ENOENT);
	if (r != 0) {
		FUZZ_CHECK(v == 0xa5a5a5a5a5a5a5a5ull);
		return 0;
	}
	/* Found: the key (as a C string) is at the start of a line, followed by a blank. */
	klen = strlen(key);
	FUZZ_CHECK(klen > 0);
	int found = 0;
	for (size_t i = 0; i + klen < size && !found; i++)
		if ((i == 0 || buf[i - 1] == '\n') && memcmp(buf + i, key, klen) == 0 &&
		    (buf[i + klen] == ' ' || buf[i + klen] == '\t'))
			found = 1;
	FUZZ_CHECK(found);
	return 0;
}
