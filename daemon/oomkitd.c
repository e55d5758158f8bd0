/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkitd.c - the daemon: reads the configuration, creates (or adopts) the
 * machine memcg and one child memcg per job, moves itself into a reserve
 * memcg outside the machine, takes over the OOM handling of the machine and
 * of every job, and runs one event loop for the library's events, the
 * control socket, signals and its own timers (prompts, delegated jobs, and
 * only when configured, periodic metrics and the systemd watchdog).  While
 * nothing happens it does not wake at all: the metrics file is rewritten
 * after each event, not on a clock.
 *
 *   oomkitd [-c|--config FILE] [--check] [--dry-run] [--release]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "oomkitd.h"
#include "privs.h"

#define JSONBUF_LEN (64 * 1024)
#define METRICSBUF_LEN (16 * 1024) /* written out whenever it fills */

static struct daemon D;

static uint64_t tag(uint32_t t, uint32_t index)
{
	return (uint64_t)t << 32 | index;
}

/* ------------------------------------------------------------ config */

static void log_errors(const char *errors)
{
	const char *p = errors;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		log_err("%.*s", n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* Every configuration the daemon takes goes through config_read(), so start,
 * reload, --check and --release accept and refuse the same files.  Before
 * liboomkit has started the memory mount is not known (memory_root NULL);
 * setup_machine() resolves the machine then. */
static int load_config(const char *path, const char *memory_root, struct config **ret)
{
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];
	int r;

	if (!cfg)
		return -ENOMEM;
	r = config_read(path, memory_root, cfg, errors, sizeof(errors));
	if (r < 0) {
		log_errors(errors);
		free(cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}

static int resolve_machine(struct daemon *d)
{
	char errors[CONFIG_ERRORS_MAX];
	int r = config_resolve_machine(d->cfg, oomkit_memory_root(d->ctx), errors, sizeof(errors));

	if (r < 0)
		log_errors(errors);
	return r;
}

/* ------------------------------------------------------------ jobs */

static uint64_t job_delay(const struct daemon *d, const struct config_job *c)
{
	/* A delegated job's owner has the first delay; we act before the second ends. */
	return c->has_owner ? 2 * d->cfg->delay_ms : d->cfg->delay_ms;
}

static bool has_limit(struct daemon *d, const char *rel)
{
	struct oomkit_cgroup_memory m;

	return oomkit_cgroup_memory(d->ctx, rel, &m) >= 0 && m.limit_bytes != OOMKIT_UNLIMITED;
}

static void watch_scope(struct daemon *d, const char *rel, uint64_t delay_ms, oomkit_watch **ret)
{
	int r;

	if (!*ret) {
		r = oomkit_watch_oom(d->ctx, rel, 0, handle_oom_event, d, ret);
		if (r < 0) {
			log_err("%s: cannot watch: %s", rel, strerror(-r));
			return;
		}
	}
	if (d->dry_run)
		return;
	r = oomkit_take_over(d->ctx, *ret, delay_ms);
	if (r == -EINVAL && !has_limit(d, rel))
		/* cgroup v2 holds a cgroup off the kernel killer just below its
		 * limit: without one there is nothing to hold, and no OOM of its
		 * own to handle.  It is taken over once a reload gives it a limit. */
		log_info("%s: no limit, so no OOM of its own to take over", rel);
	else if (r < 0)
		log_err("%s: cannot take over its OOM handling: %s", rel, strerror(-r));
}

/* After a reload changed the limit of a scope: take it over if it is not
 * held.  On cgroup v2 a scope that had no limit could not be. */
static void hold_after_limit(struct daemon *d, const char *rel, uint64_t delay_ms, oomkit_watch **ret)
{
	struct oomkit_cgroup_memory m;

	if (!d->dry_run && oomkit_cgroup_memory(d->ctx, rel, &m) >= 0 && !m.oom_kill_disable)
		watch_scope(d, rel, delay_ms, ret);
}

static void delegate(struct daemon *d, struct job_state *j)
{
	const struct config_job *c = j->cfg;
	struct passwd *pw = getpwuid(c->owner);
	int r = oomkit_cgroup_delegate(d->ctx, j->rel, c->owner, pw ? pw->pw_gid : (gid_t)-1);

	if (r < 0)
		log_err("%s: cannot delegate to uid %u: %s", j->name, (unsigned)c->owner, strerror(-r));
	else
		log_info("%s: delegated to uid %u (%d control files)", j->name, (unsigned)c->owner, r);
}

/* Creates the job's memcg, or adopts an existing one: a limit raised by grow
 * before a restart is kept as long as it is within [limit, limit_max]. */
static void setup_job(struct daemon *d, struct job_state *j)
{
	const struct config_job *c = j->cfg;
	struct oomkit_cgroup_memory m;
	char a[32];
	int r, exists = oomkit_cgroup_exists(d->ctx, j->rel);

	if (exists <= 0 && d->dry_run) {
		log_warning("%s: memcg %s does not exist; dry run: not created, not watched", j->name,
			    j->rel);
		return;
	}
	if (exists <= 0) {
		r = oomkit_cgroup_create(d->ctx, j->rel, c->limit_bytes);
		if (r < 0) {
			log_err("%s: cannot create %s: %s", j->name, j->rel, strerror(-r));
			return;
		}
		value_format_size(c->limit_bytes, a, sizeof(a));
		log_info("%s: created %s, limit %s, priority %u", j->name, j->rel, a, c->priority);
	} else if (oomkit_cgroup_memory(d->ctx, j->rel, &m) >= 0) {
		int n = oomkit_cgroup_pids(d->ctx, j->rel, true, d->pids, DAEMON_MAX_PIDS);
		uint64_t want = m.limit_bytes < c->limit_bytes	     ? c->limit_bytes
				: m.limit_bytes > c->limit_max_bytes ? c->limit_max_bytes
								     : m.limit_bytes;
		if (want != m.limit_bytes && !d->dry_run && (r = oomkit_set_limit(d->ctx, j->rel, want)) < 0)
			log_warning("%s: cannot set the limit: %s", j->name, strerror(-r));
		value_format_size(want, a, sizeof(a));
		log_info("%s: adopted %s with %d processes, limit %s", j->name, j->rel, n < 0 ? 0 : n, a);
	}
	if (c->has_owner && !d->dry_run)
		delegate(d, j);
	watch_scope(d, j->rel, job_delay(d, c), &j->watch);
	(void)handle_oom_count(d, (int)(j - d->jobs), &j->last_oom_count);
}

static struct job_state *find_job(struct daemon *d, const char *name)
{
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0] && strcmp(d->jobs[i].name, name) == 0)
			return &d->jobs[i];
	return NULL;
}

static struct job_state *new_job(struct daemon *d, const struct config_job *c)
{
	struct job_state *j = NULL;

	for (unsigned i = 0; i < d->n_jobs && !j; i++)
		if (!d->jobs[i].name[0])
			j = &d->jobs[i];
	if (!j && d->n_jobs < d->max_jobs)
		j = &d->jobs[d->n_jobs++];
	if (!j)
		return NULL;
	memset(j, 0, sizeof(*j));
	int n = snprintf(j->rel, sizeof(j->rel), "%s/%s", d->machine.rel, c->name);
	if (n < 0 || (size_t)n >= sizeof(j->rel)) {
		log_err("%s: the memcg path is too long", c->name);
		return NULL;
	}
	snprintf(j->name, sizeof(j->name), "%s", c->name);
	j->cfg = c;
	return j;
}

/* ------------------------------------------------------------ reload */

/* Periodic metrics only when metrics_interval is set; by default the file
 * is rewritten on events alone. */
static void schedule_metrics(struct daemon *d)
{
	uint64_t ms = d->cfg->metrics_interval_ms;

	d->next_metrics_ns = ms ? now_ns() + ms * 1000000u : 0;
}

static void reload_job(struct daemon *d, struct job_state *j, const struct config_job *c)
{
	const struct config_job *old = j->cfg;
	int r;

	j->cfg = c;
	if (!d->dry_run && c->limit_bytes != old->limit_bytes &&
	    (r = oomkit_set_limit(d->ctx, j->rel, c->limit_bytes)) < 0)
		log_warning("%s: cannot set the new limit: %s", j->name, strerror(-r));
	if (c->has_owner && (!old->has_owner || old->owner != c->owner) && !d->dry_run)
		delegate(d, j);
	if (job_delay(d, c) != job_delay(d, old) || !j->watch)
		watch_scope(d, j->rel, job_delay(d, c), &j->watch);
	else if (c->limit_bytes != old->limit_bytes)
		hold_after_limit(d, j->rel, job_delay(d, c), &j->watch);
}

int daemon_reload(struct daemon *d)
{
	struct config *n, *old = d->cfg;
	int r = load_config(d->config_path, oomkit_memory_root(d->ctx), &n);

	if (r < 0) {
		log_err("reload: %s has errors; the running configuration stays",
			d->config_path ? d->config_path : "(built-in)");
		return r;
	}
	if (strcmp(n->machine, old->machine) != 0) {
		log_err(
		    "reload: machine cannot change while running (%s -> %s); the running configuration stays",
		    old->machine, n->machine);
		config_free(n);
		free(n);
		return -EINVAL;
	}
	if (strcmp(n->socket, old->socket) != 0) {
		log_warning("reload: the socket moves only on restart; still %s", old->socket);
		snprintf(n->socket, sizeof(n->socket), "%s", old->socket);
	}
	d->cfg = n;
	if (!d->dry_run && n->machine_limit_bytes != old->machine_limit_bytes &&
	    n->machine_limit_bytes != OOMKIT_UNLIMITED &&
	    (r = oomkit_set_limit(d->ctx, d->machine.rel, n->machine_limit_bytes)) < 0)
		log_warning("reload: cannot set the machine limit: %s", strerror(-r));
	if (n->delay_ms != old->delay_ms)
		watch_scope(d, d->machine.rel, n->delay_ms, &d->machine.watch);
	else if (n->machine_limit_bytes != old->machine_limit_bytes)
		hold_after_limit(d, d->machine.rel, n->delay_ms, &d->machine.watch);
	if (strcmp(n->report_dir, old->report_dir) != 0 && (r = reports_open_dir(d)) < 0)
		log_warning("reload: report directory %s: %s", n->report_dir, strerror(-r));

	for (unsigned i = 0; i < d->n_jobs; i++) {
		struct job_state *j = &d->jobs[i];
		if (!j->name[0] || config_find_job(n, j->name))
			continue;
		log_notice("reload: %s is no longer configured; its memcg is left as it is, unwatched",
			   j->name);
		if (j->watch)
			oomkit_unwatch(d->ctx, j->watch);
		memset(j, 0, sizeof(*j));
	}
	for (unsigned i = 0; i < n->n_jobs; i++) {
		const struct config_job *c = &n->jobs[i];
		struct job_state *j = find_job(d, c->name);
		if (j) {
			reload_job(d, j, c);
		} else if ((j = new_job(d, c))) {
			setup_job(d, j);
		} else {
			log_err(
			    "reload: no room for job %s: oomkitd started with room for %u jobs; restart it "
			    "to take more",
			    c->name, d->max_jobs);
		}
	}
	if (n->metrics_interval_ms != old->metrics_interval_ms)
		schedule_metrics(d);
	config_free(old);
	free(old);
	log_notice("reloaded %s: %u jobs", d->config_path ? d->config_path : "(built-in)", n->n_jobs);
	metrics_write(d);
	return 0;
}

/* ------------------------------------------------------------ setup */

static int setup_machine(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	int r;

	if ((r = resolve_machine(d)) < 0)
		return r;
	snprintf(d->machine.rel, sizeof(d->machine.rel), "%s", cfg->machine_rel);
	if (!d->dry_run) {
		r = oomkit_cgroup_create(d->ctx, d->machine.rel, cfg->machine_limit_bytes);
		if (r < 0) {
			log_err("cannot create the machine %s: %s", cfg->machine, strerror(-r));
			return r;
		}
		log_info("machine %s %s", cfg->machine, r ? "created" : "adopted");
	} else if (oomkit_cgroup_exists(d->ctx, d->machine.rel) <= 0) {
		log_err("machine %s does not exist (dry run creates nothing)", cfg->machine);
		return -ENOENT;
	}
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		struct job_state *j = new_job(d, &cfg->jobs[i]);
		if (j)
			setup_job(d, j);
	}
	watch_scope(d, d->machine.rel, cfg->delay_ms, &d->machine.watch);
	r = oomkit_watch_pressure(d->ctx, d->machine.rel, OOMKIT_PRESSURE_CRITICAL, 0, handle_pressure_event,
				  d, &d->machine.pressure_watch);
	if (r < 0)
		log_warning("machine: no pressure warnings: %s", strerror(-r));
	(void)handle_oom_count(d, -1, &d->machine.last_oom_count);
	return d->machine.watch ? 0 : -EIO;
}

