/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - oomkitd.conf: INI read with libinih, values parsed and checked
 * here.  libinih does not tell the handler which line it is on, so the text
 * is fed to it through our own line reader, which counts lines, recognises
 * section headers and rejects what libinih would silently accept (indented
 * continuation lines, over-long lines).  Every error is collected with its
 * file:line and key; a parse with any error leaves the caller's struct alone.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomkit.h"

const char config_builtin[] = "[oomkitd]\n"
			      "machine = /sys/fs/cgroup/memory/oomkit\n"
			      "policy = report, kill-lowest, kernel\n"
			      "delay = 2s\n"
			      "reserve = 16M\n"
			      "report_dir = /var/lib/oomkit/reports\n"
			      "report_max_count = 100\n"
			      "report_max_bytes = 64M\n"
			      "socket = /run/oomkit/oomkitd.sock\n"
			      "metrics = /var/lib/oomkit/oomkit.prom\n";

#define DEFAULT_JOB_CHAIN "report, kernel"
#define DEFAULT_PRIORITY 500
#define CONFIG_FILE_MAX (1024 * 1024)
#define LINE_MAX_LEN 190 /* libinih's line buffer is 200 bytes, less "\r\n\0" and margin */

static const char *const policy_names[POLICY__COUNT] = {
    [POLICY_GROW] = "grow",
    [POLICY_KILL_LOWEST] = "kill-lowest",
    [POLICY_KILL_NEWEST] = "kill-newest",
    [POLICY_KILL_LARGEST] = "kill-largest",
    [POLICY_KILL_OVER_EXPECTED] = "kill-over-expected",
    [POLICY_REPORT] = "report",
    [POLICY_PROMPT] = "prompt",
    [POLICY_KERNEL] = "kernel",
};

const char *policy_kind_name(enum policy_kind kind)
{
	if ((unsigned)kind >= POLICY__COUNT)
		return NULL;
	return policy_names[kind];
}

/* ------------------------------------------------------------ value syntaxes */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int parse_u64_prefix(const char *s, uint64_t *ret, const char **end)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	*end = s;
	return 0;
}

