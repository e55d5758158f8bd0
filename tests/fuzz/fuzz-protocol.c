/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the control socket's wire protocol (common/protocol.c) both ways.
 *
 * Formatting: the input, split at NUL bytes, gives the strings of every kind
 * of record (names with newlines, "." lines, tabs, escapes, cut UTF-8); each
 * record written must be one line with no control byte in it, end no frame
 * early, and read back to exactly the strings that went in.
 *
 * Parsing: the input as a frame and as a request line.  Whatever the parser
 * accepts must be in canonical form: escaped again it gives back the same
 * bytes, a record read and written again is the same line, a request
 * formatted again is the same line.
 */
#include "fuzz.h"

#include "json.h"
#include "common/protocol.h"

#define STR_MAX 16 /* no string is cut: every field keeps at least this much */

static char out[1 << 16];

/* The input's first NUL-separated pieces, each at most STR_MAX bytes. */
static void strings(const uint8_t *data, size_t size, char s[8][STR_MAX + 1])
{
	size_t at = 0;

	for (int i = 0; i < 8; i++) {
		size_t n = 0;
		while (at < size && data[at] != 0 && n < STR_MAX)
			s[i][n++] = (char)data[at++];
		s[i][n] = '\0';
		while (at < size && data[at] != 0)
			at++;
		at++;
	}
}

/* One line of b from offset at: no control byte but its newline. */
static void check_line(const struct protocol_buf *b, size_t at)
{
	FUZZ_CHECK(at < b->len && b->data[b->len - 1] == '\n');
	for (size_t i = at; i + 1 < b->len; i++)
		FUZZ_CHECK(b->data[i] == '\t' || ((unsigned char)b->data[i] >= 0x20 && b->data[i] != 0x7f));
}

static char *read_back(struct protocol_buf *b, struct protocol_record *r)
{
	char *line = out + sizeof(out) / 2;

	memcpy(line, b->data, b->len - 1);
	line[b->len - 1] = '\0';
	FUZZ_CHECK(protocol_parse_record(line, r) == 0);
	return line;
}

