/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reports.c - see reports.h.  Each report is created O_CREAT|O_EXCL|
 * O_NOFOLLOW relative to the directory fd, so no link planted in the
 * directory is followed.  Retention (count and bytes) is enforced from the
 * index, so pruning on the handler path reads no directory.
 *
 * Faults never stop the handling of an OOM; each is logged: a directory that
 * cannot be created, is a link, is not the daemon's or holds other files
 * (reports are then not written), one moved or replaced since it was opened
 * (nothing is written through what replaced it), a file that cannot be
 * created (read-only) or written in full (full: the partial file is
 * removed, so every listed report is whole).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "report/reports.h"

/* A report's head holds what the index needs (the decision comes before
 * the snapshot); an older report may have it further in. */
#define SCAN_MAX (64 * 1024)
/* Its tail: the prompt's answer, the outcome and the timings, and the
 * uids it concerns in the end (a job OOM's jobs come before them). */
#define TAIL_MAX (8 * 1024)
#define NAME_MAX_LEN (CONFIG_NAME_MAX + 32)

/* ------------------------------------------------------------ names */

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

static void name_of(unsigned id, const char *scope, char *buf, size_t len)
{
	snprintf(buf, len, "oom-%08u-%s.json", id, scope);
}

static const struct report_entry *find(const struct reports *r, unsigned id)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->entries[i].id == id)
			return &r->entries[i];
	return NULL;
}

static int by_id(const void *a, const void *b)
{
	const struct report_entry *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* ------------------------------------------------------------ readers */

/* e's instance: the last name of cgroup rel, cut to fit (NULL: none). */
static void set_instance(struct report_entry *e, const char *rel)
{
	const char *leaf = rel ? strrchr(rel, '/') : NULL;
	const char *name = leaf ? leaf + 1 : rel ? rel : "";
	size_t n = strnlen(name, sizeof(e->instance) - 1);

	memcpy(e->instance, name, n);
	e->instance[n] = '\0';
}

void reports_copy_reason(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (len < 8) {
		dst[0] = '\0';
		return;
	}
	if (n < len) {
		memcpy(dst, src, n + 1);
		return;
	}
	/* Room for "...", then back to a space; a word longer than half the
	 * room is cut where it is (at a whole UTF-8 sequence). */
	n = len - 4;
	size_t end = n;
	while (end > 0 && !strchr(" ,;:", src[end]))
		end--;
	if (end >= n / 2)
		n = end;
	while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
		n--;
	while (n > 0 && strchr(" ,;:.", src[n - 1]))
		n--;
	memcpy(dst, src, n);
	memcpy(dst + n, "...", 4);
}

void reports_readers_add(struct report_readers *r, uid_t uid)
{
	if (uid == 0 || reports_readers_has(r, uid) || r->n >= REPORTS_READERS_MAX)
		return;
	r->uid[r->n++] = uid;
}

bool reports_readers_has(const struct report_readers *r, uid_t uid)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->uid[i] == uid)
			return true;
	return false;
}

/* ------------------------------------------------------------ a head */

struct scan {
	const char *p, *end;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
		s->p++;
}

/* Whether the next value begins with c (nothing taken). */
static bool next_is(struct scan *s, char c)
{
	ws(s);
	return s->p < s->end && *s->p == c;
}

static bool take(struct scan *s, char c)
{
	ws(s);
	if (s->p >= s->end || *s->p != c)
		return false;
	s->p++;
	return true;
}

/* A string (at its quote) decoded into out, cut to fit; \u00XX is the byte
 * the writer escaped, any other \u a '?'. */
static bool string(struct scan *s, char *out, size_t cap)
{
	size_t n = 0;

	if (!take(s, '"'))
		return false;
	while (s->p < s->end && *s->p != '"') {
		char c = *s->p++;
		if (c == '\\' && s->p < s->end) {
			c = *s->p++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
			if (c == 'u') {
				unsigned v = 0;
				for (int i = 0; i < 4 && s->p < s->end; i++, s->p++)
					v = v * 16 + (unsigned)(*s->p <= '9' ? *s->p - '0'
									     : (*s->p | 0x20) - 'a' + 10);
				c = v < 0x100 ? (char)v : '?';
			}
		}
		if (out && n + 1 < cap)
			out[n++] = c;
	}
	if (out && cap)
		out[n] = '\0';
	return take(s, '"');
}

