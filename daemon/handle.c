/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * handle.c - one OOM, from the kernel's event to a completed action: take a
 * snapshot of the scope (the job whose limit was hit, or the whole machine),
 * let policy.c decide, write the report's "before" half, act, and finish the
 * report with the outcome and the timings.  The same path serves a job and
 * the machine; only the scope differs.
 *
 * Nothing here allocates: the snapshot goes into arrays made at startup, the
 * report is formatted into a preallocated buffer and written with write(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "oomkitd.h"
#include "protocol.h"

/* How long a kill may take before we stop waiting for the victim to exit. */
#define KILL_TIMEOUT_MS 1000
/* How long we watch for the memcg to leave OOM after acting, for the report. */
#define FREED_WAIT_NS (500ull * 1000 * 1000)

/* ------------------------------------------------------------ JSON writer */

struct jw {
	int fd;
	char *buf;
	size_t len, cap;
	int err;
};

static void jw_flush(struct jw *w)
{
	size_t off = 0;

	while (off < w->len && !w->err) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			w->err = -errno;
		else
			off += (size_t)n;
	}
	w->len = 0;
}

static void jw_raw(struct jw *w, const char *s, size_t n)
{
	while (n > 0) {
		size_t room = w->cap - w->len, k = n < room ? n : room;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == w->cap)
			jw_flush(w);
	}
}

static void jw_printf(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jw_printf(struct jw *w, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		jw_raw(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void jw_str(struct jw *w, const char *s)
{
	jw_raw(w, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			jw_raw(w, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			jw_printf(w, "\\u%04x", c);
		} else {
			jw_raw(w, s, 1);
		}
	}
	jw_raw(w, "\"", 1);
}

static void jw_key(struct jw *w, const char *key)
{
	jw_str(w, key);
	jw_raw(w, ":", 1);
}

static void jw_size(struct jw *w, uint64_t v)
{
	if (v == OOMKIT_UNLIMITED)
		jw_raw(w, "null", 4);
	else
		jw_printf(w, "%" PRIu64, v);
}

/* ------------------------------------------------------------ snapshot */

int job_of_cgroup(const struct daemon *d, const char *rel)
{
	for (unsigned i = 0; i < d->n_jobs; i++) {
		const struct job_state *j = &d->jobs[i];
		size_t n = strlen(j->rel);
		if (j->name[0] && strncmp(rel, j->rel, n) == 0 && (rel[n] == '\0' || rel[n] == '/'))
			return (int)i;
	}
	return -1;
}

/* Whether cgroup path rel is scope or below it. */
static bool under(const char *rel, const char *scope)
{
	size_t n = strlen(scope);
	return n == 0 || (strncmp(rel, scope, n) == 0 && (rel[n] == '\0' || rel[n] == '/'));
}

static const char other_name[] = "(other)";

/* Groups are the active jobs in slot order, then "(other)" for processes of
 * the machine that are in no configured job. */
static unsigned build_groups(struct daemon *d, int *group_of_job, uint64_t *ret_machine_usage)
{
	struct oomkit_cgroup_memory m;
	uint64_t sum = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < d->n_jobs; i++) {
		struct job_state *j = &d->jobs[i];
		group_of_job[i] = -1;
		if (!j->name[0])
			continue;
		struct policy_group *g = &d->groups[n];
		const struct config_job *c = j->cfg;
		memset(g, 0, sizeof(*g));
		g->name = j->name;
		g->priority = c->priority;
		g->limit_bytes = c->limit_bytes;
		if (oomkit_cgroup_memory(d->ctx, j->rel, &m) >= 0) {
			g->usage_bytes = m.usage_bytes;
			g->limit_bytes = m.limit_bytes;
		}
		/* A limit raised earlier (grow, or before a restart) is never "above" limit_max. */
		g->limit_max_bytes =
		    c->limit_max_bytes > g->limit_bytes ? c->limit_max_bytes : g->limit_bytes;
		g->expect_bytes = c->expect_bytes;
		g->kill = c->kill;
		g->protect = c->protect;
		g->n_protect = c->n_protect;
		sum += g->usage_bytes;
		group_of_job[i] = (int)n++;
	}
	struct policy_group *o = &d->groups[n];
	memset(o, 0, sizeof(*o));
	o->name = other_name;
	o->priority = 0;
	o->limit_bytes = o->limit_max_bytes = OOMKIT_UNLIMITED;
	*ret_machine_usage = 0;
	if (oomkit_cgroup_memory(d->ctx, d->machine.rel, &m) >= 0) {
		*ret_machine_usage = m.usage_bytes;
		o->usage_bytes = m.usage_bytes > sum ? m.usage_bytes - sum : 0;
	}
	return n + 1;
}

static uint64_t machine_capacity(struct daemon *d)
{
	struct oomkit_cgroup_memory m;
	struct oomkit_system_memory sys;

	if (oomkit_cgroup_memory(d->ctx, d->machine.rel, &m) >= 0 && m.limit_bytes != OOMKIT_UNLIMITED)
		return m.limit_bytes;
	if (oomkit_system_memory(d->ctx, &sys) < 0)
		return 0;
	return sys.total_bytes > d->cfg->reserve_bytes ? sys.total_bytes - d->cfg->reserve_bytes : 0;
}

int snapshot(struct daemon *d, int job, struct policy_input *in, pid_t *protected_pids)
{
	char cg[DAEMON_REL_MAX];
	uint64_t machine_usage;
	int *group_job = d->group_of_job;
	unsigned n_groups = build_groups(d, group_job, &machine_usage);
	const char *rel = job < 0 ? d->machine.rel : d->jobs[job].rel;
	int n = oomkit_cgroup_pids(d->ctx, rel, true, d->pids, DAEMON_MAX_PIDS);
	unsigned n_procs = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct oomkit_process p;
		struct policy_proc *pp = &d->procs[n_procs];
		if (oomkit_process_info(d->ctx, d->pids[i], &p) < 0)
			continue; /* gone meanwhile */
		if (oomkit_process_cgroup(d->ctx, d->pids[i], cg, sizeof(cg)) < 0)
			continue;
		/* Listed in the scope a moment ago but no longer inside it: it is
		 * exiting (a dying task can show its cgroup as the root) or moved. */
		if (!under(cg, rel))
			continue;
		int jidx = job_of_cgroup(d, cg);
		pp->pid = p.pid;
		pp->start_time = p.start_time;
		pp->group = jidx >= 0 ? group_job[jidx] : (int)n_groups - 1;
		pp->rss_bytes = (p.rss_anon_kib + p.rss_file_kib + p.rss_shmem_kib) * 1024;
		pp->oom_score_adj = p.oom_score_adj;
		pp->uid = p.uid;
		memcpy(pp->comm, p.comm, sizeof(pp->comm));
		pp->comm[sizeof(pp->comm) - 1] = '\0';
		n_procs++;
	}
	protected_pids[0] = getpid();
	protected_pids[1] = oomkit_guardian_pid(d->ctx);
	memset(in, 0, sizeof(*in));
	in->scope = job < 0 ? SCOPE_MACHINE : SCOPE_JOB;
	in->scope_group = job < 0 ? 0 : (unsigned)group_job[job];
	in->groups = d->groups;
	in->n_groups = n_groups;
	in->procs = d->procs;
	in->n_procs = n_procs;
	in->capacity_bytes = machine_capacity(d);
	in->protected_pids = protected_pids;
	in->n_protected_pids = protected_pids[1] > 0 ? 2 : 1;
	in->chain = job < 0 ? &d->cfg->chain : &d->jobs[job].cfg->chain;
	(void)machine_usage;
	return (int)n_procs;
}

/* The job slot of a policy group, -1 for "(other)". */
static int job_of_group(const struct daemon *d, int group)
{
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0] && d->group_of_job[i] == group)
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------ report */

