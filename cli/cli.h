/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cli.h - what every verb of the command line shares: the command line as
 * parsed (struct cli), the exit codes, the one way to say what went wrong,
 * and checked numbers.  The verbs live in cmd-*.c, each with its header;
 * oomkit.c is the entry point and holds the verb table.
 *
 * Exit codes: 0 success, 1 the daemon refused or failed, 2 usage,
 * 3 the daemon cannot be reached, 126/127 run could not exec.
 */
#ifndef OOMKIT_CLI_H
#define OOMKIT_CLI_H

#include <stdbool.h>
#include <stddef.h>

enum { EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

/* The options, each allowed only for the verbs that name it. */
enum {
	OPT_JSON = 1u << 0,
	OPT_JOB = 1u << 1,
	OPT_ITERATIONS = 1u << 2,
	OPT_INTERVAL = 1u << 3,
	OPT_ONCE = 1u << 4,
};

struct cli {
	const char *socket_path;
	bool json;
	unsigned given; /* OPT_* seen */
	const char *job;
	unsigned iterations, interval_ms;
	bool once;
	size_t width; /* the terminal's columns (term_width()), read at start */
};

/* "oomkit: MESSAGE" on stderr.  What came from the daemon or the user is
 * passed through TTY() (term.h) by the caller. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A number for an argument or option: decimal digits only, within [min,
 * max]; otherwise says so (naming what) and returns -EINVAL. */
int cli_parse_number(const char *what, const char *s, unsigned long min, unsigned long max, unsigned *ret);

#endif
