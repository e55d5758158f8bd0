/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h - the benchmarks of oomkit-bench, one function each.  Each returns
 * 0 when it measured what it set out to (slow or not), 1 when something
 * could not be measured (reported with an "F" line).
 */
#ifndef OOMKIT_BENCH_H
#define OOMKIT_BENCH_H

#include <stdint.h>

/* 1: OOM notification latency, liboomkit vs a bare eventfd loop. */
int bench_notify(int argc, char **argv);

/* 2: last touch to victim reaped and usage under the limit, oomkit vs the kernel killer. */
int bench_resolve(int argc, char **argv);

/* 3 and 4: idle wakeups, CPU and footprint at 10/100/1000 watches vs earlyoom. */
int bench_idle(int argc, char **argv);

/* 5: N memcgs hitting their limits at once, oomkit vs the kernel killer. */
int bench_storm(int argc, char **argv);

/* 6: a growing hog past a threshold, oomkit's usage threshold vs earlyoom. */
int bench_machine(int argc, char **argv);

/* 7: a job's OOM handled by oomkitd with 10, 100 and 1000 jobs vs the kernel killer. */
int bench_daemon(int argc, char **argv);
int bench_rules(int argc, char **argv);

/* 10: a job's OOM with 0, 1 000 and 10 000 empty sub-cgroups in the job. */
int bench_churn(int argc, char **argv);

/* The watcher's stamp (bench/watcher.c writes it, the benchmarks map it):
 * benchlib's bl_watch_stamp, then when the handler's side read the kernel's
 * event (liboomkit: the event's time_ns, taken as it reads the eventfd; the
 * bare loop: its own read), so entry_ns - read_ns is the library's time
 * between the kernel's event and the handler. */
struct bench_stamp {
	volatile uint64_t entry_ns;
	volatile uint64_t events;
	volatile uint64_t read_ns;
};

/* An unsigned option "--name=VALUE" from argv, or fallback. */
unsigned bench_opt(int argc, char **argv, const char *name, unsigned fallback);

#endif
