/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.c - see json.h.  Nothing here allocates: output goes through the
 * caller's buffer, numbers are formatted on the stack.
 */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char hex[] = "0123456789abcdef";

/* ------------------------------------------------------------ output */

void oomkit__json_init(struct oomkit__json *w, int fd, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	w->fd = fd;
	if (!buf || cap == 0)
		w->err = -EINVAL;
}

void oomkit__json_flush(struct oomkit__json *w)
{
	size_t off = 0;

	if (w->fd < 0)
		return;
	while (off < w->len && !w->err) {
		ssize_t k = write(w->fd, w->buf + off, w->len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			w->err = -errno;
		else if (k == 0)
			w->err = -EIO; /* no progress: never spin */
		else
			off += (size_t)k;
	}
	w->total += off;
	w->len = 0;
}

static void put(struct oomkit__json *w, const char *s, size_t n)
{
	while (n > 0 && !w->err) {
		if (w->len == w->cap) {
			if (w->fd < 0) {
				w->err = -EMSGSIZE;
				return;
			}
			oomkit__json_flush(w);
			continue;
		}
		size_t room = w->cap - w->len, k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

static void puts_(struct oomkit__json *w, const char *s)
{
	put(w, s, strlen(s));
}

/* ------------------------------------------------------------ strings */

size_t oomkit__utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Code points a terminal or a reader could be fooled by though they are
 * valid UTF-8: C1 controls, line and paragraph separators, direction
 * embeddings, overrides and isolates, and the byte order mark. */
static uint32_t code_point(const unsigned char *s, size_t len)
{
	uint32_t cp = len == 2 ? s[0] & 0x1fu : len == 3 ? s[0] & 0x0fu : s[0] & 0x07u;

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3fu);
	return cp;
}

static bool deceptive(const unsigned char *s, size_t len)
{
	uint32_t cp = code_point(s, len);

	if (len > 3)
		return false;
	return cp <= 0x9f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f || cp == 0xfeff;
}

/* The escape for byte c inside a JSON string, or NULL to copy it (ASCII). */
static const char *json_escape(unsigned char c, char tmp[7])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\t':
		return "\\t";
	case '\r':
		return "\\r";
	}
	if (c >= 0x20 && c < 0x7f)
		return NULL;
	memcpy(tmp, "\\u00", 4);
	tmp[4] = hex[c >> 4];
	tmp[5] = hex[c & 0xf];
	tmp[6] = '\0';
	return tmp;
}

