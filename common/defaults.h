/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * defaults.h - the defaults that programs other than oomkitd need as well:
 * the command line finds the daemon's socket where the daemon puts it by
 * default.  Every other default lives, once, in config.c's key table.
 */
#ifndef OOMKITD_DEFAULTS_H
#define OOMKITD_DEFAULTS_H

#define OOMKITD_DEFAULT_SOCKET "/run/oomkit/oomkitd.sock"

#endif
