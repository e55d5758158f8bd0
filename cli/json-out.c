/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-out.c - see json-out.h. */
#include "json-out.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* One document per run of the command line, straight to stdout. */
static struct oomkit__json jw;
static char jw_buf[16384];

void json_out_begin(char bracket)
{
	fflush(stdout);
	oomkit__json_init(&jw, STDOUT_FILENO, jw_buf, sizeof(jw_buf));
	oomkit__json_open(&jw, NULL, bracket);
}

struct oomkit__json *json_out(void)
{
	return &jw;
}

int json_out_finish(char bracket)
{
	oomkit__json_close(&jw, bracket);
	oomkit__json_newline(&jw);
	return oomkit__json_end(&jw) < 0 ? -EIO : 0;
}
