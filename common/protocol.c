/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol.c - the control socket's wire protocol (see protocol.h and
 * docs/protocol.md): escaping, requests, answers, who may answer, and the
 * records of replies and prompts, written and read.  No allocation: the
 * daemon writes replies into fixed buffers, piece by piece.
 */
#include "common/protocol.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "json.h" /* lib/json.h: the text escaper */

/* How many bytes of each kind of string field a record carries (before
 * escaping); longer ones are cut.  With four bytes out per byte in, the
 * longest record (machine: a cgroup path and a text) stays within
 * PROTOCOL_RECORD_MAX. */
#define CUT_NAME 64
#define CUT_COMM 16
#define CUT_CMDLINE 256
#define CUT_PATH 512
#define CUT_TEXT 256
#define CUT_WORD 32

/* ------------------------------------------------------------ escaping */

/* The text escaper is lib/json.h's, the one for every untrusted byte. */
int protocol_unescape(char *s)
{
	size_t n = strlen(s);

	if (oomkit__text_check(s, n) < 0)
		return -EBADMSG;
	int k = oomkit__unescape_text(s, n, s, n);
	/* No field holds a NUL: it would cut the text short here. */
	if (k < 0 || memchr(s, '\0', (size_t)k))
		return -EBADMSG;
	s[k] = '\0';
	return 0;
}

/* ------------------------------------------------------------ numbers */

/* Decimal, no sign, no leading zero (but "0"), within max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* "max" is UINT64_MAX; UINT64_MAX itself is only ever written "max". */
static int parse_size(const char *s, uint64_t *ret)
{
	if (strcmp(s, "max") == 0) {
		*ret = UINT64_MAX;
		return 0;
	}
	return parse_u64(s, UINT64_MAX - 1, ret);
}

static int parse_uint(const char *s, unsigned max, unsigned *ret)
{
	uint64_t v;
	int r = parse_u64(s, max, &v);
	if (r == 0)
		*ret = (unsigned)v;
	return r;
}

static int parse_pid(const char *s, pid_t *ret)
{
	uint64_t v;
	int r = parse_u64(s, INT_MAX, &v);
	if (r == 0 && v == 0)
		r = -EINVAL;
	if (r == 0)
		*ret = (pid_t)v;
	return r;
}

static int parse_int(const char *s, int *ret)
{
	uint64_t v;
	bool neg = s[0] == '-';
	int r = parse_u64(s + neg, neg ? (uint64_t)INT_MAX + 1 : INT_MAX, &v);
	if (r == 0 && neg && v == 0)
		r = -EINVAL; /* "-0" */
	if (r == 0)
		*ret = neg ? (int)(-(int64_t)v) : (int)v;
	return r;
}

/* "S.mmm" (exactly three decimals) as milliseconds. */
static int parse_ms(const char *s, uint64_t *ret)
{
	char whole[24];
	const char *dot = strchr(s, '.');
	uint64_t sec, frac;

	if (!dot || (size_t)(dot - s) >= sizeof(whole) || strlen(dot + 1) != 3 || dot[1] < '0' ||
	    dot[1] > '9')
		return -EINVAL;
	memcpy(whole, s, (size_t)(dot - s));
	whole[dot - s] = '\0';
	/* The decimals may start with zeros: parse them as digits, not a number. */
	for (int i = 1; i <= 3; i++)
		if (dot[i] < '0' || dot[i] > '9')
			return -EINVAL;
	frac = (uint64_t)(dot[1] - '0') * 100 + (uint64_t)(dot[2] - '0') * 10 + (uint64_t)(dot[3] - '0');
	if (parse_u64(whole, (UINT64_MAX - frac) / 1000, &sec) < 0)
		return -EINVAL;
	*ret = sec * 1000 + frac;
	return 0;
}

static int parse_bool(const char *s, bool *ret)
{
	if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
		return -EINVAL;
	*ret = s[0] == '1';
	return 0;
}