static void string(struct oomkit__json *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + n;
	char tmp[7];

	put(w, "\"", 1);
	while (s < end) {
		const unsigned char *run = s;
		size_t k;
		while (s < end && *s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\')
			s++;
		put(w, (const char *)run, (size_t)(s - run));
		if (s == end)
			break;
		if (*s >= 0x80 && (k = oomkit__utf8_len(s, (size_t)(end - s))) > 0) {
			uint32_t cp = code_point(s, k);
			if (!deceptive(s, k)) {
				put(w, (const char *)s, k);
				s += k;
				continue;
			}
			/* Valid, but fooling a terminal or a reader: past U+00FF as
			 * \uXXXX, the same code point to any JSON reader; a C1 control
			 * a byte at a time as \u00XX, since \u0080 to \u00ff are the
			 * bytes of that value here (as for invalid UTF-8). */
			if (cp > 0xff) {
				/* Deceptive code points are all below U+10000. */
				char u[6] = {'\\',
					     'u',
					     hex[cp >> 12 & 0xf],
					     hex[cp >> 8 & 0xf],
					     hex[cp >> 4 & 0xf],
					     hex[cp & 0xf]};
				put(w, u, sizeof(u));
				s += k;
				continue;
			}
		}
		puts_(w, json_escape(*s, tmp));
		s++;
	}
	put(w, "\"", 1);
}

/* ------------------------------------------------------------ structure */

/* Starts an element: the comma before it and, inside an object, its key. */
static void element(struct oomkit__json *w, const char *key)
{
	uint32_t bit = 1u << w->depth;

	if (w->comma & bit)
		put(w, ",", 1);
	w->comma |= bit;
	if (key) {
		string(w, key, strlen(key));
		put(w, ":", 1);
	}
}

void oomkit__json_open(struct oomkit__json *w, const char *key, char bracket)
{
	element(w, key);
	put(w, &bracket, 1);
	if (w->depth + 1 >= OOMKIT__JSON_MAX_DEPTH) {
		if (!w->err)
			w->err = -E2BIG;
		return;
	}
	w->depth++;
	w->comma &= ~(1u << w->depth);
}

void oomkit__json_close(struct oomkit__json *w, char bracket)
{
	if (w->depth == 0) {
		if (!w->err)
			w->err = -EINVAL; /* closed more than was opened */
		return;
	}
	w->depth--;
	put(w, &bracket, 1);
}

void oomkit__json_strn(struct oomkit__json *w, const char *key, const char *value, size_t n)
{
	element(w, key);
	string(w, value, n);
}

void oomkit__json_str(struct oomkit__json *w, const char *key, const char *value)
{
	if (!value) {
		oomkit__json_null(w, key);
		return;
	}
	oomkit__json_strn(w, key, value, strlen(value));
}

void oomkit__json_u64(struct oomkit__json *w, const char *key, uint64_t value)
{
	char num[24];

	element(w, key);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	puts_(w, num);
}

void oomkit__json_i64(struct oomkit__json *w, const char *key, int64_t value)
{
	char num[24];

	element(w, key);
	snprintf(num, sizeof(num), "%lld", (long long)value);
	puts_(w, num);
}

void oomkit__json_bool(struct oomkit__json *w, const char *key, bool value)
{
	element(w, key);
	puts_(w, value ? "true" : "false");
}

void oomkit__json_null(struct oomkit__json *w, const char *key)
{
	element(w, key);
	puts_(w, "null");
}

void oomkit__json_limit(struct oomkit__json *w, const char *key, uint64_t value)
{
	if (value == UINT64_MAX)
		oomkit__json_null(w, key);
	else
		oomkit__json_u64(w, key, value);
}

void oomkit__json_fixed(struct oomkit__json *w, const char *key, uint64_t value, unsigned decimals)
{
	uint64_t scale = 1;
	char num[48];

	if (decimals > 18)
		decimals = 18;
	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	element(w, key);
	if (decimals == 0)
		snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	else
		snprintf(num, sizeof(num), "%llu.%0*llu", (unsigned long long)(value / scale), (int)decimals,
			 (unsigned long long)(value % scale));
	puts_(w, num);
}

void oomkit__json_external(struct oomkit__json *w, const char *key)
{
	element(w, key);
	oomkit__json_flush(w);
}

void oomkit__json_newline(struct oomkit__json *w)
{
	put(w, "\n", 1);
}

int oomkit__json_end(struct oomkit__json *w)
{
	oomkit__json_flush(w);
	if (w->err)
		return w->err;
	size_t n = w->fd < 0 ? w->len : w->total;
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* ------------------------------------------------------------ text */

size_t oomkit__text_keep(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	if (*s >= 0x20 && *s < 0x7f && *s != '\\')
		return 1;
	if (*s < 0x80)
		return 0;
	size_t len = oomkit__utf8_len(s, n);
	return len && !deceptive(s, len) ? len : 0;
}

size_t oomkit__escape_text(char *dst, size_t dst_len, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + n;
	size_t need = 0, out = 0;

	while (s < end) {
		char esc[4];
		const char *piece = esc;
		size_t k = oomkit__text_keep((const char *)s, (size_t)(end - s)), plen, used = k ? k : 1;
		if (k) {
			piece = (const char *)s;
			plen = k;
		} else if (*s == '\\') {
			memcpy(esc, "\\\\", 2);
			plen = 2;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*s >> 4];
			esc[3] = hex[*s & 0xf];
			plen = 4;
		}
		if (need == out && dst_len > 0 && out + plen < dst_len) {
			memcpy(dst + out, piece, plen);
			out += plen;
		}
		need += plen;
		s += used;
	}
	if (dst_len > 0)
		dst[out] = '\0';
	return need;
}

const char *oomkit__escape_str(char *dst, size_t dst_len, const char *s)
{
	oomkit__escape_text(dst, dst_len, s ? s : "", s ? strlen(s) : 0);
	return dst;
}

/* The entity for a byte the notification body's markup would read, or NULL. */
static const char *entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	}
	return NULL;
}

