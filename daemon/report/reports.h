/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reports.h - the report directory: one JSON file per OOM named
 * oom-NNNNNNNN-SCOPE.json, created relative to a directory fd kept open, and
 * an index of them in memory -- id, scope, time, action, victim, reason,
 * size -- built from the directory when it is opened (each file's head
 * read once), then kept as reports are written and pruned, so neither
 * retention nor the control socket's listing reads the directory or the
 * files again.
 *
 * The daemon writes only into a directory of its own: one it created, or an
 * existing one owned by it, writable by nobody else and holding nothing but
 * reports.  It never changes the mode of a directory it did not create, and
 * every file it opens there is opened without following a link and without
 * blocking, and used only if it is a regular file.
 *
 * Each report names the uids other than root it concerns (its "concerns"
 * list: the owner of the job that ran out, the victim's uid and the owner of
 * the victim's job); the index keeps them, so the control socket lets each
 * such user read that report and no other (docs/protocol.md).
 */
#ifndef OOMKITD_REPORTS_H
#define OOMKITD_REPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "base/runlock.h"

#define REPORTS_MAX 4096
#define REPORTS_ACTION_MAX 16
#define REPORTS_REASON_MAX 160
/* An instance's cgroup's last name (batch-17.service), cut to fit. */
#define REPORTS_INSTANCE_MAX 128
/* The scope's owner, and a victim's uid and job owner, for the decision and
 * for a prompt's followup: at most five distinct uids. */
#define REPORTS_READERS_MAX 8

/* The uids other than root an OOM concerns: who may read its report. */
struct report_readers {
	unsigned n;
	uid_t uid[REPORTS_READERS_MAX];
};

/* A decision's reason as the index keeps it (len bytes, REPORTS_REASON_MAX):
 * whole if it fits, else cut after its last whole word with "...". */
void reports_copy_reason(char *dst, size_t len, const char *src);

/* Adds uid (root, a duplicate, or one past the bound: nothing). */
void reports_readers_add(struct report_readers *r, uid_t uid);
/* Whether uid is among them. */
bool reports_readers_has(const struct report_readers *r, uid_t uid);

struct report_entry {
	unsigned id;
	uint64_t bytes;
	uint64_t time_ms;		     /* when it was written (wall clock, ms since the epoch) */
	pid_t victim_pid;		     /* 0: none */
	char scope[CONFIG_NAME_MAX];	     /* "machine" or the job's name */
	char action[REPORTS_ACTION_MAX];     /* the decision's action; "?" if the file does not say */
	char reason[REPORTS_REASON_MAX];     /* cut to fit */
	char instance[REPORTS_INSTANCE_MAX]; /* an instance's cgroup's last name; "": none */
	struct report_readers readers;	     /* the uids it concerns */
};

/* What a report says, for its index entry. */
struct report_summary {
	uint64_t time_ms;
	const char *action;
	pid_t victim_pid;
	const char *reason;
	const char *instance; /* an instance's cgroup (relative); NULL for a job or the machine */
	const struct report_readers *readers; /* NULL: none */
};

struct reports {
	const struct config *cfg; /* report_dir, report_max_count, report_max_bytes */
	int dirfd;		  /* -1: no directory, reports are not written */
	unsigned next_id;
	struct report_entry *entries; /* cap, oldest first */
	unsigned n;
	/* Entries made: report_max_count + 1 (the retention, and the newest
	 * before the oldest goes), or the reports a directory held at start if
	 * more; at most REPORTS_MAX.  Resized at start and reload only. */
	unsigned cap;
	char *scanbuf;	     /* a file's head, read when the directory is opened */
	struct runlock lock; /* REPORTS_LOCK_NAME in the directory, while it is open */
};

int reports_init(struct reports *r);
void reports_free(struct reports *r);

/* The lock file in the report directory (runlock.h): one daemon per
 * directory, whose index, numbering and retention are its own.  Made 0600
 * in a directory only the daemon may write, so no user can hold it. */
#define REPORTS_LOCK_NAME ".oomkitd.lock"

/* Takes the configuration's report settings: (re)opens the directory when
 * it is new or changed, and holds its lock file for as long as it is open.
 * 0, or -errno (reports are then not written); -EBUSY: another process
 * holds the directory's lock. */
int reports_configure(struct reports *r, const struct config *cfg);

/* Whether path could be taken by reports_configure() as far as the lock
 * goes: -EBUSY if another process holds it, 0 otherwise (also when it is
 * the directory already open, or cannot be opened: that is said later). */
int reports_check_lock(const struct reports *r, const char *path);

/* A new report file for scope: its fd and *ret_id, or -errno. */
int reports_create(struct reports *r, const char *scope, unsigned *ret_id);
/* Where report id of scope is (or will be): report_dir/oom-ID-SCOPE.json. */
void reports_path(const struct reports *r, unsigned id, const char *scope, char *buf, size_t len);

/* Closes a report; one whose writing failed (err < 0) is logged and removed.
 * Otherwise it joins the index with sum and retention prunes the oldest.
 * fd < 0: none. */
void reports_done(struct reports *r, unsigned id, const char *scope, int fd, int err,
		  const struct report_summary *sum);

/* The index, oldest first. */
unsigned reports_count(const struct reports *r);
const struct report_entry *reports_entry(const struct reports *r, unsigned i);

/* Report id's index entry, or NULL. */
const struct report_entry *reports_find(const struct reports *r, unsigned id);

/* Opens report id for reading: an fd, or -ENOENT. */
int reports_open_existing(const struct reports *r, unsigned id);

/* Fills e's time, instance, action, victim, reason and readers from the head of a
 * report (buf[0, len), possibly cut short); what it does not find stays as
 * it is.  Exposed for the unit tests. */
void reports_scan_head(const char *buf, size_t len, struct report_entry *e);

/* Adds to e's readers the last "concerns" list in buf[0, len), the end of a
 * report (its tail names the uids a prompt's answer concerned too). */
void reports_scan_tail(const char *buf, size_t len, struct report_entry *e);

#endif