static void write_decision(struct jw *w, const struct policy_input *in, const struct policy_decision *dec)
{
	jw_raw(w, "{", 1);
	jw_key(w, "action");
	jw_str(w, policy_action_name(dec->action));
	jw_raw(w, ",", 1);
	jw_key(w, "policy");
	jw_str(w, dec->action == ACTION_NONE ? "" : policy_kind_name(dec->policy));
	jw_printf(w, ",\"step\":%u,\"victim_pid\":%d,", dec->step, (int)dec->victim_pid);
	jw_key(w, "victim_job");
	if (dec->victim_group >= 0 && (unsigned)dec->victim_group < in->n_groups)
		jw_str(w, in->groups[dec->victim_group].name);
	else
		jw_raw(w, "null", 4);
	jw_raw(w, ",\"new_limit_bytes\":", 19);
	jw_size(w, dec->action == ACTION_GROW ? dec->new_limit_bytes : OOMKIT_UNLIMITED);
	jw_raw(w, ",", 1);
	jw_key(w, "reason");
	jw_str(w, dec->reason);
	jw_raw(w, ",", 1);
	jw_key(w, "not_applied");
	jw_str(w, dec->trail);
	jw_raw(w, "}", 1);
}

static void write_snapshot(struct jw *w, const struct policy_input *in)
{
	jw_raw(w, "\"jobs\":[", 8);
	for (unsigned i = 0; i < in->n_groups; i++) {
		const struct policy_group *g = &in->groups[i];
		jw_raw(w, i ? ",{" : "{", i ? 2 : 1);
		jw_key(w, "name");
		jw_str(w, g->name);
		jw_printf(w, ",\"priority\":%u,\"usage_bytes\":%" PRIu64 ",\"limit_bytes\":", g->priority,
			  g->usage_bytes);
		jw_size(w, g->limit_bytes);
		jw_raw(w, ",\"limit_max_bytes\":", 19);
		jw_size(w, g->limit_max_bytes);
		jw_printf(w, ",\"expect_bytes\":%" PRIu64 ",\"kill\":\"%s\"}", g->expect_bytes,
			  g->kill == KILL_JOB ? "job" : "process");
	}
	jw_raw(w, "],\"candidates\":[", 16);
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		const struct policy_group *g = &in->groups[p->group];
		jw_printf(w, "%s{\"pid\":%d,\"job\":", i ? "," : "", (int)p->pid);
		jw_str(w, g->name);
		jw_printf(w,
			  ",\"priority\":%u,\"rss_bytes\":%" PRIu64
			  ",\"oom_score_adj\":%d,\"start_time\":%" PRIu64 ",",
			  g->priority, p->rss_bytes, p->oom_score_adj, p->start_time);
		jw_key(w, "comm");
		jw_str(w, p->comm);
		jw_printf(w, ",\"protected\":%s}", policy_protected(in, p) ? "true" : "false");
	}
	jw_raw(w, "]", 1);
}