int config_parse_size(const char *s, bool allow_max, uint64_t *ret_bytes)
{
	static const char suffixes[] = "KMGT";
	uint64_t v, mult = 1;
	const char *end;
	int r;

	if (allow_max && (strcmp(s, "max") == 0 || strcmp(s, "none") == 0)) {
		*ret_bytes = OOMKIT_UNLIMITED;
		return 0;
	}
	r = parse_u64_prefix(s, &v, &end);
	if (r < 0)
		return r;
	if (*end) {
		const char *p = strchr(suffixes, toupper((unsigned char)*end));
		if (!p)
			return -EINVAL;
		for (long i = 0; i <= p - suffixes; i++)
			mult *= 1024;
		end++;
		/* "512M", "512MB" and "512MiB" all mean mebibytes. */
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret_bytes = v * mult;
	return 0;
}

int config_parse_duration(const char *s, uint64_t *ret_ms)
{
	uint64_t v;
	const char *end;
	int r = parse_u64_prefix(s, &v, &end);

	if (r < 0)
		return r;
	if (strcmp(end, "ms") == 0) {
		*ret_ms = v;
		return 0;
	}
	if (strcmp(end, "s") == 0) {
		if (v > UINT64_MAX / 1000)
			return -ERANGE;
		*ret_ms = v * 1000;
		return 0;
	}
	/* A bare 0 needs no unit; any other bare number is ambiguous. */
	if (*end == '\0' && v == 0) {
		*ret_ms = 0;
		return 0;
	}
	return -EINVAL;
}

/* Splits a comma-separated list; calls fn on each trimmed, non-empty item.
 * An empty item ("a,,b" or a trailing comma) is an error reported as "". */
static int split_list(const char *s, int (*fn)(const char *item, void *userdata), void *userdata, char *bad,
		      size_t bad_len)
{
	char item[CONFIG_PATH_MAX];

	while (true) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		const char *start = skip_ws(s);
		size_t len = n - (size_t)(start - s);

		while (len > 0 && (start[len - 1] == ' ' || start[len - 1] == '\t'))
			len--;
		if (len == 0 || len >= sizeof(item)) {
			snprintf(bad, bad_len, "%s", "");
			return -EINVAL;
		}
		memcpy(item, start, len);
		item[len] = '\0';
		int r = fn(item, userdata);
		if (r < 0) {
			snprintf(bad, bad_len, "%s", item);
			return r;
		}
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static int chain_add(const char *item, void *userdata)
{
	struct policy_chain *chain = userdata;

	for (unsigned k = 0; k < POLICY__COUNT; k++) {
		if (strcmp(item, policy_names[k]) != 0)
			continue;
		if (chain->n_steps >= CONFIG_MAX_CHAIN)
			return -E2BIG;
		chain->steps[chain->n_steps++] = (enum policy_kind)k;
		return 0;
	}
	return -EINVAL;
}

int config_parse_chain(const char *s, struct policy_chain *ret, char *bad, size_t bad_len)
{
	struct policy_chain chain = {0};
	int r = split_list(s, chain_add, &chain, bad, bad_len);

	if (r < 0)
		return r;
	*ret = chain;
	return 0;
}

void config_format_chain(const struct policy_chain *chain, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < chain->n_steps && off < len; i++) {
		int n =
		    snprintf(buf + off, len - off, "%s%s", i ? ", " : "", policy_kind_name(chain->steps[i]));
		if (n < 0)
			return;
		off += (size_t)n;
	}
}

void config_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffixes[] = "KMGT";
	int i = -1;

	if (bytes == OOMKIT_UNLIMITED) {
		snprintf(buf, len, "max");
		return;
	}
	while (bytes && bytes % 1024 == 0 && i < 3) {
		bytes /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		snprintf(buf, len, "%" PRIu64 "%c", bytes, suffixes[i]);
}

/* ------------------------------------------------------------ parse state */

enum section_kind {
	SECTION_NONE = 0, /* before any header */
	SECTION_DAEMON,
	SECTION_JOB,
	SECTION_BAD, /* an unknown or broken section: its keys are skipped */
};

struct parse_state {
	struct config *cfg;
	const char *source;
	const char *text;
	size_t pos;
	unsigned line;
	enum section_kind kind;
	char section[CONFIG_NAME_MAX + 8];
	struct config_job *job;
	unsigned jobs_cap; /* slots in cfg->jobs */
	bool out_of_memory;
	unsigned limit_line[CONFIG_MAX_JOBS];
	bool limit_bad[CONFIG_MAX_JOBS]; /* limit or limit_max did not parse: no cascade */
	bool daemon_seen;
	char *errors;
	size_t errors_len;
	size_t errors_off;
	unsigned n_errors;
};

static void add_error(struct parse_state *st, unsigned line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct parse_state *st, unsigned line, const char *key, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	int n;

	st->n_errors++;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!st->errors || st->errors_off >= st->errors_len)
		return;
	if (key && st->section[0])
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off,
			     "%s:%u: [%s] %s: %s\n", st->source, line, st->section, key, what);
	else if (st->section[0])
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off,
			     "%s:%u: [%s]: %s\n", st->source, line, st->section, what);
	else
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off, "%s:%u: %s%s%s\n",
			     st->source, line, key ? key : "", key ? ": " : "", what);
	if (n > 0)
		st->errors_off += (size_t)n;
}

static bool valid_job_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= CONFIG_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.')
			return false;
	return true;
}

static void job_defaults(struct config_job *job)
{
	char bad[8];

	memset(job, 0, sizeof(*job));
	job->priority = DEFAULT_PRIORITY;
	job->limit_bytes = OOMKIT_UNLIMITED;
	job->limit_max_bytes = OOMKIT_UNLIMITED;
	job->kill = KILL_PROCESS;
	config_parse_chain(DEFAULT_JOB_CHAIN, &job->chain, bad, sizeof(bad));
}

