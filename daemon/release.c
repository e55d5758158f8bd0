/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* release.c - see release.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jobs.h"
#include "log.h"
#include "release.h"

/* Gives the kernel OOM killer back to rel and every cgroup below it. */
struct release_walk {
	oomkit_ctx *ctx;
	char path[SCOPE_REL_MAX];
	unsigned released, failed;
};

static int release_tree(struct release_walk *w);

static int release_child(const char *name, void *userdata)
{
	struct release_walk *w = userdata;
	size_t n = strlen(w->path);
	if (n + 1 + strlen(name) >= sizeof(w->path))
		return 0;
	snprintf(w->path + n, sizeof(w->path) - n, "/%s", name);
	(void)release_tree(w);
	w->path[n] = '\0';
	return 0;
}

static int release_tree(struct release_walk *w)
{
	int r = oomkit_set_kernel_killer(w->ctx, w->path, true);
	if (r < 0 && r != -ENOENT) {
		log_err("%s: cannot give the kernel OOM killer back: %s", w->path, strerror(-r));
		w->failed++;
	} else if (r == 0) {
		w->released++;
	}
	return oomkit_cgroup_children(w->ctx, w->path, release_child, w);
}

int release_run(struct config *cfg)
{
	struct oomkit_options opts;
	struct release_walk w = {0};
	int r;

	oomkit_options_init(&opts);
	opts.guardian = false;
	opts.log = log_liboomkit;
	if ((r = oomkit_new(&opts, &w.ctx)) < 0) {
		log_err("cannot start liboomkit: %s", strerror(-r));
		return r;
	}
	char errors[CONFIG_ERRORS_MAX];
	r = config_resolve_machine(cfg, oomkit_memory_root(w.ctx), errors, sizeof(errors));
	if (r < 0)
		log_lines(LOG_LEVEL_ERR, errors);
	snprintf(w.path, sizeof(w.path), "%s", cfg->machine_rel);
	if (r == 0 && oomkit_cgroup_exists(w.ctx, w.path) == 1)
		(void)release_tree(&w);
	log_notice("released: the kernel OOM killer is back in %u cgroups%s", w.released,
		   w.failed ? " (some failed)" : "");
	oomkit_free(w.ctx);
	return r < 0 || w.failed ? -EIO : 0;
}