/* ------------------------------------------------------------ requests */

static const char *const verb_names[PROTOCOL__VERBS] = {
    [PROTOCOL_STATUS] = "status", [PROTOCOL_PS] = "ps",		[PROTOCOL_REPORTS] = "reports",
    [PROTOCOL_REPORT] = "report", [PROTOCOL_RUN] = "run",	[PROTOCOL_PROMPT] = "prompt",
    [PROTOCOL_ANSWER] = "answer", [PROTOCOL_RELOAD] = "reload", [PROTOCOL_EXPLAIN] = "explain",
};

static const char *const verb_usage[PROTOCOL__VERBS] = {
    [PROTOCOL_UNKNOWN] =
	"status | ps [JOB] | reports | report ID | run JOB | prompt | answer ID ... | reload | explain [JOB]",
    [PROTOCOL_STATUS] = "status",
    [PROTOCOL_PS] = "ps [JOB]",
    [PROTOCOL_REPORTS] = "reports",
    [PROTOCOL_REPORT] = "report ID",
    [PROTOCOL_RUN] = "run JOB",
    [PROTOCOL_PROMPT] = "prompt",
    [PROTOCOL_ANSWER] = "answer ID kill PID | answer ID grow | answer ID kernel | answer ID chain",
    [PROTOCOL_RELOAD] = "reload",
    [PROTOCOL_EXPLAIN] = "explain [JOB]",
};

enum protocol_verb protocol_verb_of(const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len);
	size_t n = sp ? (size_t)(sp - line) : len;

	for (int v = 1; v < PROTOCOL__VERBS; v++)
		if (strlen(verb_names[v]) == n && memcmp(verb_names[v], line, n) == 0)
			return (enum protocol_verb)v;
	return PROTOCOL_UNKNOWN;
}

const char *protocol_verb_name(enum protocol_verb verb)
{
	return verb > PROTOCOL_UNKNOWN && verb < PROTOCOL__VERBS ? verb_names[verb] : NULL;
}

const char *protocol_usage(enum protocol_verb verb)
{
	return verb_usage[(unsigned)verb < PROTOCOL__VERBS ? verb : PROTOCOL_UNKNOWN];
}

/* A job name as a request carries it: printable ASCII without space, and short. */
static bool valid_job(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= PROTOCOL_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f)
			return false;
	return true;
}

/* Splits a copy of a request at single spaces; returns the word count, or
 * -EINVAL for an empty word (two spaces, a leading or trailing one). */
static int words(char *s, char **w, int max)
{
	int n = 0;

	for (;;) {
		if (n == max)
			return -EINVAL;
		w[n++] = s;
		char *sp = strchr(s, ' ');
		if (sp)
			*sp = '\0';
		if (!*s)
			return -EINVAL;
		if (!sp)
			return n;
		s = sp + 1;
	}
}

static int parse_answer_words(char **w, int n, struct protocol_answer *a)
{
	*a = (struct protocol_answer){0};
	if (n < 3 || parse_uint(w[1], UINT_MAX, &a->id) < 0)
		return -EINVAL;
	if (strcmp(w[2], "kill") == 0 && n == 4) {
		a->choice = PROTOCOL_CHOICE_KILL;
		return parse_pid(w[3], &a->pid);
	}
	if (n != 3)
		return -EINVAL;
	if (strcmp(w[2], "grow") == 0)
		a->choice = PROTOCOL_CHOICE_GROW;
	else if (strcmp(w[2], "kernel") == 0)
		a->choice = PROTOCOL_CHOICE_KERNEL;
	else if (strcmp(w[2], "chain") == 0)
		a->choice = PROTOCOL_CHOICE_CHAIN;
	else
		return -EINVAL;
	return 0;
}

