/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* freeze.c - see freeze.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oom/freeze.h"
#include "base/clock.h"
#include "base/log.h"
#include "common/value.h"

/* Processes whose cgroup is never frozen: a desktop's shell and compositor,
 * its display server, its notification server, the agent, a login shell.
 * Matched on comm, which a process chooses: a name can only keep its own
 * cgroup from being frozen, never make another's frozen. */
static const char *const never_comm[] = {
    "oomkit-agent",
    "oomkit",
    "Xorg",
    "X",
    "Xwayland",
    "Xvfb",
    "gnome-shell",
    "mutter",
    "kwin_x11",
    "kwin_wayland",
    "plasmashell",
    "xfwm4",
    "xfce4-panel",
    "xfdesktop",
    "xfce4-session",
    "openbox",
    "sway",
    "weston",
    "Hyprland",
    "labwc",
    "cinnamon",
    "muffin",
    "marco",
    "mate-panel",
    "gnome-session-b",
    "ksmserver",
    "dunst",
    "mako",
    "xfce4-notifyd",
    "notification-da",
    "notify-osd",
    "swaync",
    "bash",
    "zsh",
    "fish",
    "dash",
    "sh",
    "ksh",
    "tcsh",
    "login",
    "systemd",
    "dbus-daemon",
    "dbus-broker",
    "pipewire",
    "wireplumber",
    "pulseaudio",
};

bool freeze_never_comm(const char *comm)
{
	for (size_t i = 0; i < sizeof(never_comm) / sizeof(never_comm[0]); i++)
		if (strcmp(comm, never_comm[i]) == 0)
			return true;
	return false;
}

bool freeze_never_cgroup(const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base ? base + 1 : rel;
	size_t n = strlen(base);
	/* session-*.scope, by hand: fnmatch() may allocate. */
	bool session = n >= 14 && strncmp(base, "session-", 8) == 0 && strcmp(base + n - 6, ".scope") == 0;
	return session || strcmp(base, "init.scope") == 0 || strcmp(base, "session.slice") == 0;
}

/* ------------------------------------------------------------ the record */

/* Rewrites the record: the rel of every frozen group, one a line. */
static void record_write(struct freeze *f)
{
	char buf[FREEZE_MAX * SCOPE_REL_MAX];
	size_t n = 0;

	if (f->record_fd < 0)
		return;
	for (unsigned i = 0; i < f->n_groups; i++) {
		const struct freeze_group *g = &f->groups[i];
		if (g->frozen)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\n", g->rel);
	}
	if (pwrite(f->record_fd, buf, n, 0) != (ssize_t)n || ftruncate(f->record_fd, (off_t)n) < 0)
		log_err("freeze: cannot write the record of what is frozen: %s", strerror(errno));
	else
		(void)fdatasync(f->record_fd);
}

/* Thaws what the record names: a daemon before this one froze it. */
static void record_thaw(struct freeze *f)
{
	char buf[FREEZE_MAX * SCOPE_REL_MAX + 1], esc[LOG_ESCAPED_MAX(SCOPE_REL_MAX)];
	ssize_t n = pread(f->record_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *line = buf, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		int r = line[0] ? oomkit_cgroup_freeze(f->ctx, line, false) : 0;
		if (r < 0)
			log_err("freeze: cannot thaw %s, left frozen by an earlier daemon: %s",
				log_escape(esc, sizeof(esc), line), strerror(-r));
		else if (line[0])
			log_notice("freeze: thawed %s, left frozen by an earlier daemon",
				   log_escape(esc, sizeof(esc), line));
	}
}

int freeze_record_path(const char *report_dir, char *buf, size_t len)
{
	size_t n = strlen(report_dir);

	while (n > 1 && report_dir[n - 1] == '/')
		n--;
	const char *slash = memrchr(report_dir, '/', n);
	if (!slash || slash == report_dir)
		return -EINVAL;
	int r = snprintf(buf, len, "%.*s/frozen", (int)(slash - report_dir), report_dir);
	return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
}

