/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * timing.c - the timings a configuration gives an OOM's actions (timing.h).
 */
#include "config/timing.h"

#include <signal.h>

uint64_t config_kill_budget_ms(const struct config *cfg, uint64_t elapsed_ms)
{
	uint64_t budget = cfg->delay_ms - cfg->delay_ms / 10;

	return budget > elapsed_ms ? budget - elapsed_ms : 0;
}

uint64_t config_before_kill_ms(const struct config_job *job, bool one_process, uint64_t budget_ms)
{
	uint64_t grace = one_process && job->kill_signal != SIGKILL ? job->kill_grace_ms : 0;

	if (budget_ms < grace + CONFIG_HOOK_MIN_MS)
		return 0;
	return job->hook_timeout_ms < budget_ms - grace ? job->hook_timeout_ms : budget_ms - grace;
}

uint64_t config_after_kill_ms(const struct config *cfg, const struct config_job *job)
{
	return job->hook_timeout_ms < cfg->delay_ms ? job->hook_timeout_ms : cfg->delay_ms;
}

uint64_t config_shed_wait_ms(const struct config *cfg, const struct config_job *job)
{
	return job && job->shed_wait_ms ? job->shed_wait_ms : cfg->delay_ms / 4;
}
