/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * window.c - see window.h.  GTK 4; on X11 it also asks the window manager
 * (EWMH) to keep the window above the others.
 *
 * Focus: a window that takes the keyboard while the person types elsewhere
 * would receive their keystrokes, and an Enter meant for a document could
 * close an app.  So the window takes focus only when no other window has it
 * (_NET_ACTIVE_WINDOW is none); otherwise it opens above the others, urgent
 * (the window manager flashes it in the task bar), with a user time of 0,
 * which EWMH window managers read as "do not focus on map", and the person
 * clicks it or Alt-Tabs to it.  On Wayland the compositor decides, and
 * without an activation token it does the same.  Even when it is focused,
 * the first focus is on "Let the system decide", so a stray Enter does not
 * kill.
 */
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>
#ifdef GDK_WINDOWING_X11
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <gdk/x11/gdkx.h>
#endif

#include "window.h"

struct row_widgets {
	GtkWidget *icon, *name, *job, *memory, *close;
	pid_t pid;
	char label[WINDOW_TEXT_MAX + 64]; /* the Close button's accessible name */
};

struct window {
	GtkWidget *win, *what, *left, *bar, *grid, *grow, *decide, *details, *expander, *status, *ok;
	GtkWidget *summary;
	struct row_widgets rows[WINDOW_ROWS_MAX];
	unsigned n_rows;
	bool answered, told, layout_done;
	struct window_callbacks cb;
};

bool window_available(void)
{
	static int ok = -1;

	if (ok < 0)
		ok = gtk_init_check() ? 1 : 0;
	return ok == 1;
}

