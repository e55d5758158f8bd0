/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sampler.h - the agent's own memory history of this user's processes.
 * oomkitd sends a question's candidates with their memory once, and must not
 * allocate on its OOM path to keep a history for them; the agent, a process
 * of the user's session with time to spare, reads /proc itself: every few
 * seconds (each second while a question is open) the resident size of each
 * process of its uid, kept for a minute, so the window can say how much a
 * process grew.  A process is known by its pid and its start time, so a pid
 * taken by a new process starts a new history.
 */
#ifndef OOMKIT_AGENT_SAMPLER_H
#define OOMKIT_AGENT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SAMPLER_KEEP_MS 60000
#define SAMPLER_COMM_MAX 16

struct sampler;

struct sampler_top {
	pid_t pid;
	char comm[SAMPLER_COMM_MAX];
	uint64_t rss_bytes;
	int64_t grew_bytes; /* over span_ms, the oldest sample kept within the minute */
	uint64_t span_ms;   /* 0: a single sample, nothing to compare */
};

/* proc_root: "/proc"; uid: whose processes to follow. */
struct sampler *sampler_new(const char *proc_root, uid_t uid);
void sampler_free(struct sampler *s);

/* Reads the resident size of every process of the uid, at now_ms (a
 * monotonic clock); forgets the processes that are gone and the samples
 * older than SAMPLER_KEEP_MS.  Returns how many processes it follows. */
unsigned sampler_tick(struct sampler *s, uint64_t now_ms);

/* How much pid grew over the last window_ms at most (its newest sample less
 * the oldest one inside the window): false if it has fewer than two samples
 * there.  ret_rss_bytes: its newest sample. */
bool sampler_growth(const struct sampler *s, pid_t pid, uint64_t window_ms, uint64_t *ret_rss_bytes,
		    int64_t *ret_grew_bytes, uint64_t *ret_span_ms);

/* The n largest by their newest sample, largest first, with their growth
 * over the minute; returns how many it wrote. */
unsigned sampler_top(const struct sampler *s, struct sampler_top *ret, unsigned n);

/* "Swap: 1.2 GiB of 8 GiB used" inputs, from /proc/meminfo: false if unreadable. */
bool sampler_meminfo(const char *proc_root, uint64_t *ret_mem_total, uint64_t *ret_mem_available,
		     uint64_t *ret_swap_total, uint64_t *ret_swap_free);

#endif