/* A number or literal's text into out. */
static bool scalar(struct scan *s, char *out, size_t cap)
{
	size_t n = 0;

	ws(s);
	if (s->p < s->end && *s->p == '"')
		return string(s, out, cap);
	while (s->p < s->end && !strchr(",}] \n\t\r", *s->p)) {
		if (out && n + 1 < cap)
			out[n++] = *s->p;
		s->p++;
	}
	if (out && cap)
		out[n] = '\0';
	return n > 0 || !out;
}

/* Skips one value of any kind. */
static bool skip(struct scan *s)
{
	int depth = 0;

	ws(s);
	do {
		if (s->p >= s->end)
			return false;
		if (*s->p == '"') {
			if (!string(s, NULL, 0))
				return false;
			continue;
		}
		if (*s->p == '{' || *s->p == '[')
			depth++;
		else if (*s->p == '}' || *s->p == ']')
			depth--;
		else if (depth == 0)
			return scalar(s, NULL, 0);
		s->p++;
	} while (depth > 0);
	return true;
}

static uint64_t parse_time_ms(const char *t)
{
	uint64_t ms = 0, scale = 1000;
	const char *p = t;

	for (; *p >= '0' && *p <= '9'; p++)
		ms = ms * 10 + (uint64_t)(*p - '0');
	ms *= 1000;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && scale > 1; p++)
			ms += (uint64_t)(*p - '0') * (scale /= 10);
	return ms;
}

static bool decision(struct scan *s, struct report_entry *e)
{
	char key[32], v[24];

	if (!take(s, '{'))
		return false;
	while (!take(s, '}')) {
		if (!string(s, key, sizeof(key)) || !take(s, ':'))
			return false;
		bool ok;
		if (strcmp(key, "action") == 0) {
			ok = string(s, e->action, sizeof(e->action));
		} else if (strcmp(key, "reason") == 0) {
			char whole[512]; /* a decision's reason is 256 bytes at most */
			ok = string(s, whole, sizeof(whole));
			if (ok)
				reports_copy_reason(e->reason, sizeof(e->reason), whole);
		} else if (strcmp(key, "victim_pid") == 0) {
			ok = scalar(s, v, sizeof(v));
			if (ok)
				e->victim_pid = (pid_t)strtol(v, NULL, 10);
		} else {
			ok = skip(s);
		}
		if (!ok)
			return false;
		(void)take(s, ',');
	}
	return true;
}

/* A list of uids ("concerns"), added to e's readers; anything else in it
 * (never written by the daemon) ends the list. */
static bool uid_list(struct scan *s, struct report_entry *e)
{
	char v[24];

	if (!take(s, '['))
		return false;
	while (!take(s, ']')) {
		char *end;
		ws(s);
		if (s->p >= s->end || *s->p < '0' || *s->p > '9' || !scalar(s, v, sizeof(v)))
			return false;
		unsigned long long uid = strtoull(v, &end, 10);
		if (*end || end == v || uid >= (uid_t)-1)
			return false;
		reports_readers_add(&e->readers, (uid_t)uid);
		(void)take(s, ',');
	}
	return true;
}

void reports_scan_tail(const char *buf, size_t len, struct report_entry *e)
{
	static const char key[] = "\"concerns\":";
	const char *last = NULL;

	/* A key is never inside a string: a quote there is escaped. */
	for (const char *p = buf; (p = memmem(p, (size_t)(buf + len - p), key, sizeof(key) - 1));
	     p += sizeof(key) - 1)
		last = p;
	if (!last)
		return;
	struct scan s = {last + sizeof(key) - 1, buf + len};
	(void)uid_list(&s, e);
}

