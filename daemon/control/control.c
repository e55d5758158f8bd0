/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control.c - the control socket: a unix stream socket speaking the line
 * protocol of protocol.h (docs/protocol.md).  Who may do what is decided from
 * the peer's credentials: root may do everything; anyone may read status,
 * ps and reports when readonly_status is set; a job's owner may run
 * processes in that job and answer the questions about it.
 *
 * A client must not be able to make the daemon - an OOM handler living in a
 * small, mlocked memcg - run out of memory, stop serving root, or act on a
 * process other than the one asking:
 *  - every buffer is fixed (control.h); a reply is produced record by record
 *    as the client reads it, and nothing more is read from a client while
 *    its output is pending, so a client that sends and never reads stalls
 *    itself only;
 *  - a client that completes no request, or reads nothing of what it is
 *    owed, for CONTROL_IDLE_MS is dropped (a timer on the loop, armed only
 *    while such a client exists); a uid holds CONTROL_SLOTS_PER_UID slots at
 *    most, and CONTROL_ROOT_SLOTS are kept for root;
 *  - run moves the process that asks, proven alive and of the peer's uid at
 *    the time it is moved: the connecting process's pidfd (SO_PEERPIDFD,
 *    Linux 6.5), or, on older kernels, the sender of the request itself
 *    (SCM_CREDENTIALS, checked by the kernel when it was sent) opened as a
 *    pidfd;
 *  - the socket is made in a directory only root can write, reached without
 *    following a link, with its mode set before anyone can reach it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/clock.h"
#include "control/control.h"
#include "control/run-target.h"
#include "scope/sdbus.h"
#include "base/users.h"
#include "base/log.h"
#include "rules/access.h"
#include "rules/policy.h"
#include "common/protocol.h"
#include "base/runlock.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* The listening socket's index in the loop; clients are 0..CONTROL_MAX_CLIENTS-1. */
#define LISTEN_INDEX CONTROL_MAX_CLIENTS

static void on_event(void *data, uint32_t index, uint32_t events);
static void on_timer(void *data, uint64_t now);
static int send_prompts(void *data);
static bool has_prompt_client(void *data);
static void send_outcomes(void *data, const struct outcome *o);

void control_configure(struct control *ctl, const struct config *cfg)
{
	ctl->cfg = cfg;
}

static struct client *client_at(struct control *ctl, int i)
{
	return &ctl->clients[i];
}

/* ------------------------------------------------------------ the socket's directory */

/* Binds fd to name inside the checked directory: through /proc/self/fd, so
 * no component of the path is looked up again. */
static int bind_at(int fd, int dir_fd, const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir_fd, name);

	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/* Everyone may connect; each command checks the peer's credentials.  The
	 * mode is the socket inode's, set before the name exists. */
	if (fchmod(fd, 0666) < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/* The umask may have taken bits; no one else can write here, so the
	 * name is still this socket. */
	return fchmodat(dir_fd, name, 0666, 0) < 0 ? -errno : 0;
}

static int split_path(struct control *ctl, const char *path, char *dir, size_t dir_len)
{
	const char *slash = strrchr(path, '/');

	if (path[0] != '/' || !slash || !slash[1] || strlen(slash + 1) >= sizeof(ctl->name))
		return -EINVAL;
	snprintf(dir, dir_len, "%.*s", (int)(slash - path), path);
	snprintf(ctl->name, sizeof(ctl->name), "%s", slash + 1);
	return 0;
}

/* The socket, bound and listening: its fd or -errno. */
static int make_socket(struct control *ctl)
{
	char dir[CONFIG_SOCKET_MAX];
	struct stat st;
	int fd, r = 0, one = 1;

	if ((r = split_path(ctl, ctl->cfg->socket, dir, sizeof(dir))) < 0)
		return r;
	/* Checked as the lock files' directories are (runlock.h). */
	if ((ctl->dir_fd = runlock_open_dir(dir)) < 0)
		return ctl->dir_fd;
	/* A stale socket of an earlier run is replaced; anything else is not touched. */
	if (fstatat(ctl->dir_fd, ctl->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlinkat(ctl->dir_fd, ctl->name, 0);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Each request comes with its sender's credentials (the accepted sockets inherit it). */
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    (r = bind_at(fd, ctl->dir_fd, ctl->name)) < 0 || listen(fd, 16) < 0) {
		r = r < 0 ? r : -errno;
		close(fd);
		return r;
	}
	return fd;
}

int control_listen(struct control *ctl)
{
	int fd, r;

	ctl->listen_fd = ctl->dir_fd = -1;
	ctl->clients = calloc(CONTROL_MAX_CLIENTS, sizeof(*ctl->clients));
	if (!ctl->clients)
		return -ENOMEM;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		ctl->clients[i].fd = ctl->clients[i].pidfd = ctl->clients[i].reply.fd =
		    ctl->clients[i].run_pidfd = -1;
	ctl->ready = true;
	ctl->no_peer_pidfd = getenv("OOMKIT_TEST_NO_PEERPIDFD") != NULL;
	if ((fd = make_socket(ctl)) < 0)
		return fd;
	ctl->timer = (struct loop_timer){.fn = on_timer, .data = ctl};
	ctl->source = loop_add_source(ctl->loop, on_event, ctl);
	if (ctl->source < 0 || (r = loop_add_fd(ctl->loop, fd, ctl->source, LISTEN_INDEX, EPOLLIN)) < 0 ||
	    (r = loop_add_timer(ctl->loop, &ctl->timer)) < 0) {
		r = ctl->source < 0 ? ctl->source : r;
		close(fd);
		return r;
	}
	ctl->listen_fd = fd;
	struct prompt_listener l = {
	    .send = send_prompts, .available = has_prompt_client, .send_outcome = send_outcomes, .data = ctl};
	prompt_set_listener(ctl->prompt, &l);
	return 0;
}

/* ------------------------------------------------------------ slots */

static void reset_reply(struct client *c)
{
	if (c->reply.fd >= 0)
		close(c->reply.fd);
	free(c->reply.text);
	memset(&c->reply, 0, sizeof(c->reply));
	c->reply.fd = -1;
}

static bool anyone_asked(const struct control *ctl)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].asked)
			return true;
	return false;
}