static void write_report_head(struct daemon *d, struct jw *w, unsigned id, int job,
			      const struct oomkit_event *ev, const struct policy_input *in,
			      const struct policy_decision *dec)
{
	struct timespec rt;
	char chain[128];

	clock_gettime(CLOCK_REALTIME, &rt);
	jw_printf(w, "{\"oomkitd_report\":1,\"id\":%u,\"time\":%lld.%03ld,\"scope\":\"%s\",", id,
		  (long long)rt.tv_sec, rt.tv_nsec / 1000000, job < 0 ? "machine" : "job");
	jw_key(w, "job");
	if (job < 0)
		jw_raw(w, "null", 4);
	else
		jw_str(w, d->jobs[job].name);
	jw_raw(w, ",", 1);
	jw_key(w, "cgroup");
	jw_str(w, ev->cgroup);
	jw_raw(w, ",", 1);
	jw_key(w, "origin");
	jw_str(w, ev->origin ? ev->origin : ev->cgroup);
	jw_printf(w, ",\"dry_run\":%s,\"capacity_bytes\":%" PRIu64 ",", d->dry_run ? "true" : "false",
		  in->capacity_bytes);
	config_format_chain(in->chain, chain, sizeof(chain));
	jw_key(w, "chain");
	jw_str(w, chain);
	jw_raw(w, ",", 1);
	write_snapshot(w, in);
	jw_raw(w, ",\"decision\":", 12);
	write_decision(w, in, dec);
	jw_raw(w, ",\"state\":", 9);
	jw_flush(w);
	/* The library's artifact: counters, oom_control, memory.stat, every process. */
	struct oomkit_decision ld = {.action = policy_action_name(dec->action),
				     .reason = dec->reason,
				     .victim_pid = dec->victim_pid,
				     .new_limit_bytes =
					 dec->action == ACTION_GROW ? dec->new_limit_bytes : 0};
	int r = oomkit_write_report(d->ctx, w->fd, ev, &ld);
	if (r < 0 && !w->err)
		w->err = r; /* a write failed: the report is cut short */
	if (r < 0)
		jw_raw(w, "null", 4);
}

static void write_report_tail(struct jw *w, const char *result, uint64_t event_ns, uint64_t decided_ns,
			      uint64_t acted_ns, uint64_t freed_ns)
{
	jw_raw(w, ",\"outcome\":", 11);
	jw_str(w, result);
	jw_printf(w, ",\"timings_ms\":{\"decision\":%.3f,\"action\":%.3f,\"freed\":",
		  (double)(decided_ns - event_ns) / 1e6, (double)(acted_ns - event_ns) / 1e6);
	if (freed_ns)
		jw_printf(w, "%.3f", (double)(freed_ns - event_ns) / 1e6);
	else
		jw_raw(w, "null", 4);
	jw_raw(w, "}}\n", 3);
	jw_flush(w);
}

/* ------------------------------------------------------------ acting */

static void set_last(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_last(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, DAEMON_LAST_ACTION_MAX, fmt, ap);
	va_end(ap);
}

static char *last_action_of(struct daemon *d, int job)
{
	return job < 0 ? d->machine.last_action : d->jobs[job].last_action;
}

/* Waits a bounded time for the scope to leave OOM; 0 if it did not. */
static uint64_t wait_freed(struct daemon *d, const char *rel)
{
	uint64_t deadline = now_ns() + FREED_WAIT_NS;
	struct oomkit_cgroup_memory m;

	do {
		if (oomkit_cgroup_memory(d->ctx, rel, &m) < 0 || !m.under_oom)
			return now_ns();
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	} while (now_ns() < deadline);
	return 0;
}

