/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-run.c - see cmd-run.h. */
#include "cmd-run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "term.h"

int cmd_run(struct cli *cli, int argc, char **argv)
{
	struct protocol_request req = {.verb = PROTOCOL_RUN};
	struct conn c;
	struct reply r;
	int e;

	(void)argc;
	if (snprintf(req.job, sizeof(req.job), "%s", cli->job) >= (int)sizeof(req.job)) {
		cli_err("no job %s", TTY(cli->job, 0));
		return EXIT_REFUSED;
	}
	/* The daemon moves the process that asks (this one), which then becomes CMD. */
	if ((e = conn_request(cli, &req, &c, &r)))
		return e;
	conn_close(&c);
	execvp(argv[0], argv);
	cli_err("cannot run %s: %s", TTY(argv[0], 0), strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