static void drop(struct control *ctl, int i)
{
	struct client *c = client_at(ctl, i);

	if (c->fd < 0)
		return;
	loop_del_fd(ctl->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	/* A person who went away cannot answer: when no one asked is left, the chain goes on. */
	if (c->asked) {
		c->asked = false;
		if (!anyone_asked(ctl))
			prompt_declined(ctl->prompt);
	}
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->run_pidfd >= 0)
		close(c->run_pidfd);
	reset_reply(c);
	free(c->in);
	memset(c, 0, sizeof(*c));
	c->fd = c->pidfd = c->reply.fd = c->run_pidfd = -1;
}

void control_close_all(struct control *ctl)
{

	if (!ctl->ready)
		return;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		drop(ctl, i);
	free(ctl->clients);
	ctl->clients = NULL;
	ctl->ready = false;
	if (ctl->listen_fd >= 0) {
		close(ctl->listen_fd);
		unlinkat(ctl->dir_fd, ctl->name, 0);
		ctl->listen_fd = -1;
	}
	if (ctl->dir_fd >= 0)
		close(ctl->dir_fd);
	ctl->dir_fd = -1;
}

/* A free slot for uid: -EUSERS when the uid holds its share, -EAGAIN when
 * only root's slots are left.  Root takes the slot of the oldest client of
 * another uid if nothing is free (which only root's own clients can cause). */
static int pick_slot(struct control *ctl, uid_t uid)
{
	unsigned mine = 0, others = 0;
	int free_slot = -1, oldest = -1;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		const struct client *c = client_at(ctl, i);
		if (c->fd < 0) {
			free_slot = free_slot < 0 ? i : free_slot;
			continue;
		}
		mine += c->uid == uid;
		others += c->uid != 0;
		if (c->uid != 0 && (oldest < 0 || c->seq < client_at(ctl, oldest)->seq))
			oldest = i;
	}
	if (uid != 0 && mine >= CONTROL_SLOTS_PER_UID)
		return -EUSERS;
	if (uid != 0 && others >= CONTROL_MAX_CLIENTS - CONTROL_ROOT_SLOTS)
		return -EAGAIN;
	if (free_slot < 0 && uid == 0 && oldest >= 0) {
		log_info("control: uid %u's oldest connection makes room for root",
			 (unsigned)client_at(ctl, oldest)->uid);
		drop(ctl, oldest);
		free_slot = oldest;
	}
	return free_slot < 0 ? -EAGAIN : free_slot;
}

/* A connection refused a slot is told why, in a frame, then closed. */
static void refuse(int fd, uid_t uid, int err)
{
	char buf[160];
	struct protocol_buf b = {.data = buf, .cap = sizeof(buf)};
	char msg[120];

	snprintf(msg, sizeof(msg), "too many connections%s%u; try again later",
		 err == -EUSERS ? " from uid " : ": only root's slots are left, not for uid ", (unsigned)uid);
	if (protocol_put_error(&b, msg) == 0 && protocol_put_end(&b) == 0)
		(void)!send(fd, buf, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void watch(struct control *ctl, int i, uint32_t events)
{
	struct client *c = client_at(ctl, i);

	if (c->events == events)
		return;
	if (loop_mod_fd(ctl->loop, c->fd, ctl->source, (uint32_t)i, events) == 0)
		c->events = events;
}

static int peer_pidfd(const struct control *ctl, int fd)
{
	int pidfd = -1;
	socklen_t len = sizeof(pidfd);

	if (ctl->no_peer_pidfd || getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		return -1;
	return pidfd;
}

/* What the kernel holds for a client that does not read: its socket's send
 * buffer (doubled by the kernel), for each of CONTROL_MAX_CLIENTS. */
#define CLIENT_SNDBUF (32 << 10)

static void admit(struct control *ctl, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int sndbuf = CLIENT_SNDBUF;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);
		return;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	int i = pick_slot(ctl, cred.uid);
	if (i < 0) {
		refuse(fd, cred.uid, i);
		return;
	}
	char *bufs = malloc(PROTOCOL_REQUEST_MAX + CONTROL_OUT_MAX);
	if (!bufs) {
		log_warning("control: no memory for the connection of pid %d (uid %u)", (int)cred.pid,
			    (unsigned)cred.uid);
		close(fd);
		return;
	}
	struct client *c = client_at(ctl, i);
	memset(c, 0, sizeof(*c));
	c->in = bufs;
	c->out = bufs + PROTOCOL_REQUEST_MAX;
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	c->pidfd = peer_pidfd(ctl, fd);
	c->reply.fd = c->run_pidfd = -1;
	c->seq = ++ctl->next_seq;
	c->deadline_ns = now_ns() + CONTROL_IDLE_MS * 1000000ull;
	c->events = EPOLLIN;
	if (loop_add_fd(ctl->loop, fd, ctl->source, (uint32_t)i, EPOLLIN) < 0)
		drop(ctl, i);
}

static void control_accept(struct control *ctl)
{
	for (;;) {
		int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		admit(ctl, fd);
	}
}

/* ------------------------------------------------------------ timeouts */

/* The loop's timer is due at the earliest client deadline; 0 (none) with
 * no client, or only prompt clients waiting: then the daemon sleeps. */
static void rearm(struct control *ctl)
{
	uint64_t next = 0;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		const struct client *c = &ctl->clients[i];
		if (c->fd >= 0 && c->deadline_ns && (!next || c->deadline_ns < next))
			next = c->deadline_ns;
	}
	ctl->timer.due_ns = next;
}

static void on_timer(void *data, uint64_t now)
{
	struct control *ctl = data;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = client_at(ctl, i);
		if (c->fd < 0 || !c->deadline_ns || now < c->deadline_ns)
			continue;
		log_info("control: dropped the connection of pid %d (uid %u): no request or read for %d s",
			 (int)c->pid, (unsigned)c->uid, CONTROL_IDLE_MS / 1000);
		drop(ctl, i);
	}
	rearm(ctl);
}

static bool busy(const struct client *c)
{
	return c->out_len || c->reply.verb != PROTOCOL_UNKNOWN || c->question.due || c->outcome.due ||
	       c->run_pending;
}

/* After each turn: a prompt client with nothing owed and nothing half
 * received may wait for a question for ever; anyone else has a deadline,
 * which only progress (a request completed, bytes read by it) pushes back. */
static void arm_deadline(struct client *c, uint64_t now)
{
	/* A run waits for systemd, which answers within its own timeout. */
	if ((c->prompt && !busy(c) && c->in_len == 0 && !c->discarding) || c->run_pending)
		c->deadline_ns = 0;
	else if (!c->deadline_ns)
		c->deadline_ns = now + CONTROL_IDLE_MS * 1000000ull;
}