void reports_scan_head(const char *buf, size_t len, struct report_entry *e)
{
	struct scan s = {buf, buf + len};
	char key[32], v[32];
	bool have_time = false, have_decision = false;

	if (!take(&s, '{'))
		return;
	while (!(have_time && have_decision) && !take(&s, '}')) {
		if (!string(&s, key, sizeof(key)) || !take(&s, ':'))
			return;
		if (strcmp(key, "time") == 0 && scalar(&s, v, sizeof(v))) {
			e->time_ms = parse_time_ms(v);
			have_time = true;
		} else if (strcmp(key, "decision") == 0) {
			if (!decision(&s, e))
				return;
			have_decision = true;
		} else if (strcmp(key, "concerns") == 0) {
			if (!uid_list(&s, e))
				return;
		} else if (strcmp(key, "instance") == 0 && next_is(&s, '"')) {
			char rel[512];
			if (!string(&s, rel, sizeof(rel)))
				return;
			set_instance(e, rel);
		} else if (!skip(&s)) {
			return;
		}
		(void)take(&s, ',');
	}
}

/* ------------------------------------------------------------ the directory */

/* Opens a report for reading relative to dirfd: never through a link, never
 * blocking (a FIFO planted there), and only a regular file. */
static int open_report(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Room for want entries (at least one, at most REPORTS_MAX, never fewer
 * than are indexed); off the OOM path: at start and reload.  -ENOMEM leaves
 * the index as it was. */
static int resize(struct reports *r, unsigned want)
{
	want = want < 1 ? 1 : want > REPORTS_MAX ? REPORTS_MAX : want;
	if (want < r->n)
		want = r->n;
	if (want == r->cap)
		return 0;
	struct report_entry *e = realloc(r->entries, want * sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->entries = e;
	r->cap = want;
	return 0;
}

static void index_file(struct reports *r, int dirfd, const char *name)
{
	struct stat st;
	unsigned id;

	/* A directory holding more than the retention: the index grows to
	 * take them all (up to REPORTS_MAX), so that the next report's
	 * retention removes the oldest as before. */
	if (r->n >= r->cap && resize(r, r->cap * 2) < 0)
		return;
	struct report_entry *e = &r->entries[r->n];
	memset(e, 0, sizeof(*e));
	if (r->n >= r->cap || !parse_name(name, &id, e->scope, sizeof(e->scope)))
		return;
	int fd = open_report(dirfd, name, &st);
	if (fd < 0)
		return;
	ssize_t n = pread(fd, r->scanbuf, SCAN_MAX, 0);
	e->id = id;
	e->bytes = (uint64_t)st.st_size;
	e->time_ms = (uint64_t)st.st_mtim.tv_sec * 1000u + (uint64_t)st.st_mtim.tv_nsec / 1000000u;
	snprintf(e->action, sizeof(e->action), "?");
	if (n > 0)
		reports_scan_head(r->scanbuf, (size_t)n, e);
	/* The uids a prompt's answer concerned are in the tail. */
	off_t at = st.st_size > TAIL_MAX ? st.st_size - TAIL_MAX : 0;
	if ((n = pread(fd, r->scanbuf, TAIL_MAX, at)) > 0)
		reports_scan_tail(r->scanbuf, (size_t)n, e);
	close(fd);
	r->n++;
	if (id >= r->next_id)
		r->next_id = id + 1;
}

/* Whether a name in the directory is a report (or . and .., or the lock). */
static bool report_name(const char *name)
{
	unsigned id;
	char scope[CONFIG_NAME_MAX];

	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, REPORTS_LOCK_NAME) == 0 ||
	       parse_name(name, &id, scope, sizeof(scope));
}

/* Builds the index; refuses a directory that holds anything but reports. */
static int read_dir(struct reports *r, int fd, const char *path)
{
	int dup_fd = dup(fd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	if (!dir) {
		int err = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return err;
	}
	r->n = 0;
	r->next_id = 1;
	while ((de = readdir(dir))) {
		if (!report_name(de->d_name)) {
			char shown[LOG_ESCAPED_MAX(NAME_MAX_LEN)];
			log_err("report directory %s holds '%s', which is not a report: not the daemon's; "
				"reports are not written",
				path, log_escape(shown, sizeof(shown), de->d_name));
			closedir(dir);
			r->n = 0;
			return -EPERM;
		}
		index_file(r, fd, de->d_name);
	}
	closedir(dir);
	qsort(r->entries, r->n, sizeof(r->entries[0]), by_id);
	return 0;
}

static int mkdir_p(const char *path, mode_t last_mode, bool *ret_created)
{
	char buf[CONFIG_PATH_MAX];

	*ret_created = false;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		int r = mkdir(buf, saved ? 0755 : last_mode);
		if (r < 0 && errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved) {
			*ret_created = r == 0;
			return 0;
		}
	}
}

/* An existing directory is used only if it is the daemon's: owned by it and
 * writable by nobody else.  Its mode is never changed. */
static int check_owner(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != geteuid() || (st.st_mode & 0022)) {
		log_err("report directory %s is %s: not the daemon's; reports are not written", path,
			st.st_uid != geteuid() ? "owned by another user" : "writable by others");
		return -EPERM;
	}
	if (st.st_mode & 0007)
		log_warning("report directory %s is readable by everyone (mode %04o); reports name processes "
			    "and their command lines",
			    path, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int open_dir(struct reports *r)
{
	const char *path = r->cfg->report_dir;
	bool created;
	int err = mkdir_p(path, 0750, &created), fd;

	if (err < 0)
		return err;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		err = -errno;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			log_err("report directory %s is a symbolic link: not followed", path);
		return err;
	}
	/* The directory open already, under another name: its lock is ours. */
	struct stat st, ours;
	if (r->dirfd >= 0 && fstat(fd, &st) == 0 && fstat(r->dirfd, &ours) == 0 && st.st_dev == ours.st_dev &&
	    st.st_ino == ours.st_ino) {
		close(fd);
		return 0;
	}
	/* Only in a directory that is the daemon's is a lock file made. */
	if (!created && (err = check_owner(fd, path)) < 0) {
		close(fd);
		return err;
	}
	/* Read before the lock file is made, so a directory refused for what
	 * it holds is left as it was. */
	if ((err = read_dir(r, fd, path)) < 0) {
		close(fd);
		return err;
	}
	struct runlock lock = RUNLOCK_INIT;
	char pid[32];
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if ((err = runlock_take_at(&lock, fd, REPORTS_LOCK_NAME, pid)) < 0) {
		if (err == -EBUSY)
			log_err("report directory %s is another oomkitd's (it holds %s/%s)", path, path,
				REPORTS_LOCK_NAME);
		close(fd);
		return err;
	}
	/* The directory left behind is not ours any more: nor is its lock file. */
	runlock_release(&r->lock, true);
	r->lock = lock;
	if (r->dirfd >= 0)
		close(r->dirfd);
	r->dirfd = fd;
	return 0;
}

int reports_check_lock(const struct reports *r, const char *path)
{
	struct stat st, ours;
	int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), fd, err = 0;

	if (dir < 0)
		return 0;
	/* Our own lock, through another name, would look like another's. */
	if (r->dirfd >= 0 && fstat(dir, &st) == 0 && fstat(r->dirfd, &ours) == 0 &&
	    st.st_dev == ours.st_dev && st.st_ino == ours.st_ino) {
		close(dir);
		return 0;
	}
	/* A look, not a take: no file is made here. */
	fd = openat(dir, REPORTS_LOCK_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
		err = -EBUSY;
	if (fd >= 0)
		close(fd); /* and with it the lock, if it was taken */
	close(dir);
	return err;
}

/* ------------------------------------------------------------ the index */

int reports_init(struct reports *r)
{
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
	r->lock = (struct runlock)RUNLOCK_INIT;
	r->next_id = 1;
	r->scanbuf = malloc(SCAN_MAX);
	/* Sized by the retention once the configuration is known. */
	return resize(r, 1) == 0 && r->scanbuf ? 0 : -ENOMEM;
}

void reports_free(struct reports *r)
{
	runlock_release(&r->lock, true);
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r->entries);
	free(r->scanbuf);
	memset(r, 0, sizeof(*r));
	r->dirfd = -1;
	r->lock = (struct runlock)RUNLOCK_INIT;
}

