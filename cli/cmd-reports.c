/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-reports.c - see cmd-reports.h. */
#include "cmd-reports.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "json-out.h"
#include "json-reader.h"
#include "report-view.h"
#include "term.h"

static void report_row(const struct cli *cli, const struct protocol_report *rep)
{
	char when[32];

	if (cli->json) {
		struct oomkit__json *jw = json_out();

		oomkit__json_open(jw, NULL, '{');
		oomkit__json_u64(jw, "id", rep->id);
		oomkit__json_str(jw, "scope", rep->scope);
		if (rep->instance)
			oomkit__json_str(jw, "instance", rep->instance);
		else
			oomkit__json_null(jw, "instance");
		oomkit__json_u64(jw, "bytes", rep->bytes);
		oomkit__json_fixed(jw, "time", rep->time_ms, 3);
		oomkit__json_str(jw, "action", rep->action);
		oomkit__json_i64(jw, "victim_pid", rep->victim_pid);
		oomkit__json_str(jw, "reason", rep->reason);
		oomkit__json_close(jw, '}');
		return;
	}
	term_time((int64_t)(rep->time_ms / 1000), when, sizeof(when));
	/* 6+1+14+1+10+1+8+1+7+1 = 50 columns; the reason takes the rest of
	 * the terminal's width (30 on 80), cut after a word if it is longer. */
	printf("%6u %-14s %s %s %7d %s\n", rep->id, when, COL(rep->scope, 10), COL(rep->action, 8),
	       (int)rep->victim_pid, WORDS(rep->reason, term_rest(cli->width, 50, 20)));
	/* An instance's name under its job's, whole: batch [batch-17.service]. */
	if (rep->instance)
		printf("%22s[%s]\n", "", TTY(rep->instance, 56));
}

static int list_reports(const struct cli *cli)
{
	const struct protocol_request req = {.verb = PROTOCOL_REPORTS};
	struct protocol_record rec;
	struct protocol_report rep;
	struct conn c;
	struct reply r;
	int e = conn_request(cli, &req, &c, &r), bad = 0;

	if (e)
		return e;
	if (cli->json)
		json_out_begin('[');
	else
		printf("%6s %-14s %-10s %-8s %7s %s\n", "ID", "TIME", "SCOPE", "ACTION", "VICTIM", "REASON");
	while (reply_next(&r, &rec, &bad))
		if (protocol_parse_report(&rec, &rep) == 0)
			report_row(cli, &rep);
	if (cli->json)
		e = json_out_finish(']');
	conn_close(&c);
	return bad ? conn_malformed(cli) : e ? EXIT_UNREACHABLE : 0;
}

static int show_report_id(const struct cli *cli, unsigned id)
{
	const struct protocol_request req = {.verb = PROTOCOL_REPORT, .id = id};
	char what[32];

	snprintf(what, sizeof(what), "report %u", id);
	return report_view_fetch(cli, &req, report_view_show, what);
}

int cmd_reports(struct cli *cli, int argc, char **argv)
{
	unsigned id;

	if (argc == 0)
		return list_reports(cli);
	if (argc != 2 || strcmp(argv[0], "show") != 0) {
		cli_err("reports takes nothing, or show ID");
		return EXIT_USAGE;
	}
	if (cli_parse_number("a report ID", argv[1], 0, UINT_MAX, &id) < 0)
		return EXIT_USAGE;
	return show_report_id(cli, id);
}