static void progress(struct client *c)
{
	c->deadline_ns = now_ns() + CONTROL_IDLE_MS * 1000000ull;
}

/* ------------------------------------------------------------ output */

static struct protocol_buf outbuf(struct client *c)
{
	return (struct protocol_buf){.data = c->out, .len = c->out_len, .cap = CONTROL_OUT_MAX};
}

/* Runs protocol_put_*(buf, args...) into the client's buffer: true if it
 * fit (a line that does not fit is not written at all). */
#define PUT(c, fn, ...)                                                                                      \
	({                                                                                                   \
		struct protocol_buf b_ = outbuf(c);                                                          \
		int r_ = fn(&b_, ##__VA_ARGS__);                                                             \
		(c)->out_len = b_.len;                                                                       \
		r_ >= 0;                                                                                     \
	})

static bool put_ok(struct client *c)
{
	return PUT(c, protocol_put_ok);
}

static bool put_end(struct client *c)
{
	return PUT(c, protocol_put_end);
}

static bool put_error(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An error is one whole frame; a request starts only with room for it. */
static bool put_error(struct client *c, const char *fmt, ...)
{
	char msg[512];
	struct protocol_buf b = outbuf(c);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (protocol_put_error(&b, msg) < 0 || protocol_put_end(&b) < 0)
		return false;
	c->out_len = b.len;
	return true;
}

/* Sends what is pending; false if the client is gone. */
static bool flush(struct control *ctl, int i)
{
	struct client *c = client_at(ctl, i);
	size_t sent = 0;

	while (sent < c->out_len) {
		ssize_t n = send(c->fd, c->out + sent, c->out_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			drop(ctl, i);
			return false;
		}
		sent += (size_t)n;
	}
	if (sent) {
		memmove(c->out, c->out + sent, c->out_len - sent);
		c->out_len -= sent;
		progress(c);
	}
	return true;
}

/* ------------------------------------------------------------ replies */

static bool put_machine(struct control *ctl, struct client *c)
{
	struct oomkit_cgroup_memory m = {0};

	const struct scope *machine = &ctl->scopes->machine;

	(void)oomkit_cgroup_memory(ctl->ctx, machine->rel, &m);
	const struct protocol_machine rec = {.cgroup = machine->rel,
					     .usage_bytes = m.usage_bytes,
					     .limit_bytes = m.limit_bytes,
					     .under_oom = m.under_oom,
					     .ooms = machine->counters.ooms,
					     .kills = machine->counters.kills,
					     .last_action = machine->last_action};
	return PUT(c, protocol_put_machine, &rec);
}

/* How long a status or ps walks a scope's cgroups before it lists the
 * processes through /proc: any user may ask, as often as it likes, and a
 * job's owner makes as many cgroups as it likes, while the loop that
 * answers is the one that handles OOMs. */
#define CONTROL_WALK_MS 20u

struct pid_fill {
	pid_t *pids;
	size_t n, count;
};

static int fill_pid(oomkit_ctx *ctx, const struct oomkit_pid_entry *e, void *userdata)
{
	struct pid_fill *f = userdata;
	(void)ctx;
	if (f->count >= f->n)
		return -ENOBUFS;
	f->pids[f->count++] = e->pid;
	return 0;
}

/* oomkit_cgroup_pids(rel, recursive) at a cost bounded by
 * CONTROL_WALK_MS, then by the machine's processes. */
static int scope_pids(struct control *ctl, const char *rel, pid_t *pids, size_t n)
{
	struct pid_fill f = {pids, n, 0};
	int r = oomkit_cgroup_walk_pids_until(ctl->ctx, rel, OOMKIT_WALK_RECURSIVE,
					      now_ns() + CONTROL_WALK_MS * NS_PER_MS, fill_pid, &f);

	if (r != -ETIMEDOUT)
		return r;
	f.count = 0;
	return oomkit_cgroup_walk_pids(ctl->ctx, rel, OOMKIT_WALK_RECURSIVE | OOMKIT_WALK_PROC, fill_pid, &f);
}

static bool put_job(struct control *ctl, struct client *c, const struct scope *j)
{
	struct oomkit_cgroup_memory m = {.limit_bytes = OOMKIT_UNLIMITED};
	char chain[128];

	(void)oomkit_cgroup_memory(ctl->ctx, j->rel, &m);
	int nprocs = scope_pids(ctl, j->rel, ctl->pids, ctl->max_pids);
	config_format_chain(&j->job->chain, chain, sizeof(chain));
	const struct protocol_job rec = {.name = j->name,
					 .priority = j->job->priority,
					 .usage_bytes = m.usage_bytes,
					 .limit_bytes = m.limit_bytes,
					 .limit_max_bytes = j->job->limit_max_bytes,
					 .expect_bytes = j->job->expect_bytes,
					 .under_oom = m.under_oom,
					 .ooms = j->counters.ooms,
					 .kills = j->counters.kills,
					 .processes = nprocs < 0 ? 0u : (unsigned)nprocs,
					 .has_owner = j->job->has_owner,
					 .owner = j->job->owner,
					 .chain = chain,
					 .last_action = j->last_action,
					 .instance = j->kind == SCOPE_KIND_INSTANCE ? j->rel : "-"};
	return PUT(c, protocol_put_job, &rec);
}

/* status: "ok", the machine, a record per job, ".". */
static bool fill_status(struct control *ctl, struct client *c)
{
	if (c->reply.stage == 0) {
		if (c->out_len + 2 * PROTOCOL_RECORD_MAX > CONTROL_OUT_MAX || !put_ok(c) ||
		    !put_machine(ctl, c))
			return false;
		c->reply.stage = 1;
	}
	/* By slot, going on after the last one sent. */
	SCOPE_FOREACH_JOB (j, ctl->scopes) {
		unsigned slot = scope_index(ctl->scopes, j);
		if (slot < c->reply.next)
			continue;
		if (!put_job(ctl, c, j))
			return false;
		c->reply.next = (uint64_t)slot + 1;
	}
	return put_end(c);
}

static void sort_pids(pid_t *p, int n)
{
	/* Shell sort: no allocation, and ps is not on the handler path. */
	for (int gap = n / 2; gap > 0; gap /= 2)
		for (int i = gap; i < n; i++)
			for (int k = i; k >= gap && p[k - gap] > p[k]; k -= gap) {
				pid_t t = p[k];
				p[k] = p[k - gap];
				p[k - gap] = t;
			}
}

/* A process in no job of the machine, in a cgroup a user may write:
 * "(escaped)", as a machine's OOM names it (policy_escaped()).  cut: its
 * path is longer than the kernel shows whole, which only a user nests. */
static bool ps_escaped(const struct control *ctl, const char *cg, bool cut)
{
	uid_t owner;

	return policy_escaped(
	    cut ? 0 : oomkit_cgroup_delegated(ctl->ctx, cg, ctl->scopes->machine.rel, &owner), cut);
}

static bool put_proc(struct control *ctl, struct client *c, pid_t pid, bool *ret_fit)
{
	char cg[PATH_MAX];
	struct oomkit_process p;
	int r;

	*ret_fit = true;
	if (oomkit_process_info(ctl->ctx, pid, &p) < 0)
		return false; /* gone meanwhile */
	/* A path too long to show is a process all the same: listed, never
	 * skipped (a user nests that deep to hide one). */
	if ((r = oomkit_process_cgroup(ctl->ctx, pid, cg, sizeof(cg))) == -ENAMETOOLONG)
		cg[0] = '\0';
	else if (r < 0)
		return false;
	const struct scope *s = r < 0 ? NULL : scope_of_cgroup(ctl->scopes, cg);
	bool escaped = !s && ps_escaped(ctl, cg, r < 0);
	const struct protocol_proc rec = {.pid = p.pid,
					  .job = s	   ? s->name
						 : escaped ? "(escaped)"
							   : "-",
					  .instance = s && s->kind == SCOPE_KIND_INSTANCE ? s->rel
						      : escaped && cg[0]		  ? cg
											  : "-",
					  .rss_bytes =
					      (p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) * 1024,
					  .swap_bytes = p.swap_kib * 1024,
					  .oom_score_adj = p.oom_score_adj,
					  .uid = p.uid,
					  .comm = p.comm,
					  .cmdline = p.cmdline};
	*ret_fit = PUT(c, protocol_put_proc, &rec);
	return *ret_fit;
}

/* The processes of every instance of job name, as many as fit; an
 * instance that went meanwhile has none. */
static int instance_pids(struct control *ctl, const char *name)
{
	int n = 0;
	for (const struct scope *s = scope_next_instance(ctl->scopes, name, NULL); s;
	     s = scope_next_instance(ctl->scopes, name, s)) {
		int k = scope_pids(ctl, s->rel, ctl->pids + n, ctl->max_pids - (size_t)n);
		if (k == -ENOBUFS)
			return (int)ctl->max_pids;
		if (k > 0)
			n += k;
	}
	return n;
}

/* ps: the scope's processes by pid.  Listed again at each piece, going on
 * after the last pid sent, so nothing but the cursor is kept between pieces. */
static bool fill_ps(struct control *ctl, struct client *c)
{
	const char *rel = ctl->scopes->machine.rel;

	int n;
	if (c->reply.job[0] && scope_next_instance(ctl->scopes, c->reply.job, NULL)) {
		n = instance_pids(ctl, c->reply.job);
	} else if (c->reply.job[0]) {
		const struct scope *s = scope_by_name(ctl->scopes, c->reply.job);
		if (!s) /* removed by a reload meanwhile */
			return c->reply.stage == 0 ? put_error(c, "no job %s", c->reply.job) : put_end(c);
		n = scope_pids(ctl, s->rel, ctl->pids, ctl->max_pids);
	} else {
		n = scope_pids(ctl, rel, ctl->pids, ctl->max_pids);
	}
	if (n < 0)
		return c->reply.stage == 0 ? put_error(c, "cannot list processes: %s", strerror(-n))
					   : put_end(c);
	if (c->reply.stage == 0) {
		if (!put_ok(c))
			return false;
		c->reply.stage = 1;
	}
	sort_pids(ctl->pids, n);
	for (int i = 0; i < n; i++) {
		bool fit;
		if ((uint64_t)ctl->pids[i] < c->reply.next)
			continue;
		if (!put_proc(ctl, c, ctl->pids[i], &fit) && !fit)
			return false;
		c->reply.next = (uint64_t)ctl->pids[i] + 1;
	}
	return put_end(c);
}

/* From the reports' index (reports.h): no file is read. */
static bool put_report_entry(struct client *c, const struct report_entry *e)
{
	const struct protocol_report rec = {.id = e->id,
					    .scope = e->scope,
					    .bytes = e->bytes,
					    .time_ms = e->time_ms,
					    .action = e->action,
					    .victim_pid = e->victim_pid,
					    .reason = e->reason,
					    .instance = e->instance[0] ? e->instance : NULL};
	return PUT(c, protocol_put_report, &rec);
}

/* reports: a record per report, going on after the last id sent. */
static bool fill_reports(struct control *ctl, struct client *c)
{
	if (c->reply.stage == 0) {
		if (!put_ok(c))
			return false;
		c->reply.stage = 1;
	}
	for (unsigned i = 0; i < reports_count(ctl->reports); i++) {
		const struct report_entry *e = reports_entry(ctl->reports, i);
		if (e->id < c->reply.next || (c->reply.own && !reports_readers_has(&e->readers, c->uid)))
			continue;
		if (!put_report_entry(c, e))
			return false;
		c->reply.next = (uint64_t)e->id + 1;
	}
	return put_end(c);
}

/* report ID: the file, in chunks of data records. */
static bool fill_report(struct control *ctl, struct client *c)
{
	char chunk[PROTOCOL_DATA_CHUNK];

	if (c->reply.stage == 0) {
		int fd = reports_open_existing(ctl->reports, (unsigned)c->reply.next);
		if (fd < 0)
			return put_error(c, "no report %u", (unsigned)c->reply.next);
		if (!put_ok(c)) {
			close(fd);
			return false;
		}
		c->reply.fd = fd;
		c->reply.next = 0;
		c->reply.stage = 1;
	}
	for (;;) {
		ssize_t n = pread(c->reply.fd, chunk, sizeof(chunk), (off_t)c->reply.next);
		if (n <= 0)
			return put_end(c);
		struct protocol_buf b = outbuf(c);
		int took = protocol_put_data(&b, chunk, (size_t)n);
		if (took == -ENOBUFS)
			return false;
		c->out_len = b.len;
		/* A NUL (never in a report the daemon wrote) is left out. */
		c->reply.next += took > 0 ? (uint64_t)took : 1;
	}
}

/* explain: the document made when asked, in chunks of data records. */
static bool fill_explain(struct client *c)
{
	if (c->reply.stage == 0) {
		if (!put_ok(c))
			return false;
		c->reply.stage = 1;
	}
	while (c->reply.next < c->reply.text_len) {
		size_t n = c->reply.text_len - c->reply.next;
		struct protocol_buf b = outbuf(c);
		int took = protocol_put_data(&b, c->reply.text + c->reply.next,
					     n < PROTOCOL_DATA_CHUNK ? n : PROTOCOL_DATA_CHUNK);
		if (took == -ENOBUFS)
			return false;
		c->out_len = b.len;
		c->reply.next += took > 0 ? (uint64_t)took : 1;
	}
	return put_end(c);
}

static bool fill_reply(struct control *ctl, struct client *c)
{
	bool done;

	switch (c->reply.verb) {
	case PROTOCOL_STATUS:
		done = fill_status(ctl, c);
		break;
	case PROTOCOL_PS:
		done = fill_ps(ctl, c);
		break;
	case PROTOCOL_REPORTS:
		done = fill_reports(ctl, c);
		break;
	case PROTOCOL_REPORT:
		done = fill_report(ctl, c);
		break;
	case PROTOCOL_EXPLAIN:
		done = fill_explain(c);
		break;
	default:
		done = true;
	}
	if (done)
		reset_reply(c);
	return done;
}

/* ------------------------------------------------------------ prompts */

static bool has_prompt_client(void *data)
{
	const struct control *ctl = data;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		const struct client *c = &ctl->clients[i];
		if (c->fd >= 0 && c->prompt && prompt_concerns(ctl->prompt, c->uid))
			return true;
	}
	return false;
}

static const char *prompt_scope(const struct control *ctl)
{
	return ctl->prompt->scope_name;
}

/* What this client may answer (access_may_answer()). */
static unsigned choices_for(const struct control *ctl, const struct client *c)
{
	const struct protocol_answer grow = {.id = ctl->prompt->report_id, .choice = PROTOCOL_CHOICE_GROW};
	const struct protocol_answer kernel = {.id = ctl->prompt->report_id,
					       .choice = PROTOCOL_CHOICE_KERNEL};
	unsigned mask = PROTOCOL_CHOICE_KILL | PROTOCOL_CHOICE_CHAIN;

	if (ctl->prompt->can_grow && access_may_answer(c->uid, &ctl->prompt->asker, &grow, 0) == 0)
		mask |= PROTOCOL_CHOICE_GROW;
	if (access_may_answer(c->uid, &ctl->prompt->asker, &kernel, 0) == 0)
		mask |= PROTOCOL_CHOICE_KERNEL;
	return mask;
}

static bool put_candidate(struct client *c, const struct prompt *prompt, const struct prompt_candidate *p)
{
	const struct protocol_candidate rec = {.pid = p->proc.pid,
					       .job = p->job_name,
					       .priority = p->priority,
					       .rss_bytes = p->proc.rss_bytes,
					       .comm = p->proc.comm,
					       .uid = p->proc.uid,
					       .place = policy_place_name(p->proc.place),
					       .rule = prompt_rule(prompt, p)};
	return PUT(c, protocol_put_candidate, &rec);
}

static void next_question(struct client *c)
{
	c->question = (typeof(c->question)){.id = c->question.queued, .due = c->question.queued != 0};
}

/* The question, its candidates (those the client may see), its choices, ".",
 * as the client reads.  A question that ended while it was going out (it was
 * answered, or another took its place) ends at once, with no choices. */
static bool fill_question(struct control *ctl, struct client *c)
{
	bool current = ctl->prompt->active && ctl->prompt->report_id == c->question.id;

	if (!c->question.head) {
		if (!current) { /* over before it went out */
			next_question(c);
			return true;
		}
		/* The time left, not the whole delay: a listener may come late. */
		const struct prompt *p = ctl->prompt;
		const struct protocol_question q = {.id = c->question.id,
						    .scope = prompt_scope(ctl),
						    .timeout_ms = prompt_remaining_ms(p, now_ns()),
						    .has_usage = p->asker.job && p->limit_bytes,
						    .usage_bytes = p->usage_bytes,
						    .limit_bytes = p->limit_bytes};
		if (!PUT(c, protocol_put_question, &q))
			return false;
		c->question.head = true;
	}
	for (; current && c->question.next < ctl->prompt->n_procs; c->question.next++) {
		const struct prompt_candidate *p = &ctl->prompt->procs[c->question.next];
		if (prompt_shows(ctl->prompt, p, c->uid) && !put_candidate(c, ctl->prompt, p))
			return false;
	}
	struct protocol_buf b = outbuf(c);
	if (protocol_put_choices(&b, current ? choices_for(ctl, c) : 0) < 0 || protocol_put_end(&b) < 0)
		return false;
	c->out_len = b.len;
	next_question(c);
	return true;
}

static void pump(struct control *ctl, int i);

static int send_prompts(void *data)
{
	struct control *ctl = data;
	int sent = 0;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = client_at(ctl, i);
		c->asked = false;
		if (c->fd < 0 || !c->prompt || !prompt_concerns(ctl->prompt, c->uid))
			continue;
		/* A question still going out is ended first (fill_question sees it is stale). */
		if (c->question.due && c->question.head)
			c->question.queued = ctl->prompt->report_id;
		else
			c->question = (typeof(c->question)){.id = ctl->prompt->report_id, .due = true};
		c->asked = true;
		pump(ctl, i);
		sent++;
	}
	rearm(ctl);
	return sent;
}

