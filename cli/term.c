/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* term.c - see term.h. */
#include "term.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h" /* lib/json.h: the text escaper */

const char *term_text(const char *s, size_t width, char *buf, size_t cap)
{
	char esc[2048];
	size_t o = 0, cols = 0;

	oomkit__escape_str(esc, sizeof(esc), s ? s : "");
	for (const char *p = esc; *p && (width == 0 || cols < width);) {
		size_t k = *p == '\\' ? (p[1] == 'x' ? 4 : 2)
			   : (unsigned char)*p >= 0x80
			       ? oomkit__utf8_len((const unsigned char *)p, strnlen(p, 4))
			       : 1;
		size_t w = *p == '\\' ? k : 1;
		if (k == 0)
			k = w = 1;
		if ((width && cols + w > width) || o + k + 1 > cap)
			break;
		memcpy(buf + o, p, k);
		o += k;
		p += k;
		cols += w;
	}
	buf[o] = '\0';
	return buf;
}

const char *term_column(const char *s, size_t width, char *buf, size_t cap)
{
	term_text(s, width, buf, cap);
	size_t cols = 0, n = strlen(buf);
	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)buf[i] & 0xc0) != 0x80;
	while (cols < width && n + 1 < cap) {
		buf[n++] = ' ';
		cols++;
	}
	buf[n] = '\0';
	return buf;
}

const char *term_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	double x = (double)v;
	int u = -1;

	if (v == UINT64_MAX) {
		snprintf(buf, len, "max");
		return buf;
	}
	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 "B", v);
		return buf;
	}
	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	snprintf(buf, len, x < 10 ? "%.1f%c" : "%.0f%c", x, units[u]);
	return buf;
}

void term_bar(uint64_t usage, uint64_t limit, char *buf, size_t width)
{
	size_t fill = 0;

	if (limit && limit != UINT64_MAX)
		fill = (size_t)((double)usage / (double)limit * (double)width + 0.5);
	if (fill > width)
		fill = width;
	buf[0] = '[';
	for (size_t i = 0; i < width; i++)
		buf[1 + i] = i < fill ? '#' : limit == UINT64_MAX ? ' ' : '-';
	buf[width + 1] = ']';
	buf[width + 2] = '\0';
}

void term_time(int64_t epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}
