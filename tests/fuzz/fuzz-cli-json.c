/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the command line's JSON reader (cli/json-reader.c), which reads what the
 * daemon writes into reports.  Whatever it accepts must be a well-formed
 * tree: every string and key present, every key found again by json_get().
 */
#include "fuzz.h"

#include "json-reader.h"

static void check(const struct json *j, unsigned depth)
{
	FUZZ_CHECK(depth < 10000);
	FUZZ_CHECK(j->type <= JSON_OBJECT);
	switch (j->type) {
	case JSON_NULL:
	case JSON_BOOL:
		break;
	case JSON_NUMBER:
		FUZZ_CHECK(j->str && j->str[0] != '\0');
		break;
	case JSON_STRING:
		FUZZ_CHECK(j->str != NULL);
		break;
	case JSON_ARRAY:
		for (size_t i = 0; i < j->n; i++) {
			FUZZ_CHECK(j->items[i] != NULL);
			check(j->items[i], depth + 1);
		}
		break;
	case JSON_OBJECT:
		for (size_t i = 0; i < j->n; i++) {
			FUZZ_CHECK(j->keys[i] != NULL && j->items[i] != NULL);
			FUZZ_CHECK(json_get(j, j->keys[i]) != NULL);
			check(j->items[i], depth + 1);
		}
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json *j;
	char *text;

	if (size > 1 << 16)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	j = json_parse(text);
	free(text);
	if (j) {
		check(j, 0);
		json_free(j);
	}
	return 0;
}
