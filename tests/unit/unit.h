/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unit.h - what every unit test includes: cmocka in the order it needs, the
 * library internals, and a way to write buffers that hold NUL bytes.
 */
#ifndef OOMKIT_UNIT_H
#define OOMKIT_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

/* A string literal and its length, NUL bytes inside included. */
#define BUF(s) (s), (sizeof(s) - 1)

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* Table checks that name the row that failed. */
#define EXPECT_INT(row, got, want)                                                                           \
	do {                                                                                                 \
		long long got_ = (long long)(got), want_ = (long long)(want);                                \
		if (got_ != want_)                                                                           \
			fail_msg("%s: %s is %lld, want %lld", (row), #got, got_, want_);                     \
	} while (0)

#define EXPECT_U64(row, got, want)                                                                           \
	do {                                                                                                 \
		unsigned long long got_ = (got), want_ = (want);                                             \
		if (got_ != want_)                                                                           \
			fail_msg("%s: %s is %llu, want %llu", (row), #got, got_, want_);                     \
	} while (0)

#define EXPECT_STR(row, got, want)                                                                           \
	do {                                                                                                 \
		const char *got_ = (got), *want_ = (want);                                                   \
		if (strcmp(got_, want_) != 0)                                                                \
			fail_msg("%s: %s is \"%s\", want \"%s\"", (row), #got, got_, want_);                 \
	} while (0)

#endif
