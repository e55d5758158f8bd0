/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit.c - the command line of oomkitd: one request to the daemon's
 * control socket per command, in the wire protocol of daemon/protocol.h
 * (linked here, so both ends read and write it with the same code), and
 * tables that fit 80 columns, or JSON with --json.
 *
 * Each verb is a row of a table: its options, how many arguments it takes
 * and its handler.  Everything printed that came from the daemon - names of
 * jobs and cgroups, a process's comm and cmdline, reasons, messages - is
 * passed through tty() first: a process cannot write terminal escapes to the
 * person reading, or fake a line of the table.
 *
 * Exit codes: 0 success, 1 the daemon refused or failed, 2 usage,
 * 3 the daemon cannot be reached, 126/127 run could not exec.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "defaults.h"
#include "json-reader.h" /* for reports */
#include "json.h"	 /* lib/json.h: the one JSON writer and text escaper of lib, daemon and CLI */
#include "protocol.h"

enum { EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

/* The options, each allowed only for the verbs that name it. */
enum {
	OPT_JSON = 1u << 0,
	OPT_JOB = 1u << 1,
	OPT_ITERATIONS = 1u << 2,
	OPT_INTERVAL = 1u << 3,
	OPT_ONCE = 1u << 4,
};

struct cli {
	const char *socket_path;
	bool json;
	unsigned given; /* OPT_* seen */
	const char *job;
	unsigned iterations, interval_ms;
	bool once;
};

/* ------------------------------------------------------------ terminal output */

/* s as the terminal may show it (oomkit__escape_text(): control bytes, DEL,
 * bytes that are not UTF-8, C1 controls and direction overrides as \xNN, a
 * backslash as \\), cut to width columns (0: no limit) at a whole escape or
 * character. */
static const char *tty(const char *s, size_t width, char *buf, size_t cap)
{
	char esc[2048];
	size_t o = 0, cols = 0;

	oomkit__escape_str(esc, sizeof(esc), s ? s : "");
	for (const char *p = esc; *p && (width == 0 || cols < width);) {
		size_t k = *p == '\\'		       ? (p[1] == 'x' ? 4 : 2)
			   : (unsigned char)*p >= 0x80 ? protocol_utf8_seq(p, strnlen(p, 4))
						       : 1;
		size_t w = *p == '\\' ? k : 1;
		if (k == 0)
			k = w = 1;
		if ((width && cols + w > width) || o + k + 1 > cap)
			break;
		memcpy(buf + o, p, k);
		o += k;
		p += k;
		cols += w;
	}
	buf[o] = '\0';
	return buf;
}

/* tty(), left-aligned and padded with spaces to exactly width columns. */
static const char *tty_col(const char *s, size_t width, char *buf, size_t cap)
{
	tty(s, width, buf, cap);
	size_t cols = 0, n = strlen(buf);
	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)buf[i] & 0xc0) != 0x80;
	while (cols < width && n + 1 < cap) {
		buf[n++] = ' ';
		cols++;
	}
	buf[n] = '\0';
	return buf;
}

