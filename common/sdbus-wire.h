/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sdbus-wire.h - the messages between oomkitd (sdbus.c) and its systemd
 * helper, oomkitd-systemd (sdbus-helper.c), over a SOCK_SEQPACKET pair: one
 * fixed-size struct each way, so the daemon sends without allocating, from
 * the handler path too.
 */
#ifndef OOMKITD_SDBUS_WIRE_H
#define OOMKITD_SDBUS_WIRE_H

#include <stdint.h>

/* A unit name as systemd allows it (UNIT_NAME_MAX is 255). */
#define SDBUS_UNIT_MAX 256

enum sdbus_op {
	/* daemon -> helper */
	SDBUS_SET = 1,	 /* unit's memory.high and .max are now high/max: tell systemd */
	SDBUS_SCOPE = 2, /* start transient scope unit in slice with pid in it; DONE answers */
	SDBUS_QUIT = 3,	 /* put every unit back as it was, then DONE and exit */
	/* helper -> daemon */
	SDBUS_READY = 10, /* once, connected to the system bus */
	SDBUS_DONE = 11,  /* result of the request id */
};

struct sdbus_msg {
	uint32_t op;
	int32_t result;			/* DONE: 0 or -errno */
	uint64_t id;			/* SCOPE: the daemon's name for the request, echoed in DONE */
	uint64_t high_bytes, max_bytes; /* SET; UINT64_MAX: "max" (infinity) */
	uint32_t pid;			/* SCOPE */
	uint32_t pad;
	char unit[SDBUS_UNIT_MAX];
	char slice[SDBUS_UNIT_MAX]; /* SCOPE */
	char error[160];	    /* DONE: what failed, for the log */
};

#endif
