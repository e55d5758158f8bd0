/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protect.c - see protect.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "rules/lowmem-rule.h"
#include "scope/protect.h"
#include "common/value.h"

static void on_timer(void *data, uint64_t now);
static void on_done(void *data, uint32_t index, uint32_t events);

int protect_init(struct protect *p, struct loop *loop, oomkit_ctx *ctx, struct scopes *scopes)
{
	unsigned n = scopes->max_jobs;

	memset(p, 0, sizeof(*p));
	p->want_fd = p->done_fd = -1;
	p->ctx = ctx;
	p->scopes = scopes;
	p->max_jobs = n;
	p->in = calloc(n, sizeof(*p->in));
	p->plan = calloc(n, sizeof(*p->plan));
	p->of = calloc(n, sizeof(*p->of));
	if (!p->in || !p->plan || !p->of) {
		protect_free(p);
		return -ENOMEM;
	}
	p->loop = loop;
	p->want_fd = eventfd(0, EFD_CLOEXEC);
	p->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->want_fd < 0 || p->done_fd < 0) {
		protect_free(p);
		return -errno;
	}
	int source = loop_add_source(loop, on_done, p);
	if (source < 0)
		return source;
	int r = loop_add_fd(loop, p->done_fd, source, 0, EPOLLIN);
	if (r < 0)
		return r;
	p->timer = (struct loop_timer){.fn = on_timer, .data = p};
	return loop_add_timer(loop, &p->timer);
}

void protect_free(struct protect *p)
{
	free(p->in);
	free(p->plan);
	free(p->of);
	p->in = NULL;
	p->plan = NULL;
	p->of = NULL;
	/* A thread started reads want_fd until the process ends. */
	if (!p->thread_started) {
		if (p->want_fd >= 0)
			close(p->want_fd);
		if (p->done_fd >= 0)
			close(p->done_fd);
		p->want_fd = p->done_fd = -1;
	}
}

/* ------------------------------------------------------------ slots */

static struct protect_slot *slot_of(struct protect *p, const struct scope *s, bool make)
{
	struct protect_slot *free_slot = NULL;

	for (unsigned i = 0; i < PROTECT_SLOTS; i++) {
		struct protect_slot *sl = &p->slots[i];
		if (sl->used && scope_get(sl->scope) == s)
			return sl;
		if (!sl->used && !free_slot)
			free_slot = sl;
	}
	if (!make)
		return NULL;
	/* A slot of a scope gone that holds nothing is reused before none. */
	for (unsigned i = 0; !free_slot && i < PROTECT_SLOTS; i++)
		if (!scope_get(p->slots[i].scope) && !p->slots[i].low_set)
			free_slot = &p->slots[i];
	if (!free_slot)
		return NULL;
	*free_slot = (struct protect_slot){.used = true, .scope = scope_ref((struct scope *)s)};
	snprintf(free_slot->rel, sizeof(free_slot->rel), "%s", s->rel);
	snprintf(free_slot->label, sizeof(free_slot->label), "%s", s->label);
	return free_slot;
}

bool protect_of(const struct protect *p, const struct scope *s, uint64_t *ret_low_bytes,
		uint64_t *ret_reclaimed_bytes)
{
	const struct protect_slot *sl = slot_of((struct protect *)p, s, false);

	if (!sl)
		return false;
	*ret_low_bytes = sl->low_set ? sl->low_bytes : 0;
	*ret_reclaimed_bytes = sl->reclaimed_bytes;
	return true;
}

/* Puts back a memory.low we wrote, unless someone has written it since:
 * theirs stands. */
static void put_back(struct protect *p, const char *rel, const char *label, uint64_t ours, uint64_t orig)
{
	uint64_t now;
	int r = oomkit_cgroup_protection(p->ctx, rel, &now);

	if (r == -ENOENT)
		return; /* gone with its protection */
	if (r == 0 && now != ours) {
		log_notice("%s: memory.low was changed by someone else since oomkitd set it, left as it is",
			   label);
		return;
	}
	if (r < 0 || (r = oomkit_set_protection(p->ctx, rel, orig)) < 0)
		log_warning("%s: memory.low not put back: %s", label, strerror(-r));
}

