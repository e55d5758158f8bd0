/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * value.h - the value syntaxes people write and read: sizes ("512M", "max")
 * and durations ("250ms", "2s").  The configuration parses them, and the
 * decisions and messages format them the same way, so a limit reads back in
 * a log line exactly as it is written in the file.  Pure functions: no I/O,
 * no allocation, no dependency on the rest of the daemon.
 */
#ifndef OOMKITD_VALUE_H
#define OOMKITD_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A number of bytes with an optional K, M, G or T (powers of 1024; "MB" and
 * "MiB" mean the same); with allow_max, "max" (or "none") is UINT64_MAX.
 * Returns 0, -EINVAL (syntax) or -ERANGE (overflow); *ret_bytes only on 0. */
int value_parse_size(const char *s, bool allow_max, uint64_t *ret_bytes);

/* A share of the machine's memory, as sizes may be written: "25%", "12.5%",
 * "0.25%" (at most two decimals).  *ret_hundredths is in hundredths of a
 * percent (2500, 1250, 25).  0, -EINVAL (not such a percent) or -ERANGE
 * (0%, or above 100%).  value_is_percent() says whether s is meant as one:
 * it ends with '%'. */
bool value_is_percent(const char *s);
int value_parse_percent(const char *s, unsigned *ret_hundredths);

/* hundredths (as above) of total_bytes, rounded down to a multiple of 4 KiB. */
uint64_t value_percent_of(uint64_t total_bytes, unsigned hundredths);

/* A number followed by ms or s; a bare 0 needs no unit.  0, -EINVAL or -ERANGE. */
int value_parse_duration(const char *s, uint64_t *ret_ms);

/* A decimal number without sign or suffix, at most max.  0, -EINVAL or -ERANGE. */
int value_parse_uint(const char *s, uint64_t max, uint64_t *ret);

/* An absolute path in its one spelling: repeated slashes collapse and a
 * trailing one goes ("/" stays "/").  A relative path, "." and ".."
 * components and control characters are refused.  0, -EINVAL or
 * -ENAMETOOLONG (out holds len bytes), with the reason in why. */
int value_normalize_path(const char *in, char *out, size_t len, char *why, size_t why_len);

/* A signal by name: "SIGTERM" or "TERM", "SIGRTMIN+3", "RTMAX-1" (never a
 * number: they differ between architectures).  0, -EINVAL or -ERANGE. */
int value_parse_signal(const char *s, int *ret_sig);

/* "SIGTERM", "SIGRTMIN+3". */
void value_format_signal(int sig, char *buf, size_t len);

#define VALUE_COMMAND_MAX 192 /* a command, including the NUL (longer than a line) */
#define VALUE_COMMAND_ARGS 32

/* Checks a command as the hooks will run it, without a shell: words
 * separated by blanks; "..." groups words with blanks, with \" and \\
 * inside; nothing else is special.  A shell runs only when it is named:
 * /bin/sh -c "...".  The program, the first word, is an absolute path in
 * normal form (never looked up in $PATH); at most VALUE_COMMAND_ARGS words.
 * Returns the number of words, or -EINVAL with the reason in why. */
int value_parse_command(const char *s, char *why, size_t why_len);

/* The words of a command value_parse_command() accepts, as they are run:
 * each NUL-terminated in buf (VALUE_COMMAND_MAX bytes suffice), pointed to
 * by argv, which ends with NULL (VALUE_COMMAND_ARGS + 1 entries suffice).
 * The number of words, or -EINVAL / -E2BIG. */
int value_split_command(const char *s, char *buf, size_t len, char **argv, size_t max_argv);

/* The largest exact suffix: "512M", "1536K", "1000"; UINT64_MAX is "max". */
void value_format_size(uint64_t bytes, char *buf, size_t len);

/* "2s" for whole seconds, else "250ms"; 0 is "0". */
void value_format_duration(uint64_t ms, char *buf, size_t len);

/* A size as every log line and human-readable report shows it: "512 KiB"
 * below 10 MiB, else whole MiB ("73 MiB"), rounded down; UINT64_MAX
 * (no limit) is "unlimited".  (Configuration values read back as they are
 * written: value_format_size().)  At most 24 bytes. */
void value_format_bytes(uint64_t bytes, char *buf, size_t len);

/* A time elapsed, for a person: "0.4 s", "12 s", "3 min 20 s", "2 h 5 min",
 * "3 days 4 h". */
void value_format_elapsed(uint64_t ms, char *buf, size_t len);

#endif
