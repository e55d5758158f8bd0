/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* release.c - see release.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "scope/release.h"
#include "scope/scope.h"
#include "scope/sdbus.h"
#include "scope/tracker.h"

struct release {
	oomkit_ctx *ctx;
	unsigned released, failed;
	bool systemd; /* a systemd machine: its units are put back by the helper */
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

static void on_instance(void *data, const char *rel, unsigned pattern, bool added)
{
	struct release *w = data;
	char unit[SDBUS_UNIT_MAX];

	(void)pattern;
	/* A unit's cgroup is systemd's: the helper's state file puts back what
	 * oomkitd changed there (sdbus_release), through systemd, and a write
	 * here would clobber the unit's own MemoryHigh= behind its back. */
	if (added && !(w->systemd && sdbus_unit_of(rel, unit, sizeof(unit))))
		release_one(w, rel);
}

/* The cgroups the jobs' patterns match now: the daemon's instances. */
static void release_instances(struct release *w, const struct config *cfg)
{
	struct tracker *t = NULL;
	const char **patterns;
	int r;

	if (!cfg->n_cgroups || !(patterns = calloc(cfg->n_cgroups, sizeof(*patterns))))
		return;
	for (unsigned i = 0; i < cfg->n_cgroups; i++)
		patterns[i] = cfg->cgroups[i].pattern;
	r = tracker_new(oomkit_memory_root(w->ctx), patterns, cfg->n_cgroups, on_instance, w, &t);
	free(patterns);
	if (r >= 0 && (r = tracker_start(t)) < 0)
		log_err("cannot walk the jobs' cgroup patterns: %s", strerror(-r));
	if (r < 0)
		w->failed++;
	tracker_free(t);
}

/* Only what this daemon holds: the machine, its configured jobs and the
 * instances its patterns match.  Any
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
	struct config_mount mount = {.root = oomkit_memory_root(w.ctx),
				     .v2 = oomkit_backend(w.ctx) == OOMKIT_BACKEND_V2};
	r = config_resolve_machine(cfg, &mount, errors, sizeof(errors));
	if (r < 0) {
		log_lines(LOG_LEVEL_ERR, errors);
	} else if (!cfg->machine_is_root) {
		/* The v2 root is never held: there is nothing to give back there. */
		release_one(&w, cfg->machine_rel);
		for (unsigned i = 0; i < cfg->n_jobs; i++) {
			snprintf(rel, sizeof(rel), "%s/%s", cfg->machine_rel, cfg->jobs[i].name);
			release_one(&w, rel);
		}
		w.systemd = sdbus_systemd_machine(oomkit_memory_root(w.ctx));
		release_instances(&w, cfg);
	}
	log_notice("released: the kernel OOM killer is back in %u cgroups%s", w.released,
		   w.failed ? " (some failed)" : "");
	oomkit_free(w.ctx);
	return r < 0 || w.failed ? -EIO : 0;
}