/* Whether client c is told the details of outcome o. */
static bool outcome_concerns(const struct outcome *o, const struct client *c)
{
	return access_outcome_details(c->uid, o->has_victim, o->victim_uid, o->has_owner, o->owner);
}

/* Keeps the outcome in the client's slot (what it may see of it), to go out
 * after what it is owed already; a newer one takes the place of one that
 * has not gone out yet. */
static void keep_outcome(struct client *c, const struct outcome *o, bool details)
{
	struct control_outcome *k = &c->outcome;

	*k = (struct control_outcome){.due = true,
				      .details = details,
				      .id = o->report_id,
				      .victim = details && o->has_victim && o->victim_pid > 0,
				      .victim_pid = o->victim_pid,
				      .victim_uid = o->victim_uid,
				      .victim_bytes = o->victim_bytes};
	snprintf(k->scope, sizeof(k->scope), "%s", o->scope);
	snprintf(k->action, sizeof(k->action), "%s", o->action);
	snprintf(k->by, sizeof(k->by), "%s", o->by);
	if (!details)
		return;
	snprintf(k->result, sizeof(k->result), "%s", o->result ? o->result : "");
	snprintf(k->victim_comm, sizeof(k->victim_comm), "%s", o->victim_comm ? o->victim_comm : "");
	snprintf(k->victim_job, sizeof(k->victim_job), "%s", o->victim_job ? o->victim_job : "");
}

