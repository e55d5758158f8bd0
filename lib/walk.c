/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * walk.c - walking a cgroup subtree and its cgroup.procs files with no limit
 * that a job's owner can exceed.
 *
 * A delegated owner creates cgroups below its job as it likes: names of 255
 * bytes, paths of any length, trees of any depth, any number of processes in
 * one cgroup.  A process the library cannot see is a process the owner has
 * hidden from the handler, so nothing here builds a path to open a file
 * (every open is relative to the parent's directory fd), the depth has no
 * bound, and cgroup.procs is read in chunks.
 *
 * The first WALK_STACK levels keep their directory open, and the kernel's
 * directory position says where to go on after a child.  Deeper than that
 * the walk keeps one directory open: it goes down to a child, and back up
 * through "..", and continues with the sibling of the next higher inode
 * number (inode numbers are unique and do not change, unlike positions of a
 * directory whose entries were removed).  Memory stays bounded at any depth,
 * at the price of reading a directory once per child at those levels.
 *
 * The owner's cgroups also cost time: an owner makes thousands of empty
 * ones in its job to slow the handler down until the delay runs out.  A
 * cgroup without subdirectories (a directory's link count is two plus its
 * subdirectories, in cgroupfs as in other file systems) is visited through
 * its parent, its directory neither opened nor read, and a directory of
 * many children is read a buffer of entries at a time, not once per child:
 * an empty cgroup costs a stat and a read of its cgroup.procs.  What is left
 * is bounded by a deadline the caller may give, past which the walk stops
 * (-ETIMEDOUT): the caller then finds the processes through /proc
 * (OOMKIT_WALK_PROC), at a cost that grows with the machine's processes,
 * not with anyone's cgroups.
 *
 * Nothing allocates: the walk's state lives on the caller's stack, which
 * the reserve prefaults.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Levels of a walk that keep their directory open: fds held at once. */
#define WALK_STACK 32
/* getdents64 buffer: a dozen entries with the longest names. */
#define DIRENT_BUF 4096
/* cgroup.procs chunk: the last, incomplete line is carried to the next. */
#define PROCS_CHUNK 4096

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static bool is_subdir(const struct linux_dirent64 *de)
{
	return de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
}

static void copy_name(char *dst, const char *name)
{
	size_t n = strnlen(name, NAME_MAX);
	memcpy(dst, name, n);
	dst[n] = 0;
}

/* A directory that was removed while it was read reads as empty. */
static int dir_errno(int err)
{
	return err == ENOENT || err == ENODEV ? 0 : -err;
}

static int open_subdir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Removed (or replaced by something else) since it was listed. */
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
	return fd;
}

/* ------------------------------------------------------------- path */

/* The visited cgroup's path grows and shrinks with the walk; past its buffer
 * it keeps the components that fit (path_depth of them). */
static void path_push(struct oomkit__walk *w, const char *name)
{
	size_t n = strlen(name), sep = w->path_len ? 1 : 0;

	w->depth++;
	if (w->path_depth + 1 != w->depth || w->path_len + sep + n >= sizeof(w->path))
		return;
	if (sep)
		w->path[w->path_len++] = '/';
	memcpy(w->path + w->path_len, name, n + 1);
	w->path_len += n;
	w->path_depth++;
}

static void path_pop(struct oomkit__walk *w)
{
	if (w->depth == w->path_depth && w->path_depth > 0) {
		char *slash = memrchr(w->path, '/', w->path_len);
		/* The start's own components stay: path_depth counts only ours. */
		w->path_len = slash ? (size_t)(slash - w->path) : 0;
		w->path[w->path_len] = 0;
		w->path_depth--;
	}
	w->depth--;
}

/* ------------------------------------------------------ directories */

/* Reads the first subdirectory of fd at or after position *off into name and
 * moves *off past it.  1 if one was found, 0 at the end. */
static int next_subdir(int fd, off_t *off, char *name)
{
	char buf[DIRENT_BUF] __attribute__((aligned(8)));

	if (lseek(fd, *off, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0)
			return n < 0 ? dir_errno(errno) : 0;
		for (long p = 0; p < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + p);
			p += de->d_reclen;
			*off = de->d_off;
			if (is_subdir(de)) {
				copy_name(name, de->d_name);
				return 1;
			}
		}
	}
}

