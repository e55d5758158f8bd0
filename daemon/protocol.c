/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "protocol.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	enum protocol_verb verb;
} verbs[] = {
    {"status", PROTOCOL_STATUS}, {"ps", PROTOCOL_PS},	      {"reports", PROTOCOL_REPORTS},
    {"report", PROTOCOL_REPORT}, {"run", PROTOCOL_RUN},	      {"prompt", PROTOCOL_PROMPT},
    {"answer", PROTOCOL_ANSWER}, {"reload", PROTOCOL_RELOAD},
};

int protocol_parse(const char *line, size_t len, struct protocol_cmd *ret)
{
	const char *sp;
	size_t name_len;

	if (memchr(line, '\0', len))
		return -EINVAL;
	sp = memchr(line, ' ', len);
	name_len = sp ? (size_t)(sp - line) : len;
	ret->verb = PROTOCOL_UNKNOWN;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strlen(verbs[i].name) == name_len && memcmp(verbs[i].name, line, name_len) == 0)
			ret->verb = verbs[i].verb;
	ret->name_len = name_len;
	ret->arg = sp ? sp + 1 : NULL;
	return 0;
}

int protocol_parse_answer(const char *line, struct protocol_answer *ret)
{
	struct protocol_answer a = {0};

	a.n_fields = sscanf(line, "answer %u %15s %d", &a.id, a.what, &a.pid);
	if (a.n_fields < 2)
		return -EINVAL;
	*ret = a;
	return 0;
}