static int parse_args(char **w, int n, struct protocol_request *req)
{
	switch (req->verb) {
	case PROTOCOL_PS:
	case PROTOCOL_EXPLAIN:
		if (n == 1)
			return 0;
		/* fallthrough */
	case PROTOCOL_RUN:
		if (n != 2 || !valid_job(w[1]))
			return -EINVAL;
		snprintf(req->job, sizeof(req->job), "%s", w[1]);
		return 0;
	case PROTOCOL_REPORT:
		return n == 2 ? parse_uint(w[1], UINT_MAX, &req->id) : -EINVAL;
	case PROTOCOL_ANSWER:
		return parse_answer_words(w, n, &req->answer);
	default:
		return n == 1 ? 0 : -EINVAL;
	}
}

int protocol_parse_request(const char *line, size_t len, struct protocol_request *ret)
{
	struct protocol_request req = {0};
	char copy[PROTOCOL_REQUEST_MAX], *w[5];
	int n, r;

	if (len && line[len - 1] == '\r')
		len--;
	if (len >= sizeof(copy))
		return -EBADMSG;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
			return -EBADMSG;
	req.verb = protocol_verb_of(line, len);
	if (req.verb == PROTOCOL_UNKNOWN)
		return -EOPNOTSUPP;
	memcpy(copy, line, len);
	copy[len] = '\0';
	if ((n = words(copy, w, 5)) < 0)
		return n;
	if ((r = parse_args(w, n, &req)) < 0)
		return r;
	*ret = req;
	return 0;
}

int protocol_format_answer(const struct protocol_answer *a, char *buf, size_t len)
{
	int n;

	if (a->choice == PROTOCOL_CHOICE_KILL && a->pid > 0)
		n = snprintf(buf, len, "%u kill %d", a->id, (int)a->pid);
	else if (a->choice == PROTOCOL_CHOICE_GROW || a->choice == PROTOCOL_CHOICE_KERNEL ||
		 a->choice == PROTOCOL_CHOICE_CHAIN)
		n = snprintf(buf, len, "%u %s", a->id,
			     a->choice == PROTOCOL_CHOICE_GROW	   ? "grow"
			     : a->choice == PROTOCOL_CHOICE_KERNEL ? "kernel"
								   : "chain");
	else
		return -EINVAL;
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENOBUFS : n;
}

int protocol_format_request(const struct protocol_request *req, char *buf, size_t len)
{
	const char *name = protocol_verb_name(req->verb);
	char arg[PROTOCOL_REQUEST_MAX] = "";
	int n;

	if (!name)
		return -EINVAL;
	if (req->verb == PROTOCOL_RUN ||
	    ((req->verb == PROTOCOL_PS || req->verb == PROTOCOL_EXPLAIN) && req->job[0])) {
		if (!memchr(req->job, '\0', sizeof(req->job)) || !valid_job(req->job))
			return -EINVAL;
		snprintf(arg, sizeof(arg), " %s", req->job);
	} else if (req->verb == PROTOCOL_REPORT) {
		snprintf(arg, sizeof(arg), " %u", req->id);
	} else if (req->verb == PROTOCOL_ANSWER) {
		arg[0] = ' ';
		if ((n = protocol_format_answer(&req->answer, arg + 1, sizeof(arg) - 1)) < 0)
			return n;
	}
	n = snprintf(buf, len, "%s%s\n", name, arg);
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENOBUFS : n;
}

/* ------------------------------------------------------------ writing */

struct line {
	char buf[PROTOCOL_RECORD_MAX];
	size_t len;
	bool overflow;
};

