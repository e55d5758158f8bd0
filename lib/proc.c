/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - the /proc readers: /proc/PID/stat, status, oom_score_adj, cmdline,
 * exe and cgroup.  Everything is read relative to the context's proc_fd (so tests
 * point it at fixture trees) into the context's buffers, and parsed by
 * parse.c: nothing here allocates.
 *
 * A process can exit at any moment between two reads.  The kernel then
 * answers ENOENT (the /proc/PID directory is gone) or ESRCH (a file opened
 * before the exit); both become -ESRCH, the library's "it is gone".
 *
 * A process is alive while any of its threads is.  When the thread-group
 * leader has exited (pthread_exit()) and other threads run on, the leader
 * is a zombie: cgroup.procs still lists its pid, but /proc/PID/cgroup shows
 * the root, /proc/PID/status has no memory lines and /proc/PID/cmdline and
 * exe are empty, as if the process held nothing and were in no job.  Its
 * memory, cgroup, command line and executable are read from a live thread,
 * /proc/PID/task/TID, as the kernel's own OOM killer looks for a live thread
 * with an mm; its identity (pid, start time, name, session) stays the
 * leader's, which is what a pidfd on the pid refers to.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int gone_to_esrch(int r)
{
	return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

int oomkit__proc_open(oomkit_ctx *ctx, pid_t pid)
{
	char name[16];
	int fd;

	if (pid <= 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "%d", (int)pid);
	fd = openat(ctx->proc_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? gone_to_esrch(-errno) : fd;
}

/* Reads dirfd/name whole into ctx->iobuf. */
static int read_proc_file(oomkit_ctx *ctx, int dirfd, const char *name)
{
	return gone_to_esrch(oomkit__read_file_at(dirfd, name, ctx->iobuf, OOMKIT__IOBUF_SIZE));
}

/* Reads at most max bytes of dirfd/name into ctx->iobuf: a command line may
 * be far longer than anything worth keeping, so the rest is not read at all. */
static int read_proc_head(oomkit_ctx *ctx, int dirfd, const char *name, size_t max)
{
	size_t n = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return gone_to_esrch(-errno);
	if (max > OOMKIT__IOBUF_SIZE - 1)
		max = OOMKIT__IOBUF_SIZE - 1;
	while (n < max) {
		ssize_t k = read(fd, ctx->iobuf + n, max - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = -errno;
			close(fd);
			return gone_to_esrch(r);
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	ctx->iobuf[n] = '\0';
	return (int)n;
}

static int stat_at(oomkit_ctx *ctx, int dirfd, struct oomkit__proc_stat *ret)
{
	int n = read_proc_file(ctx, dirfd, "stat");
	if (n < 0)
		return n;
	return oomkit__parse_proc_stat(ctx->iobuf, (size_t)n, ret);
}

int oomkit__proc_stat(oomkit_ctx *ctx, pid_t pid, struct oomkit__proc_stat *ret)
{
	int r, fd = oomkit__proc_open(ctx, pid);
	if (fd < 0)
		return fd;
	r = stat_at(ctx, fd, ret);
	close(fd);
	return r;
}

static bool dead_state(char state)
{
	return state == 'Z' || state == 'X';
}

struct proc_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The first thread of the process at dirfd that has not exited, opened
 * (O_PATH) with its stat in *ret; -ESRCH if every thread has.  The entries
 * are read with getdents64 into a buffer on the stack: nothing allocates. */
static int live_thread_at(oomkit_ctx *ctx, int dirfd, struct oomkit__proc_stat *ret)
{
	char buf[2048] __attribute__((aligned(8)));
	int tasks = openat(dirfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (tasks < 0)
		return gone_to_esrch(-errno);
	for (;;) {
		long n = syscall(SYS_getdents64, tasks, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			const struct proc_dirent64 *de = (const struct proc_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			int fd = openat(tasks, de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				continue; /* exited meanwhile */
			if (stat_at(ctx, fd, ret) == 0 && !dead_state(ret->state)) {
				close(tasks);
				return fd;
			}
			close(fd);
		}
	}
	close(tasks);
	return -ESRCH;
}

int oomkit__proc_open_live(oomkit_ctx *ctx, pid_t pid, struct oomkit__proc_stat *ret_leader,
			   struct oomkit__proc_stat *ret_live)
{
	struct oomkit__proc_stat leader, live;
	int r, fd = oomkit__proc_open(ctx, pid);

	if (fd < 0)
		return fd;
	if ((r = stat_at(ctx, fd, &leader)) < 0) {
		close(fd);
		return r;
	}
	live = leader;
	if (dead_state(leader.state)) {
		/* A leader that exited before its threads: read a live one.
		 * None left: the process is a zombie, read as it is. */
		int t = live_thread_at(ctx, fd, &live);
		if (t >= 0) {
			close(fd);
			fd = t;
		} else {
			live = leader;
		}
	}
	if (ret_leader)
		*ret_leader = leader;
	if (ret_live)
		*ret_live = live;
	return fd;
}

/* oom_score_adj is one signed number in [-1000, 1000]. */
static int oom_score_adj_at(oomkit_ctx *ctx, int dirfd, int *ret)
{
	char *end;
	long v;
	int n = read_proc_file(ctx, dirfd, "oom_score_adj");

	if (n < 0)
		return n;
	errno = 0;
	v = strtol(ctx->iobuf, &end, 10);
	if (errno || end == ctx->iobuf || (*end && *end != '\n') || v < -1000 || v > 1000)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

/* The fields added since 0.1 took reserved space: the struct keeps its size. */
_Static_assert(sizeof(struct oomkit_process) == 400, "struct oomkit_process changed size");

/* Reads the process from dirfd, the directory of a live thread of it
 * (oomkit__proc_open_live()), with st its leader's stat. */
static int info_at(oomkit_ctx *ctx, int dirfd, const struct oomkit__proc_stat *st, struct oomkit_process *p)
{
	struct oomkit__proc_status status;
	int n, r;

	if ((n = read_proc_file(ctx, dirfd, "status")) < 0)
		return n;
	if ((r = oomkit__parse_proc_status(ctx->iobuf, (size_t)n, &status)) < 0 ||
	    (r = oomkit__parse_proc_sigcgt(ctx->iobuf, (size_t)n, &p->sig_caught)) < 0)
		return r;
	if ((r = oom_score_adj_at(ctx, dirfd, &p->oom_score_adj)) < 0)
		return r;
	/* The command line lives in the process's own memory: reading it may
	 * need a page charged to a memcg that is out of memory, and fail with
	 * ENOMEM.  Identity and memory are what matter then; it stays empty. */
	n = read_proc_head(ctx, dirfd, "cmdline", sizeof(p->cmdline));
	if (n == -ESRCH)
		return n;
	oomkit__format_cmdline(ctx->iobuf, n > 0 ? (size_t)n : 0, p->cmdline, sizeof(p->cmdline));
	p->pid = st->pid;
	p->ppid = st->ppid;
	p->start_time = st->start_time;
	memcpy(p->comm, st->comm, sizeof(p->comm));
	p->uid = status.uid;
	/* Kernel threads and zombies have no memory lines: they hold none. */
	p->rss_anon_kib = status.rss_anon_kib;
	p->rss_file_kib = status.rss_file_kib;
	p->rss_shmem_kib = status.rss_shmem_kib;
	p->swap_kib = status.swap_kib;
	p->pgid = st->pgid;
	p->sid = st->sid;
	p->tty_nr = st->tty_nr;
	return 0;
}

OOMKIT__EXPORT int oomkit_process_info(oomkit_ctx *ctx, pid_t pid, struct oomkit_process *ret_proc)
{
	struct oomkit_process p = {0};
	struct oomkit__proc_stat st;
	int r, fd;

	if (!ctx || !ret_proc)
		return -EINVAL;
	if ((fd = oomkit__proc_open_live(ctx, pid, &st, NULL)) < 0)
		return fd;
	r = info_at(ctx, fd, &st, &p);
	close(fd);
	if (r < 0)
		return r;
	*ret_proc = p;
	return 0;
}

OOMKIT__EXPORT int oomkit_process_cmdline(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len)
{
	int n, fd;

	if (!ctx || !buf || len == 0)
		return -EINVAL;
	if ((fd = oomkit__proc_open_live(ctx, pid, NULL, NULL)) < 0)
		return fd;
	n = read_proc_head(ctx, fd, "cmdline", len - 1);
	close(fd);
	if (n < 0)
		return n;
	oomkit__format_cmdline(ctx->iobuf, (size_t)n, buf, len);
	return (int)strlen(buf);
}

OOMKIT__EXPORT int oomkit_process_exe(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!ctx || !buf || len == 0 || pid <= 0)
		return -EINVAL;
	if ((fd = oomkit__proc_open_live(ctx, pid, NULL, NULL)) < 0)
		return fd;
	/* Into the context's buffer first: buf is written only on success. */
	n = readlinkat(fd, "exe", ctx->iobuf, OOMKIT__IOBUF_SIZE);
	int err = errno;
	close(fd);
	if (n < 0)
		return err == ESRCH ? -ESRCH : -err;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, ctx->iobuf, (size_t)n);
	buf[n] = '\0';
	return (int)n;
}

int oomkit__proc_cgroup(oomkit_ctx *ctx, pid_t pid, const char *controller, char *buf, size_t len)
{
	char path[OOMKIT__PATH_MAX];
	int n, fd;

	if (!buf || len == 0)
		return -EINVAL;
	if ((fd = oomkit__proc_open_live(ctx, pid, NULL, NULL)) < 0)
		return fd;
	n = read_proc_file(ctx, fd, "cgroup");
	close(fd);
	if (n < 0)
		return n;
	/* Parsed into a local buffer so that buf is written only on success. */
	n = oomkit__parse_proc_cgroup(ctx->iobuf, (size_t)n, controller, path, sizeof(path));
	if (n < 0)
		return n;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, path, (size_t)n + 1);
	return n;
}

OOMKIT__EXPORT int oomkit_process_cgroup(oomkit_ctx *ctx, pid_t pid, char *buf, size_t len)
{
	if (!ctx)
		return -EINVAL;
	return oomkit__proc_cgroup(ctx, pid, oomkit__proc_controller(ctx), buf, len);
}

static int in_at(oomkit_ctx *ctx, int dirfd, const char *rel)
{
	int n = read_proc_file(ctx, dirfd, "cgroup");

	if (n < 0)
		return n;
	return oomkit__parse_proc_cgroup_under(ctx->iobuf, (size_t)n, oomkit__proc_controller(ctx), rel);
}

/* Asked for every process of every snapshot and kill: the leader's record
 * answers in one read.  Only a process it places outside is looked at
 * again, since a leader that exited shows the root while its threads run on
 * where they are. */
int oomkit__process_in(oomkit_ctx *ctx, pid_t pid, const char *rel)
{
	struct oomkit__proc_stat leader;
	int r, fd = oomkit__proc_open(ctx, pid);

	if (fd < 0)
		return fd;
	r = in_at(ctx, fd, rel);
	close(fd);
	if (r != 0)
		return r;
	if ((fd = oomkit__proc_open_live(ctx, pid, &leader, NULL)) < 0)
		return fd;
	if (leader.state == 'Z' || leader.state == 'X')
		r = in_at(ctx, fd, rel);
	close(fd);
	return r;
}

OOMKIT__EXPORT int oomkit_process_in_cgroup(oomkit_ctx *ctx, pid_t pid, const char *cgroup)
{
	char rel[OOMKIT__PATH_MAX];
	int r;

	if (!ctx || !cgroup)
		return -EINVAL;
	if ((r = oomkit__cgroup_relpath(cgroup, ctx->memory_root, rel, sizeof(rel))) < 0)
		return r;
	return oomkit__process_in(ctx, pid, rel);
}
