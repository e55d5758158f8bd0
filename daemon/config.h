/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.h - oomkitd's configuration: an INI file (read with libinih) parsed
 * into a fresh struct, validated as a whole, and only then handed to the
 * daemon.  A configuration that has any error is never applied.
 */
#ifndef OOMKITD_CONFIG_H
#define OOMKITD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONFIG_MAX_JOBS 1024 /* the figures of issue 7 go to 1000 */
#define CONFIG_MAX_CHAIN 8
#define CONFIG_MAX_PROTECT 16
#define CONFIG_NAME_MAX 64 /* job names, including the NUL */
#define CONFIG_COMM_MAX 16 /* process names as the kernel keeps them (15 + NUL) */
#define CONFIG_PATH_MAX 512
#define CONFIG_SOCKET_MAX 108  /* sizeof(sun_path) */
#define CONFIG_ERRORS_MAX 4096 /* all error lines of one parse */

/* The policies a chain is made of. */
enum policy_kind {
	POLICY_GROW = 0,
	POLICY_KILL_LOWEST,
	POLICY_KILL_NEWEST,
	POLICY_KILL_LARGEST,
	POLICY_KILL_OVER_EXPECTED,
	POLICY_REPORT,
	POLICY_PROMPT,
	POLICY_KERNEL,
	POLICY__COUNT,
};

struct policy_chain {
	enum policy_kind steps[CONFIG_MAX_CHAIN];
	unsigned n_steps;
};

/* What a job loses when a policy picks one of its processes. */
enum kill_scope {
	KILL_PROCESS = 0,
	KILL_JOB = 1,
};

struct config_job {
	char name[CONFIG_NAME_MAX];
	unsigned priority;	  /* 0..1000, higher is more important */
	uint64_t limit_bytes;	  /* UINT64_MAX: no limit of its own */
	uint64_t limit_max_bytes; /* grow never goes past this */
	uint64_t expect_bytes;	  /* 0: unknown */
	struct policy_chain chain;
	enum kill_scope kill;
	char protect[CONFIG_MAX_PROTECT][CONFIG_COMM_MAX];
	unsigned n_protect;
	bool has_owner;
	uid_t owner;
	unsigned line; /* where its section starts */
	unsigned seen; /* bit per key, to find duplicates */
};

struct config {
	char source[CONFIG_PATH_MAX]; /* file name used in messages */
	char machine[CONFIG_PATH_MAX];
	uint64_t machine_limit_bytes; /* UINT64_MAX: no extra limit */
	struct policy_chain chain;    /* for machine-level OOMs */
	uint64_t delay_ms;
	uint64_t reserve_bytes;
	char report_dir[CONFIG_PATH_MAX];
	unsigned report_max_count;
	uint64_t report_max_bytes;
	char socket[CONFIG_SOCKET_MAX];
	char metrics[CONFIG_PATH_MAX]; /* "": no metrics file */
	uint64_t metrics_interval_ms;  /* 0: rewritten only on events */
	bool readonly_status;	       /* anyone may read status and ps */
	unsigned seen;		       /* bit per [oomkitd] key */
	/* Exactly n_jobs, on the heap: a job is about 420 bytes, and a daemon
	 * with ten jobs should not carry room for a thousand (twice: it and its
	 * guardian lock their memory).  Owned by the struct: config_free(). */
	struct config_job *jobs;
	unsigned n_jobs;
};

/* The configuration used when no file is given. */
extern const char config_builtin[];

/* Parses text (named source in messages) into a fresh *ret, which then owns
 * its jobs array (release it with config_free()).  On error returns -EINVAL,
 * leaves *ret untouched and writes one line per error into errors (each
 * "source:line: [section] key: what"); -ENOMEM if memory runs out. */
int config_parse_string(const char *text, const char *source, struct config *ret, char *errors,
			size_t errors_len);

/* Reads and parses a file; -errno when it cannot be read (the message is in
 * errors as well). */
int config_load(const char *path, struct config *ret, char *errors, size_t errors_len);

/* Frees what a parsed configuration owns (not the struct itself) and empties it. */
void config_free(struct config *cfg);

/* Finds a job by name; NULL if there is none. */
const struct config_job *config_find_job(const struct config *cfg, const char *name);

/* Parsers for the value syntaxes, exposed for tests.  Each returns 0 or -EINVAL/-ERANGE. */
int config_parse_size(const char *s, bool allow_max, uint64_t *ret_bytes);
int config_parse_duration(const char *s, uint64_t *ret_ms);
int config_parse_chain(const char *s, struct policy_chain *ret, char *bad, size_t bad_len);

/* "kill-lowest" for POLICY_KILL_LOWEST; NULL for an unknown kind. */
const char *policy_kind_name(enum policy_kind kind);

/* Formats a chain as "report, kill-lowest, kernel". */
void config_format_chain(const struct policy_chain *chain, char *buf, size_t len);

/* Formats a byte count with the largest exact suffix ("512M", "1536K", "max"). */
void config_format_size(uint64_t bytes, char *buf, size_t len);

#endif