/* Doubles the jobs array while parsing; the result is trimmed to size. */
static int grow_jobs(struct parse_state *st)
{
	unsigned cap = st->jobs_cap ? st->jobs_cap * 2 : 16;
	struct config_job *jobs;

	if (cap > CONFIG_MAX_JOBS)
		cap = CONFIG_MAX_JOBS;
	jobs = realloc(st->cfg->jobs, cap * sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	st->cfg->jobs = jobs;
	st->jobs_cap = cap;
	return 0;
}

static void begin_section(struct parse_state *st, const char *name)
{
	snprintf(st->section, sizeof(st->section), "%.*s", (int)(sizeof(st->section) - 1), name);
	st->job = NULL;
	st->kind = SECTION_BAD;
	if (strcmp(name, "oomkitd") == 0) {
		if (st->daemon_seen) {
			add_error(st, st->line, NULL, "section given twice");
			return;
		}
		st->daemon_seen = true;
		st->kind = SECTION_DAEMON;
		return;
	}
	if (strncmp(name, "job ", 4) != 0) {
		add_error(st, st->line, NULL, "unknown section (expected [oomkitd] or [job NAME])");
		return;
	}
	const char *job_name = name + 4;
	if (!valid_job_name(job_name)) {
		add_error(st, st->line, NULL,
			  "bad job name '%s' (letters, digits, '-', '_', '.'; at most %d)", job_name,
			  CONFIG_NAME_MAX - 1);
		return;
	}
	struct config *cfg = st->cfg;
	for (unsigned i = 0; i < cfg->n_jobs; i++)
		if (strcmp(cfg->jobs[i].name, job_name) == 0) {
			add_error(st, st->line, NULL, "duplicate job (first at line %u)", cfg->jobs[i].line);
			return;
		}
	if (cfg->n_jobs >= CONFIG_MAX_JOBS) {
		add_error(st, st->line, NULL, "too many jobs (at most %d)", CONFIG_MAX_JOBS);
		return;
	}
	if (cfg->n_jobs == st->jobs_cap && grow_jobs(st) < 0) {
		add_error(st, st->line, NULL, "out of memory");
		st->out_of_memory = true;
		return;
	}
	st->job = &cfg->jobs[cfg->n_jobs++];
	job_defaults(st->job);
	snprintf(st->job->name, sizeof(st->job->name), "%s", job_name);
	st->job->line = st->line;
	st->kind = SECTION_JOB;
}

/* Classifies one raw line the way libinih will, so that what it would accept
 * by accident (continuations, truncated long lines) is an error here. */
static void check_line(struct parse_state *st, const char *line, size_t len)
{
	const char *s = line;

	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len > LINE_MAX_LEN) {
		add_error(st, st->line, NULL, "line too long (at most %d characters)", LINE_MAX_LEN);
		return;
	}
	while ((size_t)(s - line) < len && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(s - line) == len || *s == ';' || *s == '#')
		return;
	if (s != line) {
		add_error(st, st->line, NULL, "indented line (continuation lines are not supported)");
		return;
	}
	if (*s == '[') {
		const char *close = memchr(s, ']', len);
		char name[CONFIG_NAME_MAX + 8];
		if (!close) {
			add_error(st, st->line, NULL, "section header without ']'");
			st->kind = SECTION_BAD;
			return;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(close - s - 1), s + 1);
		begin_section(st, name);
		return;
	}
	if (!memchr(s, '=', len) && !memchr(s, ':', len))
		add_error(st, st->line, NULL, "syntax error: expected 'key = value'");
}

/* libinih's line reader: hands out one line per call (it counts calls as
 * lines, and so do we). */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	const char *start = st->text + st->pos;
	const char *nl;
	size_t len, copy;

	if (*start == '\0')
		return NULL;
	nl = strchr(start, '\n');
	len = nl ? (size_t)(nl - start) + 1 : strlen(start);
	st->pos += len;
	st->line++;
	check_line(st, start, len);
	copy = len < (size_t)num - 1 ? len : (size_t)num - 1;
	memcpy(str, start, copy);
	str[copy] = '\0';
	return str;
}

