/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - oomkitd: reads the configuration, starts liboomkit (and its
 * guardian), sets up the modules and wires them together, makes the scopes
 * real (jobs.c), moves into its reserve memcg, opens the control socket,
 * tells the service manager it is ready, and runs the loop.  A reload (SIGHUP
 * or `oomkit reload`) comes back here through the loop: a configuration with
 * errors keeps the running one.  See docs/architecture.md for the modules.
 *
 *   oomkitd [-c|--config FILE] [--check] [--dry-run] [--release] [--version]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "oom/actions.h"
#include "scope/adopt.h"
#include "oom/chain.h"
#include "base/clock.h"
#include "config/config.h"
#include "control/control.h"
#include "oom/freeze.h"
#include "scope/handler.h"
#include "oom/hooks.h"
#include "oom/inflight.h"
#include "scope/jobs.h"
#include "oom/lend.h"
#include "base/log.h"
#include "base/loop.h"
#include "scope/lowmem.h"
#include "scope/protect.h"
#include "report/metrics.h"
#include "base/notify.h"
#include "base/privs.h"
#include "oom/prompt.h"
#include "scope/release.h"
#include "report/reports.h"
#include "base/runlock.h"
#include "scope/scope.h"
#include "scope/sdbus.h"
#include "oom/shed.h"
#include "oom/snapshot.h"
#include "report/stats.h"
#include "base/users.h"

#define MAX_PIDS 4096
/* Slots for instances, on top of the jobs', when the configuration at start
 * has patterns (a reload cannot grow the table). */
#define INSTANCE_ROOM 512

struct daemon {
	struct config *cfg;
	const char *config_path; /* NULL: the built-in configuration */
	bool config_optional;	 /* --config-if-exists: NULL when it is not there */
	bool dry_run;
	oomkit_ctx *ctx;
	struct loop loop;
	struct scopes scopes;
	struct stats stats;
	struct snapshot snap;
	struct reports reports;
	struct prompt prompt;
	struct freeze freeze;
	struct actions actions;
	struct inflight inflight;
	struct lend lend;
	struct hooks hooks;
	struct shed shed;
	struct metrics metrics;
	struct chain chain;
	struct handler handler;
	struct jobs jobs;
	struct adopt adopt;
	struct lowmem lowmem;
	struct protect protect;
	struct control control;
	struct sdbus sdbus; /* sock -1: no systemd helper */
	pid_t *control_pids;
	struct notifier notifier; /* $NOTIFY_SOCKET; fd -1: not under a service manager */
	uint64_t watchdog_usec;	  /* 0: no watchdog */
	struct loop_timer watchdog;
	bool kept_ptrace;			  /* CAP_SYS_PTRACE kept at start, for exe: rules */
	struct runlock socket_lock, machine_lock; /* one daemon per socket, per machine */
};

/* ------------------------------------------------------------ config */

/* The file to read now: --config-if-exists gives the built-in default while
 * the file does not exist (looked at again at each reload). */
static const char *config_file(const struct daemon *d)
{
	if (d->config_optional && d->config_path && access(d->config_path, F_OK) < 0 && errno == ENOENT)
		return NULL;
	return d->config_path;
}

/* The memory mount as the configuration is resolved against it, and the
 * machine's memory (from the context's /proc) that sizes in percent are of. */
static struct config_mount mount_of(oomkit_ctx *ctx)
{
	struct oomkit_system_memory mem = {0};

	(void)oomkit_system_memory(ctx, &mem);
	return (struct config_mount){.root = oomkit_memory_root(ctx),
				     .v2 = oomkit_backend(ctx) == OOMKIT_BACKEND_V2,
				     .systemd = access("/run/systemd/system", F_OK) == 0,
				     .mem_total_bytes = mem.total_bytes};
}

/* Every configuration the daemon takes goes through config_read(), so start,
 * reload, --check and --release accept and refuse the same files.  Before
 * liboomkit has started the memory mount is not known (memory_root NULL);
 * resolve_machine() resolves the machine then.  0, or -errno with the
 * errors in errors. */