/* Carries out a kill or grow; returns 0, or -errno if it could not be done. */
static int act(struct daemon *d, int job, const struct policy_input *in, const struct policy_decision *dec,
	       char *result, size_t len)
{
	int r = 0;
	char *last = last_action_of(d, job);
	char sz[32];

	if (dec->action == ACTION_KILL) {
		r = oomkit_kill(d->ctx, dec->victim_pid, dec->victim_start_time, KILL_TIMEOUT_MS);
		if (r == -ETIMEDOUT)
			r = 0; /* signalled: its memory goes with it */
		if (r < 0) {
			snprintf(result, len, "kill of %d failed: %s", (int)dec->victim_pid, strerror(-r));
			return r;
		}
		snprintf(result, len, "killed %d", (int)dec->victim_pid);
		set_last(last, "%s killed %d (%s)", policy_kind_name(dec->policy), (int)dec->victim_pid,
			 in->groups[dec->victim_group].name);
	} else if (dec->action == ACTION_KILL_JOB) {
		int vj = job_of_group(d, dec->victim_group);
		if (vj < 0)
			return -ESRCH;
		r = oomkit_kill_cgroup(d->ctx, d->jobs[vj].rel, KILL_TIMEOUT_MS);
		if (r < 0) {
			snprintf(result, len, "kill of job %s failed: %s", d->jobs[vj].name, strerror(-r));
			return r;
		}
		snprintf(result, len, "killed job %s (%d processes)", d->jobs[vj].name, r);
		set_last(last, "%s killed job %s", policy_kind_name(dec->policy), d->jobs[vj].name);
	} else if (dec->action == ACTION_GROW) {
		r = oomkit_set_limit(d->ctx, d->jobs[job].rel, dec->new_limit_bytes);
		if (r < 0) {
			snprintf(result, len, "grow failed: %s", strerror(-r));
			return r;
		}
		value_format_size(dec->new_limit_bytes, sz, sizeof(sz));
		snprintf(result, len, "limit raised to %s", sz);
		set_last(last, "grew to %s", sz);
		d->jobs[job].grows++;
		return 0;
	}
	if (dec->action == ACTION_KILL || dec->action == ACTION_KILL_JOB) {
		int vj = job_of_group(d, dec->victim_group);
		uint64_t n = dec->action == ACTION_KILL_JOB ? (uint64_t)r : 1;
		if (vj >= 0)
			d->jobs[vj].kills += n;
		if (job < 0)
			d->machine.kills += n;
		d->kills_by_policy[dec->policy] += n;
	}
	return 0;
}

/* ------------------------------------------------------------ prompts */

static const char *scope_name(const struct daemon *d, int job)
{
	return job < 0 ? "machine" : d->jobs[job].name;
}

/* The owner of job slot j, if it has one. */
static bool job_owner(const struct daemon *d, int j, uid_t *ret_owner)
{
	if (j < 0 || !d->jobs[j].cfg->has_owner)
		return false;
	*ret_owner = d->jobs[j].cfg->owner;
	return true;
}

bool prompt_shows(const struct daemon *d, const struct prompt_candidate *c, uid_t uid)
{
	return protocol_may_see(uid, &d->prompt.asker, c->proc.uid);
}

bool prompt_concerns(const struct daemon *d, uid_t uid)
{
	bool own = false;

	for (unsigned i = 0; i < d->n_prompt_procs && !own; i++)
		own = prompt_shows(d, &d->prompt_procs[i], uid);
	return protocol_may_see_question(uid, &d->prompt.asker, own);
}

/* Before the chain is decided: the processes a person could choose from (in
 * scope, not protected), whose they are, and whether "grow" would work; so
 * that whether a prompt concerns anyone listening is known.  Not while a
 * prompt is active: its candidates are still being answered about. */
static void prompt_prepare(struct daemon *d, int job, const struct policy_input *in)
{
	struct policy_chain grow_chain = {.steps = {POLICY_GROW}, .n_steps = 1};
	struct policy_input grow_in = *in;
	struct policy_decision dec;

	d->n_prompt_procs = 0;
	d->prompt.job = job;
	d->prompt.asker.job = job >= 0;
	d->prompt.asker.has_owner = job_owner(d, job, &d->prompt.asker.owner);
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (in->scope == SCOPE_JOB && p->group != (int)in->scope_group)
			continue;
		if (policy_protected(in, p))
			continue;
		struct prompt_candidate *c = &d->prompt_procs[d->n_prompt_procs++];
		c->proc = *p;
		c->job_name = in->groups[p->group].name;
		c->priority = in->groups[p->group].priority;
	}
	grow_in.chain = &grow_chain;
	grow_in.first_step = 0;
	d->prompt.can_grow = job >= 0 && policy_decide(&grow_in, &dec) == 0 && dec.action == ACTION_GROW;
}

static void start_prompt(struct daemon *d, int job, const struct policy_decision *dec, int fd, unsigned id,
			 uint64_t event_ns)
{
	uint64_t timeout_ms = d->cfg->delay_ms / 2;

	d->prompt.active = true;
	d->prompt.declined = false;
	d->prompt.report_id = id;
	d->prompt.report_fd = fd;
	d->prompt.next_step = dec->step + 1;
	d->prompt.event_ns = event_ns;
	d->prompt.timeout_ms = timeout_ms;
	d->prompt.deadline_ns = now_ns() + timeout_ms * 1000000u;
	int sent = control_send_prompt(d);
	log_notice("%s: asking %d connected prompt(s), %" PRIu64 " ms to answer", scope_name(d, job), sent,
		   timeout_ms);
}

/* The victim of a kill, as the outcome tells it. */
static void outcome_victim(const struct daemon *d, const struct policy_input *in,
			   const struct policy_decision *dec, struct outcome *o)
{
	if (dec->action != ACTION_KILL && dec->action != ACTION_KILL_JOB)
		return;
	for (unsigned k = 0; k < in->n_procs; k++) {
		const struct policy_proc *p = &in->procs[k];
		if (p->pid != dec->victim_pid)
			continue;
		o->has_victim = true;
		o->victim_pid = p->pid;
		o->victim_uid = p->uid;
		o->victim_bytes = p->rss_bytes;
		o->victim_comm = p->comm;
	}
	if (dec->victim_group < 0 || (unsigned)dec->victim_group >= in->n_groups)
		return;
	o->victim_job = in->groups[dec->victim_group].name;
	if (dec->action == ACTION_KILL_JOB) {
		o->victim_bytes = in->groups[dec->victim_group].usage_bytes;
		o->victim_comm = o->victim_job;
	}
	if (!o->has_owner)
		o->has_owner = job_owner(d, job_of_group(d, dec->victim_group), &o->owner);
}

