/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * log.h - the daemon's log: one line per message on stderr, prefixed with
 * its syslog priority ("<3>...") so that journald or a syslog reading the
 * service's stderr files it at that level.  Nothing here allocates: a line is
 * formatted on the stack and written with one write(2), so the handler path
 * may log.
 */
#ifndef OOMKITD_LOG_H
#define OOMKITD_LOG_H

#include <stddef.h>

#include "oomkit.h"

/* The syslog priorities the daemon uses (syslog(3) numbers them so). */
enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* Logs one line at level; a message longer than a line (1 KiB) is cut. */
void log_at(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_at(LOG_LEVEL_ERR, __VA_ARGS__)
#define log_warning(...) log_at(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_notice(...) log_at(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_info(...) log_at(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* Logs each line of text (lines end with '\n'; the last may not) at level. */
void log_lines(enum log_level level, const char *text);

/* Writes s escaped for a log line into buf (lib/json.h's text escaper) and
 * returns buf: printable text and valid UTF-8 stay, a newline, a control
 * byte or invalid UTF-8 becomes \xNN, so a name from a process or a job
 * owner cannot forge a line of its own ("\n<0>...") or drive a terminal.
 * Cut to fit. */
const char *log_escape(char *buf, size_t len, const char *s);

/* Room for an escaped name of n bytes: each byte may become four. */
#define LOG_ESCAPED_MAX(n) (4 * (n) + 1)

/* liboomkit's log callback (oomkit_options.log): its messages at their level. */
void log_liboomkit(enum oomkit_log_level level, const char *msg, void *userdata);

#endif
