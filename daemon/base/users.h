/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * users.h - the daemon's one reader of user names: `owner =`, `user:` rules,
 * a delegated owner's group, the name of a control client.
 *
 * Until users_seal() (called just before privileges are cut) a name or uid
 * is looked up through NSS, as the administrator expects of a configuration
 * read at start: users of a directory service (LDAP, sssd) included.  Each
 * answer is remembered.  After it, NSS is never called: its modules are
 * libraries loaded on demand and sockets to other hosts, a network round
 * trip (or a call the seccomp filter refuses) inside the daemon.  Then
 * /etc/passwd is read by hand (opened without blocking, only if a regular
 * file, a block at a time), and what NSS said before the seal answers for
 * the rest.  So a reload knows the users of /etc/passwd as they are now and
 * the directory's users the daemon had looked up by then; a directory user
 * first named after the start needs a restart.
 */
#ifndef OOMKITD_USERS_H
#define OOMKITD_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define USERS_NAME_MAX 64

struct users_entry {
	char name[USERS_NAME_MAX];
	uid_t uid;
	gid_t gid;
};

/* Parses one line of passwd(5), without its newline (name:pw:uid:gid:...).
 * 0, or -EINVAL for a line that is not one (a comment, an empty name, a
 * uid or gid that is not a number, a name longer than USERS_NAME_MAX - 1). */
int users_parse_line(const char *line, size_t len, struct users_entry *ret);

/* Finds in the passwd file open at fd the entry named name (if name is not
 * NULL) or else the first of uid.  1 found (*ret written), 0 not, -errno. */
int users_file_find(int fd, const char *name, uid_t uid, struct users_entry *ret);

/* The process's lookups (see above).  1 found, 0 unknown, -errno. */
int users_by_name(const char *name, struct users_entry *ret);
int users_by_uid(uid_t uid, struct users_entry *ret);

/* From now on NSS is not used; idempotent. */
void users_seal(void);
/* Whether users_seal() was called (tests). */
bool users_sealed(void);

/* The passwd file read after the seal; "/etc/passwd" unless a test says. */
void users_set_passwd(const char *path);

#endif
