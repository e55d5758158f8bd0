/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz.h - shared by the libFuzzer targets: the entry point and a check that
 * aborts (so the fuzzer records the input) whatever NDEBUG says.
 */
#ifndef OOMKIT_FUZZ_H
#define OOMKIT_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);         \
			abort();                                                                             \
		}                                                                                            \
	} while (0)

/* Whether a char array holds a NUL within its bounds. */
#define FUZZ_TERMINATED(arr) (memchr((arr), '\0', sizeof(arr)) != NULL)

/* Whether bytes [p, p + n) all equal c: guard zones that must stay untouched. */
static inline int fuzz_all(const void *p, int c, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)c)
			return 0;
	return 1;
}

#endif
