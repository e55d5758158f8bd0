/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control.c - the control socket: a unix stream socket speaking a line
 * protocol.  A request is one line; the answer is "ok" or "error MESSAGE",
 * then records of tab-separated fields, then a line holding only ".".
 * Lines of a report that start with "." are sent with one more "." (as SMTP
 * does), so the end marker is unambiguous.
 *
 * Who may do what is decided from the peer's credentials (SO_PEERCRED):
 * root may do everything; anyone may read status/ps/reports when
 * readonly_status is set; a job's owner may run processes in that job.
 * Anyone may listen for prompts ("prompt"); who is asked what, and who may
 * answer, is protocol.c's rule (protocol_may_see(), protocol_may_answer()):
 * a non-root peer is asked only about an OOM of a job it owns or with a
 * candidate of its own, sees only its own candidates, and may kill one of
 * them, grow or hand to the kernel only a job it owns, or answer "chain"
 * (let the system decide: once everyone asked has, or has gone away, the
 * chain goes on at once).  Root's answers are not limited.
 *
 *   status | ps [JOB] | reports | report ID | run JOB | prompt |
 *   answer ID kill PID | answer ID grow | answer ID kernel | answer ID chain | reload
 *
 * A prompt connection receives, besides its replies, frames of its own
 * (protocol.h): a question ("oom", candidates, choices), and after the OOM
 * is handled a "done" frame: to everyone asked about it (so they stop
 * asking the person), with the victim and result records only to root, the
 * victim's uid and the job's owner, who are also told about OOMs that
 * concern them and asked no one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "protocol.h"

#define OUT_MAX (16u << 20)

/* The listening socket's index in the loop; clients are 0..CONTROL_MAX_CLIENTS-1. */
#define LISTEN_INDEX CONTROL_MAX_CLIENTS

static void on_event(void *data, uint32_t index, uint32_t events);
static int send_prompts(void *data);
static bool has_prompt_client(void *data);
static void send_outcomes(void *data, const struct outcome *o);

void control_configure(struct control *ctl, const struct config *cfg)
{
	ctl->cfg = cfg;
}

int control_listen(struct control *ctl)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = ctl->cfg->socket;
	struct stat st;
	char dir[CONFIG_SOCKET_MAX];
	int fd, r;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		ctl->clients[i].fd = -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	/* A stale socket of an earlier run is replaced; anything else is not touched. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	/* Everyone may connect; each command checks the peer's credentials. */
	(void)chmod(path, 0666);
	ctl->source = loop_add_source(ctl->loop, on_event, ctl);
	if (ctl->source < 0 || (r = loop_add_fd(ctl->loop, fd, ctl->source, LISTEN_INDEX, EPOLLIN)) < 0) {
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

static bool anyone_asked(const struct control *ctl)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].asked)
			return true;
	return false;
}

static void drop(struct control *ctl, int i)
{
	struct client *c = &ctl->clients[i];

	if (c->fd < 0)
		return;
	/* A person who went away cannot answer: when no one asked is left, the chain goes on. */
	if (c->asked) {
		c->asked = false;
		if (!anyone_asked(ctl))
			prompt_declined(ctl->prompt);
	}
	loop_del_fd(ctl->loop, c->fd);
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void control_close_all(struct control *ctl)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		drop(ctl, i);
	if (ctl->listen_fd >= 0) {
		close(ctl->listen_fd);
		unlink(ctl->cfg->socket);
		ctl->listen_fd = -1;
	}
}

static void control_accept(struct control *ctl)
{
	for (;;) {
		int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int i;
		for (i = 0; i < CONTROL_MAX_CLIENTS && ctl->clients[i].fd >= 0; i++)
			;
		if (i == CONTROL_MAX_CLIENTS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(fd);
			continue;
		}
		struct client *c = &ctl->clients[i];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		if (loop_add_fd(ctl->loop, fd, ctl->source, (uint32_t)i, EPOLLIN) < 0)
			drop(ctl, i);
	}
}

/* ------------------------------------------------------------ output */

static void flush(struct control *ctl, int i)
{
	struct client *c = &ctl->clients[i];

	while (c->out_len > 0) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			drop(ctl, i);
			return;
		}
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
	loop_mod_fd(ctl->loop, c->fd, ctl->source, (uint32_t)i, EPOLLIN | (c->out_len ? EPOLLOUT : 0u));
}