static int parse_config(const char *path, const struct config_mount *mount, struct config **ret, char *errors,
			size_t len)
{
	struct config *cfg = malloc(sizeof(*cfg));
	int r;

	if (!cfg)
		return -ENOMEM;
	r = config_read(path, mount, cfg, errors, len);
	if (r < 0) {
		free(cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}

static int load_config(const char *path, const struct config_mount *mount, struct config **ret)
{
	char errors[CONFIG_ERRORS_MAX];
	int r = parse_config(path, mount, ret, errors, sizeof(errors));

	if (r < 0)
		log_lines(LOG_LEVEL_ERR, errors);
	return r;
}

/* The configuration's machine against the memory mount liboomkit found. */
static int resolve_machine(struct config *cfg, oomkit_ctx *ctx)
{
	char errors[CONFIG_ERRORS_MAX];
	struct config_mount mount = mount_of(ctx);
	int r = config_resolve_machine(cfg, &mount, errors, sizeof(errors));

	if (r < 0)
		log_lines(LOG_LEVEL_ERR, errors);
	return r;
}

static void drop_config(struct config *cfg)
{
	if (cfg)
		config_free(cfg);
	free(cfg);
}

/* The memory mount as a context that only looks finds it (no guardian,
 * nothing created or changed), its root copied into root: what --check and
 * the built-in default resolve against before liboomkit starts.  false:
 * no memory cgroup mount here. */
static bool probe_mount(struct config_mount *mount, char *root, size_t len)
{
	struct oomkit_options opts;
	oomkit_ctx *ctx = NULL;

	oomkit_options_init(&opts);
	opts.guardian = false;
	opts.protect = false;
	opts.max_cgroups = 1;
	if (oomkit_new(&opts, &ctx) < 0)
		return false;
	*mount = mount_of(ctx);
	snprintf(root, len, "%s", mount->root);
	mount->root = root;
	oomkit_free(ctx);
	return true;
}

/* With no file, --check says what the built-in default is on this machine,
 * as a file that would say the same. */
static void print_builtin(const struct config *cfg, const struct config_mount *mount)
{
	char text[4096], chain[256];
	const char *t = config_builtin_text(mount, text, sizeof(text));

	if (t[0]) {
		fputs(t, stdout);
		return;
	}
	config_format_chain(&cfg->chain, chain, sizeof(chain));
	printf("# the built-in default: every key at its default, no jobs\n[oomkitd]\nmachine = %s\n"
	       "policy = %s\n",
	       cfg->machine, chain);
}

/* --check says which machine the daemon will manage, in which hierarchy,
 * and whether the file named it or the hierarchy's default applies. */
static void print_machine(const struct config *cfg, const struct config_mount *mount, bool file)
{
	char where[CONFIG_PATH_MAX + 32];

	if (cfg->builtin && cfg->machine_line)
		snprintf(where, sizeof(where), "the built-in default's");
	else if (cfg->machine_line)
		snprintf(where, sizeof(where), "named at %s:%u", cfg->source, cfg->machine_line);
	else
		snprintf(where, sizeof(where), "the default%s", file ? ": the file names no machine" : "");
	if (!mount) {
		printf("machine: %s (%s; no memory cgroup mount here to resolve it against)\n", cfg->machine,
		       where);
		return;
	}
	printf("machine: %s, %s (%s)\n", cfg->machine,
	       cfg->machine_is_root ? "the root of the cgroup v2 hierarchy"
	       : mount->v2	    ? "a cgroup in the cgroup v2 hierarchy"
				    : "a memcg in the cgroup v1 memory hierarchy",
	       where);
	printf("hierarchy: cgroup %s, memory controller at %s%s\n", mount->v2 ? "v2" : "v1", mount->root,
	       mount->systemd ? ", systemd runs this machine" : "");
}

/* With no job the daemon handles no OOM: a daemon that runs and protects
 * nothing looks like one that works, so start, reload and --check say so,
 * why (on cgroup v1 there is no built-in default to fall back on) and what
 * to do.  "" when there is a job. */
static const char *no_job_advice(const struct config *cfg, const struct config_mount *mount, const char *path,
				 char *buf, size_t len)
{
	const char *why = !mount       ? "no memory cgroup mount here"
			  : !mount->v2 ? "the memory controller is on cgroup v1, which has no built-in jobs"
			  : !mount->systemd
			      ? "systemd's units are the built-in jobs, and systemd does not run this machine"
			      : "the file names none";

	if (cfg->n_jobs > 0)
		return "";
	snprintf(buf, len,
		 "no job: oomkitd handles no OOM on this machine (%s); add [job NAME] sections to %s: "
		 "see EXAMPLES in oomkitd.conf(5) (man oomkitd.conf)",
		 why, path ? path : OOMKIT_SYSCONFDIR "/oomkit/oomkitd.conf");
	return buf;
}

/* --check: the configuration as start would take it, the machine resolved
 * against this machine's memory mount. */
static int check_config(const char *path)
{
	char errors[CONFIG_ERRORS_MAX], root[CONFIG_PATH_MAX], advice[CONFIG_ERRORS_MAX];
	struct config_mount mount = {0};
	struct config *cfg;
	bool found = probe_mount(&mount, root, sizeof(root));
	int r = parse_config(path, found ? &mount : NULL, &cfg, errors, sizeof(errors));

	if (r < 0) {
		fputs(errors, stderr);
		return 1;
	}
	if (!found)
		fprintf(stderr,
			"%s: no memory cgroup mount here: the machine path is not checked against it\n",
			cfg->source);
	if (path && cfg->builtin)
		printf("# %s names no machine and no job: this machine's built-in default is its scope\n",
		       path);
	if (!path || cfg->builtin)
		print_builtin(cfg, found ? &mount : NULL);
	/* As start would log it: the configuration is good, its hooks would not run. */
	if (cfg->n_commands > 0 && access(hooks_runner(), X_OK) < 0)
		fprintf(stderr, "%s: the hook runner %s: %s; hooks will not run\n", cfg->source,
			hooks_runner(), strerror(errno));
	printf("%s: ok, %u job%s\n", cfg->source, cfg->n_jobs, cfg->n_jobs == 1 ? "" : "s");
	print_machine(cfg, found ? &mount : NULL, path != NULL);
	if (config_prompt_warnings(cfg, advice, sizeof(advice)) > 0)
		fputs(advice, stderr);
	if (cfg->n_jobs == 0)
		fprintf(stderr, "%s: warning: %s\n", cfg->source,
			no_job_advice(cfg, found ? &mount : NULL, path, advice, sizeof(advice)));
	drop_config(cfg);
	return 0;
}

/* Every module that keeps settings gets the new configuration.  Returns
 * the report directory's error: -EBUSY when another daemon has it. */
static int configure(struct daemon *d)
{
	int r;

	chain_configure(&d->chain, d->cfg);
	d->freeze.enabled = d->cfg->prompt_freeze;
	snapshot_configure(&d->snap, d->cfg);
	lend_configure(&d->lend, d->cfg->reserve_bytes);
	hooks_configure(&d->hooks, d->cfg->hook_memory_bytes);
	handler_configure(&d->handler, d->cfg);
	lowmem_configure(&d->lowmem, d->cfg);
	if (d->protect.ctx && !d->dry_run)
		protect_configure(&d->protect, d->cfg);
	metrics_configure(&d->metrics, d->cfg);
	control_configure(&d->control, d->cfg);
	if ((r = reports_configure(&d->reports, d->cfg)) < 0 && r != -EBUSY)
		log_warning("report directory %s: %s; reports are not written", d->cfg->report_dir,
			    strerror(-r));
	return r;
}

/* ------------------------------------------------------------ notify */

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

/* Pinging at half the watchdog interval leaves the manager a margin; an
 * absurd interval (more than a year) is taken as a year. */
static uint64_t watchdog_interval_ns(const struct daemon *d)
{
	const uint64_t year_usec = 366ull * 24 * 3600 * 1000000;
	uint64_t usec = d->watchdog_usec < year_usec ? d->watchdog_usec : year_usec;

	return usec * 1000u / 2;
}

static void on_watchdog(void *data, uint64_t now)
{
	struct daemon *d = data;

	d->watchdog.due_ns = now + watchdog_interval_ns(d);
	notify(d, "WATCHDOG=1");
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

/* ------------------------------------------------------------ reload */

static int apply_reload(struct daemon *d)
{
	struct config *n, *old = d->cfg;
	struct config_mount mount = mount_of(d->ctx);
	const char *path = config_file(d);
	int r = load_config(path, &mount, &n);

	if (r < 0) {
		log_err("reload: %s has errors; the running configuration stays", path ? path : "(built-in)");
		return r;
	}
	if (strcmp(n->machine, old->machine) != 0) {
		log_err(
		    "reload: machine cannot change while running (%s -> %s); the running configuration stays",
		    old->machine, n->machine);
		drop_config(n);
		return -EINVAL;
	}
	if (adopt_check_self(&d->adopt, n) < 0) {
		log_err("reload: %s has errors; the running configuration stays", path ? path : "(built-in)");
		drop_config(n);
		return -EINVAL;
	}
	if (!d->kept_ptrace && config_exe_rule_line(n) && geteuid() == 0) {
		log_err(
		    "reload: %s:%u: an exe: rule needs cap_sys_ptrace, which this oomkitd gave up at start "
		    "(it had no exe: rule then): restart it; the running configuration stays",
		    n->source, config_exe_rule_line(n));
		drop_config(n);
		return -EINVAL;
	}
	if (reports_check_lock(&d->reports, n->report_dir) == -EBUSY) {
		log_err("reload: %s:report_dir: %s is another oomkitd's; the running configuration stays",
			n->source, n->report_dir);
		drop_config(n);
		return -EBUSY;
	}
	if (strcmp(n->socket, old->socket) != 0) {
		log_warning("reload: the socket moves only on restart; still %s", old->socket);
		snprintf(n->socket, sizeof(n->socket), "%s", old->socket);
	}
	d->cfg = n;
	jobs_reload(&d->jobs, n);
	adopt_reload(&d->adopt, n);
	(void)configure(d);
	drop_config(old);
	log_notice("reloaded %s: %u jobs", path ? path : "(built-in)", n->n_jobs);
	if (n->n_jobs == 0) {
		char advice[CONFIG_PATH_MAX + 512];
		log_warning("%s", no_job_advice(n, &mount, path, advice, sizeof(advice)));
	}
	metrics_write(&d->metrics);
	return 0;
}

/* The loop's reload: SIGHUP or a control client's `reload`. */
static int reload(void *data)
{
	struct daemon *d = data;
	char state[64];

	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_ns() / 1000u);
	notify(d, state);
	int r = apply_reload(d);
	notify(d, "READY=1");
	return r;
}

/* ------------------------------------------------------------ start */

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

static void on_library(void *data, uint32_t index, uint32_t events)
{
	struct daemon *d = data;

	(void)index;
	(void)events;
	(void)oomkit_dispatch(d->ctx, 0);
	lowmem_woken(&d->lowmem, now_ns());
}

/* Job slots: for the configured jobs, and for instances if there are patterns. */
static unsigned room(const struct config *cfg)
{
	return scopes_room(cfg->n_jobs + (cfg->n_cgroups ? INSTANCE_ROOM : 0));
}

/* The library's limits callback: systemd hears of each change in a unit's
 * cgroup (sdbus.c sends without waiting or allocating). */
static void on_limits(oomkit_ctx *ctx, const char *cgroup, uint64_t high_bytes, uint64_t max_bytes,
		      void *data)
{
	struct daemon *d = data;
	(void)ctx;
	sdbus_limits(&d->sdbus, cgroup, high_bytes, max_bytes);
}

/* On a systemd machine, the helper that tells systemd what the daemon
 * changes in its units (sdbus.h).  Started before the daemon cuts its
 * capabilities and system calls: the helper has a bus to talk to, the
 * daemon only a socket pair. */
static void start_systemd_helper(struct daemon *d)
{
	char state[CONFIG_SOCKET_MAX + 32];

	if (d->dry_run || !sdbus_systemd_machine("/sys/fs/cgroup") ||
	    sdbus_state_path(d->cfg->socket, state, sizeof(state)) < 0)
		return;
	(void)sdbus_start(&d->sdbus, state);
}

static int start_library(struct daemon *d)
{
	struct oomkit_options opts;
	int r;

	oomkit_options_init(&opts);
	opts.max_pids = MAX_PIDS;
	/* A watch per job slot, the machine's OOM and pressure watches, and room. */
	opts.max_cgroups = room(d->cfg) + 16;
	opts.guardian = !d->dry_run;
	opts.protect = !d->dry_run && geteuid() == 0;
	opts.mlock = !d->dry_run && geteuid() == 0 && !sanitized();
	opts.log = log_liboomkit;
	if (d->sdbus.sock >= 0) {
		opts.limits = on_limits;
		opts.limits_userdata = d;
	}
	if ((r = oomkit_new(&opts, &d->ctx)) < 0)
		log_err("cannot start liboomkit: %s", strerror(-r));
	return r;
}

/* The growers held still while a person decides (freeze.h): what a daemon
 * before this one left frozen is thawed now. */
static int start_freeze(struct daemon *d)
{
	char record[CONFIG_PATH_MAX + 32];

	if (d->dry_run)
		return freeze_init(&d->freeze, d->ctx, &d->loop, &d->prompt, NULL);
	return freeze_init(&d->freeze, d->ctx, &d->loop, &d->prompt,
			   freeze_record_path(d->cfg->report_dir, record, sizeof(record)) == 0 ? record
											       : NULL);
}

/* Called after oomkit_new(): the guardian forked there, and what is allocated
 * from now on is the daemon's alone (a fork would give the guardian a copy,
 * and its mlockall would make every page of it resident). */
static void on_protect_changed(void *data)
{
	metrics_changed(data);
}

static int setup_modules(struct daemon *d)
{
	int r, source;

	if ((r = loop_init(&d->loop)) < 0 || (r = scopes_init(&d->scopes, room(d->cfg))) < 0 ||
	    (r = snapshot_init(&d->snap, d->ctx, &d->scopes, MAX_PIDS)) < 0 ||
	    (r = reports_init(&d->reports)) < 0 || (r = prompt_init(&d->prompt, MAX_PIDS)) < 0 ||
	    (r = metrics_init(&d->metrics, d->ctx, &d->scopes, &d->stats, &d->loop)) < 0)
		return r;
	d->metrics.prompt = &d->prompt;
	actions_init(&d->actions, d->ctx, &d->snap, &d->stats, &d->lend);
	d->inflight = (struct inflight){.ctx = d->ctx,
					.lend = &d->lend,
					.hooks = &d->hooks,
					.reports = &d->reports,
					.stats = &d->stats,
					.metrics = &d->metrics,
					.scopes = &d->scopes};
	d->chain = (struct chain){.ctx = d->ctx,
				  .dry_run = d->dry_run,
				  .scopes = &d->scopes,
				  .snap = &d->snap,
				  .reports = &d->reports,
				  .prompt = &d->prompt,
				  .freeze = &d->freeze,
				  .actions = &d->actions,
				  .inflight = &d->inflight,
				  .shed = &d->shed,
				  .stats = &d->stats,
				  .metrics = &d->metrics};
	d->shed = (struct shed){.ctx = d->ctx,
				.lend = &d->lend,
				.snap = &d->snap,
				.inflight = &d->inflight,
				.reports = &d->reports,
				.metrics = &d->metrics};
	d->snap.lend = &d->lend;
	d->handler = (struct handler){.ctx = d->ctx,
				      .dry_run = d->dry_run,
				      .scopes = &d->scopes,
				      .chain = &d->chain,
				      .metrics = &d->metrics,
				      .stats = &d->stats};
	d->jobs = (struct jobs){.ctx = d->ctx,
				.dry_run = d->dry_run,
				.scopes = &d->scopes,
				.handler = &d->handler,
				.pids = d->snap.pids,
				.max_pids = MAX_PIDS};
	d->adopt = (struct adopt){.ctx = d->ctx,
				  .dry_run = d->dry_run,
				  .scopes = &d->scopes,
				  .handler = &d->handler,
				  .metrics = &d->metrics,
				  .lend = &d->lend,
				  .pids = d->snap.pids,
				  .max_pids = MAX_PIDS};
	d->lowmem = (struct lowmem){.ctx = d->ctx, .scopes = &d->scopes, .chain = &d->chain};
	if ((r = lowmem_init(&d->lowmem, &d->loop)) < 0)
		return r;
	if ((r = protect_init(&d->protect, &d->loop, d->ctx, &d->scopes)) < 0)
		return r;
	d->protect.changed = on_protect_changed;
	d->protect.changed_data = &d->metrics;
	d->metrics.protect = &d->protect;
	d->chain.protect = &d->protect;
	if ((r = lend_init(&d->lend, &d->loop, d->ctx)) < 0 || (r = shed_init(&d->shed, &d->loop)) < 0 ||
	    (r = chain_init(&d->chain, &d->loop)) < 0 || (r = handler_init(&d->handler, &d->loop)) < 0 ||
	    (r = adopt_init(&d->adopt, &d->loop)) < 0)
		return r;
	d->inflight.buf = d->chain.buf;
	d->inflight.buf_len = d->chain.buf_len;
	if ((r = start_freeze(d)) < 0)
		return r;
	if ((r = inflight_init(&d->inflight, &d->loop)) < 0)
		return r;
	d->watchdog = (struct loop_timer){.fn = on_watchdog, .data = d};
	if ((r = loop_add_timer(&d->loop, &d->watchdog)) < 0)
		return r;
	if ((source = loop_add_source(&d->loop, on_library, d)) < 0)
		return source;
	loop_on_reload(&d->loop, reload, d);
	if ((r = sdbus_attach(&d->sdbus, &d->loop, &d->scopes)) < 0)
		return r;
	/* A second daemon on the same report directory would index, prune and
	 * number the first one's reports as its own. */
	if (configure(d) == -EBUSY) {
		log_err("not started: another oomkitd writes its reports to %s", d->cfg->report_dir);
		return -EBUSY;
	}
	return loop_add_fd(&d->loop, oomkit_fd(d->ctx), source, 0, EPOLLIN);
}

static void on_scope_done(void *data, uint64_t id, int result, const char *error)
{
	control_run_done(data, id, result, error);
}

static int start_control(struct daemon *d)
{
	int r;

	d->control_pids = calloc(MAX_PIDS, sizeof(*d->control_pids));
	if (!d->control_pids)
		return -ENOMEM;
	d->control = (struct control){.ctx = d->ctx,
				      .cfg = d->cfg,
				      .loop = &d->loop,
				      .scopes = &d->scopes,
				      .reports = &d->reports,
				      .prompt = &d->prompt,
				      .chain = &d->chain,
				      .sdbus = &d->sdbus,
				      .pids = d->control_pids,
				      .max_pids = MAX_PIDS,
				      .listen_fd = -1};
	d->sdbus.on_done = on_scope_done;
	d->sdbus.data = &d->control;
	if ((r = control_listen(&d->control)) < 0)
		log_err("control socket %s: %s", d->cfg->socket, strerror(-r));
	return r;
}

static int start(struct daemon *d)
{
	int r;

	if ((r = start_library(d)) < 0 || (r = resolve_machine(d->cfg, d->ctx)) < 0 ||
	    (r = setup_modules(d)) < 0)
		return r;
	if ((r = jobs_setup(&d->jobs, d->cfg)) < 0 || (r = jobs_enter_reserve(&d->jobs)) < 0 ||
	    (r = lowmem_start(&d->lowmem)) < 0)
		return r;
	if (!d->dry_run && (r = hooks_setup(&d->hooks, d->ctx, &d->loop, d->scopes.machine.rel,
					    d->cfg->hook_memory_bytes)) < 0)
		return r;
	/* Where the daemon runs is known now: no pattern may take it in. */
	if ((r = adopt_check_self(&d->adopt, d->cfg)) < 0 || (r = adopt_start(&d->adopt, d->cfg)) < 0)
		return r;
	if ((r = start_control(d)) < 0)
		return r;
	setup_notify(d);
	d->watchdog.due_ns = d->watchdog_usec ? now_ns() + watchdog_interval_ns(d) : 0;
	return 0;
}

static void stop(struct daemon *d, bool clean)
{
	if (d->control.loop)
		control_close_all(&d->control);
	/* Sheds first: their reports are flights that chain_free() would land. */
	if (d->shed.lend)
		shed_stop(&d->shed);
	chain_free(&d->chain);
	if (d->lend.ctx)
		lend_repay_all(&d->lend);
	hooks_stop(&d->hooks);
	adopt_stop(&d->adopt);
	if (d->lowmem.ctx)
		lowmem_stop(&d->lowmem);
	if (d->protect.ctx)
		protect_stop(&d->protect);
	if (clean && d->ctx)
		jobs_leave_reserve(&d->jobs);
	/* Every taken-over memcg gets the kernel OOM killer back, and then
	 * every systemd unit its own MemoryHigh= and MemoryMax=. */
	oomkit_free(d->ctx);
	sdbus_stop(&d->sdbus);
	log_notice("oomkitd stopped");
	loop_close(&d->loop);
	notify_close(&d->notifier);
	reports_free(&d->reports);
	metrics_free(&d->metrics);
	protect_free(&d->protect);
	prompt_free(&d->prompt);
	snapshot_free(&d->snap);
	scopes_free(&d->scopes);
	free(d->control_pids);
	drop_config(d->cfg);
	/* Last: the kernel killer is back and the socket gone before another
	 * daemon may start. */
	runlock_release(&d->machine_lock, true);
	runlock_release(&d->socket_lock, true);
}

/* ------------------------------------------------------------ one daemon */

/* One daemon per socket and per machine (runlock.h; the report directory's
 * lock is taken where it is opened, reports.c), taken before anything is
 * started: the systemd helper's state file is named after the socket, and
 * a second daemon must change nothing of the first's.  A dry run holds no
 * machine; a daemon that is not root cannot write RUNLOCK_DIR.  what: how a
 * refusal begins.  0, or -errno said in the log (the locks let go). */
static int take_locks(struct daemon *d, bool found, const char *what)
{
	const struct config *cfg = d->cfg;
	int r = runlock_socket(&d->socket_lock, cfg->socket);

	if (r == -EBUSY)
		log_err("%s: another oomkitd is running on the socket %s (it holds %s.lock)", what,
			cfg->socket, cfg->socket);
	else if (r < 0)
		log_err("%s: control socket %s: cannot take its lock: %s", what, cfg->socket, strerror(-r));
	if (r < 0 || d->dry_run || !found)
		return r;
	if (geteuid() != 0) {
		log_warning("not root: machine %s is not locked against a second oomkitd (%s is root's)",
			    cfg->machine, RUNLOCK_DIR);
		return 0;
	}
	r = runlock_machine(&d->machine_lock, cfg->machine_rel);
	if (r == -EBUSY)
		log_err("%s: machine %s is handled by another oomkitd (it holds its lock in %s)", what,
			cfg->machine, RUNLOCK_DIR);
	else if (r < 0)
		log_err("%s: machine %s: cannot take its lock in %s: %s", what, cfg->machine, RUNLOCK_DIR,
			strerror(-r));
	if (r < 0)
		runlock_release(&d->socket_lock, true);
	return r;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: oomkitd [-c|--config FILE] [--check] [--dry-run] [--release] [--no-seccomp]\n"
		   "  -c, --config FILE  configuration (default: the built-in one)\n"
		   "      --config-if-exists FILE\n"
		   "                     FILE, or the built-in default while there is none\n"
		   "      --check        validate the configuration and exit\n"
		   "      --dry-run      decide and report, but change and kill nothing\n"
		   "      --release      give the kernel OOM killer back to the machine and the\n"
		   "                     jobs, and exit (after the daemon was killed)\n"
		   "      --no-seccomp   run without the system call filter (debugging)\n"
		   "      --version      print the version and exit\n"
		   "  -h, --help         this text\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"config-if-exists", required_argument, NULL, 'E'},
	    {"check", no_argument, NULL, 'C'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {"no-seccomp", no_argument, NULL, 'S'},
	    {"release", no_argument, NULL, 'R'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	static struct daemon D;
	struct daemon *d = &D;
	bool check = false, seccomp = true, release = false;
	int opt, r;

	/* What stop() closes is closed only if it was opened. */
	d->notifier.fd = -1;
	d->loop.epfd = d->loop.timerfd = d->loop.sigfd = -1;
	d->reports.dirfd = -1;
	d->reports.lock = (struct runlock)RUNLOCK_INIT;
	d->hooks.sock = -1;
	d->sdbus.sock = -1;
	d->socket_lock = d->machine_lock = (struct runlock)RUNLOCK_INIT;
	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'E':
			d->config_optional = true;
			d->config_path = optarg;
			break;
		case 'c':
			d->config_optional = false;
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
		case 'V':
			printf("oomkitd " OOMKIT_PACKAGE_VERSION "\n");
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
		return check_config(config_file(d));
	/* Said first: as another user every step below fails on its own,
	 * each with a message that does not name the cause. */
	if (geteuid() != 0) {
		log_err("oomkitd needs root: it makes memory cgroups, holds off the kernel's OOM killer and "
			"kills other users' processes (oomkitd --check reads a configuration as any user)");
		return 1;
	}
	/* The default depends on the machine (a systemd one on cgroup v2 has
	 * its own), for no file and for a file that names no machine and no
	 * job, so the mount is looked at first. */
	struct config_mount mount = {0};
	char root[CONFIG_PATH_MAX];
	const char *path = config_file(d);
	bool found = probe_mount(&mount, root, sizeof(root));
	if (load_config(path, found ? &mount : NULL, &d->cfg) < 0)
		return 1;
	if (release) {
		char state[CONFIG_SOCKET_MAX + 32];
		/* What a running daemon holds is its own to give back. */
		if (take_locks(d, found,
			       "--release refused (it is for after oomkitd was stopped or killed)") < 0) {
			drop_config(d->cfg);
			return 1;
		}
		r = release_run(d->cfg);
		if (sdbus_state_path(d->cfg->socket, state, sizeof(state)) == 0 && sdbus_release(state) < 0)
			r = -EIO;
		drop_config(d->cfg);
		runlock_release(&d->machine_lock, true);
		runlock_release(&d->socket_lock, true);
		return r < 0 ? 1 : 0;
	}
	if (take_locks(d, found, "not started") < 0) {
		drop_config(d->cfg);
		return 1;
	}
	/* The hook runner is started before anything is cut: hooks run as the
	 * daemon was started, not under its allow-list (hooks.h). */
	if (!d->dry_run)
		hooks_start(&d->hooks, NULL, d->cfg->n_commands > 0);
	start_systemd_helper(d);
	/* Capabilities and system calls are cut before liboomkit forks its guardian. */
	d->kept_ptrace = config_exe_rule_line(d->cfg) != 0;
	/* The name service was asked while the configuration was read; from now
	 * on user names come from /etc/passwd and what it answered (users.h). */
	users_seal();
	r = privs_restrict(seccomp, d->kept_ptrace);
	if (r == 0)
		r = start(d);
	if (r == 0)
		r = privs_setup_done();
	if (r == 0) {
		metrics_write(&d->metrics);
		notify(d, "READY=1");
		log_notice("oomkitd ready: machine %s, %u jobs%s, socket %s", d->cfg->machine, d->cfg->n_jobs,
			   d->dry_run ? ", dry run" : "", d->cfg->socket);
		if (d->cfg->n_jobs == 0) {
			char advice[CONFIG_PATH_MAX + 512];
			log_warning(
			    "%s", no_job_advice(d->cfg, found ? &mount : NULL, path, advice, sizeof(advice)));
		}
		r = loop_run(&d->loop);
		notify(d, "STOPPING=1");
	}
	stop(d, r == 0);
	return r < 0 ? 1 : 0;
}
