/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup-v1.c - the cgroup v1 memory controller: memory.oom_control,
 * memory.usage_in_bytes thresholds and memory.pressure_level eventfds
 * registered through cgroup.event_control, limits, cgroup.procs, and the
 * cgroup directory tree itself.
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
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Deepest cgroup tree oomkit walks; a deeper one gives -ELOOP. */
#define WALK_MAX_DEPTH 32
/* The v1 "no limit" value is PAGE_COUNTER_MAX pages; anything this large means unlimited. */
#define V1_UNLIMITED_MIN 0x7FFFFFFFFFFF0000ull

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The root is "" internally; openat() wants ".". */
static const char *at_path(const char *rel)
{
	return rel[0] ? rel : ".";
}

int oomkit__cgroup_open(oomkit_ctx *ctx, const char *rel)
{
	int fd = openat(ctx->memory_root_fd, at_path(rel), O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Resolves a caller's cgroup argument into ctx->pathbuf-independent storage. */
static int relpath(oomkit_ctx *ctx, const char *cgroup, char *out, size_t len)
{
	if (!cgroup)
		return -EINVAL;
	return oomkit__cgroup_relpath(cgroup, ctx->memory_root, out, len);
}

/* Reads file `name` of cgroup rel into buf. */
static int read_cg(oomkit_ctx *ctx, const char *rel, const char *name, char *buf, size_t len)
{
	char path[OOMKIT__PATH_MAX + 64];
	int n = snprintf(path, sizeof(path), "%s/%s", at_path(rel), name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return oomkit__read_file_at(ctx->memory_root_fd, path, buf, len);
}

static int write_cg(oomkit_ctx *ctx, const char *rel, const char *name, const char *value)
{
	char path[OOMKIT__PATH_MAX + 64];
	int n = snprintf(path, sizeof(path), "%s/%s", at_path(rel), name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return oomkit__write_file_at(ctx->memory_root_fd, path, value);
}

static int read_u64_cg(oomkit_ctx *ctx, const char *rel, const char *name, uint64_t *ret)
{
	char buf[64];
	int n = read_cg(ctx, rel, name, buf, sizeof(buf));
	if (n < 0)
		return n;
	return oomkit__parse_u64(buf, (size_t)n, ret);
}

/* ------------------------------------------------------------ events */

static const char *control_file(const struct oomkit_watch *w)
{
	switch (w->kind) {
	case OOMKIT_EVENT_OOM:
		return "memory.oom_control";
	case OOMKIT_EVENT_THRESHOLD:
		return "memory.usage_in_bytes";
	case OOMKIT_EVENT_PRESSURE:
		return "memory.pressure_level";
	default:
		return NULL;
	}
}

/* The argument after "<efd> <cfd>" in cgroup.event_control. */
static void control_arg(const struct oomkit_watch *w, char *buf, size_t len)
{
	if (w->kind == OOMKIT_EVENT_THRESHOLD)
		snprintf(buf, len, " %llu", (unsigned long long)w->threshold_bytes);
	else if (w->kind == OOMKIT_EVENT_PRESSURE)
		/* "hierarchy": pressure anywhere below counts, even when a
		 * descendant has a listener of its own. */
		snprintf(buf, len, " %s,hierarchy", oomkit_pressure_level_name(w->level));
	else
		buf[0] = 0;
}

int oomkit__v1_register(oomkit_ctx *ctx, struct oomkit_watch *w)
{
	const char *file = control_file(w);
	char line[128], arg[64];
	int r, efd = -1, cfd = -1;

	(void)ctx;
	if (!file)
		return -EINVAL;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	cfd = openat(w->dirfd, file, O_RDONLY | O_CLOEXEC);
	if (cfd < 0) {
		r = -errno;
		goto fail;
	}
	control_arg(w, arg, sizeof(arg));
	snprintf(line, sizeof(line), "%d %d%s", efd, cfd, arg);
	r = oomkit__write_file_at(w->dirfd, "cgroup.event_control", line);
	if (r < 0)
		goto fail;
	w->efd = efd;
	/* The kernel keeps its own reference to the eventfd; the control file
	 * is only needed afterwards to read oom_control cheaply. */
	if (w->kind == OOMKIT_EVENT_OOM)
		w->oomfd = cfd;
	else
		close(cfd);
	return 0;
fail:
	if (cfd >= 0)
		close(cfd);
	close(efd);
	return r;
}

int oomkit__v1_oom_control(oomkit_ctx *ctx, const char *rel, int fd, struct oomkit__oom_control *ret)
{
	char buf[256];
	int n = fd >= 0 ? oomkit__pread_all(fd, buf, sizeof(buf)) : read_cg(ctx, rel, "memory.oom_control", buf, sizeof(buf));
	if (n < 0)
		return n;
	return oomkit__parse_oom_control(buf, (size_t)n, ret);
}

int oomkit__v1_oom_origin(oomkit_ctx *ctx, const char *rel, char *out, size_t out_len)
{
	char cur[OOMKIT__PATH_MAX];
	size_t len = strlen(rel);

	if (len >= sizeof(cur) || len >= out_len)
		return -ENAMETOOLONG;
	memcpy(cur, rel, len + 1);
	memcpy(out, rel, len + 1);
	/* An OOM marks the memcg that hit its limit and every descendant
	 * under_oom, so the origin is the highest marked ancestor.  The root
	 * has no limit of its own and is never the origin of a memcg OOM. */
	for (;;) {
		char *slash = strrchr(cur, '/');
		if (!slash)
			break;
		*slash = 0;
		struct oomkit__oom_control oc;
		if (oomkit__v1_oom_control(ctx, cur, -1, &oc) < 0 || !oc.under_oom)
			break;
		memcpy(out, cur, strlen(cur) + 1);
	}
	return 0;
}

/* ---------------------------------------------------- public readers */

static uint64_t v1_limit(uint64_t v)
{
	return v >= V1_UNLIMITED_MIN ? OOMKIT_UNLIMITED : v;
}

OOMKIT__EXPORT int oomkit_cgroup_memory(oomkit_ctx *ctx, const char *cgroup, struct oomkit_cgroup_memory *ret_mem)
{
	char rel[OOMKIT__PATH_MAX];
	struct oomkit_cgroup_memory m = {0};
	struct oomkit__oom_control oc;
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if ((r = read_u64_cg(ctx, rel, "memory.usage_in_bytes", &m.usage_bytes)) < 0 ||
	    (r = read_u64_cg(ctx, rel, "memory.limit_in_bytes", &m.limit_bytes)) < 0 ||
	    (r = read_u64_cg(ctx, rel, "memory.max_usage_in_bytes", &m.max_usage_bytes)) < 0 ||
	    (r = read_u64_cg(ctx, rel, "memory.failcnt", &m.failcnt)) < 0 ||
	    (r = oomkit__v1_oom_control(ctx, rel, -1, &oc)) < 0)
		return r == -ENOENT ? -ENOENT : r;
	m.limit_bytes = v1_limit(m.limit_bytes);
	m.under_oom = oc.under_oom;
	m.oom_kill_disable = oc.oom_kill_disable;
	m.oom_kill = oc.oom_kill;
	*ret_mem = m;
	return 0;
}

OOMKIT__EXPORT int oomkit_cgroup_stat(oomkit_ctx *ctx, const char *cgroup, const char *key, uint64_t *ret_value)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!key)
		return -EINVAL;
	r = read_cg(ctx, rel, "memory.stat", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
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
	if (faccessat(ctx->memory_root_fd, at_path(rel), F_OK, 0) == 0)
		return 1;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

/* --------------------------------------------------------- tree walk */

typedef int (*dir_fn)(oomkit_ctx *ctx, int dirfd, const char *name, void *userdata);

/* Calls fn for every subdirectory of dirfd.  The getdents buffer is on the
 * stack, which the reserve prefaults, so nothing allocates. */
static int for_each_subdir(oomkit_ctx *ctx, int dirfd, dir_fn fn, void *userdata)
{
	char buf[2048] __attribute__((aligned(8)));
	int count = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0) {
			count = -errno;
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			int r = fn(ctx, dirfd, de->d_name, userdata);
			if (r != 0) {
				close(fd);
				return r;
			}
			count++;
		}
	}
	close(fd);
	return count;
}

struct pids_walk {
	pid_t *pids;
	size_t n;
	size_t count;
	int depth;
};

static int collect_pids(oomkit_ctx *ctx, int dirfd, struct pids_walk *pw);

static int collect_child(oomkit_ctx *ctx, int dirfd, const char *name, void *userdata)
{
	struct pids_walk *pw = userdata;
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		/* A child removed while we walk is simply no longer there. */
		return errno == ENOENT ? 0 : -errno;
	if (pw->depth >= WALK_MAX_DEPTH) {
		close(fd);
		return -ELOOP;
	}
	pw->depth++;
	int r = collect_pids(ctx, fd, pw);
	pw->depth--;
	close(fd);
	return r == -ENOENT ? 0 : (r < 0 ? r : 0);
}

static int collect_pids(oomkit_ctx *ctx, int dirfd, struct pids_walk *pw)
{
	int n = oomkit__read_file_at(dirfd, "cgroup.procs", ctx->iobuf, OOMKIT__IOBUF_SIZE);
	if (n < 0)
		return n;
	int r = oomkit__parse_pids(ctx->iobuf, (size_t)n, pw->pids + pw->count, pw->n - pw->count);
	if (r < 0)
		return r;
	pw->count += (size_t)r;
	if (pw->depth < 0)
		return 0;
	r = for_each_subdir(ctx, dirfd, collect_child, pw);
	return r < 0 ? r : 0;
}

OOMKIT__EXPORT int oomkit_cgroup_pids(oomkit_ctx *ctx, const char *cgroup, bool recursive, pid_t *pids, size_t n)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!pids && n)
		return -EINVAL;
	int fd = oomkit__cgroup_open(ctx, rel);
	if (fd < 0)
		return fd;
	struct pids_walk pw = {.pids = pids, .n = n, .depth = recursive ? 0 : -1};
	r = collect_pids(ctx, fd, &pw);
	close(fd);
	if (r < 0)
		return r;
	return pw.count > INT32_MAX ? -EOVERFLOW : (int)pw.count;
}

struct children_walk {
	int (*fn)(const char *name, void *userdata);
	void *userdata;
};

static int call_child(oomkit_ctx *ctx, int dirfd, const char *name, void *userdata)
{
	(void)ctx;
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
	r = for_each_subdir(ctx, fd, call_child, &cw);
	close(fd);
	return r;
}

/* ----------------------------------------------------------- writers */

OOMKIT__EXPORT int oomkit_set_limit(oomkit_ctx *ctx, const char *cgroup, uint64_t limit_bytes)
{
	char rel[OOMKIT__PATH_MAX], v[32];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (limit_bytes == OOMKIT_UNLIMITED)
		snprintf(v, sizeof(v), "-1");
	else
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit_bytes);
	return write_cg(ctx, rel, "memory.limit_in_bytes", v);
}

OOMKIT__EXPORT int oomkit_set_kernel_killer(oomkit_ctx *ctx, const char *cgroup, bool enabled)
{
	char rel[OOMKIT__PATH_MAX];
	int r = relpath(ctx, cgroup, rel, sizeof(rel));
	if (r < 0)
		return r;
	return write_cg(ctx, rel, "memory.oom_control", enabled ? "0" : "1");
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
	return write_cg(ctx, rel, "cgroup.procs", v);
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
