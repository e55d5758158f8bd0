/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * release.h - `oomkitd --release`, for the unit's ExecStopPost: a daemon
 * killed together with its guardian (a whole-unit SIGKILL) leaves the memcgs
 * it held with their kernel killer off and nobody watching; this gives the
 * kernel OOM killer back to them: the machine, the configured jobs and the
 * cgroups the jobs' patterns match (on a systemd machine, not a unit's: the
 * systemd helper's state file puts those back through systemd), and nothing
 * else (other handlers' holds below them stay).
 */
#ifndef OOMKITD_RELEASE_H
#define OOMKITD_RELEASE_H

#include "config/config.h"

/* 0, or -errno after logging what failed. */
int release_run(struct config *cfg);

#endif
