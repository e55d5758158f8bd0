/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report-view.c - see report-view.h. */
#include "report-view.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "json.h" /* lib/json.h: the text escaper */
#include "common/protocol.h"
#include "term.h"
#include "common/value.h" /* the daemon's size format */

static const char *jstr(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->type == JSON_STRING ? v->str : v && v->type == JSON_NUMBER ? v->str : "-";
}

/* A size as the daemon's log and reasons write it (value_format_bytes()):
 * one format in everything a person reads of an OOM. */
static const char *jsize(const struct json *j, const char *key, char *buf, size_t len)
{
	const struct json *v = json_get(j, key);
	if (!v || v->type != JSON_NUMBER)
		return "unlimited";
	if (strcmp(key, "expect_bytes") == 0 && strcmp(v->str, "0") == 0)
		return "-";
	value_format_bytes(strtoull(v->str, NULL, 10), buf, len);
	return buf;
}

static size_t view_width = 80;

size_t report_view_width(void)
{
	return view_width;
}

const char *report_view_command(const char *comm, const char *cmdline, char *buf, size_t len)
{
	if (cmdline && cmdline[0] && strcmp(cmdline, "-") != 0)
		snprintf(buf, len, "%s", cmdline);
	else
		snprintf(buf, len, "[%s]", comm);
	return buf;
}

