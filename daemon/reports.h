/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reports.h - the report directory: one JSON file per OOM named
 * oom-NNNNNNNN-SCOPE.json, created relative to a directory fd kept open, and
 * an index of them in memory (built from the directory at start, then kept
 * as reports are written and pruned), so neither retention nor the control
 * socket's listing reads the directory or the files on the handler path.
 */
#ifndef OOMKITD_REPORTS_H
#define OOMKITD_REPORTS_H

#include <stdint.h>

#include "config.h"

#define REPORTS_MAX 4096

struct report_entry {
	unsigned id;
	uint64_t bytes;
	char scope[CONFIG_NAME_MAX]; /* "machine" or the job's name */
};

struct reports {
	const struct config *cfg; /* report_dir, report_max_count, report_max_bytes */
	int dirfd;		  /* -1: no directory, reports are not written */
	unsigned next_id;
	struct report_entry *entries; /* REPORTS_MAX, oldest first */
	unsigned n;
};

int reports_init(struct reports *r);
void reports_free(struct reports *r);

/* Takes the configuration's report settings: (re)opens the directory when
 * it is new or changed.  0, or -errno (reports are then not written). */
int reports_configure(struct reports *r, const struct config *cfg);

/* A new report file for scope: its fd and *ret_id, or -errno. */
int reports_create(struct reports *r, const char *scope, unsigned *ret_id);

/* Closes a report; one whose writing failed (err < 0) is logged and removed.
 * Otherwise it joins the index and retention prunes the oldest.  fd < 0: none. */
void reports_done(struct reports *r, unsigned id, const char *scope, int fd, int err);

/* The index, oldest first. */
unsigned reports_count(const struct reports *r);
const struct report_entry *reports_entry(const struct reports *r, unsigned i);

/* Opens report id for reading: an fd, or -ENOENT. */
int reports_open_existing(const struct reports *r, unsigned id);

#endif
