/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * freeze.c - holding a cgroup's processes still and letting them go: cgroup
 * v2's cgroup.freeze and cgroup.events ("frozen"), and on v1 the freezer
 * controller's freezer.state, in a freezer cgroup of the library's own that
 * mirrors the memcg's path ("oomkit-freeze/<memcg path>").
 *
 * On v1 the memory and freezer hierarchies are separate: a memcg's tasks are
 * moved into the mirror, which is frozen before the first arrives, so every
 * task is frozen on arrival and every child a task not yet moved forks is
 * listed by the next round.  Only tasks at the freezer hierarchy's root are
 * moved: a task another manager put in a freezer cgroup of its own stays
 * there.  Thawing moves them back to the root and removes the mirror.
 *
 * Nothing here allocates: paths are built on the stack, pids are listed by
 * the walk of walk.c.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mirrors' parent, below the freezer hierarchy's root. */
#define MIRROR_TOP "oomkit-freeze"
/* Rounds of moving a memcg's tasks into the mirror until a whole round
 * finds every task there (a fork storm is bounded by it). */
#define MOVE_ROUNDS 32

static int freezer_rel(oomkit_ctx *ctx, const char *cgroup, char *rel, size_t len)
{
	if (!ctx || !cgroup)
		return -EINVAL;
	int r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, len);
	if (r < 0)
		return r;
	/* The root itself is never frozen: it holds every process. */
	return rel[0] ? 0 : -EINVAL;
}

/* ----------------------------------------------------------------- v2 */

static int v2_freeze(oomkit_ctx *ctx, const char *rel, bool frozen)
{
	int r = oomkit__cg_write(ctx, rel, "cgroup.freeze", frozen ? "1" : "0");
	/* A cgroup removed meanwhile holds nothing frozen. */
	return r == -ENOENT && !frozen ? 0 : r;
}

