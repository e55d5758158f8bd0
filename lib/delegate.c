/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * delegate.c - handing a memcg to an unprivileged owner (cgroupfs ownership).
 *
 * The reference design lets system software chown a job's memcg "so that
 * memcg control fields are configurable (except for the limit or reserve, of
 * course)": the owner may create child memcgs, move its processes and run its
 * own OOM handler inside, but never raise what it was given.
 *
 * What is given comes from an allow-list of files that are safe to hand over
 * (the backend's, in cgroup-v1.c and cgroup-v2.c), never from a deny-list:
 * a kernel adds control files (memory.shown_ram_in_bytes, memory.zswap.max,
 * ...) that a deny-list cannot know, and each of them would be the owner's.
 * The job's own directory is the owner's, so the cgroups it creates below are
 * wholly its own (the kernel gives a new cgroup's files to the owner of its
 * parent); the job's own limits, its kernel OOM killer switch (the handler's
 * hold: memory.oom_control on v1, memory.high on v2) and every counter stay
 * root's.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

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
	int given = 0;
	if (fchown(dfd, uid, gid) < 0)
		given = -errno;
	for (const char *const *f = oomkit__delegated_files(ctx); given >= 0 && *f; f++) {
		if (fchownat(dfd, *f, uid, gid, AT_SYMLINK_NOFOLLOW) == 0)
			given++;
		/* Not every kernel has every file (cgroup.threads arrived in 4.14). */
		else if (errno != ENOENT)
			given = -errno;
	}
	close(dfd);
	return given;
}
