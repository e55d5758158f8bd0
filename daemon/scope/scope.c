/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* scope.c - see scope.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "scope/scope.h"

unsigned scopes_room(unsigned configured)
{
	unsigned n = configured * 2;

	return n < 64 ? 64 : n > CONFIG_MAX_JOBS ? CONFIG_MAX_JOBS : n;
}

/* What a free slot's, and a removed scope's, path reads. */
static const char empty[] = "";

static void clear(struct scope *s)
{
	if (s->rel != empty)
		free((char *)s->rel);
	memset(s, 0, sizeof(*s));
	s->rel = empty;
	s->label = empty;
}

int scopes_init(struct scopes *t, unsigned max_jobs)
{
	memset(t, 0, sizeof(*t));
	t->jobs = calloc(max_jobs, sizeof(*t->jobs));
	if (!t->jobs)
		return -ENOMEM;
	for (unsigned i = 0; i < max_jobs; i++)
		t->jobs[i].rel = t->jobs[i].label = empty;
	t->max_jobs = max_jobs;
	t->machine.kind = SCOPE_KIND_MACHINE;
	t->machine.in_use = true;
	t->machine.gen = ++t->next_gen;
	snprintf(t->machine.name, sizeof(t->machine.name), "%s", SCOPE_MACHINE_NAME);
	t->machine.label = t->machine.name;
	t->machine.rel = empty;
	return 0;
}

void scopes_free(struct scopes *t)
{
	for (unsigned i = 0; t->jobs && i < t->n_slots; i++)
		if (t->jobs[i].rel != empty)
			free((char *)t->jobs[i].rel);
	if (t->machine.rel != empty)
		free((char *)t->machine.rel);
	t->machine.rel = empty;
	free(t->jobs);
	t->jobs = NULL;
	free(t->labels);
	t->labels = NULL;
	t->max_jobs = t->n_slots = 0;
}

/* An instance is labelled by the last component of its cgroup, which
 * tells instances apart within a job (batch-17.service, app-x.scope); the
 * full path is in the scope's rel for whoever needs it.  0, or -ENOMEM. */
static int set_label(struct scopes *t, struct scope *s)
{
	const char *base = strrchr(s->rel, '/');

	if (s->kind != SCOPE_KIND_INSTANCE) {
		s->label = s->name;
		return 0;
	}
	if (!t->labels && !(t->labels = calloc(t->max_jobs, sizeof(*t->labels))))
		return -ENOMEM;
	char *label = t->labels[s - t->jobs];
	size_t n = strlen(s->name);
	memcpy(label, s->name, n);
	memcpy(label + n, " [", 2);
	n += 2;
	base = base ? base + 1 : s->rel;
	oomkit__escape_str(label + n, SCOPE_LABEL_MAX - n - 1, base);
	n += strlen(label + n);
	memcpy(label + n, "]", 2);
	s->label = label;
	return 0;
}

/* s's path, in an allocation of its length: off the OOM path (start,
 * reload, adoption), so an OOM reads it but never makes it. */
static int set_rel(struct scope *s, const char *rel)
{
	size_t n = strlen(rel);

	if (n >= SCOPE_REL_MAX)
		return -ENAMETOOLONG;
	char *copy = malloc(n + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rel, n + 1);
	if (s->rel != empty)
		free((char *)s->rel);
	s->rel = copy;
	return 0;
}

int scope_set_machine_rel(struct scopes *t, const char *rel)
{
	return set_rel(&t->machine, rel);
}

/* Keeps each job's count of the other scopes within its memcg (d: +1 for s
 * added, -1 for s removed): those make a process's job worth a search. */
static void count_nested(struct scopes *t, const struct scope *s, int d)
{
	SCOPE_FOREACH_JOB (j, t)
		if (j != s && scope_path_under(s->rel, j->rel))
			j->nested += (unsigned)d;
}

