/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the control socket's line parsing (daemon/protocol.c): a known
 * command is exactly its name up to the first space, the argument starts
 * right after that space, and an answer's text is terminated.
 */
#include "fuzz.h"

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct protocol_cmd cmd;
	struct protocol_answer a;
	char *line;
	int r;

	if (size > 4096)
		return 0;
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';

	r = protocol_parse(line, size, &cmd);
	if (memchr(line, '\0', size)) {
		FUZZ_CHECK(r == -EINVAL);
	} else {
		FUZZ_CHECK(r == 0);
		FUZZ_CHECK(cmd.name_len <= size);
		FUZZ_CHECK(memchr(line, ' ', cmd.name_len) == NULL);
		if (cmd.arg)
			FUZZ_CHECK(cmd.arg == line + cmd.name_len + 1 && line[cmd.name_len] == ' ');
		else
			FUZZ_CHECK(cmd.name_len == size);
		if (cmd.verb != PROTOCOL_UNKNOWN)
			FUZZ_CHECK(cmd.name_len >= 2 && cmd.name_len <= 7);
	}
	a.n_fields = -1;
	r = protocol_parse_answer(line, &a);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		FUZZ_CHECK(a.n_fields == 2 || a.n_fields == 3);
		FUZZ_CHECK(FUZZ_TERMINATED(a.what) && a.what[0] != '\0');
		FUZZ_CHECK(a.n_fields == 3 || a.pid == 0);
	} else {
		FUZZ_CHECK(a.n_fields == -1);
	}
	free(line);
	return 0;
}