/* "done", and for those who may see them the victim and the result, ".". */
static bool fill_outcome(struct client *c)
{
	const struct control_outcome *k = &c->outcome;
	const struct protocol_done done = {.id = k->id, .scope = k->scope, .action = k->action, .by = k->by};
	const struct protocol_victim v = {.pid = k->victim_pid,
					  .job = k->victim_job,
					  .bytes = k->victim_bytes,
					  .comm = k->victim_comm,
					  .uid = k->victim_uid};
	struct protocol_buf b = outbuf(c);

	if (protocol_put_done(&b, &done) < 0 || (k->victim && protocol_put_victim(&b, &v) < 0) ||
	    (k->details && protocol_put_text(&b, k->result) < 0) || protocol_put_end(&b) < 0)
		return false;
	c->out_len = b.len;
	c->outcome.due = false;
	return true;
}

static void send_outcomes(void *data, const struct outcome *o)
{
	struct control *ctl = data;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = client_at(ctl, i);
		bool details = c->fd >= 0 && c->prompt && outcome_concerns(o, c);
		bool asked = c->asked;
		c->asked = false;
		if (!details && !asked)
			continue;
		keep_outcome(c, o, details);
		pump(ctl, i);
	}
	rearm(ctl);
}

/* The name of uid, "uid N" if it has none (users.h: no name service is
 * asked here, after the seccomp filter). */