static void format_direction(const uint8_t *data, size_t size)
{
	char s[8][STR_MAX + 1];
	struct protocol_buf b = {.data = out, .cap = sizeof(out) / 2};
	struct protocol_record r;
	uint64_t num = 0;

	strings(data, size, s);
	memcpy(&num, data, size < sizeof(num) ? size : sizeof(num));

	const struct protocol_proc p = {.pid = (pid_t)(num % 0x7fffffff) + 1,
					.job = s[0],
					.rss_bytes = num,
					.swap_bytes = num >> 3,
					.oom_score_adj = (int)(num % 2001) - 1000,
					.uid = (uid_t)(num % 0xfffffffe),
					.comm = s[1],
					.cmdline = s[2]};
	struct protocol_proc p2;
	FUZZ_CHECK(protocol_put_proc(&b, &p) == 0);
	check_line(&b, 0);
	read_back(&b, &r);
	FUZZ_CHECK(protocol_parse_proc(&r, &p2) == 0);
	FUZZ_CHECK(p2.pid == p.pid && p2.rss_bytes == p.rss_bytes && p2.swap_bytes == p.swap_bytes);
	FUZZ_CHECK(p2.oom_score_adj == p.oom_score_adj && p2.uid == p.uid);
	FUZZ_CHECK(!strcmp(p2.job, p.job) && !strcmp(p2.comm, p.comm) && !strcmp(p2.cmdline, p.cmdline));

	const struct protocol_job j = {.name = s[3],
				       .priority = (unsigned)num,
				       .usage_bytes = num,
				       .limit_bytes = UINT64_MAX,
				       .has_owner = num & 1,
				       .owner = (uid_t)(num % 0xfffffffe),
				       .chain = s[4],
				       .last_action = s[5]};
	struct protocol_job j2;
	b.len = 0;
	FUZZ_CHECK(protocol_put_job(&b, &j) == 0);
	check_line(&b, 0);
	read_back(&b, &r);
	FUZZ_CHECK(protocol_parse_job(&r, &j2) == 0);
	FUZZ_CHECK(j2.priority == j.priority && j2.usage_bytes == j.usage_bytes &&
		   j2.limit_bytes == UINT64_MAX);
	FUZZ_CHECK(j2.has_owner == j.has_owner && (!j.has_owner || j2.owner == j.owner));
	FUZZ_CHECK(!strcmp(j2.name, j.name) && !strcmp(j2.chain, j.chain) &&
		   !strcmp(j2.last_action, j.last_action));

	const struct protocol_candidate c = {.pid = p.pid,
					     .job = s[6],
					     .priority = 1,
					     .rss_bytes = num,
					     .comm = s[7],
					     .uid = p.uid,
					     .place = s[5],
					     .rule = s[4]};
	struct protocol_candidate c2;
	b.len = 0;
	FUZZ_CHECK(protocol_put_candidate(&b, &c) == 0);
	check_line(&b, 0);
	read_back(&b, &r);
	FUZZ_CHECK(protocol_parse_candidate(&r, &c2) == 0);
	FUZZ_CHECK(c2.pid == c.pid && c2.rss_bytes == c.rss_bytes && c2.uid == c.uid);
	FUZZ_CHECK(!strcmp(c2.job, c.job) && !strcmp(c2.comm, c.comm));
	FUZZ_CHECK(!strcmp(c2.place, c.place) && !strcmp(c2.rule, c.rule));

	/* A whole reply: its frame ends exactly at its end marker. */
	b.len = 0;
	FUZZ_CHECK(protocol_put_error(&b, s[1]) == 0);
	FUZZ_CHECK(protocol_put_proc(&b, &p) == 0);
	FUZZ_CHECK(protocol_put_text(&b, s[2]) == 0);
	int took = size ? protocol_put_data(&b, (const char *)data, size) : 0;
	FUZZ_CHECK(took >= 0 || (took == -EINVAL && data[0] == 0));
	FUZZ_CHECK(protocol_put_end(&b) == 0);
	FUZZ_CHECK(protocol_frame_end(b.data, b.len) == b.len);
	struct protocol_reader rd;
	struct protocol_status st;
	protocol_reader_init(&rd, b.data, b.len);
	FUZZ_CHECK(protocol_parse_status(protocol_next_line(&rd), &st) == 0);
	FUZZ_CHECK(st.kind == PROTOCOL_ERROR && !strcmp(st.message, s[1]));
	FUZZ_CHECK(protocol_parse_record(protocol_next_line(&rd), &r) == 0 &&
		   protocol_parse_proc(&r, &p2) == 0);
	const char *text, *chunk;
	size_t chunk_len;
	FUZZ_CHECK(protocol_parse_record(protocol_next_line(&rd), &r) == 0 &&
		   protocol_parse_text(&r, &text) == 0);
	FUZZ_CHECK(!strcmp(text, s[2]));
	if (took > 0) {
		FUZZ_CHECK(protocol_parse_record(protocol_next_line(&rd), &r) == 0);
		FUZZ_CHECK(protocol_parse_data(&r, &chunk, &chunk_len) == 0);
		FUZZ_CHECK(chunk_len == (size_t)took && !memcmp(chunk, data, chunk_len));
	}
	FUZZ_CHECK(protocol_next_line(&rd) == NULL);
}

