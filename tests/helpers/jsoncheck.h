/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jsoncheck.h - a strict JSON validator for the tests (RFC 8259, UTF-8
 * included), written independently of the library's JSON writer so that a
 * report is checked by something that does not share its mistakes.
 * Header only: include it in one test file.
 */
#ifndef OOMKIT_JSONCHECK_H
#define OOMKIT_JSONCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct json {
	const unsigned char *p, *end;
	int depth;
};

static bool j_value(struct json *j);

static void j_ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool j_lit(struct json *j, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool j_hex4(struct json *j, unsigned *ret)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++, j->p++) {
		if (j->p >= j->end)
			return false;
		unsigned c = *j->p;
		if (c >= '0' && c <= '9')
			v = v * 16 + c - '0';
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + c - 'A' + 10;
		else
			return false;
	}
	*ret = v;
	return true;
}

/* One UTF-8 sequence (RFC 3629), independently of the library's check. */
static bool j_utf8(struct json *j)
{
	unsigned c = *j->p, cp, n;
	if (c < 0x80) {
		j->p++;
		return true;
	}
	if ((c & 0xe0) == 0xc0)
		n = 1, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 2, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 3, cp = c & 0x07;
	else
		return false;
	if ((size_t)(j->end - j->p) <= n)
		return false;
	for (unsigned i = 1; i <= n; i++) {
		if ((j->p[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (j->p[i] & 0x3f);
	}
	static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	j->p += n + 1;
	return true;
}

static bool j_string(struct json *j)
{
	unsigned u;
	if (!j_lit(j, "\""))
		return false;
	while (j->p < j->end) {
		unsigned c = *j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\') {
			if (!j_utf8(j))
				return false;
			continue;
		}
		if (++j->p >= j->end)
			return false;
		c = *j->p++;
		if (c == 'u') {
			if (!j_hex4(j, &u))
				return false;
		} else if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
			return false;
		}
	}
	return false;
}

static bool j_digits(struct json *j)
{
	const unsigned char *start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start;
}

static bool j_number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!j_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!j_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!j_digits(j))
			return false;
	}
	return true;
}

static bool j_container(struct json *j, char close, bool object)
{
	j->p++;
	if (++j->depth > 64)
		return false;
	j_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		j_ws(j);
		if (object) {
			if (!j_string(j))
				return false;
			j_ws(j);
			if (!j_lit(j, ":"))
				return false;
		}
		if (!j_value(j))
			return false;
		j_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return false;
	}
}

static bool j_value(struct json *j)
{
	j_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		return j_container(j, '}', true);
	case '[':
		return j_container(j, ']', false);
	case '"':
		return j_string(j);
	case 't':
		return j_lit(j, "true");
	case 'f':
		return j_lit(j, "false");
	case 'n':
		return j_lit(j, "null");
	default:
		return j_number(j);
	}
}

/* Whether buf[0..len) is exactly one JSON value, surrounding space allowed. */
static bool json_valid(const char *buf, size_t len)
{
	struct json j = {(const unsigned char *)buf, (const unsigned char *)buf + len, 0};
	if (!j_value(&j))
		return false;
	j_ws(&j);
	return j.p == j.end;
}

#endif
