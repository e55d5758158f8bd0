/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.c - see cli.h. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "term.h"

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("oomkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_parse_number(const char *what, const char *s, unsigned long min, unsigned long max, unsigned *ret)
{
	char *end;

	errno = 0;
	unsigned long v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (!(s[0] >= '0' && s[0] <= '9') || *end || errno || v < min || v > max) {
		cli_err("%s must be a number from %lu to %lu, not '%s'", what, min, max, TTY(s, 40));
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}