static void unprotect(struct protect *p, struct protect_slot *sl)
{
	if (!sl->low_set)
		return;
	put_back(p, sl->rel, sl->label, sl->low_bytes, sl->orig_low_bytes);
	sl->low_set = false;
	sl->low_bytes = 0;
}

static void unprotect_ancestors(struct protect *p)
{
	for (unsigned i = 0; i < PROTECT_ANCESTORS; i++) {
		struct protect_ancestor *a = &p->anc[i];
		if (a->used && a->low_bytes)
			put_back(p, a->rel, a->rel, a->low_bytes, a->orig_low_bytes);
		a->used = false;
	}
}

/* ------------------------------------------------------------ protection */

/* Gives sl a memory.low of want (0: none of ours). */
static void protect_slot(struct protect *p, struct protect_slot *sl, uint64_t want)
{
	uint64_t now;
	int r;

	if (!want) {
		unprotect(p, sl);
		return;
	}
	if ((r = oomkit_cgroup_protection(p->ctx, sl->rel, &now)) < 0)
		return;
	if (sl->low_set && now == want)
		return;
	/* Not ours (first time, or systemd wrote its own again): theirs is
	 * what is put back. */
	if (!sl->low_set || now != sl->low_bytes)
		sl->orig_low_bytes = now;
	if (sl->orig_low_bytes >= want) {
		sl->low_set = false;
		return;
	}
	if ((r = oomkit_set_protection(p->ctx, sl->rel, want)) < 0) {
		log_warning("%s: memory.low not set: %s", sl->label, strerror(-r));
		return;
	}
	if (!sl->low_set) {
		char b[32];
		value_format_bytes(want, b, sizeof(b));
		log_info("%s: memory.low %s (its working set, protected from reclaim)", sl->label, b);
	}
	sl->low_set = true;
	sl->low_bytes = want;
}

static struct protect_ancestor *ancestor(struct protect *p, const char *rel, size_t len)
{
	struct protect_ancestor *free_a = NULL;

	for (unsigned i = 0; i < PROTECT_ANCESTORS; i++) {
		struct protect_ancestor *a = &p->anc[i];
		if (a->used && strlen(a->rel) == len && memcmp(a->rel, rel, len) == 0)
			return a;
		if (!a->used && !free_a)
			free_a = a;
	}
	if (free_a) {
		*free_a = (struct protect_ancestor){0};
		memcpy(free_a->rel, rel, len);
		free_a->rel[len] = 0;
	}
	return free_a;
}

/* Each ancestor of a protected job, below the root (which has no
 * memory.low), at least the sum of its protected jobs' protection: the
 * kernel protects a cgroup only as far as its parent is.  low_bytes of an
 * ancestor is what we wrote (0: nothing yet). */
static void protect_ancestors(struct protect *p)
{
	uint64_t want[PROTECT_ANCESTORS] = {0};

	for (unsigned i = 0; i < PROTECT_SLOTS; i++) {
		const struct protect_slot *sl = &p->slots[i];
		if (!sl->used || !sl->low_set)
			continue;
		for (const char *c = strchr(sl->rel, '/'); c; c = strchr(c + 1, '/')) {
			struct protect_ancestor *a = ancestor(p, sl->rel, (size_t)(c - sl->rel));
			if (!a)
				break;
			a->used = true;
			want[a - p->anc] += sl->low_bytes;
		}
	}
	for (unsigned i = 0; i < PROTECT_ANCESTORS; i++) {
		struct protect_ancestor *a = &p->anc[i];
		uint64_t now;
		if (!a->used)
			continue;
		if (oomkit_cgroup_protection(p->ctx, a->rel, &now) < 0) {
			a->used = false;
			continue;
		}
		if (!a->low_bytes || now != a->low_bytes)
			a->orig_low_bytes = now;
		if (want[i] <= a->orig_low_bytes) {
			/* Its own is enough, or nothing below needs it now. */
			if (a->low_bytes && now == a->low_bytes)
				(void)oomkit_set_protection(p->ctx, a->rel, a->orig_low_bytes);
			a->used = false;
			continue;
		}
		if (now != want[i] && oomkit_set_protection(p->ctx, a->rel, want[i]) < 0) {
			if (!a->low_bytes)
				a->used = false;
			continue;
		}
		a->low_bytes = want[i];
	}
}

