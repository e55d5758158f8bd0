/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-agent - oomkitd's prompt on the desktop.  Runs as the user in the
 * graphical session, listens on oomkitd's control socket ("prompt"), and
 * when an OOM concerns this user (oomkitd sends it nothing else) shows the
 * largest candidates and what can be done: close one of them, give the job
 * more memory, or let the system decide.  Where it was built with GTK 4 and
 * a display is there, in a window of its own (window.c), with the time left
 * counting down, each candidate's memory and growth (sampled here, from
 * /proc: sampler.c) and details; else, or with --notify-only, as a
 * notification through org.freedesktop.Notifications, whose chosen action
 * (ActionInvoked) goes back as the answer.  Closing the window or
 * dismissing the notification lets the system decide; no answer leaves the
 * chain to go on after the delay.  When the OOM has been dealt with (by
 * anyone), the window (or a notification) says what happened.
 *
 * It needs no privilege: oomkitd tells a non-root peer only about its own
 * processes and jobs, and takes its answers only for those (SO_PEERCRED).
 * The wire protocol is common/protocol.c, linked in.  D-Bus is GDBus.
 */
#include <errno.h>
#include <gio/gdesktopappinfo.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "json.h" /* lib/json.h: the one escaper for untrusted bytes */
#include "common/protocol.h"
#include "outcome.h"
#include "sampler.h"
#ifdef OOMKIT_AGENT_GTK
#include "window.h"
#endif

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
#define NOTIFY_IFACE "org.freedesktop.Notifications"
#define MAX_SHOWN 3
#define RECONNECT_S 2
#define NAME_MAX_LEN 128
#define ICON_MAX_LEN 256
/* /proc is read each SAMPLE_IDLE_MS, and each second while a question is open. */
#define SAMPLE_IDLE_MS 5000
/* A row's growth: over the last this many ms. */
#define ROW_GROWTH_MS 10000
#define TOP_DETAILS 5

/* NotificationClosed reasons (the specification's numbers). */
#define CLOSED_EXPIRED 1
#define CLOSED_DISMISSED 2

struct candidate {
	pid_t pid;
	uint64_t rss_bytes;
	int tier;		 /* the daemon's rules: 0 preferred, 1 none, 2 avoided */
	char name[NAME_MAX_LEN]; /* the app's name, else its comm */
	char icon[ICON_MAX_LEN]; /* its .desktop file's icon (GIcon's string), "" none */
	char job[PROTOCOL_NAME_MAX];
};

/* The question being asked, if any. */
struct question {
	bool active;
	unsigned id;
	char scope[PROTOCOL_NAME_MAX];
	uint64_t timeout_ms;
	unsigned choices;
	struct candidate shown[MAX_SHOWN];
	unsigned n_shown;
	guint32 notification; /* 0: none shown */
	bool answered;	      /* an answer went out: a close is not a decline */
	uint64_t asked_ms;    /* when it came (monotonic) */
	bool has_usage;	      /* a job's OOM: its usage and limit */
	uint64_t usage_bytes, limit_bytes;
};

struct agent {
	const char *socket_path;
	const char *proc_root; /* "/proc"; a test may point it elsewhere */
	GMainLoop *loop;
	GDBusConnection *bus;
	int fd;
	guint fd_watch;
	GString *in;
	bool warned_unreachable;
	struct question q;
	guint32 result_notification; /* the last "what happened" note, replaced by the next */
	struct sampler *sampler;
	uint64_t sampled_ms;
	bool use_window; /* questions in a window (GTK 4 and a display), else notifications */
	bool log_layout;
#ifdef OOMKIT_AGENT_GTK
	struct window *win; /* the open window, if any, and the question it shows */
	unsigned win_id;
	/* A question left to the system (declined, or unanswered in time) is
	 * handled under the next report's id, in the same scope: the window
	 * that asked says what was done then too. */
	char win_scope[PROTOCOL_NAME_MAX];
#endif
};

static void logf_(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void logf_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("oomkit-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
}

/* ------------------------------------------------------------ names */

static void human(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ull << 30)
		snprintf(buf, len, "%.1f GiB", (double)bytes / (double)(1ull << 30));
	else if (bytes >= 1ull << 20)
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
}

