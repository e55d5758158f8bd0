/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report-view.h - one OOM report as a person reads it: its head (scope,
 * cgroup, chain, decision, answer, outcome, timings), the jobs and the
 * candidates, within the terminal's width (80 columns for a file); or, for --json, the report's JSON as the
 * daemon wrote it, with nothing a terminal would obey.
 */
#ifndef OOMKIT_CLI_REPORT_VIEW_H
#define OOMKIT_CLI_REPORT_VIEW_H

#include "cli.h"
#include "json-reader.h"
#include "common/protocol.h"

/* The report (its parsed tree) as tables, on stdout. */
void report_view_show(const struct json *root);

/* "  label:    text" on stdout, wrapped at word boundaries to fit the
 * terminal (report_view_width(); the label in 11); the text is escaped for
 * the terminal first. */
void report_view_field(const char *label, const char *raw);

/* The columns a view fills: the terminal's (term_width()), as the command
 * line that fetched it read them. */
size_t report_view_width(void);

/* "python3: /usr/bin/python3 -m worker" for a process's comm and command
 * line, "[kworker/0:1]" for one without a command line; not escaped. */
const char *report_view_command(const char *comm, const char *cmdline, char *buf, size_t len);

/* The report's text on stdout, as it is but for what a terminal might obey:
 * a control byte, a C1 control, a direction override or a byte that is not
 * UTF-8 goes out as \uXXXX (the same, inside a JSON string). */
void report_view_json(const char *text);

/* Sends req, whose reply is one JSON document in data records (report ID,
 * explain), and shows it: with --json as report_view_json() does, else
 * through show.  what names the document in an error ("report 3").
 * Returns the exit code. */
int report_view_fetch(const struct cli *cli, const struct protocol_request *req,
		      void (*show)(const struct json *root), const char *what);

#endif
