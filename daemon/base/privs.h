/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * privs.h - what oomkitd gives up: the capabilities its work does not need,
 * and every system call off an allow-list (seccomp).  See privs.c for why
 * each kept capability and each allowed call is there.
 */
#ifndef OOMKITD_PRIVS_H
#define OOMKITD_PRIVS_H

#include <stdbool.h>

/* Before liboomkit starts (so its guardian, a fork, inherits both): keeps
 * only the capabilities the daemon uses (plus CAP_SYS_RESOURCE until
 * privs_setup_done()), in the bounding set too, and with seccomp on installs
 * the allow-list.  ptrace: keep CAP_SYS_PTRACE too, for exe: rules; -EPERM
 * if the process does not have it.  Logs what it did; 0, or -errno after
 * logging why. */
int privs_restrict(bool seccomp, bool ptrace);

/* After setup: drops what only setup needed (CAP_SYS_RESOURCE, which made
 * oom_score_adj -1000 possible).  0, or -errno after logging why. */
int privs_setup_done(void);

/* The capabilities kept for the daemon's whole run, as a CapEff mask. */
unsigned long long privs_run_caps_mask(void);

/* Installs the seccomp allow-list alone: a call off it fails with EPERM and
 * the kernel logs it (audit, type 1326).  0 or -errno; logs nothing. */
int privs_install_seccomp(void);

#endif
