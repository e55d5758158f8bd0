/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * runlock.h - one oomkitd per socket, per machine and per report directory:
 * lock files held with flock(2), taken without waiting.
 *
 * A lock file lives in a directory that only root (or the user of a daemon
 * that is not root) can write, and is made 0600, so no other user can open
 * it, let alone hold its lock: an flock on the machine's memcg directory
 * itself, which every user may open, would let anyone keep oomkitd from
 * starting.  An flock goes with the process, so a daemon that crashed
 * leaves a lock file, never a stale lock.  A daemon that stops removes its
 * files, still holding their locks; one that takes a lock checks that the
 * file it locked is still the one of that name, so a removal never lets two
 * daemons hold "the same" lock.
 *
 *   SOCKET.lock        beside the control socket (the socket's directory,
 *                      checked as the socket's is)
 *   /run/oomkit/machine-HASH.lock
 *                      the machine, by its memcg path (a hash of it; the
 *                      file holds the path for a person looking)
 *   REPORT_DIR/.oomkitd.lock
 *                      the report directory (reports.c)
 */
#ifndef OOMKITD_RUNLOCK_H
#define OOMKITD_RUNLOCK_H

#include <stdbool.h>
#include <stddef.h>

/* Where the machines' lock files are: root's, whatever the socket. */
#define RUNLOCK_DIR "/run/oomkit"

struct runlock {
	int dir_fd; /* -1: not held */
	int fd;
	char name[128];
};

#define RUNLOCK_INIT                                                                                         \
	{                                                                                                    \
		.dir_fd = -1, .fd = -1                                                                       \
	}

/* Opens dir from "/" one component at a time, never following a link,
 * creating the last one (0755) if it is missing, and checking each: root's
 * (or the daemon's own user's), and writable by nobody else -- or, on the
 * way only, sticky like /tmp.  Returns an O_PATH fd or -errno (-EPERM: a
 * directory that is not safe). */
int runlock_open_dir(const char *dir);

/* Takes the lock file name in the directory dir_fd (which the lock keeps;
 * the caller's fd is not closed), writing text into it.  0, -EBUSY if
 * another process holds it, or -errno. */
int runlock_take_at(struct runlock *l, int dir_fd, const char *name, const char *text);

/* The socket's lock, SOCKET.lock beside it. */
int runlock_socket(struct runlock *l, const char *socket_path);
/* The machine's lock in RUNLOCK_DIR, named after its memcg path rel. */
int runlock_machine(struct runlock *l, const char *rel);

/* Lets it go; with remove, the file goes too (while still held). */
void runlock_release(struct runlock *l, bool remove);

#endif