/* The subdirectory of fd with the lowest inode number above after. */
static int lowest_subdir_after(int fd, uint64_t after, char *name, uint64_t *ret_ino)
{
	char buf[DIRENT_BUF] __attribute__((aligned(8)));
	bool found = false;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			return dir_errno(errno);
		if (n == 0)
			return found;
		for (long p = 0; p < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + p);
			p += de->d_reclen;
			if (is_subdir(de) && de->d_ino > after && (!found || de->d_ino < *ret_ino)) {
				copy_name(name, de->d_name);
				*ret_ino = de->d_ino;
				found = true;
			}
		}
	}
}

int oomkit__for_each_subdir(int dirfd, int (*fn)(int dirfd, const char *name, void *userdata), void *userdata)
{
	char name[NAME_MAX + 1];
	off_t off = 0;
	int r, count = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((r = next_subdir(fd, &off, name)) > 0) {
		if ((r = fn(dirfd, name, userdata)) != 0)
			break;
		count++;
	}
	close(fd);
	return r != 0 ? r : count;
}

/* ------------------------------------------------------------- walk */

/* Opens and visits a child of parent: 0 with *ret_fd set (the caller closes
 * it), -ENOENT if it went away meanwhile, or what visit returned. */
static int enter(struct oomkit__walk *w, int parent, const char *name, int *ret_fd)
{
	int r, fd = open_subdir(parent, name);

	if (fd < 0)
		return fd;
	path_push(w, name);
	r = w->visit(w, fd, NULL);
	if (r != 0) {
		path_pop(w);
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Walks what lies below base (visited already) holding one directory open at
 * a time.  Consumes base. */
static int walk_deep(struct oomkit__walk *w, int base)
{
	char name[NAME_MAX + 1];
	unsigned below = 0;
	uint64_t after = 0, ino = 0;
	int r, fd, cur = base;

	for (;;) {
		if (w->deadline_ns && oomkit__now_ns() >= w->deadline_ns) {
			r = -ETIMEDOUT;
			break;
		}
		r = lowest_subdir_after(cur, after, name, &ino);
		if (r < 0)
			break;
		if (r == 1) {
			r = enter(w, cur, name, &fd);
			if (r == -ENOENT) {
				after = ino;
				continue;
			}
			if (r != 0)
				break;
			close(cur);
			cur = fd;
			below++;
			after = 0;
			continue;
		}
		if (below == 0)
			break;
		/* Up to the parent, to go on after the child we leave. */
		struct stat st;
		int up = fstat(cur, &st) < 0 ? -1 : openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up < 0) {
			r = -errno;
			break;
		}
		close(cur);
		cur = up;
		below--;
		path_pop(w);
		after = st.st_ino;
	}
	for (; below > 0; below--)
		path_pop(w);
	close(cur);
	return r;
}

struct level {
	int fd;
	off_t off; /* where the next subdirectory is looked for */
};

/* The walk's one buffer of directory entries: those of level `owner`'s
 * directory from the entry at `pos` on.  A level whose children are leaves
 * keeps it, and reads its directory a buffer at a time; a deeper level that
 * reads its own takes it, and the level above reads again from its `off`. */
struct dirbuf {
	char buf[DIRENT_BUF] __attribute__((aligned(8)));
	long len, pos;
	unsigned owner; /* 0: none; else the level's index + 1 */
};

/* The next subdirectory of the level at index i, its name into name, its
 * position past it into top->off.  1 if one was found, 0 at the end. */
static int next_entry(struct dirbuf *b, struct level *top, unsigned i, char *name)
{
	if (b->owner != i + 1) {
		if (lseek(top->fd, top->off, SEEK_SET) < 0)
			return -errno;
		b->owner = i + 1;
		b->len = b->pos = 0;
	}
	for (;;) {
		if (b->pos >= b->len) {
			b->len = syscall(SYS_getdents64, top->fd, b->buf, sizeof(b->buf));
			b->pos = 0;
			if (b->len <= 0) {
				int r = b->len < 0 ? dir_errno(errno) : 0;
				b->len = 0;
				return r;
			}
		}
		struct linux_dirent64 *de = (struct linux_dirent64 *)(b->buf + b->pos);
		b->pos += de->d_reclen;
		top->off = de->d_off;
		if (is_subdir(de)) {
			copy_name(name, de->d_name);
			return 1;
		}
	}
}

/* A child with no subdirectory of its own: visited through its parent,
 * with no directory opened or read.  1 if it was one (and visited, r set
 * to the visit's value), 0 if it has subdirectories or is not a directory. */
static int visit_leaf(struct oomkit__walk *w, int parent, const char *name, int *r)
{
	struct stat st;

	*r = 0;
	/* Removed since it was listed: nothing to visit.  Another error: the
	 * child is opened and read as any other, which says what is wrong. */
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode) || st.st_nlink != 2)
		return 0;
	path_push(w, name);
	*r = w->visit(w, parent, name);
	path_pop(w);
	return 1;
}

