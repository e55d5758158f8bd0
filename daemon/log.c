/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c - see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define LINE_MAX_BYTES 1024

void log_at(enum log_level level, const char *fmt, ...)
{
	char buf[LINE_MAX_BYTES];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "<%d>", (int)level);

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, (size_t)n);
}

void log_lines(enum log_level level, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		log_at(level, "%.*s", n, p);
		p += n + (nl ? 1 : 0);
	}
}

void log_liboomkit(enum oomkit_log_level level, const char *msg, void *userdata)
{
	(void)userdata;
	log_at((enum log_level)level, "liboomkit: %s", msg);
}
