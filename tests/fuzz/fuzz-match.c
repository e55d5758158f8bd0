/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the match expressions of protect, prefer and avoid
 * (daemon/rules/match.c) on arbitrary text: a refusal says why; what is accepted
 * has a value within its bounds and without control characters, written
 * back (match_format()) reads as the same expression, and matches the
 * process it names.  Input holding a \x01 is instead a glob and a text
 * (either side of it): match_glob() agrees with a plain dynamic program.
 */
#include "fuzz.h"

#include "rules/match.h"

static bool clean(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* reach[i][j]: the first i bytes of glob match the first j of text. */
static bool reference_glob(const char *g, size_t n, const char *t, size_t m)
{
	static bool reach[65][65];

	memset(reach, 0, sizeof(reach));
	reach[0][0] = true;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 0; j <= m; j++)
			reach[i][j] = g[i - 1] == '*' ? reach[i - 1][j] || (j > 0 && reach[i][j - 1])
						      : j > 0 && reach[i - 1][j - 1] && g[i - 1] == t[j - 1];
	return reach[n][m];
}

static int glob_case(const char *s, const char *sep)
{
	char g[65], t[65];
	size_t n = (size_t)(sep - s), m = strlen(sep + 1);

	if (n > 64 || m > 64)
		return 0;
	memcpy(g, s, n);
	g[n] = '\0';
	memcpy(t, sep + 1, m + 1);
	FUZZ_CHECK(match_glob(g, t) == reference_glob(g, n, t, m));
	return 0;
}

/* The process an accepted expression names matches it. */
static void named(const struct match_expr *e)
{
	char plain[MATCH_TEXT_MAX];
	size_t k = 0;
	struct match_subject subj = {.uid = e->uid};

	for (const char *p = e->text; *p; p++)
		if (*p != '*')
			plain[k++] = *p;
	plain[k] = '\0';
	subj.comm = subj.exe = e->text;
	subj.cmdline = subj.cgroup = plain;
	/* A cgroup pattern's stars match within a component: without them it
	 * may have an empty one, which names no cgroup. */
	if (e->kind == MATCH_CGROUP && strchr(e->text, '*'))
		return;
	FUZZ_CHECK(match_test(e, &subj));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[1024], why[MATCH_TEXT_MAX + 256], text[MATCH_TEXT_MAX + 16];
	struct match_expr e, again;

	if (size >= sizeof(s) || memchr(data, '\0', size))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (memchr(s, 1, size))
		return glob_case(s, memchr(s, 1, size));
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
	named(&e);
	return 0;
}