/* Tells the prompt clients concerned what was done about OOM id. */
static void tell_outcome(struct daemon *d, unsigned id, int job, const struct policy_input *in,
			 const struct policy_decision *dec, const char *action, const char *by,
			 const char *result)
{
	struct outcome o = {.report_id = id,
			    .scope = scope_name(d, job),
			    .action = action,
			    .by = by,
			    .result = result,
			    .victim_comm = "",
			    .victim_job = ""};

	o.has_owner = job_owner(d, job, &o.owner);
	if (dec && in)
		outcome_victim(d, in, dec, &o);
	control_send_outcome(d, &o);
}

/* Ends the active prompt's report with what happened after it; user: who
 * answered (NULL: nobody). */
static void finish_prompt(struct daemon *d, const char *answer, uid_t uid, const char *user,
			  const struct policy_input *in, const struct policy_decision *dec,
			  const char *result, uint64_t acted_ns, uint64_t freed_ns)
{
	struct jw w = {.fd = d->prompt.report_fd, .buf = d->jsonbuf, .cap = d->jsonbuf_len};
	char by[64];

	jw_raw(&w, ",\"prompt_answer\":", 17);
	jw_str(&w, answer);
	if (user) {
		jw_printf(&w, ",\"answered_by\":{\"uid\":%u,\"user\":", (unsigned)uid);
		jw_str(&w, user);
		jw_raw(&w, "}", 1);
	}
	if (dec) {
		jw_raw(&w, ",\"followup\":", 12);
		write_decision(&w, in, dec);
	}
	write_report_tail(&w, result, d->prompt.event_ns, d->prompt.event_ns, acted_ns, freed_ns);
	reports_done(d, d->prompt.report_id, scope_name(d, d->prompt.job), d->prompt.report_fd, w.err);
	d->prompt.active = false;
	d->prompt.report_fd = -1;
	snprintf(by, sizeof(by), "%s%s", user ? "user " : "nobody", user ? user : "");
	tell_outcome(d, d->prompt.report_id, d->prompt.job, in, dec,
		     dec			     ? policy_action_name(dec->action)
		     : strcmp(answer, "kernel") == 0 ? "kernel"
						     : "none",
		     by, result);
	metrics_changed(d);
}

/* ------------------------------------------------------------ the chain */

enum oomkit_verdict handle_scope(struct daemon *d, int job, const struct oomkit_event *ev,
				 unsigned first_step)
{
	static pid_t protected_pids[2];
	struct policy_input in;
	struct policy_decision dec;
	char result[160];
	unsigned id = 0;
	int r, fd;
	const char *rel = job < 0 ? d->machine.rel : d->jobs[job].rel;

	r = snapshot(d, job, &in, protected_pids);
	if (r < 0) {
		log_err("%s: cannot list processes: %s; the kernel decides", scope_name(d, job),
			strerror(-r));
		return OOMKIT_KERNEL;
	}
	in.first_step = first_step;
	if (!d->prompt.active)
		prompt_prepare(d, job, &in);
	in.prompt_available = !d->prompt.active && control_has_prompt_client(d);
	if (policy_decide(&in, &dec) < 0)
		return OOMKIT_KERNEL;
	uint64_t decided = now_ns();
	log_notice("%s: OOM: %s: %s", scope_name(d, job), policy_action_name(dec.action), dec.reason);

	fd = reports_create(d, scope_name(d, job), &id);
	struct jw w = {.fd = fd, .buf = d->jsonbuf, .cap = d->jsonbuf_len};
	if (fd >= 0)
		write_report_head(d, &w, id, job, ev, &in, &dec);
	else
		log_warning("%s: no report: %s", scope_name(d, job), strerror(-fd));

	if (dec.action == ACTION_PROMPT && !d->dry_run) {
		/* A report whose first half failed is dropped now, not after the answer. */
		if (fd >= 0 && w.err) {
			reports_done(d, id, scope_name(d, job), fd, w.err);
			fd = -1;
		}
		start_prompt(d, job, &dec, fd, id, ev->time_ns);
		metrics_changed(d);
		return OOMKIT_WAIT;
	}

	enum oomkit_verdict verdict = OOMKIT_WAIT;
	uint64_t acted = 0, freed = 0;
	r = 0;
	if (d->dry_run) {
		snprintf(result, sizeof(result), "dry run: nothing done");
	} else if (dec.action == ACTION_KERNEL) {
		snprintf(result, sizeof(result), "handed to the kernel OOM killer");
		set_last(last_action_of(d, job), "handed to the kernel");
		d->kernel_handoffs++;
		verdict = OOMKIT_KERNEL;
	} else if (dec.action == ACTION_NONE) {
		snprintf(result, sizeof(result), "nothing applied; the kernel steps in after the delay");
		set_last(last_action_of(d, job), "waited for the kernel");
	} else {
		r = act(d, job, &in, &dec, result, sizeof(result));
		acted = now_ns();
		if (r == 0) {
			verdict = OOMKIT_RESOLVED;
			freed = wait_freed(d, rel);
		}
	}
	if (!acted)
		acted = now_ns();
	if (fd >= 0) {
		write_report_tail(&w, result, ev->time_ns, decided, acted, freed);
		reports_done(d, id, scope_name(d, job), fd, w.err);
	}
	d->handled++;
	d->last_handling_ns = acted - ev->time_ns;
	d->handling_ns_sum += d->last_handling_ns;
	log_at(r < 0 ? LOG_LEVEL_WARNING : LOG_LEVEL_INFO, "%s: %s", scope_name(d, job), result);
	if (!d->dry_run && dec.action != ACTION_NONE) {
		char by[64];
		snprintf(by, sizeof(by), "policy %s", policy_kind_name(dec.policy));
		tell_outcome(d, id, job, &in, &dec, policy_action_name(dec.action), by, result);
	}
	metrics_changed(d);
	/* An action that could not be carried out: the rest of the chain gets its turn. */
	if (r < 0 && dec.step + 1 < in.chain->n_steps)
		return handle_scope(d, job, ev, dec.step + 1);
	return verdict;
}