/* Whether the daemon runs as a systemd service on cgroup v2, in its unit's
 * own cgroup; that cgroup's path goes to cg.  There the unit is the reserve:
 * systemd protects and bounds it (MemoryMin=, MemoryMax= in the unit) and
 * tracks the service by it, so moving into a memcg of our own would take the
 * daemon away from systemd.  ($INVOCATION_ID is set for every service run.)
 * On v1 the memory hierarchy is not the one systemd tracks processes in. */
static bool reserve_is_unit(struct daemon *d, char *cg, size_t len)
{
	const char *invocation = getenv("INVOCATION_ID");
	static const char suffix[] = ".service";
	size_t n;

	if (!invocation || !*invocation || oomkit_backend(d->ctx) != OOMKIT_BACKEND_V2 ||
	    oomkit_process_cgroup(d->ctx, getpid(), cg, len) < 0)
		return false;
	n = strlen(cg);
	return n > sizeof(suffix) - 1 && strcmp(cg + n - (sizeof(suffix) - 1), suffix) == 0;
}

/* The daemon's own memcg sits beside the machine, never inside it. */
static int enter_reserve(struct daemon *d)
{
	char rel[DAEMON_REL_MAX + 16];
	int r;

	if (d->dry_run || d->cfg->reserve_bytes == 0)
		return 0;
	if (reserve_is_unit(d, rel, sizeof(rel))) {
		log_info("running in %s: the unit's memory protection and limit are the reserve", rel);
		return 0;
	}
	snprintf(rel, sizeof(rel), "%s-daemon", d->machine.rel);
	r = oomkit_enter_reserve(d->ctx, rel, d->cfg->reserve_bytes);
	if (r < 0)
		log_err("cannot enter the reserve memcg %s: %s", rel, strerror(-r));
	else
		log_info("running in %s with %" PRIu64 " MiB of headroom", rel, d->cfg->reserve_bytes >> 20);
	return r;
}