static void l_raw(struct line *l, const char *s, size_t n)
{
	if (l->len + n + 2 > sizeof(l->buf)) { /* room for "\n" and the NUL */
		l->overflow = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* s cut to max bytes (at a UTF-8 boundary where it can) and escaped. */
static void l_esc(struct line *l, const char *s, size_t max)
{
	size_t n;

	s = s ? s : "";
	n = strnlen(s, max + 1);
	if (n > max) {
		n = max;
		/* Back off continuation bytes so a cut sequence is dropped whole. */
		for (size_t back = 0; back < 3 && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80; back++)
			n--;
	}
	if (l->overflow)
		return;
	/* Room for the newline after it and the NUL, as l_raw() keeps. */
	size_t room = sizeof(l->buf) - l->len - 1, k = oomkit__escape_text(l->buf + l->len, room, s, n);
	if (k >= room)
		l->overflow = true;
	else
		l->len += k;
}

/* A field: a tab (unless it is the record's first), then the escaped text. */
static void l_str(struct line *l, const char *s, size_t max)
{
	if (l->len)
		l_raw(l, "\t", 1);
	l_esc(l, s, max);
}

static void l_u64(struct line *l, uint64_t v)
{
	char num[24];
	int n =
	    v == UINT64_MAX ? snprintf(num, sizeof(num), "max") : snprintf(num, sizeof(num), "%" PRIu64, v);
	l_raw(l, "\t", 1);
	l_raw(l, num, (size_t)n);
}

/* Milliseconds as seconds with three decimals: "1700000000.123". */
static void l_ms(struct line *l, uint64_t ms)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%" PRIu64 ".%03u", ms / 1000u, (unsigned)(ms % 1000u));
	l_raw(l, "\t", 1);
	l_raw(l, num, (size_t)n);
}

static void l_i64(struct line *l, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);
	l_raw(l, "\t", 1);
	l_raw(l, num, (size_t)n);
}

/* Appends the line, dot-stuffed, with its newline: whole or not at all. */
static int put_line(struct protocol_buf *b, const char *s, size_t n)
{
	bool stuff = n > 0 && s[0] == '.';

	if (b->cap - b->len < n + stuff + 1)
		return -ENOBUFS;
	if (stuff)
		b->data[b->len++] = '.';
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len++] = '\n';
	return 0;
}

static int put(struct protocol_buf *b, const struct line *l)
{
	return l->overflow ? -E2BIG : put_line(b, l->buf, l->len);
}

int protocol_put_ok(struct protocol_buf *b)
{
	return put_line(b, "ok", 2);
}

int protocol_put_end(struct protocol_buf *b)
{
	return b->cap - b->len < 2 ? -ENOBUFS : (b->data[b->len++] = '.', b->data[b->len++] = '\n', 0);
}

int protocol_put_error(struct protocol_buf *b, const char *message)
{
	struct line l = {.len = 0};

	/* The message follows a space: "error MESSAGE", not a record. */
	l_raw(&l, "error ", 6);
	l_esc(&l, message, CUT_TEXT);
	return put(b, &l);
}

int protocol_put_text(struct protocol_buf *b, const char *text)
{
	struct line l = {.len = 0};

	l_str(&l, "text", CUT_WORD);
	l_str(&l, text, CUT_TEXT);
	return put(b, &l);
}

int protocol_put_machine(struct protocol_buf *b, const struct protocol_machine *m)
{
	struct line l = {.len = 0};

	l_str(&l, "machine", CUT_WORD);
	l_str(&l, m->cgroup, CUT_PATH);
	l_u64(&l, m->usage_bytes);
	l_u64(&l, m->limit_bytes);
	l_u64(&l, m->under_oom);
	l_u64(&l, m->ooms);
	l_u64(&l, m->kills);
	l_str(&l, m->last_action, CUT_TEXT);
	return put(b, &l);
}

int protocol_put_job(struct protocol_buf *b, const struct protocol_job *j)
{
	struct line l = {.len = 0};

	l_str(&l, "job", CUT_WORD);
	l_str(&l, j->name, CUT_NAME);
	l_u64(&l, j->priority);
	l_u64(&l, j->usage_bytes);
	l_u64(&l, j->limit_bytes);
	l_u64(&l, j->limit_max_bytes);
	l_u64(&l, j->expect_bytes);
	l_u64(&l, j->under_oom);
	l_u64(&l, j->ooms);
	l_u64(&l, j->kills);
	l_u64(&l, j->processes);
	if (j->has_owner)
		l_u64(&l, j->owner);
	else
		l_str(&l, "-", 1);
	l_str(&l, j->chain, CUT_TEXT);
	l_str(&l, j->last_action, CUT_TEXT);
	l_str(&l, j->instance ? j->instance : "-", CUT_TEXT);
	return put(b, &l);
}

