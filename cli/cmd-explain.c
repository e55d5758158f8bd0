/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-explain.c - see cmd-explain.h. */
#include "cmd-explain.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "json-reader.h"
#include "report-view.h"
#include "term.h"
#include "common/value.h" /* the daemon's size format */

static const char *jstr(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && (v->type == JSON_STRING || v->type == JSON_NUMBER) ? v->str : "-";
}

static bool jtrue(const struct json *j, const char *key)
{
	const struct json *v = json_get(j, key);
	return v && v->type == JSON_BOOL && v->boolean;
}

/* A size as the daemon's log and reasons write it (value_format_bytes()). */
static const char *jsize(const struct json *j, const char *key, char *buf, size_t len)
{
	const struct json *v = json_get(j, key);
	if (!v || v->type != JSON_NUMBER)
		return "-";
	value_format_bytes(strtoull(v->str, NULL, 10), buf, len);
	return buf;
}

/* A decision object in words: its action and reason, or why it did not
 * apply (its not_applied, less the policy's name). */
static void show_verdict(const char *label, const struct json *d)
{
	char text[1024];
	const char *action = jstr(d, "action"), *why = jstr(d, "not_applied");

	if (strcmp(action, "none") != 0)
		snprintf(text, sizeof(text), "%s: %s", action, jstr(d, "reason"));
	else if (strchr(why, ':'))
		snprintf(text, sizeof(text), "does not apply: %s", strchr(why, ':') + 2);
	else
		snprintf(text, sizeof(text), "decides nothing");
	report_view_field(label, text);
}

/* One process: 6+4+1+7+1+12+1+9+1+5+1+15+1 = 64 columns, and its command
 * line in the rest of the terminal's width (16 on 80, never less than 12;
 * --json has it whole). */
static void proc_line(const char *rank, const struct json *p)
{
	char size[32], cmd[512];

	printf("      %4s %7s %s %9s %5s %s %s\n", TTY(rank, 4), TTY(jstr(p, "pid"), 7),
	       COL(jstr(p, "job"), 12), jsize(p, "rss_bytes", size, sizeof(size)),
	       TTY(jstr(p, "oom_score_adj"), 5), COL(jstr(p, "comm"), 15),
	       WIDE(report_view_command(jstr(p, "comm"), jstr(p, "cmdline"), cmd, sizeof(cmd)),
		    term_rest(report_view_width(), 64, 12)));
}

/* A ranked process; the rule that placed it, if one did, on a line of its
 * own (cut to fit the terminal: --json has it whole). */
static void show_proc(const struct json *p)
{
	const char *rule = jstr(p, "rule");

	proc_line(jstr(p, "rank"), p);
	if (strcmp(rule, "-") != 0)
		printf("%18s%s\n", "by ", TTY(rule, term_rest(report_view_width(), 18, 62)));
}

static void show_step(const struct json *s)
{
	const struct json *ranking = json_get(s, "ranking"), *alone = json_get(s, "alone");

	printf("  step %lu: %s%s\n", strtoul(jstr(s, "step"), NULL, 10) + 1, TTY(jstr(s, "policy"), 24),
	       !jtrue(s, "reached")  ? " (not reached)"
	       : jtrue(s, "decides") ? " <- decides"
				     : "");
	if (alone)
		show_verdict(jtrue(s, "decides") ? "does:" : "alone:", alone);
	if (!ranking || ranking->n == 0)
		return;
	printf("      %4s %7s %-12s %9s %5s %-15s %s\n", "RANK", "PID", "JOB", "RSS", "ADJ", "COMM",
	       "COMMAND");
	for (size_t i = 0; i < ranking->n; i++)
		show_proc(ranking->items[i]);
	unsigned long total = strtoul(jstr(s, "candidates"), NULL, 10);
	if (total > ranking->n)
		printf("      ... and %lu more\n", total - ranking->n);
}