static void set_name(GtkWidget *w, const char *name)
{
	gtk_accessible_update_property(GTK_ACCESSIBLE(w), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
}

/* A label of plain text: names come from processes, and no markup in them
 * may restyle the window (use-markup is off; set again for the reader). */
static GtkWidget *plain_label(const char *text, const char *css)
{
	GtkWidget *l = gtk_label_new(NULL);

	gtk_label_set_use_markup(GTK_LABEL(l), FALSE);
	gtk_label_set_text(GTK_LABEL(l), text);
	gtk_label_set_xalign(GTK_LABEL(l), 0);
	gtk_label_set_wrap(GTK_LABEL(l), TRUE);
	if (css)
		gtk_widget_add_css_class(l, css);
	return l;
}

static void choose(struct window *w, enum window_choice c, pid_t pid)
{
	if (w->answered || w->told)
		return;
	w->answered = true;
	w->cb.choose(c, pid, w->cb.data);
}

static void on_close_clicked(GtkButton *b, gpointer data)
{
	struct window *w = data;
	pid_t pid = (pid_t)GPOINTER_TO_INT(g_object_get_data(G_OBJECT(b), "pid"));

	choose(w, WINDOW_KILL, pid);
}

static void on_grow(GtkButton *b, gpointer data)
{
	(void)b;
	choose(data, WINDOW_GROW, 0);
}

static void on_decide(GtkButton *b, gpointer data)
{
	(void)b;
	choose(data, WINDOW_CHAIN, 0);
}

static void on_ok(GtkButton *b, gpointer data)
{
	(void)b;
	gtk_window_destroy(GTK_WINDOW(((struct window *)data)->win));
}

/* Escape lets the system decide, as "Let the system decide" does; once
 * answered or told, it closes the window. */
static gboolean on_key(GtkEventControllerKey *k, guint keyval, guint code, GdkModifierType state,
		       gpointer data)
{
	struct window *w = data;

	(void)k, (void)code, (void)state;
	if (keyval != GDK_KEY_Escape)
		return FALSE;
	if (!w->answered && !w->told)
		choose(w, WINDOW_CHAIN, 0);
	else
		gtk_window_destroy(GTK_WINDOW(w->win));
	return TRUE;
}

/* Closing the window unanswered is declining, as dismissing a notification is. */
static gboolean on_close_request(GtkWindow *win, gpointer data)
{
	(void)win;
	choose(data, WINDOW_CHAIN, 0);
	return FALSE;
}

static void on_destroy(GtkWidget *widget, gpointer data)
{
	struct window *w = data;

	(void)widget;
	if (w->cb.closed)
		w->cb.closed(w->cb.data);
	g_free(w);
}

#ifdef GDK_WINDOWING_X11
/* Whether another window has the keyboard (_NET_ACTIVE_WINDOW). */
static bool x11_other_active(GdkDisplay *display)
{
	Display *dpy = gdk_x11_display_get_xdisplay(display);
	Atom type;
	int format;
	unsigned long n, after;
	unsigned char *data = NULL;
	bool other = false;

	if (XGetWindowProperty(dpy, DefaultRootWindow(dpy), XInternAtom(dpy, "_NET_ACTIVE_WINDOW", False), 0,
			       1, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
	    data && n == 1 && format == 32)
		other = *(unsigned long *)data != 0;
	if (data)
		XFree(data);
	return other;
}

/* EWMH: the window manager keeps it above the others, and flags it. */
static void x11_above(GtkWidget *widget)
{
	GdkSurface *s = gtk_native_get_surface(GTK_NATIVE(widget));
	Display *dpy = gdk_x11_display_get_xdisplay(gdk_surface_get_display(s));
	Window xid = gdk_x11_surface_get_xid(s);
	Atom state = XInternAtom(dpy, "_NET_WM_STATE", False);
	Atom atoms[2] = {XInternAtom(dpy, "_NET_WM_STATE_ABOVE", False),
			 XInternAtom(dpy, "_NET_WM_STATE_DEMANDS_ATTENTION", False)};
	XEvent e = {0};

	/* Read when the manager takes the window; sent, when it already has. */
	XChangeProperty(dpy, xid, state, XA_ATOM, 32, PropModeAppend, (unsigned char *)atoms, 2);
	e.xclient.type = ClientMessage;
	e.xclient.window = xid;
	e.xclient.message_type = state;
	e.xclient.format = 32;
	e.xclient.data.l[0] = 1; /* _NET_WM_STATE_ADD */
	e.xclient.data.l[1] = (long)atoms[0];
	e.xclient.data.l[2] = (long)atoms[1];
	e.xclient.data.l[3] = 1; /* from an application */
	XSendEvent(dpy, DefaultRootWindow(dpy), False, SubstructureRedirectMask | SubstructureNotifyMask, &e);
	XFlush(dpy);
}
#endif

/* Realized, not yet shown: urgent, and whether it may take the keyboard. */
static bool may_focus(GtkWidget *widget)
{
	GdkSurface *s = gtk_native_get_surface(GTK_NATIVE(widget));
	bool focus = true;

#ifdef GDK_WINDOWING_X11
	if (GDK_IS_X11_SURFACE(s)) {
		gdk_x11_surface_set_urgency_hint(s, TRUE);
		focus = !x11_other_active(gdk_surface_get_display(s));
		if (!focus)
			gdk_x11_surface_set_user_time(s, 0);
	}
#else
	(void)s;
#endif
	return focus;
}

static void on_map(GtkWidget *widget, gpointer data)
{
	(void)data;
#ifdef GDK_WINDOWING_X11
	if (GDK_IS_X11_SURFACE(gtk_native_get_surface(GTK_NATIVE(widget))))
		x11_above(widget);
#else
	(void)widget;
#endif
}

/* A control's centre in the surface's pixels (the window's own, scale included). */
static void layout_line(struct window *w, GtkWidget *control, const char *name)
{
	graphene_point_t in = GRAPHENE_POINT_INIT(0, 0), out;
	double sx, sy;
	char line[WINDOW_TEXT_MAX + 128];
	GtkNative *native = gtk_widget_get_native(control);
	int scale = gtk_widget_get_scale_factor(control);

	if (!gtk_widget_get_visible(control) || !native)
		return;
	in.x = (float)gtk_widget_get_width(control) / 2;
	in.y = (float)gtk_widget_get_height(control) / 2;
	if (!gtk_widget_compute_point(control, GTK_WIDGET(native), &in, &out))
		return;
	gtk_native_get_surface_transform(native, &sx, &sy);
	snprintf(line, sizeof(line), "control %s at %d,%d", name, (int)((out.x + sx) * scale),
		 (int)((out.y + sy) * scale));
	w->cb.layout(line, w->cb.data);
}

static void log_layout(struct window *w)
{
	for (unsigned i = 0; i < w->n_rows; i++)
		layout_line(w, w->rows[i].close, w->rows[i].label);
	layout_line(w, w->grow, "Give it more memory");
	layout_line(w, w->decide, "Let the system decide");
	layout_line(w, w->expander, "Details");
	w->cb.layout("layout done", w->cb.data);
}

static gboolean on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
	struct window *w = data;

	(void)clock;
	if (w->layout_done || !gtk_widget_get_mapped(widget) || gtk_widget_get_width(w->decide) <= 0)
		return G_SOURCE_CONTINUE;
	w->layout_done = true;
	if (w->cb.layout)
		log_layout(w);
	return G_SOURCE_REMOVE;
}

static void add_row(struct window *w, unsigned i, const struct window_row *r, bool can_kill)
{
	struct row_widgets *rw = &w->rows[i];
	GIcon *icon = r->icon[0] ? g_icon_new_for_string(r->icon, NULL) : NULL;
	int y = (int)i;

	rw->pid = r->pid;
	rw->icon =
	    icon ? gtk_image_new_from_gicon(icon) : gtk_image_new_from_icon_name("application-x-executable");
	if (icon)
		g_object_unref(icon);
	gtk_image_set_icon_size(GTK_IMAGE(rw->icon), GTK_ICON_SIZE_LARGE);
	gtk_accessible_update_property(GTK_ACCESSIBLE(rw->icon), GTK_ACCESSIBLE_PROPERTY_LABEL, r->name, -1);
	rw->name = plain_label(r->name, "heading");
	rw->job = plain_label(r->job, "dim-label");
	rw->memory = plain_label(r->memory, NULL);
	gtk_widget_set_hexpand(rw->name, TRUE);
	gtk_grid_attach(GTK_GRID(w->grid), rw->icon, 0, 2 * y, 1, 2);
	gtk_grid_attach(GTK_GRID(w->grid), rw->name, 1, 2 * y, 1, 1);
	gtk_grid_attach(GTK_GRID(w->grid), rw->job, 2, 2 * y, 1, 1);
	gtk_grid_attach(GTK_GRID(w->grid), rw->memory, 1, 2 * y + 1, 2, 1);
	snprintf(rw->label, sizeof(rw->label), "Close %s", r->name);
	if (!can_kill)
		return;
	rw->close = gtk_button_new_with_label("Close");
	gtk_widget_add_css_class(rw->close, "destructive-action");
	gtk_widget_set_valign(rw->close, GTK_ALIGN_CENTER);
	set_name(rw->close, rw->label);
	gtk_accessible_update_property(GTK_ACCESSIBLE(rw->close), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
				       r->memory, -1);
	g_object_set_data(G_OBJECT(rw->close), "pid", GINT_TO_POINTER(r->pid));
	g_signal_connect(rw->close, "clicked", G_CALLBACK(on_close_clicked), w);
	gtk_grid_attach(GTK_GRID(w->grid), rw->close, 3, 2 * y, 1, 2);
}

static GtkWidget *build(struct window *w, const struct window_view *v)
{
	GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10);
	GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);

	gtk_widget_set_margin_start(box, 18);
	gtk_widget_set_margin_end(box, 18);
	gtk_widget_set_margin_top(box, 14);
	gtk_widget_set_margin_bottom(box, 14);
	w->summary = plain_label("Out of memory: what should be closed?", "title-2");
	w->what = plain_label(v->what, NULL);
	w->left = plain_label(v->left, NULL);
	w->bar = gtk_progress_bar_new();
	set_name(w->bar, "Time left");
	w->grid = gtk_grid_new();
	gtk_grid_set_column_spacing(GTK_GRID(w->grid), 12);
	gtk_grid_set_row_spacing(GTK_GRID(w->grid), 2);
	w->n_rows = v->n_rows;
	for (unsigned i = 0; i < v->n_rows; i++)
		add_row(w, i, &v->rows[i], v->can_kill);
	w->grow = gtk_button_new_with_label("Give it more memory");
	set_name(w->grow, "Give it more memory");
	gtk_widget_set_visible(w->grow, v->can_grow);
	w->decide = gtk_button_new_with_label("Let the system decide");
	set_name(w->decide, "Let the system decide");
	gtk_widget_add_css_class(w->decide, "suggested-action");
	g_signal_connect(w->grow, "clicked", G_CALLBACK(on_grow), w);
	g_signal_connect(w->decide, "clicked", G_CALLBACK(on_decide), w);
	gtk_widget_set_halign(buttons, GTK_ALIGN_END);
	gtk_box_append(GTK_BOX(buttons), w->grow);
	gtk_box_append(GTK_BOX(buttons), w->decide);
	w->details = plain_label(v->details, "monospace");
	gtk_label_set_wrap(GTK_LABEL(w->details), FALSE);
	gtk_label_set_selectable(GTK_LABEL(w->details), TRUE);
	w->expander = gtk_expander_new("Details");
	set_name(w->expander, "Details");
	gtk_expander_set_child(GTK_EXPANDER(w->expander), w->details);
	w->status = plain_label("", NULL);
	gtk_widget_set_visible(w->status, FALSE);
	w->ok = gtk_button_new_with_label("OK");
	set_name(w->ok, "OK");
	gtk_widget_set_halign(w->ok, GTK_ALIGN_END);
	gtk_widget_set_visible(w->ok, FALSE);
	g_signal_connect(w->ok, "clicked", G_CALLBACK(on_ok), w);
	GtkWidget *parts[] = {w->summary, w->what,   w->left, w->bar,	  w->grid,
			      buttons,	  w->status, w->ok,   w->expander};
	for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
		gtk_box_append(GTK_BOX(box), parts[i]);
	return box;
}

