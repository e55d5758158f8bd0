/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes cgroup patterns (daemon/rules/pattern.c): the input is a pattern, a
 * newline and a cgroup path.  The matcher must agree with a plain recursive
 * one written from the definition (components line up one for one; in each,
 * "*" matches any run of characters), a pattern that is refused must say
 * why, and "self or ancestor" must agree with trying every ancestor.
 */
#include "fuzz.h"

#include "rules/pattern.h"

/* The definition, for one component: p[0..pn) against s[0..sn), by dynamic
 * programming (ok[j]: p[0..i) matches s[0..j)), unlike the matcher's
 * backtracking. */
static bool match_component(const char *p, size_t pn, const char *s, size_t sn)
{
	bool ok[512 + 1], next[512 + 1];

	ok[0] = true;
	for (size_t j = 1; j <= sn; j++)
		ok[j] = false;
	for (size_t i = 0; i < pn; i++) {
		for (size_t j = 0; j <= sn; j++)
			next[j] = p[i] == '*' ? ok[j] || (j > 0 && next[j - 1])
					      : j > 0 && ok[j - 1] && p[i] == s[j - 1];
		memcpy(ok, next, sizeof(ok));
	}
	return ok[sn];
}

static bool reference_match(const char *p, const char *s, size_t sn)
{
	if (sn == 0)
		return false;
	for (;;) {
		size_t pn = strcspn(p, "/"), cn = 0;
		while (cn < sn && s[cn] != '/')
			cn++;
		if (!match_component(p, pn, s, cn))
			return false;
		bool p_end = p[pn] == '\0', s_end = cn == sn;
		if (p_end || s_end)
			return p_end && s_end;
		p += pn + 1;
		s += cn + 1;
		sn -= cn + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char pattern[PATTERN_MAX + 8], path[512], why[PATTERN_MAX + 128];
	const uint8_t *nl = memchr(data, '\n', size);
	size_t pn = nl ? (size_t)(nl - data) : size, sn = nl ? size - pn - 1 : 0;

	if (pn >= sizeof(pattern) || sn >= sizeof(path) || memchr(data, '\0', size))
		return 0;
	memcpy(pattern, data, pn);
	pattern[pn] = '\0';
	memcpy(path, nl ? nl + 1 : data, sn);
	path[sn] = '\0';
	memset(why, 0, sizeof(why));
	if (pattern_check(pattern, why, sizeof(why)) < 0)
		FUZZ_CHECK(why[0] != '\0' && FUZZ_TERMINATED(why));

	FUZZ_CHECK(pattern_match(pattern, path) == reference_match(pattern, path, strlen(path)));
	bool any = false;
	for (size_t n = strlen(path); n > 0; n--)
		if ((n == strlen(path) || path[n] == '/') && reference_match(pattern, path, n))
			any = true;
	FUZZ_CHECK(pattern_match_self_or_ancestor(pattern, path) == any);
	return 0;
}
