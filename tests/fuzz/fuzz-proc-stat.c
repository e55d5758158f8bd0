/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes /proc/PID/stat parsing, whose comm may hold anything but a NUL. */
#include "fuzz.h"

#include <limits.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct oomkit__proc_stat st, before;
	const char *open, *close;
	size_t comm_len;
	int r;

	memset(&st, 0xa5, sizeof(st));
	before = st;
	r = oomkit__parse_proc_stat(buf, size, &st);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ESRCH);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&st, &before, sizeof(st)) == 0);
		return 0;
	}
	FUZZ_CHECK(st.pid > 0);
	FUZZ_CHECK(st.ppid >= 0);
	FUZZ_CHECK((st.state >= 'A' && st.state <= 'Z') || (st.state >= 'a' && st.state <= 'z'));
	FUZZ_CHECK(FUZZ_TERMINATED(st.comm));
	/* comm is what lies between the first '(' and the last ')', cut to 15 bytes. */
	open = memchr(buf, '(', size);
	FUZZ_CHECK(open != NULL);
	close = memrchr(buf, ')', size);
	FUZZ_CHECK(close != NULL && close > open);
	comm_len = (size_t)(close - open - 1);
	if (comm_len > sizeof(st.comm) - 1)
		comm_len = sizeof(st.comm) - 1;
	FUZZ_CHECK(strnlen(st.comm, sizeof(st.comm)) == strnlen(open + 1, comm_len));
	FUZZ_CHECK(memcmp(st.comm, open + 1, strlen(st.comm)) == 0);
	return 0;
}
