/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jobs.c - see jobs.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope/jobs.h"
#include "base/log.h"
#include "common/value.h"

/* A delegated job's owner has the first delay; we act before the second ends. */
static uint64_t job_delay(const struct config *cfg, const struct config_job *c)
{
	return c->has_owner ? 2 * cfg->delay_ms : cfg->delay_ms;
}

static void delegate(struct jobs *j, struct scope *s)
{
	const struct config_job *c = s->job;
	/* The group was looked up with the owner, as the configuration was read:
	 * no name service is asked from here. */
	int r = oomkit_cgroup_delegate(j->ctx, s->rel, c->owner, c->owner_gid);

	if (r < 0)
		log_err("%s: cannot delegate to uid %u: %s", s->name, (unsigned)c->owner, strerror(-r));
	else
		log_info("%s: delegated to uid %u (%d control files)", s->name, (unsigned)c->owner, r);
}

/* An existing memcg keeps a limit raised earlier, within [limit, limit_max]. */
static void adopt(struct jobs *j, struct scope *s)
{
	const struct config_job *c = s->job;
	struct oomkit_cgroup_memory m;
	char a[32];
	int r;

	if (oomkit_cgroup_memory(j->ctx, s->rel, &m) < 0)
		return;
	int n = oomkit_cgroup_pids(j->ctx, s->rel, true, j->pids, j->max_pids);
	uint64_t want = m.limit_bytes < c->limit_bytes	     ? c->limit_bytes
			: m.limit_bytes > c->limit_max_bytes ? c->limit_max_bytes
							     : m.limit_bytes;
	if (want != m.limit_bytes && !j->dry_run && (r = oomkit_set_limit(j->ctx, s->rel, want)) < 0)
		log_warning("%s: cannot set the limit: %s", s->name, strerror(-r));
	value_format_bytes(want, a, sizeof(a));
	log_info("%s: adopted %s with %d processes, limit %s", s->name, s->rel, n < 0 ? 0 : n, a);
}

static void setup_job(struct jobs *j, struct scope *s)
{
	const struct config_job *c = s->job;
	char a[32];
	int r, exists = oomkit_cgroup_exists(j->ctx, s->rel);

	if (exists <= 0 && j->dry_run) {
		log_warning("%s: memcg %s does not exist; dry run: not created, not watched", s->name,
			    s->rel);
		return;
	}
	if (exists > 0) {
		adopt(j, s);
	} else if ((r = oomkit_cgroup_create(j->ctx, s->rel, c->limit_bytes)) < 0) {
		log_err("%s: cannot create %s: %s", s->name, s->rel, strerror(-r));
		return;
	} else {
		value_format_bytes(c->limit_bytes, a, sizeof(a));
		log_info("%s: created %s, limit %s, priority %u", s->name, s->rel, a, c->priority);
	}
	if (c->has_owner && !j->dry_run)
		delegate(j, s);
	handler_watch(j->handler, s, job_delay(j->cfg, c));
	handler_note_oom_count(j->handler, s);
}

static struct scope *add_job(struct jobs *j, const struct config_job *c)
{
	char rel[SCOPE_REL_MAX + CONFIG_NAME_MAX];
	int err = 0;

	snprintf(rel, sizeof(rel), "%s/%s", j->scopes->machine.rel, c->name);
	struct scope *s = scope_add_job(j->scopes, c, rel, &err);
	if (!s && err == -ENAMETOOLONG)
		log_err("%s: the memcg path is too long", c->name);
	return s;
}

