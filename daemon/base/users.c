/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* users.c - see users.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/users.h"

/* What NSS answered before the seal: every name and uid of the
 * configuration at start, a handful; past this many the oldest goes. */
#define REMEMBERED 64

static struct {
	bool sealed;
	const char *passwd;
	unsigned n, next;
	struct users_entry seen[REMEMBERED];
} U = {.passwd = "/etc/passwd"};

/* ------------------------------------------------------------ the file */

/* A decimal number of at most UINT_MAX - 1 ((uid_t)-1 is no id). */
static int parse_id(const char *s, size_t len, unsigned *ret)
{
	unsigned long v = 0;

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v >= UINT_MAX)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int users_parse_line(const char *line, size_t len, struct users_entry *ret)
{
	const char *f[4], *end = line + len;
	size_t flen[4];
	unsigned uid, gid;

	/* The first four fields: name, password, uid, gid; a fifth must follow. */
	for (int i = 0; i < 4; i++) {
		const char *colon = memchr(line, ':', (size_t)(end - line));
		if (!colon)
			return -EINVAL;
		f[i] = line;
		flen[i] = (size_t)(colon - line);
		line = colon + 1;
	}
	if (flen[0] == 0 || flen[0] >= USERS_NAME_MAX || f[0][0] == '+' || f[0][0] == '-' ||
	    memchr(f[0], '\0', flen[0]) || parse_id(f[2], flen[2], &uid) < 0 ||
	    parse_id(f[3], flen[3], &gid) < 0)
		return -EINVAL;
	memcpy(ret->name, f[0], flen[0]);
	ret->name[flen[0]] = '\0';
	ret->uid = (uid_t)uid;
	ret->gid = (gid_t)gid;
	return 0;
}

static bool wanted(const char *line, size_t len, const char *name, uid_t uid, struct users_entry *ret)
{
	struct users_entry e;

	if (users_parse_line(line, len, &e) < 0 || (name ? strcmp(e.name, name) != 0 : e.uid != uid))
		return false;
	*ret = e;
	return true;
}

/* Read a block at a time (a line longer than one is no user of ours), not
 * into a buffer as large as the file, which mlockall would keep resident. */
int users_file_find(int fd, const char *name, uid_t uid, struct users_entry *ret)
{
	char buf[4096];
	size_t have = 0;
	off_t at = 0;
	bool skipping = false; /* within a line longer than buf */

	for (;;) {
		ssize_t n = pread(fd, buf + have, sizeof(buf) - have, at);
		if (n < 0)
			return errno == EINTR ? -EINTR : -errno;
		if (n == 0) /* the last line, without its newline */
			return have && !skipping && wanted(buf, have, name, uid, ret) ? 1 : 0;
		at += n;
		have += (size_t)n;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			if (!skipping && wanted(line, (size_t)(nl - line), name, uid, ret))
				return 1;
			skipping = false;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf)) {
			skipping = true;
			have = 0;
		}
	}
}

/* Opened without blocking (a FIFO put in its place) and only if a regular file. */
static int file_find(const char *name, uid_t uid, struct users_entry *ret)
{
	struct stat st;
	int fd = open(U.passwd, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), r;

	if (fd < 0)
		return -errno;
	r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? users_file_find(fd, name, uid, ret) : -EINVAL;
	close(fd);
	return r;
}

/* ------------------------------------------------------------ lookups */

static void remember(const struct users_entry *e)
{
	for (unsigned i = 0; i < U.n; i++)
		if (U.seen[i].uid == e->uid && strcmp(U.seen[i].name, e->name) == 0)
			return;
	U.seen[U.next] = *e;
	U.next = (U.next + 1) % REMEMBERED;
	if (U.n < REMEMBERED)
		U.n++;
}

static int remembered(const char *name, uid_t uid, struct users_entry *ret)
{
	for (unsigned i = 0; i < U.n; i++)
		if (name ? strcmp(U.seen[i].name, name) == 0 : U.seen[i].uid == uid) {
			*ret = U.seen[i];
			return 1;
		}
	return 0;
}

static int from_nss(const struct passwd *pw, struct users_entry *ret)
{
	if (!pw || strlen(pw->pw_name) >= USERS_NAME_MAX)
		return 0;
	snprintf(ret->name, sizeof(ret->name), "%s", pw->pw_name);
	ret->uid = pw->pw_uid;
	ret->gid = pw->pw_gid;
	remember(ret);
	return 1;
}

/* After the seal: the file as it is now first (an edit since the start
 * counts), then what NSS said before. */
static int sealed_find(const char *name, uid_t uid, struct users_entry *ret)
{
	int r = file_find(name, uid, ret);

	return r > 0 ? r : remembered(name, uid, ret) > 0 ? 1 : r;
}

int users_by_name(const char *name, struct users_entry *ret)
{
	if (!name || !*name)
		return 0;
	if (U.sealed)
		return sealed_find(name, 0, ret);
	errno = 0;
	return from_nss(getpwnam(name), ret);
}

int users_by_uid(uid_t uid, struct users_entry *ret)
{
	if (U.sealed)
		return sealed_find(NULL, uid, ret);
	return from_nss(getpwuid(uid), ret);
}

void users_seal(void)
{
	U.sealed = true;
}

bool users_sealed(void)
{
	return U.sealed;
}

void users_set_passwd(const char *path)
{
	U.passwd = path;
}
