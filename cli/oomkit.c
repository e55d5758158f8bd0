/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit.c - the command line of oomkitd: one request to the daemon's
 * control socket per command (conn.h), and tables that fit 80 columns
 * (term.h), or JSON with --json (json-out.h).
 *
 * The entry point: each verb is a row of the table below - its options, how
 * many arguments it takes and its handler, which lives in cmd-*.c - and the
 * command line is read once, against that row.  A wrong option for a verb
 * is an error with its usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd-explain.h"
#include "cmd-prompt.h"
#include "cmd-reports.h"
#include "cmd-run.h"
#include "cmd-status.h"
#include "common/defaults.h"
#include "term.h"

struct verb {
	const char *name;
	const char *args; /* as the usage shows them */
	const char *help;
	const char *about; /* what `oomkit help NAME` adds, a few lines */
	unsigned options;  /* OPT_* it takes */
	int min_args, max_args;
	int (*run)(struct cli *cli, int argc, char **argv);
};

static int cmd_help(struct cli *cli, int argc, char **argv);

static const struct verb verbs[] = {
    {"status", "", "the machine and its jobs",
     "The machine (usage, limit, OOMs, kills, last action) and one row per job:\n"
     "priority, usage/limit, OOMs, kills, processes, last action.  A job that\n"
     "adopts cgroups by pattern has a row per instance.\n",
     OPT_JSON, 0, 0, cmd_status},
    {"ps", "[JOB]", "processes with their memory",
     "The processes of the machine, or of one job, with their memory and command\n"
     "lines; the command line takes the rest of the terminal's width ($COLUMNS,\n"
     "else the terminal's, else 80).\n",
     OPT_JSON, 0, 1, cmd_ps},
    {"run", "--job NAME -- CMD...", "run CMD in a job (keeps this pid)",
     "Asks the daemon to move this process into the job's memcg, then executes\n"
     "CMD, which keeps this process's pid.  Allowed to root and the job's owner.\n",
     OPT_JOB, 1, INT_MAX, cmd_run},
    {"reports", "[show ID]", "list OOM reports, or show one",
     "Without arguments, the OOM reports: id, time, scope, action, victim,\n"
     "reason.  'reports show ID': one report, its decision and reason, the\n"
     "outcome, the timings and every candidate.  Without readonly_status, a\n"
     "user other than root sees only the OOMs that concern it.\n",
     OPT_JSON, 0, 2, cmd_reports},
    {"top", "[--iterations N] [--interval MS]", "live view",
     "Status and processes, refreshed every second (or every MS milliseconds),\n"
     "until interrupted or N screens were shown.\n",
     OPT_ITERATIONS | OPT_INTERVAL, 0, 0, cmd_top},
    {"prompt", "[--once]", "answer OOMs whose chain asks a person",
     "Waits for OOMs whose chain reaches 'prompt', shows the candidates and\n"
     "reads one answer per question: 'kill PID', 'grow' (jobs only), 'kernel'\n"
     "or 'skip'.  With --once, exits after the first question.\n",
     OPT_ONCE, 0, 0, cmd_prompt},
    {"explain", "[JOB]", "what an OOM would do now, and why",
     "What the machine's chain (or the job's) would do if it ran out of memory\n"
     "now: each step's decision or why it would not apply, the ranking of the\n"
     "candidates, the processes no policy may choose, and the hooks it would run.\n",
     OPT_JSON, 0, 1, cmd_explain},
    {"help", "[COMMAND]", "this text, or what COMMAND does",
     "Without COMMAND, the list of commands; with it, that command's usage and\n"
     "what it does.  'oomkit COMMAND --help' does the same.\n",
     0, 0, 1, cmd_help},
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
	fprintf(f, "--version: the version of oomkit\n"
		   "--json: JSON output of status, ps and reports\n"
		   "socket: $OOMKIT_SOCKET or " OOMKITD_DEFAULT_SOCKET "\n"
		   "'oomkit help COMMAND' or 'oomkit COMMAND --help': what COMMAND does\n");
}

