/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* runlock.c - see runlock.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/runlock.h"

/* Whether a directory on the way is safe: root's (or the daemon's own
 * user's, for a dry run by a user), and writable by nobody else - or, on the
 * way only, sticky like /tmp, where others cannot move what is not theirs. */
static bool safe_dir(const struct stat *st, bool last)
{
	bool ours = st->st_uid == 0 || st->st_uid == geteuid();
	bool others_write = st->st_mode & (S_IWGRP | S_IWOTH);

	return S_ISDIR(st->st_mode) && ours && (!others_write || (!last && (st->st_mode & S_ISVTX)));
}

int runlock_open_dir(const char *dir)
{
	char copy[4096], *save = NULL;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (strlen(dir) >= sizeof(copy)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	snprintf(copy, sizeof(copy), "%s", dir);
	for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save || strspn(save, "/") == strlen(save);
		if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0) {
			close(fd);
			return -EINVAL;
		}
		int next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && last && mkdirat(fd, part, 0755) == 0)
			next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = next < 0		 ? -errno
			  : fstat(next, &st) < 0 ? -errno
			  : safe_dir(&st, last)	 ? 0
						 : -EPERM;
		close(fd);
		if (err < 0) {
			if (next >= 0)
				close(next);
			return err;
		}
		fd = next;
	}
	/* "/" itself: the socket directly in it (no test or unit does this). */
	if (fstat(fd, &st) < 0 || !safe_dir(&st, true)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* One try: 1 held (the file is the one of that name), 0 try again (it was
 * removed or replaced between the open and the lock), -errno. */
static int try_take(struct runlock *l, int dir_fd, const char *name)
{
	/* Held read-only: a file open for writing would keep its file system
	 * (the report directory's, say) from being remounted read-only. */
	struct stat held, now;
	int fd =
	    openat(dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return r;
	}
	if (fstat(fd, &held) < 0 || fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
	    held.st_dev != now.st_dev || held.st_ino != now.st_ino) {
		close(fd);
		return 0;
	}
	if (!S_ISREG(held.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	l->fd = fd;
	return 1;
}

int runlock_take_at(struct runlock *l, int dir_fd, const char *name, const char *text)
{
	int r = 0;

	if (strlen(name) >= sizeof(l->name))
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 16 && r == 0; tries++)
		r = try_take(l, dir_fd, name);
	if (r <= 0)
		return r < 0 ? r : -EAGAIN;
	if ((l->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		r = -errno;
		close(l->fd);
		l->fd = -1;
		return r;
	}
	snprintf(l->name, sizeof(l->name), "%s", name);
	/* The text, for a person looking, through an fd of its own (held, the
	 * file is ours to rewrite). */
	int w =
	    text ? openat(dir_fd, name, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
		 : -1;
	if (w >= 0) {
		(void)!write(w, text, strlen(text));
		close(w);
	}
	return 0;
}

int runlock_socket(struct runlock *l, const char *socket_path)
{
	const char *slash = strrchr(socket_path, '/');
	char dir[4096], name[sizeof(l->name)], pid[32];
	int dir_fd, r;

	if (socket_path[0] != '/' || !slash || !slash[1] || (size_t)(slash - socket_path) >= sizeof(dir) ||
	    snprintf(name, sizeof(name), "%s.lock", slash + 1) >= (int)sizeof(name))
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - socket_path), socket_path);
	if ((dir_fd = runlock_open_dir(dir)) < 0)
		return dir_fd;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	r = runlock_take_at(l, dir_fd, name, pid);
	close(dir_fd);
	return r;
}

/* FNV-1a: a name of fixed length for a path of any length. */
static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

int runlock_machine(struct runlock *l, const char *rel)
{
	char name[64], text[4200];
	int dir_fd, r;

	snprintf(name, sizeof(name), "machine-%016" PRIx64 ".lock", hash(rel));
	snprintf(text, sizeof(text), "%d /%s\n", (int)getpid(), rel);
	if ((dir_fd = runlock_open_dir(RUNLOCK_DIR)) < 0)
		return dir_fd;
	r = runlock_take_at(l, dir_fd, name, text);
	close(dir_fd);
	return r;
}

void runlock_release(struct runlock *l, bool remove)
{
	if (l->fd < 0)
		return;
	if (remove)
		(void)unlinkat(l->dir_fd, l->name, 0);
	close(l->fd);
	close(l->dir_fd);
	l->fd = l->dir_fd = -1;
}