static void out_raw(struct client *c, const char *s, size_t n)
{
	if (c->out_len + n > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap < c->out_len + n)
			cap *= 2;
		if (cap > OUT_MAX)
			return;
		char *p = realloc(c->out, cap);
		if (!p)
			return;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
}

static void out(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(struct client *c, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_raw(c, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* A field may not contain the separators. */
static const char *field(const char *s, char *buf, size_t len)
{
	size_t i;
	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
	buf[i] = '\0';
	return buf;
}

static const char *num(uint64_t v, char *buf, size_t len)
{
	if (v == OOMKIT_UNLIMITED)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static void error(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void error(struct client *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out(c, "error %s\n.\n", buf);
}

/* ------------------------------------------------------------ commands */

static void cmd_status(struct control *ctl, struct client *c)
{
	struct oomkit_cgroup_memory m = {0};
	char a[32], b[32], e[32], x[32], f[SCOPE_LAST_ACTION_MAX], chain[128];

	const struct scope *machine = &ctl->scopes->machine;

	(void)oomkit_cgroup_memory(ctl->ctx, machine->rel, &m);
	out(c, "ok\n");
	out(c, "machine\t%s\t%s\t%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%s\n", machine->rel,
	    num(m.usage_bytes, a, sizeof(a)), num(m.limit_bytes, b, sizeof(b)), m.under_oom, machine->ooms,
	    machine->kills, field(machine->last_action, f, sizeof(f)));
	SCOPE_FOREACH_JOB (j, ctl->scopes) {
		struct oomkit_cgroup_memory jm = {.limit_bytes = OOMKIT_UNLIMITED};
		(void)oomkit_cgroup_memory(ctl->ctx, j->rel, &jm);
		int nprocs = oomkit_cgroup_pids(ctl->ctx, j->rel, true, ctl->pids, ctl->max_pids);
		config_format_chain(&j->job->chain, chain, sizeof(chain));
		char owner[16] = "-";
		if (j->job->has_owner)
			snprintf(owner, sizeof(owner), "%u", (unsigned)j->job->owner);
		out(c, "job\t%s\t%u\t%s\t%s\t%s\t%s\t%d\t%" PRIu64 "\t%" PRIu64 "\t%d\t%s\t%s\t%s\n", j->name,
		    j->job->priority, num(jm.usage_bytes, a, sizeof(a)), num(jm.limit_bytes, b, sizeof(b)),
		    num(j->job->limit_max_bytes, e, sizeof(e)), num(j->job->expect_bytes, x, sizeof(x)),
		    jm.under_oom, j->ooms, j->kills, nprocs < 0 ? 0 : nprocs, owner, chain,
		    field(j->last_action, f, sizeof(f)));
	}
	out(c, ".\n");
}

static void cmd_ps(struct control *ctl, struct client *c, const char *job_name)
{
	const char *rel = ctl->scopes->machine.rel;
	char cg[SCOPE_REL_MAX], comm[32], cmd[300];

	if (job_name) {
		const struct scope *s = scope_by_name(ctl->scopes, job_name);
		if (!s) {
			error(c, "no job %s", job_name);
			return;
		}
		rel = s->rel;
	}
	int n = oomkit_cgroup_pids(ctl->ctx, rel, true, ctl->pids, ctl->max_pids);
	if (n < 0) {
		error(c, "cannot list processes: %s", strerror(-n));
		return;
	}
	out(c, "ok\n");
	for (int i = 0; i < n; i++) {
		struct oomkit_process p;
		if (oomkit_process_info(ctl->ctx, ctl->pids[i], &p) < 0 ||
		    oomkit_process_cgroup(ctl->ctx, ctl->pids[i], cg, sizeof(cg)) < 0)
			continue;
		const struct scope *s = scope_of_cgroup(ctl->scopes, cg);
		out(c, "proc\t%d\t%s\t%" PRIu64 "\t%" PRIu64 "\t%d\t%u\t%s\t%s\n", (int)p.pid,
		    s ? s->name : "-", (p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) * 1024,
		    p.swap_kib * 1024, p.oom_score_adj, (unsigned)p.uid, field(p.comm, comm, sizeof(comm)),
		    field(p.cmdline, cmd, sizeof(cmd)));
	}
	out(c, ".\n");
}

/* From the reports' index (reports.h): no file is read. */
static void cmd_reports(struct control *ctl, struct client *c)
{
	char reason[REPORTS_REASON_MAX];

	out(c, "ok\n");
	for (unsigned i = 0; i < reports_count(ctl->reports); i++) {
		const struct report_entry *e = reports_entry(ctl->reports, i);
		out(c, "report\t%u\t%s\t%" PRIu64 "\t%" PRIu64 ".%03u\t%s\t%d\t%s\n", e->id, e->scope,
		    e->bytes, e->time_ms / 1000u, (unsigned)(e->time_ms % 1000u), e->action,
		    (int)e->victim_pid, field(e->reason, reason, sizeof(reason)));
	}
	out(c, ".\n");
}

static void cmd_report(struct control *ctl, struct client *c, unsigned id)
{
	char buf[8192], *line_start;
	bool at_line_start = true;

	int fd = reports_open_existing(ctl->reports, id);
	if (fd < 0) {
		error(c, "no report %u", id);
		return;
	}
	out(c, "ok\n");
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		line_start = buf;
		for (ssize_t i = 0; i < n; i++) {
			if (at_line_start && buf[i] == '.')
				out_raw(c, ".", 1);
			at_line_start = buf[i] == '\n';
			if (at_line_start) {
				out_raw(c, line_start, (size_t)(buf + i + 1 - line_start));
				line_start = buf + i + 1;
			}
		}
		out_raw(c, line_start, (size_t)(buf + n - line_start));
	}
	close(fd);
	out(c, "%s.\n", at_line_start ? "" : "\n");
}

static void cmd_run(struct control *ctl, struct client *c, const char *job_name)
{
	const struct scope *s = scope_by_name(ctl->scopes, job_name);

	if (!s) {
		error(c, "no job %s", job_name);
		return;
	}
	const struct config_job *cj = s->job;
	if (c->uid != 0 && !(cj->has_owner && cj->owner == c->uid)) {
		error(c, "permission denied: only root or the job's owner may run in job %s", job_name);
		return;
	}
	int r = oomkit_cgroup_attach(ctl->ctx, s->rel, c->pid);
	if (r < 0) {
		error(c, "cannot move %d into %s: %s", (int)c->pid, job_name, strerror(-r));
		return;
	}
	log_info("%s: process %d (uid %u) moved in", job_name, (int)c->pid, (unsigned)c->uid);
	out(c, "ok\n.\n");
}

static bool has_prompt_client(void *data)
{
	const struct control *ctl = data;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].prompt &&
		    prompt_concerns(ctl->prompt, ctl->clients[i].uid))
			return true;
	return false;
}

/* Prompt and outcome frames are written with protocol.c, a record at a
 * time, through this buffer into the client's output. */
static char frame_buf[8 * PROTOCOL_RECORD_MAX];

static struct protocol_buf *frame_room(struct client *c, struct protocol_buf *b)
{
	if (b->cap - b->len < PROTOCOL_RECORD_MAX) {
		out_raw(c, b->data, b->len);
		b->len = 0;
	}
	return b;
}

static void frame_end(struct client *c, struct protocol_buf *b)
{
	(void)protocol_put_end(frame_room(c, b));
	out_raw(c, b->data, b->len);
	b->len = 0;
}

static void send_prompt(struct control *ctl, struct client *c)
{
	struct protocol_buf b = {.data = frame_buf, .cap = sizeof(frame_buf)};
	struct protocol_question q = {.id = ctl->prompt->report_id,
				      .scope = ctl->prompt->scope_name,
				      .timeout_ms = ctl->prompt->timeout_ms};
	struct protocol_answer grow = {.id = q.id, .choice = PROTOCOL_CHOICE_GROW};
	struct protocol_answer kernel = {.id = q.id, .choice = PROTOCOL_CHOICE_KERNEL};
	unsigned choices = PROTOCOL_CHOICE_KILL | PROTOCOL_CHOICE_CHAIN;

	(void)protocol_put_question(frame_room(c, &b), &q);
	for (unsigned i = 0; i < ctl->prompt->n_procs; i++) {
		const struct prompt_candidate *p = &ctl->prompt->procs[i];
		struct protocol_candidate pc = {.pid = p->proc.pid,
						.job = p->job_name,
						.priority = p->priority,
						.rss_bytes = p->proc.rss_bytes,
						.comm = p->proc.comm,
						.uid = p->proc.uid};
		if (prompt_shows(ctl->prompt, p, c->uid))
			(void)protocol_put_candidate(frame_room(c, &b), &pc);
	}
	if (ctl->prompt->can_grow && protocol_may_answer(c->uid, &ctl->prompt->asker, &grow, 0) == 0)
		choices |= PROTOCOL_CHOICE_GROW;
	if (protocol_may_answer(c->uid, &ctl->prompt->asker, &kernel, 0) == 0)
		choices |= PROTOCOL_CHOICE_KERNEL;
	(void)protocol_put_choices(frame_room(c, &b), choices);
	frame_end(c, &b);
}

static int send_prompts(void *data)
{
	struct control *ctl = data;
	int sent = 0;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = &ctl->clients[i];
		c->asked = false;
		if (c->fd < 0 || !c->prompt || !prompt_concerns(ctl->prompt, c->uid))
			continue;
		send_prompt(ctl, c);
		c->asked = true;
		flush(ctl, i);
		sent++;
	}
	return sent;
}

/* Whether client c is told the details of outcome o. */
static bool outcome_concerns(const struct outcome *o, const struct client *c)
{
	return c->uid == 0 || (o->has_victim && o->victim_uid == c->uid) ||
	       (o->has_owner && o->owner == c->uid);
}

static void send_outcome(struct client *c, const struct outcome *o, bool details)
{
	struct protocol_buf b = {.data = frame_buf, .cap = sizeof(frame_buf)};
	struct protocol_done done = {.id = o->report_id, .scope = o->scope, .action = o->action, .by = o->by};
	struct protocol_victim v = {.pid = o->victim_pid,
				    .job = o->victim_job,
				    .bytes = o->victim_bytes,
				    .comm = o->victim_comm,
				    .uid = o->victim_uid};

	(void)protocol_put_done(frame_room(c, &b), &done);
	if (details && o->has_victim && o->victim_pid > 0)
		(void)protocol_put_victim(frame_room(c, &b), &v);
	if (details)
		(void)protocol_put_text(frame_room(c, &b), o->result);
	frame_end(c, &b);
}

static void send_outcomes(void *data, const struct outcome *o)
{
	struct control *ctl = data;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = &ctl->clients[i];
		bool details = c->fd >= 0 && c->prompt && outcome_concerns(o, c);
		bool asked = c->asked;
		c->asked = false;
		if (!details && !asked)
			continue;
		send_outcome(c, o, details);
		flush(ctl, i);
	}
}

