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

#include "log.h"
#include "reports.h"

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

static const struct report_entry *find(const struct reports *r, unsigned id)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->entries[i].id == id)
			return &r->entries[i];
	return NULL;
}

static int open_dir(struct reports *r)
{
	const char *path = r->cfg->report_dir;
	int err = mkdir_p(path, 0750), fd;

	if (err < 0)
		return err;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		err = -errno;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			log_err("report directory %s is a symbolic link: not followed", path);
		return err;
	}
	/* An existing directory keeps its owner but not a looser mode. */
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0027))
		(void)fchmod(fd, st.st_mode & ~(mode_t)0027);

	int dup_fd = dup(fd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!dir) {
		err = -errno;
		close(fd);
		if (dup_fd >= 0)
			close(dup_fd);
		return err;
	}
	r->n = 0;
	r->next_id = 1;
	struct dirent *de;
	while ((de = readdir(dir)) && r->n < REPORTS_MAX) {
		unsigned id;
		char scope[CONFIG_NAME_MAX];
		if (!parse_name(de->d_name, &id, scope, sizeof(scope)) ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		struct report_entry *e = &r->entries[r->n++];
		e->id = id;
		e->bytes = (uint64_t)st.st_size;
		snprintf(e->scope, sizeof(e->scope), "%s", scope);
		if (id >= r->next_id)
			r->next_id = id + 1;
	}
	closedir(dir);
	qsort(r->entries, r->n, sizeof(r->entries[0]), by_id);
	if (r->dirfd >= 0)
		close(r->dirfd);
	r->dirfd = fd;
	return 0;
}

int reports_init(struct reports *r)
{
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
	r->next_id = 1;
	r->entries = calloc(REPORTS_MAX, sizeof(*r->entries));
	return r->entries ? 0 : -ENOMEM;
}

void reports_free(struct reports *r)
{
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->entries);
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
}

int reports_configure(struct reports *r, const struct config *cfg)
{
	const struct config *old = r->cfg;

	r->cfg = cfg;
	if (old && r->dirfd >= 0 && strcmp(old->report_dir, cfg->report_dir) == 0)
		return 0;
	return open_dir(r);
}

unsigned reports_count(const struct reports *r)
{
	return r->n;
}

const struct report_entry *reports_entry(const struct reports *r, unsigned i)
{
	return i < r->n ? &r->entries[i] : NULL;
}

/* Whether report_dir still names the directory opened at start: if it was
 * moved away or replaced (by a link to elsewhere, say), writing into the old
 * one would hide reports where nobody looks, and following the new path
 * could write anywhere. */
static bool dir_still_ours(const struct reports *r)
{
	struct stat opened, now;

	return fstat(r->dirfd, &opened) == 0 && lstat(r->cfg->report_dir, &now) == 0 &&
	       opened.st_dev == now.st_dev && opened.st_ino == now.st_ino;
}

int reports_create(struct reports *r, const char *scope, unsigned *ret_id)
{
	char name[CONFIG_NAME_MAX + 32];

	if (r->dirfd < 0)
		return -ENOTDIR; /* it could not be opened: logged at start */
	if (!dir_still_ours(r)) {
		log_err("report directory %s was moved or replaced since it was opened; no report is written "
			"there",
			r->cfg->report_dir);
		return -ESTALE;
	}
	for (int tries = 0; tries < 16; tries++) {
		unsigned id = r->next_id++;
		snprintf(name, sizeof(name), "oom-%08u-%s.json", id, scope);
		int fd = openat(r->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0) {
			*ret_id = id;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void prune(struct reports *r)
{
	const struct config *cfg = r->cfg;
	uint64_t total = 0;
	unsigned drop = 0;
	char name[CONFIG_NAME_MAX + 32];

	for (unsigned i = 0; i < r->n; i++)
		total += r->entries[i].bytes;
	while (drop < r->n && (r->n - drop > cfg->report_max_count || total > cfg->report_max_bytes ||
			       r->n - drop >= REPORTS_MAX)) {
		/* The newest report is kept even if it alone is over the byte bound. */
		if (r->n - drop == 1 && cfg->report_max_count > 0)
			break;
		name_of(&r->entries[drop], name, sizeof(name));
		if (unlinkat(r->dirfd, name, 0) < 0)
			log_warning("report %s: cannot remove: %s", name, strerror(errno));
		total -= r->entries[drop].bytes;
		drop++;
	}
	if (drop) {
		memmove(r->entries, r->entries + drop, (r->n - drop) * sizeof(r->entries[0]));
		r->n -= drop;
	}
}

void reports_done(struct reports *r, unsigned id, const char *scope, int fd, int err)
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
		log_err("report %s/%s: cannot be written: %s; removed", r->cfg->report_dir, name,
			strerror(-err));
		if (unlinkat(r->dirfd, name, 0) < 0)
			log_warning("report %s: cannot remove the partial file: %s", name, strerror(errno));
		return;
	}
	if (r->n < REPORTS_MAX) {
		struct report_entry *e = &r->entries[r->n++];
		e->id = id;
		e->bytes = bytes;
		snprintf(e->scope, sizeof(e->scope), "%s", scope);
	}
	prune(r);
}

int reports_open_existing(const struct reports *r, unsigned id)
{
	char name[CONFIG_NAME_MAX + 32];

	if (r->dirfd < 0)
		return -EBADF;
	const struct report_entry *e = find(r, id);
	if (!e)
		return -ENOENT;
	name_of(e, name, sizeof(name));
	int fd = openat(r->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