int reports_configure(struct reports *r, const struct config *cfg)
{
	const struct config *old = r->cfg;

	r->cfg = cfg;
	int err = old && r->dirfd >= 0 && strcmp(old->report_dir, cfg->report_dir) == 0 ? 0 : open_dir(r);
	/* The index holds the retention and the newest before the oldest goes
	 * (prune), not REPORTS_MAX entries of which a hundred are kept. */
	unsigned want =
	    cfg->report_max_count < REPORTS_MAX ? (unsigned)cfg->report_max_count + 1 : REPORTS_MAX;
	if (want < r->n + 1)
		want = r->n + 1; /* a directory over the retention: room for the next report */
	if (resize(r, want) < 0)
		log_warning("report index: no memory for %u entries; it keeps %u", want, r->cap);
	return err;
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
	char name[NAME_MAX_LEN];

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
		name_of(id, scope, name, sizeof(name));
		int fd = openat(r->dirfd, name,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640);
		if (fd >= 0) {
			*ret_id = id;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

void reports_path(const struct reports *r, unsigned id, const char *scope, char *buf, size_t len)
{
	char name[NAME_MAX_LEN];

	name_of(id, scope, name, sizeof(name));
	snprintf(buf, len, "%s/%s", r->cfg ? r->cfg->report_dir : ".", name);
}

static void prune(struct reports *r)
{
	const struct config *cfg = r->cfg;
	uint64_t total = 0;
	unsigned drop = 0;
	char name[NAME_MAX_LEN];

	for (unsigned i = 0; i < r->n; i++)
		total += r->entries[i].bytes;
	while (drop < r->n && (r->n - drop > cfg->report_max_count || total > cfg->report_max_bytes ||
			       r->n - drop >= r->cap)) {
		/* The newest report is kept even if it alone is over the byte bound. */
		if (r->n - drop == 1 && cfg->report_max_count > 0)
			break;
		name_of(r->entries[drop].id, r->entries[drop].scope, name, sizeof(name));
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

static void add_entry(struct reports *r, unsigned id, const char *scope, uint64_t bytes,
		      const struct report_summary *sum)
{
	if (r->n >= r->cap)
		return;
	struct report_entry *e = &r->entries[r->n++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->bytes = bytes;
	snprintf(e->scope, sizeof(e->scope), "%s", scope);
	e->time_ms = sum ? sum->time_ms : 0;
	e->victim_pid = sum ? sum->victim_pid : 0;
	snprintf(e->action, sizeof(e->action), "%s", sum && sum->action ? sum->action : "?");
	reports_copy_reason(e->reason, sizeof(e->reason), sum && sum->reason ? sum->reason : "");
	set_instance(e, sum ? sum->instance : NULL);
	if (sum && sum->readers)
		e->readers = *sum->readers;
}

void reports_done(struct reports *r, unsigned id, const char *scope, int fd, int err,
		  const struct report_summary *sum)
{
	struct stat st;
	char name[NAME_MAX_LEN];

	if (fd < 0)
		return;
	uint64_t bytes = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (close(fd) < 0 && !err)
		err = -errno; /* some file systems report a failed write only here */
	if (err < 0) {
		name_of(id, scope, name, sizeof(name));
		log_err("report %s/%s: cannot be written: %s; removed", r->cfg->report_dir, name,
			strerror(-err));
		if (unlinkat(r->dirfd, name, 0) < 0)
			log_warning("report %s: cannot remove the partial file: %s", name, strerror(errno));
		return;
	}
	add_entry(r, id, scope, bytes, sum);
	prune(r);
}

const struct report_entry *reports_find(const struct reports *r, unsigned id)
{
	return find(r, id);
}

int reports_open_existing(const struct reports *r, unsigned id)
{
	char name[NAME_MAX_LEN];
	struct stat st;

	if (r->dirfd < 0)
		return -EBADF;
	const struct report_entry *e = find(r, id);
	if (!e)
		return -ENOENT;
	name_of(e->id, e->scope, name, sizeof(name));
	return open_report(r->dirfd, name, &st);
}
