/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* release.c - see release.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "release.h"
#include "scope.h"

struct release {
	oomkit_ctx *ctx;
	unsigned released, failed;
};

/* Gives the kernel OOM killer back to one memcg the daemon held. */
static void release_one(struct release *w, const char *rel)
{
	int r =
	    oomkit_cgroup_exists(w->ctx, rel) == 1 ? oomkit_set_kernel_killer(w->ctx, rel, true) : -ENOENT;

	if (r < 0 && r != -ENOENT) {
		log_err("%s: cannot give the kernel OOM killer back: %s", rel, strerror(-r));
		w->failed++;
	} else if (r == 0) {
		w->released++;
	}
}

/* Only what this daemon holds: the machine and its configured jobs.  Any
 * memcg below them held by another handler (a delegated owner's own
 * liboomkit handler, whose guardian answers for it) keeps its hold. */
int release_run(struct config *cfg)
{
	struct oomkit_options opts;
	struct release w = {0};
	char errors[CONFIG_ERRORS_MAX], rel[SCOPE_REL_MAX + CONFIG_NAME_MAX];
	int r;

	oomkit_options_init(&opts);
	opts.guardian = false;
	opts.log = log_liboomkit;
	if ((r = oomkit_new(&opts, &w.ctx)) < 0) {
		log_err("cannot start liboomkit: %s", strerror(-r));
		return r;
	}
	r = config_resolve_machine(cfg, oomkit_memory_root(w.ctx), errors, sizeof(errors));
	if (r < 0) {
		log_lines(LOG_LEVEL_ERR, errors);
	} else {
		release_one(&w, cfg->machine_rel);
		for (unsigned i = 0; i < cfg->n_jobs; i++) {
			snprintf(rel, sizeof(rel), "%s/%s", cfg->machine_rel, cfg->jobs[i].name);
			release_one(&w, rel);
		}
	}
	log_notice("released: the kernel OOM killer is back in %u cgroups%s", w.released,
		   w.failed ? " (some failed)" : "");
	oomkit_free(w.ctx);
	return r < 0 || w.failed ? -EIO : 0;
}