/* ------------------------------------------------------------ reclaim */

/* The reclaiming thread: one memory.reclaim write per request. */
static void *reclaimer(void *data)
{
	struct protect *p = data;
	uint64_t v;

	for (;;) {
		ssize_t n = read(p->want_fd, &v, sizeof(v));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(v))
			return NULL;
		uint64_t t0 = now_ns();
		p->req.result = oomkit_cgroup_reclaim(p->ctx, p->req.rel, p->req.want_bytes);
		p->req.took_ms = (now_ns() - t0) / NS_PER_MS;
		v = 1;
		(void)!write(p->done_fd, &v, sizeof(v));
	}
	return NULL;
}

static int start_thread(struct protect *p)
{
	pthread_attr_t a;
	int r;

	if (p->thread_started)
		return 0;
	/* Its stack is locked with the rest of the daemon: keep it small. */
	if ((r = pthread_attr_init(&a)) != 0)
		return -r;
	(void)pthread_attr_setstacksize(&a, 64 * 1024);
	(void)pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&p->thread, &a, reclaimer, p);
	pthread_attr_destroy(&a);
	if (r != 0)
		return -r;
	p->thread_started = true;
	return 0;
}

/* The thread's request has ended: what it gave is counted. */
static void on_done(void *data, uint32_t index, uint32_t events)
{
	struct protect *p = data;
	struct protect_slot *sl = p->req.slot;
	struct oomkit_cgroup_memory after;
	uint64_t v, got = 0;
	int r = p->req.result;

	(void)index;
	(void)events;
	if (read(p->done_fd, &v, sizeof(v)) != sizeof(v) || !p->busy)
		return;
	p->busy = false;
	/* The kernel reclaimed at least what was asked when it says so; when
	 * it could not, what the job's usage fell by is what it gave (the job
	 * may have grown meanwhile: then nothing is counted). */
	if (r == 0)
		got = p->req.want_bytes;
	else if (r == -EAGAIN && oomkit_cgroup_memory(p->ctx, p->req.rel, &after) == 0 &&
		 after.usage_bytes < p->req.before_bytes)
		got = p->req.before_bytes - after.usage_bytes;
	else if (r != -EAGAIN) {
		log_warning("%s: memory.reclaim: %s", sl->label, strerror(-r));
		return;
	}
	sl->reclaims++;
	sl->reclaimed_bytes += got;
	sl->episode_reclaimed_bytes += got;
	log_debug("%s: memory.reclaim %" PRIu64 " KiB: %" PRIu64 " KiB in %" PRIu64 " ms", sl->label,
		  p->req.want_bytes >> 10, got >> 10, p->req.took_ms);
	if (p->changed)
		p->changed(p->changed_data);
}

/* Hands the thread a request; one at a time (a step still under way makes
 * this look's step wait for the next). */
static void reclaim(struct protect *p, struct scope *s, uint64_t want)
{
	struct protect_slot *sl = slot_of(p, s, true);
	struct oomkit_cgroup_memory before;
	uint64_t v = 1;
	int r;

	if (!sl || p->busy || oomkit_cgroup_memory(p->ctx, s->rel, &before) < 0)
		return;
	if ((r = start_thread(p)) < 0) {
		log_warning("memory_priority: no thread to reclaim with: %s", strerror(-r));
		return;
	}
	snprintf(p->req.rel, sizeof(p->req.rel), "%s", s->rel);
	p->req.want_bytes = want;
	p->req.before_bytes = before.usage_bytes;
	p->req.slot = sl;
	p->busy = true;
	if (write(p->want_fd, &v, sizeof(v)) != sizeof(v))
		p->busy = false;
}

/* ------------------------------------------------------------ episodes */