static int setup_loop(struct daemon *d)
{
	sigset_t mask;
	struct epoll_event ev;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sigfd < 0 || d->timerfd < 0 || d->epfd < 0)
		return -errno;
	ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = tag(TAG_SIGNAL, 0)};
	epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sigfd, &ev);
	ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = tag(TAG_TIMER, 0)};
	epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->timerfd, &ev);
	ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = tag(TAG_LIB, 0)};
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, oomkit_fd(d->ctx), &ev) < 0)
		return -errno;
	return 0;
}

unsigned daemon_job_room(unsigned configured)
{
	unsigned n = configured * 2;

	return n < 64 ? 64 : n > CONFIG_MAX_JOBS ? CONFIG_MAX_JOBS : n;
}

/* Called after oomkit_new(): the guardian forked there, and what is allocated
 * from now on is the daemon's alone (a fork would give the guardian a copy,
 * and its mlockall would make every page of it resident). */
static int alloc_buffers(struct daemon *d)
{
	d->max_jobs = daemon_job_room(d->cfg->n_jobs);
	d->jobs = calloc(d->max_jobs, sizeof(*d->jobs));
	d->groups = calloc(d->max_jobs + 1, sizeof(*d->groups));
	d->group_of_job = calloc(d->max_jobs, sizeof(*d->group_of_job));
	d->pids = calloc(DAEMON_MAX_PIDS, sizeof(*d->pids));
	d->procs = calloc(DAEMON_MAX_PIDS, sizeof(*d->procs));
	d->prompt_procs = calloc(DAEMON_MAX_PIDS, sizeof(*d->prompt_procs));
	d->reports = calloc(DAEMON_MAX_REPORTS, sizeof(*d->reports));
	d->jsonbuf_len = JSONBUF_LEN;
	d->jsonbuf = calloc(1, d->jsonbuf_len);
	d->metricsbuf_len = METRICSBUF_LEN;
	d->metricsbuf = calloc(1, d->metricsbuf_len);
	return d->jobs && d->groups && d->group_of_job && d->pids && d->procs && d->prompt_procs &&
		       d->reports && d->jsonbuf && d->metricsbuf
		   ? 0
		   : -ENOMEM;
}

