/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the reports index's readers of a report file (daemon/report/reports.c):
 * its head (time, decision, the uids it concerns) and its tail (the last
 * "concerns" list), on arbitrary bytes.  Whatever they read, every string
 * of the entry stays terminated, the uids stay within their bound, root is
 * never among them and none is there twice: the control socket decides who
 * may read a report from them.
 */
#include "fuzz.h"

#include "report/reports.h"

static void check_readers(const struct report_readers *r)
{
	FUZZ_CHECK(r->n <= REPORTS_READERS_MAX);
	for (unsigned i = 0; i < r->n; i++) {
		FUZZ_CHECK(r->uid[i] != 0 && r->uid[i] != (uid_t)-1);
		for (unsigned k = 0; k < i; k++)
			FUZZ_CHECK(r->uid[k] != r->uid[i]);
		FUZZ_CHECK(reports_readers_has(r, r->uid[i]));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_entry e;

	memset(&e, 0, sizeof(e));
	snprintf(e.action, sizeof(e.action), "?");
	reports_scan_head((const char *)data, size, &e);
	FUZZ_CHECK(FUZZ_TERMINATED(e.action) && FUZZ_TERMINATED(e.reason));
	check_readers(&e.readers);
	unsigned from_head = e.readers.n;
	reports_scan_tail((const char *)data, size, &e);
	check_readers(&e.readers);
	/* The tail only adds. */
	FUZZ_CHECK(e.readers.n >= from_head);
	return 0;
}
