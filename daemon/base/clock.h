/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clock.h - the daemon's clocks: CLOCK_MONOTONIC in nanoseconds for every
 * deadline and duration (the library's event times are on it too), and the
 * wall clock only for what a person reads (a report's time).
 */
#ifndef OOMKITD_CLOCK_H
#define OOMKITD_CLOCK_H

#include <stdint.h>

#define NS_PER_MS 1000000ull
#define NS_PER_SEC 1000000000ull

/* CLOCK_MONOTONIC, in nanoseconds. */
uint64_t now_ns(void);

/* CLOCK_BOOTTIME, in milliseconds: the clock a process's start time
 * (/proc/PID/stat) counts on. */
uint64_t boot_ms(void);

/* CLOCK_REALTIME, in milliseconds since the epoch. */
uint64_t realtime_ms(void);

#endif