/* Escaping any bytes and back is the identity; what unescape accepts is canonical. */
static void escape_direction(const uint8_t *data, size_t size)
{
	static char esc[4 * 4096 + 1], back[4096 + 1];
	size_t n = size < 4096 ? size : 4096;
	const char *nul = memchr(data, 0, n);

	if (nul)
		n = (size_t)(nul - (const char *)data);
	FUZZ_CHECK(oomkit__escape_text(esc, sizeof(esc), (const char *)data, n) < sizeof(esc));
	for (const char *p = esc; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	FUZZ_CHECK(protocol_unescape(esc) == 0);
	FUZZ_CHECK(strlen(esc) == n && !memcmp(esc, data, n));

	memcpy(back, data, n);
	back[n] = '\0';
	if (protocol_unescape(back) == 0) {
		FUZZ_CHECK(oomkit__escape_text(esc, sizeof(esc), back, strlen(back)) < sizeof(esc));
		FUZZ_CHECK(strlen(esc) == n && !memcmp(esc, data, n));
	}
}

/* Every accepted record, written again, is the same line. */
static void check_record(char *line)
{
	static char again[PROTOCOL_RECORD_MAX];
	char copy[PROTOCOL_RECORD_MAX];
	struct protocol_buf b = {.data = again, .cap = sizeof(again)};
	struct protocol_record r;
	struct protocol_machine m;
	struct protocol_job j;
	struct protocol_proc p;
	struct protocol_report rep;
	struct protocol_candidate c;
	unsigned choices;
	int put = 1;

	size_t len = strlen(line);
	if (len >= sizeof(copy))
		return;
	memcpy(copy, line, len + 1);
	if (protocol_parse_record(line, &r) < 0)
		return;
	FUZZ_CHECK(r.n >= 1 && r.n <= PROTOCOL_FIELDS_MAX);
	/* Exactly the fields a record of its kind has, so the line comes back whole. */
	if (r.n == 8 && protocol_parse_machine(&r, &m) == 0)
		put = protocol_put_machine(&b, &m);
	else if (r.n == 15 && protocol_parse_job(&r, &j) == 0)
		put = protocol_put_job(&b, &j);
	else if (r.n == 10 && protocol_parse_proc(&r, &p) == 0)
		put = protocol_put_proc(&b, &p);
	else if (r.n == 9 && protocol_parse_report(&r, &rep) == 0)
		put = protocol_put_report(&b, &rep);
	else if (r.n == 9 && protocol_parse_candidate(&r, &c) == 0)
		put = protocol_put_candidate(&b, &c);
	else if (protocol_parse_choices(&r, &choices) == 0)
		FUZZ_CHECK((choices & ~(unsigned)(PROTOCOL_CHOICE_KILL | PROTOCOL_CHOICE_GROW |
						  PROTOCOL_CHOICE_KERNEL | PROTOCOL_CHOICE_CHAIN)) == 0);
	if (put == 1)
		return; /* not a record of these kinds */
	FUZZ_CHECK(put == 0 && b.len > 0 && again[b.len - 1] == '\n');
	if (b.len - 1 == len && memcmp(again, copy, len) == 0)
		return;
	/* Only a string longer than its cut (16 bytes at least) comes back shorter. */
	bool cut = false;
	for (size_t i = 1; i < r.n; i++)
		cut |= strlen(r.field[i]) >= 16;
	FUZZ_CHECK(cut);
}

static void parse_direction(const uint8_t *data, size_t size)
{
	static char frame[1 << 16];
	struct protocol_request req;
	struct protocol_reader rd;
	struct protocol_status st;
	char line[PROTOCOL_REQUEST_MAX + 1];
	char *l;

	if (size >= sizeof(frame))
		return;
	memcpy(frame, data, size);
	size_t end = protocol_frame_end(frame, size);
	FUZZ_CHECK(end <= size);
	if (end) {
		FUZZ_CHECK(frame[end - 1] == '\n' && frame[end - 2] == '.');
		protocol_reader_init(&rd, frame, end);
		if ((l = protocol_next_line(&rd)) && protocol_parse_status(l, &st) == 0)
			FUZZ_CHECK(st.kind >= PROTOCOL_OK && st.kind <= PROTOCOL_DONE);
		while ((l = protocol_next_line(&rd)))
			check_record(l);
	}

	/* The input as one request line. */
	int r = protocol_parse_request((const char *)data, size, &req);
	FUZZ_CHECK(r == 0 || r == -EOPNOTSUPP || r == -EINVAL || r == -EBADMSG);
	if (r == 0) {
		int n = protocol_format_request(&req, line, sizeof(line));
		size_t want = size && data[size - 1] == '\r' ? size - 1 : size;
		FUZZ_CHECK(n > 0 && (size_t)n == want + 1 && !memcmp(line, data, want) && line[want] == '\n');
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	format_direction(data, size);
	escape_direction(data, size);
	parse_direction(data, size);
	return 0;
}
