/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * delegate.c - handing a memcg to an unprivileged owner (cgroupfs ownership).
 *
 * The reference design lets system software chown a job's memcg "so that
 * memcg control fields are configurable (except for the limit or reserve, of
 * course)": the owner may create child memcgs, move its processes and run its
 * own OOM handler inside, but never raise what it was given.  Every control
 * file whose name mentions a limit or a reserve stays with root.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Whether one of the dot-separated parts of name is part. */
static bool has_part(const char *name, const char *part)
{
	size_t n = strlen(part);
	for (const char *p = name; (p = strstr(p, part)); p += n)
		if ((p == name || p[-1] == '.') && (p[n] == 0 || p[n] == '.'))
			return true;
	return false;
}

/* Files the owner must not write.  v1: every *limit_in_bytes, any reserve.
 * v2 names its limits and protections memory.max, memory.high, memory.low,
 * memory.min, memory.swap.max, pids.max, cgroup.max.depth...: a part "max",
 * "high", "low" or "min" is a limit or a reserve there. */
static bool kept_by_root(const char *name)
{
	return strstr(name, "limit") != NULL || strstr(name, "reserve") != NULL || has_part(name, "max") ||
	       has_part(name, "high") || has_part(name, "low") || has_part(name, "min");
}

OOMKIT__EXPORT int oomkit_cgroup_delegate(oomkit_ctx *ctx, const char *cgroup, uid_t uid, gid_t gid)
{
	char rel[OOMKIT__PATH_MAX];
	int r = oomkit__cgroup_relpath(cgroup ? cgroup : "", ctx->memory_root, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0])
		return -EINVAL;
	int dfd = openat(ctx->memory_root_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return -errno;
	if (fchown(dfd, uid, gid) < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	DIR *dir = fdopendir(dfd);
	if (!dir) {
		r = -errno;
		close(dfd);
		return r;
	}
	int given = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (de->d_type != DT_REG || kept_by_root(de->d_name))
			continue;
		if (fchownat(dirfd(dir), de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		given++;
	}
	closedir(dir);
	return r < 0 ? r : given;
}