/* The name of uid from /etc/passwd, read here rather than through NSS: its
 * modules are loaded libraries and sockets the daemon does not let in.
 * Opened without blocking and only if a regular file; "uid N" otherwise. */
static void user_name(uid_t uid, char *buf, size_t len)
{
	static char pw[65536];
	struct stat st;
	ssize_t n = -1;
	int fd = open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	snprintf(buf, len, "uid %u", (unsigned)uid);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = pread(fd, pw, sizeof(pw) - 1, 0);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	pw[n] = '\0';
	for (char *line = pw; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *nl = strchr(line, '\n');
		if (!c2 || (nl && c2 > nl) || c1 - line >= (ptrdiff_t)len)
			continue;
		char *end;
		unsigned long v = strtoul(c2 + 1, &end, 10);
		if (end != c2 + 1 && *end == ':' && v == uid) {
			snprintf(buf, len, "%.*s", (int)(c1 - line), line);
			return;
		}
	}
}

static const char *client_user(struct client *c)
{
	if (!c->user[0])
		user_name(c->uid, c->user, sizeof(c->user));
	return c->user;
}

/* "answer ID chain": this client lets the system decide. */
static void cmd_decline(struct control *ctl, struct client *c, const struct protocol_answer *a)
{
	if (!ctl->prompt->active || a->id != ctl->prompt->report_id || !c->asked) {
		error(c, "no question %u is waiting", a->id);
		return;
	}
	c->asked = false;
	if (!anyone_asked(ctl))
		prompt_declined(ctl->prompt);
	out(c, "ok\nthe system decides\n.\n");
}

