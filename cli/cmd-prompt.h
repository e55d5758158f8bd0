/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd-prompt.h - prompt [--once]: listens for the questions oomkitd asks a
 * person during an OOM's delay (those that concern this user), shows each
 * with its candidates and choices, and sends the answer typed.
 */
#ifndef OOMKIT_CLI_CMD_PROMPT_H
#define OOMKIT_CLI_CMD_PROMPT_H

#include "cli.h"

int cmd_prompt(struct cli *cli, int argc, char **argv);

#endif