/* The machine's stall and room now; false if they cannot be read. */
static bool read_machine(struct protect *p, struct protect_machine *m)
{
	struct oomkit_pressure psi;
	struct oomkit_system_memory mem;
	struct oomkit_system_swap sw;

	if (oomkit_pressure_read(p->ctx, p->cfg->machine_rel, &psi) < 0 ||
	    oomkit_system_memory(p->ctx, &mem) < 0)
		return false;
	if (oomkit_system_swap(p->ctx, &sw) < 0)
		sw = (struct oomkit_system_swap){0};
	*m = (struct protect_machine){
	    .ram_bytes = mem.total_bytes,
	    .room_bytes = mem.available_bytes + sw.usable_bytes,
	    .min_room_bytes = lowmem_min_room(&p->cfg->machine_available, mem.total_bytes, sw.total_bytes),
	    .some_x100 = (unsigned)psi.some_avg10_x100,
	    .stall_percent = p->cfg->memory_priority_stall_percent,
	    .step_bytes = p->cfg->memory_priority_step_bytes,
	};
	p->some_x100 = m->some_x100;
	return true;
}

/* The rule's input: every job with memory; their stall and memory.low
 * only where the rule looks at them. */
static unsigned gather(struct protect *p)
{
	unsigned n = 0, lo = ~0u;

	SCOPE_FOREACH_JOB (s, p->scopes) {
		struct oomkit_cgroup_memory mem;
		if (!s->job || n >= p->max_jobs || oomkit_cgroup_memory(p->ctx, s->rel, &mem) < 0)
			continue;
		struct protect_slot *sl = slot_of(p, s, false);
		p->in[n] = (struct protect_job){.priority = s->job->priority, .usage_bytes = mem.usage_bytes};
		p->in[n].start_usage_bytes = sl && sl->start_usage ? sl->start_usage : mem.usage_bytes;
		p->of[n++] = s;
		if (mem.usage_bytes && s->job->priority < lo)
			lo = s->job->priority;
	}
	for (unsigned i = 0; i < n; i++) {
		struct oomkit_pressure psi;
		uint64_t low;
		if (p->in[i].priority == lo && oomkit_pressure_read(p->ctx, p->of[i]->rel, &psi) == 0)
			p->in[i].full_x100 = (unsigned)psi.full_avg10_x100;
		struct protect_slot *sl = slot_of(p, p->of[i], false);
		if (sl && sl->low_set)
			p->in[i].low_bytes = sl->orig_low_bytes;
		else if (p->in[i].priority > lo && oomkit_cgroup_protection(p->ctx, p->of[i]->rel, &low) == 0)
			p->in[i].low_bytes = low;
	}
	return n;
}

/* Slots of scopes a reload removed give their protection back. */
static void drop_gone(struct protect *p)
{
	for (unsigned i = 0; i < PROTECT_SLOTS; i++)
		if (p->slots[i].used && !scope_get(p->slots[i].scope))
			unprotect(p, &p->slots[i]);
}

static void step(struct protect *p, const struct protect_machine *m)
{
	unsigned n = gather(p);
	int pick = protect_decide(m, p->in, n, p->plan);

	drop_gone(p);
	for (unsigned i = 0; i < n; i++) {
		struct protect_slot *sl = slot_of(p, p->of[i], p->plan[i].low_bytes != 0);
		if (!sl)
			continue;
		if (!sl->start_usage)
			sl->start_usage = p->in[i].start_usage_bytes;
		protect_slot(p, sl, p->plan[i].low_bytes);
	}
	protect_ancestors(p);
	if (pick >= 0) {
		struct protect_slot *sl = slot_of(p, p->of[pick], true);
		if (sl && !sl->start_usage)
			sl->start_usage = p->in[pick].start_usage_bytes;
		reclaim(p, p->of[pick], p->plan[pick].reclaim_bytes);
	}
	if (p->changed)
		p->changed(p->changed_data);
}

static void begin(struct protect *p, const struct protect_machine *m)
{
	p->active = true;
	p->since_ms = realtime_ms();
	p->calm_since_ns = 0;
	p->episodes++;
	for (unsigned i = 0; i < PROTECT_SLOTS; i++) {
		p->slots[i].start_usage = 0;
		p->slots[i].episode_reclaimed_bytes = 0;
	}
	log_info("machine: memory stalls %u.%02u%% of the time (some, avg10): protecting the working sets of "
		 "the higher-priority jobs, reclaiming from the lowest",
		 m->some_x100 / 100, m->some_x100 % 100);
}

