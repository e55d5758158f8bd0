/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * guardian-main.c - oomkit-guardian, the program a liboomkit handler execs as
 * its guardian (guardian-loop.c says what it does).  Not for people to run:
 *
 *   oomkit-guardian --parent PID --backend 1|2 --flags N
 *
 * with its end of the handler's socket pair as fd 3.  It is small on
 * purpose (its own table, no stdio; linked statically where it can be), as
 * it stays resident, and locked, beside every handler.
 */
#include "internal.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long number(const char *s)
{
	uint64_t v;
	return oomkit__parse_u64(s, strlen(s), &v) == 0 && v < INT32_MAX ? (long)v : -1;
}

/* The program's code, from the linker. */
extern const char __executable_start[], etext[];

/* Maps code pages only as they run: the kernel otherwise maps (and with
 * mlockall keeps) the pages around each fault too, most of them C library
 * code the guardian never runs. */
static void no_fault_around(void)
{
	uintptr_t start = (uintptr_t)__executable_start & ~(uintptr_t)4095;
	(void)madvise((void *)start, (size_t)((uintptr_t)etext - start), MADV_RANDOM);
}

int main(int argc, char **argv)
{
	long parent = -1, backend = -1, flags = 0;

	no_fault_around();

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