/* Takes the next child of the directory on top of the stack: visits it if
 * it is a leaf, else pushes it, or walks below it holding one fd if the
 * stack is full; pops the top if it has no more children. */
static int step(struct oomkit__walk *w, struct level *stack, unsigned *n, struct dirbuf *b)
{
	char name[NAME_MAX + 1];
	struct level *top = &stack[*n - 1];
	int fd, r = next_entry(b, top, *n - 1, name);

	if (r == 0) {
		close(top->fd);
		if (b->owner == *n)
			b->owner = 0;
		if (--*n > 0)
			path_pop(w);
		return 0;
	}
	if (r < 0)
		return r;
	if (w->deadline_ns && oomkit__now_ns() >= w->deadline_ns)
		return -ETIMEDOUT;
	if (visit_leaf(w, top->fd, name, &r))
		return r == -ENOENT ? 0 : r;
	r = enter(w, top->fd, name, &fd);
	if (r != 0)
		return r == -ENOENT ? 0 : r;
	if (*n < WALK_STACK) {
		stack[(*n)++] = (struct level){fd, 0};
		return 0;
	}
	r = walk_deep(w, fd);
	path_pop(w);
	return r;
}

int oomkit__walk(struct oomkit__walk *w, int start_fd)
{
	struct level stack[WALK_STACK];
	struct dirbuf b = {.owner = 0};
	unsigned n = 0;
	int r, fd = openat(start_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	w->depth = w->path_depth = 0;
	w->path_len = strlen(w->path);
	r = w->visit(w, fd, NULL);
	if (r != 0 || !w->recursive) {
		close(fd);
		return r;
	}
	stack[n++] = (struct level){fd, 0};
	while (n > 0 && r == 0)
		r = step(w, stack, &n, &b);
	while (n > 0)
		close(stack[--n].fd);
	return r;
}

/* ------------------------------------------------------ cgroup.procs */

int oomkit__procs_each(int dirfd, int (*fn)(pid_t pid, void *userdata), void *userdata)
{
	return oomkit__procs_each_at(dirfd, NULL, fn, userdata);
}

int oomkit__procs_each_at(int dirfd, const char *name, int (*fn)(pid_t pid, void *userdata), void *userdata)
{
	char buf[PROCS_CHUNK], path[NAME_MAX + sizeof("/cgroup.procs")];
	size_t have = 0, lines;
	int r = 0, fd;

	if (name) {
		size_t n = strnlen(name, NAME_MAX + 1);
		if (n > NAME_MAX || memchr(name, '/', n))
			return -EINVAL;
		memcpy(path, name, n);
		memcpy(path + n, "/cgroup.procs", sizeof("/cgroup.procs"));
	}
	fd = openat(dirfd, name ? path : "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENODEV ? -ENOENT : -errno;
	for (;;) {
		ssize_t k = read(fd, buf + have, sizeof(buf) - have);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = errno == ENODEV ? -ENOENT : -errno;
			break;
		}
		have += (size_t)k;
		/* Whole lines now; the rest waits for the next chunk. */
		char *nl = k == 0 ? NULL : memrchr(buf, '\n', have);
		size_t upto = k == 0 ? have : nl ? (size_t)(nl - buf) + 1 : 0;
		if (k > 0 && upto == 0 && have == sizeof(buf)) {
			r = -EINVAL;
			break;
		}
		r = oomkit__parse_pids_each(buf, upto, fn, userdata, &lines);
		if (r != 0 || k == 0)
			break;
		memmove(buf, buf + upto, have - upto);
		have -= upto;
	}
	close(fd);
	return r;
}

struct pids_walk {
	struct oomkit__walk w;
	oomkit_pid_fn fn;
	void *userdata;
	struct oomkit_pid_entry entry;
	uint64_t count;
};

static int pid_found(pid_t pid, void *userdata)
{
	struct pids_walk *pw = userdata;
	pw->entry.pid = pid;
	pw->count++;
	return pw->fn(pw->w.ctx, &pw->entry, pw->userdata);
}

static int visit_pids(struct oomkit__walk *w, int dirfd, const char *name)
{
	struct pids_walk *pw = (struct pids_walk *)w;
	pw->entry.cgroup = w->path;
	pw->entry.cgroup_truncated = w->depth > w->path_depth;
	pw->entry.depth = w->depth;
	uint64_t count = pw->count, start = w->deadline_ns ? oomkit__now_ns() : 0;
	int r = oomkit__procs_each_at(dirfd, name, pid_found, pw);
	/* The deadline bounds what cgroups cost, not processes: the time
	 * spent on a cgroup that holds some (fn's included) moves it on. */
	if (w->deadline_ns && pw->count != count)
		w->deadline_ns += oomkit__now_ns() - start;
	/* A descendant removed while we walk has no processes left; the
	 * walked cgroup itself gone is the caller's error. */
	return r == -ENOENT && w->depth > 0 ? 0 : r;
}

/* ------------------------------------------------------ through /proc */

/* The memory cgroup in the cgroup file at dirfd/name into pw's path: its
 * length, or -errno. */
static int read_cgroup(struct pids_walk *pw, int dirfd, const char *name, bool *ret_cut)
{
	oomkit_ctx *ctx = pw->w.ctx;
	int n = oomkit__read_file_at(dirfd, name, ctx->iobuf, OOMKIT__IOBUF_SIZE);

	if (n < 0)
		return n;
	return oomkit__parse_proc_cgroup_head(ctx->iobuf, (size_t)n, oomkit__proc_controller(ctx), pw->w.path,
					      sizeof(pw->w.path), ret_cut);
}

/* A thread-group leader that exits before its other threads stays a zombie
 * whose /proc/PID/cgroup reads the root: the process is where a live
 * thread of it is (oomkit__proc_open_live(), as every reader of a process
 * finds it).  That thread's cgroup into pw's path (its length), or -ESRCH
 * if the leader lives (the root is where it is) or no thread does. */
static int live_thread_cgroup(struct pids_walk *pw, const char *pid, bool *ret_cut)
{
	struct oomkit__proc_stat leader, live;
	int r = -ESRCH, fd = oomkit__proc_open_live(pw->w.ctx, (pid_t)strtol(pid, NULL, 10), &leader, &live);

	if (fd < 0)
		return -ESRCH;
	bool dead = leader.state == 'Z' || leader.state == 'X';
	if (dead && live.state != 'Z' && live.state != 'X')
		r = read_cgroup(pw, fd, "cgroup", ret_cut);
	close(fd);
	return r > 0 ? r : -ESRCH;
}

/* Where pid's process is, by its /proc/PID/cgroup, into pw's path: 1 if it
 * is at or below rel (rel_len bytes; exactly at it without
 * OOMKIT_WALK_RECURSIVE), 0 if not or gone. */
static int proc_place(struct pids_walk *pw, int procfd, const char *pid, const char *rel, size_t rel_len)
{
	char name[32];
	bool cut;

	snprintf(name, sizeof(name), "%s/cgroup", pid);
	int n = read_cgroup(pw, procfd, name, &cut);
	/* At the root, below rel: a leader that exited before its threads? */
	if (n == 0 && rel_len > 0) {
		int k = live_thread_cgroup(pw, pid, &cut);
		n = k >= 0 ? k : 0;
		if (k < 0)
			pw->w.path[0] = '\0';
	}
	if (n < 0 || (size_t)n < rel_len || memcmp(pw->w.path, rel, rel_len) != 0)
		return 0;
	const char *below = pw->w.path + rel_len;
	if (rel_len > 0 && *below != '\0' && *below != '/')
		return 0;
	unsigned depth = 0;
	for (const char *c = below; *c; c++)
		depth += *c == '/' || (c == below && rel_len == 0);
	if (!pw->w.recursive && (depth > 0 || cut))
		return 0;
	pw->entry.cgroup = pw->w.path;
	pw->entry.cgroup_truncated = cut;
	pw->entry.depth = depth;
	return 1;
}

/* Every process of the machine whose cgroup is rel or below it: /proc's
 * entries read a buffer at a time, each process's cgroup from its
 * /proc/PID/cgroup.  However many cgroups lie below rel, and however its
 * processes move between them meanwhile, each is found once. */
static int walk_proc(struct pids_walk *pw, const char *rel)
{
	char buf[DIRENT_BUF] __attribute__((aligned(8)));
	char start[OOMKIT__WALK_PATH_MAX];
	size_t rel_len = strlen(rel);
	int r = 0, fd = openat(pw->w.ctx->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	memcpy(start, rel, rel_len + 1);
	while (r == 0) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		for (long p = 0; p < n && r == 0;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + p);
			p += de->d_reclen;
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0 || pid > INT32_MAX ||
			    !proc_place(pw, pw->w.ctx->proc_fd, de->d_name, start, rel_len))
				continue;
			r = pid_found((pid_t)pid, pw);
		}
	}
	close(fd);
	return r;
}

