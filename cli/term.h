/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * term.h - what the command line shows a person: untrusted text escaped and
 * cut to columns, sizes, usage bars and times.  Everything printed that came
 * from the daemon - names of jobs and cgroups, a process's comm and cmdline,
 * reasons, messages - goes through term_text() first: a process cannot
 * write terminal escapes to the person reading, or fake a line of a table.
 */
#ifndef OOMKIT_CLI_TERM_H
#define OOMKIT_CLI_TERM_H

#include <stddef.h>
#include <stdint.h>

/* s as the terminal may show it (oomkit__escape_text(): control bytes, DEL,
 * bytes that are not UTF-8, C1 controls and direction overrides as \xNN, a
 * backslash as \\), cut to width columns (0: no limit) at a whole escape or
 * character.  Returns buf. */
const char *term_text(const char *s, size_t width, char *buf, size_t cap);
/* term_text(), left-aligned and padded with spaces to exactly width columns. */
const char *term_column(const char *s, size_t width, char *buf, size_t cap);

/* 4-5 characters: "512K", "120M", "1.5G", "max" (UINT64_MAX). */
const char *term_size(uint64_t v, char *buf, size_t len);

/* "[####----]": usage against limit in width cells (blank for no limit);
 * buf holds width + 3 bytes. */
void term_bar(uint64_t usage, uint64_t limit, char *buf, size_t width);

/* "MM-DD HH:MM:SS" in local time, "?" if it cannot be shown. */
void term_time(int64_t epoch, char *buf, size_t len);

/* In a printf's arguments: each gives a buffer of its own that lives until
 * the end of the enclosing block. */
#define TTY(s, w) term_text((s), (w), (char[512]){0}, 512)
#define COL(s, w) term_column((s), (w), (char[512]){0}, 512)
#define HUMAN(v) term_size((v), (char[16]){0}, 16)

#endif