int jobs_setup(struct jobs *j, const struct config *cfg)
{
	struct scope *machine = &j->scopes->machine;
	int r;

	j->cfg = cfg;
	/* config_resolve_machine() made machine_rel, against this memory mount. */
	if ((r = scope_set_machine_rel(j->scopes, cfg->machine_rel)) < 0) {
		log_err("machine %s: %s", cfg->machine, strerror(-r));
		return r;
	}
	machine->chain = &cfg->chain;
	/* The v2 root exists, has no limit and no memory.events: lowmem.c watches it. */
	if (cfg->machine_is_root) {
		log_info("machine %s: the cgroup v2 root", cfg->machine);
	} else if (!j->dry_run) {
		r = oomkit_cgroup_create(j->ctx, machine->rel, cfg->machine_limit_bytes);
		if (r < 0) {
			log_err("cannot create the machine %s: %s", cfg->machine, strerror(-r));
			return r;
		}
		log_info("machine %s %s", cfg->machine, r ? "created" : "adopted");
	} else if (oomkit_cgroup_exists(j->ctx, machine->rel) <= 0) {
		log_err("machine %s does not exist (dry run creates nothing)", cfg->machine);
		return -ENOENT;
	}
	/* A job with patterns is its instances (adopt.c), not a memcg of ours. */
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		struct scope *s = cfg->jobs[i].n_cgroups ? NULL : add_job(j, &cfg->jobs[i]);
		if (s)
			setup_job(j, s);
	}
	(void)handler_watch_pressure(j->handler);
	if (cfg->machine_is_root)
		return 0;
	handler_watch(j->handler, machine, cfg->delay_ms);
	handler_note_oom_count(j->handler, machine);
	return machine->watch ? 0 : -EIO;
}

/* ------------------------------------------------------------ reload */

static void reload_job(struct jobs *j, struct scope *s, const struct config *old_cfg,
		       const struct config_job *c)
{
	const struct config_job *old = s->job;
	int r;

	s->job = c;
	s->chain = &c->chain;
	if (!j->dry_run && c->limit_bytes != old->limit_bytes &&
	    (r = oomkit_set_limit(j->ctx, s->rel, c->limit_bytes)) < 0)
		log_warning("%s: cannot set the new limit: %s", s->name, strerror(-r));
	if (c->has_owner && (!old->has_owner || old->owner != c->owner) && !j->dry_run)
		delegate(j, s);
	if (job_delay(j->cfg, c) != job_delay(old_cfg, old) || !s->watch)
		handler_watch(j->handler, s, job_delay(j->cfg, c));
	else if (c->limit_bytes != old->limit_bytes)
		handler_hold_after_limit(j->handler, s, job_delay(j->cfg, c));
}

static void reload_machine(struct jobs *j, const struct config *old)
{
	const struct config *n = j->cfg;
	struct scope *machine = &j->scopes->machine;
	int r;

	machine->chain = &n->chain;
	if (n->machine_is_root)
		return;
	if (!j->dry_run && n->machine_limit_bytes != old->machine_limit_bytes &&
	    n->machine_limit_bytes != OOMKIT_UNLIMITED &&
	    (r = oomkit_set_limit(j->ctx, machine->rel, n->machine_limit_bytes)) < 0)
		log_warning("reload: cannot set the machine limit: %s", strerror(-r));
	if (n->delay_ms != old->delay_ms)
		handler_watch(j->handler, machine, n->delay_ms);
	else if (n->machine_limit_bytes != old->machine_limit_bytes)
		handler_hold_after_limit(j->handler, machine, n->delay_ms);
}

void jobs_reload(struct jobs *j, const struct config *cfg)
{
	const struct config *old = j->cfg;

	j->cfg = cfg;
	reload_machine(j, old);
	SCOPE_FOREACH_JOB (s, j->scopes) {
		const struct config_job *c = config_find_job(cfg, s->name);
		if (s->kind != SCOPE_KIND_JOB || (c && !c->n_cgroups))
			continue;
		log_notice("reload: %s is no longer configured; its memcg is left as it is, unwatched",
			   s->name);
		handler_unwatch(j->handler, s);
		scope_remove(j->scopes, s);
	}
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		const struct config_job *c = &cfg->jobs[i];
		struct scope *s = scope_by_name(j->scopes, c->name);
		if (c->n_cgroups)
			continue;
		if (s)
			reload_job(j, s, old, c);
		else if ((s = add_job(j, c)))
			setup_job(j, s);
		else
			log_err("reload: no room for job %s: oomkitd started with room for %u jobs; restart "
				"it to "
				"take more",
				c->name, j->scopes->max_jobs);
	}
}