/* systemd escapes a unit name's "-" inside a part as "\x2d". */
static void unescape_unit(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		unsigned v;
		if (r[0] == '\\' && r[1] == 'x' && sscanf(r + 2, "%2x", &v) == 1 && v) {
			*w++ = (char)v;
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Where the name came from: its icon, for the window. */
static char found_icon[ICON_MAX_LEN];

/* The display name of desktop file id (without ".desktop"), if installed;
 * its icon in found_icon. */
static bool desktop_name(const char *id, char *buf, size_t len)
{
	char file[NAME_MAX_LEN + 16];
	GDesktopAppInfo *info;

	if (!id[0])
		return false;
	snprintf(file, sizeof(file), "%s.desktop", id);
	info = g_desktop_app_info_new(file);
	if (!info)
		return false;
	snprintf(buf, len, "%s", g_app_info_get_display_name(G_APP_INFO(info)));
	GIcon *icon = g_app_info_get_icon(G_APP_INFO(info));
	gchar *icon_s = icon ? g_icon_to_string(icon) : NULL;
	snprintf(found_icon, sizeof(found_icon), "%s", icon_s && strlen(icon_s) < ICON_MAX_LEN ? icon_s : "");
	g_free(icon_s);
	g_object_unref(info);
	return true;
}

/* An app's unit as the desktop names it (systemd's XDG application
 * convention): app[-LAUNCHER]-APPID-RANDOM.scope or
 * app[-LAUNCHER]-APPID[@RANDOM].service.  Tries APPID with and without
 * the launcher part. */
static bool app_from_unit(const char *unit, char *buf, size_t len)
{
	char id[NAME_MAX_LEN];
	size_t n = strlen(unit);
	char *cut;

	if (strncmp(unit, "app-", 4) != 0 || n >= sizeof(id) + 4)
		return false;
	snprintf(id, sizeof(id), "%s", unit + 4);
	if (g_str_has_suffix(id, ".scope")) {
		id[strlen(id) - 6] = '\0';
		if ((cut = strrchr(id, '-')))
			*cut = '\0'; /* the random part */
	} else if (g_str_has_suffix(id, ".service")) {
		id[strlen(id) - 8] = '\0';
		if ((cut = strchr(id, '@')))
			*cut = '\0';
	} else {
		return false;
	}
	unescape_unit(id);
	if (desktop_name(id, buf, len))
		return true;
	cut = strchr(id, '-');
	return cut && desktop_name(cut + 1, buf, len);
}

/* The name a person knows a process by: its app's (from its cgroup's app
 * unit and the .desktop file), else a desktop file named like its comm,
 * else the comm itself. */
static void app_name(const struct agent *a, pid_t pid, const char *comm, char *buf, size_t len)
{
	char path[64], line[1024];
	FILE *f;

	found_icon[0] = '\0';
	snprintf(path, sizeof(path), "%s/%d/cgroup", a->proc_root, (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *p = strchr(line, ':');
		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		/* The innermost app unit on the path wins. */
		gchar **parts = g_strsplit(p + 1, "/", -1);
		bool found = false;
		for (int i = (int)g_strv_length(parts) - 1; i >= 0 && !found; i--)
			found = app_from_unit(parts[i], buf, len);
		g_strfreev(parts);
		if (found) {
			fclose(f);
			return;
		}
	}
	if (f)
		fclose(f);
	if (!desktop_name(comm, buf, len))
		snprintf(buf, len, "%s", comm);
}

/* ------------------------------------------------------------ notifications */

/* Names that come from processes and job owners (a comm, an app's name from
 * a unit the process's cgroup names, a job or instance, a user, a reason):
 * every one goes through lib/json.h's escaper before it is shown.  In the
 * summary and the actions' labels, which the specification makes plain
 * text, the text escaper: control bytes, bytes that are not UTF-8 and code
 * points that fool a reader (a right-to-left override) become \xNN.  In the
 * body, which servers read as markup (<b>, <a href>, <img>), the markup
 * escaper: the same, and & < > " ' as entities, so no name restyles or
 * fakes the question. */
#define PLAIN_MAX (4 * 256 + 1)

static const char *plain(const char *s, char buf[PLAIN_MAX])
{
	return oomkit__escape_str(buf, PLAIN_MAX, s);
}

static void body_add(GString *body, const char *s)
{
	size_t n = strlen(s), cap = 6 * n + 1;
	char *esc = g_malloc(cap);

	oomkit__escape_markup(esc, cap, s, n);
	g_string_append(body, esc);
	g_free(esc);
}

/* Notify(); returns the server's id, 0 if none could be shown. */
static guint32 notify(struct agent *a, guint32 replaces, const char *summary, const char *body,
		      GVariantBuilder *actions, int urgency, int32_t timeout_ms)
{
	GVariantBuilder hints;
	GError *err = NULL;
	guint32 id = 0;

	g_variant_builder_init(&hints, G_VARIANT_TYPE("a{sv}"));
	g_variant_builder_add(&hints, "{sv}", "urgency", g_variant_new_byte((guchar)urgency));
	g_variant_builder_add(&hints, "{sv}", "desktop-entry", g_variant_new_string("oomkit-agent"));
	g_variant_builder_add(&hints, "{sv}", "category", g_variant_new_string("device.error"));
	GVariant *ret =
	    g_dbus_connection_call_sync(a->bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "Notify",
					g_variant_new("(susssasa{sv}i)", "oomkit", replaces, "dialog-warning",
						      summary, body, actions, &hints, timeout_ms),
					G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &err);
	if (!ret) {
		logf_("cannot show a notification (is a notification server running?): %s", err->message);
		g_error_free(err);
		return 0;
	}
	g_variant_get(ret, "(u)", &id);
	g_variant_unref(ret);
	return id;
}

static void close_notification(struct agent *a, guint32 id)
{
	if (!id)
		return;
	g_dbus_connection_call(a->bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE, "CloseNotification",
			       g_variant_new("(u)", id), NULL, G_DBUS_CALL_FLAGS_NONE, 5000, NULL, NULL,
			       NULL);
}

/* Whether the running server can show actions (GetCapabilities "actions"). */
static bool server_has_actions(struct agent *a)
{
	GError *err = NULL;
	GVariant *ret = g_dbus_connection_call_sync(a->bus, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_IFACE,
						    "GetCapabilities", NULL, G_VARIANT_TYPE("(as)"),
						    G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &err);
	bool actions = false;

	if (!ret) {
		logf_("no notification server answers on the session bus: %s", err->message);
		g_error_free(err);
		return false;
	}
	GVariantIter *it;
	const char *cap;
	g_variant_get(ret, "(as)", &it);
	while (g_variant_iter_next(it, "&s", &cap))
		actions = actions || strcmp(cap, "actions") == 0;
	g_variant_iter_free(it);
	g_variant_unref(ret);
	if (!actions)
		logf_("the notification server cannot show actions: OOMs are left to oomkitd's chain");
	return actions;
}

/* ------------------------------------------------------------ the daemon */

static void send_request(struct agent *a, const struct protocol_request *req)
{
	char line[PROTOCOL_REQUEST_MAX];
	int n = protocol_format_request(req, line, sizeof(line));

	if (n < 0 || a->fd < 0)
		return;
	if (send(a->fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		logf_("cannot send to oomkitd: %s", strerror(errno));
}

static void answer(struct agent *a, enum protocol_choice choice, pid_t pid)
{
	struct protocol_request req = {.verb = PROTOCOL_ANSWER,
				       .answer = {.id = a->q.id, .choice = choice, .pid = pid}};
	char text[64];

	a->q.answered = true;
	if (protocol_format_answer(&req.answer, text, sizeof(text)) >= 0)
		logf_("answer %s", text);
	send_request(a, &req);
}

/* Preferred first and avoided last, as the daemon's rules place them; the
 * largest first within each. */
static int by_rules_then_rss(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;
	if (a->tier != b->tier)
		return a->tier - b->tier;
	return a->rss_bytes < b->rss_bytes ? 1 : a->rss_bytes > b->rss_bytes ? -1 : 0;
}

/* Keeps the MAX_SHOWN first candidates in that order in q->shown. */
static void keep_largest(struct question *q, const struct candidate *c)
{
	if (q->n_shown < MAX_SHOWN) {
		q->shown[q->n_shown++] = *c;
	} else if (by_rules_then_rss(c, &q->shown[MAX_SHOWN - 1]) < 0) {
		q->shown[MAX_SHOWN - 1] = *c;
	}
	qsort(q->shown, q->n_shown, sizeof(q->shown[0]), by_rules_then_rss);
}

/* ------------------------------------------------------------ the window */

/* The time left on the question, in ms. */
static uint64_t time_left_ms(const struct question *q)
{
	uint64_t gone = mono_ms() - q->asked_ms;
	return gone >= q->timeout_ms ? 0 : q->timeout_ms - gone;
}

/* "+20 MiB in the last 5 s", "-1 MiB ...", "no change in ...". */
static void growth_text(int64_t grew, uint64_t span_ms, char *buf, size_t len)
{
	char sz[32];
	unsigned s = (unsigned)((span_ms + 500) / 1000);

	human(grew < 0 ? (uint64_t)-grew : (uint64_t)grew, sz, sizeof(sz));
	if (grew >> 20 == 0 && -grew >> 20 == 0)
		snprintf(buf, len, "no growth in the last %u s", s);
	else
		snprintf(buf, len, "%s%s in the last %u s", grew < 0 ? "-" : "+", sz, s);
}

#ifdef OOMKIT_AGENT_GTK
/* Every string from a process or a job owner goes through plain(): the
 * window shows it as text, and the escaper turns control bytes and
 * deceptive code points into \xNN. */
static void details_text(struct agent *a, GString *d)
{
	struct sampler_top top[TOP_DETAILS];
	unsigned n = sampler_top(a->sampler, top, TOP_DETAILS);
	uint64_t mt, ma, st, sf;
	char sz[32], sz2[32], grew[64], esc[PLAIN_MAX];

	g_string_append(d, "Your largest processes, and their growth over the last minute:\n");
	for (unsigned i = 0; i < n; i++) {
		human(top[i].rss_bytes, sz, sizeof(sz));
		if (top[i].span_ms)
			growth_text(top[i].grew_bytes, top[i].span_ms, grew, sizeof(grew));
		else
			snprintf(grew, sizeof(grew), "just started");
		g_string_append_printf(d, "  %7d  %-16s %10s  %s\n", (int)top[i].pid, plain(top[i].comm, esc),
				       sz, grew);
	}
	if (sampler_meminfo(a->proc_root, &mt, &ma, &st, &sf)) {
		human(ma, sz, sizeof(sz));
		human(mt, sz2, sizeof(sz2));
		g_string_append_printf(d, "Memory: %s available of %s\n", sz, sz2);
		if (st) {
			human(st - sf, sz, sizeof(sz));
			human(st, sz2, sizeof(sz2));
			g_string_append_printf(d, "Swap: %s used of %s\n", sz, sz2);
		} else {
			g_string_append(d, "Swap: none\n");
		}
	}
	if (a->q.has_usage) {
		human(a->q.usage_bytes, sz, sizeof(sz));
		if (a->q.limit_bytes == UINT64_MAX)
			snprintf(sz2, sizeof(sz2), "none");
		else
			human(a->q.limit_bytes, sz2, sizeof(sz2));
		g_string_append_printf(d, "Job %s: %s used, limit %s\n", plain(a->q.scope, esc), sz, sz2);
	}
	g_string_append_printf(d, "The full report, later: oomkit reports show %u", a->q.id);
}

static void fill_view(struct agent *a, struct window_view *v)
{
	struct question *q = &a->q;
	char esc[PLAIN_MAX], sz[32], sz2[32], grew[64];
	uint64_t left = time_left_ms(q);

	memset(v, 0, sizeof(*v));
	v->id = q->id;
	if (strcmp(q->scope, "machine") == 0) {
		snprintf(v->what, sizeof(v->what), "The system is running out of memory.");
	} else if (q->has_usage && q->limit_bytes != UINT64_MAX) {
		human(q->usage_bytes, sz, sizeof(sz));
		human(q->limit_bytes, sz2, sizeof(sz2));
		snprintf(v->what, sizeof(v->what), "The job %s has reached its memory limit (%s of %s).",
			 plain(q->scope, esc), sz, sz2);
	} else {
		snprintf(v->what, sizeof(v->what), "The job %s has reached its memory limit.",
			 plain(q->scope, esc));
	}
	snprintf(v->left, sizeof(v->left), "If no one chooses, the system decides in %" PRIu64 " s.",
		 (left + 999) / 1000);
	v->fraction = q->timeout_ms ? (double)left / (double)q->timeout_ms : 0;
	v->can_kill = q->choices & PROTOCOL_CHOICE_KILL;
	v->can_grow = q->choices & PROTOCOL_CHOICE_GROW;
	for (unsigned i = 0; i < q->n_shown && i < WINDOW_ROWS_MAX; i++) {
		const struct candidate *c = &q->shown[i];
		struct window_row *r = &v->rows[v->n_rows++];
		uint64_t rss = c->rss_bytes, span;
		int64_t g;
		bool known = sampler_growth(a->sampler, c->pid, ROW_GROWTH_MS, &rss, &g, &span);

		r->pid = c->pid;
		snprintf(r->name, sizeof(r->name), "%s%s", plain(c->name, esc),
			 c->tier == 0	? " (preferred)"
			 : c->tier == 2 ? " (avoided)"
					: "");
		snprintf(r->icon, sizeof(r->icon), "%s", c->icon);
		human(rss, sz, sizeof(sz));
		snprintf(r->size, sizeof(r->size), "%s", sz);
		if (known)
			growth_text(g, span, grew, sizeof(grew));
		else
			snprintf(grew, sizeof(grew), "growth not measured yet");
		snprintf(r->memory, sizeof(r->memory), "%s now, %s", sz, grew);
		if (strcmp(c->job, "-") == 0)
			snprintf(r->job, sizeof(r->job), "in no job");
		else
			snprintf(r->job, sizeof(r->job), "job %s", plain(c->job, esc));
	}
	GString *d = g_string_new(NULL);
	details_text(a, d);
	snprintf(v->details, sizeof(v->details), "%s", d->str);
	g_string_free(d, TRUE);
}

static void win_choose(enum window_choice c, pid_t pid, void *data)
{
	struct agent *a = data;
	char status[PLAIN_MAX + 64], esc[PLAIN_MAX];

	if (!a->win || !a->q.active || a->q.id != a->win_id || a->q.answered)
		return;
	if (c == WINDOW_KILL) {
		const char *name = "it";
		for (unsigned i = 0; i < a->q.n_shown; i++)
			if (a->q.shown[i].pid == pid)
				name = plain(a->q.shown[i].name, esc);
		snprintf(status, sizeof(status), "Closing %s...", name);
		answer(a, PROTOCOL_CHOICE_KILL, pid);
	} else if (c == WINDOW_GROW) {
		snprintf(status, sizeof(status), "Asking for more memory...");
		answer(a, PROTOCOL_CHOICE_GROW, 0);
	} else {
		snprintf(status, sizeof(status), "Left to the system: oomkitd's chain decides...");
		answer(a, PROTOCOL_CHOICE_CHAIN, 0);
	}
	window_answered(a->win, status);
}

static void win_closed(void *data)
{
	struct agent *a = data;

	a->win = NULL;
}

static void win_layout(const char *line, void *data)
{
	struct agent *a = data;

	/* The names in it went through plain() on their way into the window. */
	if (a->log_layout)
		logf_("window %u: %s", a->win_id, line);
}

static bool ask_window(struct agent *a)
{
	static const struct window_callbacks cb = {
	    .choose = win_choose, .closed = win_closed, .layout = win_layout};
	struct window_callbacks mine = cb;
	struct window_view *v = g_new(struct window_view, 1);
	char esc[PLAIN_MAX];

	mine.data = a;
	if (a->win)
		window_close(a->win);
	fill_view(a, v);
	a->win_id = a->q.id;
	snprintf(a->win_scope, sizeof(a->win_scope), "%s", a->q.scope);
	a->win = window_open(v, &mine);
	logf_("question %u (%s): %u candidate(s) shown, %" PRIu64 " ms to answer, in a window", a->q.id,
	      plain(a->q.scope, esc), a->q.n_shown, a->q.timeout_ms);
	logf_("window %u what: %s", a->q.id, v->what);
	for (unsigned i = 0; i < v->n_rows; i++)
		logf_("window %u row: pid %d %s: %s, %s", a->q.id, (int)v->rows[i].pid, v->rows[i].name,
		      v->rows[i].memory, v->rows[i].job);
	/* Whose processes the details list (the sampler's: this uid's only). */
	struct sampler_top top[TOP_DETAILS];
	GString *pids = g_string_new(NULL);
	for (unsigned i = 0, n = sampler_top(a->sampler, top, TOP_DETAILS); i < n; i++)
		g_string_append_printf(pids, " %d", (int)top[i].pid);
	logf_("window %u details: pids%s", a->q.id, pids->str);
	g_string_free(pids, TRUE);
	g_free(v);
	return a->win != NULL;
}

static void refresh_window(struct agent *a)
{
	if (!a->win || !a->q.active || a->win_id != a->q.id)
		return;
	struct window_view *v = g_new(struct window_view, 1);
	fill_view(a, v);
	window_refresh(a->win, v);
	g_free(v);
}
#endif

/* Each second: /proc again if it is time, and the window's countdown. */
static gboolean on_second(gpointer data)
{
	struct agent *a = data;
	uint64_t now = mono_ms();

	if (a->q.active || now - a->sampled_ms >= SAMPLE_IDLE_MS) {
		sampler_tick(a->sampler, now);
		a->sampled_ms = now;
	}
#ifdef OOMKIT_AGENT_GTK
	refresh_window(a);
#endif
	return G_SOURCE_CONTINUE;
}

static void ask(struct agent *a)
{
	struct question *q = &a->q;
	GVariantBuilder actions;
	GString *body = g_string_new(NULL);
	char sz[32], key[32], label[PLAIN_MAX + 48], esc[PLAIN_MAX];
	bool machine = strcmp(q->scope, "machine") == 0;

#ifdef OOMKIT_AGENT_GTK
	if (a->use_window && ask_window(a)) {
		g_string_free(body, TRUE);
		return;
	}
#endif
	if (machine) {
		g_string_append(body, "The system is running out of memory.");
	} else {
		body_add(body, q->scope);
		g_string_append(body, " has reached its memory limit.");
	}
	/* The time left (an agent that connects late is asked with less), in
	 * whole seconds, rounded up. */
	g_string_append_printf(body, " Choose within %" PRIu64 " s, or the system decides.\n",
			       (q->timeout_ms + 999) / 1000);
	g_variant_builder_init(&actions, G_VARIANT_TYPE("as"));
	for (unsigned i = 0; i < q->n_shown; i++) {
		human(q->shown[i].rss_bytes, sz, sizeof(sz));
		g_string_append(body, "\n");
		body_add(body, q->shown[i].name);
		g_string_append_printf(body, " — %s%s", sz,
				       q->shown[i].tier == 0   ? " (preferred)"
				       : q->shown[i].tier == 2 ? " (avoided)"
							       : "");
		if (!(q->choices & PROTOCOL_CHOICE_KILL))
			continue;
		snprintf(key, sizeof(key), "kill:%d", (int)q->shown[i].pid);
		snprintf(label, sizeof(label), "Close %s (%s)", plain(q->shown[i].name, esc), sz);
		g_variant_builder_add(&actions, "s", key);
		g_variant_builder_add(&actions, "s", label);
	}
	if (q->choices & PROTOCOL_CHOICE_GROW) {
		g_variant_builder_add(&actions, "s", "grow");
		g_variant_builder_add(&actions, "s", "Give it more memory");
	}
	g_variant_builder_add(&actions, "s", "chain");
	g_variant_builder_add(&actions, "s", "Let the system decide");

	bool can_act = server_has_actions(a);
	/* It expires with the question (0 would be "never" to the server). */
	q->notification = notify(a, 0, "Out of memory: what should be closed?", body->str, &actions, 2,
				 q->timeout_ms > INT32_MAX ? INT32_MAX
				 : q->timeout_ms	   ? (int32_t)q->timeout_ms
							   : 1);
	g_string_free(body, TRUE);
	logf_("question %u (%s): %u candidate(s) shown, %" PRIu64 " ms to answer, notification %u", q->id,
	      plain(q->scope, esc), q->n_shown, q->timeout_ms, q->notification);
	/* Nothing a person can click: let the chain go on now, not after the delay. */
	if (!q->notification || !can_act)
		answer(a, PROTOCOL_CHOICE_CHAIN, 0);
}

/* A question frame: "oom", candidates, choices. */
static void on_question(struct agent *a, const struct protocol_question *pq, struct protocol_reader *r)
{
	struct question *q = &a->q;
	struct protocol_record rec;
	char *line;

	if (q->active && q->notification)
		close_notification(a, q->notification);
	memset(q, 0, sizeof(*q));
	q->active = true;
	q->id = pq->id;
	q->timeout_ms = pq->timeout_ms;
	q->asked_ms = mono_ms();
	q->has_usage = pq->has_usage;
	q->usage_bytes = pq->usage_bytes;
	q->limit_bytes = pq->limit_bytes;
	snprintf(q->scope, sizeof(q->scope), "%s", pq->scope);
	while ((line = protocol_next_line(r))) {
		struct protocol_candidate pc;
		struct candidate c = {0};
		if (protocol_parse_record(line, &rec) < 0)
			continue;
		if (protocol_parse_candidate(&rec, &pc) == 0) {
			c.pid = pc.pid;
			c.rss_bytes = pc.rss_bytes;
			c.tier = strcmp(pc.place, "prefer") == 0 ? 0 : strcmp(pc.place, "avoid") == 0 ? 2 : 1;
			app_name(a, pc.pid, pc.comm, c.name, sizeof(c.name));
			snprintf(c.icon, sizeof(c.icon), "%s", found_icon);
			snprintf(c.job, sizeof(c.job), "%s", pc.job);
			keep_largest(q, &c);
		} else {
			(void)protocol_parse_choices(&rec, &q->choices);
		}
	}
	/* The growth the window shows: a sample now, beside the older ones. */
	sampler_tick(a->sampler, q->asked_ms);
	a->sampled_ms = q->asked_ms;
	ask(a);
}

/* "Killed Firefox (3.1 GiB) because the system ran out of memory; details: ...". */
static void tell(struct agent *a, const struct protocol_done *o, const struct protocol_victim *v,
		 const char *result)
{
	char summary[3 * PLAIN_MAX + 64], name[PLAIN_MAX], sz[32], scope_esc[PLAIN_MAX],
	    result_esc[PLAIN_MAX];
	bool machine = strcmp(o->scope, "machine") == 0;
	GString *body = g_string_new(NULL);
	GVariantBuilder actions;

	if (v) {
		human(v->bytes, sz, sizeof(sz));
		plain(v->comm, name);
	}
	/* Said as the result has it (outcome.h): never "Killed" of one that lives. */
	outcome_summary(o->action, plain(result, result_esc), v ? name : NULL, v ? sz : "",
			plain(o->scope, scope_esc), summary, sizeof(summary));
	if (machine) {
		g_string_append(body, "because the system ran out of memory");
	} else {
		g_string_append(body, "because ");
		body_add(body, o->scope);
		g_string_append(body, " reached its memory limit");
	}
	if (strncmp(o->by, "user ", 5) == 0) {
		g_string_append(body, " (chosen by ");
		body_add(body, o->by + 5);
		g_string_append(body, ")");
	} else if (strncmp(o->by, "policy ", 7) == 0) {
		/* As the window says it: who decided is part of what was done. */
		g_string_append(body, " (the system chose, by ");
		body_add(body, o->by + 7);
		g_string_append(body, ")");
	}
	g_string_append_printf(body, "; details: oomkit reports show %u", o->id);
#ifdef OOMKIT_AGENT_GTK
	/* The window that asked says it, as plain text (the body's entities are
	 * for the notification's markup: the window gets the escaped text). */
	if (a->win && (a->win_id == o->id || (o->id > a->win_id && strcmp(a->win_scope, o->scope) == 0))) {
		char scope[PLAIN_MAX], by[PLAIN_MAX];
		a->win_id = o->id;
		GString *text = g_string_new(NULL);
		if (machine)
			g_string_append(text, "because the system ran out of memory");
		else
			g_string_append_printf(text, "because %s reached its memory limit",
					       plain(o->scope, scope));
		if (strncmp(o->by, "user ", 5) == 0)
			g_string_append_printf(text, " (chosen by %s)", plain(o->by + 5, by));
		else if (strncmp(o->by, "policy ", 7) == 0)
			g_string_append_printf(text, " (the system chose, by %s)", plain(o->by + 7, by));
		g_string_append_printf(text, "; details: oomkit reports show %u", o->id);
		window_tell(a->win, summary, text->str);
		logf_("window %u says: %s %s", o->id, summary, text->str);
		g_string_free(text, TRUE);
		g_string_free(body, TRUE);
		return;
	}
#endif
	g_variant_builder_init(&actions, G_VARIANT_TYPE("as"));
	a->result_notification = notify(a, a->result_notification, summary, body->str, &actions, 1, -1);
	logf_("%s %s", summary, body->str);
	g_string_free(body, TRUE);
}

/* The name the last question showed the victim by, if it was among its
 * rows (a question of this OOM or of the one before it, which a declined
 * question's chain goes on in): by now the process may be gone, and its
 * app unit, which named it, with it. */
static bool shown_name(const struct agent *a, unsigned id, pid_t pid, char *buf, size_t len)
{
	if (!a->q.id || id < a->q.id || id - a->q.id > 1)
		return false;
	for (unsigned i = 0; i < a->q.n_shown; i++)
		if (a->q.shown[i].pid == pid) {
			snprintf(buf, len, "%s", a->q.shown[i].name);
			return true;
		}
	return false;
}

/* A "done" frame: the question (if it is ours) is over; with details, say what happened. */
static void on_done(struct agent *a, const struct protocol_done *o, struct protocol_reader *r)
{
	struct protocol_record rec;
	struct protocol_victim v;
	const char *result = NULL;
	bool has_victim = false;
	char *line;

	while ((line = protocol_next_line(r))) {
		if (protocol_parse_record(line, &rec) < 0)
			continue;
		if (protocol_parse_victim(&rec, &v) == 0)
			has_victim = true;
		else
			(void)protocol_parse_text(&rec, &result);
	}
	if (a->q.active && a->q.id == o->id) {
		if (a->q.notification)
			close_notification(a, a->q.notification);
		a->q.active = false;
	}
#ifdef OOMKIT_AGENT_GTK
	/* Nothing done: the chain goes on, and the window waits to say what it
	 * did.  Nothing to tell this user: the window that asked goes. */
	if (a->win && a->win_id == o->id && strcmp(o->action, "none") == 0) {
		window_answered(a->win, "Left to the system: oomkitd's chain decides...");
	} else if (a->win && a->win_id == o->id && !result) {
		window_close(a->win);
	}
#endif
	if (!result)
		return; /* not ours to know: we were only asked */
	if (has_victim) {
		char name[NAME_MAX_LEN];
		/* A whole job killed is named by its job (v.comm), not by a row. */
		if (strcmp(o->action, "kill") != 0 || !shown_name(a, o->id, v.pid, name, sizeof(name)))
			app_name(a, v.pid, v.comm, name, sizeof(name));
		v.comm = name;
		tell(a, o, &v, result);
	} else if (strcmp(o->action, "grow") == 0) {
		tell(a, o, NULL, result);
	}
#ifdef OOMKIT_AGENT_GTK
	else if (a->win && a->win_id == o->id) {
		char esc[PLAIN_MAX];
		window_tell(a->win, "Out of memory", plain(result, esc));
		logf_("window %u says: %s", o->id, esc);
	}
#endif
}

static void on_frame(struct agent *a, char *frame, size_t len)
{
	struct protocol_reader r;
	struct protocol_status st;
	char *first;

	protocol_reader_init(&r, frame, len);
	first = protocol_next_line(&r);
	if (!first || protocol_parse_status(first, &st) < 0)
		return;
	if (st.kind == PROTOCOL_QUESTION)
		on_question(a, &st.question, &r);
	else if (st.kind == PROTOCOL_DONE)
		on_done(a, &st.done, &r);
	else if (st.kind == PROTOCOL_ERROR) {
		char esc[PLAIN_MAX];
		logf_("oomkitd refused: %s", plain(st.message, esc));
	} else {
		/* The reply to an answer: "ok", then the daemon's verdict. */
		char *text = protocol_next_line(&r);
		if (text)
			logf_("oomkitd: %s", text);
	}
}

static gboolean reconnect(gpointer data);

static void disconnect(struct agent *a)
{
	if (a->fd_watch)
		g_source_remove(a->fd_watch);
	a->fd_watch = 0;
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	g_string_truncate(a->in, 0);
	if (a->q.active && a->q.notification)
		close_notification(a, a->q.notification);
#ifdef OOMKIT_AGENT_GTK
	if (a->win && a->q.active && a->win_id == a->q.id)
		window_close(a->win);
#endif
	a->q.active = false;
	logf_("oomkitd closed the connection; trying again every %d s", RECONNECT_S);
	g_timeout_add_seconds(RECONNECT_S, reconnect, a);
}

static gboolean on_socket(gint fd, GIOCondition cond, gpointer data)
{
	struct agent *a = data;
	char buf[16384];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	size_t end;

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		a->fd_watch = 0;
		disconnect(a);
		return G_SOURCE_REMOVE;
	}
	g_string_append_len(a->in, buf, n);
	while ((end = protocol_frame_end(a->in->str, a->in->len))) {
		char *frame = g_strndup(a->in->str, end);
		g_string_erase(a->in, 0, (gssize)end);
		on_frame(a, frame, end);
		g_free(frame);
	}
	return G_SOURCE_CONTINUE;
}

static int connect_daemon(struct agent *a)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(a->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static gboolean reconnect(gpointer data)
{
	struct agent *a = data;
	struct protocol_request req = {.verb = PROTOCOL_PROMPT};
	int fd = connect_daemon(a);

	if (fd < 0) {
		if (!a->warned_unreachable)
			logf_("cannot reach oomkitd at %s: %s; trying again every %d s", a->socket_path,
			      strerror(-fd), RECONNECT_S);
		a->warned_unreachable = true;
		return G_SOURCE_CONTINUE;
	}
	a->warned_unreachable = false;
	a->fd = fd;
	a->fd_watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_socket, a);
	send_request(a, &req);
	logf_("listening for OOMs at %s", a->socket_path);
	return G_SOURCE_REMOVE;
}

/* ------------------------------------------------------------ D-Bus signals */

static void on_action(GDBusConnection *bus, const gchar *sender, const gchar *path, const gchar *iface,
		      const gchar *signal, GVariant *params, gpointer data)
{
	struct agent *a = data;
	guint32 id;
	const char *key;
	int pid;

	(void)bus, (void)sender, (void)path, (void)iface, (void)signal;
	g_variant_get(params, "(u&s)", &id, &key);
	if (!a->q.active || id != a->q.notification || a->q.answered)
		return;
	if (sscanf(key, "kill:%d", &pid) == 1 && pid > 0)
		answer(a, PROTOCOL_CHOICE_KILL, pid);
	else if (strcmp(key, "grow") == 0)
		answer(a, PROTOCOL_CHOICE_GROW, 0);
	else if (strcmp(key, "chain") == 0)
		answer(a, PROTOCOL_CHOICE_CHAIN, 0);
}

static void on_closed(GDBusConnection *bus, const gchar *sender, const gchar *path, const gchar *iface,
		      const gchar *signal, GVariant *params, gpointer data)
{
	struct agent *a = data;
	guint32 id, reason;

	(void)bus, (void)sender, (void)path, (void)iface, (void)signal;
	g_variant_get(params, "(uu)", &id, &reason);
	if (id == a->result_notification)
		a->result_notification = 0;
	if (!a->q.active || id != a->q.notification)
		return;
	a->q.notification = 0;
	/* Dismissed by the person: they leave it to the system.  Expired: the delay runs on. */
	if (reason == CLOSED_DISMISSED && !a->q.answered)
		answer(a, PROTOCOL_CHOICE_CHAIN, 0);
}

/* ------------------------------------------------------------ main */

static gboolean on_term(gpointer data)
{
	g_main_loop_quit(((struct agent *)data)->loop);
	return G_SOURCE_REMOVE;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oomkit-agent [--socket PATH] [--notify-only] [--log-layout] | --app-name PID | "
		"--version\n"
		"Shows oomkitd's questions about this user's processes in a window%s, or as desktop\n"
		"notifications.\n"
		"socket: $OOMKIT_SOCKET or " OOMKITD_DEFAULT_SOCKET "\n",
#ifdef OOMKIT_AGENT_GTK
		""
#else
		" (not in this build: no GTK 4)"
#endif
	);
}

int main(int argc, char **argv)
{
	struct agent a = {.socket_path = OOMKITD_DEFAULT_SOCKET, .proc_root = "/proc", .fd = -1};
	GError *err = NULL;
	bool notify_only = false;

	if (getenv("OOMKIT_SOCKET"))
		a.socket_path = getenv("OOMKIT_SOCKET");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
			a.socket_path = argv[++i];
		} else if (strcmp(argv[i], "--notify-only") == 0) {
			notify_only = true;
		} else if (strcmp(argv[i], "--log-layout") == 0) {
			a.log_layout = true;
		} else if (strcmp(argv[i], "--app-name") == 0 && i + 1 < argc) {
			/* What a notification would call process PID. */
			char name[NAME_MAX_LEN], comm[64] = "?", path[64];
			FILE *f;
			snprintf(path, sizeof(path), "/proc/%s/comm", argv[i + 1]);
			if ((f = fopen(path, "re"))) {
				if (fgets(comm, sizeof(comm), f))
					comm[strcspn(comm, "\n")] = '\0';
				fclose(f);
			}
			app_name(&a, (pid_t)atoi(argv[i + 1]), comm, name, sizeof(name));
			printf("%s\n", name);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("oomkit-agent " OOMKIT_PACKAGE_VERSION "\n");
			return 0;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	a.bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &err);
	if (!a.bus) {
		logf_("no session bus: %s", err->message);
		g_error_free(err);
		return 1;
	}
	/* Signals only from the name's owner: no other client can answer for the person. */
	g_dbus_connection_signal_subscribe(a.bus, NOTIFY_NAME, NOTIFY_IFACE, "ActionInvoked", NOTIFY_PATH,
					   NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_action, &a, NULL);
	g_dbus_connection_signal_subscribe(a.bus, NOTIFY_NAME, NOTIFY_IFACE, "NotificationClosed",
					   NOTIFY_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_closed, &a, NULL);
#ifdef OOMKIT_AGENT_GTK
	/* A window where there is a display GTK can open; notifications else. */
	if (!notify_only) {
		a.use_window = window_available();
		if (!a.use_window)
			logf_("no display for a window (GTK could not start): questions are shown as "
			      "notifications");
	}
#else
	if (!notify_only)
		logf_("built without GTK 4: questions are shown as notifications");
#endif
	if (a.use_window)
		logf_("questions are shown in a window");
	(void)server_has_actions(&a);
	a.sampler = sampler_new(a.proc_root, getuid());
	a.sampled_ms = mono_ms();
	sampler_tick(a.sampler, a.sampled_ms);
	g_timeout_add_seconds(1, on_second, &a);
	a.in = g_string_new(NULL);
	a.loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGTERM, on_term, &a);
	g_unix_signal_add(SIGINT, on_term, &a);
	if (reconnect(&a) == G_SOURCE_CONTINUE)
		g_timeout_add_seconds(RECONNECT_S, reconnect, &a);
	g_main_loop_run(a.loop);
	if (a.q.active && a.q.notification)
		close_notification(&a, a.q.notification);
	g_dbus_connection_flush_sync(a.bus, NULL, NULL);
	g_main_loop_unref(a.loop);
	g_string_free(a.in, TRUE);
	sampler_free(a.sampler);
	g_object_unref(a.bus);
	if (a.fd >= 0)
		close(a.fd);
	return 0;
}
