/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd-run.h - run --job NAME -- CMD...: the daemon moves this process (the
 * one that asks) into the job, which then becomes CMD, keeping its pid.
 */
#ifndef OOMKIT_CLI_CMD_RUN_H
#define OOMKIT_CLI_CMD_RUN_H

#include "cli.h"

/* argv: CMD and its arguments.  Returns only if CMD could not run: the exit
 * code (1 refused, 3 unreachable, 126/127 exec failed). */
int cmd_run(struct cli *cli, int argc, char **argv);

#endif
