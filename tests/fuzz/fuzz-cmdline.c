/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes /proc/PID/cmdline formatting.  Byte 0 is the output size. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[256 + 32];
	size_t out_len, n;

	if (size < 1)
		return 0;
	out_len = data[0];
	memset(out, 0xa5, sizeof(out));
	oomkit__format_cmdline((const char *)data + 1, size - 1, out, out_len);
	FUZZ_CHECK(fuzz_all(out + out_len, 0xa5, sizeof(out) - out_len));
	if (out_len == 0)
		return 0;
	n = strnlen(out, out_len);
	FUZZ_CHECK(n < out_len && n <= size - 1);
	/* Printable ASCII only: safe for a terminal, a log line and JSON. */
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(out[i] >= 0x20 && out[i] < 0x7f);
	return 0;
}
