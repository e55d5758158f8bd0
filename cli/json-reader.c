/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-reader.c - recursive descent over a NUL-terminated document.  Only what
 * reports contain needs to round-trip exactly; \u escapes are decoded to
 * UTF-8, surrogate pairs included.
 */
#include "json-reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct parser {
	const char *p;
	int depth;
};

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct json *node(enum json_type type)
{
	struct json *j = calloc(1, sizeof(*j));
	if (j)
		j->type = type;
	return j;
}

static int hex4(const char *s, unsigned *ret)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*ret = v;
	return 0;
}

static size_t utf8(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At a '"': returns the decoded string (malloc'd) and moves past it. */
static char *parse_string(struct parser *ps)
{
	const char *s = ps->p + 1;
	size_t cap = strlen(s) + 1, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			break;
		if (c == '\0' || c < 0x20)
			goto fail;
		if (c != '\\') {
			out[n++] = (char)c;
			s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"':
			out[n++] = '"';
			break;
		case '\\':
			out[n++] = '\\';
			break;
		case '/':
			out[n++] = '/';
			break;
		case 'b':
			out[n++] = '\b';
			break;
		case 'f':
			out[n++] = '\f';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(s + 1, &cp) < 0)
				goto fail;
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && s[1] == '\\' && s[2] == 'u' &&
			    hex4(s + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			n += utf8(cp, out + n); /* an escape is 6 bytes, its UTF-8 at most 4 */
			break;
		}
		default:
			goto fail;
		}
		s++;
	}
	out[n] = '\0';
	ps->p = s + 1;
	return out;
fail:
	free(out);
	return NULL;
}

static struct json *parse_value(struct parser *ps);

static int append(struct json *j, struct json *v, char *key)
{
	struct json **items = realloc(j->items, (j->n + 1) * sizeof(*items));
	if (!items)
		return -1;
	j->items = items;
	if (j->type == JSON_OBJECT) {
		char **keys = realloc(j->keys, (j->n + 1) * sizeof(*keys));
		if (!keys)
			return -1;
		j->keys = keys;
		j->keys[j->n] = key;
	}
	j->items[j->n++] = v;
	return 0;
}

static struct json *parse_container(struct parser *ps, bool object)
{
	struct json *j = node(object ? JSON_OBJECT : JSON_ARRAY);
	char close = object ? '}' : ']';

	if (!j || ++ps->depth > MAX_DEPTH)
		goto fail;
	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return j;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(ps);
		if (object) {
			if (*ps->p != '"' || !(key = parse_string(ps)))
				goto fail;
			skip_ws(ps);
			if (*ps->p != ':') {
				free(key);
				goto fail;
			}
			ps->p++;
		}
		struct json *v = parse_value(ps);
		if (!v || append(j, v, key) < 0) {
			free(key);
			json_free(v);
			goto fail;
		}
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p != close)
			goto fail;
		ps->p++;
		ps->depth--;
		return j;
	}
fail:
	json_free(j);
	return NULL;
}

static struct json *parse_number(struct parser *ps)
{
	const char *s = ps->p;
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	while ((*s >= '0' && *s <= '9') || *s == '.' || *s == 'e' || *s == 'E' || *s == '+' || *s == '-')
		s++;
	struct json *j = node(JSON_NUMBER);
	if (!j)
		return NULL;
	j->str = strndup(ps->p, (size_t)(s - ps->p));
	ps->p = s;
	if (!j->str) {
		free(j);
		return NULL;
	}
	return j;
}

static struct json *parse_value(struct parser *ps)
{
	struct json *j;

	skip_ws(ps);
	switch (*ps->p) {
	case '{':
		return parse_container(ps, true);
	case '[':
		return parse_container(ps, false);
	case '"':
		j = node(JSON_STRING);
		if (j && !(j->str = parse_string(ps))) {
			free(j);
			return NULL;
		}
		return j;
	case 't':
	case 'f':
	case 'n': {
		static const struct {
			const char *word;
			enum json_type type;
			bool value;
		} words[] = {
		    {"true", JSON_BOOL, true}, {"false", JSON_BOOL, false}, {"null", JSON_NULL, false}};
		for (size_t i = 0; i < 3; i++) {
			size_t n = strlen(words[i].word);
			if (strncmp(ps->p, words[i].word, n) == 0) {
				ps->p += n;
				j = node(words[i].type);
				if (j)
					j->boolean = words[i].value;
				return j;
			}
		}
		return NULL;
	}
	default:
		return parse_number(ps);
	}
}

struct json *json_parse(const char *text)
{
	struct parser ps = {.p = text};
	struct json *j = parse_value(&ps);

	skip_ws(&ps);
	if (j && *ps.p != '\0') {
		json_free(j);
		return NULL;
	}
	return j;
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (strcmp(obj->keys[i], key) == 0)
			return obj->items[i];
	return NULL;
}

void json_free(struct json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		json_free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->str);
	free(j);
}