int protocol_put_proc(struct protocol_buf *b, const struct protocol_proc *p)
{
	struct line l = {.len = 0};

	l_str(&l, "proc", CUT_WORD);
	l_i64(&l, p->pid);
	l_str(&l, p->job, CUT_NAME);
	l_u64(&l, p->rss_bytes);
	l_u64(&l, p->swap_bytes);
	l_i64(&l, p->oom_score_adj);
	l_u64(&l, p->uid);
	l_str(&l, p->comm, CUT_COMM);
	l_str(&l, p->cmdline, CUT_CMDLINE);
	l_str(&l, p->instance ? p->instance : "-", CUT_TEXT);
	return put(b, &l);
}

int protocol_put_report(struct protocol_buf *b, const struct protocol_report *r)
{
	struct line l = {.len = 0};

	l_str(&l, "report", CUT_WORD);
	l_u64(&l, r->id);
	l_str(&l, r->scope, CUT_NAME);
	l_u64(&l, r->bytes);
	l_ms(&l, r->time_ms);
	l_str(&l, r->action, CUT_WORD);
	l_i64(&l, r->victim_pid);
	l_str(&l, r->reason, CUT_TEXT);
	l_str(&l, r->instance ? r->instance : "-", CUT_TEXT);
	return put(b, &l);
}

int protocol_put_data(struct protocol_buf *b, const char *bytes, size_t n)
{
	struct line l = {.len = 0};
	const char *nul = memchr(bytes, '\0', n);

	/* No field holds a NUL (a report never does): the chunk stops before one. */
	if (nul)
		n = (size_t)(nul - bytes);
	if (n == 0)
		return -EINVAL;
	if (n > PROTOCOL_DATA_CHUNK)
		n = PROTOCOL_DATA_CHUNK;
	l_str(&l, "data", CUT_WORD);
	l_raw(&l, "\t", 1);
	/* Any byte goes: escaped, and cut nowhere (a chunk may end inside a
	 * UTF-8 sequence; its bytes are then escaped one by one). */
	size_t room = sizeof(l.buf) - l.len - 1, k = oomkit__escape_text(l.buf + l.len, room, bytes, n);
	if (k >= room)
		return -E2BIG;
	l.len += k;
	int r = put(b, &l);
	return r < 0 ? r : (int)n;
}

int protocol_put_question(struct protocol_buf *b, const struct protocol_question *q)
{
	struct line l = {.len = 0};

	l_str(&l, "oom", CUT_WORD);
	l_u64(&l, q->id);
	l_str(&l, q->scope, CUT_NAME);
	l_u64(&l, q->timeout_ms);
	if (q->has_usage) {
		l_u64(&l, q->usage_bytes);
		l_u64(&l, q->limit_bytes);
	}
	return put(b, &l);
}

int protocol_put_candidate(struct protocol_buf *b, const struct protocol_candidate *c)
{
	struct line l = {.len = 0};

	l_str(&l, "candidate", CUT_WORD);
	l_i64(&l, c->pid);
	l_str(&l, c->job, CUT_NAME);
	l_u64(&l, c->priority);
	l_u64(&l, c->rss_bytes);
	l_str(&l, c->comm, CUT_COMM);
	l_u64(&l, c->uid);
	l_str(&l, c->place ? c->place : "none", CUT_WORD);
	l_str(&l, c->rule ? c->rule : "-", CUT_TEXT);
	return put(b, &l);
}