/* A record that someone else could have written names cgroups to thaw:
 * only root's, written by no one else, is read. */
static bool record_trusted(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == geteuid()) &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* ------------------------------------------------------------ sampling */

static void on_sample(void *data, uint64_t now);

int freeze_init(struct freeze *f, oomkit_ctx *ctx, struct loop *loop, struct prompt *prompt,
		const char *record_path)
{
	memset(f, 0, sizeof(*f));
	f->ctx = ctx;
	f->prompt = prompt;
	f->record_fd = -1;
	f->timer = (struct loop_timer){.fn = on_sample, .data = f};
	if (record_path) {
		f->record_fd = open(record_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f->record_fd >= 0 && !record_trusted(f->record_fd)) {
			log_warning("freeze: %s is not root's alone: not used", record_path);
			close(f->record_fd);
			f->record_fd = -1;
		} else if (f->record_fd < 0)
			log_warning("freeze: cannot open %s: %s; a crash may leave a job frozen", record_path,
				    strerror(errno));
		else {
			record_thaw(f);
			record_write(f);
		}
	}
	return loop_add_timer(loop, &f->timer);
}

void freeze_free(struct freeze *f)
{
	if (!f->ctx)
		return;
	freeze_thaw(f, "the daemon stops");
	if (f->record_fd >= 0)
		close(f->record_fd);
	f->record_fd = -1;
}

/* Whether group g of in may be frozen: a job's or an instance's, none of
 * its processes protected, a prompt client, named in never_comm, or of
 * another uid than the rest. */
static bool may_freeze(struct freeze *f, const struct scope *scope, const struct policy_input *in, int g)
{
	bool have_uid = false;
	uid_t uid = 0;

	if (!scope || scope->kind == SCOPE_KIND_MACHINE || freeze_never_cgroup(scope->rel))
		return false;
	for (unsigned i = 0; i < in->n_procs; i++) {
		const struct policy_proc *p = &in->procs[i];
		if (p->group != g)
			continue;
		if (policy_protected(in, p) || freeze_never_comm(p->comm) ||
		    prompt_is_client(f->prompt, p->pid) || (have_uid && p->uid != uid))
			return false;
		have_uid = true;
		uid = p->uid;
	}
	return have_uid;
}

static bool watched(const struct freeze *f, const char *rel)
{
	for (unsigned i = 0; i < f->n_groups; i++)
		if (strcmp(f->groups[i].rel, rel) == 0)
			return true;
	return false;
}

static uint64_t usage_of(struct freeze *f, const char *rel)
{
	struct oomkit_cgroup_memory m = {0};

	return oomkit_cgroup_memory(f->ctx, rel, &m) < 0 ? 0 : m.usage_bytes;
}

void freeze_watch(struct freeze *f, const struct snapshot *snap, const struct policy_input *in)
{
	const struct prompt *p = f->prompt;

	/* What the question before froze was thawed when it closed; a group whose
	 * thaw failed is kept, and tried again, rather than forgotten. */
	freeze_thaw(f, "a new question");
	for (unsigned i = 0; i < f->n_groups; i++)
		if (f->groups[i].frozen) {
			log_warning(
			    "freeze: a job of the last question is still frozen: freezing nothing now");
			return;
		}
	f->n_groups = 0;
	if (!f->enabled)
		return;
	for (unsigned i = 0; i < p->n_procs && f->n_groups < FREEZE_MAX; i++) {
		int g = p->procs[i].proc.group;
		const struct scope *scope = snapshot_group_scope(snap, g);
		if (!scope || watched(f, scope->rel) || !may_freeze(f, scope, in, g))
			continue;
		struct freeze_group *fg = &f->groups[f->n_groups++];
		*fg = (struct freeze_group){0};
		snprintf(fg->rel, sizeof(fg->rel), "%s", scope->rel);
		snprintf(fg->label, sizeof(fg->label), "%s", scope->label);
		/* Growth counts from the OOM's snapshot: what a group took while the
		 * question was prepared freezes it at the first sample. */
		fg->usage_bytes =
		    in->groups[g].usage_bytes ? in->groups[g].usage_bytes : usage_of(f, fg->rel);
	}
	if (f->n_groups)
		f->timer.due_ns = now_ns();
	log_info("freeze: watching %u group(s) for growth while the question is open", f->n_groups);
}