static int v2_frozen(oomkit_ctx *ctx, const char *rel)
{
	char buf[256];
	int r = oomkit__cg_read(ctx, rel, "cgroup.events", buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	const char *f = strstr(buf, "frozen ");
	return f && (f == buf || f[-1] == '\n') && f[7] == '1';
}

/* ----------------------------------------------------------------- v1 */

struct mirror {
	oomkit_ctx *ctx;
	int rootfd;					  /* the freezer hierarchy's root */
	int fd;						  /* the mirror, or -1 */
	char path[OOMKIT__PATH_MAX + sizeof(MIRROR_TOP)]; /* "oomkit-freeze/<rel>" */
	int moved;
};

static int mirror_open(oomkit_ctx *ctx, const char *rel, struct mirror *m)
{
	size_t n = 0;

	m->ctx = ctx;
	m->fd = -1;
	m->moved = 0;
	m->path[0] = 0;
	if (!ctx->freezer_root[0])
		return -EOPNOTSUPP;
	int r = oomkit__append(m->path, sizeof(m->path), &n, MIRROR_TOP "/");
	if (r == 0)
		r = oomkit__append(m->path, sizeof(m->path), &n, rel);
	if (r < 0)
		return r;
	m->rootfd = open(ctx->freezer_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return m->rootfd < 0 ? -errno : 0;
}

static void mirror_close(struct mirror *m)
{
	if (m->fd >= 0)
		close(m->fd);
	close(m->rootfd);
}

/* Makes the mirror and its parents (each component in turn, on the stack). */
static int mirror_make(struct mirror *m)
{
	char part[sizeof(m->path)];

	memcpy(part, m->path, sizeof(part));
	for (char *s = part;; s++) {
		bool end = *s == 0;
		if (*s != '/' && !end)
			continue;
		*s = 0;
		if (mkdirat(m->rootfd, part, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (end)
			break;
		*s = '/';
	}
	m->fd = openat(m->rootfd, m->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return m->fd < 0 ? -errno : 0;
}

/* Removes the mirror and those of its parents it leaves empty. */
static void mirror_remove(struct mirror *m)
{
	char part[sizeof(m->path)];

	memcpy(part, m->path, sizeof(part));
	for (;;) {
		if (unlinkat(m->rootfd, part, AT_REMOVEDIR) < 0 && errno != ENOENT)
			return;
		char *slash = strrchr(part, '/');
		if (!slash)
			return;
		*slash = 0;
	}
}

/* Moves a task at the freezer root into the mirror; one elsewhere (another
 * manager's freezer cgroup) is left where it is. */
static int move_in(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct mirror *m = userdata;
	char where[OOMKIT__PATH_MAX + sizeof(MIRROR_TOP) + 2], v[16];

	int r = oomkit__proc_cgroup(ctx, e->pid, "freezer", where, sizeof(where));
	/* The path comes without its leading '/': "" is the root. */
	if (r < 0 || where[0])
		return 0;
	snprintf(v, sizeof(v), "%d", (int)e->pid);
	r = oomkit__write_file_at(m->fd, "cgroup.procs", v);
	if (r == 0)
		m->moved++;
	return 0;
}

static int v1_freeze(oomkit_ctx *ctx, const char *rel)
{
	struct mirror m;
	int r = mirror_open(ctx, rel, &m), total = 0;

	if (r < 0)
		return r;
	r = mirror_make(&m);
	if (r == 0)
		r = oomkit__write_file_at(m.fd, "freezer.state", "FROZEN");
	for (int round = 0; r == 0 && round < MOVE_ROUNDS; round++) {
		m.moved = 0;
		r = oomkit_cgroup_walk_pids(ctx, rel, OOMKIT_WALK_RECURSIVE, move_in, &m);
		r = r < 0 ? r : 0;
		total += m.moved;
		if (m.moved == 0)
			break;
	}
	mirror_close(&m);
	return r < 0 ? r : total;
}

static int move_out(pid_t pid, void *userdata)
{
	struct mirror *m = userdata;
	char v[16];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (oomkit__write_file_at(m->rootfd, "cgroup.procs", v) == 0)
		m->moved++;
	return 0;
}

static int v1_thaw(oomkit_ctx *ctx, const char *rel)
{
	struct mirror m;
	int r = mirror_open(ctx, rel, &m);

	if (r < 0)
		return r;
	m.fd = openat(m.rootfd, m.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (m.fd < 0) {
		r = errno == ENOENT ? 0 : -errno;
		mirror_close(&m);
		return r;
	}
	/* Thawed first: a task moved out of a frozen cgroup thaws too, but one
	 * whose move failed must not stay frozen. */
	r = oomkit__write_file_at(m.fd, "freezer.state", "THAWED");
	if (r == 0)
		r = oomkit__procs_each(m.fd, move_out, &m);
	if (r == 0)
		mirror_remove(&m);
	mirror_close(&m);
	return r < 0 ? r : m.moved;
}

static int v1_frozen(oomkit_ctx *ctx, const char *rel)
{
	struct mirror m;
	char state[32];
	int r = mirror_open(ctx, rel, &m);

	if (r < 0)
		return r;
	m.fd = openat(m.rootfd, m.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (m.fd < 0)
		r = errno == ENOENT ? 0 : -errno;
	else {
		r = oomkit__read_file_at(m.fd, "freezer.state", state, sizeof(state));
		r = r < 0 ? r : strncmp(state, "FROZEN", 6) == 0;
	}
	mirror_close(&m);
	return r;
}

/* ------------------------------------------------------------- public */

OOMKIT__EXPORT int oomkit_cgroup_freeze(oomkit_ctx *ctx, const char *cgroup, bool frozen)
{
	char rel[OOMKIT__PATH_MAX];
	int r = freezer_rel(ctx, cgroup, rel, sizeof(rel));

	if (r < 0)
		return r;
	if (ctx->backend == OOMKIT_BACKEND_V2)
		return v2_freeze(ctx, rel, frozen);
	return frozen ? v1_freeze(ctx, rel) : v1_thaw(ctx, rel);
}

OOMKIT__EXPORT int oomkit_cgroup_frozen(oomkit_ctx *ctx, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r = freezer_rel(ctx, cgroup, rel, sizeof(rel));

	if (r < 0)
		return r;
	return ctx->backend == OOMKIT_BACKEND_V2 ? v2_frozen(ctx, rel) : v1_frozen(ctx, rel);
}
