/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.c - the cgroup filesystem itself, whichever memory interface it
 * serves: paths, cgroup.procs, the directory tree, memory.stat, creating and
 * removing cgroups; and the public readers and writers, which hand what
 * differs to cgroup-v1.c (memory.oom_control, memory.limit_in_bytes) or
 * cgroup-v2.c (memory.events, memory.high/max).
 *
 * Every function here runs on the handler path unless it says otherwise: it
 * reads with openat()/pread() into the context's buffers and walks
 * directories with getdents64(), so nothing allocates.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *oomkit__at(const char *rel)
{
	/* The root is "" internally; openat() wants ".". */
	return rel[0] ? rel : ".";
}

int oomkit__cgroup_open(oomkit_ctx *ctx, const char *rel)
{
	int fd = openat(ctx->memory_root_fd, oomkit__at(rel), O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int relpath(oomkit_ctx *ctx, const char *cgroup, char *out, size_t len)
{
	if (!ctx || !cgroup)
		return -EINVAL;
	return oomkit__cgroup_relpath(cgroup, ctx->memory_root, out, len);
}

/* "rel/name" relative to the memory root. */
static int file_path(const char *rel, const char *name, char *path, size_t size)
{
	size_t n = 0;
	path[0] = 0;
	int r = oomkit__append(path, size, &n, oomkit__at(rel));
	if (r == 0)
		r = oomkit__append(path, size, &n, "/");
	return r == 0 ? oomkit__append(path, size, &n, name) : r;
}

int oomkit__cg_read(oomkit_ctx *ctx, const char *rel, const char *name, char *buf, size_t len)
{
	char path[OOMKIT__PATH_MAX + 64];
	int r = file_path(rel, name, path, sizeof(path));
	return r < 0 ? r : oomkit__read_file_at(ctx->memory_root_fd, path, buf, len);
}

int oomkit__cg_write(oomkit_ctx *ctx, const char *rel, const char *name, const char *value)
{
	char path[OOMKIT__PATH_MAX + 64];
	int r = file_path(rel, name, path, sizeof(path));
	return r < 0 ? r : oomkit__write_file_at(ctx->memory_root_fd, path, value);
}

int oomkit__read_u64_at(int dirfd, const char *name, uint64_t *ret)
{
	char buf[64];
	int n = oomkit__read_file_at(dirfd, name, buf, sizeof(buf));
	if (n < 0)
		return n;
	return oomkit__parse_u64(buf, (size_t)n, ret);
}

/* ------------------------------------------------------- dispatchers */

void oomkit__cgroup_setup_backend(oomkit_ctx *ctx, enum oomkit_backend backend)
{
	bool v2 = backend == OOMKIT_BACKEND_V2;
	ctx->backend = v2 ? OOMKIT_BACKEND_V2 : OOMKIT_BACKEND_V1;
	ctx->cg_caps = v2 ? OOMKIT__CAN_KILL_ALL | OOMKIT__HAS_MEMORY_EVENTS | OOMKIT__GONE_BY_PARENT : 0;
}

void oomkit__cgroup_setup(oomkit_ctx *ctx)
{
	/* Only a cgroup2 root has cgroup.controllers. */
	bool v2 = faccessat(ctx->memory_root_fd, "cgroup.controllers", F_OK, 0) == 0;
	oomkit__cgroup_setup_backend(ctx, v2 ? OOMKIT_BACKEND_V2 : OOMKIT_BACKEND_V1);
}

int oomkit__register(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return oomkit__v2_register(ctx, w);
	if (w->kind == OOMKIT_EVENT_PRESSURE && w->psi)
		return oomkit__psi_register(ctx, w);
	return oomkit__v1_register(ctx, w);
}

int oomkit__consume(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return oomkit__v2_consume(w);
	/* A PSI trigger is consumed by the poll that reported it. */
	return w->psi ? 1 : oomkit__v1_consume(w);
}

int oomkit__oom_state(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit__oom_control *ret)
{
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return oomkit__v2_watch_oom_state(ctx, w, ret);
	return oomkit__v1_oom_control(ctx, w->cgroup, w->oomfd, ret);
}

int oomkit__hold_at(oomkit_ctx *ctx, int dirfd, bool hold)
{
	return ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_hold(dirfd, hold)
						 : oomkit__v1_hold(dirfd, hold);
}

int oomkit__hold_cgroup(oomkit_ctx *ctx, const char *rel, int dirfd, bool hold)
{
	int r = oomkit__hold_at(ctx, dirfd, hold);
	if (r >= 0)
		oomkit__limits_changed(ctx, rel, dirfd);
	return r;
}

void oomkit__limits_changed(oomkit_ctx *ctx, const char *rel, int dirfd)
{
	uint64_t high, max;
	if (!ctx->limits || ctx->backend != OOMKIT_BACKEND_V2 ||
	    oomkit__read_u64_at(dirfd, "memory.high", &high) < 0 ||
	    oomkit__read_u64_at(dirfd, "memory.max", &max) < 0)
		return;
	ctx->limits(ctx, rel, high, max, ctx->limits_userdata);
}

int oomkit__oom_state_at(oomkit_ctx *ctx, const char *rel, struct oomkit__oom_control *ret)
{
	if (ctx->backend != OOMKIT_BACKEND_V2)
		return oomkit__v1_oom_control(ctx, rel, -1, ret);
	int fd = oomkit__cgroup_open(ctx, rel);
	if (fd < 0)
		return fd;
	int r = oomkit__v2_oom_state(ctx, fd, ret);
	close(fd);
	return r;
}

int oomkit__event_memory(oomkit_ctx *ctx, struct oomkit_watch *w, struct oomkit_cgroup_memory *ret)
{
	/* On v1 only the three files an event needs, oom_control through the
	 * watch's open fd. */
	return ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_event_memory(ctx, w, ret)
						 : oomkit__v1_event_memory(w, ret);
}

int oomkit__oom_origin(oomkit_ctx *ctx, const struct oomkit_watch *w, char *out, size_t out_len)
{
	/* v2 watches memory.events.local: an event is always the cgroup's own. */
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return -EOPNOTSUPP;
	return oomkit__v1_watch_origin(ctx, w, out, out_len);
}

void oomkit__watch_init_fds(struct oomkit_watch *w)
{
	w->dirfd = w->efd = w->oomfd = w->usagefd = w->limitfd = w->parentfd = -1;
	w->swapfd = w->swapmaxfd = w->pressurefd = -1;
}

void oomkit__watch_close_fds(struct oomkit_watch *w)
{
	int *fds[] = {&w->efd,	  &w->oomfd,	 &w->usagefd,	 &w->limitfd, &w->parentfd,
		      &w->swapfd, &w->swapmaxfd, &w->pressurefd, &w->dirfd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

const char *oomkit__proc_controller(const oomkit_ctx *ctx)
{
	return ctx->backend == OOMKIT_BACKEND_V2 ? NULL : "memory";
}

int oomkit__pressure_dir(oomkit_ctx *ctx, const char *rel)
{
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return oomkit__cgroup_open(ctx, rel);
	/* v1 memcgs have no PSI; the cgroup2 hierarchy mounted beside them
	 * does, per cgroup, even without its memory controller. */
	if (!ctx->cgroup2_root[0])
		return -EOPNOTSUPP;
	int root = open(ctx->cgroup2_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	int fd = openat(root, oomkit__at(rel), O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r = fd < 0 ? (errno == ENOENT ? -EOPNOTSUPP : -errno) : fd;
	close(root);
	return r;
}

uint64_t oomkit__clear_level(const oomkit_ctx *ctx, uint64_t limit)
{
	return ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_clear_level(limit) : limit;
}

int oomkit__kill_all(oomkit_ctx *ctx, int dirfd, uint64_t end_ns)
{
	if (!(ctx->cg_caps & OOMKIT__CAN_KILL_ALL))
		return -EOPNOTSUPP;
	return oomkit__v2_kill(dirfd, end_ns);
}

const char *const *oomkit__delegated_files(const oomkit_ctx *ctx)
{
	return ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_delegated : oomkit__v1_delegated;
}

/* ---------------------------------------------------- public readers */

/* Opens an O_PATH dirfd for a caller's cgroup argument. */
static int open_arg(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	return r < 0 ? r : oomkit__cgroup_open(ctx, rel);
}

OOMKIT__EXPORT int oomkit_cgroup_memory(oomkit_ctx *ctx, const char *cgroup,
					struct oomkit_cgroup_memory *ret_mem)
{
	int fd = open_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_memory(ctx, fd, ret_mem)
						  : oomkit__v1_memory(fd, ret_mem);
	close(fd);
	return r;
}

OOMKIT__EXPORT int oomkit_cgroup_stat(oomkit_ctx *ctx, const char *cgroup, const char *key,
				      uint64_t *ret_value)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!key)
		return -EINVAL;
	r = oomkit__cg_read(ctx, rel, "memory.stat", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
	if (r < 0)
		return r;
	return oomkit__parse_keyed_u64(ctx->iobuf2, (size_t)r, key, ret_value);
}

OOMKIT__EXPORT int oomkit_cgroup_exists(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (faccessat(ctx->memory_root_fd, oomkit__at(rel), F_OK, 0) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

OOMKIT__EXPORT int oomkit_cgroup_procs_writable(oomkit_ctx *ctx, const char *cgroup, uid_t uid)
{
	char rel[OOMKIT__PATH_MAX], path[OOMKIT__PATH_MAX + 64];
	struct stat st;
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0 || (r = file_path(rel, "cgroup.procs", path, sizeof(path))) < 0)
		return r;
	if (fstatat(ctx->memory_root_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	/* Its owner may chmod it; a group or anyone else with the write bit
	 * is not told apart from the uid's own groups. */
	return st.st_uid == uid || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

/* Whether a uid other than root may write the cgroup at rel: its directory
 * (to make cgroups in it) or its cgroup.procs (to move processes into it),
 * and the file threads move through (cgroup.threads, v1's tasks); the owner
 * of the first that is in *ret_owner. */
static int level_delegated(oomkit_ctx *ctx, const char *rel, uid_t *ret_owner)
{
	const char *const names[] = {"", "cgroup.procs",
				     ctx->backend == OOMKIT_BACKEND_V2 ? "cgroup.threads" : "tasks"};
	char path[PATH_MAX + 16];
	struct stat st;

	for (unsigned i = 0; i < 3; i++) {
		int r = i == 0 ? snprintf(path, sizeof(path), "%s", oomkit__at(rel))
			       : snprintf(path, sizeof(path), "%s/%s", oomkit__at(rel), names[i]);
		if (r < 0 || (size_t)r >= sizeof(path))
			return -ENAMETOOLONG;
		if (fstatat(ctx->memory_root_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (i == 2 && errno == ENOENT)
				continue;
			return -errno;
		}
		if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
			*ret_owner = st.st_uid;
			return 1;
		}
	}
	return 0;
}

OOMKIT__EXPORT int oomkit_cgroup_delegated(oomkit_ctx *ctx, const char *cgroup, const char *below,
					   uid_t *ret_owner)
{
	char rel[PATH_MAX], top[PATH_MAX];
	int r;

	if (!ctx || !cgroup || !below || !ret_owner)
		return -EINVAL;
	if ((r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel))) < 0 ||
	    (r = oomkit__cgroup_relpath(below, ctx->memory_root, top, sizeof(top))) < 0)
		return r;
	size_t n = strlen(top), len = strlen(rel);
	if (n && (strncmp(rel, top, n) != 0 || (rel[n] != '/' && rel[n] != '\0')))
		return -EINVAL;
	/* From the top down: the first cgroup a user may write ends the walk,
	 * so what it costs is the depth root made, not what a user nests. */
	for (size_t i = n ? n + 1 : 0; i <= len && len > n; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		char c = rel[i];
		rel[i] = '\0';
		r = level_delegated(ctx, rel, ret_owner);
		rel[i] = c;
		if (r != 0)
			return r;
	}
	return 0;
}

OOMKIT__EXPORT int oomkit_cgroup_xattr(oomkit_ctx *ctx, const char *cgroup, const char *name, char *buf,
				       size_t len, uid_t *ret_owner)
{
	char rel[OOMKIT__PATH_MAX];
	struct stat st;
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!name || !buf || !ret_owner)
		return -EINVAL;
	int fd = openat(ctx->memory_root_fd, oomkit__at(rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = fgetxattr(fd, name, buf, len);
	r = n < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r == -ENOTSUP ? -EOPNOTSUPP : r;
	*ret_owner = st.st_uid;
	return (int)n;
}

/* --------------------------------------------------------- children */

struct children_walk {
	int (*fn)(const char *name, void *userdata);
	void *userdata;
};

static int call_child(int dirfd, const char *name, void *userdata)
{
	(void)dirfd;
	struct children_walk *cw = userdata;
	return cw->fn(name, cw->userdata);
}

OOMKIT__EXPORT int oomkit_cgroup_children(oomkit_ctx *ctx, const char *cgroup,
					  int (*fn)(const char *name, void *userdata), void *userdata)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!fn)
		return -EINVAL;
	int fd = oomkit__cgroup_open(ctx, rel);
	if (fd < 0)
		return fd;
	struct children_walk cw = {fn, userdata};
	r = oomkit__for_each_subdir(fd, call_child, &cw);
	close(fd);
	return r;
}

/* v2 gives a child the memory controller only if its parent lists it in
 * cgroup.subtree_control. */
static int v2_enable_memory(oomkit_ctx *ctx, char *rel)
{
	char *slash = strrchr(rel, '/');
	char saved = 0;
	if (slash) {
		saved = *slash;
		*slash = 0;
	}
	int r = oomkit__cg_write(ctx, slash ? rel : "", "cgroup.subtree_control", "+memory");
	if (slash)
		*slash = saved;
	return r;
}

/* ----------------------------------------------------------- writers */

/* The limits callback, for a public writer's cgroup argument. */
static void told(oomkit_ctx *ctx, const char *cgroup, int fd)
{
	char rel[OOMKIT__PATH_MAX];
	if (ctx->limits && relpath(ctx, cgroup, rel, sizeof(rel)) >= 0)
		oomkit__limits_changed(ctx, rel, fd);
}

OOMKIT__EXPORT int oomkit_set_limit(oomkit_ctx *ctx, const char *cgroup, uint64_t limit_bytes)
{
	int fd = open_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = ctx->backend == OOMKIT_BACKEND_V2 ? oomkit__v2_set_limit(fd, limit_bytes)
						  : oomkit__v1_set_limit(fd, limit_bytes);
	if (r >= 0)
		told(ctx, cgroup, fd);
	close(fd);
	return r;
}

/* memory.low and memory.reclaim exist on cgroup v2 only. */
static int open_v2_arg(oomkit_ctx *ctx, const char *cgroup)
{
	if (ctx && ctx->backend != OOMKIT_BACKEND_V2)
		return -EOPNOTSUPP;
	return open_arg(ctx, cgroup);
}

OOMKIT__EXPORT int oomkit_cgroup_protection(oomkit_ctx *ctx, const char *cgroup, uint64_t *ret_low_bytes)
{
	uint64_t v;
	int fd = open_v2_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = oomkit__read_u64_at(fd, "memory.low", &v);
	close(fd);
	if (r == -ENOENT)
		return -EOPNOTSUPP; /* the root has no memory.low */
	if (r >= 0 && ret_low_bytes)
		*ret_low_bytes = v;
	return r < 0 ? r : 0;
}

/* A size as cgroup v2 takes it: bytes, or "max". */
static int write_size_at(int dirfd, const char *file, uint64_t v)
{
	char buf[32] = "max";
	size_t n = 0;
	if (v != OOMKIT_UNLIMITED)
		(void)oomkit__append_u64(buf, sizeof(buf), &n, v);
	return oomkit__write_file_at(dirfd, file, buf);
}

OOMKIT__EXPORT int oomkit_set_protection(oomkit_ctx *ctx, const char *cgroup, uint64_t low_bytes)
{
	int fd = open_v2_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = write_size_at(fd, "memory.low", low_bytes);
	close(fd);
	return r == -ENOENT ? -EOPNOTSUPP : r;
}

OOMKIT__EXPORT int oomkit_cgroup_reclaim(oomkit_ctx *ctx, const char *cgroup, uint64_t want_bytes)
{
	if (want_bytes == 0 || want_bytes == OOMKIT_UNLIMITED)
		return -EINVAL;
	int fd = open_v2_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = write_size_at(fd, "memory.reclaim", want_bytes);
	close(fd);
	return r == -ENOENT ? -EOPNOTSUPP : r;
}

OOMKIT__EXPORT int oomkit_set_kernel_killer(oomkit_ctx *ctx, const char *cgroup, bool enabled)
{
	int fd = open_arg(ctx, cgroup);
	if (fd < 0)
		return fd;
	int r = oomkit__hold_at(ctx, fd, !enabled);
	if (r >= 0)
		told(ctx, cgroup, fd);
	close(fd);
	return r;
}

OOMKIT__EXPORT int oomkit_cgroup_create(oomkit_ctx *ctx, const char *cgroup, uint64_t limit_bytes)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0])
		return -EINVAL;
	int created = 0;
	/* mkdir -p: each missing ancestor, then the cgroup itself. */
	for (char *p = rel;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char saved = *p;
		*p = 0;
		if (ctx->backend == OOMKIT_BACKEND_V2 && (r = v2_enable_memory(ctx, rel)) < 0)
			return r;
		if (mkdirat(ctx->memory_root_fd, rel, 0755) == 0)
			created = 1;
		else if (errno != EEXIST)
			return -errno;
		*p = saved;
		if (!saved)
			break;
	}
	if (limit_bytes && limit_bytes != OOMKIT_UNLIMITED) {
		r = oomkit_set_limit(ctx, rel, limit_bytes);
		if (r < 0)
			return r;
	}
	return created;
}

OOMKIT__EXPORT int oomkit_cgroup_attach(oomkit_ctx *ctx, const char *cgroup, pid_t pid)
{
	char rel[OOMKIT__PATH_MAX], v[24];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	snprintf(v, sizeof(v), "%d", (int)pid);
	return oomkit__cg_write(ctx, rel, "cgroup.procs", v);
}

OOMKIT__EXPORT int oomkit_cgroup_procs_fd(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX], path[OOMKIT__PATH_MAX + 64];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0 || (r = file_path(rel, "cgroup.procs", path, sizeof(path))) < 0)
		return r;
	int fd = openat(ctx->memory_root_fd, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

OOMKIT__EXPORT int oomkit_cgroup_remove(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0])
		return -EINVAL;
	if (unlinkat(ctx->memory_root_fd, rel, AT_REMOVEDIR) < 0)
		return -errno;
	return 0;
}