static void cmd_answer(struct control *ctl, struct client *c, const struct protocol_answer *a)
{
	char msg[256];

	if (a->choice == PROTOCOL_CHOICE_CHAIN) {
		cmd_decline(ctl, c, a);
		return;
	}
	int r = chain_answer(ctl->chain, a, c->uid, client_user(c), msg, sizeof(msg));
	if (r < 0)
		error(c, "%s", msg);
	else
		out(c, "ok\n%s\n.\n", msg);
}

static bool may_read(const struct control *ctl, const struct client *c)
{
	return c->uid == 0 || ctl->cfg->readonly_status;
}

static void cmd_reload(struct control *ctl, struct client *c)
{
	if (loop_reload(ctl->loop) < 0)
		error(c, "reload failed; the old configuration stays (see the log)");
	else
		out(c, "ok\n.\n");
}

/* A request the parser refused: the verb's usage, or what is wrong. */
static void refused(struct client *c, const char *line, size_t len, int r)
{
	char shown[PROTOCOL_REQUEST_MAX];

	if (r == -EINVAL) {
		error(c, "usage: %s", protocol_usage(protocol_verb_of(line, len)));
		return;
	}
	protocol_escape(line, len, shown, 120);
	if (r == -EOPNOTSUPP)
		error(c, "unknown command '%s'", shown);
	else
		error(c, "malformed request '%s'", shown);
}