int protocol_put_choices(struct protocol_buf *b, unsigned choices)
{
	struct line l = {.len = 0};

	l_str(&l, "choices", CUT_WORD);
	if (choices & PROTOCOL_CHOICE_KILL)
		l_str(&l, "kill", CUT_WORD);
	if (choices & PROTOCOL_CHOICE_GROW)
		l_str(&l, "grow", CUT_WORD);
	if (choices & PROTOCOL_CHOICE_KERNEL)
		l_str(&l, "kernel", CUT_WORD);
	if (choices & PROTOCOL_CHOICE_CHAIN)
		l_str(&l, "chain", CUT_WORD);
	return put(b, &l);
}

int protocol_put_done(struct protocol_buf *b, const struct protocol_done *o)
{
	struct line l = {.len = 0};

	l_str(&l, "done", CUT_WORD);
	l_u64(&l, o->id);
	l_str(&l, o->scope, CUT_NAME);
	l_str(&l, o->action, CUT_WORD);
	l_str(&l, o->by, CUT_NAME);
	return put(b, &l);
}

int protocol_put_victim(struct protocol_buf *b, const struct protocol_victim *v)
{
	struct line l = {.len = 0};

	l_str(&l, "victim", CUT_WORD);
	l_i64(&l, v->pid);
	l_str(&l, v->job, CUT_NAME);
	l_u64(&l, v->bytes);
	l_str(&l, v->comm, CUT_NAME);
	l_u64(&l, v->uid);
	return put(b, &l);
}

/* ------------------------------------------------------------ reading */

size_t protocol_frame_end(const char *buf, size_t len)
{
	for (size_t p = 0; p + 1 < len;) {
		if (buf[p] == '.' && buf[p + 1] == '\n')
			return p + 2;
		const char *nl = memchr(buf + p, '\n', len - p);
		if (!nl)
			return 0;
		p = (size_t)(nl - buf) + 1;
	}
	return 0;
}

void protocol_reader_init(struct protocol_reader *r, char *frame, size_t frame_len)
{
	r->next = frame;
	r->end = frame + frame_len;
}

char *protocol_next_line(struct protocol_reader *r)
{
	char *line = r->next, *nl;

	if (line >= r->end || !(nl = memchr(line, '\n', (size_t)(r->end - line))))
		return NULL;
	*nl = '\0';
	r->next = nl + 1;
	if (line[0] == '.' && line[1] == '\0') {
		r->next = r->end;
		return NULL;
	}
	return line[0] == '.' ? line + 1 : line;
}

int protocol_parse_record(char *line, struct protocol_record *ret)
{
	struct protocol_record rec = {0};

	for (char *p = line;;) {
		if (rec.n == PROTOCOL_FIELDS_MAX)
			return -EBADMSG;
		rec.field[rec.n++] = p;
		char *tab = strchr(p, '\t');
		if (tab)
			*tab = '\0';
		if (protocol_unescape(p) < 0)
			return -EBADMSG;
		if (!tab)
			break;
		p = tab + 1;
	}
	*ret = rec;
	return 0;
}

/* r is a record of this kind with at least n fields (later versions may add more). */
static bool is(const struct protocol_record *r, const char *kind, size_t n)
{
	return r->n >= n && strcmp(r->field[0], kind) == 0;
}

static int parse_question(const struct protocol_record *r, struct protocol_question *ret)
{
	struct protocol_question q = {0};

	if (!is(r, "oom", 4) || parse_uint(r->field[1], UINT_MAX, &q.id) < 0 ||
	    parse_u64(r->field[3], UINT64_MAX, &q.timeout_ms) < 0)
		return -EBADMSG;
	q.scope = r->field[2];
	/* The job's usage and limit, when the daemon sends them. */
	if (r->n >= 6) {
		if (parse_size(r->field[4], &q.usage_bytes) < 0 ||
		    parse_size(r->field[5], &q.limit_bytes) < 0)
			return -EBADMSG;
		q.has_usage = true;
	}
	*ret = q;
	return 0;
}

