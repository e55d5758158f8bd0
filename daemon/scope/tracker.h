/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracker.h - the cgroups that match a set of patterns (pattern.h), followed
 * as they come and go.  A pattern of n components can only match cgroups n
 * levels below the root, so the tracker watches (inotify) exactly the
 * directories whose paths match the first 0..n-1 components of some
 * pattern: the root, and below it only what a pattern walks through.  A
 * directory such a pattern walks through but that does not exist yet is
 * found when it is made, in its parent's watch; a removed one takes its
 * watches and matches with it.  Nothing is polled: between changes the
 * tracker's descriptor is quiet.
 *
 * The tracker reads directories only: it never opens a control file and
 * knows nothing of memory controllers, so its tests run on fixture trees.
 * It allocates when cgroups appear (never on an OOM's path) and reports
 * each match once when it appears and once when it goes.
 */
#ifndef OOMKITD_TRACKER_H
#define OOMKITD_TRACKER_H

#include <stdbool.h>

struct tracker;

/* A cgroup rel (relative to the root, no leading "/") that matches pattern
 * number `pattern` (the first one of the list that matches) appeared
 * (added) or was removed.  May call tracker_matches(), not tracker_dispatch(). */
typedef void (*tracker_fn)(void *data, const char *rel, unsigned pattern, bool added);

/* A tracker of the n patterns under root (a directory: the cgroup mount, or
 * a fixture tree).  Patterns must pass pattern_check(); they are copied.
 * Nothing is reported until tracker_start(). */
int tracker_new(const char *root, const char *const *patterns, unsigned n, tracker_fn fn, void *data,
		struct tracker **ret);

/* Walks what exists now and reports every match (added); then watches.
 * 0, or -errno when the root cannot be watched or read. */
int tracker_start(struct tracker *t);

/* The inotify descriptor: readable when tracker_dispatch() has work. */
int tracker_fd(const struct tracker *t);

/* Reads what the kernel reported and reports the changes it makes.  Returns
 * the number of changes reported, or -errno (the tracker is still usable:
 * a lost event queue is followed by a walk of everything watched). */
int tracker_dispatch(struct tracker *t);

/* How many cgroups match pattern number `pattern` now. */
unsigned tracker_matches(const struct tracker *t, unsigned pattern);

/* How many directories are watched (the root included). */
unsigned tracker_watches(const struct tracker *t);

/* Closes the descriptor and frees everything; reports nothing.  NULL is a no-op. */
void tracker_free(struct tracker *t);

#endif
