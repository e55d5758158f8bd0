/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit.c - the command line of oomkitd: talks to the daemon's control
 * socket (one request line; the answer is "ok" or "error MESSAGE", then
 * tab-separated records, then "." alone on a line) and renders tables that
 * fit 80 columns, or JSON with --json.
 *
 *   oomkit [--socket PATH] [--json] status | ps [JOB] | run --job NAME -- CMD... |
 *          reports | reports show ID | top | prompt
 *
 * Exit codes: 0 success, 1 the daemon refused or failed, 2 usage,
 * 3 the daemon cannot be reached, 126/127 run could not exec.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
#include "json.h"

#define DEFAULT_SOCKET OOMKITD_DEFAULT_SOCKET
#define MAX_FIELDS 16

enum { EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

static const char *socket_path = DEFAULT_SOCKET;
static bool json;

/* ------------------------------------------------------------ protocol */

struct reply {
	char *text; /* whole reply, records split in place */
	bool ok;
	char *first;   /* the status line */
	char *message; /* after "error " */
	char **lines;  /* record lines (after the status line) */
	size_t n_lines;
};

static int connect_daemon(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (strlen(socket_path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static int send_line(int fd, const char *line)
{
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* A connection keeps what it received past the end of a frame: the prompt
 * connection may receive two frames in one read. */
struct conn {
	int fd;
	char *buf;
	size_t len, cap;
};

/* Offset just past the frame's end marker (a line holding only "."), or 0. */
static size_t frame_end(const char *buf, size_t len)
{
	for (size_t p = 0; p + 1 < len; p++)
		if ((p == 0 || buf[p - 1] == '\n') && buf[p] == '.' && buf[p + 1] == '\n')
			return p + 2;
	return 0;
}

/* Reads one framed reply and splits it into lines, undoing dot-stuffing. */
static int read_reply(struct conn *c, struct reply *ret)
{
	size_t end;

	while (!(end = frame_end(c->buf, c->len))) {
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
	char *buf = malloc(end + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, c->buf, end);
	buf[end - 2] = '\0'; /* drop ".\n" */
	memmove(c->buf, c->buf + end, c->len - end);
	c->len -= end;

	memset(ret, 0, sizeof(*ret));
	ret->text = buf;
	size_t n_alloc = 16;
	ret->lines = malloc(n_alloc * sizeof(char *));
	char *p = buf, *first = NULL;
	while (*p && ret->lines) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		char *line = p[0] == '.' ? p + 1 : p;
		if (!first) {
			first = line;
		} else {
			if (ret->n_lines == n_alloc) {
				char **nl2 = realloc(ret->lines, (n_alloc *= 2) * sizeof(char *));
				if (!nl2)
					break;
				ret->lines = nl2;
			}
			ret->lines[ret->n_lines++] = line;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	ret->first = first ? first : (char *)"";
	ret->ok = strcmp(ret->first, "ok") == 0;
	ret->message = strncmp(ret->first, "error ", 6) == 0 ? ret->first + 6 : (char *)"malformed reply";
	return 0;
}

static void reply_free(struct reply *r)
{
	free(r->text);
	free(r->lines);
}

static int request(const char *line, struct reply *ret)
{
	char req[600];
	int fd = connect_daemon();

	if (fd < 0) {
		fprintf(stderr, "oomkit: cannot reach oomkitd at %s: %s\n", socket_path, strerror(-fd));
		return EXIT_UNREACHABLE;
	}
	struct conn c = {.fd = fd};
	snprintf(req, sizeof(req), "%s\n", line);
	int r = send_line(fd, req);
	if (r == 0)
		r = read_reply(&c, ret);
	close(fd);
	free(c.buf);
	if (r < 0) {
		fprintf(stderr, "oomkit: oomkitd at %s: %s\n", socket_path, strerror(-r));
		return EXIT_UNREACHABLE;
	}
	if (!ret->ok) {
		fprintf(stderr, "oomkit: %s\n", ret->message);
		reply_free(ret);
		return EXIT_REFUSED;
	}
	return 0;
}

static size_t split(char *line, char **fields, size_t max)
{
	size_t n = 0;

	while (n < max) {
		fields[n++] = line;
		char *tab = strchr(line, '\t');
		if (!tab)
			break;
		*tab = '\0';
		line = tab + 1;
	}
	return n;
}

/* ------------------------------------------------------------ formatting */

static uint64_t u64(const char *s)
{
	return strcmp(s, "max") == 0 ? UINT64_MAX : strtoull(s, NULL, 10);
}

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

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_num_or_null(FILE *f, const char *s)
{
	if (strcmp(s, "max") == 0)
		fputs("null", f);
	else
		fputs(s, f);
}

/* ------------------------------------------------------------ status */

static void status_json(struct reply *r)
{
	char *f[MAX_FIELDS];
	bool first_job = true;

	printf("{");
	for (size_t i = 0; i < r->n_lines; i++) {
		size_t n = split(r->lines[i], f, MAX_FIELDS);
		if (strcmp(f[0], "machine") == 0 && n >= 8) {
			printf("\"machine\":{\"cgroup\":");
			json_str(stdout, f[1]);
			printf(",\"usage_bytes\":%s,\"limit_bytes\":", f[2]);
			json_num_or_null(stdout, f[3]);
			printf(",\"under_oom\":%s,\"ooms\":%s,\"kills\":%s,\"last_action\":",
			       strcmp(f[4], "1") == 0 ? "true" : "false", f[5], f[6]);
			json_str(stdout, f[7]);
			printf("},\"jobs\":[");
		} else if (strcmp(f[0], "job") == 0 && n >= 14) {
			printf("%s{\"name\":", first_job ? "" : ",");
			first_job = false;
			json_str(stdout, f[1]);
			printf(",\"priority\":%s,\"usage_bytes\":%s,\"limit_bytes\":", f[2], f[3]);
			json_num_or_null(stdout, f[4]);
			printf(",\"limit_max_bytes\":");
			json_num_or_null(stdout, f[5]);
			printf(",\"expect_bytes\":%s,\"under_oom\":%s,\"ooms\":%s,\"kills\":%s,\"processes\":"
			       "%s,\"owner\":",
			       f[6], strcmp(f[7], "1") == 0 ? "true" : "false", f[8], f[9], f[10]);
			if (strcmp(f[11], "-") == 0)
				printf("null");
			else
				printf("%s", f[11]);
			printf(",\"policy\":");
			json_str(stdout, f[12]);
			printf(",\"last_action\":");
			json_str(stdout, f[13]);
			printf("}");
		}
	}
	printf("]}\n");
}

static void status_table(struct reply *r)
{
	char *f[MAX_FIELDS], a[16], b[16], br[32];

	for (size_t i = 0; i < r->n_lines; i++) {
		size_t n = split(r->lines[i], f, MAX_FIELDS);
		if (strcmp(f[0], "machine") == 0 && n >= 8) {
			uint64_t u = u64(f[2]), l = u64(f[3]);
			/* 8 + 30 + 2 + 11 + 1 + 18 + 10 = 80 columns at most. */
			bar(u, l, br, 16);
			printf("machine %-.30s  %s/%s %s%s\n", f[1], human(u, a, sizeof(a)),
			       human(l, b, sizeof(b)), br, strcmp(f[4], "1") == 0 ? " UNDER OOM" : "");
			printf("        OOMs %s, kills %s%s%.40s\n\n", f[5], f[6], f[7][0] ? ", last: " : "",
			       f[7]);
			printf("%-12s %4s %13s %-14s %4s %5s %5s %s\n", "JOB", "PRIO", "USAGE/LIMIT", "",
			       "OOMS", "KILLS", "PROCS", "LAST ACTION");
		} else if (strcmp(f[0], "job") == 0 && n >= 14) {
			uint64_t u = u64(f[3]), l = u64(f[4]);
			char ul[24];
			bar(u, l, br, 12);
			snprintf(ul, sizeof(ul), "%s/%s", human(u, a, sizeof(a)), human(l, b, sizeof(b)));
			/* 12+1+4+1+13+1+14+1+4+1+5+1+5+1 = 64 columns, 16 left for the last action. */
			printf("%-12.12s %4s %13s %-14s %4s %5s %5s %.16s%s\n", f[1], f[2], ul, br, f[8],
			       f[9], f[10], f[13][0] ? f[13] : "-", strcmp(f[7], "1") == 0 ? "!" : "");
		}
	}
}

static int cmd_status(void)
{
	struct reply r;
	int e = request("status", &r);

	if (e)
		return e;
	if (json)
		status_json(&r);
	else
		status_table(&r);
	reply_free(&r);
	return 0;
}

/* ------------------------------------------------------------ ps */

static int cmd_ps(const char *job)
{
	char req[128], *f[MAX_FIELDS], a[16], b[16];
	struct reply r;
	int e;

	snprintf(req, sizeof(req), job ? "ps %s" : "ps", job);
	if ((e = request(req, &r)))
		return e;
	if (json)
		printf("[");
	else
		printf("%7s %-10s %6s %6s %5s %6s %-15s %s\n", "PID", "JOB", "RSS", "SWAP", "ADJ", "UID",
		       "COMM", "COMMAND");
	for (size_t i = 0; i < r.n_lines; i++) {
		size_t n = split(r.lines[i], f, MAX_FIELDS);
		if (n < 9 || strcmp(f[0], "proc") != 0)
			continue;
		if (json) {
			printf("%s{\"pid\":%s,\"job\":", i ? "," : "", f[1]);
			json_str(stdout, f[2]);
			printf(
			    ",\"rss_bytes\":%s,\"swap_bytes\":%s,\"oom_score_adj\":%s,\"uid\":%s,\"comm\":",
			    f[3], f[4], f[5], f[6]);
			json_str(stdout, f[7]);
			printf(",\"cmdline\":");
			json_str(stdout, f[8]);
			printf("}");
		} else {
			/* 7+1+10+1+6+1+6+1+5+1+6+1+15+1 = 62 columns, 18 left for the command. */
			printf("%7s %-10.10s %6s %6s %5s %6s %-15.15s %.18s\n", f[1], f[2],
			       human(u64(f[3]), a, sizeof(a)), human(u64(f[4]), b, sizeof(b)), f[5], f[6],
			       f[7], f[8]);
		}
	}
	if (json)
		printf("]\n");
	reply_free(&r);
	return 0;
}

/* ------------------------------------------------------------ reports */

static void format_time(const char *epoch, char *buf, size_t len)
{
	time_t t = (time_t)strtoll(epoch, NULL, 10);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

static int cmd_reports(void)
{
	char *f[MAX_FIELDS], when[32];
	struct reply r;
	int e = request("reports", &r);

	if (e)
		return e;
	if (json)
		printf("[");
	else
		printf("%6s %-14s %-10s %-8s %7s %s\n", "ID", "TIME", "SCOPE", "ACTION", "VICTIM", "REASON");
	for (size_t i = 0; i < r.n_lines; i++) {
		size_t n = split(r.lines[i], f, MAX_FIELDS);
		if (n < 8 || strcmp(f[0], "report") != 0)
			continue;
		if (json) {
			printf("%s{\"id\":%s,\"scope\":", i ? "," : "", f[1]);
			json_str(stdout, f[2]);
			printf(",\"bytes\":%s,\"time\":%s,\"action\":", f[3], f[4]);
			json_str(stdout, f[5]);
			printf(",\"victim_pid\":%s,\"reason\":", f[6]);
			json_str(stdout, f[7]);
			printf("}");
		} else {
			format_time(f[4], when, sizeof(when));
			/* 6+1+14+1+10+1+8+1+7+1 = 50 columns, 30 left for the reason. */
			printf("%6s %-14s %-10.10s %-8.8s %7s %.30s\n", f[1], when, f[2], f[5], f[6], f[7]);
		}
	}
	if (json)
		printf("]\n");
	reply_free(&r);
	return 0;
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

/* "  label:    text", wrapped at word boundaries to fit 80 columns. */
static void field_line(const char *label, const char *text)
{
	const int indent = 13, width = 80 - indent;
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

static void show_report(const struct json *root)
{
	char when[32], a[16], b[16], c[16], e[16];
	const struct json *dec = json_get(root, "decision"), *t = json_get(root, "timings_ms");

	format_time(jstr(root, "time"), when, sizeof(when));
	printf("report %s: %s OOM", jstr(root, "id"), jstr(root, "scope"));
	if (json_get(root, "job") && json_get(root, "job")->type == JSON_STRING)
		printf(" of job %s", jstr(root, "job"));
	printf(" at %s%s\n", when,
	       json_get(root, "dry_run") && json_get(root, "dry_run")->boolean ? " (dry run)" : "");
	char buf[1024];
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
	if (t) {
		const struct json *fr = json_get(t, "freed");
		snprintf(buf, sizeof(buf), "decided after %s ms, acted after %s ms, memory freed after %s ms",
			 jstr(t, "decision"), jstr(t, "action"),
			 fr && fr->type == JSON_NUMBER ? fr->str : "?");
		field_line("timings:", buf);
	}

	const struct json *jobs = json_get(root, "jobs"), *cands = json_get(root, "candidates");
	printf("\n%-12s %4s %7s %7s %7s %7s %s\n", "JOB", "PRIO", "USAGE", "LIMIT", "MAX", "EXPECT", "KILL");
	for (size_t i = 0; jobs && i < jobs->n; i++) {
		const struct json *j = jobs->items[i];
		printf("%-12.12s %4s %7s %7s %7s %7s %s\n", jstr(j, "name"), jstr(j, "priority"),
		       jsize(j, "usage_bytes", a, sizeof(a)), jsize(j, "limit_bytes", b, sizeof(b)),
		       jsize(j, "limit_max_bytes", c, sizeof(c)), jsize(j, "expect_bytes", e, sizeof(e)),
		       jstr(j, "kill"));
	}
	printf("\n%7s %-12s %4s %7s %5s %-15s %s\n", "PID", "JOB", "PRIO", "RSS", "ADJ", "COMM", "");
	for (size_t i = 0; cands && i < cands->n; i++) {
		const struct json *p = cands->items[i];
		const struct json *prot = json_get(p, "protected");
		bool victim = dec && strcmp(jstr(p, "pid"), jstr(dec, "victim_pid")) == 0;
		printf("%7s %-12.12s %4s %7s %5s %-15.15s %s\n", jstr(p, "pid"), jstr(p, "job"),
		       jstr(p, "priority"), jsize(p, "rss_bytes", a, sizeof(a)), jstr(p, "oom_score_adj"),
		       jstr(p, "comm"),
		       victim		       ? "<- victim"
		       : prot && prot->boolean ? "protected"
					       : "");
	}
}

static int cmd_report_show(const char *id)
{
	char req[64];
	struct reply r;
	int e;

	snprintf(req, sizeof(req), "report %s", id);
	if ((e = request(req, &r)))
		return e;
	/* The records are the report's lines. */
	size_t total = 0;
	for (size_t i = 0; i < r.n_lines; i++)
		total += strlen(r.lines[i]) + 1;
	char *text = malloc(total + 1), *p = text;
	for (size_t i = 0; text && i < r.n_lines; i++)
		p += sprintf(p, "%s\n", r.lines[i]);
	if (json) {
		fputs(text ? text : "", stdout);
	} else {
		struct json *root = text ? json_parse(text) : NULL;
		if (!root) {
			fprintf(stderr, "oomkit: report %s is not valid JSON\n", id);
			e = EXIT_REFUSED;
		} else {
			show_report(root);
			json_free(root);
		}
	}
	free(text);
	reply_free(&r);
	return e;
}

/* ------------------------------------------------------------ run */

static int cmd_run(const char *job, char **argv)
{
	char req[128];
	struct reply r;
	int e;

	snprintf(req, sizeof(req), "run %s", job);
	/* The daemon moves the connecting process (this one) by its peer credentials. */
	if ((e = request(req, &r)))
		return e;
	reply_free(&r);
	execvp(argv[0], argv);
	fprintf(stderr, "oomkit: cannot run %s: %s\n", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* ------------------------------------------------------------ top */

static int cmd_top(unsigned iterations, unsigned interval_ms)
{
	bool tty = isatty(STDOUT_FILENO);

	for (unsigned i = 0; iterations == 0 || i < iterations; i++) {
		if (tty)
			printf("\033[H\033[2J");
		time_t now = time(NULL);
		char when[32];
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
		printf("oomkit top - %s (every %u ms, Ctrl-C quits)\n\n", when, interval_ms);
		int e = cmd_status();
		if (e)
			return e;
		printf("\n");
		if ((e = cmd_ps(NULL)))
			return e;
		fflush(stdout);
		if (iterations && i + 1 == iterations)
			break;
		struct timespec ts = {interval_ms / 1000, (long)(interval_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* ------------------------------------------------------------ prompt */

static void show_question(struct reply *q)
{
	char *f[MAX_FIELDS], a[16];

	for (size_t i = 0; i < q->n_lines; i++) {
		size_t n = split(q->lines[i], f, MAX_FIELDS);
		if (strcmp(f[0], "candidate") == 0 && n >= 6)
			printf("  kill %-7s  job %-12.12s prio %4s  %7s  %s\n", f[1], f[2], f[3],
			       human(u64(f[4]), a, sizeof(a)), f[5]);
		else if (strcmp(f[0], "choices") == 0 && n >= 2) {
			/* One choice a field: "kill" takes a PID. */
			printf("answer:");
			for (size_t k = 1; k < n; k++)
				printf("%s %s%s", k > 1 ? " |" : "", f[k],
				       strcmp(f[k], "kill") == 0 ? " PID" : "");
			printf(" (or skip)\n");
		}
	}
}

/* Sends one answer and prints the daemon's verdict on it. */
static int answer(struct conn *c, unsigned id, const char *line)
{
	char req[300];
	struct reply r;

	snprintf(req, sizeof(req), "answer %u %s\n", id, line);
	if (send_line(c->fd, req) < 0)
		goto closed;
	/* Frames of the prompt stream ("done" for this answer, another "oom")
	 * may come before the reply: a reply starts with "ok" or "error". */
	for (;;) {
		if (read_reply(c, &r) < 0)
			goto closed;
		if (r.ok || strncmp(r.first, "error ", 6) == 0)
			break;
		reply_free(&r);
	}
	if (r.ok)
		printf("done: %s\n", r.n_lines ? r.lines[0] : "");
	else
		printf("refused: %s\n", r.message);
	fflush(stdout);
	int rc = r.ok ? 0 : EXIT_REFUSED;
	reply_free(&r);
	return rc;
closed:
	fprintf(stderr, "oomkit: oomkitd closed the connection\n");
	return EXIT_UNREACHABLE;
}

static int cmd_prompt(bool once)
{
	struct conn c = {.fd = connect_daemon()};
	struct reply r;
	char line[256];
	int rc = 0;

	if (c.fd < 0) {
		fprintf(stderr, "oomkit: cannot reach oomkitd at %s: %s\n", socket_path, strerror(-c.fd));
		return EXIT_UNREACHABLE;
	}
	if (send_line(c.fd, "prompt\n") < 0 || read_reply(&c, &r) < 0) {
		fprintf(stderr, "oomkit: oomkitd closed the connection\n");
		rc = EXIT_UNREACHABLE;
		goto out;
	}
	if (!r.ok) {
		fprintf(stderr, "oomkit: %s\n", r.message);
		reply_free(&r);
		rc = EXIT_REFUSED;
		goto out;
	}
	reply_free(&r);
	printf("waiting for OOMs that ask a person (Ctrl-C quits)\n");
	fflush(stdout);
	for (;;) {
		if (read_reply(&c, &r) < 0) {
			fprintf(stderr, "oomkit: oomkitd closed the connection\n");
			rc = EXIT_UNREACHABLE;
			break;
		}
		/* A question's status line is "oom\tID\tSCOPE\tTIMEOUT_MS". */
		char *f[MAX_FIELDS];
		if (strncmp(r.first, "oom\t", 4) != 0) {
			reply_free(&r);
			continue;
		}
		size_t n = split(r.first, f, MAX_FIELDS);
		unsigned id = n >= 2 ? (unsigned)strtoul(f[1], NULL, 10) : 0;
		printf("\nOOM in %s (question %u): %s ms to answer\n", n >= 3 ? f[2] : "?", id,
		       n >= 4 ? f[3] : "?");
		show_question(&r);
		reply_free(&r);
		printf("> ");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			printf("\n");
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		rc = line[0] && strcmp(line, "skip") != 0 ? answer(&c, id, line) : 0;
		if (once || rc == EXIT_UNREACHABLE)
			break;
	}
out:
	close(c.fd);
	free(c.buf);
	return rc;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: oomkit [--socket PATH] [--json] COMMAND\n"
		   "  status                    the machine and its jobs\n"
		   "  ps [JOB]                  processes with their memory\n"
		   "  run --job NAME -- CMD...  run CMD in a job (keeps this pid)\n"
		   "  reports                   list OOM reports\n"
		   "  reports show ID           one report, readable\n"
		   "  top [--iterations N] [--interval MS]   live view\n"
		   "  prompt [--once]           answer OOMs whose chain asks a person\n"
		   "socket: $OOMKIT_SOCKET or " DEFAULT_SOCKET "\n");
}

int main(int argc, char **argv)
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
	const char *job = NULL;
	unsigned iterations = 0, interval_ms = 1000;
	bool once = false;
	int opt;

	if (getenv("OOMKIT_SOCKET"))
		socket_path = getenv("OOMKIT_SOCKET");
	/* '+': options stop at the command's own arguments (run -- CMD -x). */
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[optind];
	/* Options after the command. */
	optind++;
	int first_arg = optind;
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'J':
			job = optarg;
			break;
		case 'i':
			iterations = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'I':
			interval_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			once = true;
			break;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	(void)first_arg;
	int nargs = argc - optind;
	char **args = argv + optind;

	if (strcmp(cmd, "status") == 0 && nargs == 0)
		return cmd_status();
	if (strcmp(cmd, "ps") == 0 && nargs <= 1)
		return cmd_ps(nargs ? args[0] : NULL);
	if (strcmp(cmd, "reports") == 0 && nargs == 0)
		return cmd_reports();
	if (strcmp(cmd, "reports") == 0 && nargs == 2 && strcmp(args[0], "show") == 0)
		return cmd_report_show(args[1]);
	if (strcmp(cmd, "run") == 0 && job && nargs >= 1)
		return cmd_run(job, args);
	if (strcmp(cmd, "top") == 0 && nargs == 0)
		return cmd_top(iterations, interval_ms ? interval_ms : 1000);
	if (strcmp(cmd, "prompt") == 0 && nargs == 0)
		return cmd_prompt(once);
	usage(stderr);
	return EXIT_USAGE;
}
