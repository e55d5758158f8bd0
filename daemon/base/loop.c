/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* loop.c - see loop.h. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/loop.h"

#define MAX_EVENTS 32

/* The loop's own descriptors are sources too: source ids start after them. */
enum { SOURCE_TIMER = 0, SOURCE_SIGNAL = 1, FIRST_SOURCE = 2 };

static uint64_t tag(uint32_t source, uint32_t index)
{
	return (uint64_t)source << 32 | index;
}

static int add(struct loop *l, int fd, uint32_t source, uint32_t index, uint32_t events, int op)
{
	struct epoll_event ev = {.events = events, .data.u64 = tag(source, index)};

	return epoll_ctl(l->epfd, op, fd, &ev) < 0 ? -errno : 0;
}

int loop_init(struct loop *l)
{
	sigset_t mask;

	memset(l, 0, sizeof(*l));
	l->epfd = l->timerfd = l->sigfd = -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	l->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	l->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->sigfd < 0 || l->timerfd < 0 || l->epfd < 0)
		return -errno;
	int r = add(l, l->sigfd, SOURCE_SIGNAL, 0, EPOLLIN, EPOLL_CTL_ADD);
	return r < 0 ? r : add(l, l->timerfd, SOURCE_TIMER, 0, EPOLLIN, EPOLL_CTL_ADD);
}

void loop_close(struct loop *l)
{
	int *fds[] = {&l->epfd, &l->timerfd, &l->sigfd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int loop_add_source(struct loop *l, loop_fd_fn fn, void *data)
{
	if (l->n_sources == LOOP_MAX_SOURCES)
		return -ENOSPC;
	l->sources[l->n_sources].fn = fn;
	l->sources[l->n_sources].data = data;
	return (int)l->n_sources++;
}

int loop_add_fd(struct loop *l, int fd, int source, uint32_t index, uint32_t events)
{
	return add(l, fd, (uint32_t)source + FIRST_SOURCE, index, events, EPOLL_CTL_ADD);
}

int loop_mod_fd(struct loop *l, int fd, int source, uint32_t index, uint32_t events)
{
	return add(l, fd, (uint32_t)source + FIRST_SOURCE, index, events, EPOLL_CTL_MOD);
}

void loop_del_fd(struct loop *l, int fd)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int loop_add_timer(struct loop *l, struct loop_timer *t)
{
	if (l->n_timers == LOOP_MAX_TIMERS)
		return -ENOSPC;
	l->timers[l->n_timers++] = t;
	return 0;
}

void loop_on_reload(struct loop *l, int (*fn)(void *data), void *data)
{
	l->reload = fn;
	l->reload_data = data;
}

int loop_reload(struct loop *l)
{
	return l->reload ? l->reload(l->reload_data) : -ENOTSUP;
}

void loop_on_turn(struct loop *l, void (*fn)(void *data), void *data)
{
	l->after_turn = fn;
	l->after_turn_data = data;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

/* The timerfd is armed for the earliest due timer, or disarmed. */
static void arm(struct loop *l)
{
	uint64_t next = UINT64_MAX;
	struct itimerspec its = {0};

	for (unsigned i = 0; i < l->n_timers; i++)
		if (l->timers[i]->due_ns && l->timers[i]->due_ns < next)
			next = l->timers[i]->due_ns;
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / NS_PER_SEC);
		its.it_value.tv_nsec = (long)(next % NS_PER_SEC);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(l->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void on_timer(struct loop *l)
{
	uint64_t expirations, now = now_ns();

	(void)!read(l->timerfd, &expirations, sizeof(expirations));
	for (unsigned i = 0; i < l->n_timers; i++) {
		struct loop_timer *t = l->timers[i];
		if (t->due_ns && now >= t->due_ns)
			t->fn(t->data, now);
	}
}

static void on_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			log_notice("SIGHUP: reloading");
			(void)loop_reload(l);
		} else {
			log_notice("signal %u: stopping", si.ssi_signo);
			l->stop = true;
		}
	}
}

static void dispatch(struct loop *l, const struct epoll_event *ev)
{
	uint32_t source = (uint32_t)(ev->data.u64 >> 32), index = (uint32_t)ev->data.u64;

	if (source == SOURCE_TIMER)
		on_timer(l);
	else if (source == SOURCE_SIGNAL)
		on_signal(l);
	else if (source - FIRST_SOURCE < l->n_sources)
		l->sources[source - FIRST_SOURCE].fn(l->sources[source - FIRST_SOURCE].data, index,
						     ev->events);
}

int loop_run(struct loop *l)
{
	struct epoll_event evs[MAX_EVENTS];

	while (!l->stop) {
		arm(l);
		int n = epoll_wait(l->epfd, evs, MAX_EVENTS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++)
			dispatch(l, &evs[i]);
		if (l->after_turn)
			l->after_turn(l->after_turn_data);
	}
	return 0;
}