struct window *window_open(const struct window_view *v, const struct window_callbacks *cb)
{
	struct window *w = g_new0(struct window, 1);
	GtkEventController *keys = gtk_event_controller_key_new();

	w->cb = *cb;
	w->win = gtk_window_new();
	gtk_window_set_title(GTK_WINDOW(w->win), "Out of memory - oomkit");
	gtk_window_set_default_size(GTK_WINDOW(w->win), 560, -1);
	gtk_window_set_child(GTK_WINDOW(w->win), build(w, v));
	window_refresh(w, v);
	g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), w);
	gtk_widget_add_controller(w->win, keys);
	g_signal_connect(w->win, "close-request", G_CALLBACK(on_close_request), w);
	g_signal_connect(w->win, "destroy", G_CALLBACK(on_destroy), w);
	g_signal_connect_after(w->win, "map", G_CALLBACK(on_map), w);
	gtk_widget_add_tick_callback(w->win, on_tick, w, NULL);
	gtk_window_set_focus(GTK_WINDOW(w->win), w->decide);
	gtk_widget_realize(w->win);
	/* Presenting asks the window manager for the keyboard; only showing
	 * (with a user time of 0) does not. */
	if (may_focus(w->win))
		gtk_window_present(GTK_WINDOW(w->win));
	else
		gtk_widget_set_visible(w->win, TRUE);
	return w;
}

