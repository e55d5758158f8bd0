/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c - see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "base/log.h"

#define LOG_LINE_MAX 1024

void log_at(enum log_level level, const char *fmt, ...)
{
	char buf[LOG_LINE_MAX];
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
	char shown[LOG_LINE_MAX];

	/* The library's messages may name cgroups and processes. */
	log_at((enum log_level)level, "liboomkit: %s", log_escape(shown, sizeof(shown), msg));
}

const char *log_escape(char *buf, size_t len, const char *s)
{
	return oomkit__escape_str(buf, len, s);
}
