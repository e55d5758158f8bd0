/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scope.h - what the daemon handles OOMs for: the machine (the memcg that
 * holds every job) and its jobs (configured child memcgs of the machine).
 * Each is a struct scope with its memcg, its watch, its policy chain and its
 * counters.  Later kinds (job instances, cgroups adopted by a pattern) are
 * scopes too, with their job's configuration.
 *
 * There is one way to find a scope (by name, by watch, by cgroup path) and
 * one way to walk them (scope_next); a slot in use says so (in_use), and a
 * scope_ref notices a scope that a reload removed and whose slot may hold
 * another job by now.  The table is sized once at start; a scope's memcg
 * path is an allocation of its own length, made when a slot is given a scope
 * (at start, reload and adoption, never on an OOM's path) and freed with it:
 * a slot is 608 bytes, not the 1112 a fixed 512-byte path took.
 */
#ifndef OOMKITD_SCOPE_H
#define OOMKITD_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "oomkit.h"
#include "scope/counters.h"

#define SCOPE_REL_MAX 512
#define SCOPE_LAST_ACTION_MAX 160
#define SCOPE_MACHINE_NAME "machine"

enum scope_kind {
	SCOPE_KIND_MACHINE = 0,
	SCOPE_KIND_JOB = 1,
	/* An existing cgroup that a job's "cgroup =" pattern matched (adopt.c):
	 * the job's configuration, a memcg of its own.  A job has as many as
	 * its patterns match, each a scope; they share the job's name. */
	SCOPE_KIND_INSTANCE = 2,
};

/* "batch [batch-17.service]": a job's name, and an instance's cgroup name
 * escaped (it is the job owner's), cut to fit. */
#define SCOPE_LABEL_MAX (CONFIG_NAME_MAX + 132)

struct scope {
	enum scope_kind kind;
	bool in_use;
	uint64_t gen;		    /* a new number each time a slot is given a scope */
	char name[CONFIG_NAME_MAX]; /* "machine" or the job's name */
	/* Its memcg, relative to the memory root (shorter than SCOPE_REL_MAX):
	 * an allocation of its length, or "" in a free slot.  Nothing keeps a
	 * pointer to it past the turn that read it (copies are made). */
	const char *rel;
	/* For logs and people: the name (name itself), or an instance's "job
	 * [cgroup]" (in the table's labels).  Never freed while the table
	 * lives, since a snapshot's group names point here and outlive the turn
	 * (an open prompt's candidates, an outcome told later): a removed
	 * scope's slot must stay readable.  "" in a free slot. */
	const char *label;
	const struct config_job *job;	  /* a job's configuration; NULL for the machine */
	const struct policy_chain *chain; /* re-pointed on reload, like job */
	oomkit_watch *watch;		  /* NULL: not watched (removed, or failed) */
	struct counters counters;	  /* what happened to it (counters.h increments them) */
	char last_action[SCOPE_LAST_ACTION_MAX];
	uint64_t delegated_due_ns; /* a delegated job's OOM: when we step in; 0: none */
	uint64_t last_oom_count;   /* dry run: tells whose limit was hit */
	/* Who watches it (handler.c): the watch's userdata is the scope itself,
	 * so an event finds its scope without a search of the table. */
	void *watcher;
	/* How many other scopes' memcgs are this one's or below it: with none, a
	 * process of a job's OOM is the job's without a search (scope_of_cgroup). */
	unsigned nested;
	/* The latest memory.high and memory.max of its unit that systemd has not
	 * heard of yet: the helper's queue was full (sdbus.c sends it later). */
	bool sd_waiting;
	uint64_t sd_high_bytes, sd_max_bytes;
};

struct scopes {
	struct scope machine;
	struct scope *jobs; /* max_jobs slots */
	/* Instances' labels, by slot: made with the first instance, so a table
	 * of jobs alone pays nothing for them. */
	char (*labels)[SCOPE_LABEL_MAX];
	unsigned n_slots; /* slots used so far, free ones included */
	unsigned max_jobs;
	uint64_t next_gen;
};

/* A scope as it was when the reference was taken: scope_get() gives NULL
 * once a reload has removed it. */
struct scope_ref {
	struct scope *scope;
	uint64_t gen;
};

/* How many job slots a daemon started with `configured` jobs makes: twice as
 * many, so reloads can add jobs, at least 64 and at most CONFIG_MAX_JOBS. */
unsigned scopes_room(unsigned configured);

/* Allocates max_jobs slots; the machine is named and marked in use. */
int scopes_init(struct scopes *t, unsigned max_jobs);
void scopes_free(struct scopes *t);
/* Gives the machine its memcg path (its label stays "machine"): 0,
 * -ENAMETOOLONG or -ENOMEM. */
int scope_set_machine_rel(struct scopes *t, const char *rel);

/* A free slot for a job named name at rel; NULL when the table is full or
 * rel does not fit (-ENAMETOOLONG in *ret_err then, -ENOSPC when full,
 * -ENOMEM when its path cannot be allocated). */
struct scope *scope_add_job(struct scopes *t, const struct config_job *job, const char *rel, int *ret_err);
/* A free slot for an instance of job at rel (an existing cgroup a pattern
 * of the job matched); NULL and *ret_err as for scope_add_job(). */
struct scope *scope_add_instance(struct scopes *t, const struct config_job *job, const char *rel,
				 int *ret_err);
void scope_remove(struct scopes *t, struct scope *s);

/* The job named name; NULL if there is none (the machine is t->machine).
 * A job whose patterns adopt cgroups has no scope of its own, only its
 * instances: scope_next_instance() walks them. */
struct scope *scope_by_name(struct scopes *t, const char *name);
/* The next instance of job name after prev (NULL: the first), or NULL. */
struct scope *scope_next_instance(const struct scopes *t, const char *name, const struct scope *prev);
/* The scope whose memcg is exactly rel, the machine included; NULL if none. */
struct scope *scope_by_rel(struct scopes *t, const char *rel);
/* The scope a watch belongs to, the machine included; NULL if none. */
struct scope *scope_by_watch(struct scopes *t, const oomkit_watch *watch);
/* The job whose memcg is rel or holds it, the innermost if several do (an
 * instance inside another job's); NULL if rel is in no job. */
struct scope *scope_of_cgroup(struct scopes *t, const char *rel);
/* scope_of_cgroup() for rel inside job s (or its memcg): s itself, found
 * without a search, when no other scope's memcg is within s's. */
struct scope *scope_of_cgroup_in(struct scopes *t, struct scope *s, const char *rel);

/* Walks the jobs in slot order: scope_next(t, NULL) is the first, NULL
 * after the last.  The machine is not among them. */
struct scope *scope_next(const struct scopes *t, const struct scope *prev);
#define SCOPE_FOREACH_JOB(s, t) for (struct scope *s = scope_next((t), NULL); s; s = scope_next((t), s))

/* The slot index of a job (for per-slot arrays), 0..max_jobs-1. */
unsigned scope_index(const struct scopes *t, const struct scope *s);

struct scope_ref scope_ref(struct scope *s);
struct scope *scope_get(struct scope_ref ref);

/* Whether cgroup path rel is scope_rel or below it ("" holds everything). */
bool scope_path_under(const char *rel, const char *scope_rel);

#endif