static int parse_done(const struct protocol_record *r, struct protocol_done *ret)
{
	struct protocol_done o = {0};

	if (!is(r, "done", 5) || parse_uint(r->field[1], UINT_MAX, &o.id) < 0)
		return -EBADMSG;
	o.scope = r->field[2];
	o.action = r->field[3];
	o.by = r->field[4];
	*ret = o;
	return 0;
}

int protocol_parse_status(char *line, struct protocol_status *ret)
{
	struct protocol_status st = {0};
	struct protocol_record rec;

	if (strcmp(line, "ok") == 0) {
		st.kind = PROTOCOL_OK;
	} else if (strncmp(line, "error ", 6) == 0) {
		if (protocol_unescape(line + 6) < 0)
			return -EBADMSG;
		st.kind = PROTOCOL_ERROR;
		st.message = line + 6;
	} else if (strncmp(line, "done\t", 5) == 0) {
		if (protocol_parse_record(line, &rec) < 0 || parse_done(&rec, &st.done) < 0)
			return -EBADMSG;
		st.kind = PROTOCOL_DONE;
	} else {
		if (protocol_parse_record(line, &rec) < 0 || parse_question(&rec, &st.question) < 0)
			return -EBADMSG;
		st.kind = PROTOCOL_QUESTION;
	}
	*ret = st;
	return 0;
}

int protocol_parse_machine(const struct protocol_record *r, struct protocol_machine *ret)
{
	struct protocol_machine m = {0};

	if (!is(r, "machine", 8) || parse_size(r->field[2], &m.usage_bytes) < 0 ||
	    parse_size(r->field[3], &m.limit_bytes) < 0 || parse_bool(r->field[4], &m.under_oom) < 0 ||
	    parse_u64(r->field[5], UINT64_MAX - 1, &m.ooms) < 0 ||
	    parse_u64(r->field[6], UINT64_MAX - 1, &m.kills) < 0)
		return -EBADMSG;
	m.cgroup = r->field[1];
	m.last_action = r->field[7];
	*ret = m;
	return 0;
}

int protocol_parse_job(const struct protocol_record *r, struct protocol_job *ret)
{
	struct protocol_job j = {0};
	unsigned owner = 0;

	if (!is(r, "job", 14) || parse_uint(r->field[2], UINT_MAX, &j.priority) < 0 ||
	    parse_size(r->field[3], &j.usage_bytes) < 0 || parse_size(r->field[4], &j.limit_bytes) < 0 ||
	    parse_size(r->field[5], &j.limit_max_bytes) < 0 || parse_size(r->field[6], &j.expect_bytes) < 0 ||
	    parse_bool(r->field[7], &j.under_oom) < 0 ||
	    parse_u64(r->field[8], UINT64_MAX - 1, &j.ooms) < 0 ||
	    parse_u64(r->field[9], UINT64_MAX - 1, &j.kills) < 0 ||
	    parse_uint(r->field[10], UINT_MAX - 1, &j.processes) < 0)
		return -EBADMSG;
	if (strcmp(r->field[11], "-") != 0) {
		if (parse_uint(r->field[11], UINT_MAX - 1, &owner) < 0)
			return -EBADMSG;
		j.has_owner = true;
		j.owner = owner;
	}
	j.name = r->field[1];
	j.chain = r->field[12];
	j.last_action = r->field[13];
	/* A daemon before instances sends none. */
	j.instance = r->n > 14 ? r->field[14] : "-";
	*ret = j;
	return 0;
}

int protocol_parse_proc(const struct protocol_record *r, struct protocol_proc *ret)
{
	struct protocol_proc p = {0};
	unsigned uid = 0;

	if (!is(r, "proc", 9) || parse_pid(r->field[1], &p.pid) < 0 ||
	    parse_size(r->field[3], &p.rss_bytes) < 0 || parse_size(r->field[4], &p.swap_bytes) < 0 ||
	    parse_int(r->field[5], &p.oom_score_adj) < 0 || parse_uint(r->field[6], UINT_MAX - 1, &uid) < 0)
		return -EBADMSG;
	p.uid = uid;
	p.job = r->field[2];
	p.comm = r->field[7];
	p.cmdline = r->field[8];
	p.instance = r->n > 9 ? r->field[9] : "-";
	*ret = p;
	return 0;
}