/* ------------------------------------------------------------ loop */

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return b && b < a ? b : a;
}

/* Pinging at half the watchdog interval leaves the manager a margin; an
 * absurd interval (more than a year) is taken as a year. */
static uint64_t watchdog_interval_ns(const struct daemon *d)
{
	const uint64_t year_usec = 366ull * 24 * 3600 * 1000000;
	uint64_t usec = d->watchdog_usec < year_usec ? d->watchdog_usec : year_usec;

	return usec * 1000u / 2;
}

/* The timer runs only for what is due: a prompt's deadline, a delegated
 * job's turn, and the metrics and watchdog intervals when they are set.  With
 * none of these it is disarmed and the daemon sleeps until the kernel, a
 * signal or a client has something for it. */
static void arm_timer(struct daemon *d)
{
	uint64_t next = earliest(UINT64_MAX, d->next_metrics_ns);
	struct itimerspec its = {0};

	next = earliest(next, d->next_watchdog_ns);
	if (d->prompt.active)
		next = earliest(next, d->prompt.deadline_ns);
	for (unsigned i = 0; i < d->n_jobs; i++)
		if (d->jobs[i].name[0])
			next = earliest(next, d->jobs[i].delegated_due_ns);
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(d->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Tells the service manager, if there is one, how the daemon is doing.  A
 * failure is logged once: a manager that went away must not fill the log. */
static void notify(struct daemon *d, const char *state)
{
	static bool warned;
	int r = notify_send(&d->notifier, state);

	if (r < 0 && !warned) {
		warned = true;
		log_warning("cannot notify the service manager: %s", strerror(-r));
	}
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_notice("SIGHUP: reloading");
			char state[64];
			snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
				 now_ns() / 1000u);
			notify(d, state);
			(void)daemon_reload(d);
			notify(d, "READY=1");
		} else {
			log_notice("signal %u: stopping", si.ssi_signo);
			d->stop = true;
		}
	}
}