static struct scope *add(struct scopes *t, enum scope_kind kind, const struct config_job *job,
			 const char *rel, int *ret_err)
{
	struct scope *s = NULL;

	if (strlen(rel) >= SCOPE_REL_MAX) {
		*ret_err = -ENAMETOOLONG;
		return NULL;
	}
	for (unsigned i = 0; i < t->n_slots && !s; i++)
		if (!t->jobs[i].in_use)
			s = &t->jobs[i];
	if (!s && t->n_slots < t->max_jobs)
		s = &t->jobs[t->n_slots++];
	if (!s) {
		*ret_err = -ENOSPC;
		return NULL;
	}
	clear(s);
	s->kind = kind;
	snprintf(s->name, sizeof(s->name), "%s", job->name);
	int r = set_rel(s, rel);
	if (r == 0)
		r = set_label(t, s);
	if (r < 0) {
		clear(s);
		*ret_err = r;
		return NULL;
	}
	s->in_use = true;
	s->gen = ++t->next_gen;
	s->job = job;
	s->chain = &job->chain;
	/* The new scope's own count: the others already within it. */
	SCOPE_FOREACH_JOB (j, t)
		if (j != s && scope_path_under(j->rel, s->rel))
			s->nested++;
	count_nested(t, s, +1);
	return s;
}

struct scope *scope_add_job(struct scopes *t, const struct config_job *job, const char *rel, int *ret_err)
{
	return add(t, SCOPE_KIND_JOB, job, rel, ret_err);
}

struct scope *scope_add_instance(struct scopes *t, const struct config_job *job, const char *rel,
				 int *ret_err)
{
	return add(t, SCOPE_KIND_INSTANCE, job, rel, ret_err);
}

void scope_remove(struct scopes *t, struct scope *s)
{
	if (s->in_use && s != &t->machine)
		count_nested(t, s, -1);
	clear(s);
}

struct scope *scope_next(const struct scopes *t, const struct scope *prev)
{
	unsigned i = prev ? (unsigned)(prev - t->jobs) + 1 : 0;

	for (; i < t->n_slots; i++)
		if (t->jobs[i].in_use)
			return &t->jobs[i];
	return NULL;
}

unsigned scope_index(const struct scopes *t, const struct scope *s)
{
	return (unsigned)(s - t->jobs);
}

struct scope *scope_by_name(struct scopes *t, const char *name)
{
	SCOPE_FOREACH_JOB (s, t)
		if (s->kind == SCOPE_KIND_JOB && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct scope *scope_next_instance(const struct scopes *t, const char *name, const struct scope *prev)
{
	for (struct scope *s = scope_next(t, prev); s; s = scope_next(t, s))
		if (s->kind == SCOPE_KIND_INSTANCE && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

struct scope *scope_by_rel(struct scopes *t, const char *rel)
{
	if (strcmp(t->machine.rel, rel) == 0)
		return &t->machine;
	SCOPE_FOREACH_JOB (s, t)
		if (strcmp(s->rel, rel) == 0)
			return s;
	return NULL;
}

struct scope *scope_by_watch(struct scopes *t, const oomkit_watch *watch)
{
	if (!watch)
		return NULL;
	if (t->machine.watch == watch)
		return &t->machine;
	SCOPE_FOREACH_JOB (s, t)
		if (s->watch == watch)
			return s;
	return NULL;
}

bool scope_path_under(const char *rel, const char *scope_rel)
{
	size_t n = strlen(scope_rel);

	return n == 0 || (strncmp(rel, scope_rel, n) == 0 && (rel[n] == '\0' || rel[n] == '/'));
}

struct scope *scope_of_cgroup(struct scopes *t, const char *rel)
{
	struct scope *best = NULL;

	SCOPE_FOREACH_JOB (s, t)
		if (scope_path_under(rel, s->rel) && (!best || strlen(s->rel) > strlen(best->rel)))
			best = s;
	return best;
}

struct scope *scope_of_cgroup_in(struct scopes *t, struct scope *s, const char *rel)
{
	if (s->kind != SCOPE_KIND_MACHINE && s->nested == 0 && scope_path_under(rel, s->rel))
		return s;
	return scope_of_cgroup(t, rel);
}

struct scope_ref scope_ref(struct scope *s)
{
	return (struct scope_ref){.scope = s, .gen = s ? s->gen : 0};
}

struct scope *scope_get(struct scope_ref ref)
{
	return ref.scope && ref.scope->in_use && ref.scope->gen == ref.gen ? ref.scope : NULL;
}
