/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd-reports.h - reports: one line per OOM report from the daemon's index,
 * or `reports show ID`, one report read from the daemon and rendered
 * (report-view.h).  Both take --json.
 */
#ifndef OOMKIT_CLI_CMD_REPORTS_H
#define OOMKIT_CLI_CMD_REPORTS_H

#include "cli.h"

/* reports [show ID] */
int cmd_reports(struct cli *cli, int argc, char **argv);

#endif
