/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-prompt.c - see cmd-prompt.h. */
#include "cmd-prompt.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "term.h"

/* Shows a question frame; returns its choices. */
static unsigned show_question(struct reply *q)
{
	struct protocol_record rec;
	struct protocol_candidate cand;
	unsigned choices = 0;
	int bad = 0;

	printf("\nOOM in %s (question %u): %" PRIu64 " ms to answer\n", TTY(q->status.question.scope, 0),
	       q->status.question.id, q->status.question.timeout_ms);
	while (reply_next(q, &rec, &bad)) {
		if (protocol_parse_candidate(&rec, &cand) == 0) {
			/* The daemon sends them preferred first, avoided last: a mark says why. */
			bool ruled = strcmp(cand.place, "prefer") == 0 || strcmp(cand.place, "avoid") == 0;
			printf("  kill %-7d  job %s prio %4u  %7s  %s%s%s\n", (int)cand.pid,
			       COL(cand.job, 12), cand.priority, HUMAN(cand.rss_bytes), TTY(cand.comm, 16),
			       ruled ? "  " : "", ruled ? TTY(cand.place, 8) : "");
			if (ruled && strcmp(cand.rule, "-") != 0)
				printf("%15s%s\n", "by ", TTY(cand.rule, 62));
		} else
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
	if (strcmp(what, "kill") == 0 && arg && cli_parse_number("the PID", arg, 1, INT_MAX, &pid) == 0) {
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

	if (conn_send(c, req) < 0)
		return -ECONNRESET;
	do {
		if (conn_read(c, &r) < 0)
			return -ECONNRESET;
	} while (r.status.kind == PROTOCOL_QUESTION ||
		 r.status.kind == PROTOCOL_DONE); /* the prompt's own frames */
	if (r.status.kind == PROTOCOL_ERROR) {
		printf("refused: %s\n", TTY(r.status.message, 0));
		fflush(stdout);
		return EXIT_REFUSED;
	}
	if (reply_next(&r, &rec, &bad))
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

int cmd_prompt(struct cli *cli, int argc, char **argv)
{
	const struct protocol_request req = {.verb = PROTOCOL_PROMPT};
	struct conn c;
	struct reply r;
	int rc = conn_request(cli, &req, &c, &r);

	(void)argc, (void)argv;
	if (rc)
		return rc;
	printf("waiting for OOMs that ask a person (Ctrl-C quits)\n");
	fflush(stdout);
	for (;;) {
		if (conn_read(&c, &r) < 0) {
			cli_err("oomkitd closed the connection");
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
			cli_err("oomkitd closed the connection");
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