static void on_timer(struct daemon *d)
{
	uint64_t expirations, now = now_ns();

	(void)!read(d->timerfd, &expirations, sizeof(expirations));
	handle_timers(d, now);
	if (d->next_metrics_ns && now >= d->next_metrics_ns) {
		d->next_metrics_ns = now + d->cfg->metrics_interval_ms * 1000000u;
		metrics_changed(d);
	}
	if (d->next_watchdog_ns && now >= d->next_watchdog_ns) {
		d->next_watchdog_ns = now + watchdog_interval_ns(d);
		notify(d, "WATCHDOG=1");
	}
}

static int run(struct daemon *d)
{
	struct epoll_event evs[32];

	schedule_metrics(d);
	d->next_watchdog_ns = d->watchdog_usec ? now_ns() + watchdog_interval_ns(d) : 0;
	while (!d->stop) {
		arm_timer(d);
		int n = epoll_wait(d->epfd, evs, 32, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			uint32_t t = (uint32_t)(evs[i].data.u64 >> 32), index = (uint32_t)evs[i].data.u64;
			if (t == TAG_LIB)
				(void)oomkit_dispatch(d->ctx, 0);
			else if (t == TAG_SIGNAL)
				on_signal(d);
			else if (t == TAG_TIMER)
				on_timer(d);
			else if (t == TAG_LISTEN)
				control_accept(d);
			else if (t == TAG_CLIENT)
				control_client_event(d, (int)index, evs[i].events);
		}
		if (d->metrics_dirty) {
			d->metrics_dirty = false;
			metrics_write(d);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: oomkitd [-c|--config FILE] [--check] [--dry-run] [--release] [--no-seccomp]\n"
		   "  -c, --config FILE  configuration (default: the built-in one)\n"
		   "      --check        validate the configuration and exit\n"
		   "      --dry-run      decide and report, but change and kill nothing\n"
		   "      --release      give the kernel OOM killer back to the machine and every\n"
		   "                     cgroup below it, and exit (after the daemon was killed)\n"
		   "      --no-seccomp   run without the system call filter (debugging)\n"
		   "  -h, --help         this text\n");
}

/* AddressSanitizer reserves terabytes of shadow memory: locking it all would
 * exhaust the machine, so a sanitizer build runs unlocked. */
static bool sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return true;
#else
	return false;
#endif
#else
	return false;
#endif
}

