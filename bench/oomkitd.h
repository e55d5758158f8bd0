/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkitd.h - oomkitd itself as a benchmark subject: a configuration of N
 * jobs (j0 .. jN-1) under a machine memcg in the benchmark's tree, the daemon
 * started from this build with its log, reports, socket and metrics file in
 * a directory of the benchmark's, and waited for until it says it is ready.
 * The daemon and its guardian are tracked by benchlib, so they die with the
 * benchmark; the machine and the reserve memcg the daemon makes beside it
 * (<machine>-daemon) lie in the benchmark's tree, removed with it.
 */
#ifndef OOMKIT_BENCH_OOMKITD_H
#define OOMKIT_BENCH_OOMKITD_H

#include <stdbool.h>
#include <sys/types.h>

struct bench_daemon {
	unsigned jobs;
	pid_t pid, guardian;
	char machine[512]; /* relative to the memory root */
	char conf[160], log[160], reports[160], metrics[160];
};

/* Writes the configuration of jobs jobs of job_limit_mib each (kill-largest
 * at both levels) for a machine at rel, with its files under dir, starts
 * oomkitd and waits up to 30 s for "oomkitd ready".  0, or -1 after a
 * bl_fail() line naming what went wrong. */
int bench_daemon_start(struct bench_daemon *d, const char *dir, const char *rel, unsigned jobs,
		       unsigned job_limit_mib);
/* The same, with job_extra (NULL: none) added to each job's section. */
int bench_daemon_start_with(struct bench_daemon *d, const char *dir, const char *rel, unsigned jobs,
			    unsigned job_limit_mib, const char *job_extra);

/* The daemons' delay (2s unless a benchmark sets another before starting them). */
extern const char *bench_daemon_delay;

/* Whether the file holds what anywhere (the log has a line per job before
 * "oomkitd ready", so with a thousand jobs the word is far from the start). */
bool bench_file_has(const char *path, const char *what);

#endif