void window_refresh(struct window *w, const struct window_view *v)
{
	if (w->told)
		return;
	gtk_label_set_text(GTK_LABEL(w->what), v->what);
	if (!w->answered) {
		gtk_label_set_text(GTK_LABEL(w->left), v->left);
		gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(w->bar), v->fraction);
	}
	for (unsigned i = 0; i < w->n_rows && i < v->n_rows; i++)
		if (w->rows[i].pid == v->rows[i].pid)
			gtk_label_set_text(GTK_LABEL(w->rows[i].memory), v->rows[i].memory);
	gtk_label_set_text(GTK_LABEL(w->details), v->details);
}

static void controls_off(struct window *w)
{
	for (unsigned i = 0; i < w->n_rows; i++)
		if (w->rows[i].close)
			gtk_widget_set_sensitive(w->rows[i].close, FALSE);
	gtk_widget_set_sensitive(w->grow, FALSE);
	gtk_widget_set_sensitive(w->decide, FALSE);
}

void window_answered(struct window *w, const char *status)
{
	w->answered = true;
	controls_off(w);
	gtk_label_set_text(GTK_LABEL(w->status), status);
	gtk_widget_set_visible(w->status, TRUE);
}

void window_tell(struct window *w, const char *summary, const char *body)
{
	w->told = true;
	controls_off(w);
	gtk_widget_set_visible(w->left, FALSE);
	gtk_widget_set_visible(w->bar, FALSE);
	gtk_widget_set_visible(gtk_widget_get_parent(w->decide), FALSE);
	gtk_label_set_text(GTK_LABEL(w->summary), summary);
	gtk_label_set_text(GTK_LABEL(w->status), body);
	gtk_widget_set_visible(w->status, TRUE);
	gtk_widget_set_visible(w->ok, TRUE);
	gtk_window_set_focus(GTK_WINDOW(w->win), w->ok);
	gtk_window_set_title(GTK_WINDOW(w->win), "Out of memory: done - oomkit");
}

void window_close(struct window *w)
{
	gtk_window_destroy(GTK_WINDOW(w->win));
}
