/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the match expressions of protect, prefer and avoid
 * (daemon/match.c) on arbitrary text: a refusal says why; what is accepted
 * has a value within its bounds and without control characters, and written
 * back (match_format()) reads as the same expression.
 */
#include "fuzz.h"

#include "match.h"

static bool clean(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[1024], why[MATCH_TEXT_MAX + 256], text[MATCH_TEXT_MAX + 16];
	struct match_expr e, again;

	if (size >= sizeof(s) || memchr(data, '\0', size))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	memset(why, 0, sizeof(why));
	if (match_parse(s, &e, why, sizeof(why)) < 0) {
		FUZZ_CHECK(why[0] != '\0' && FUZZ_TERMINATED(why));
		return 0;
	}
	FUZZ_CHECK(match_kind_name(e.kind) != NULL);
	if (e.kind != MATCH_UID) {
		FUZZ_CHECK(FUZZ_TERMINATED(e.text) && e.text[0] != '\0' && clean(e.text));
		FUZZ_CHECK(e.kind != MATCH_COMM || strlen(e.text) < MATCH_COMM_MAX);
		FUZZ_CHECK(e.kind != MATCH_EXE || e.text[0] == '/');
		FUZZ_CHECK(e.kind != MATCH_CGROUP || pattern_check(e.text, why, sizeof(why)) == 0);
	}
	match_format(&e, text, sizeof(text));
	FUZZ_CHECK(match_parse(text, &again, why, sizeof(why)) == 0);
	FUZZ_CHECK(again.kind == e.kind);
	FUZZ_CHECK(e.kind == MATCH_UID ? again.uid == e.uid : strcmp(again.text, e.text) == 0);
	return 0;
}