/* ------------------------------------------------------------ keys */

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned max, unsigned *ret)
{
	uint64_t v;
	const char *end;
	int r = parse_u64_prefix(s, &v, &end);

	if (r < 0 || *end)
		return r < 0 ? r : -EINVAL;
	if (v > max)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

/* Marks a key as seen in its section; false (and an error) if it was already. */
static bool first_time(struct parse_state *st, unsigned *seen, unsigned bit, const char *key)
{
	if (*seen & (1u << bit)) {
		add_error(st, st->line, key, "given twice");
		return false;
	}
	*seen |= 1u << bit;
	return true;
}

static void key_size(struct parse_state *st, const char *key, const char *value, bool allow_max,
		     uint64_t *out)
{
	if (config_parse_size(value, allow_max, out) < 0)
		add_error(st, st->line, key, "bad size '%s' (a number with K, M, G or T%s)", value,
			  allow_max ? ", or max" : "");
}

static void key_chain(struct parse_state *st, const char *key, const char *value, struct policy_chain *out,
		      bool machine)
{
	char bad[CONFIG_PATH_MAX];
	int r = config_parse_chain(value, out, bad, sizeof(bad));

	if (r == -E2BIG)
		add_error(st, st->line, key, "too many policies (at most %d)", CONFIG_MAX_CHAIN);
	else if (r < 0 && bad[0] == '\0')
		add_error(st, st->line, key, "empty policy name in '%s'", value);
	else if (r < 0)
		add_error(st, st->line, key, "unknown policy '%s'", bad);
	else if (machine)
		for (unsigned i = 0; i < out->n_steps; i++)
			if (out->steps[i] == POLICY_GROW)
				add_error(st, st->line, key, "grow applies to jobs, not to the machine");
}

static void key_path(struct parse_state *st, const char *key, const char *value, char *out, size_t out_len,
		     bool allow_empty)
{
	if (value[0] == '\0' && allow_empty) {
		out[0] = '\0';
		return;
	}
	if (value[0] != '/') {
		add_error(st, st->line, key, "'%s' is not an absolute path", value);
		return;
	}
	if (strstr(value, "/../") || (strlen(value) >= 3 && strcmp(value + strlen(value) - 3, "/..") == 0)) {
		add_error(st, st->line, key, "'%s' contains '..'", value);
		return;
	}
	if (strlen(value) >= out_len) {
		add_error(st, st->line, key, "path too long (at most %zu characters)", out_len - 1);
		return;
	}
	snprintf(out, out_len, "%s", value);
}

static const char *const daemon_keys[] = {
    "machine",		"machine_limit",    "policy", "delay",	 "reserve",	    "report_dir",
    "report_max_count", "report_max_bytes", "socket", "metrics", "readonly_status", "metrics_interval",
};

static void daemon_key(struct parse_state *st, const char *key, const char *value)
{
	struct config *cfg = st->cfg;
	unsigned bit;

	for (bit = 0; bit < sizeof(daemon_keys) / sizeof(daemon_keys[0]); bit++)
		if (strcmp(key, daemon_keys[bit]) == 0)
			break;
	if (bit == sizeof(daemon_keys) / sizeof(daemon_keys[0])) {
		add_error(st, st->line, key, "unknown key");
		return;
	}
	if (!first_time(st, &cfg->seen, bit, key))
		return;

	if (strcmp(key, "machine") == 0) {
		key_path(st, key, value, cfg->machine, sizeof(cfg->machine), false);
	} else if (strcmp(key, "machine_limit") == 0) {
		key_size(st, key, value, true, &cfg->machine_limit_bytes);
	} else if (strcmp(key, "policy") == 0) {
		key_chain(st, key, value, &cfg->chain, true);
	} else if (strcmp(key, "delay") == 0) {
		if (config_parse_duration(value, &cfg->delay_ms) < 0)
			add_error(st, st->line, key, "bad duration '%s' (a number with ms or s)", value);
		else if (cfg->delay_ms < 10 || cfg->delay_ms > 600000)
			add_error(st, st->line, key, "'%s' out of range (10ms to 600s)", value);
	} else if (strcmp(key, "reserve") == 0) {
		key_size(st, key, value, false, &cfg->reserve_bytes);
	} else if (strcmp(key, "report_dir") == 0) {
		key_path(st, key, value, cfg->report_dir, sizeof(cfg->report_dir), false);
	} else if (strcmp(key, "report_max_count") == 0) {
		if (parse_uint(value, 1000000, &cfg->report_max_count) < 0)
			add_error(st, st->line, key, "bad count '%s' (0 to 1000000)", value);
	} else if (strcmp(key, "report_max_bytes") == 0) {
		key_size(st, key, value, false, &cfg->report_max_bytes);
	} else if (strcmp(key, "socket") == 0) {
		key_path(st, key, value, cfg->socket, sizeof(cfg->socket), false);
	} else if (strcmp(key, "metrics") == 0) {
		key_path(st, key, value, cfg->metrics, sizeof(cfg->metrics), true);
	} else if (strcmp(key, "readonly_status") == 0) {
		if (parse_bool(value, &cfg->readonly_status) < 0)
			add_error(st, st->line, key, "bad boolean '%s' (yes or no)", value);
	} else if (strcmp(key, "metrics_interval") == 0) {
		/* Each rewrite reads every job's memcg: more often than once a second
		 * would keep a daemon with a thousand jobs busy for nothing. */
		if (config_parse_duration(value, &cfg->metrics_interval_ms) < 0)
			add_error(st, st->line, key, "bad duration '%s' (0, or a number with ms or s)",
				  value);
		else if (cfg->metrics_interval_ms != 0 &&
			 (cfg->metrics_interval_ms < 1000 || cfg->metrics_interval_ms > 86400000))
			add_error(st, st->line, key, "'%s' out of range (0, or 1s to 86400s)", value);
	}
}

static int protect_add(const char *item, void *userdata)
{
	struct config_job *job = userdata;

	if (strlen(item) >= CONFIG_COMM_MAX)
		return -ENAMETOOLONG;
	if (job->n_protect >= CONFIG_MAX_PROTECT)
		return -E2BIG;
	snprintf(job->protect[job->n_protect++], CONFIG_COMM_MAX, "%s", item);
	return 0;
}

static void key_protect(struct parse_state *st, const char *key, const char *value)
{
	char bad[CONFIG_PATH_MAX];
	struct config_job *job = st->job;
	int r;

	job->n_protect = 0;
	r = split_list(value, protect_add, job, bad, sizeof(bad));
	if (r == -ENAMETOOLONG)
		add_error(st, st->line, key, "'%s' is longer than a process name (%d characters)", bad,
			  CONFIG_COMM_MAX - 1);
	else if (r == -E2BIG)
		add_error(st, st->line, key, "too many names (at most %d)", CONFIG_MAX_PROTECT);
	else if (r < 0)
		add_error(st, st->line, key, "empty name in '%s'", value);
}

static void key_owner(struct parse_state *st, const char *key, const char *value)
{
	struct config_job *job = st->job;
	unsigned uid;

	if (parse_uint(value, UINT_MAX - 1, &uid) == 0) {
		job->owner = (uid_t)uid;
		job->has_owner = true;
		return;
	}
	struct passwd *pw = getpwnam(value);
	if (!pw) {
		add_error(st, st->line, key, "unknown user '%s'", value);
		return;
	}
	job->owner = pw->pw_uid;
	job->has_owner = true;
}

static const char *const job_keys[] = {
    "priority", "limit", "limit_max", "expect", "policy", "kill", "protect", "owner",
};

static void job_key(struct parse_state *st, const char *key, const char *value)
{
	struct config_job *job = st->job;
	unsigned bit;

	for (bit = 0; bit < sizeof(job_keys) / sizeof(job_keys[0]); bit++)
		if (strcmp(key, job_keys[bit]) == 0)
			break;
	if (bit == sizeof(job_keys) / sizeof(job_keys[0])) {
		add_error(st, st->line, key, "unknown key");
		return;
	}
	if (!first_time(st, &job->seen, bit, key))
		return;

	if (strcmp(key, "priority") == 0) {
		if (parse_uint(value, 1000, &job->priority) < 0)
			add_error(st, st->line, key, "'%s' is not a priority from 0 to 1000", value);
	} else if (strcmp(key, "limit") == 0 || strcmp(key, "limit_max") == 0) {
		unsigned before = st->n_errors;
		key_size(st, key, value, true, key[5] ? &job->limit_max_bytes : &job->limit_bytes);
		if (!key[5])
			st->limit_line[job - st->cfg->jobs] = st->line;
		if (st->n_errors != before)
			st->limit_bad[job - st->cfg->jobs] = true;
	} else if (strcmp(key, "expect") == 0) {
		key_size(st, key, value, false, &job->expect_bytes);
	} else if (strcmp(key, "policy") == 0) {
		key_chain(st, key, value, &job->chain, false);
	} else if (strcmp(key, "kill") == 0) {
		if (strcmp(value, "process") == 0)
			job->kill = KILL_PROCESS;
		else if (strcmp(value, "job") == 0)
			job->kill = KILL_JOB;
		else
			add_error(st, st->line, key, "'%s' is neither process nor job", value);
	} else if (strcmp(key, "protect") == 0) {
		key_protect(st, key, value);
	} else if (strcmp(key, "owner") == 0) {
		key_owner(st, key, value);
	}
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;

	(void)section; /* the reader tracked it, with its line */
	switch (st->kind) {
	case SECTION_NONE:
		add_error(st, st->line, name, "key outside a section");
		break;
	case SECTION_DAEMON:
		daemon_key(st, name, value);
		break;
	case SECTION_JOB:
		job_key(st, name, value);
		break;
	case SECTION_BAD:
		break;
	}
	/* Errors are collected here; a zero would only make libinih count them. */
	return 1;
}

/* Checks that need the whole section: limit against limit_max. */
static void finish_jobs(struct parse_state *st)
{
	struct config *cfg = st->cfg;

	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		struct config_job *job = &cfg->jobs[i];
		unsigned limit_max_bit = 2;

		if (!(job->seen & (1u << limit_max_bit)))
			job->limit_max_bytes = job->limit_bytes;
		if (job->limit_bytes > job->limit_max_bytes && !st->limit_bad[i]) {
			char a[32], b[32];
			config_format_size(job->limit_bytes, a, sizeof(a));
			config_format_size(job->limit_max_bytes, b, sizeof(b));
			snprintf(st->section, sizeof(st->section), "job %s", job->name);
			add_error(st, st->limit_line[i] ? st->limit_line[i] : job->line, "limit",
				  "%s is above limit_max %s", a, b);
		}
	}
}