#define TTY(s, w) tty((s), (w), (char[512]){0}, 512)
#define COL(s, w) tty_col((s), (w), (char[512]){0}, 512)

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void err(const char *fmt, ...)
{
	va_list ap;

	fputs("oomkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------ JSON output */

/* --json goes out through lib/json.h's writer, straight to stdout: valid JSON
 * whatever bytes a name holds. */
static struct oomkit__json jw;
static char jw_buf[16384];

static void json_begin(char bracket)
{
	fflush(stdout);
	oomkit__json_init(&jw, STDOUT_FILENO, jw_buf, sizeof(jw_buf));
	oomkit__json_open(&jw, NULL, bracket);
}

/* bracket: the closing one, '}' or ']'. */
static int json_finish(char bracket)
{
	oomkit__json_close(&jw, bracket);
	oomkit__json_newline(&jw);
	return oomkit__json_end(&jw) < 0 ? -EIO : 0;
}

/* ------------------------------------------------------------ the connection */

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	size_t used; /* the frame returned last ends here */
};

/* One reply, read: the status line, and the records (in place in the conn's buffer). */
struct reply {
	struct protocol_status status;
	struct protocol_reader rd;
};

static int connect_daemon(const struct cli *cli, struct conn *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	*c = (struct conn){.fd = -1};
	if (strlen(cli->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, cli->socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	c->fd = fd;
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	*c = (struct conn){.fd = -1};
}

static int send_request(struct conn *c, const struct protocol_request *req)
{
	char line[PROTOCOL_REQUEST_MAX];
	int len = protocol_format_request(req, line, sizeof(line));

	if (len < 0)
		return len;
	for (size_t off = 0; off < (size_t)len;) {
		ssize_t n = send(c->fd, line + off, (size_t)len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* Reads the next frame (what follows the previous one stays for the next
 * call: the prompt connection may get two in one read) and its status line. */
static int read_reply(struct conn *c, struct reply *ret)
{
	size_t end;

	if (c->used) {
		memmove(c->buf, c->buf + c->used, c->len - c->used);
		c->len -= c->used;
		c->used = 0;
	}
	while (!(end = protocol_frame_end(c->buf, c->len))) {
		if (c->len + 4096 > c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16384;
			char *nb = realloc(c->buf, cap);
			if (!nb)
				return -ENOMEM;
			c->buf = nb;
			c->cap = cap;
		}
		ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		c->len += (size_t)n;
	}
	c->used = end;
	protocol_reader_init(&ret->rd, c->buf, end);
	char *first = protocol_next_line(&ret->rd);
	if (!first || protocol_parse_status(first, &ret->status) < 0)
		return -EBADMSG;
	return 0;
}

/* The next record of a reply, or NULL after the last; one that is not in
 * the protocol's form is an error (*ret_err), never shown half-read. */
static struct protocol_record *next_record(struct reply *r, struct protocol_record *rec, int *ret_err)
{
	char *line = protocol_next_line(&r->rd);

	if (!line)
		return NULL;
	if (protocol_parse_record(line, rec) < 0) {
		*ret_err = -EBADMSG;
		return NULL;
	}
	return rec;
}

static int unreachable(const struct cli *cli, int r)
{
	err("cannot reach oomkitd at %s: %s", cli->socket_path, strerror(-r));
	return EXIT_UNREACHABLE;
}

/* Connects, sends req, reads the reply's status: 0 ok, else the exit code
 * (the daemon's error printed). */
static int request(const struct cli *cli, const struct protocol_request *req, struct conn *c,
		   struct reply *ret)
{
	int r = connect_daemon(cli, c);

	if (r < 0)
		return unreachable(cli, r);
	if ((r = send_request(c, req)) == 0)
		r = read_reply(c, ret);
	if (r < 0) {
		err("oomkitd at %s: %s", cli->socket_path,
		    r == -EBADMSG ? "a reply not in the protocol's form" : strerror(-r));
		conn_close(c);
		return EXIT_UNREACHABLE;
	}
	if (ret->status.kind != PROTOCOL_OK) {
		err("%s",
		    ret->status.kind == PROTOCOL_ERROR ? TTY(ret->status.message, 0) : "unexpected reply");
		conn_close(c);
		return EXIT_REFUSED;
	}
	return 0;
}

static int malformed(const struct cli *cli)
{
	err("oomkitd at %s: a reply not in the protocol's form", cli->socket_path);
	return EXIT_UNREACHABLE;
}

/* ------------------------------------------------------------ formatting */

/* 4-5 characters: "512K", "120M", "1.5G", "max". */
static const char *human(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	double x = (double)v;
	int u = -1;

	if (v == UINT64_MAX) {
		snprintf(buf, len, "max");
		return buf;
	}
	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64 "B", v);
		return buf;
	}
	while (x >= 1024 && u < 4) {
		x /= 1024;
		u++;
	}
	snprintf(buf, len, x < 10 ? "%.1f%c" : "%.0f%c", x, units[u]);
	return buf;
}

#define HUMAN(v) human((v), (char[16]){0}, 16)

static void bar(uint64_t usage, uint64_t limit, char *buf, size_t width)
{
	size_t fill = 0;

	if (limit && limit != UINT64_MAX)
		fill = (size_t)((double)usage / (double)limit * (double)width + 0.5);
	if (fill > width)
		fill = width;
	buf[0] = '[';
	for (size_t i = 0; i < width; i++)
		buf[1 + i] = i < fill ? '#' : limit == UINT64_MAX ? ' ' : '-';
	buf[width + 1] = ']';
	buf[width + 2] = '\0';
}

static void format_time(int64_t epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

/* ------------------------------------------------------------ status */

static void machine_row(const struct cli *cli, const struct protocol_machine *m)
{
	char br[32];

	if (cli->json) {
		oomkit__json_open(&jw, "machine", '{');
		oomkit__json_str(&jw, "cgroup", m->cgroup);
		oomkit__json_u64(&jw, "usage_bytes", m->usage_bytes);
		oomkit__json_limit(&jw, "limit_bytes", m->limit_bytes);
		oomkit__json_bool(&jw, "under_oom", m->under_oom);
		oomkit__json_u64(&jw, "ooms", m->ooms);
		oomkit__json_u64(&jw, "kills", m->kills);
		oomkit__json_str(&jw, "last_action", m->last_action);
		oomkit__json_close(&jw, '}');
		oomkit__json_open(&jw, "jobs", '[');
		return;
	}
	/* 8 + 30 + 2 + 11 + 1 + 18 + 10 = 80 columns at most. */
	bar(m->usage_bytes, m->limit_bytes, br, 16);
	printf("machine %s  %s/%s %s%s\n", TTY(m->cgroup, 30), HUMAN(m->usage_bytes), HUMAN(m->limit_bytes),
	       br, m->under_oom ? " UNDER OOM" : "");
	printf("        OOMs %" PRIu64 ", kills %" PRIu64 "%s%s\n\n", m->ooms, m->kills,
	       m->last_action[0] ? ", last: " : "", TTY(m->last_action, 40));
	printf("%-12s %4s %13s %-14s %4s %5s %5s %s\n", "JOB", "PRIO", "USAGE/LIMIT", "", "OOMS", "KILLS",
	       "PROCS", "LAST ACTION");
}

static void job_row(const struct cli *cli, const struct protocol_job *j)
{
	char br[32], ul[24];

	if (cli->json) {
		oomkit__json_open(&jw, NULL, '{');
		oomkit__json_str(&jw, "name", j->name);
		oomkit__json_u64(&jw, "priority", j->priority);
		oomkit__json_u64(&jw, "usage_bytes", j->usage_bytes);
		oomkit__json_limit(&jw, "limit_bytes", j->limit_bytes);
		oomkit__json_limit(&jw, "limit_max_bytes", j->limit_max_bytes);
		oomkit__json_u64(&jw, "expect_bytes", j->expect_bytes);
		oomkit__json_bool(&jw, "under_oom", j->under_oom);
		oomkit__json_u64(&jw, "ooms", j->ooms);
		oomkit__json_u64(&jw, "kills", j->kills);
		oomkit__json_u64(&jw, "processes", j->processes);
		if (j->has_owner)
			oomkit__json_u64(&jw, "owner", j->owner);
		else
			oomkit__json_null(&jw, "owner");
		oomkit__json_str(&jw, "policy", j->chain);
		oomkit__json_str(&jw, "last_action", j->last_action);
		oomkit__json_close(&jw, '}');
		return;
	}
	bar(j->usage_bytes, j->limit_bytes, br, 12);
	snprintf(ul, sizeof(ul), "%s/%s", HUMAN(j->usage_bytes), HUMAN(j->limit_bytes));
	/* 12+1+4+1+13+1+14+1+4+1+5+1+5+1 = 64 columns, 16 left for the last action. */
	printf("%s %4u %13s %-14s %4" PRIu64 " %5" PRIu64 " %5u %s%s\n", COL(j->name, 12), j->priority, ul,
	       br, j->ooms, j->kills, j->processes, j->last_action[0] ? TTY(j->last_action, 16) : "-",
	       j->under_oom ? "!" : "");
}

static int show_status(const struct cli *cli)
{
	const struct protocol_request req = {.verb = PROTOCOL_STATUS};
	struct protocol_record rec;
	struct protocol_machine m;
	struct protocol_job j;
	struct conn c;
	struct reply r;
	int e = request(cli, &req, &c, &r), bad = 0;
	bool seen_machine = false;

	if (e)
		return e;
	if (cli->json)
		json_begin('{');
	while (next_record(&r, &rec, &bad)) {
		if (protocol_parse_machine(&rec, &m) == 0 && !seen_machine) {
			machine_row(cli, &m);
			seen_machine = true;
		} else if (protocol_parse_job(&rec, &j) == 0 && seen_machine) {
			job_row(cli, &j);
		}
	}
	if (cli->json) {
		if (seen_machine)
			oomkit__json_close(&jw, ']');
		e = json_finish('}');
	}
	conn_close(&c);
	return bad || !seen_machine ? malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

static int cmd_status(struct cli *cli, int argc, char **argv)
{
	(void)argc, (void)argv;
	return show_status(cli);
}

/* ------------------------------------------------------------ ps */

static void proc_row(const struct cli *cli, const struct protocol_proc *p)
{
	if (cli->json) {
		oomkit__json_open(&jw, NULL, '{');
		oomkit__json_i64(&jw, "pid", p->pid);
		oomkit__json_str(&jw, "job", p->job);
		oomkit__json_u64(&jw, "rss_bytes", p->rss_bytes);
		oomkit__json_u64(&jw, "swap_bytes", p->swap_bytes);
		oomkit__json_i64(&jw, "oom_score_adj", p->oom_score_adj);
		oomkit__json_u64(&jw, "uid", p->uid);
		oomkit__json_str(&jw, "comm", p->comm);
		oomkit__json_str(&jw, "cmdline", p->cmdline);
		oomkit__json_close(&jw, '}');
		return;
	}
	/* 7+1+10+1+6+1+6+1+5+1+6+1+15+1 = 62 columns, 18 left for the command. */
	printf("%7d %s %6s %6s %5d %6u %s %s\n", (int)p->pid, COL(p->job, 10), HUMAN(p->rss_bytes),
	       HUMAN(p->swap_bytes), p->oom_score_adj, (unsigned)p->uid, COL(p->comm, 15),
	       TTY(p->cmdline, 18));
}

static int show_ps(const struct cli *cli, const char *job)
{
	struct protocol_request req = {.verb = PROTOCOL_PS};
	struct protocol_record rec;
	struct protocol_proc p;
	struct conn c;
	struct reply r;
	int e, bad = 0;

	if (job && snprintf(req.job, sizeof(req.job), "%s", job) >= (int)sizeof(req.job)) {
		err("no job %s", TTY(job, 0));
		return EXIT_REFUSED;
	}
	if ((e = request(cli, &req, &c, &r)))
		return e;
	if (cli->json)
		json_begin('[');
	else
		printf("%7s %-10s %6s %6s %5s %6s %-15s %s\n", "PID", "JOB", "RSS", "SWAP", "ADJ", "UID",
		       "COMM", "COMMAND");
	while (next_record(&r, &rec, &bad))
		if (protocol_parse_proc(&rec, &p) == 0)
			proc_row(cli, &p);
	if (cli->json)
		e = json_finish(']');
	conn_close(&c);
	return bad ? malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

static int cmd_ps(struct cli *cli, int argc, char **argv)
{
	return show_ps(cli, argc ? argv[0] : NULL);
}

/* ------------------------------------------------------------ reports */

static void report_row(const struct cli *cli, const struct protocol_report *rep)
{
	char when[32];

	if (cli->json) {
		oomkit__json_open(&jw, NULL, '{');
		oomkit__json_u64(&jw, "id", rep->id);
		oomkit__json_str(&jw, "scope", rep->scope);
		oomkit__json_u64(&jw, "bytes", rep->bytes);
		oomkit__json_fixed(&jw, "time", rep->time_ms, 3);
		oomkit__json_str(&jw, "action", rep->action);
		oomkit__json_i64(&jw, "victim_pid", rep->victim_pid);
		oomkit__json_str(&jw, "reason", rep->reason);
		oomkit__json_close(&jw, '}');
		return;
	}
	format_time((int64_t)(rep->time_ms / 1000), when, sizeof(when));
	/* 6+1+14+1+10+1+8+1+7+1 = 50 columns, 30 left for the reason. */
	printf("%6u %-14s %s %s %7d %s\n", rep->id, when, COL(rep->scope, 10), COL(rep->action, 8),
	       (int)rep->victim_pid, TTY(rep->reason, 30));
}

static int list_reports(const struct cli *cli)
{
	const struct protocol_request req = {.verb = PROTOCOL_REPORTS};
	struct protocol_record rec;
	struct protocol_report rep;
	struct conn c;
	struct reply r;
	int e = request(cli, &req, &c, &r), bad = 0;

	if (e)
		return e;
	if (cli->json)
		json_begin('[');
	else
		printf("%6s %-14s %-10s %-8s %7s %s\n", "ID", "TIME", "SCOPE", "ACTION", "VICTIM", "REASON");
	while (next_record(&r, &rec, &bad))
		if (protocol_parse_report(&rec, &rep) == 0)
			report_row(cli, &rep);
	if (cli->json)
		e = json_finish(']');
	conn_close(&c);
	return bad ? malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

static const char *jstr(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->type == JSON_STRING ? v->str : v && v->type == JSON_NUMBER ? v->str : "-";
}

static const char *jsize(const struct json *j, const char *key, char *buf, size_t len)
{
	const struct json *v = json_get(j, key);
	if (!v || v->type != JSON_NUMBER)
		return "max";
	if (strcmp(key, "expect_bytes") == 0 && strcmp(v->str, "0") == 0)
		return "-";
	return human(strtoull(v->str, NULL, 10), buf, len);
}

/* "  label:    text", wrapped at word boundaries to fit 80 columns; the text
 * is escaped for the terminal first. */
static void field_line(const char *label, const char *raw)
{
	const int indent = 13, width = 80 - indent;
	char safe[4096];
	const char *text = tty(raw, 0, safe, sizeof(safe));
	int col = 0;

	printf("  %-*s", indent - 2, label);
	while (*text) {
		int word = (int)strcspn(text, " ");
		if (col > 0 && col + 1 + word > width) {
			printf("\n%*s", indent, "");
			col = 0;
		} else if (col > 0) {
			putchar(' ');
			col++;
		}
		/* A word longer than the line is cut across lines. */
		while (word > width) {
			printf("%.*s\n%*s", width, text, indent, "");
			text += width;
			word -= width;
		}
		printf("%.*s", word, text);
		col += word;
		text += word;
		while (*text == ' ')
			text++;
	}
	putchar('\n');
}

static void show_report_head(const struct json *root, const struct json *dec)
{
	char when[32], buf[1024];

	format_time(strtoll(jstr(root, "time"), NULL, 10), when, sizeof(when));
	printf("report %s: %s OOM", TTY(jstr(root, "id"), 0), TTY(jstr(root, "scope"), 0));
	if (json_get(root, "job") && json_get(root, "job")->type == JSON_STRING)
		printf(" of job %s", TTY(jstr(root, "job"), 0));
	printf(" at %s%s\n", when,
	       json_get(root, "dry_run") && json_get(root, "dry_run")->boolean ? " (dry run)" : "");
	snprintf(buf, sizeof(buf), "%s (limit hit by %s)", jstr(root, "cgroup"), jstr(root, "origin"));
	field_line("cgroup:", buf);
	field_line("chain:", jstr(root, "chain"));
	if (dec) {
		snprintf(buf, sizeof(buf), "%s%s%s", jstr(dec, "action"),
			 strcmp(jstr(dec, "policy"), "") ? " by " : "", jstr(dec, "policy"));
		field_line("decision:", buf);
		field_line("reason:", jstr(dec, "reason"));
		if (strcmp(jstr(dec, "not_applied"), "") != 0)
			field_line("skipped:", jstr(dec, "not_applied"));
	}
	const struct json *ans = json_get(root, "prompt_answer"), *fu = json_get(root, "followup");
	if (ans)
		field_line("answer:", ans->str && ans->str[0] ? ans->str : "(none)");
	if (fu) {
		snprintf(buf, sizeof(buf), "%s: %s", jstr(fu, "action"), jstr(fu, "reason"));
		field_line("then:", buf);
	}
	field_line("outcome:", jstr(root, "outcome"));
	const struct json *t = json_get(root, "timings_ms");
	if (t) {
		const struct json *fr = json_get(t, "freed");
		snprintf(buf, sizeof(buf), "decided after %s ms, acted after %s ms, memory freed after %s ms",
			 jstr(t, "decision"), jstr(t, "action"),
			 fr && fr->type == JSON_NUMBER ? fr->str : "?");
		field_line("timings:", buf);
	}
}

static void show_report(const struct json *root)
{
	char a[16], b[16], c[16], e[16];
	const struct json *dec = json_get(root, "decision");

	show_report_head(root, dec);
	const struct json *jobs = json_get(root, "jobs"), *cands = json_get(root, "candidates");
	printf("\n%-12s %4s %7s %7s %7s %7s %s\n", "JOB", "PRIO", "USAGE", "LIMIT", "MAX", "EXPECT", "KILL");
	for (size_t i = 0; jobs && i < jobs->n; i++) {
		const struct json *j = jobs->items[i];
		printf("%s %4s %7s %7s %7s %7s %s\n", COL(jstr(j, "name"), 12), TTY(jstr(j, "priority"), 4),
		       jsize(j, "usage_bytes", a, sizeof(a)), jsize(j, "limit_bytes", b, sizeof(b)),
		       jsize(j, "limit_max_bytes", c, sizeof(c)), jsize(j, "expect_bytes", e, sizeof(e)),
		       TTY(jstr(j, "kill"), 8));
	}
	printf("\n%7s %-12s %4s %7s %5s %-15s %s\n", "PID", "JOB", "PRIO", "RSS", "ADJ", "COMM", "");
	for (size_t i = 0; cands && i < cands->n; i++) {
		const struct json *p = cands->items[i];
		const struct json *prot = json_get(p, "protected");
		bool victim = dec && strcmp(jstr(p, "pid"), jstr(dec, "victim_pid")) == 0;
		printf("%7s %s %4s %7s %5s %s %s\n", TTY(jstr(p, "pid"), 7), COL(jstr(p, "job"), 12),
		       TTY(jstr(p, "priority"), 4), jsize(p, "rss_bytes", a, sizeof(a)),
		       TTY(jstr(p, "oom_score_adj"), 5), COL(jstr(p, "comm"), 15),
		       victim		       ? "<- victim"
		       : prot && prot->boolean ? "protected"
					       : "");
	}
}

/* Reads a report's data records into one NUL-terminated text (malloc'd). */
static int read_report_text(struct reply *r, char **ret, size_t *ret_len)
{
	struct protocol_record rec;
	size_t len = 0, cap = 4096;
	char *text = malloc(cap);
	int bad = 0;

	while (text && next_record(r, &rec, &bad)) {
		const char *chunk;
		size_t n;
		if (protocol_parse_data(&rec, &chunk, &n) < 0)
			continue;
		while (len + n + 1 > cap) {
			char *nt = realloc(text, cap *= 2);
			if (!nt) {
				free(text);
				return -ENOMEM;
			}
			text = nt;
		}
		memcpy(text + len, chunk, n);
		len += n;
	}
	if (!text || bad) {
		free(text);
		return text ? bad : -ENOMEM;
	}
	text[len] = '\0';
	*ret = text;
	*ret_len = len;
	return 0;
}

/* The code point of a valid sequence (protocol_utf8_seq()). */
static unsigned code_point(const unsigned char *p, size_t k)
{
	unsigned cp = k == 2 ? p[0] & 0x1fu : k == 3 ? p[0] & 0x0fu : p[0] & 0x07u;

	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (p[i] & 0x3fu);
	return cp;
}

/* The report's JSON as it is, but for what a terminal might obey.  Past
 * ASCII, bytes only stand inside strings, where \uXXXX means the same: what
 * the text escaper would not keep (a C1 control, a direction override, a
 * byte that is not UTF-8, as its value) goes out in that form; so does a
 * control byte, which is not valid JSON raw anyway. */
static void print_json_text(const char *text)
{
	char kept[16];

	while (*text) {
		unsigned char c = (unsigned char)*text;
		size_t k = c >= 0x80 ? protocol_utf8_seq(text, strnlen(text, 4)) : 1;
		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r') {
			putchar(*text++);
			continue;
		}
		oomkit__escape_text(kept, sizeof(kept), text, k ? k : 1);
		if (k > 1 && memcmp(kept, text, k) == 0)
			fwrite(text, 1, k, stdout);
		else
			printf("\\u%04x", k > 1 ? code_point((const unsigned char *)text, k) : c);
		text += k ? k : 1;
	}
}

static int show_report_id(const struct cli *cli, unsigned id)
{
	const struct protocol_request req = {.verb = PROTOCOL_REPORT, .id = id};
	struct conn c;
	struct reply r;
	char *text;
	size_t len;
	int e = request(cli, &req, &c, &r);

	if (e)
		return e;
	int rr = read_report_text(&r, &text, &len);
	conn_close(&c);
	if (rr < 0)
		return malformed(cli);
	if (cli->json) {
		print_json_text(text);
	} else {
		struct json *root = json_parse(text);
		if (!root) {
			err("report %u is not valid JSON", id);
			e = EXIT_REFUSED;
		} else {
			show_report(root);
			json_free(root);
		}
	}
	free(text);
	return e;
}

/* A number for an argument or option: decimal digits only, within [min, max]. */
static int parse_number(const char *what, const char *s, unsigned long min, unsigned long max, unsigned *ret)
{
	char *end;

	errno = 0;
	unsigned long v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (!(s[0] >= '0' && s[0] <= '9') || *end || errno || v < min || v > max) {
		err("%s must be a number from %lu to %lu, not '%s'", what, min, max, TTY(s, 40));
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

static int cmd_reports(struct cli *cli, int argc, char **argv)
{
	unsigned id;

	if (argc == 0)
		return list_reports(cli);
	if (argc != 2 || strcmp(argv[0], "show") != 0) {
		err("reports takes nothing, or show ID");
		return EXIT_USAGE;
	}
	if (parse_number("a report ID", argv[1], 0, UINT_MAX, &id) < 0)
		return EXIT_USAGE;
	return show_report_id(cli, id);
}

/* ------------------------------------------------------------ run */

static int cmd_run(struct cli *cli, int argc, char **argv)
{
	struct protocol_request req = {.verb = PROTOCOL_RUN};
	struct conn c;
	struct reply r;
	int e;

	(void)argc;
	if (snprintf(req.job, sizeof(req.job), "%s", cli->job) >= (int)sizeof(req.job)) {
		err("no job %s", TTY(cli->job, 0));
		return EXIT_REFUSED;
	}
	/* The daemon moves the process that asks (this one), which then becomes CMD. */
	if ((e = request(cli, &req, &c, &r)))
		return e;
	conn_close(&c);
	execvp(argv[0], argv);
	err("cannot run %s: %s", TTY(argv[0], 0), strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* ------------------------------------------------------------ top */

static int cmd_top(struct cli *cli, int argc, char **argv)
{
	bool tty_out = isatty(STDOUT_FILENO);

	(void)argc, (void)argv;
	for (unsigned i = 0; cli->iterations == 0 || i < cli->iterations; i++) {
		if (tty_out)
			printf("\033[H\033[2J");
		time_t now = time(NULL);
		char when[32];
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
		printf("oomkit top - %s (every %u ms, Ctrl-C quits)\n\n", when, cli->interval_ms);
		int e = show_status(cli);
		if (e)
			return e;
		printf("\n");
		if ((e = show_ps(cli, NULL)))
			return e;
		fflush(stdout);
		if (cli->iterations && i + 1 == cli->iterations)
			break;
		struct timespec ts = {cli->interval_ms / 1000, (long)(cli->interval_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* ------------------------------------------------------------ prompt */

/* Shows a question frame; returns its choices. */
static unsigned show_question(struct reply *q)
{
	struct protocol_record rec;
	struct protocol_candidate cand;
	unsigned choices = 0;
	int bad = 0;

	printf("\nOOM in %s (question %u): %" PRIu64 " ms to answer\n", TTY(q->status.question.scope, 0),
	       q->status.question.id, q->status.question.timeout_ms);
	while (next_record(q, &rec, &bad)) {
		if (protocol_parse_candidate(&rec, &cand) == 0)
			printf("  kill %-7d  job %s prio %4u  %7s  %s\n", (int)cand.pid, COL(cand.job, 12),
			       cand.priority, HUMAN(cand.rss_bytes), TTY(cand.comm, 0));
		else
			(void)protocol_parse_choices(&rec, &choices);
	}
	if (bad)
		printf("  (the rest of the question was not in the protocol's form)\n");
	if (!choices) {
		printf("nothing to answer here\n");
		return 0;
	}
	static const struct {
		unsigned bit;
		const char *text;
	} names[] = {{PROTOCOL_CHOICE_KILL, "kill PID"},
		     {PROTOCOL_CHOICE_GROW, "grow"},
		     {PROTOCOL_CHOICE_KERNEL, "kernel"},
		     {PROTOCOL_CHOICE_CHAIN, "chain"}};
	printf("answer:");
	for (size_t i = 0, n = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (choices & names[i].bit)
			printf("%s %s", n++ ? " |" : "", names[i].text);
	printf(" (or skip)\n");
	return choices;
}

/* A person's answer ("kill 42", "grow", "kernel", "chain"), read into a request. */
static int read_answer(const char *line, unsigned id, struct protocol_request *ret)
{
	char copy[PROTOCOL_REQUEST_MAX];
	unsigned pid;

	*ret = (struct protocol_request){.verb = PROTOCOL_ANSWER, .answer.id = id};
	snprintf(copy, sizeof(copy), "%s", line);
	char *save = NULL, *what = strtok_r(copy, " \t", &save), *arg = strtok_r(NULL, " \t", &save);
	if (!what || strtok_r(NULL, " \t", &save))
		return -EINVAL;
	if (strcmp(what, "kill") == 0 && arg && parse_number("the PID", arg, 1, INT_MAX, &pid) == 0) {
		ret->answer.choice = PROTOCOL_CHOICE_KILL;
		ret->answer.pid = (pid_t)pid;
		return 0;
	}
	if (arg)
		return -EINVAL;
	if (strcmp(what, "grow") == 0)
		ret->answer.choice = PROTOCOL_CHOICE_GROW;
	else if (strcmp(what, "kernel") == 0)
		ret->answer.choice = PROTOCOL_CHOICE_KERNEL;
	else if (strcmp(what, "chain") == 0)
		ret->answer.choice = PROTOCOL_CHOICE_CHAIN;
	else
		return -EINVAL;
	return 0;
}

/* Sends one answer and prints the daemon's verdict on it.  Frames of the
 * prompt stream that come first ("done" for this question, a newer one
 * whose time will have passed by then) are skipped. */
static int send_answer(struct conn *c, const struct protocol_request *req)
{
	struct reply r;
	struct protocol_record rec;
	const char *text = "";
	int bad = 0;

	if (send_request(c, req) < 0)
		return -ECONNRESET;
	do {
		if (read_reply(c, &r) < 0)
			return -ECONNRESET;
	} while (r.status.kind == PROTOCOL_QUESTION ||
		 r.status.kind == PROTOCOL_DONE); /* the prompt's own frames */
	if (r.status.kind == PROTOCOL_ERROR) {
		printf("refused: %s\n", TTY(r.status.message, 0));
		fflush(stdout);
		return EXIT_REFUSED;
	}
	if (next_record(&r, &rec, &bad))
		(void)protocol_parse_text(&rec, &text);
	printf("done: %s\n", TTY(text, 0));
	fflush(stdout);
	return 0;
}

/* Asks the person until an answer is sent or skipped; the exit code, or -1 at end of input. */
static int ask(struct conn *c, unsigned id)
{
	char line[256];
	struct protocol_request req;

	for (;;) {
		printf("> ");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			printf("\n");
			return -1;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || strcmp(line, "skip") == 0)
			return 0;
		if (read_answer(line, id, &req) == 0)
			return send_answer(c, &req);
		printf("answer kill PID, grow, kernel, chain or skip\n");
	}
}

static int cmd_prompt(struct cli *cli, int argc, char **argv)
{
	const struct protocol_request req = {.verb = PROTOCOL_PROMPT};
	struct conn c;
	struct reply r;
	int rc = request(cli, &req, &c, &r);

	(void)argc, (void)argv;
	if (rc)
		return rc;
	printf("waiting for OOMs that ask a person (Ctrl-C quits)\n");
	fflush(stdout);
	for (;;) {
		if (read_reply(&c, &r) < 0) {
			err("oomkitd closed the connection");
			rc = EXIT_UNREACHABLE;
			break;
		}
		if (r.status.kind != PROTOCOL_QUESTION)
			continue;
		unsigned id = r.status.question.id;
		if (!show_question(&r))
			continue;
		rc = ask(&c, id);
		if (rc == -ECONNRESET) {
			err("oomkitd closed the connection");
			rc = EXIT_UNREACHABLE;
			break;
		}
		if (rc < 0) {
			rc = 0;
			break;
		}
		if (cli->once)
			break;
	}
	conn_close(&c);
	return rc;
}

/* ------------------------------------------------------------ the verbs */

struct verb {
	const char *name;
	const char *args; /* as the usage shows them */
	const char *help;
	unsigned options; /* OPT_* it takes */
	int min_args, max_args;
	int (*run)(struct cli *cli, int argc, char **argv);
};

static const struct verb verbs[] = {
    {"status", "", "the machine and its jobs", OPT_JSON, 0, 0, cmd_status},
    {"ps", "[JOB]", "processes with their memory", OPT_JSON, 0, 1, cmd_ps},
    {"run", "--job NAME -- CMD...", "run CMD in a job (keeps this pid)", OPT_JOB, 1, INT_MAX, cmd_run},
    {"reports", "[show ID]", "list OOM reports, or show one", OPT_JSON, 0, 2, cmd_reports},
    {"top", "[--iterations N] [--interval MS]", "live view", OPT_ITERATIONS | OPT_INTERVAL, 0, 0, cmd_top},
    {"prompt", "[--once]", "answer OOMs whose chain asks a person", OPT_ONCE, 0, 0, cmd_prompt},
};

static const struct {
	unsigned bit;
	const char *name;
} option_names[] = {
    {OPT_JSON, "--json"},	  {OPT_JOB, "--job"},	{OPT_ITERATIONS, "--iterations"},
    {OPT_INTERVAL, "--interval"}, {OPT_ONCE, "--once"},
};

static void usage(FILE *f)
{
	char synopsis[64];

	fprintf(f, "usage: oomkit [--socket PATH] COMMAND [OPTIONS] [ARGS]\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		snprintf(synopsis, sizeof(synopsis), "%s %s", verbs[i].name, verbs[i].args);
		fprintf(f, "  %-41s %s\n", synopsis, verbs[i].help);
	}
	fprintf(f, "--json: JSON output of status, ps and reports\n"
		   "socket: $OOMKIT_SOCKET or " OOMKITD_DEFAULT_SOCKET "\n");
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

/* The options given that the verb does not take, named; or 0. */
static int check_options(const struct cli *cli, const struct verb *v)
{
	for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
		if ((cli->given & option_names[i].bit) && !(v->options & option_names[i].bit)) {
			err("%s does not take %s", v->name, option_names[i].name);
			return -EINVAL;
		}
	if ((v->options & OPT_JOB) && !(cli->given & OPT_JOB)) {
		err("%s needs --job NAME", v->name);
		return -EINVAL;
	}
	return 0;
}

static int check_arg_count(const struct verb *v, int n)
{
	if (n >= v->min_args && n <= v->max_args)
		return 0;
	if (v->max_args == 0)
		err("%s takes no arguments", v->name);
	else if (n < v->min_args)
		err("%s needs %s", v->name, v->args);
	else
		err("%s takes at most %d argument%s", v->name, v->max_args, v->max_args == 1 ? "" : "s");
	return -EINVAL;
}

static int set_option(struct cli *cli, int opt, const char *arg)
{
	switch (opt) {
	case 's':
		cli->socket_path = arg;
		return 0;
	case 'j':
		cli->given |= OPT_JSON;
		cli->json = true;
		return 0;
	case 'J':
		cli->given |= OPT_JOB;
		cli->job = arg;
		return 0;
	case 'i':
		cli->given |= OPT_ITERATIONS;
		return parse_number("--iterations", arg, 1, 1000000, &cli->iterations);
	case 'I':
		cli->given |= OPT_INTERVAL;
		return parse_number("--interval", arg, 1, 3600 * 1000, &cli->interval_ms);
	case 'o':
		cli->given |= OPT_ONCE;
		cli->once = true;
		return 0;
	default:
		return -EINVAL;
	}
}

/* One pass over argv: options anywhere before "--", the verb and its
 * arguments in order; everything after "--" is an argument as it is. */
static int parse_args(int argc, char **argv, struct cli *cli, char ***ret_args, int *ret_n)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {"job", required_argument, NULL, 'J'},
	    {"iterations", required_argument, NULL, 'i'},
	    {"interval", required_argument, NULL, 'I'},
	    {"once", no_argument, NULL, 'o'},
	    {NULL, 0, NULL, 0},
	};
	char **args = calloc((size_t)argc + 1, sizeof(char *));
	int n = 0, opt;

	if (!args)
		return -ENOMEM;
	opterr = 1;
	/* "-": non-options come back in order (as 1), whatever POSIXLY_CORRECT says. */
	while ((opt = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
		if (opt == 1) {
			args[n++] = optarg;
		} else if (opt == 'h') {
			free(args);
			return 1;
		} else if (set_option(cli, opt, optarg) < 0) {
			free(args);
			return -EINVAL;
		}
	}
	while (optind < argc)
		args[n++] = argv[optind++];
	*ret_args = args;
	*ret_n = n;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli = {.socket_path = OOMKITD_DEFAULT_SOCKET, .interval_ms = 1000};
	char **args;
	int n;

	if (getenv("OOMKIT_SOCKET"))
		cli.socket_path = getenv("OOMKIT_SOCKET");
	int r = parse_args(argc, argv, &cli, &args, &n);
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0 || n == 0) {
		if (r == 0)
			free(args);
		usage(stderr);
		return EXIT_USAGE;
	}
	const struct verb *v = find_verb(args[0]);
	if (!v) {
		err("unknown command '%s'", TTY(args[0], 40));
		usage(stderr);
		free(args);
		return EXIT_USAGE;
	}
	if (check_options(&cli, v) < 0 || check_arg_count(v, n - 1) < 0) {
		fprintf(stderr, "usage: oomkit %s%s%s\n", v->name, v->args[0] ? " " : "", v->args);
		free(args);
		return EXIT_USAGE;
	}
	r = v->run(&cli, n - 1, args + 1);
	free(args);
	return r;
}
