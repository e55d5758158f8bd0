/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timing.h - the timings a configuration gives an OOM's actions at run
 * time: what the delay leaves them, a hook's timeout, a shed's wait.  Pure
 * functions of a parsed configuration (config.h), apart from its parsing.
 */
#ifndef OOMKITD_TIMING_H
#define OOMKITD_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

/* The hooks' timings, for the kill path (oom/chain.c) and for
 * explain alike, so that what explain says is what an OOM does.
 * config_kill_budget_ms(): what the delay leaves an OOM's actions when it
 * begins (the delay less a tenth of it), elapsed_ms after the event.
 * config_before_kill_ms(): a before_kill's timeout with budget_ms left:
 * hook_timeout, cut to the budget less the victim's kill_grace (one_process:
 * a kill of one process, the only kill with a grace); 0 when less than
 * CONFIG_HOOK_MIN_MS would be left, and the hook is not run.
 * config_after_kill_ms(): an after_kill's timeout (hook_timeout, at most the
 * delay).  config_shed_wait_ms(): a shed's wait, and its shed_command's
 * timeout (job NULL: the machine's own shed, a quarter of the delay). */
#define CONFIG_HOOK_MIN_MS 10
uint64_t config_kill_budget_ms(const struct config *cfg, uint64_t elapsed_ms);
uint64_t config_before_kill_ms(const struct config_job *job, bool one_process, uint64_t budget_ms);
uint64_t config_after_kill_ms(const struct config *cfg, const struct config_job *job);
uint64_t config_shed_wait_ms(const struct config *cfg, const struct config_job *job);

#endif
