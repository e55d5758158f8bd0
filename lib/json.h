/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.h - the one JSON writer of liboomkit, oomkitd and oomkit (internal:
 * not installed), and beside it the one escaper for untrusted text.
 *
 * The writer formats into a caller's buffer and writes it to an fd each time
 * it fills (or, with no fd, keeps everything in the buffer and fails with
 * -EMSGSIZE when it does not fit), so output of any size costs no
 * allocation.  It is keyed and depth-tracked: a caller names each value and
 * opens and closes objects and arrays; commas, quotes and escapes are the
 * writer's.  Every string is escaped so the output is valid JSON whatever
 * bytes it holds: control bytes, quotes and backslashes as JSON escapes,
 * and bytes that are not valid UTF-8 as \u00XX (the byte stays visible).
 * The first error (a failed write, a buffer too small, nesting too deep) is
 * kept and later output is dropped.
 *
 * The text escaper is for bytes from processes and job owners (comm,
 * cmdline, cgroup names) before they reach a log line, a line of the control
 * protocol, a terminal or a file that is not JSON: printable ASCII stays,
 * valid UTF-8 stays unless it is a control or a direction override, and
 * everything else -- control bytes, DEL, invalid UTF-8 -- becomes \xNN, with
 * a backslash written as \\.  The result holds no control byte, no tab and
 * no newline, and oomkit__unescape_text() gives back the original bytes.
 * The JSON writer follows the same rule for valid UTF-8 that would fool a
 * reader: a direction override, an isolate, a line separator or the byte
 * order mark goes out as \uXXXX (the same code point to any JSON reader,
 * inert on a terminal), a C1 control a byte at a time as \u00XX like
 * invalid UTF-8 (\u0080 to \u00ff are bytes in this writer's strings).
 */
#ifndef OOMKIT_JSON_H
#define OOMKIT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OOMKIT__JSON_MAX_DEPTH 32

struct oomkit__json {
	char *buf;
	size_t cap, len;
	int fd;	      /* -1: the output stays in buf */
	size_t total; /* bytes written to fd so far */
	int err;      /* first error; later output is dropped */
	unsigned depth;
	uint32_t comma; /* bit d: an element precedes at depth d */
};

/* Starts a writer on buf (cap bytes) for fd (-1: none). */
void oomkit__json_init(struct oomkit__json *w, int fd, char *buf, size_t cap);

/* Values.  key is the member name inside an object and NULL inside an
 * array or at the top. */
void oomkit__json_open(struct oomkit__json *w, const char *key, char bracket);	   /* '{' or '[' */
void oomkit__json_close(struct oomkit__json *w, char bracket);			   /* '}' or ']' */
void oomkit__json_str(struct oomkit__json *w, const char *key, const char *value); /* NULL: null */
void oomkit__json_strn(struct oomkit__json *w, const char *key, const char *value, size_t n);
void oomkit__json_u64(struct oomkit__json *w, const char *key, uint64_t value);
void oomkit__json_i64(struct oomkit__json *w, const char *key, int64_t value);
void oomkit__json_bool(struct oomkit__json *w, const char *key, bool value);
void oomkit__json_null(struct oomkit__json *w, const char *key);
/* UINT64_MAX (no limit) as null, anything else as a number. */
void oomkit__json_limit(struct oomkit__json *w, const char *key, uint64_t value);
/* value / 10^decimals with exactly that many decimals: 12345, 3 -> 12.345. */
void oomkit__json_fixed(struct oomkit__json *w, const char *key, uint64_t value, unsigned decimals);

/* Starts a member whose value the caller writes itself to the fd (another
 * writer's whole document, say): flushes, so the value follows in order. */
void oomkit__json_external(struct oomkit__json *w, const char *key);

/* A newline after a document (whitespace: allowed anywhere between values). */
void oomkit__json_newline(struct oomkit__json *w);

/* Writes what is buffered to the fd (no-op without one). */
void oomkit__json_flush(struct oomkit__json *w);
/* Flushes; returns the bytes produced (in buf without an fd) or the first error. */
int oomkit__json_end(struct oomkit__json *w);

/* Length of the valid UTF-8 sequence at s[0..n) (RFC 3629), 0 if none. */
size_t oomkit__utf8_len(const unsigned char *s, size_t n);

/* Escapes s[0..n) into dst (always NUL-terminated when dst_len > 0).
 * Returns the length the whole escape needs, as snprintf does; output that
 * does not fit is cut at a whole escape.  4 * n + 1 always fits. */
size_t oomkit__escape_text(char *dst, size_t dst_len, const char *s, size_t n);
/* The same for a NUL-terminated string; returns dst. */
const char *oomkit__escape_str(char *dst, size_t dst_len, const char *s);
/* Undoes oomkit__escape_text() into dst (dst_len >= n suffices; dst may be
 * s); returns the byte count, or -EINVAL for a malformed escape. */
int oomkit__unescape_text(char *dst, size_t dst_len, const char *s, size_t n);
/* 0 if s[0..n) is exactly what oomkit__escape_text() writes for some bytes
 * (nothing raw it would escape, nothing escaped it would keep), -EINVAL if
 * not: a reader that wants one spelling per text checks with it. */
int oomkit__text_check(const char *s, size_t n);
/* How many bytes at s[0..n) the text escaper keeps as they are (printable
 * ASCII but a backslash, or one whole valid UTF-8 sequence that is not
 * deceptive); 0: it escapes s[0]. */
size_t oomkit__text_keep(const char *s, size_t n);

/* The text escaper's output made safe inside markup too: the body of a
 * desktop notification, which servers read as a subset of HTML (<b>, <i>,
 * <u>, <a href>, <img>; the freedesktop notification specification), so
 * & < > " ' become &amp; &lt; &gt; &quot; &apos;.  Returns the length the
 * whole escape needs, as oomkit__escape_text() does; 6 * n + 1 always fits.
 * Not undone: it is for a person to read. */
size_t oomkit__escape_markup(char *dst, size_t dst_len, const char *s, size_t n);

#endif