static void user_name(uid_t uid, char *buf, size_t len)
{
	struct users_entry u;

	if (users_by_uid(uid, &u) > 0)
		snprintf(buf, len, "%s", u.name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

static const char *client_user(struct client *c)
{
	if (!c->user[0])
		user_name(c->uid, c->user, sizeof(c->user));
	return c->user;
}

/* ------------------------------------------------------------ run */

static void run_failed(struct client *c, const char *job, int r)
{
	if (r == -ESRCH)
		put_error(c, "the process that asked to run in %s has exited", job);
	else if (r == -EBADMSG)
		put_error(c, "run: the request must come from one process, in one piece");
	else if (r == -EPERM)
		put_error(c, "permission denied: the process to move is not uid %u's alone",
			  (unsigned)c->uid);
	else
		put_error(c, "cannot move the process into %s: %s", job, strerror(-r));
}

/* run in a job of patterns on a systemd machine: systemd moves the process,
 * into a scope of its own (as systemd-run --scope), which the job adopts. */
static void run_in_scope(struct control *ctl, struct client *c, const struct config_job *cj, int pidfd,
			 pid_t pid)
{
	char unit[SDBUS_UNIT_MAX], slice[SDBUS_UNIT_MAX];
	int r;

	if (!run_target_scope_name(cj, pid, unit, sizeof(unit), slice, sizeof(slice))) {
		put_error(c,
			  "job %s has no cgroup pattern that a systemd scope can match (e.g. "
			  "system.slice/%s-*.scope)",
			  cj->name, cj->name);
	} else if ((r = sdbus_scope(ctl->sdbus, c->seq, pid, unit, slice)) < 0) {
		put_error(c, "cannot ask systemd for a scope: %s", strerror(-r));
	} else {
		log_info("%s: asking systemd to start %s in %s for process %d (uid %u)", cj->name, unit,
			 slice, (int)pid, (unsigned)c->uid);
		c->run_pending = true;
		c->run_pidfd = pidfd;
		snprintf(c->reply.job, sizeof(c->reply.job), "%s", cj->name);
		return;
	}
	close(pidfd);
	put_end(c);
}

static void cmd_run(struct control *ctl, struct client *c, const char *job_name)
{
	const struct scope *s = scope_by_name(ctl->scopes, job_name);
	const struct config_job *cj = s ? s->job : config_find_job(ctl->cfg, job_name);
	pid_t pid = 0;

	if (!cj || (!s && !cj->n_cgroups)) {
		put_error(c, "no job %s", job_name);
		return;
	}
	if (c->uid != 0 && !(cj->has_owner && cj->owner == c->uid)) {
		put_error(c, "permission denied: only root or the job's owner may run in job %s", job_name);
		return;
	}
	/* A job of patterns has no cgroup of its own to move a process into:
	 * on a systemd machine systemd makes one (a scope), elsewhere none. */
	if (cj->n_cgroups && (!ctl->sdbus || ctl->sdbus->sock < 0)) {
		put_error(c, "job %s adopts cgroups by pattern; run needs systemd for a scope in them",
			  job_name);
		return;
	}
	int pidfd = run_target_open(c->pidfd, c->pid, c->req_sender, c->req_sender_uid, c->uid, &pid);
	int r = pidfd < 0 ? pidfd : run_target_check(pidfd, pid, c->uid);
	if (r == 0 && cj->n_cgroups) {
		run_in_scope(ctl, c, cj, pidfd, pid);
		return;
	}
	if (r == 0)
		r = oomkit_cgroup_attach(ctl->ctx, s->rel, pid);
	/* Still alive once moved: the pid written was its own.  If it died in
	 * between, another process may have taken the pid: say so. */
	if (r == 0 && run_target_exited(pidfd)) {
		log_warning("%s: process %d exited while it was moved in", job_name, (int)pid);
		r = -ESRCH;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (r < 0) {
		run_failed(c, job_name, r);
		return;
	}
	log_info("%s: process %d (uid %u) moved in", job_name, (int)pid, (unsigned)c->uid);
	put_ok(c);
	put_end(c);
}

void control_run_done(struct control *ctl, uint64_t id, int result, const char *error)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = client_at(ctl, i);
		/* id 0: the helper is gone, and with it every answer. */
		if (c->fd < 0 || !c->run_pending || (id && c->seq != id))
			continue;
		c->run_pending = false;
		if (result == 0 && run_target_exited(c->run_pidfd)) {
			log_warning("%s: the process to run exited while systemd moved it", c->reply.job);
			result = -ESRCH;
		}
		close(c->run_pidfd);
		c->run_pidfd = -1;
		if (result < 0 && result != -ESRCH)
			put_error(c, "systemd did not start the scope for job %s: %s", c->reply.job,
				  error && error[0] ? error : strerror(-result));
		else if (result < 0)
			run_failed(c, c->reply.job, result);
		else
			put_ok(c);
		put_end(c);
		c->reply.job[0] = '\0';
		progress(c);
		pump(ctl, i);
	}
}

/* ------------------------------------------------------------ requests */

static bool may_read(const struct control *ctl, const struct client *c)
{
	return access_may_read_all(c->uid, ctl->cfg->readonly_status);
}

/* "report ID": root (or anyone, with readonly_status) reads every report;
 * another uid those of the OOMs that concern it (its job's, or one that
 * killed a process of its or took from its job).  Else why not, in msg. */
static bool may_read_report(const struct control *ctl, const struct client *c, unsigned id, char *msg,
			    size_t len)
{
	const struct report_entry *e = reports_find(ctl->reports, id);

	if (access_may_read_report(c->uid, ctl->cfg->readonly_status,
				   e && reports_readers_has(&e->readers, c->uid)))
		return true;
	if (!e)
		snprintf(msg, len, "no report %u", id);
	else
		snprintf(msg, len, "permission denied: report %u does not concern uid %u", id,
			 (unsigned)c->uid);
	return false;
}

/* "answer ID chain": this client lets the system decide; when no one asked
 * is left to answer, the chain goes on. */
static void cmd_decline(struct control *ctl, struct client *c, const struct protocol_answer *a)
{
	if (!ctl->prompt->active || a->id != ctl->prompt->report_id || !c->asked) {
		put_error(c, "no question %u is waiting", a->id);
		return;
	}
	c->asked = false;
	if (!anyone_asked(ctl))
		prompt_declined(ctl->prompt);
	struct protocol_buf b = outbuf(c);
	if (protocol_put_ok(&b) == 0 && protocol_put_text(&b, "the system decides") == 0 &&
	    protocol_put_end(&b) == 0)
		c->out_len = b.len;
}

/* Who may answer what is handle_prompt_answer()'s to check (access_may_answer()). */
static void cmd_answer(struct control *ctl, struct client *c, const struct protocol_answer *a)
{
	char msg[256];

	if (a->choice == PROTOCOL_CHOICE_CHAIN) {
		cmd_decline(ctl, c, a);
		return;
	}
	int r = chain_answer(ctl->chain, a, c->uid, client_user(c), msg, sizeof(msg));
	if (r < 0) {
		put_error(c, "%s", msg);
		return;
	}
	struct protocol_buf b = outbuf(c);
	if (protocol_put_ok(&b) == 0 && protocol_put_text(&b, msg) == 0 && protocol_put_end(&b) == 0)
		c->out_len = b.len;
}

/* A listener that comes while a question concerning it is open - an agent
 * started with the session, or restarted - is asked at once, after the
 * reply to its "prompt", with the time that is left.  Not once everyone
 * asked has declined: the chain is going on by then. */
static void ask_late(struct control *ctl, struct client *c)
{
	const struct prompt *p = ctl->prompt;

	if (!p->active || p->declined || !prompt_concerns(p, c->uid) || prompt_remaining_ms(p, now_ns()) == 0)
		return;
	c->question = (typeof(c->question)){.id = p->report_id, .due = true};
	c->asked = true;
}

/* Anyone may listen: each is sent only the questions that concern its uid. */
static void cmd_prompt(struct control *ctl, struct client *c)
{
	bool listening = c->prompt;

	/* The candidates' table is made for the first listener, before any
	 * question it could be asked (prompt.h). */
	if (prompt_make_room(ctl->prompt) < 0) {
		put_error(c, "out of memory for the prompt's candidates");
		return;
	}
	c->prompt = true;
	(void)client_user(c);
	put_ok(c);
	put_end(c);
	if (!listening)
		ask_late(ctl, c);
}

static void cmd_reload(struct control *ctl, struct client *c)
{
	if (loop_reload(ctl->loop) < 0) {
		put_error(c, "reload failed; the old configuration stays (see the log)");
		return;
	}
	put_ok(c);
	put_end(c);
}

/* A request the parser refused: the verb's usage, or what is wrong. */
static void refused(struct client *c, const char *line, size_t len, int r)
{
	if (r == -EINVAL)
		put_error(c, "usage: %s", protocol_usage(protocol_verb_of(line, len)));
	else if (r == -EOPNOTSUPP)
		put_error(c, "unknown command '%.*s'", (int)(len < 100 ? len : 100), line);
	else
		put_error(c, "malformed request");
}

static bool explaining(const struct control *ctl)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].reply.text)
			return true;
	return false;
}