int protocol_parse_report(const struct protocol_record *r, struct protocol_report *ret)
{
	struct protocol_report rep = {0};
	int victim;

	if (!is(r, "report", 8) || parse_uint(r->field[1], UINT_MAX, &rep.id) < 0 ||
	    parse_size(r->field[3], &rep.bytes) < 0 || parse_ms(r->field[4], &rep.time_ms) < 0 ||
	    parse_int(r->field[6], &victim) < 0 || victim < 0)
		return -EBADMSG;
	rep.victim_pid = victim;
	rep.scope = r->field[2];
	rep.action = r->field[5];
	rep.reason = r->field[7];
	/* A daemon before instances sends none. */
	rep.instance = r->n > 8 && strcmp(r->field[8], "-") != 0 ? r->field[8] : NULL;
	*ret = rep;
	return 0;
}

int protocol_parse_text(const struct protocol_record *r, const char **ret)
{
	if (!is(r, "text", 2))
		return -EBADMSG;
	*ret = r->field[1];
	return 0;
}

int protocol_parse_data(const struct protocol_record *r, const char **ret, size_t *ret_len)
{
	if (!is(r, "data", 2) || !r->field[1][0])
		return -EBADMSG;
	*ret = r->field[1];
	*ret_len = strlen(r->field[1]);
	return 0;
}

int protocol_parse_candidate(const struct protocol_record *r, struct protocol_candidate *ret)
{
	struct protocol_candidate c = {0};
	unsigned uid = 0;

	if (!is(r, "candidate", 6) || parse_pid(r->field[1], &c.pid) < 0 ||
	    parse_uint(r->field[3], UINT_MAX, &c.priority) < 0 || parse_size(r->field[4], &c.rss_bytes) < 0)
		return -EBADMSG;
	/* The uid came after the first version: without it, the candidate is root's to answer. */
	if (r->n >= 7 && parse_uint(r->field[6], UINT_MAX - 1, &uid) < 0)
		return -EBADMSG;
	c.uid = uid;
	c.job = r->field[2];
	c.comm = r->field[5];
	/* The rules came later still: without them, placed by none. */
	c.place = r->n >= 9 ? r->field[7] : "none";
	c.rule = r->n >= 9 ? r->field[8] : "-";
	*ret = c;
	return 0;
}

int protocol_parse_choices(const struct protocol_record *r, unsigned *ret)
{
	unsigned mask = 0;

	if (!is(r, "choices", 1))
		return -EBADMSG;
	for (size_t i = 1; i < r->n; i++) {
		if (strcmp(r->field[i], "kill") == 0)
			mask |= PROTOCOL_CHOICE_KILL;
		else if (strcmp(r->field[i], "grow") == 0)
			mask |= PROTOCOL_CHOICE_GROW;
		else if (strcmp(r->field[i], "kernel") == 0)
			mask |= PROTOCOL_CHOICE_KERNEL;
		else if (strcmp(r->field[i], "chain") == 0)
			mask |= PROTOCOL_CHOICE_CHAIN;
		/* An unknown choice (a later version's) is left out. */
	}
	*ret = mask;
	return 0;
}

int protocol_parse_victim(const struct protocol_record *r, struct protocol_victim *ret)
{
	struct protocol_victim v = {0};
	unsigned uid = 0;

	if (!is(r, "victim", 6) || parse_pid(r->field[1], &v.pid) < 0 ||
	    parse_size(r->field[3], &v.bytes) < 0 || parse_uint(r->field[5], UINT_MAX - 1, &uid) < 0)
		return -EBADMSG;
	v.job = r->field[2];
	v.comm = r->field[4];
	v.uid = uid;
	*ret = v;
	return 0;
}