static void end(struct protect *p)
{
	uint64_t total = 0;

	for (unsigned i = 0; i < PROTECT_SLOTS; i++) {
		if (!p->slots[i].used)
			continue;
		unprotect(p, &p->slots[i]);
		total += p->slots[i].episode_reclaimed_bytes;
	}
	unprotect_ancestors(p);
	if (p->active)
		log_info("machine: memory stalls are over: every memory.low put back, %" PRIu64
			 " MiB reclaimed from the lowest-priority jobs",
			 total >> 20);
	p->active = false;
	p->calm_since_ns = 0;
	if (p->changed)
		p->changed(p->changed_data);
}

static void on_timer(void *data, uint64_t now)
{
	struct protect *p = data;
	struct protect_machine m;

	p->timer.due_ns = p->on ? now + PROTECT_TICK_MS * NS_PER_MS : 0;
	if (!p->on || !read_machine(p, &m))
		return;
	if (!p->active) {
		if (!protect_pressed(&m))
			return;
		begin(p, &m);
	} else if (protect_calm(&m)) {
		if (!p->calm_since_ns)
			p->calm_since_ns = now;
		if (now - p->calm_since_ns >= PROTECT_CALM_MS * NS_PER_MS) {
			end(p);
			return;
		}
	} else
		p->calm_since_ns = 0;
	step(p, &m);
}

/* ------------------------------------------------------------ setup */

void protect_configure(struct protect *p, const struct config *cfg)
{
	bool want = cfg->memory_priority;
	bool v2 = oomkit_backend(p->ctx) == OOMKIT_BACKEND_V2;

	p->cfg = cfg;
	if (want && !v2 && !p->told_v1) {
		log_notice("memory_priority: needs cgroup v2 (memory.low, memory.reclaim); off on cgroup v1");
		p->told_v1 = true;
	}
	want = want && v2;
	if (!want && p->active)
		end(p);
	else
		drop_gone(p);
	p->on = want;
	p->timer.due_ns = want ? now_ns() + PROTECT_TICK_MS * NS_PER_MS : 0;
}

void protect_stop(struct protect *p)
{
	/* The library's context, whose descriptors the thread writes through,
	 * goes after this: a step under way ends first.  The kernel ends a
	 * memory.reclaim write once it has reclaimed the step or has made no
	 * progress in a bounded number of tries, so the wait ends; a context
	 * freed under the thread would let its write reach whatever file
	 * reused the descriptor. */
	if (p->busy) {
		struct pollfd pf = {.fd = p->done_fd, .events = POLLIN};
		int n = poll(&pf, 1, 5000);
		if (n == 0) {
			log_notice("memory_priority: waiting for a memory.reclaim step of %s to end",
				   p->req.slot ? p->req.slot->label : "a job");
			do
				n = poll(&pf, 1, -1);
			while (n < 0 && errno == EINTR);
		}
		if (n == 1)
			on_done(p, 0, 0);
	}
	end(p);
	p->on = false;
	p->timer.due_ns = 0;
}

void protect_write_json(struct oomkit__json *w, const struct protect *p)
{
	oomkit__json_open(w, "memory_priority", '{');
	oomkit__json_bool(w, "on", p->on);
	oomkit__json_bool(w, "active", p->active);
	/* The episode under way, or the last one. */
	if (p->episodes)
		oomkit__json_u64(w, "since_ms", p->since_ms);
	oomkit__json_fixed(w, "stall_some_percent", p->some_x100, 2);
	oomkit__json_open(w, "jobs", '[');
	for (unsigned i = 0; i < PROTECT_SLOTS; i++) {
		const struct protect_slot *sl = &p->slots[i];
		if (!sl->used || (!sl->low_set && !sl->episode_reclaimed_bytes))
			continue;
		oomkit__json_open(w, NULL, '{');
		oomkit__json_str(w, "job", sl->label);
		oomkit__json_str(w, "cgroup", sl->rel);
		oomkit__json_u64(w, "memory_low", sl->low_set ? sl->low_bytes : 0);
		oomkit__json_u64(w, "reclaimed_bytes", sl->episode_reclaimed_bytes);
		oomkit__json_close(w, '}');
	}
	oomkit__json_close(w, ']');
	oomkit__json_close(w, '}');
}
