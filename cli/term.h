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

/* The terminal's width in columns: $COLUMNS if it is a number, else the
 * width of the terminal standard output is (TIOCGWINSZ), else 80 (a file,
 * a pipe).  At least TERM_WIDTH_MIN. */
#define TERM_WIDTH_MIN 20
size_t term_width(void);

/* What a table's last column gets: the columns of width left after used
 * ones, but at least min (the line is then wider than the terminal: the
 * other columns are never cut). */
size_t term_rest(size_t width, size_t used, size_t min);

/* term_text(), cut to width columns at a word boundary with "..." when it
 * does not fit (mid-word only for a word longer than half the width). */
const char *term_words(const char *s, size_t width, char *buf, size_t cap);

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
/* The same for a column as wide as a terminal may be (a command line). */
#define WIDE(s, w) term_text((s), (w), (char[2048]){0}, 2048)
#define WORDS(s, w) term_words((s), (w), (char[2048]){0}, 2048)
#define HUMAN(v) term_size((v), (char[16]){0}, 16)

#endif