static void verb_synopsis(FILE *f, const struct verb *v)
{
	fprintf(f, "usage: oomkit %s%s%s%s\n", v->name, (v->options & OPT_JSON) ? " [--json]" : "",
		v->args[0] ? " " : "", v->args);
}

static void verb_usage(FILE *f, const struct verb *v)
{
	fprintf(f, "oomkit %s: %s\n", v->name, v->help);
	verb_synopsis(f, v);
	fprintf(f, "\n%s", v->about);
}

static const struct verb *find_verb(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc == 0) {
		usage(stdout);
		return 0;
	}
	const struct verb *v = find_verb(argv[0]);
	if (!v) {
		cli_err("unknown command '%s'", TTY(argv[0], 40));
		usage(stderr);
		return EXIT_USAGE;
	}
	verb_usage(stdout, v);
	return 0;
}

/* The options given that the verb does not take, named; or 0. */
static int check_options(const struct cli *cli, const struct verb *v)
{
	for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
		if ((cli->given & option_names[i].bit) && !(v->options & option_names[i].bit)) {
			cli_err("%s does not take %s", v->name, option_names[i].name);
			return -EINVAL;
		}
	if ((v->options & OPT_JOB) && !(cli->given & OPT_JOB)) {
		cli_err("%s needs --job NAME", v->name);
		return -EINVAL;
	}
	return 0;
}

static int check_arg_count(const struct verb *v, int n)
{
	if (n >= v->min_args && n <= v->max_args)
		return 0;
	if (v->max_args == 0)
		cli_err("%s takes no arguments", v->name);
	else if (n < v->min_args)
		cli_err("%s needs %s", v->name, v->args);
	else
		cli_err("%s takes at most %d argument%s", v->name, v->max_args, v->max_args == 1 ? "" : "s");
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
		return cli_parse_number("--iterations", arg, 1, 1000000, &cli->iterations);
	case 'I':
		cli->given |= OPT_INTERVAL;
		return cli_parse_number("--interval", arg, 1, 3600 * 1000, &cli->interval_ms);
	case 'o':
		cli->given |= OPT_ONCE;
		cli->once = true;
		return 0;
	default:
		return -EINVAL;
	}
}

/* One pass over argv: options anywhere before "--", the verb and its
 * arguments in order; everything after "--" is an argument as it is.
 * Returns 2 for --version; --help is noted in *help, for the verb. */
static int parse_args(int argc, char **argv, struct cli *cli, char ***ret_args, int *ret_n, bool *help)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
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
			*help = true;
		} else if (opt == 'V') {
			free(args);
			return 2;
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
	struct cli cli = {.socket_path = OOMKITD_DEFAULT_SOCKET, .interval_ms = 1000, .width = term_width()};
	char **args;
	int n;

	if (getenv("OOMKIT_SOCKET"))
		cli.socket_path = getenv("OOMKIT_SOCKET");
	bool help = false;
	int r = parse_args(argc, argv, &cli, &args, &n, &help);
	if (r == 0 && help) {
		/* "oomkit --help", "oomkit status --help", "oomkit help status --help". */
		const struct verb *h = n > 0 ? find_verb(args[0]) : NULL;
		if (h && h->run == cmd_help && n > 1)
			r = cmd_help(&cli, 1, args + 1);
		else if (h)
			verb_usage(stdout, h);
		else if (n > 0)
			r = cmd_help(&cli, 1, args);
		else
			usage(stdout);
		free(args);
		return r;
	}
	if (r == 2) {
		printf("oomkit " OOMKIT_PACKAGE_VERSION "\n");
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
		cli_err("unknown command '%s'", TTY(args[0], 40));
		usage(stderr);
		free(args);
		return EXIT_USAGE;
	}
	if (check_options(&cli, v) < 0 || check_arg_count(v, n - 1) < 0) {
		verb_synopsis(stderr, v);
		free(args);
		return EXIT_USAGE;
	}
	r = v->run(&cli, n - 1, args + 1);
	free(args);
	return r;
}