/* ------------------------------------------------------------ the reserve */

/* Whether the daemon runs as a systemd service on cgroup v2, in its unit's
 * own cgroup; that cgroup's path goes to cg.  There the unit is the reserve:
 * systemd protects and bounds it (MemoryMin=, MemoryMax= in the unit) and
 * tracks the service by it, so moving into a memcg of our own would take the
 * daemon away from systemd.  ($INVOCATION_ID is set for every service run.)
 * On v1 the memory hierarchy is not the one systemd tracks processes in. */
static bool reserve_is_unit(struct jobs *j, char *cg, size_t len)
{
	const char *invocation = getenv("INVOCATION_ID");
	static const char suffix[] = ".service";
	size_t n;

	if (!invocation || !*invocation || oomkit_backend(j->ctx) != OOMKIT_BACKEND_V2 ||
	    oomkit_process_cgroup(j->ctx, getpid(), cg, len) < 0)
		return false;
	n = strlen(cg);
	return n > sizeof(suffix) - 1 && strcmp(cg + n - (sizeof(suffix) - 1), suffix) == 0;
}

int jobs_enter_reserve(struct jobs *j)
{
	char unit[SCOPE_REL_MAX];
	int r;

	j->reserve[0] = '\0';
	if (j->dry_run || j->cfg->reserve_bytes == 0)
		return 0;
	if (reserve_is_unit(j, unit, sizeof(unit))) {
		log_info("running in %s: the unit's memory protection and limit are the reserve", unit);
		return 0;
	}
	/* Beside the v2 root would be beside systemd's own slices. */
	if (j->cfg->machine_is_root) {
		log_warning(
		    "the machine is the cgroup v2 root and oomkitd is not its systemd unit: no reserve "
		    "memcg (run it as oomkitd.service, whose MemoryMin= and MemoryMax= are the reserve)");
		return 0;
	}
	snprintf(j->reserve, sizeof(j->reserve), "%s-daemon", j->scopes->machine.rel);
	if (oomkit_process_cgroup(j->ctx, getpid(), j->origin, sizeof(j->origin)) < 0)
		j->origin[0] = '\0';
	r = oomkit_enter_reserve(j->ctx, j->reserve, j->cfg->reserve_bytes);
	if (r < 0) {
		log_err("cannot enter the reserve memcg %s: %s", j->reserve, strerror(-r));
		j->reserve[0] = '\0';
	} else {
		char size[32];
		value_format_bytes(j->cfg->reserve_bytes, size, sizeof(size));
		log_info("running in %s with %s of headroom", j->reserve, size);
	}
	return r;
}

void jobs_leave_reserve(struct jobs *j)
{
	pid_t guardian = oomkit_guardian_pid(j->ctx);
	int r;

	/* Named after the machine, it is this daemon's even when an earlier run
	 * left it behind (killed before it could remove it). */
	if (!j->reserve[0])
		return;
	/* Back where the daemon was started (its service's cgroup), or the root. */
	if (oomkit_cgroup_attach(j->ctx, j->origin, getpid()) < 0)
		j->origin[0] = '\0';
	(void)oomkit_cgroup_attach(j->ctx, j->origin, getpid());
	if (guardian > 0)
		(void)oomkit_cgroup_attach(j->ctx, j->origin, guardian);
	r = oomkit_cgroup_remove(j->ctx, j->reserve);
	if (r == -EBUSY)
		log_info("the reserve memcg %s still has processes: left as it is", j->reserve);
	else if (r < 0)
		log_warning("cannot remove the reserve memcg %s: %s", j->reserve, strerror(-r));
	else
		log_info("removed the reserve memcg %s", j->reserve);
}
