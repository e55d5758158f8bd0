/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-out.h - --json: one document on stdout through lib/json.h's writer,
 * valid JSON whatever bytes a name holds.  A verb opens the document, writes
 * its values through the writer json_out() returns, and finishes it.
 */
#ifndef OOMKIT_CLI_JSON_OUT_H
#define OOMKIT_CLI_JSON_OUT_H

#include "json.h" /* lib/json.h: the writer */

/* Starts the document: bracket '{' or '['.  What stdio holds goes first. */
void json_out_begin(char bracket);
/* The writer of the document begun. */
struct oomkit__json *json_out(void);
/* Closes the document with bracket ('}' or ']') and a newline, and writes
 * it out: 0, or -EIO if any of it could not be written. */
int json_out_finish(char bracket);

#endif
