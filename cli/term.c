/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* term.c - see term.h. */
#include "term.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

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

size_t term_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	size_t w = 80;
	char *end;

	if (env && *env >= '0' && *env <= '9') {
		unsigned long v = strtoul(env, &end, 10);
		if (*end == '\0' && v > 0 && v <= 4096)
			w = v;
	} else if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		w = ws.ws_col;
	}
	return w < TERM_WIDTH_MIN ? TERM_WIDTH_MIN : w;
}

size_t term_rest(size_t width, size_t used, size_t min)
{
	return width > used + min ? width - used : min;
}

/* Columns of the first n bytes of a string term_text() wrote: one per
 * escape byte or character. */
static size_t columns(const char *s, size_t n)
{
	size_t cols = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

const char *term_words(const char *s, size_t width, char *buf, size_t cap)
{
	char whole[2048];

	term_text(s, 0, whole, sizeof(whole));
	if (width == 0 || columns(whole, sizeof(whole)) <= width || width < 4 || cap < 4)
		return term_text(s, width, buf, cap);
	/* Room for the "...": cut at a whole escape or character (a prefix of
	 * whole), then, unless a word ends there, back to the end of the last
	 * whole word if the words before it fill half the column. */
	term_text(s, width - 3, buf, cap - 3);
	size_t n = strlen(buf);
	if (!strchr(" ,;:", whole[n])) {
		size_t start = n;
		while (start > 0 && buf[start - 1] != ' ')
			start--;
		if (start > 0 && columns(buf, start - 1) >= (width - 3) / 2)
			n = start - 1;
	}
	while (n > 0 && strchr(" ,;:.", buf[n - 1]))
		n--;
	memcpy(buf + n, "...", 4);
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