static void freeze_one(struct freeze *f, struct freeze_group *g, uint64_t usage)
{
	char esc[LOG_ESCAPED_MAX(sizeof(g->label))], grew[32];

	g->grew_bytes = usage - g->usage_bytes;
	g->frozen = true;
	/* Recorded before it is frozen: a crash between the two leaves a record of
	 * a group not frozen, whose thaw does no harm. */
	record_write(f);
	int r = oomkit_cgroup_freeze(f->ctx, g->rel, true);
	value_format_bytes(g->grew_bytes, grew, sizeof(grew));
	log_escape(esc, sizeof(esc), g->label);
	if (r < 0) {
		/* Whatever part of it froze is thawed by freeze_thaw(), as a frozen one's. */
		log_warning("%s: cannot freeze it: %s", esc, strerror(-r));
		return;
	}
	g->frozen_ns = now_ns();
	g->was_frozen = true;
	f->frozen_total++;
	log_notice("%s: frozen while the question is open: it grew %s since the last reading", esc, grew);
}

static void on_sample(void *data, uint64_t now)
{
	struct freeze *f = data;

	f->timer.due_ns = 0;
	if (!f->prompt->active) {
		/* A thaw that failed is tried again. */
		freeze_thaw(f, "the question is closed");
		return;
	}
	for (unsigned i = 0; i < f->n_groups; i++) {
		struct freeze_group *g = &f->groups[i];
		if (g->frozen)
			continue;
		uint64_t usage = usage_of(f, g->rel);
		if (usage >= g->usage_bytes + FREEZE_GROW_MIN)
			freeze_one(f, g, usage);
		else
			g->usage_bytes = usage;
	}
	f->timer.due_ns = now + FREEZE_SAMPLE_MS * NS_PER_MS;
}

void freeze_thaw(struct freeze *f, const char *why)
{
	char esc[LOG_ESCAPED_MAX(sizeof(f->groups[0].label))], took[32];
	bool left = false, any = false;
	uint64_t now = now_ns();

	for (unsigned i = 0; i < f->n_groups; i++) {
		struct freeze_group *g = &f->groups[i];
		if (!g->frozen)
			continue;
		any = true;
		int r = oomkit_cgroup_freeze(f->ctx, g->rel, false);
		log_escape(esc, sizeof(esc), g->label);
		if (r < 0) {
			log_err("%s: cannot thaw it: %s; trying again", esc, strerror(-r));
			left = true;
			continue;
		}
		g->frozen = false;
		if (g->frozen_ns)
			g->frozen_ms = (now - g->frozen_ns) / NS_PER_MS;
		value_format_elapsed(g->frozen_ms, took, sizeof(took));
		log_notice("%s: thawed after %s (%s)", esc, took, why);
	}
	if (any)
		record_write(f);
	f->timer.due_ns = left ? now + FREEZE_SAMPLE_MS * NS_PER_MS : 0;
}

void freeze_report(const struct freeze *f, struct oomkit__json *w)
{
	bool any = false;

	for (unsigned i = 0; i < f->n_groups; i++) {
		const struct freeze_group *g = &f->groups[i];
		if (!g->was_frozen)
			continue;
		if (!any)
			oomkit__json_open(w, "frozen", '[');
		any = true;
		oomkit__json_open(w, NULL, '{');
		oomkit__json_str(w, "job", g->label);
		oomkit__json_str(w, "cgroup", g->rel);
		oomkit__json_u64(w, "grew_bytes", g->grew_bytes);
		oomkit__json_u64(w, "frozen_ms", g->frozen_ms);
		oomkit__json_bool(w, "thawed", !g->frozen);
		oomkit__json_close(w, '}');
	}
	if (any)
		oomkit__json_close(w, ']');
}
