/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-status.c - see cmd-status.h. */
#include "cmd-status.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "json-out.h"
#include "term.h"

/* ------------------------------------------------------------ status */

/* An instance's cgroup, "-" for none, in JSON. */
static void json_instance(struct oomkit__json *jw, const char *instance)
{
	if (strcmp(instance, "-") == 0)
		oomkit__json_null(jw, "instance");
	else
		oomkit__json_str(jw, "instance", instance);
}

/* "batch [batch-17.service]" for an instance (its cgroup's last name), the
 * job's name otherwise; escaped for the terminal by the caller. */
static const char *label(const char *job, const char *instance, char *buf, size_t len)
{
	if (strcmp(instance, "-") == 0)
		return job;
	const char *leaf = strrchr(instance, '/');
	snprintf(buf, len, "%s [%s]", job, leaf ? leaf + 1 : instance);
	return buf;
}

static void machine_row(const struct cli *cli, const struct protocol_machine *m)
{
	char br[32];

	if (cli->json) {
		struct oomkit__json *jw = json_out();

		oomkit__json_open(jw, "machine", '{');
		oomkit__json_str(jw, "cgroup", m->cgroup);
		oomkit__json_u64(jw, "usage_bytes", m->usage_bytes);
		oomkit__json_limit(jw, "limit_bytes", m->limit_bytes);
		oomkit__json_bool(jw, "under_oom", m->under_oom);
		oomkit__json_u64(jw, "ooms", m->ooms);
		oomkit__json_u64(jw, "kills", m->kills);
		oomkit__json_str(jw, "last_action", m->last_action);
		oomkit__json_close(jw, '}');
		oomkit__json_open(jw, "jobs", '[');
		return;
	}
	/* 8 + 30 + 2 + 11 + 1 + 18 + 10 = 80 columns at most. */
	term_bar(m->usage_bytes, m->limit_bytes, br, 16);
	printf("machine %s  %s/%s %s%s\n", TTY(m->cgroup, 30), HUMAN(m->usage_bytes), HUMAN(m->limit_bytes),
	       br, m->under_oom ? " UNDER OOM" : "");
	/* The last action takes the rest of the line, 40 columns on 80. */
	printf("        OOMs %" PRIu64 ", kills %" PRIu64 "%s%s\n\n", m->ooms, m->kills,
	       m->last_action[0] ? ", last: " : "", WIDE(m->last_action, term_rest(cli->width, 40, 40)));
	printf("%-12s %4s %13s %-14s %4s %5s %5s %s\n", "JOB", "PRIO", "USAGE/LIMIT", "", "OOMS", "KILLS",
	       "PROCS", "LAST ACTION");
}