size_t oomkit__escape_markup(char *dst, size_t dst_len, const char *str, size_t n)
{
	size_t need = 0, out = 0;

	for (size_t i = 0; i < n;) {
		char esc[8];
		const char *piece = esc, *ent = entity((unsigned char)str[i]);
		size_t k = oomkit__text_keep(str + i, n - i), plen;
		if (ent) {
			piece = ent;
			plen = strlen(ent);
			k = 1;
		} else if (k) {
			piece = str + i;
			plen = k;
		} else {
			/* One byte, as the text escaper writes it. */
			plen = oomkit__escape_text(esc, sizeof(esc), str + i, 1);
			k = 1;
		}
		if (need == out && dst_len > 0 && out + plen < dst_len) {
			memcpy(dst + out, piece, plen);
			out += plen;
		}
		need += plen;
		i += k;
	}
	if (dst_len > 0)
		dst[out] = '\0';
	return need;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int oomkit__unescape_text(char *dst, size_t dst_len, const char *s, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; out++) {
		if (out >= dst_len)
			return -ENOBUFS;
		if (s[i] != '\\') {
			dst[out] = s[i++];
			continue;
		}
		if (i + 1 < n && s[i + 1] == '\\') {
			dst[out] = '\\';
			i += 2;
			continue;
		}
		if (i + 3 >= n || s[i + 1] != 'x' || hexval(s[i + 2]) < 0 || hexval(s[i + 3]) < 0)
			return -EINVAL;
		dst[out] = (char)(hexval(s[i + 2]) << 4 | hexval(s[i + 3]));
		i += 4;
	}
	return out > INT32_MAX ? -ENOBUFS : (int)out;
}

/* The bytes the escaped unit at s[0..n) stands for (up to 4 of them, for a
 * look at the UTF-8 sequence they may start); 0 at a malformed escape. */
static size_t decode_ahead(const char *s, size_t n, char out[4])
{
	size_t have = 0;

	for (size_t i = 0; i < n && have < 4;) {
		if (s[i] != '\\') {
			out[have++] = s[i++];
		} else if (i + 1 < n && s[i + 1] == '\\') {
			out[have++] = '\\';
			i += 2;
		} else if (i + 3 < n && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0 && hexval(s[i + 3]) >= 0) {
			out[have++] = (char)(hexval(s[i + 2]) << 4 | hexval(s[i + 3]));
			i += 4;
		} else {
			break;
		}
	}
	return have;
}

int oomkit__text_check(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k;
		if (s[i] != '\\') {
			/* Raw: only what the escaper keeps, whole. */
			if (!(k = oomkit__text_keep(s + i, n - i)))
				return -EINVAL;
			i += k;
			continue;
		}
		if (i + 1 < n && s[i + 1] == '\\') {
			i += 2;
			continue;
		}
		/* \xNN: only for a byte the escaper would not keep where it stands. */
		char ahead[4];
		size_t have = decode_ahead(s + i, n - i, ahead);
		if (have == 0 || s[i + 1] != 'x' || ahead[0] == '\\' || oomkit__text_keep(ahead, have))
			return -EINVAL;
		i += 4;
	}
	return 0;
}