/* explain [JOB]: the document is made now, whole (a snapshot that stays
 * one), and sent as the client reads.  One at a time for the whole daemon,
 * so clients cannot make it hold more than one. */
static void cmd_explain(struct control *ctl, struct client *c, const char *job)
{
	const struct scope *s = job[0] ? scope_by_name(ctl->scopes, job) : &ctl->scopes->machine;
	const struct config_job *cj = job[0] ? config_find_job(ctl->cfg, job) : NULL;
	/* A job that adopts cgroups is its instances, however many there are now. */
	bool instances = job[0] && (scope_next_instance(ctl->scopes, job, NULL) || (cj && cj->n_cgroups));
	char *text;
	int n;

	if (!s && !instances) {
		put_error(c, "no job %s", job);
		return;
	}
	if (explaining(ctl)) {
		put_error(c, "busy: another explain is being sent; ask again");
		return;
	}
	if (!(text = malloc(CONTROL_EXPLAIN_MAX))) {
		put_error(c, "out of memory");
		return;
	}
	n = chain_explain(ctl->chain, s, instances ? job : NULL, text, CONTROL_EXPLAIN_MAX);
	if (n < 0) {
		free(text);
		put_error(c, "cannot explain %s: %s", s ? s->label : job, strerror(-n));
		return;
	}
	/* Only what was written stays held while it is sent. */
	char *fit = realloc(text, (size_t)n + 1);
	c->reply.verb = PROTOCOL_EXPLAIN;
	c->reply.text = fit ? fit : text;
	c->reply.text_len = (size_t)n;
	c->reply.next = 0;
}

