/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * window.h - the agent's question as a window of its own (GTK 4): what ran
 * out, the time left, the candidates as rows with a Close button each,
 * "Give it more memory" where the job may grow, "Let the system decide",
 * and a Details expander.  Built only where GTK 4 is found; without it (or
 * without a display) the agent keeps to notifications.
 *
 * Every string in a window_view is shown as plain text (never markup), and
 * the agent passes names through the one escaper for untrusted bytes first.
 */
#ifndef OOMKIT_AGENT_WINDOW_H
#define OOMKIT_AGENT_WINDOW_H

#include <stdbool.h>
#include <sys/types.h>

#define WINDOW_ROWS_MAX 3
#define WINDOW_TEXT_MAX 1100

struct window_row {
	pid_t pid;
	char name[WINDOW_TEXT_MAX]; /* the app's name, escaped */
	char icon[256];		    /* a GIcon's string form ("" none) */
	char memory[128];	    /* "21 MiB, +20 MiB in the last 5 s" */
	char job[WINDOW_TEXT_MAX];  /* "job desk", escaped; "" none */
	char size[32];		    /* "21 MiB", for the button's accessible name */
};

struct window_view {
	unsigned id;
	char what[WINDOW_TEXT_MAX]; /* "The job desk has reached its memory limit." */
	char left[64];		    /* "The system decides in 9 s." */
	double fraction;	    /* of the time left */
	struct window_row rows[WINDOW_ROWS_MAX];
	unsigned n_rows;
	bool can_kill, can_grow;
	char details[4 * WINDOW_TEXT_MAX]; /* lines */
};

/* What the person chose: kill (pid), grow (pid 0), let the system decide
 * (chain, pid 0; also Escape and closing the window unanswered). */
enum window_choice { WINDOW_KILL, WINDOW_GROW, WINDOW_CHAIN };

struct window_callbacks {
	void (*choose)(enum window_choice choice, pid_t pid, void *data);
	void (*closed)(void *data); /* the window is gone: forget it */
	/* Optional: after the window is first drawn, a line per control, "control
	 * NAME at X,Y" (its accessible name and its centre in the window's own
	 * pixels), so a test can click it where a person would. */
	void (*layout)(const char *line, void *data);
	void *data;
};

struct window;

/* Whether windows can be shown (GTK initialized on a display); tried once. */
bool window_available(void);

/* Opens the question's window: above the others and urgent; focused only
 * if no other window has the keyboard (window.c says why). */
struct window *window_open(const struct window_view *v, const struct window_callbacks *cb);

/* The countdown, the rows' memory and the details, anew. */
void window_refresh(struct window *w, const struct window_view *v);

/* After an answer: its buttons are off, and it says what it waits for. */
void window_answered(struct window *w, const char *status);

/* What was done: the question's controls go, the text and an OK button stay. */
void window_tell(struct window *w, const char *summary, const char *body);

/* The question ended with nothing to tell (another decided, it expired). */
void window_close(struct window *w);

#endif
