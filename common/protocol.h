/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol.h - the control socket's wire protocol, both directions, as
 * structs: a request (one line from a client), a reply (a status line,
 * records, a line holding only "."), a prompt (a question, its candidates
 * and the answers it takes) and an answer.  Pure: no daemon state and no
 * I/O, so oomkitd (control.c) and the command line (cli/) link the same
 * code, and both directions are fuzzed (tests/fuzz/fuzz-protocol.c).
 *
 * Every field that can carry bytes from a process or a job owner (comm,
 * cmdline, cgroup and job names, paths, reasons, messages) is escaped on
 * the way out by lib/json.h's text escaper, the one for every untrusted
 * byte: printable ASCII and valid UTF-8 are kept, but for code points that
 * fool a terminal or a reader (C1 controls, direction overrides and
 * isolates, line separators, the byte order mark); a backslash is written
 * "\\", and those code points, a tab, newline, any other control byte, DEL
 * or a byte that is not part of valid UTF-8 are written "\xNN" a byte at a
 * time.  An escaped field never
 * holds a tab or a newline, so it cannot end a record, forge one, or end the
 * frame.  The parser undoes the escaping and refuses anything that is not
 * in this canonical form.  The grammar is in docs/protocol.md.
 */
#ifndef OOMKITD_PROTOCOL_H
#define OOMKITD_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A request line, its newline included. */
#define PROTOCOL_REQUEST_MAX 512
/* A job name in a request (config.h's CONFIG_NAME_MAX), its NUL included. */
#define PROTOCOL_NAME_MAX 64
/* The longest line a protocol_put_*() can write, its newline included: each
 * string field is cut to a bound of its own before escaping (at most four
 * bytes out per byte in), so every record fits. */
#define PROTOCOL_RECORD_MAX 4096
/* The most bytes of a report one "data" record carries. */
#define PROTOCOL_DATA_CHUNK 512
/* A frame splits into at most this many fields per record. */
#define PROTOCOL_FIELDS_MAX 16

/* ------------------------------------------------------------ escaping */

/* Undoes the escaping of a field in place (the text only shrinks): the text
 * escaper of lib/json.h writes every field, and this takes only what it
 * writes.  -EBADMSG if s is not that: a raw control byte, DEL, invalid
 * UTF-8 or a deceptive code point (oomkit__text_check()), a "\" not
 * followed by "\" or "xNN" (lower-case hex), an escape that did not need to
 * be one ("\x41"), or an escaped NUL, which no field may hold. */
int protocol_unescape(char *s);

/* ------------------------------------------------------------ requests */

enum protocol_verb {
	PROTOCOL_UNKNOWN = 0,
	PROTOCOL_STATUS,  /* status */
	PROTOCOL_PS,	  /* ps [JOB] */
	PROTOCOL_REPORTS, /* reports */
	PROTOCOL_REPORT,  /* report ID */
	PROTOCOL_RUN,	  /* run JOB: move the requesting process into JOB */
	PROTOCOL_PROMPT,  /* prompt: send this connection the questions for a person */
	PROTOCOL_ANSWER,  /* answer ID kill PID | answer ID grow | answer ID kernel | answer ID chain */
	PROTOCOL_RELOAD,  /* reload */
	PROTOCOL_EXPLAIN, /* explain [JOB]: what the chain would do now, as JSON in data records */
	PROTOCOL__VERBS,
};

enum protocol_choice {
	PROTOCOL_CHOICE_KILL = 1u << 0,	  /* kill one of the candidates */
	PROTOCOL_CHOICE_GROW = 1u << 1,	  /* raise the job's limit (jobs only) */
	PROTOCOL_CHOICE_KERNEL = 1u << 2, /* hand the OOM to the kernel's killer now */
	PROTOCOL_CHOICE_CHAIN = 1u << 3,  /* let the system decide: this peer declines to choose */
};

struct protocol_answer {
	unsigned id;		     /* the question's id (its report's) */
	enum protocol_choice choice; /* exactly one */
	pid_t pid;		     /* PROTOCOL_CHOICE_KILL: the candidate; else 0 */
};

struct protocol_request {
	enum protocol_verb verb;
	char job[PROTOCOL_NAME_MAX]; /* ps, explain (empty: the machine), run */
	unsigned id;		     /* report */
	struct protocol_answer answer;
};