static void command(struct control *ctl, int i, const char *line, size_t len)
{
	struct client *c = &ctl->clients[i];
	struct protocol_request req;
	int r = protocol_parse_request(line, len, &req);

	if (r < 0) {
		refused(c, line, len, r);
		return;
	}
	switch (req.verb) {
	case PROTOCOL_STATUS:
	case PROTOCOL_PS:
	case PROTOCOL_REPORTS:
	case PROTOCOL_REPORT:
		if (!may_read(ctl, c))
			error(c, "permission denied: only root may read status (see readonly_status)");
		else if (req.verb == PROTOCOL_STATUS)
			cmd_status(ctl, c);
		else if (req.verb == PROTOCOL_PS)
			cmd_ps(ctl, c, req.job[0] ? req.job : NULL);
		else if (req.verb == PROTOCOL_REPORTS)
			cmd_reports(ctl, c);
		else
			cmd_report(ctl, c, req.id);
		return;
	case PROTOCOL_RUN:
		cmd_run(ctl, c, req.job);
		return;
	default:
		break;
	}
	if (c->uid != 0 && req.verb == PROTOCOL_RELOAD) {
		error(c, "permission denied: only root may %s", protocol_verb_name(req.verb));
	} else if (req.verb == PROTOCOL_PROMPT) {
		c->prompt = true;
		(void)client_user(c);
		out(c, "ok\n.\n");
	} else if (req.verb == PROTOCOL_ANSWER) {
		cmd_answer(ctl, c, &req.answer);
	} else {
		cmd_reload(ctl, c);
	}
}

static void client_event(struct control *ctl, int i, uint32_t events)
{
	struct client *c = &ctl->clients[i];

	if (i < 0 || i >= CONTROL_MAX_CLIENTS || c->fd < 0)
		return;
	if (events & EPOLLOUT)
		flush(ctl, i);
	if (c->fd < 0 || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len, 0);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		drop(ctl, i);
		return;
	}
	c->in_len += (size_t)n;
	c->in[c->in_len] = '\0';
	char *nl;
	while (c->fd >= 0 && (nl = strchr(c->in, '\n'))) {
		*nl = '\0';
		command(ctl, i, c->in, (size_t)(nl - c->in));
		size_t used = (size_t)(nl + 1 - c->in);
		memmove(c->in, nl + 1, c->in_len - used + 1);
		c->in_len -= used;
	}
	if (c->fd >= 0 && c->in_len == sizeof(c->in) - 1) {
		error(c, "line too long");
		c->in_len = 0;
	}
	if (c->fd >= 0)
		flush(ctl, i);
}

static void on_event(void *data, uint32_t index, uint32_t events)
{
	struct control *ctl = data;

	if (index == LISTEN_INDEX)
		control_accept(ctl);
	else
		client_event(ctl, (int)index, events);
}