static int scope_of_watch(struct daemon *d, const oomkit_watch *watch)
{
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0] && d->jobs[i].watch == watch)
			return (int)i;
	return -1;
}

/* How many OOMs of its own limit a scope has had, for a dry run, where the
 * kernel killer is on and an OOM is usually over before its event is read.
 * v1: memory.failcnt, whose oom_control eventfd wakes us once per OOM.  v2's
 * memory.events wakes us on each of the many times usage meets memory.max, and
 * its max count moves with each; its oom count moves once per OOM.  That file
 * is hierarchical: the machine's own count is its count less its jobs'. */
int handle_oom_count(struct daemon *d, int job, uint64_t *ret_count)
{
	struct oomkit_cgroup_memory m;
	const char *rel = job < 0 ? d->machine.rel : d->jobs[job].rel;

	if (oomkit_cgroup_memory(d->ctx, rel, &m) < 0)
		return -EIO;
	if (oomkit_backend(d->ctx) != OOMKIT_BACKEND_V2) {
		*ret_count = m.failcnt;
		return 0;
	}
	uint64_t n = m.events_oom;
	for (unsigned i = 0; job < 0 && i < d->n_jobs; i++)
		if (d->jobs[i].name[0] && oomkit_cgroup_memory(d->ctx, d->jobs[i].rel, &m) >= 0)
			n -= m.events_oom < n ? m.events_oom : n;
	*ret_count = n;
	return 0;
}

/* Whether the scope has had an OOM since the last call (a dry run). */
static bool oom_count_moved(struct daemon *d, int job)
{
	uint64_t *last = job < 0 ? &d->machine.last_oom_count : &d->jobs[job].last_oom_count;
	uint64_t n;

	if (handle_oom_count(d, job, &n) < 0)
		return false;
	/* A job added by a reload lowers the machine's own count: that is no OOM. */
	bool moved = n > *last;
	*last = n;
	return moved;
}

static enum oomkit_verdict observe(struct daemon *d, int job, const struct oomkit_event *ev)
{
	if (job < 0)
		d->machine.ooms++;
	else
		d->jobs[job].ooms++;
	return handle_scope(d, job, ev, 0);
}

enum oomkit_verdict handle_oom_event(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct daemon *d = userdata;
	int job = ev->watch == d->machine.watch ? -1 : scope_of_watch(d, ev->watch);
	(void)ctx;

	if (ev->kind == OOMKIT_EVENT_GONE) {
		log_warning("%s: memcg %s was removed", job < 0 ? "machine" : d->jobs[job].name, ev->cgroup);
		if (job < 0)
			d->machine.watch = NULL;
		else
			d->jobs[job].watch = NULL;
		metrics_changed(d);
		return OOMKIT_WAIT;
	}
	if (ev->kind != OOMKIT_EVENT_OOM)
		return OOMKIT_WAIT;
	/* With the kernel killer on (a dry run), the kernel acts at once, and one
	 * OOM may wake us several times, under_oom or not: it counts once, in the
	 * scope whose own limit was hit. */
	if (d->dry_run)
		return oom_count_moved(d, job) ? observe(d, job, ev) : OOMKIT_WAIT;
	if (!ev->under_oom)
		return OOMKIT_WAIT;
	/* A machine OOM also wakes every job: act once, where the limit was hit. */
	if (!ev->own) {
		log_debug("%s: under OOM because of %s", ev->cgroup, ev->origin);
		return OOMKIT_WAIT;
	}
	if (job < 0) {
		d->machine.ooms++;
	} else {
		d->jobs[job].ooms++;
		/* A delegated job's own handler goes first; we step in after the delay. */
		if (d->jobs[job].cfg->has_owner && !d->dry_run) {
			if (!d->jobs[job].delegated_due_ns)
				d->jobs[job].delegated_due_ns = ev->time_ns + d->cfg->delay_ms * 1000000u;
			log_info("%s: OOM left to its owner for %" PRIu64 " ms", d->jobs[job].name,
				 d->cfg->delay_ms);
			metrics_changed(d);
			return OOMKIT_WAIT;
		}
	}
	return handle_scope(d, job, ev, 0);
}