static void config_defaults(struct config *cfg)
{
	char bad[8];

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->machine, sizeof(cfg->machine), "/sys/fs/cgroup/memory/oomkit");
	cfg->machine_limit_bytes = OOMKIT_UNLIMITED;
	config_parse_chain("report, kill-lowest, kernel", &cfg->chain, bad, sizeof(bad));
	cfg->delay_ms = 2000;
	cfg->reserve_bytes = 16u << 20;
	snprintf(cfg->report_dir, sizeof(cfg->report_dir), "/var/lib/oomkit/reports");
	cfg->report_max_count = 100;
	cfg->report_max_bytes = 64u << 20;
	snprintf(cfg->socket, sizeof(cfg->socket), "/run/oomkit/oomkitd.sock");
	snprintf(cfg->metrics, sizeof(cfg->metrics), "/var/lib/oomkit/oomkit.prom");
}

int config_parse_string(const char *text, const char *source, struct config *ret, char *errors,
			size_t errors_len)
{
	struct config *cfg = malloc(sizeof(*cfg));
	struct parse_state *st = calloc(1, sizeof(*st));
	int r = 0;

	if (!cfg || !st) {
		free(cfg);
		free(st);
		return -ENOMEM;
	}
	config_defaults(cfg);
	snprintf(cfg->source, sizeof(cfg->source), "%s", source);
	st->cfg = cfg;
	st->source = source;
	st->text = text;
	st->errors = errors;
	st->errors_len = errors_len;
	if (errors && errors_len)
		errors[0] = '\0';

	int line = ini_parse_stream(read_line, st, on_key, st);
	if (line > 0 && st->n_errors == 0)
		add_error(st, (unsigned)line, NULL, "syntax error");
	else if (line < 0)
		add_error(st, 0, NULL, "out of memory");
	st->section[0] = '\0';
	finish_jobs(st);

	if (st->n_errors == 0 && cfg->n_jobs > 0 && cfg->n_jobs < st->jobs_cap) {
		struct config_job *jobs = realloc(cfg->jobs, cfg->n_jobs * sizeof(*jobs));
		if (jobs)
			cfg->jobs = jobs;
	}
	if (st->n_errors == 0) {
		*ret = *cfg;
	} else {
		r = st->out_of_memory ? -ENOMEM : -EINVAL;
		free(cfg->jobs);
	}
	free(cfg);
	free(st);
	return r;
}

