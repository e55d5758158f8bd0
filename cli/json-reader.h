/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-reader.h - a small JSON reader for rendering oomkitd's reports:
 * parses a whole document into a tree; numbers are kept as their text.
 * (lib/json.h is the other direction: the one JSON writer.)
 */
#ifndef OOMKIT_CLI_JSON_READER_H
#define OOMKIT_CLI_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	bool boolean;
	char *str;	     /* STRING: decoded; NUMBER: its text */
	struct json **items; /* ARRAY and OBJECT values */
	char **keys;	     /* OBJECT keys */
	size_t n;
};

/* Parses text; NULL if it is not one valid JSON value (or nesting is too deep). */
struct json *json_parse(const char *text);

/* The value of key in an object; NULL if absent or not an object. */
const struct json *json_get(const struct json *obj, const char *key);

void json_free(struct json *j);

#endif