enum oomkit_verdict handle_pressure_event(oomkit_ctx *ctx, const struct oomkit_event *ev, void *userdata)
{
	struct daemon *d = userdata;
	(void)ctx;

	if (ev->kind == OOMKIT_EVENT_GONE) {
		d->machine.pressure_watch = NULL;
		return OOMKIT_WAIT;
	}
	if (ev->kind != OOMKIT_EVENT_PRESSURE)
		return OOMKIT_WAIT;
	/* v1 pressure events rise from the jobs to the machine: a job reclaiming
	 * under its own limit is not the machine running out. */
	if (ev->limit_bytes != OOMKIT_UNLIMITED && ev->usage_bytes < ev->limit_bytes / 10 * 9)
		return OOMKIT_WAIT;
	d->machine.pressure_events++;
	if (ev->time_ns - d->machine.pressure_logged_ns >= 10ull * 1000 * 1000 * 1000 ||
	    !d->machine.pressure_logged_ns) {
		d->machine.pressure_logged_ns = ev->time_ns;
		/* Rewritten with the log line, not on every event: pressure comes in
		 * bursts just before an OOM, when the daemon's time matters most. */
		metrics_changed(d);
		log_warning(
		    "machine: critical memory pressure (%" PRIu64 " of %" PRIu64 " MiB); an OOM may follow",
		    ev->usage_bytes >> 20, ev->limit_bytes == OOMKIT_UNLIMITED ? 0 : ev->limit_bytes >> 20);
	}
	return OOMKIT_WAIT;
}

/* An event as the library would have delivered it, for work done later. */
static void synth_event(struct daemon *d, int job, oomkit_watch *watch, struct oomkit_event *ev,
			uint64_t time_ns)
{
	struct oomkit_cgroup_memory m = {0};
	const char *rel = job < 0 ? d->machine.rel : d->jobs[job].rel;

	(void)oomkit_cgroup_memory(d->ctx, rel, &m);
	memset(ev, 0, sizeof(*ev));
	ev->kind = OOMKIT_EVENT_OOM;
	ev->watch = watch;
	ev->cgroup = rel;
	ev->origin = rel;
	ev->own = true;
	ev->under_oom = m.under_oom;
	ev->usage_bytes = m.usage_bytes;
	ev->limit_bytes = m.limit_bytes;
	ev->time_ns = time_ns;
}

static void prompt_timeout(struct daemon *d)
{
	struct oomkit_event ev;
	int job = d->prompt.job;
	oomkit_watch *watch = job < 0 ? d->machine.watch : d->jobs[job].watch;
	unsigned next = d->prompt.next_step;

	synth_event(d, job, watch, &ev, d->prompt.event_ns);
	if (d->prompt.declined)
		finish_prompt(d, "declined", 0, NULL, NULL, NULL,
			      ev.under_oom ? "everyone asked let the system decide; the chain goes on"
					   : "everyone asked let the system decide; resolved meanwhile",
			      now_ns(), 0);
	else
		finish_prompt(d, "none", 0, NULL, NULL, NULL,
			      ev.under_oom ? "no answer; the chain goes on" : "no answer; resolved meanwhile",
			      now_ns(), 0);
	/* Outside the library's handler, a "kernel" verdict must be handed over explicitly. */
	if (ev.under_oom && handle_scope(d, job, &ev, next) == OOMKIT_KERNEL)
		(void)oomkit_hand_to_kernel(d->ctx, watch);
}

void handle_timers(struct daemon *d, uint64_t now)
{
	if (d->prompt.active && now >= d->prompt.deadline_ns)
		prompt_timeout(d);
	for (unsigned i = 0; i < d->n_jobs; i++) {
		struct job_state *j = &d->jobs[i];
		struct oomkit_event ev;
		if (!j->name[0] || !j->delegated_due_ns || now < j->delegated_due_ns)
			continue;
		synth_event(d, (int)i, j->watch, &ev, j->delegated_due_ns - d->cfg->delay_ms * 1000000u);
		j->delegated_due_ns = 0;
		if (!ev.under_oom) {
			log_info("%s: its owner resolved the OOM", j->name);
			set_last(j->last_action, "resolved by its owner");
			metrics_changed(d);
			continue;
		}
		log_notice("%s: its owner did not resolve the OOM in time", j->name);
		if (handle_scope(d, (int)i, &ev, 0) == OOMKIT_KERNEL)
			(void)oomkit_hand_to_kernel(d->ctx, j->watch);
	}
}

