/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reports.c - the report directory: created 0750, one JSON file per OOM named
 * oom-NNNNNNNN-SCOPE.json, each opened O_CREAT|O_EXCL|O_NOFOLLOW relative to
 * a directory fd kept open, so no link planted in the directory is followed.
 * Retention (count and bytes) is enforced from an in-memory list built at
 * startup, so pruning on the handler path reads no directory.
 *
 * Faults never stop the handling of an OOM; each is logged: a directory that
 * cannot be created or is a link (reports are then not written), one moved
 * or replaced since it was opened (nothing is written through what replaced
 * it), a file that cannot be created (read-only) or written in full (full:
 * the partial file is removed, so every listed report is whole).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomkitd.h"

static int mkdir_p(const char *path, mode_t last_mode)
{
	char buf[CONFIG_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(buf, saved ? 0755 : last_mode) < 0 && errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved)
			return 0;
	}
}

static int by_id(const void *a, const void *b)
{
	const struct report_entry *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* "oom-00000012-web.json" -> 12 and "web". */
static bool parse_name(const char *name, unsigned *ret_id, char *scope, size_t scope_len)
{
	size_t len = strlen(name);
	unsigned id = 0;

	if (len < 4 + 8 + 1 + 1 + 5 || strncmp(name, "oom-", 4) != 0 || name[12] != '-' ||
	    strcmp(name + len - 5, ".json") != 0)
		return false;
	for (int i = 4; i < 12; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		id = id * 10 + (unsigned)(name[i] - '0');
	}
	size_t n = len - 5 - 13;
	if (n >= scope_len)
		return false;
	memcpy(scope, name + 13, n);
	scope[n] = '\0';
	*ret_id = id;
	return true;
}

static void name_of(const struct report_entry *e, char *buf, size_t len)
{
	snprintf(buf, len, "oom-%08u-%s.json", e->id, e->scope);
}

static const struct report_entry *find(const struct daemon *d, unsigned id)
{
	for (unsigned i = 0; i < d->n_reports; i++)
		if (d->reports[i].id == id)
			return &d->reports[i];
	return NULL;
}

int reports_open_dir(struct daemon *d)
{
	const char *path = d->cfg->report_dir;
	int r = mkdir_p(path, 0750), fd;

	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		r = -errno;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			log_err("report directory %s is a symbolic link: not followed", path);
		return r;
	}
	/* An existing directory keeps its owner but not a looser mode. */
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0027))
		(void)fchmod(fd, st.st_mode & ~(mode_t)0027);

	int dup_fd = dup(fd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!dir) {
		r = -errno;
		close(fd);
		if (dup_fd >= 0)
			close(dup_fd);
		return r;
	}
	d->n_reports = 0;
	d->next_report_id = 1;
	struct dirent *de;
	while ((de = readdir(dir)) && d->n_reports < DAEMON_MAX_REPORTS) {
		unsigned id;
		char scope[CONFIG_NAME_MAX];
		if (!parse_name(de->d_name, &id, scope, sizeof(scope)) ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		struct report_entry *e = &d->reports[d->n_reports++];
		e->id = id;
		e->bytes = (uint64_t)st.st_size;
		snprintf(e->scope, sizeof(e->scope), "%s", scope);
		if (id >= d->next_report_id)
			d->next_report_id = id + 1;
	}
	closedir(dir);
	qsort(d->reports, d->n_reports, sizeof(d->reports[0]), by_id);
	if (d->report_dirfd >= 0)
		close(d->report_dirfd);
	d->report_dirfd = fd;
	return 0;
}

/* Whether report_dir still names the directory opened at start: if it was
 * moved away or replaced (by a link to elsewhere, say), writing into the old
 * one would hide reports where nobody looks, and following the new path
 * could write anywhere. */
static bool dir_still_ours(const struct daemon *d)
{
	struct stat opened, now;

	return fstat(d->report_dirfd, &opened) == 0 && lstat(d->cfg->report_dir, &now) == 0 &&
	       opened.st_dev == now.st_dev && opened.st_ino == now.st_ino;
}

int reports_create(struct daemon *d, const char *scope, unsigned *ret_id)
{
	char name[CONFIG_NAME_MAX + 32];

	if (d->report_dirfd < 0)
		return -ENOTDIR; /* it could not be opened: logged at start */
	if (!dir_still_ours(d)) {
		log_err("report directory %s was moved or replaced since it was opened; no report is written "
			"there",
			d->cfg->report_dir);
		return -ESTALE;
	}
	for (int tries = 0; tries < 16; tries++) {
		unsigned id = d->next_report_id++;
		snprintf(name, sizeof(name), "oom-%08u-%s.json", id, scope);
		int fd =
		    openat(d->report_dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0) {
			*ret_id = id;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void prune(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	uint64_t total = 0;
	unsigned drop = 0;
	char name[CONFIG_NAME_MAX + 32];

	for (unsigned i = 0; i < d->n_reports; i++)
		total += d->reports[i].bytes;
	while (drop < d->n_reports &&
	       (d->n_reports - drop > cfg->report_max_count || total > cfg->report_max_bytes ||
		d->n_reports - drop >= DAEMON_MAX_REPORTS)) {
		/* The newest report is kept even if it alone is over the byte bound. */
		if (d->n_reports - drop == 1 && cfg->report_max_count > 0)
			break;
		name_of(&d->reports[drop], name, sizeof(name));
		if (unlinkat(d->report_dirfd, name, 0) < 0)
			log_warning("report %s: cannot remove: %s", name, strerror(errno));
		total -= d->reports[drop].bytes;
		drop++;
	}
	if (drop) {
		memmove(d->reports, d->reports + drop, (d->n_reports - drop) * sizeof(d->reports[0]));
		d->n_reports -= drop;
	}
}

void reports_done(struct daemon *d, unsigned id, const char *scope, int fd, int err)
{
	struct stat st;
	char name[CONFIG_NAME_MAX + 32];

	if (fd < 0)
		return;
	uint64_t bytes = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (close(fd) < 0 && !err)
		err = -errno; /* some file systems report a failed write only here */
	if (err < 0) {
		snprintf(name, sizeof(name), "oom-%08u-%s.json", id, scope);
		log_err("report %s/%s: cannot be written: %s; removed", d->cfg->report_dir, name,
			strerror(-err));
		if (unlinkat(d->report_dirfd, name, 0) < 0)
			log_warning("report %s: cannot remove the partial file: %s", name, strerror(errno));
		return;
	}
	if (d->n_reports < DAEMON_MAX_REPORTS) {
		struct report_entry *e = &d->reports[d->n_reports++];
		e->id = id;
		e->bytes = bytes;
		snprintf(e->scope, sizeof(e->scope), "%s", scope);
	}
	prune(d);
}

int reports_open_existing(struct daemon *d, unsigned id)
{
	char name[CONFIG_NAME_MAX + 32];

	if (d->report_dirfd < 0)
		return -EBADF;
	const struct report_entry *e = find(d, id);
	if (!e)
		return -ENOENT;
	name_of(e, name, sizeof(name));
	int fd = openat(d->report_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