/* $NOTIFY_SOCKET and $WATCHDOG_USEC come from the service manager; without
 * them (started by hand, or by the tests) the daemon notifies nobody. */
static void setup_notify(struct daemon *d)
{
	const char *address = getenv("NOTIFY_SOCKET");
	int r = notify_open(&d->notifier, address);

	if (r < 0)
		log_warning("NOTIFY_SOCKET=%s: %s; the service manager is not notified", address,
			    strerror(-r));
	r = notify_watchdog(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), getpid(), &d->watchdog_usec);
	if (r < 0)
		log_warning("WATCHDOG_USEC or WATCHDOG_PID is not a number; no watchdog pings");
	if (r > 0 && d->notifier.fd < 0)
		log_warning("WATCHDOG_USEC is set but there is no NOTIFY_SOCKET to ping");
	if (r <= 0 || d->notifier.fd < 0)
		d->watchdog_usec = 0;
	else
		log_info("watchdog: a ping every %" PRIu64 " ms", d->watchdog_usec / 2000u);
}

static int start(struct daemon *d)
{
	struct oomkit_options opts;
	int r;

	oomkit_options_init(&opts);
	opts.max_pids = DAEMON_MAX_PIDS;
	/* A watch per job slot, the machine's OOM and pressure watches, and room. */
	opts.max_cgroups = daemon_job_room(d->cfg->n_jobs) + 16;
	opts.guardian = !d->dry_run;
	opts.protect = !d->dry_run && geteuid() == 0;
	opts.mlock = !d->dry_run && geteuid() == 0 && !sanitized();
	opts.log = log_liboomkit;
	if ((r = oomkit_new(&opts, &d->ctx)) < 0) {
		log_err("cannot start liboomkit: %s", strerror(-r));
		return r;
	}
	if ((r = alloc_buffers(d)) < 0)
		return r;
	if ((r = setup_loop(d)) < 0 || (r = setup_machine(d)) < 0)
		return r;
	if ((r = enter_reserve(d)) < 0)
		return r;
	if ((r = reports_open_dir(d)) < 0)
		log_warning("report directory %s: %s; reports are not written", d->cfg->report_dir,
			    strerror(-r));
	if ((r = control_listen(d)) < 0) {
		log_err("control socket %s: %s", d->cfg->socket, strerror(-r));
		return r;
	}
	setup_notify(d);
	return 0;
}

/* Gives the kernel OOM killer back to rel and every cgroup below it. */
struct release_walk {
	oomkit_ctx *ctx;
	char path[DAEMON_REL_MAX];
	unsigned released, failed;
};

static int release_tree(struct release_walk *w);

static int release_child(const char *name, void *userdata)
{
	struct release_walk *w = userdata;
	size_t n = strlen(w->path);
	if (n + 1 + strlen(name) >= sizeof(w->path))
		return 0;
	snprintf(w->path + n, sizeof(w->path) - n, "/%s", name);
	(void)release_tree(w);
	w->path[n] = '\0';
	return 0;
}

static int release_tree(struct release_walk *w)
{
	int r = oomkit_set_kernel_killer(w->ctx, w->path, true);
	if (r < 0 && r != -ENOENT) {
		log_err("%s: cannot give the kernel OOM killer back: %s", w->path, strerror(-r));
		w->failed++;
	} else if (r == 0) {
		w->released++;
	}
	return oomkit_cgroup_children(w->ctx, w->path, release_child, w);
}

/* For the unit's ExecStopPost: a daemon killed together with its guardian
 * (a whole-unit SIGKILL) leaves the memcgs it held with their kernel killer
 * off and nobody watching; this gives every one of them back. */