/* Fills dec with the kill of candidate pid, as far as uid may choose it. */
static int prompt_kill(struct daemon *d, const struct policy_input *in, const struct protocol_answer *a,
		       uid_t uid, const char *user, struct policy_decision *dec, char *msg, size_t msg_len)
{
	unsigned i;
	pid_t pid = a->pid;

	for (i = 0; i < d->n_prompt_procs; i++)
		if (d->prompt_procs[i].proc.pid == pid && prompt_shows(d, &d->prompt_procs[i], uid))
			break;
	if (i == d->n_prompt_procs) {
		snprintf(msg, msg_len, "%d is not one of the candidates", (int)pid);
		return -EINVAL;
	}
	if (protocol_may_answer(uid, &d->prompt.asker, a, d->prompt_procs[i].proc.uid) < 0) {
		snprintf(msg, msg_len, "permission denied: process %d is not yours", (int)pid);
		return -EPERM;
	}
	dec->action = ACTION_KILL;
	dec->policy = POLICY_PROMPT;
	dec->victim_pid = pid;
	dec->victim_start_time = d->prompt_procs[i].proc.start_time;
	for (unsigned k = 0; k < in->n_procs; k++)
		if (in->procs[k].pid == pid)
			dec->victim_group = in->procs[k].group;
	if (dec->victim_group < 0) {
		snprintf(msg, msg_len, "%d is gone", (int)pid);
		return -ESRCH;
	}
	snprintf(dec->reason, sizeof(dec->reason), "chosen by the user %s: process %d (%s)", user, (int)pid,
		 d->prompt_procs[i].proc.comm);
	return 0;
}

static int prompt_kernel(struct daemon *d, uid_t uid, const char *user, char *msg, size_t msg_len)
{
	int job = d->prompt.job;
	oomkit_watch *watch = job < 0 ? d->machine.watch : d->jobs[job].watch;
	int r = oomkit_hand_to_kernel(d->ctx, watch);

	finish_prompt(d, "kernel", uid, user, NULL, NULL,
		      r == 0 ? "handed to the kernel OOM killer"
			     : "left to the kernel OOM killer after the delay",
		      now_ns(), 0);
	snprintf(msg, msg_len, "the kernel decides");
	return 0;
}

static int prompt_grow(struct policy_input *in, const char *user, struct policy_decision *dec, char *msg,
		       size_t msg_len)
{
	/* Static: in keeps pointing at it after the return. */
	static const struct policy_chain grow_chain = {.steps = {POLICY_GROW}, .n_steps = 1};

	in->chain = &grow_chain;
	in->first_step = 0;
	if (policy_decide(in, dec) < 0 || dec->action != ACTION_GROW) {
		snprintf(msg, msg_len, "cannot grow: %s", dec->trail);
		return -ENOSPC;
	}
	size_t n = strlen(dec->reason);
	snprintf(dec->reason + n, sizeof(dec->reason) - n, "; chosen by the user %s", user);
	return 0;
}

int handle_prompt_answer(struct daemon *d, const struct protocol_answer *ans, uid_t uid, const char *user,
			 char *msg, size_t msg_len)
{
	static pid_t protected_pids[2];
	char answer[64];

	if (protocol_format_answer(ans, answer, sizeof(answer)) < 0 || ans->choice == PROTOCOL_CHOICE_CHAIN) {
		snprintf(msg, msg_len, "usage: %s", protocol_usage(PROTOCOL_ANSWER));
		return -EINVAL;
	}
	if (!d->prompt.active || ans->id != d->prompt.report_id) {
		snprintf(msg, msg_len, "no question %u is waiting", ans->id);
		return -ENOENT;
	}
	if (!prompt_concerns(d, uid)) {
		snprintf(msg, msg_len, "permission denied: question %u does not concern uid %u", ans->id,
			 (unsigned)uid);
		return -EPERM;
	}
	if (ans->choice != PROTOCOL_CHOICE_KILL && protocol_may_answer(uid, &d->prompt.asker, ans, 0) < 0) {
		snprintf(msg, msg_len, "permission denied: only root or the job's owner may %s it",
			 ans->choice == PROTOCOL_CHOICE_GROW ? "grow" : "hand to the kernel");
		return -EPERM;
	}
	if (ans->choice == PROTOCOL_CHOICE_KERNEL)
		return prompt_kernel(d, uid, user, msg, msg_len);

	int job = d->prompt.job;
	struct policy_input in;
	struct policy_decision dec = {.victim_group = -1};
	char result[160];
	const char *rel = job < 0 ? d->machine.rel : d->jobs[job].rel;
	int r;

	if (snapshot(d, job, &in, protected_pids) < 0) {
		snprintf(msg, msg_len, "cannot read the processes");
		return -EIO;
	}
	if (ans->choice == PROTOCOL_CHOICE_KILL)
		r = prompt_kill(d, &in, ans, uid, user, &dec, msg, msg_len);
	else if (ans->choice == PROTOCOL_CHOICE_GROW && job >= 0)
		r = prompt_grow(&in, user, &dec, msg, msg_len);
	else {
		snprintf(msg, msg_len, "answer kill PID%s, kernel or chain", job >= 0 ? ", grow" : "");
		r = -EINVAL;
	}
	if (r < 0)
		return r;
	r = act(d, job, &in, &dec, result, sizeof(result));
	uint64_t acted = now_ns(), freed = r == 0 ? wait_freed(d, rel) : 0;
	finish_prompt(d, answer, uid, user, &in, &dec, result, acted, freed);
	snprintf(msg, msg_len, "%s", result);
	return r;
}

void handle_prompt_declined(struct daemon *d)
{
	if (!d->prompt.active)
		return;
	/* The timer turns the loop: the chain goes on outside the client's callback. */
	d->prompt.declined = true;
	d->prompt.deadline_ns = now_ns();
}
