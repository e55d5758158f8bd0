/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop.h - the daemon's one event loop: an epoll set for every descriptor
 * (the library's, the control socket and its clients, victims' pidfds), one
 * timerfd armed only for the earliest deadline that is due, and a signalfd
 * (SIGHUP reloads, SIGTERM and SIGINT stop).  While nothing is due the
 * timer is disarmed and the daemon sleeps until the kernel, a signal or a
 * client has something for it.
 *
 * Modules register what they need at setup (fixed tables: nothing here
 * allocates) and are called back; none of them calls into main.  A reload,
 * asked for by SIGHUP or by a control command, goes through loop_reload(),
 * which calls the function main registered.
 */
#ifndef OOMKITD_LOOP_H
#define OOMKITD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#define LOOP_MAX_SOURCES 16
#define LOOP_MAX_TIMERS 16

/* Called with the index given to loop_add_fd() and the epoll events. */
typedef void (*loop_fd_fn)(void *data, uint32_t index, uint32_t events);
typedef void (*loop_timer_fn)(void *data, uint64_t now_ns);

/* A deadline owned by a module: due_ns (CLOCK_MONOTONIC) or 0 when nothing
 * is due.  The module sets due_ns itself; the loop reads every timer before
 * it sleeps and calls fn once due_ns has passed. */
struct loop_timer {
	uint64_t due_ns;
	loop_timer_fn fn;
	void *data;
};

struct loop {
	int epfd, timerfd, sigfd;
	bool stop;
	struct {
		loop_fd_fn fn;
		void *data;
	} sources[LOOP_MAX_SOURCES];
	unsigned n_sources;
	struct loop_timer *timers[LOOP_MAX_TIMERS];
	unsigned n_timers;
	int (*reload)(void *data);
	void *reload_data;
	void (*after_turn)(void *data);
	void *after_turn_data;
};

/* Blocks the signals it handles and makes its descriptors; 0 or -errno. */
int loop_init(struct loop *l);
void loop_close(struct loop *l);

/* A kind of descriptor and its callback; returns its id for loop_add_fd(). */
int loop_add_source(struct loop *l, loop_fd_fn fn, void *data);
int loop_add_fd(struct loop *l, int fd, int source, uint32_t index, uint32_t events);
int loop_mod_fd(struct loop *l, int fd, int source, uint32_t index, uint32_t events);
void loop_del_fd(struct loop *l, int fd);

/* Registers a timer for the loop's lifetime; 0 or -ENOSPC. */
int loop_add_timer(struct loop *l, struct loop_timer *t);

/* What a reload is (main's), and asking for one: its result, or -ENOTSUP. */
void loop_on_reload(struct loop *l, int (*fn)(void *data), void *data);
int loop_reload(struct loop *l);

/* Called after each turn of the loop (the metrics file is rewritten there). */
void loop_on_turn(struct loop *l, void (*fn)(void *data), void *data);

/* Runs until loop_stop() or SIGTERM/SIGINT: 0, or -errno if epoll fails. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