/* The hooks the decision would run around it, each with the time it gets. */
static void show_hooks(const struct json *root)
{
	const struct json *hooks = json_get(root, "hooks");
	char text[1024];

	for (size_t i = 0; hooks && hooks->type == JSON_ARRAY && i < hooks->n; i++) {
		const struct json *h = hooks->items[i];
		const char *hook = jstr(h, "hook"), *by = jstr(h, "timeout_by");
		const char *when = strcmp(hook, "before_kill") == 0  ? "the kill waits for it"
				   : strcmp(hook, "after_kill") == 0 ? "once the victim has exited"
								     : "to give memory back";
		if (jtrue(h, "runs"))
			snprintf(text, sizeof(text), "%s of job %s, %s, at most %sms (%s%s): %s", hook,
				 jstr(h, "job"), when, jstr(h, "timeout_ms"),
				 strcmp(by, "delay") == 0 ? "cut by the " : "its ", by, jstr(h, "command"));
		else
			snprintf(text, sizeof(text), "%s of job %s: not run, the delay leaves it no time: %s",
				 hook, jstr(h, "job"), jstr(h, "command"));
		report_view_field("hook:", text);
	}
	unsigned long total = strtoul(jstr(root, "hooks_count"), NULL, 10);
	if (hooks && total > hooks->n)
		printf("      ... and %lu more\n", total - hooks->n);
}

static void show_scope(const struct json *root)
{
	const struct json *steps = json_get(root, "steps"), *ex = json_get(root, "excluded");
	const struct json *dec = json_get(root, "decision");
	char line[768];
	bool machine = strcmp(jstr(root, "scope"), "machine") == 0;

	printf("%s%s: %s processes; if it ran out of memory now:\n", machine ? "the machine" : "job ",
	       machine ? "" : TTY(jstr(root, "job"), 40), TTY(jstr(root, "processes"), 8));
	report_view_field("cgroup:", jstr(root, "cgroup"));
	snprintf(line, sizeof(line), "%s%s", jstr(root, "chain"),
		 jtrue(root, "prompt_available") ? " (a person is connected to answer)" : "");
	report_view_field("chain:", line);
	for (size_t i = 0; steps && i < steps->n; i++)
		show_step(steps->items[i]);
	if (ex && ex->n) {
		printf("  never chosen:\n");
		for (size_t i = 0; i < ex->n; i++) {
			proc_line("", ex->items[i]);
			printf("%18s%s\n", "",
			       TTY(jstr(ex->items[i], "excluded"), term_rest(report_view_width(), 18, 62)));
		}
		unsigned long total = strtoul(jstr(root, "excluded_count"), NULL, 10);
		if (total > ex->n)
			printf("      ... and %lu more\n", total - ex->n);
	}
	if (dec) {
		show_verdict("the chain:", dec);
		/* Its victim by its command line: a comm may be every candidate's. */
		if (json_get(dec, "victim_cmdline")) {
			char cmd[512];
			snprintf(line, sizeof(line), "%s %s", jstr(dec, "victim_pid"),
				 report_view_command(jstr(dec, "victim_comm"), jstr(dec, "victim_cmdline"),
						     cmd, sizeof(cmd)));
			report_view_field("victim:", line);
		}
	}
	show_hooks(root);
}

/* One scope's document, or a job's instances, one after the other. */
static void show(const struct json *root)
{
	const struct json *inst = json_get(root, "instances");

	if (!inst) {
		show_scope(root);
		return;
	}
	if (inst->n == 0)
		printf("job %s: no instance now\n", TTY(jstr(root, "job"), 40));
	for (size_t i = 0; i < inst->n; i++) {
		if (i)
			putchar('\n');
		show_scope(inst->items[i]);
	}
}

int cmd_explain(struct cli *cli, int argc, char **argv)
{
	struct protocol_request req = {.verb = PROTOCOL_EXPLAIN};

	if (argc == 1) {
		if (strlen(argv[0]) >= sizeof(req.job)) {
			cli_err("no job %s", TTY(argv[0], 64));
			return EXIT_USAGE;
		}
		snprintf(req.job, sizeof(req.job), "%s", argv[0]);
	}
	return report_view_fetch(cli, &req, show, "the daemon's explanation");
}