/* The verb of a request line (up to its first space), PROTOCOL_UNKNOWN if none. */
enum protocol_verb protocol_verb_of(const char *line, size_t len);

/* The verb's name ("status"), NULL for PROTOCOL_UNKNOWN. */
const char *protocol_verb_name(enum protocol_verb verb);

/* How a verb is written, for an error message: "answer ID kill PID | ...". */
const char *protocol_usage(enum protocol_verb verb);

/* Reads one request line (without its newline; a trailing "\r" is allowed).
 * Returns 0; -EOPNOTSUPP for an unknown verb; -EINVAL if the verb's
 * arguments are missing, extra or malformed (protocol_verb_of() names the
 * verb for the usage); -EBADMSG if the line holds a NUL or a control byte,
 * or is longer than a request may be. */
int protocol_parse_request(const char *line, size_t len, struct protocol_request *ret);

/* Writes the request line, newline included, into buf.  Returns its length,
 * -EINVAL if the request cannot be written (an empty or malformed job name,
 * an answer without one choice), -ENOBUFS if buf is too small. */
int protocol_format_request(const struct protocol_request *req, char *buf, size_t len);

/* "ID kill PID" / "ID grow" / "ID kernel" / "ID chain": an answer as the report records
 * it.  Returns the length or -EINVAL / -ENOBUFS. */
int protocol_format_answer(const struct protocol_answer *a, char *buf, size_t len);

/* ------------------------------------------------------------ records */

/* One record of each kind.  Formatting reads the strings; parsing points
 * them into the frame's buffer.  A uint64_t that may be unlimited is
 * UINT64_MAX, written "max". */
struct protocol_machine {
	const char *cgroup;
	uint64_t usage_bytes, limit_bytes;
	bool under_oom;
	uint64_t ooms, kills;
	const char *last_action;
};

struct protocol_job {
	const char *name;
	unsigned priority;
	uint64_t usage_bytes, limit_bytes, limit_max_bytes, expect_bytes;
	bool under_oom;
	uint64_t ooms, kills;
	unsigned processes;
	bool has_owner;
	uid_t owner;
	const char *chain; /* "grow, kill-lowest, kernel" */
	const char *last_action;
	const char *instance; /* an instance's cgroup (relative to the root); "-": the job's own */
};

struct protocol_proc {
	pid_t pid;
	const char *job; /* "-": none */
	uint64_t rss_bytes, swap_bytes;
	int oom_score_adj;
	uid_t uid;
	const char *comm, *cmdline;
	const char *instance; /* the instance of job it is in (its cgroup); "-": none */
};

struct protocol_report {
	unsigned id;
	const char *scope;
	uint64_t bytes;
	uint64_t time_ms; /* when it was written: ms since the epoch, sent as seconds "S.mmm" */
	const char *action;
	pid_t victim_pid; /* 0: none */
	const char *reason;
	/* An instance's cgroup's last name; NULL (sent "-") for a job or the
	 * machine, and from a daemon before instances. */
	const char *instance;
};

/* The first line of a prompt frame, then a candidate record per process,
 * then the choices record. */
struct protocol_question {
	unsigned id;
	const char *scope; /* "machine" or the job's name */
	uint64_t timeout_ms;
	/* A job's OOM: its memory and its limit when it was asked (what a
	 * person weighs "give it more memory" by).  Sent only with has_usage;
	 * a question from an older daemon, or of the machine, has none. */
	bool has_usage;
	uint64_t usage_bytes, limit_bytes;
};

struct protocol_candidate {
	pid_t pid;
	const char *job;
	unsigned priority;
	uint64_t rss_bytes;
	const char *comm;
	uid_t uid;
	const char *place; /* "prefer", "none" or "avoid" (protected ones are not offered) */
	const char *rule;  /* the rule that placed it; "-": none */
};

/* What was done about OOM id, sent to the prompt connections it concerns: a
 * frame of its own, "done" first, then (to those who may see the details)
 * the victim record and a text record with the result. */
struct protocol_done {
	unsigned id;
	const char *scope;  /* "machine" or the job's name */
	const char *action; /* "kill", "kill-job", "grow", "kernel", "none" */
	const char *by;	    /* "user NAME", "policy NAME", "nobody" */
};

struct protocol_victim {
	pid_t pid;
	const char *job; /* its job, "(other)" for none */
	uint64_t bytes;	 /* its memory (a whole job's for kill-job) */
	const char *comm;
	uid_t uid;
};

