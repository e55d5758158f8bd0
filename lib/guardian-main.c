/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guardian-main.c - oomkit-guardian, the program a liboomkit handler execs as
 * its guardian (guardian-loop.c says what it does).  Not for people to run:
 *
 *   oomkit-guardian --parent PID --backend 1|2 --flags N
 *
 * with its end of the handler's socket pair as fd 3.  It is small on
 * purpose (its own table, no stdio; linked statically where it can be, with
 * musl where it is installed), as it stays resident, and locked, beside
 * every handler.  It locks only the pages it has run (guardian-loop.c):
 * the kernel maps 64 KiB around each page fault of a file mapping whatever
 * madvise() says (MADV_RANDOM only stops read-ahead; measured on 6.18), so
 * a small program is what keeps that set small.
 */
#include "internal.h"

#include <string.h>
#include <unistd.h>

static long number(const char *s)
{
	uint64_t v;
	return oomkit__parse_u64(s, strlen(s), &v) == 0 && v < INT32_MAX ? (long)v : -1;
}

int main(int argc, char **argv)
{
	long parent = -1, backend = -1, flags = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--parent") == 0)
			parent = number(argv[i + 1]);
		else if (strcmp(argv[i], "--backend") == 0)
			backend = number(argv[i + 1]);
		else if (strcmp(argv[i], "--flags") == 0)
			flags = number(argv[i + 1]);
	}
	if (parent <= 0 || (backend != OOMKIT_BACKEND_V1 && backend != OOMKIT_BACKEND_V2) || flags < 0) {
		static const char usage[] = "oomkit-guardian: started by liboomkit only\n";
		(void)!write(2, usage, sizeof(usage) - 1);
		return 2;
	}
	oomkit__guardian_run(3, (pid_t)parent, (enum oomkit_backend)backend,
			     (unsigned)flags | OOMKIT__GUARDIAN_EXECED);
}