static void job_row(const struct cli *cli, const struct protocol_job *j)
{
	char br[32], ul[24];

	if (cli->json) {
		struct oomkit__json *jw = json_out();

		oomkit__json_open(jw, NULL, '{');
		oomkit__json_str(jw, "name", j->name);
		oomkit__json_u64(jw, "priority", j->priority);
		oomkit__json_u64(jw, "usage_bytes", j->usage_bytes);
		oomkit__json_limit(jw, "limit_bytes", j->limit_bytes);
		oomkit__json_limit(jw, "limit_max_bytes", j->limit_max_bytes);
		oomkit__json_u64(jw, "expect_bytes", j->expect_bytes);
		oomkit__json_bool(jw, "under_oom", j->under_oom);
		oomkit__json_u64(jw, "ooms", j->ooms);
		oomkit__json_u64(jw, "kills", j->kills);
		oomkit__json_u64(jw, "processes", j->processes);
		if (j->has_owner)
			oomkit__json_u64(jw, "owner", j->owner);
		else
			oomkit__json_null(jw, "owner");
		oomkit__json_str(jw, "policy", j->chain);
		oomkit__json_str(jw, "last_action", j->last_action);
		json_instance(jw, j->instance);
		oomkit__json_close(jw, '}');
		return;
	}
	char name[256];
	const char *shown = label(j->name, j->instance, name, sizeof(name));
	/* An instance's label is shown whole, on a line of its own when it
	 * does not fit the column. */
	if (shown != j->name && strlen(shown) > 12)
		printf("%s\n%12s", TTY(shown, 78), "");
	else
		printf("%s", COL(shown, 12));
	term_bar(j->usage_bytes, j->limit_bytes, br, 12);
	snprintf(ul, sizeof(ul), "%s/%s", HUMAN(j->usage_bytes), HUMAN(j->limit_bytes));
	/* 12+1+4+1+13+1+14+1+4+1+5+1+5+1 = 64 columns; the last action takes
	 * the rest (16 on 80). */
	printf(" %4u %13s %-14s %4" PRIu64 " %5" PRIu64 " %5u %s%s\n", j->priority, ul, br, j->ooms, j->kills,
	       j->processes, j->last_action[0] ? WIDE(j->last_action, term_rest(cli->width, 64, 16)) : "-",
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
	int e = conn_request(cli, &req, &c, &r), bad = 0;
	bool seen_machine = false;

	if (e)
		return e;
	if (cli->json)
		json_out_begin('{');
	while (reply_next(&r, &rec, &bad)) {
		if (protocol_parse_machine(&rec, &m) == 0 && !seen_machine) {
			machine_row(cli, &m);
			seen_machine = true;
		} else if (protocol_parse_job(&rec, &j) == 0 && seen_machine) {
			job_row(cli, &j);
		}
	}
	if (cli->json) {
		if (seen_machine)
			oomkit__json_close(json_out(), ']');
		e = json_out_finish('}');
	}
	conn_close(&c);
	return bad || !seen_machine ? conn_malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

int cmd_status(struct cli *cli, int argc, char **argv)
{
	(void)argc, (void)argv;
	return show_status(cli);
}

/* ------------------------------------------------------------ ps */

static void proc_row(const struct cli *cli, const struct protocol_proc *p)
{
	if (cli->json) {
		struct oomkit__json *jw = json_out();

		oomkit__json_open(jw, NULL, '{');
		oomkit__json_i64(jw, "pid", p->pid);
		oomkit__json_str(jw, "job", p->job);
		oomkit__json_u64(jw, "rss_bytes", p->rss_bytes);
		oomkit__json_u64(jw, "swap_bytes", p->swap_bytes);
		oomkit__json_i64(jw, "oom_score_adj", p->oom_score_adj);
		oomkit__json_u64(jw, "uid", p->uid);
		oomkit__json_str(jw, "comm", p->comm);
		oomkit__json_str(jw, "cmdline", p->cmdline);
		json_instance(jw, p->instance);
		oomkit__json_close(jw, '}');
		return;
	}
	char name[256], kernel[32];
	const char *job = label(p->job, p->instance, name, sizeof(name));
	/* A process without a command line (a kernel thread, one whose memory
	 * could not be read) by its name, as ps(1) shows it. */
	const char *cmd =
	    p->cmdline[0] ? p->cmdline : (snprintf(kernel, sizeof(kernel), "[%s]", p->comm), kernel);
	/* 7+1+10+1+6+1+6+1+5+1+6+1+15+1 = 62 columns; the command takes the
	 * rest of the terminal's width (18 on 80), never less than 12. */
	printf("%7d %s %6s %6s %5d %6u %s %s\n", (int)p->pid,
	       job != p->job && strlen(job) > 10 ? TTY(job, 40) : COL(job, 10), HUMAN(p->rss_bytes),
	       HUMAN(p->swap_bytes), p->oom_score_adj, (unsigned)p->uid, COL(p->comm, 15),
	       WIDE(cmd, term_rest(cli->width, 62, 12)));
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
		cli_err("no job %s", TTY(job, 0));
		return EXIT_REFUSED;
	}
	if ((e = conn_request(cli, &req, &c, &r)))
		return e;
	if (cli->json)
		json_out_begin('[');
	else
		printf("%7s %-10s %6s %6s %5s %6s %-15s %s\n", "PID", "JOB", "RSS", "SWAP", "ADJ", "UID",
		       "COMM", "COMMAND");
	while (reply_next(&r, &rec, &bad))
		if (protocol_parse_proc(&rec, &p) == 0)
			proc_row(cli, &p);
	if (cli->json)
		e = json_out_finish(']');
	conn_close(&c);
	return bad ? conn_malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

int cmd_ps(struct cli *cli, int argc, char **argv)
{
	return show_ps(cli, argc ? argv[0] : NULL);
}

/* ------------------------------------------------------------ top */

int cmd_top(struct cli *cli, int argc, char **argv)
{
	bool tty_out = isatty(STDOUT_FILENO);

	(void)argc, (void)argv;
	for (unsigned i = 0; cli->iterations == 0 || i < cli->iterations; i++) {
		if (tty_out)
			printf("\033[H\033[2J");
		/* A terminal resized meanwhile: each screen as wide as it is now. */
		cli->width = term_width();
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