void config_free(struct config *cfg)
{
	free(cfg->jobs);
	cfg->jobs = NULL;
	cfg->n_jobs = 0;
}

int config_load(const char *path, struct config *ret, char *errors, size_t errors_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat stbuf;
	char *text = NULL;
	size_t off = 0;
	int r;

	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	if (fstat(fd, &stbuf) < 0) {
		r = -errno;
		goto fail;
	}
	if (!S_ISREG(stbuf.st_mode)) {
		r = -EINVAL;
		goto fail;
	}
	if (stbuf.st_size > CONFIG_FILE_MAX) {
		r = -EFBIG;
		goto fail;
	}
	text = malloc((size_t)stbuf.st_size + 1);
	if (!text) {
		r = -ENOMEM;
		goto fail;
	}
	while (off < (size_t)stbuf.st_size) {
		ssize_t n = read(fd, text + off, (size_t)stbuf.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	text[off] = '\0';
	if (strlen(text) != off) {
		r = -EILSEQ;
		goto fail;
	}
	close(fd);
	r = config_parse_string(text, path, ret, errors, errors_len);
	free(text);
	return r;

fail:
	if (errors && errors_len)
		snprintf(errors, errors_len, "%s: cannot read: %s\n", path,
			 r == -EILSEQ ? "contains a NUL byte" : strerror(-r));
	if (fd >= 0)
		close(fd);
	free(text);
	return r;
}

const struct config_job *config_find_job(const struct config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_jobs; i++)
		if (strcmp(cfg->jobs[i].name, name) == 0)
			return &cfg->jobs[i];
	return NULL;
}