/* ------------------------------------------------------ public walks */

OOMKIT__EXPORT int oomkit_cgroup_walk_pids_until(oomkit_ctx *ctx, const char *cgroup, unsigned flags,
						 uint64_t deadline_ns, oomkit_pid_fn fn, void *userdata)
{
	struct pids_walk pw = {.w = {.ctx = ctx,
				     .visit = visit_pids,
				     .recursive = flags & OOMKIT_WALK_RECURSIVE,
				     .deadline_ns = deadline_ns},
			       .fn = fn,
			       .userdata = userdata};
	int r, fd;

	if (!ctx || !cgroup || !fn || (flags & ~(OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC)))
		return -EINVAL;
	r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, pw.w.path, OOMKIT__PATH_MAX);
	if (r < 0)
		return r;
	if ((fd = oomkit__cgroup_open(ctx, pw.w.path)) < 0)
		return fd;
	if (flags & OOMKIT_WALK_PROC) {
		close(fd);
		r = walk_proc(&pw, pw.w.path);
	} else {
		r = oomkit__walk(&pw.w, fd);
		close(fd);
	}
	if (r != 0)
		return r;
	return pw.count > INT32_MAX ? -EOVERFLOW : (int)pw.count;
}

OOMKIT__EXPORT int oomkit_cgroup_walk_pids(oomkit_ctx *ctx, const char *cgroup, unsigned flags,
					   oomkit_pid_fn fn, void *userdata)
{
	return oomkit_cgroup_walk_pids_until(ctx, cgroup, flags, 0, fn, userdata);
}

struct pid_array {
	pid_t *pids;
	size_t n, count;
};

static int add_pid(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct pid_array *a = userdata;
	(void)ctx;
	if (a->count >= a->n)
		return -ENOBUFS;
	a->pids[a->count++] = e->pid;
	return 0;
}

OOMKIT__EXPORT int oomkit_cgroup_pids(oomkit_ctx *ctx, const char *cgroup, bool recursive, pid_t *pids,
				      size_t n)
{
	struct pid_array a = {pids, n, 0};

	if (!pids && n)
		return -EINVAL;
	return oomkit_cgroup_walk_pids(ctx, cgroup, recursive ? OOMKIT_WALK_RECURSIVE : 0, add_pid, &a);
}
