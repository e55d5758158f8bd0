/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd-explain.h - explain [JOB]: what the machine's or a job's chain would
 * do if it ran out of memory now, as the daemon computes it with the code
 * an OOM runs (daemon/oom/explain.h): each step's verdict, each ranking policy's
 * order of the candidates with the rule that placed each, the processes
 * that are no candidates and why, and the chain's decision.  --json prints
 * the daemon's document as it is (but for what a terminal might obey).
 */
#ifndef OOMKIT_CLI_CMD_EXPLAIN_H
#define OOMKIT_CLI_CMD_EXPLAIN_H

#include "cli.h"

/* explain [JOB] */
int cmd_explain(struct cli *cli, int argc, char **argv);

#endif