/* ------------------------------------------------------------ writing */

/* The caller's output buffer.  Each protocol_put_*() appends one whole line
 * or nothing (-ENOBUFS: it did not fit; free space and retry), so a reply
 * can be produced in pieces as the peer reads it.  A line that could be
 * taken for the end marker (starting with ".") is sent with one more ".". */
struct protocol_buf {
	char *data;
	size_t len, cap;
};

int protocol_put_ok(struct protocol_buf *b);
/* "error MESSAGE", the message escaped. */
int protocol_put_error(struct protocol_buf *b, const char *message);
/* A line holding only ".": the end of a frame. */
int protocol_put_end(struct protocol_buf *b);
/* One record of free text ("killed 42 (hog)"), the answer's verdict. */
int protocol_put_text(struct protocol_buf *b, const char *text);
int protocol_put_machine(struct protocol_buf *b, const struct protocol_machine *m);
int protocol_put_job(struct protocol_buf *b, const struct protocol_job *j);
int protocol_put_proc(struct protocol_buf *b, const struct protocol_proc *p);
int protocol_put_report(struct protocol_buf *b, const struct protocol_report *r);
/* Up to PROTOCOL_DATA_CHUNK bytes of a report; returns how many it took, or -ENOBUFS. */
int protocol_put_data(struct protocol_buf *b, const char *bytes, size_t n);
int protocol_put_question(struct protocol_buf *b, const struct protocol_question *q);
int protocol_put_candidate(struct protocol_buf *b, const struct protocol_candidate *c);
/* choices: a mask of enum protocol_choice. */
int protocol_put_choices(struct protocol_buf *b, unsigned choices);
int protocol_put_done(struct protocol_buf *b, const struct protocol_done *o);
int protocol_put_victim(struct protocol_buf *b, const struct protocol_victim *v);

/* ------------------------------------------------------------ reading */

/* Where the first frame in buf ends: the offset just past its "." line, or
 * 0 while it is incomplete. */
size_t protocol_frame_end(const char *buf, size_t len);

/* The lines of one frame (buf[0, protocol_frame_end())), split in place. */
struct protocol_reader {
	char *next, *end;
};

void protocol_reader_init(struct protocol_reader *r, char *frame, size_t frame_len);
/* The next line, NUL-terminated, its dot-stuffing undone; NULL after the
 * last line before the end marker. */
char *protocol_next_line(struct protocol_reader *r);

enum protocol_status_kind {
	PROTOCOL_OK = 1,
	PROTOCOL_ERROR,	   /* message set */
	PROTOCOL_QUESTION, /* question set: the frame is a prompt */
	PROTOCOL_DONE,	   /* done set: what was done about an OOM */
};

struct protocol_status {
	enum protocol_status_kind kind;
	const char *message;
	struct protocol_question question;
	struct protocol_done done;
};

/* Reads a frame's first line (in place).  -EBADMSG if it is none of the four. */
int protocol_parse_status(char *line, struct protocol_status *ret);

/* A record split at its tabs, each field unescaped, in place. */
struct protocol_record {
	size_t n;
	char *field[PROTOCOL_FIELDS_MAX];
};

/* -EBADMSG: a field not in canonical form, or more than PROTOCOL_FIELDS_MAX. */
int protocol_parse_record(char *line, struct protocol_record *ret);

/* Each reads one kind of record; -EBADMSG if r is not one, or malformed.
 * Strings point into r's fields. */
int protocol_parse_machine(const struct protocol_record *r, struct protocol_machine *ret);
int protocol_parse_job(const struct protocol_record *r, struct protocol_job *ret);
int protocol_parse_proc(const struct protocol_record *r, struct protocol_proc *ret);
int protocol_parse_report(const struct protocol_record *r, struct protocol_report *ret);
int protocol_parse_text(const struct protocol_record *r, const char **ret);
/* The chunk: *ret points at it, *ret_len its length (it may hold any byte but NUL). */
int protocol_parse_data(const struct protocol_record *r, const char **ret, size_t *ret_len);
int protocol_parse_candidate(const struct protocol_record *r, struct protocol_candidate *ret);
int protocol_parse_choices(const struct protocol_record *r, unsigned *ret);
int protocol_parse_victim(const struct protocol_record *r, struct protocol_victim *ret);

#endif
