/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * value.c - sizes and durations as the configuration writes them.  Numbers
 * are read digit by digit, so a sign, spaces, hexadecimal or an overflow is
 * an error rather than whatever strtoull would make of it.
 */
#include "value.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int parse_digits(const char *s, uint64_t *ret, const char **end)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	*end = s;
	return 0;
}

int value_parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	const char *end;
	int r = parse_digits(s, &v, &end);

	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int value_parse_size(const char *s, bool allow_max, uint64_t *ret_bytes)
{
	static const char suffixes[] = "KMGT";
	uint64_t v, mult = 1;
	const char *end;
	int r;

	if (allow_max && (strcmp(s, "max") == 0 || strcmp(s, "none") == 0)) {
		*ret_bytes = UINT64_MAX;
		return 0;
	}
	r = parse_digits(s, &v, &end);
	if (r < 0)
		return r;
	if (*end) {
		const char *p = strchr(suffixes, toupper((unsigned char)*end));
		if (!p)
			return -EINVAL;
		for (long i = 0; i <= p - suffixes; i++)
			mult *= 1024;
		end++;
		/* "512M", "512MB" and "512MiB" all mean mebibytes. */
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret_bytes = v * mult;
	return 0;
}

int value_parse_duration(const char *s, uint64_t *ret_ms)
{
	uint64_t v;
	const char *end;
	int r = parse_digits(s, &v, &end);

	if (r < 0)
		return r;
	if (strcmp(end, "ms") == 0) {
		*ret_ms = v;
		return 0;
	}
	if (strcmp(end, "s") == 0) {
		if (v > UINT64_MAX / 1000)
			return -ERANGE;
		*ret_ms = v * 1000;
		return 0;
	}
	/* A bare 0 needs no unit; any other bare number is ambiguous. */
	if (*end == '\0' && v == 0) {
		*ret_ms = 0;
		return 0;
	}
	return -EINVAL;
}

void value_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffixes[] = "KMGT";
	int i = -1;

	if (bytes == UINT64_MAX) {
		snprintf(buf, len, "max");
		return;
	}
	while (bytes && bytes % 1024 == 0 && i < 3) {
		bytes /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		snprintf(buf, len, "%" PRIu64 "%c", bytes, suffixes[i]);
}

void value_format_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms == 0)
		snprintf(buf, len, "0");
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
}