/* Starts a reply; the long ones go on in fill_reply(). */
static void request(struct control *ctl, struct client *c, const char *line, size_t len)
{
	struct protocol_request req;
	int r = protocol_parse_request(line, len, &req);

	if (r < 0) {
		refused(c, line, len, r);
		return;
	}
	char why[128];

	switch (req.verb) {
	case PROTOCOL_REPORT:
		if (!may_read_report(ctl, c, req.id, why, sizeof(why)))
			put_error(c, "%s", why);
		else
			c->reply = (typeof(c->reply)){.verb = req.verb, .next = req.id, .fd = -1};
		return;
	case PROTOCOL_REPORTS:
		c->reply = (typeof(c->reply)){.verb = req.verb, .own = !may_read(ctl, c), .fd = -1};
		return;
	case PROTOCOL_STATUS:
	case PROTOCOL_PS:
		if (!may_read(ctl, c)) {
			put_error(c, "permission denied: only root may read status (see readonly_status)");
			return;
		}
		c->reply.verb = req.verb;
		c->reply.next = 0;
		snprintf(c->reply.job, sizeof(c->reply.job), "%s", req.job);
		return;
	case PROTOCOL_RUN:
		cmd_run(ctl, c, req.job);
		return;
	case PROTOCOL_PROMPT:
		cmd_prompt(ctl, c);
		return;
	case PROTOCOL_ANSWER:
		cmd_answer(ctl, c, &req.answer);
		return;
	case PROTOCOL_EXPLAIN:
		if (!may_read(ctl, c))
			put_error(c, "permission denied: only root may explain (see readonly_status)");
		else
			cmd_explain(ctl, c, req.job);
		return;
	default:
		break;
	}
	if (c->uid != 0)
		put_error(c, "permission denied: only root may %s", protocol_verb_name(req.verb));
	else
		cmd_reload(ctl, c);
}

/* Takes the next complete line out of in[] and starts its reply. */
static bool next_request(struct control *ctl, struct client *c)
{
	char line[PROTOCOL_REQUEST_MAX];
	char *nl = memchr(c->in, '\n', c->in_len);

	/* Room for a whole error or first piece, so no request is lost. */
	if (!nl || c->out_len + 2 * PROTOCOL_RECORD_MAX > CONTROL_OUT_MAX)
		return false;
	/* Out of in[] first: what the request sets off may turn to this client again. */
	size_t len = (size_t)(nl - c->in), used = len + 1;
	memcpy(line, c->in, len);
	memmove(c->in, nl + 1, c->in_len - used);
	c->in_len -= used;
	c->req_sender = c->sender;
	c->req_sender_uid = c->sender_uid;
	if (c->in_len == 0)
		c->sender = 0;
	request(ctl, c, line, len);
	progress(c);
	return true;
}

/* Produces what the client is owed while it has room, sends it, and
 * watches for input only once nothing is pending. */
static void pump(struct control *ctl, int i)
{
	struct client *c = client_at(ctl, i);

	/* A request of this client's that sends a question or an outcome to
	 * everyone: what it queued here goes out when this turn goes on. */
	if (c->pumping)
		return;
	c->pumping = true;
	for (;;) {
		bool done;
		if (c->fd < 0)
			return;
		if (c->reply.verb != PROTOCOL_UNKNOWN)
			done = fill_reply(ctl, c);
		else if (c->question.due)
			done = fill_question(ctl, c);
		else if (c->outcome.due)
			done = fill_outcome(c);
		else if (c->run_pending)
			done = false;
		else
			done = next_request(ctl, c);
		if (done)
			continue;
		/* Out of room, or nothing to do: send, and go on only if that made room. */
		size_t before = c->out_len;
		if (!flush(ctl, i))
			return; /* dropped: the slot is clean */
		if (c->out_len == before || (!busy(c) && !memchr(c->in, '\n', c->in_len)))
			break;
	}
	c->pumping = false;
	arm_deadline(c, now_ns());
	uint32_t events =
	    (busy(c) || c->in_len == PROTOCOL_REQUEST_MAX ? 0u : EPOLLIN) | (c->out_len ? EPOLLOUT : 0u);
	watch(ctl, i, events);
}

/* ------------------------------------------------------------ input */

/* The sender of what recvmsg() returned (SCM_CREDENTIALS); descriptors
 * passed along (SCM_RIGHTS) are closed: the daemon takes none. */
static void note_sender(struct client *c, struct msghdr *mh, size_t had)
{
	bool seen = false;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(cm);
			for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++)
				close(fds[k]);
		} else if (cm->cmsg_type == SCM_CREDENTIALS) {
			struct ucred cred;
			memcpy(&cred, CMSG_DATA(cm), sizeof(cred));
			seen = true;
			if (had == 0 || c->sender == 0) {
				c->sender = cred.pid;
				c->sender_uid = cred.uid;
			} else if (c->sender != cred.pid || c->sender_uid != cred.uid) {
				c->sender = -1;
			}
		}
	}
	if (!seen)
		c->sender = -1;
}

/* Reads what fits; false if the client is gone. */
static bool receive(struct control *ctl, int i)
{
	struct client *c = client_at(ctl, i);
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(16 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = c->in + c->in_len, .iov_len = PROTOCOL_REQUEST_MAX - c->in_len};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf)};

	if (iov.iov_len == 0)
		return true;
	ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n <= 0) {
		drop(ctl, i);
		return false;
	}
	note_sender(c, &mh, c->in_len);
	size_t start = c->in_len;
	c->in_len += (size_t)n;
	if (c->discarding) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);
		size_t rest = nl ? (size_t)(c->in + c->in_len - (nl + 1)) : 0;
		if (nl)
			memmove(c->in + start, nl + 1, rest);
		c->in_len = start + rest;
		c->discarding = !nl;
	}
	/* A full buffer without a newline: too long for a request. */
	if (c->in_len == PROTOCOL_REQUEST_MAX && !memchr(c->in, '\n', c->in_len)) {
		put_error(c, "request too long (at most %d bytes)", PROTOCOL_REQUEST_MAX - 1);
		c->in_len = 0;
		c->sender = 0;
		c->discarding = true;
	}
	return true;
}

static void client_event(struct control *ctl, int i, uint32_t events)
{
	if (i < 0 || i >= CONTROL_MAX_CLIENTS || client_at(ctl, i)->fd < 0)
		return;
	if ((events & EPOLLOUT) && !flush(ctl, i))
		return;
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !busy(client_at(ctl, i)) && !receive(ctl, i))
		return;
	/* Hung up with output pending: what it cannot read is dropped with it. */
	if ((events & (EPOLLHUP | EPOLLERR)) && busy(client_at(ctl, i))) {
		drop(ctl, i);
		return;
	}
	pump(ctl, i);
}

static void on_event(void *data, uint32_t index, uint32_t events)
{
	struct control *ctl = data;

	if (index == LISTEN_INDEX)
		control_accept(ctl);
	else
		client_event(ctl, (int)index, events);
	rearm(ctl);
}