static int release_all(struct daemon *d)
{
	struct oomkit_options opts;
	struct release_walk w = {0};
	int r;

	oomkit_options_init(&opts);
	opts.guardian = false;
	opts.log = log_liboomkit;
	if ((r = oomkit_new(&opts, &d->ctx)) < 0) {
		log_err("cannot start liboomkit: %s", strerror(-r));
		return r;
	}
	w.ctx = d->ctx;
	r = resolve_machine(d);
	snprintf(w.path, sizeof(w.path), "%s", d->cfg->machine_rel);
	if (r == 0 && oomkit_cgroup_exists(d->ctx, w.path) == 1)
		(void)release_tree(&w);
	log_notice("released: the kernel OOM killer is back in %u cgroups%s", w.released,
		   w.failed ? " (some failed)" : "");
	oomkit_free(d->ctx);
	d->ctx = NULL;
	return r < 0 || w.failed ? -EIO : 0;
}

/* --check: the configuration as start would take it, the machine resolved
 * against this machine's memory mount (a context without a guardian only
 * finds the mount; nothing is created or changed). */
static int check_config(const char *path)
{
	struct oomkit_options opts;
	oomkit_ctx *ctx = NULL;
	struct config *cfg = malloc(sizeof(*cfg));
	char errors[CONFIG_ERRORS_MAX];
	int r;

	if (!cfg)
		return -ENOMEM;
	oomkit_options_init(&opts);
	opts.guardian = false;
	opts.protect = false;
	opts.max_cgroups = 1;
	if (oomkit_new(&opts, &ctx) < 0)
		ctx = NULL;
	r = config_read(path, ctx ? oomkit_memory_root(ctx) : NULL, cfg, errors, sizeof(errors));
	oomkit_free(ctx);
	if (r < 0) {
		fputs(errors, stderr);
		free(cfg);
		return r;
	}
	if (!ctx)
		fprintf(stderr,
			"%s: no memory cgroup mount here: the machine path is not checked against it\n",
			cfg->source);
	printf("%s: ok, %u job%s\n", cfg->source, cfg->n_jobs, cfg->n_jobs == 1 ? "" : "s");
	config_free(cfg);
	free(cfg);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check", no_argument, NULL, 'C'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {"no-seccomp", no_argument, NULL, 'S'},
	    {"release", no_argument, NULL, 'R'},
	    {NULL, 0, NULL, 0},
	};
	struct daemon *d = &D;
	bool check = false, seccomp = true, release = false;
	int opt, r;

	d->report_dirfd = -1;
	d->listen_fd = -1;
	d->prompt.report_fd = -1;
	d->notifier.fd = -1;
	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			d->config_path = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'n':
			d->dry_run = true;
			break;
		case 'S':
			seccomp = false;
			break;
		case 'R':
			release = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (check)
		return check_config(d->config_path) < 0 ? 1 : 0;
	if (load_config(d->config_path, NULL, &d->cfg) < 0)
		return 1;
	if (release)
		return release_all(d) < 0 ? 1 : 0;
	/* Capabilities and system calls are cut before liboomkit forks its guardian. */
	r = privs_restrict(seccomp);
	if (r == 0)
		r = start(d);
	if (r == 0)
		r = privs_setup_done();
	if (r == 0) {
		metrics_write(d);
		notify(d, "READY=1");
		log_notice("oomkitd ready: machine %s, %u jobs%s, socket %s", d->cfg->machine, d->cfg->n_jobs,
			   d->dry_run ? ", dry run" : "", d->cfg->socket);
		r = run(d);
		notify(d, "STOPPING=1");
	}
	control_close_all(d);
	if (d->prompt.active && d->prompt.report_fd >= 0)
		close(d->prompt.report_fd);
	/* Every taken-over memcg gets the kernel OOM killer back. */
	oomkit_free(d->ctx);
	log_notice("oomkitd stopped");
	if (d->report_dirfd >= 0)
		close(d->report_dirfd);
	notify_close(&d->notifier);
	if (d->cfg)
		config_free(d->cfg);
	free(d->cfg);
	free(d->jobs);
	free(d->groups);
	free(d->group_of_job);
	free(d->pids);
	free(d->procs);
	free(d->prompt_procs);
	free(d->reports);
	free(d->jsonbuf);
	free(d->metricsbuf);
	return r < 0 ? 1 : 0;
}
