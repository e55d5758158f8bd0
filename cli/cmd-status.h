/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd-status.h - the verbs that show the machine: status (the machine and
 * its jobs), ps (processes with their memory) and top (both, again and
 * again).  Tables fit 80 columns; status and ps take --json.
 */
#ifndef OOMKIT_CLI_CMD_STATUS_H
#define OOMKIT_CLI_CMD_STATUS_H

#include "cli.h"

int cmd_status(struct cli *cli, int argc, char **argv);
/* ps [JOB] */
int cmd_ps(struct cli *cli, int argc, char **argv);
/* top [--iterations N] [--interval MS] */
int cmd_top(struct cli *cli, int argc, char **argv);

#endif