void report_view_field(const char *label, const char *raw)
{
	const int indent = 13, width = (int)view_width - indent;
	char safe[4096];
	const char *text = term_text(raw, 0, safe, sizeof(safe));
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

/* "before_kill exited 0 after 47 ms; after_kill signal SIGSEGV after 3 ms". */
static void show_hooks(const struct json *root)
{
	const struct json *hooks = json_get(root, "hooks");
	char buf[1024];
	size_t off = 0;

	for (size_t i = 0; hooks && hooks->type == JSON_ARRAY && i < hooks->n && off < sizeof(buf); i++) {
		const struct json *h = hooks->items[i];
		const char *ended = jstr(h, "ended");
		const char *what = strcmp(ended, "exited") == 0	   ? jstr(h, "exit_status")
				   : strcmp(ended, "signal") == 0  ? jstr(h, "signal")
				   : strcmp(ended, "not run") == 0 ? jstr(h, "error")
								   : "";
		int n = snprintf(buf + off, sizeof(buf) - off, "%s%s %s%s%s after %s ms", i ? "; " : "",
				 jstr(h, "hook"), ended, what[0] ? " " : "", what, jstr(h, "duration_ms"));
		off += n > 0 ? (size_t)n : 0;
	}
	if (off)
		report_view_field("hooks:", buf);
}

static void show_report_head(const struct json *root, const struct json *dec)
{
	char when[32], buf[1024];

	term_time(strtoll(jstr(root, "time"), NULL, 10), when, sizeof(when));
	printf("report %s: %s OOM", TTY(jstr(root, "id"), 0), TTY(jstr(root, "scope"), 0));
	if (json_get(root, "job") && json_get(root, "job")->type == JSON_STRING)
		printf(" of job %s", TTY(jstr(root, "job"), 0));
	/* An instance as status shows it: "batch [batch-17.service]". */
	if (json_get(root, "instance") && json_get(root, "instance")->type == JSON_STRING) {
		const char *inst = jstr(root, "instance"), *leaf = strrchr(inst, '/');
		printf(" [%s]", TTY(leaf ? leaf + 1 : inst, 0));
	}
	printf(" at %s%s\n", when,
	       json_get(root, "dry_run") && json_get(root, "dry_run")->boolean ? " (dry run)" : "");
	snprintf(buf, sizeof(buf), "%s (limit hit by %s)", jstr(root, "cgroup"), jstr(root, "origin"));
	report_view_field("cgroup:", buf);
	report_view_field("chain:", jstr(root, "chain"));
	if (dec) {
		snprintf(buf, sizeof(buf), "%s%s%s", jstr(dec, "action"),
			 strcmp(jstr(dec, "policy"), "") ? " by " : "", jstr(dec, "policy"));
		report_view_field("decision:", buf);
		report_view_field("reason:", jstr(dec, "reason"));
		/* The victim by its command line: its comm ("python3") may be
		 * every candidate's. */
		if (json_get(dec, "victim_cmdline")) {
			char cmd[512];
			snprintf(buf, sizeof(buf), "%s %s", jstr(dec, "victim_pid"),
				 report_view_command(jstr(dec, "victim_comm"), jstr(dec, "victim_cmdline"),
						     cmd, sizeof(cmd)));
			report_view_field("victim:", buf);
		}
		const struct json *rule = json_get(dec, "victim_rule");
		if (rule && rule->type == JSON_STRING)
			report_view_field("rule:", rule->str);
		if (strcmp(jstr(dec, "not_applied"), "") != 0)
			report_view_field("skipped:", jstr(dec, "not_applied"));
	}
	const struct json *ans = json_get(root, "prompt_answer"), *fu = json_get(root, "followup");
	if (ans)
		report_view_field("answer:", ans->str && ans->str[0] ? ans->str : "(none)");
	if (fu) {
		snprintf(buf, sizeof(buf), "%s: %s", jstr(fu, "action"), jstr(fu, "reason"));
		report_view_field("then:", buf);
	}
	report_view_field("outcome:", jstr(root, "outcome"));
	show_hooks(root);
	const struct json *t = json_get(root, "timings_ms");
	if (t) {
		const struct json *fr = json_get(t, "freed"), *why = json_get(root, "not_freed");
		char freed[256];
		/* No time when the cgroup was not seen to leave OOM: the report
		 * says why (a report of an older daemon does not). */
		if (fr && fr->type == JSON_NUMBER)
			snprintf(freed, sizeof(freed), "memory freed after %s ms", fr->str);
		else
			snprintf(freed, sizeof(freed), "memory not seen freed: %s",
				 why && why->type == JSON_STRING
				     ? why->str
				     : "the cgroup did not leave OOM while oomkitd watched");
		snprintf(buf, sizeof(buf), "decided after %s ms, acted after %s ms; %s", jstr(t, "decision"),
			 jstr(t, "action"), freed);
		report_view_field("timings:", buf);
	}
}

void report_view_show(const struct json *root)
{
	char a[32], b[32], c[32], e[32];
	const struct json *dec = json_get(root, "decision");

	show_report_head(root, dec);
	const struct json *jobs = json_get(root, "jobs"), *cands = json_get(root, "candidates");
	printf("\n%-12s %4s %9s %9s %9s %9s %s\n", "JOB", "PRIO", "USAGE", "LIMIT", "MAX", "EXPECT", "KILL");
	for (size_t i = 0; jobs && i < jobs->n; i++) {
		const struct json *j = jobs->items[i];
		printf("%s %4s %9s %9s %9s %9s %s\n", COL(jstr(j, "name"), 12), TTY(jstr(j, "priority"), 4),
		       jsize(j, "usage_bytes", a, sizeof(a)), jsize(j, "limit_bytes", b, sizeof(b)),
		       jsize(j, "limit_max_bytes", c, sizeof(c)), jsize(j, "expect_bytes", e, sizeof(e)),
		       TTY(jstr(j, "kill"), 8));
	}
	/* 7+1+12+1+4+1+9+1+5+1+15+1+9+1 = 68 columns; the command line takes
	 * the rest of the terminal's width (12 on 80), never less than 12. */
	size_t cmd_width = term_rest(view_width, 68, 12);
	printf("\n%7s %-12s %4s %9s %5s %-15s %-9s %s\n", "PID", "JOB", "PRIO", "RSS", "ADJ", "COMM", "",
	       "COMMAND");
	for (size_t i = 0; cands && i < cands->n; i++) {
		const struct json *p = cands->items[i];
		const struct json *prot = json_get(p, "protected");
		bool victim = dec && strcmp(jstr(p, "pid"), jstr(dec, "victim_pid")) == 0;
		char cmd[512];
		printf("%7s %s %4s %9s %5s %s %-9s %s\n", TTY(jstr(p, "pid"), 7), COL(jstr(p, "job"), 12),
		       TTY(jstr(p, "priority"), 4), jsize(p, "rss_bytes", a, sizeof(a)),
		       TTY(jstr(p, "oom_score_adj"), 5), COL(jstr(p, "comm"), 15),
		       victim		       ? "<- victim"
		       : prot && prot->boolean ? "protected"
					       : "",
		       WIDE(report_view_command(jstr(p, "comm"), jstr(p, "cmdline"), cmd, sizeof(cmd)),
			    cmd_width));
	}
}

/* The code point of a valid sequence (oomkit__utf8_len()). */
static unsigned code_point(const unsigned char *p, size_t k)
{
	unsigned cp = k == 2 ? p[0] & 0x1fu : k == 3 ? p[0] & 0x0fu : p[0] & 0x07u;

	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (p[i] & 0x3fu);
	return cp;
}

/* The report's JSON as it is, but for what a terminal might obey.  The
 * daemon's JSON writer already writes what the text escaper would not keep
 * as \uXXXX; this holds for a report of an older daemon too.  Past ASCII,
 * bytes only stand inside strings, where \uXXXX means the same: what the
 * text escaper would not keep (a C1 control, a direction override, a byte
 * that is not UTF-8, as its value) goes out in that form; so does a control
 * byte, which is not valid JSON raw anyway. */
void report_view_json(const char *text)
{
	while (*text) {
		unsigned char c = (unsigned char)*text;
		size_t n = strnlen(text, 4), keep = c >= 0x80 ? oomkit__text_keep(text, n) : 0, k;
		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r') {
			putchar(*text++);
			continue;
		}
		if (keep) {
			fwrite(text, 1, keep, stdout);
			text += keep;
			continue;
		}
		k = c >= 0x80 ? oomkit__utf8_len((const unsigned char *)text, n) : 0;
		printf("\\u%04x", k ? code_point((const unsigned char *)text, k) : c);
		text += k ? k : 1;
	}
}

int report_view_fetch(const struct cli *cli, const struct protocol_request *req,
		      void (*show)(const struct json *root), const char *what)
{
	struct conn c;
	struct reply r;
	char *text = NULL;
	size_t len;
	int e = conn_request(cli, req, &c, &r);

	if (e)
		return e;
	view_width = cli->width;
	int rr = reply_data_text(&r, &text, &len);
	conn_close(&c);
	if (rr < 0)
		return conn_malformed(cli);
	if (cli->json) {
		report_view_json(text);
	} else {
		struct json *root = json_parse(text);
		if (!root) {
			cli_err("%s is not valid JSON", what);
			e = EXIT_REFUSED;
		} else {
			show(root);
			json_free(root);
		}
	}
	free(text);
	return e;
}
