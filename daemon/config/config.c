/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.c - oomkitd.conf: INI read with libinih, values parsed and checked
 * here.  libinih does not tell the handler which line it is on, so the text
 * is fed to it through our own line reader, which counts lines, recognises
 * section headers and rejects what libinih would silently accept (indented
 * continuation lines, over-long lines).  Every error is collected with its
 * file:line and key; a parse with any error leaves the caller's struct alone.
 *
 * Every key is one row of keys[]: its section, its parser, where its value
 * goes, its range and its default, written in the file's own syntax and
 * parsed by the same parser, so a default can never disagree with what the
 * file would say.  A new key is a new row (and, for a new kind of value, a
 * new parser).
 */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "base/users.h"

/* With no file, every key keeps its default and there are no jobs, except
 * on a systemd machine at a cgroup v2 root: there the workloads are already
 * in systemd's units, and the default adopts them (docs/systemd.md).
 * Processes in no job are never chosen at the v2 root, so what must never
 * die is left out: the daemon's own unit, systemd's own services
 * (journald, logind, udevd, networkd, resolved), D-Bus, ssh, display
 * managers and NetworkManager.  %s is the mount. */
static const char builtin_systemd_text[] =
    "# the built-in default for a systemd machine on cgroup v2\n"
    "[oomkitd]\n"
    "machine = %s\n"
    "policy = report, kill-lowest, kernel\n"
    "\n"
    "[job apps]\n"
    "priority = 200\n"
    "kill = job\n"
    "cgroup = user.slice/user-*.slice/user@*.service/app.slice/*\n"
    "\n"
    "[job services]\n"
    "priority = 300\n"
    "cgroup = system.slice/*.service\n"
    "cgroup_exclude = system.slice/oomkitd.service, system.slice/systemd-*.service\n"
    "cgroup_exclude = system.slice/dbus.service, system.slice/dbus-broker.service\n"
    "cgroup_exclude = system.slice/ssh.service, system.slice/sshd.service\n"
    "cgroup_exclude = system.slice/display-manager.service, system.slice/gdm.service\n"
    "cgroup_exclude = system.slice/sddm.service, system.slice/lightdm.service\n"
    "cgroup_exclude = system.slice/NetworkManager.service, system.slice/polkit.service\n"
    "\n"
    "[job machines]\n"
    "priority = 400\n"
    "cgroup = machine.slice/*\n"
    "\n"
    "[job sessions]\n"
    "priority = 600\n"
    "kill = largest-leaf\n"
    "cgroup = user.slice/user-*.slice/session-*.scope\n";
#define BUILTIN_SOURCE "(built-in)"

#define CONFIG_FILE_MAX (1024 * 1024)
#define LINE_MAX_LEN 190 /* libinih's line buffer is 200 bytes, less "\r\n\0" and margin */
#define KEYS_MAX 64	 /* bits of a section's seen and bad masks */
#define RANGE_MAX 128	 /* a range as an error message writes it */

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
	bool daemon_seen;
	bool refuse_pending;   /* config_read(): keys the daemon does not act on yet are errors */
	unsigned cgroups_cap;  /* slots in cfg->cgroups */
	unsigned excludes_cap; /* slots in cfg->excludes */
	unsigned rules_cap;    /* slots in cfg->rules */
	unsigned commands_cap; /* slots in cfg->commands */
	unsigned bad_line;     /* the reader refused this line: libinih's keys on it are skipped */
	/* MemTotal, what a size of "25%" is a share of; 0: not known. */
	uint64_t mem_total_bytes;
	/* The section being read: keys given, keys whose value did not parse
	 * (so that checks across keys do not cascade from them), and where. */
	uint64_t seen, bad;
	unsigned key_line[KEYS_MAX];
	char *errors;
	size_t errors_len;
	size_t errors_off;
	unsigned n_errors;
};

static void add_error(struct parse_state *st, unsigned line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct parse_state *st, unsigned line, const char *key, const char *fmt, ...)
{
	char what[512], where[CONFIG_PATH_MAX + 16];
	va_list ap;
	int n;

	st->n_errors++;
	if (line == st->line)
		st->bad_line = line;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!st->errors || st->errors_off >= st->errors_len)
		return;
	/* Line 0 is a default, which is on no line of the file. */
	if (line)
		snprintf(where, sizeof(where), "%s:%u", st->source, line);
	else
		snprintf(where, sizeof(where), "%s", st->source);
	if (key && st->section[0])
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off,
			     "%s: [%s] %s: %s\n", where, st->section, key, what);
	else if (st->section[0])
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off, "%s: [%s]: %s\n",
			     where, st->section, what);
	else
		n = snprintf(st->errors + st->errors_off, st->errors_len - st->errors_off, "%s: %s%s%s\n",
			     where, key ? key : "", key ? ": " : "", what);
	if (n > 0)
		st->errors_off += (size_t)n;
}

/* ------------------------------------------------------------ value parsers */

struct key;

/* Parses value into field; on a bad value adds the error and returns < 0. */
typedef int (*key_parser)(struct parse_state *st, const struct key *k, const char *value, void *field);

enum key_flags {
	KEY_MAX = 1 << 0,     /* sizes: "max" means no limit */
	KEY_ZERO = 1 << 1,    /* 0 is allowed below the range (and means what the row says) */
	KEY_EMPTY = 1 << 2,   /* paths: an empty value means none */
	KEY_NO_GROW = 1 << 3, /* chains: grow is not a step of this scope */
	KEY_REPEAT = 1 << 4,  /* may be given more than once: each adds to the list */
	/* Parsed and checked, but the daemon does not act on it yet: refused by
	 * config_read() so that nothing in a file is silently ignored.  Drop the
	 * flag in the commit that makes the daemon act on the key. */
	KEY_PENDING = 1 << 5,
	KEY_PERCENT = 1 << 6, /* sizes of memory: "25%" is a share of the machine's MemTotal */
};

struct key {
	const char *name;
	enum section_kind section;
	key_parser parse;
	size_t offset, size; /* of the field in struct config or struct config_job */
	uint64_t min, max;   /* inclusive: a count, bytes or milliseconds */
	unsigned flags;
	const char *def; /* the default as the file writes it; NULL: zero */
};

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "(0 to 1000)", "(10ms to 600s)", "(0, or 1s to 86400s)", "(at least 1M, or max)". */
static void format_range(const struct key *k, void (*fmt)(uint64_t, char *, size_t), char *buf, size_t len)
{
	char lo[32], hi[32];

	fmt(k->min, lo, sizeof(lo));
	fmt(k->max, hi, sizeof(hi));
	snprintf(buf, len, "%s%s%s%s%s", k->flags & KEY_ZERO ? "0, or " : "",
		 k->max == UINT64_MAX ? "at least " : "", lo, k->max == UINT64_MAX ? "" : " to ",
		 k->max == UINT64_MAX ? "" : hi);
	if (k->flags & KEY_MAX)
		snprintf(buf + strlen(buf), len - strlen(buf), ", or max");
}

static void format_count(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, v);
}

static bool in_range(const struct key *k, uint64_t v)
{
	if (v == 0 && (k->flags & KEY_ZERO))
		return true;
	if (v == UINT64_MAX && (k->flags & KEY_MAX))
		return true;
	return v >= k->min && v <= k->max;
}

static int parse_count(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	char range[RANGE_MAX];
	uint64_t v;
	int r = value_parse_uint(value, UINT64_MAX, &v);

	format_range(k, format_count, range, sizeof(range));
	if (r == -EINVAL) {
		add_error(st, st->line, k->name, "bad number '%s' (%s)", value, range);
		return r;
	}
	if (r < 0 || !in_range(k, v)) {
		add_error(st, st->line, k->name, "'%s' out of range (%s)", value, range);
		return -ERANGE;
	}
	*(unsigned *)field = (unsigned)v;
	return 0;
}

/* "25%" as bytes of the machine's memory; < 0 (with the error added) when
 * the key takes no percent, the percent is bad or the machine's size is not
 * known. */
static int parse_percent(struct parse_state *st, const struct key *k, const char *value, uint64_t *ret)
{
	unsigned h;
	int r;

	if (!(k->flags & KEY_PERCENT)) {
		add_error(st, st->line, k->name,
			  "'%s': a percent of the machine's memory is not a size this key takes", value);
		return -EINVAL;
	}
	if ((r = value_parse_percent(value, &h)) == -ERANGE) {
		add_error(st, st->line, k->name, "'%s' out of range (a percent above 0 and at most 100)",
			  value);
		return r;
	}
	if (r < 0) {
		add_error(st, st->line, k->name, "bad percent '%s' (such as 25%% or 12.5%%)", value);
		return r;
	}
	if (st->mem_total_bytes == 0) {
		add_error(st, st->line, k->name,
			  "'%s': the machine's memory size (MemTotal) is not known here", value);
		return -EINVAL;
	}
	*ret = value_percent_of(st->mem_total_bytes, h);
	return 0;
}

static int parse_size(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	char range[RANGE_MAX], bytes[32];
	uint64_t v;
	int r;

	if (value_is_percent(value)) {
		if ((r = parse_percent(st, k, value, &v)) < 0)
			return r;
	} else if ((r = value_parse_size(value, k->flags & KEY_MAX, &v)) < 0) {
		add_error(st, st->line, k->name, "bad size '%s' (a number with K, M, G or T%s)", value,
			  k->flags & KEY_MAX ? ", or max" : "");
		return r;
	}
	if (!in_range(k, v)) {
		format_range(k, value_format_size, range, sizeof(range));
		value_format_size(v, bytes, sizeof(bytes));
		if (value_is_percent(value))
			add_error(st, st->line, k->name, "'%s' (%s) out of range (%s)", value, bytes, range);
		else
			add_error(st, st->line, k->name, "'%s' out of range (%s)", value, range);
		return -ERANGE;
	}
	*(uint64_t *)field = v;
	return 0;
}

/* "N%", N a whole number in the key's range, which min and max give (0
 * with KEY_ZERO: off). */
static int take_percent(const char *value, uint64_t *ret)
{
	size_t n = strlen(value);
	char digits[16];

	if (n < 2 || n > sizeof(digits) || value[n - 1] != '%')
		return -EINVAL;
	memcpy(digits, value, n - 1);
	digits[n - 1] = 0;
	return value_parse_uint(digits, 100, ret);
}

/* A key that is a whole percent and nothing else (a share of time). */
static int parse_ratio(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	uint64_t v;

	if (take_percent(value, &v) < 0 || !in_range(k, v)) {
		add_error(st, st->line, k->name, "bad share '%s' (%" PRIu64 "%% to %" PRIu64 "%%%s)", value,
			  k->min, k->max, k->flags & KEY_ZERO ? ", or 0% for none" : "");
		return -EINVAL;
	}
	*(unsigned *)field = (unsigned)v;
	return 0;
}

/* A share above this leaves too little to run on to be meant. */
#define SHARE_MAX_PERCENT 50

/* A size in the key's range, or "N%" of something the key's user knows. */
static int parse_share(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	struct config_share *share = field;
	uint64_t v;
	int r;

	if (take_percent(value, &v) == 0) {
		if (v < 1 || v > SHARE_MAX_PERCENT) {
			add_error(st, st->line, k->name, "'%s' out of range (1%% to %d%%, or a size)", value,
				  SHARE_MAX_PERCENT);
			return -ERANGE;
		}
		*share = (struct config_share){.percent = (unsigned)v};
		return 0;
	}
	if ((r = parse_size(st, k, value, &v)) < 0)
		return r;
	*share = (struct config_share){.bytes = v};
	return 0;
}

static int parse_duration(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	char range[RANGE_MAX];
	uint64_t v;
	int r = value_parse_duration(value, &v);

	format_range(k, value_format_duration, range, sizeof(range));
	if (r < 0) {
		add_error(st, st->line, k->name, "bad duration '%s' (a number with ms or s: %s)", value,
			  range);
		return r;
	}
	if (!in_range(k, v)) {
		add_error(st, st->line, k->name, "'%s' out of range (%s)", value, range);
		return -ERANGE;
	}
	*(uint64_t *)field = v;
	return 0;
}

static int parse_bool(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*(bool *)field = true;
			return 0;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*(bool *)field = false;
			return 0;
		}
	}
	add_error(st, st->line, k->name, "bad boolean '%s' (yes or no)", value);
	return -EINVAL;
}

/* A path of at most k->max characters (0: as many as the field holds), normalised. */
static int parse_path(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	size_t room = k->max ? (size_t)k->max + 1 : k->size;
	char path[CONFIG_PATH_MAX], why[CONFIG_PATH_MAX + 64];
	int r;

	if (value[0] == '\0' && (k->flags & KEY_EMPTY)) {
		*(char *)field = '\0';
		return 0;
	}
	r = value_normalize_path(value, path, room < sizeof(path) ? room : sizeof(path), why, sizeof(why));
	if (r == 0 && strcmp(path, "/") == 0) {
		snprintf(why, sizeof(why), "'%s' is the root directory", value);
		r = -EINVAL;
	}
	if (r < 0) {
		add_error(st, st->line, k->name, "%s", why);
		return r;
	}
	memcpy(field, path, strlen(path) + 1);
	return 0;
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
	enum policy_kind kind;

	if (policy_kind_from_name(item, &kind) < 0)
		return -EINVAL;
	if (chain->n_steps >= POLICY_MAX_CHAIN)
		return -E2BIG;
	chain->steps[chain->n_steps++] = kind;
	return 0;
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

static int parse_chain(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	struct policy_chain chain;
	char bad[CONFIG_PATH_MAX];
	int r = config_parse_chain(value, &chain, bad, sizeof(bad));

	if (r == -E2BIG)
		add_error(st, st->line, k->name, "too many policies (at most %d)", POLICY_MAX_CHAIN);
	else if (r == -EOPNOTSUPP)
		add_error(st, st->line, k->name,
			  "'%s' is not supported by this oomkitd yet (refused rather than silently ignored)",
			  bad);
	else if (r < 0 && bad[0] == '\0')
		add_error(st, st->line, k->name, "empty policy name in '%s'", value);
	else if (r < 0)
		add_error(st, st->line, k->name, "unknown policy '%s'", bad);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < chain.n_steps; i++)
		if (chain.steps[i] == POLICY_GROW && (k->flags & KEY_NO_GROW)) {
			add_error(st, st->line, k->name, "grow applies to jobs, not to the machine");
			return -EINVAL;
		}
	*(struct policy_chain *)field = chain;
	return 0;
}

static int parse_kill(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	if (strcmp(value, "process") == 0)
		*(enum kill_scope *)field = KILL_PROCESS;
	else if (strcmp(value, "job") == 0)
		*(enum kill_scope *)field = KILL_JOB;
	else if (strcmp(value, "largest-leaf") == 0)
		*(enum kill_scope *)field = KILL_LARGEST_LEAF;
	else {
		add_error(st, st->line, k->name, "'%s' is not process, job or largest-leaf", value);
		return -EINVAL;
	}
	return 0;
}

unsigned config_exe_rule_line(const struct config *cfg)
{
	for (unsigned i = 0; i < cfg->n_rules; i++)
		if (cfg->rules[i].expr.kind == MATCH_EXE)
			return cfg->rules[i].line;
	return 0;
}

const char *config_kill_name(enum kill_scope kill)
{
	return kill == KILL_JOB ? "job" : kill == KILL_LARGEST_LEAF ? "largest-leaf" : "process";
}

/* Makes room for element n of the array at *arr (*cap slots, doubled). */
static int reserve_one(struct parse_state *st, void **arr, unsigned n, unsigned *cap, size_t size)
{
	void *grown;

	if (n < *cap)
		return 0;
	grown = realloc(*arr, (*cap ? *cap * 2 : 16) * size);
	if (!grown) {
		add_error(st, st->line, NULL, "out of memory");
		st->out_of_memory = true;
		return -ENOMEM;
	}
	*arr = grown;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

struct rule_list {
	struct parse_state *st;
	const struct key *k;
	enum config_rule_list list;
	unsigned *n_rules; /* the job's, or the machine's */
	unsigned added;
};

static int rule_add(const char *item, void *userdata)
{
	struct rule_list *list = userdata;
	struct parse_state *st = list->st;
	struct config *cfg = st->cfg;
	char why[MATCH_TEXT_MAX + 128];
	struct match_expr e;
	int r;

	if (match_parse(item, &e, why, sizeof(why)) < 0) {
		add_error(st, st->line, list->k->name, "%s", why);
		return -EINVAL;
	}
	if (*list->n_rules + list->added >= CONFIG_MAX_RULES) {
		add_error(st, st->line, list->k->name, "too many rules (at most %d per %s)", CONFIG_MAX_RULES,
			  st->job ? "job" : "section");
		return -E2BIG;
	}
	if ((r = reserve_one(st, (void **)&cfg->rules, cfg->n_rules, &st->rules_cap, sizeof(*cfg->rules))) <
	    0)
		return r;
	cfg->rules[cfg->n_rules++] =
	    (struct config_rule){.expr = e,
				 .list = list->list,
				 .job = st->job ? (unsigned)(st->job - cfg->jobs) : CONFIG_RULE_MACHINE,
				 .line = st->line};
	list->added++;
	return 0;
}

/* field is the job itself, or in [oomkitd] the whole configuration: the
 * rules go on the configuration's list, counted by the job or the machine.
 * A line with an error adds no rule of its own. */
static int parse_rules(struct parse_state *st, const struct key *k, const char *value, void *field,
		       enum config_rule_list which)
{
	unsigned *n = st->job ? &((struct config_job *)field)->n_rules : &st->cfg->n_machine_rules;
	struct rule_list list = {.st = st, .k = k, .list = which, .n_rules = n};
	char bad[CONFIG_PATH_MAX];
	int r = split_list(value, rule_add, &list, bad, sizeof(bad));

	if (r < 0) {
		if (bad[0] == '\0')
			add_error(st, st->line, k->name, "empty rule in '%s'", value);
		st->cfg->n_rules -= list.added;
		return r;
	}
	*n += list.added;
	return 0;
}

static int parse_protect(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	return parse_rules(st, k, value, field, RULE_PROTECT);
}

static int parse_prefer(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	return parse_rules(st, k, value, field, RULE_PREFER);
}

static int parse_avoid(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	return parse_rules(st, k, value, field, RULE_AVOID);
}

/* field is the job itself: owner fills has_owner, owner and owner_gid (the
 * group the job's memcg is delegated to), looked up now, while the
 * configuration is read (users.h says where from). */
static int parse_owner(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	struct config_job *job = field;
	struct users_entry u;
	uint64_t uid;

	if (value_parse_uint(value, UINT_MAX - 1, &uid) == 0) {
		job->owner = (uid_t)uid;
		job->owner_gid = users_by_uid(job->owner, &u) > 0 ? u.gid : (gid_t)-1;
		job->has_owner = true;
		return 0;
	}
	if (users_by_name(value, &u) <= 0) {
		add_error(st, st->line, k->name, "unknown user '%s'%s", value,
			  users_sealed() ? " (in /etc/passwd, or known to oomkitd since its start)" : "");
		return -EINVAL;
	}
	job->owner = u.uid;
	job->owner_gid = u.gid;
	job->has_owner = true;
	return 0;
}

static int parse_signal(struct parse_state *st, const struct key *k, const char *value, int *ret)
{
	int r = value_parse_signal(value, ret);

	if (r < 0)
		add_error(st, st->line, k->name,
			  "bad signal '%s' (a name: SIGTERM, SIGUSR1, SIGRTMIN+3, ...)", value);
	return r;
}

/* A kill_signal must end a process that does not catch it. */
static int parse_kill_signal(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	int sig, r = parse_signal(st, k, value, &sig);
	char name[32];

	if (r < 0)
		return r;
	if (sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig == SIGSTOP ||
	    sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		value_format_signal(sig, name, sizeof(name));
		add_error(st, st->line, k->name, "%s does not end a process", name);
		return -EINVAL;
	}
	*(int *)field = sig;
	return 0;
}

/* A shed_signal asks the job to give memory back: it must be one the job can catch. */
static int parse_shed_signal(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	int sig, r = parse_signal(st, k, value, &sig);
	char name[32];

	if (r < 0)
		return r;
	if (sig == SIGKILL || sig == SIGSTOP) {
		value_format_signal(sig, name, sizeof(name));
		add_error(st, st->line, k->name,
			  "%s cannot be caught: the job could not give memory back on it", name);
		return -EINVAL;
	}
	*(int *)field = sig;
	return 0;
}

/* field is the job itself: the command goes to the configuration's commands. */
static int parse_hook(struct parse_state *st, const struct key *k, const char *value, enum config_hook hook)
{
	struct config *cfg = st->cfg;
	char why[VALUE_COMMAND_MAX + 128];

	if (value_parse_command(value, why, sizeof(why)) < 0) {
		add_error(st, st->line, k->name, "%s", why);
		return -EINVAL;
	}
	if (reserve_one(st, (void **)&cfg->commands, cfg->n_commands, &st->commands_cap,
			sizeof(*cfg->commands)) < 0)
		return -ENOMEM;
	struct config_command *c = &cfg->commands[cfg->n_commands++];
	snprintf(c->text, sizeof(c->text), "%s", value);
	c->hook = hook;
	c->job = (unsigned)(st->job - cfg->jobs);
	c->line = st->line;
	return 0;
}

static int parse_before_kill(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	(void)field;
	return parse_hook(st, k, value, HOOK_BEFORE_KILL);
}

static int parse_after_kill(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	(void)field;
	return parse_hook(st, k, value, HOOK_AFTER_KILL);
}

static int parse_shed_command(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	(void)field;
	return parse_hook(st, k, value, HOOK_SHED_COMMAND);
}

struct cgroup_list {
	struct parse_state *st;
	unsigned added;
	bool exclude; /* cgroup_exclude: into cfg->excludes */
};

static int cgroup_add(const char *item, void *userdata)
{
	struct cgroup_list *list = userdata;
	struct parse_state *st = list->st;
	struct config *cfg = st->cfg;
	const char *key = list->exclude ? "cgroup_exclude" : "cgroup";
	struct config_cgroup **array = list->exclude ? &cfg->excludes : &cfg->cgroups;
	unsigned *n = list->exclude ? &cfg->n_excludes : &cfg->n_cgroups;
	unsigned mine = list->exclude ? st->job->n_excludes : st->job->n_cgroups;
	char why[PATTERN_MAX + 128];

	if (pattern_check(item, why, sizeof(why)) < 0) {
		add_error(st, st->line, key, "%s", why);
		return -EINVAL;
	}
	if (mine + list->added >= CONFIG_MAX_CGROUPS) {
		add_error(st, st->line, key, "too many patterns (at most %d per job)", CONFIG_MAX_CGROUPS);
		return -E2BIG;
	}
	if (*n >= CONFIG_MAX_CGROUPS_TOTAL) {
		add_error(st, st->line, key, "too many patterns (at most %d in all)",
			  CONFIG_MAX_CGROUPS_TOTAL);
		return -E2BIG;
	}
	if (reserve_one(st, (void **)array, *n, list->exclude ? &st->excludes_cap : &st->cgroups_cap,
			sizeof(**array)) < 0)
		return -ENOMEM;
	struct config_cgroup *c = &(*array)[(*n)++];
	snprintf(c->pattern, sizeof(c->pattern), "%s", item);
	c->job = (unsigned)(st->job - cfg->jobs);
	c->line = st->line;
	list->added++;
	return 0;
}

/* field is the job itself.  Each "cgroup =" adds to the job's patterns;
 * a line with an error adds none of its own. */
static int parse_cgroup_list(struct parse_state *st, const struct key *k, const char *value, void *field,
			     bool exclude)
{
	struct cgroup_list list = {.st = st, .exclude = exclude};
	struct config_job *job = field;
	char bad[CONFIG_PATH_MAX];
	int r = split_list(value, cgroup_add, &list, bad, sizeof(bad));

	if (r < 0) {
		if (bad[0] == '\0')
			add_error(st, st->line, k->name, "empty pattern in '%s'", value);
		*(exclude ? &st->cfg->n_excludes : &st->cfg->n_cgroups) -= list.added;
		return r;
	}
	*(exclude ? &job->n_excludes : &job->n_cgroups) += list.added;
	return 0;
}

static int parse_cgroups(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	return parse_cgroup_list(st, k, value, field, false);
}

static int parse_excludes(struct parse_state *st, const struct key *k, const char *value, void *field)
{
	return parse_cgroup_list(st, k, value, field, true);
}

/* ------------------------------------------------------------ the keys */

#define FIELD(type, member) offsetof(type, member), sizeof(((type *)0)->member)
#define DAEMON(name, parse, member, min, max, flags, def)                                                    \
	{                                                                                                    \
		name, SECTION_DAEMON, parse, FIELD(struct config, member), min, max, flags, def              \
	}
#define JOB(name, parse, member, min, max, flags, def)                                                       \
	{                                                                                                    \
		name, SECTION_JOB, parse, FIELD(struct config_job, member), min, max, flags, def             \
	}
/* Keys whose parser fills more than one member, or the configuration's
 * lists, get the whole job (or the whole configuration). */
#define DAEMON_WHOLE(name, parse)                                                                            \
	{                                                                                                    \
		name, SECTION_DAEMON, parse, 0, sizeof(struct config), 0, 0, 0, NULL                         \
	}
#define JOB_WHOLE(name, parse, flags)                                                                        \
	{                                                                                                    \
		name, SECTION_JOB, parse, 0, sizeof(struct config_job), 0, 0, flags, NULL                    \
	}

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define UNBOUNDED UINT64_MAX

static const struct key keys[] = {
    /* At most 400 characters, so that the machine's path relative to the
     * mount, with "/" and a job's name or "-daemon" after it, always fits. */
    DAEMON("machine", parse_path, machine, 0, 400, 0, "/sys/fs/cgroup/memory/oomkit"),
    /* Limits below these leave no room to run anything: a typo ("1" for
     * "1G") is an error rather than a machine or job that OOMs at once. */
    DAEMON("machine_limit", parse_size, machine_limit_bytes, 16 * MiB, UNBOUNDED, KEY_MAX | KEY_PERCENT,
	   "max"),
    /* A machine at the cgroup v2 root runs out when MemAvailable plus usable
     * swap is below this (a size, or a share of RAM + swap: lowmem-rule.h) ... */
    DAEMON("machine_available", parse_share, machine_available, 1 * MiB, UNBOUNDED, 0, "2%"),
    /* ... or when it stalls fully this share of each third of this long. */
    DAEMON("machine_full_stall", parse_ratio, machine_full_stall_percent, 1, 100, KEY_ZERO, "60%"),
    DAEMON("machine_full_stall_duration", parse_duration, machine_full_stall_ms, 1000, 600000, 0, "30s"),
    /* Memory priority before any kill (protect-rule.h). */
    DAEMON("memory_priority", parse_bool, memory_priority, 0, 0, 0, "no"),
    DAEMON("memory_priority_stall", parse_ratio, memory_priority_stall_percent, 1, 100, 0, "10%"),
    DAEMON("memory_priority_step", parse_size, memory_priority_step_bytes, 1 * MiB, 1024 * MiB, 0, "16M"),
    DAEMON("policy", parse_chain, chain, 0, 0, KEY_NO_GROW, "report, kill-lowest, kernel"),
    DAEMON("delay", parse_duration, delay_ms, 10, 600000, 0, "2s"),
    DAEMON("reserve", parse_size, reserve_bytes, 0, UNBOUNDED, KEY_PERCENT, "16M"),
    DAEMON("report_dir", parse_path, report_dir, 0, 0, 0, "/var/lib/oomkit/reports"),
    DAEMON("report_max_count", parse_count, report_max_count, 0, 1000000, 0, "100"),
    DAEMON("report_max_bytes", parse_size, report_max_bytes, 0, UNBOUNDED, 0, "64M"),
    DAEMON("socket", parse_path, socket, 0, 0, 0, OOMKITD_DEFAULT_SOCKET),
    DAEMON("metrics", parse_path, metrics, 0, 0, KEY_EMPTY, "/var/lib/oomkit/oomkit.prom"),
    DAEMON("readonly_status", parse_bool, readonly_status, 0, 0, 0, "no"),
    /* While a question is open, the candidates that grow are frozen (freeze.h). */
    DAEMON("prompt_freeze", parse_bool, prompt_freeze, 0, 0, 0, "yes"),
    /* Each rewrite reads every job's memcg: more often than once a second
     * would keep a daemon with a thousand jobs busy for nothing. */
    DAEMON("metrics_interval", parse_duration, metrics_interval_ms, 1000, 86400000, KEY_ZERO, "0"),
    /* The machine's rules, for every process of every scope. */
    DAEMON_WHOLE("protect", parse_protect),
    DAEMON_WHOLE("prefer", parse_prefer),
    DAEMON_WHOLE("avoid", parse_avoid),
    /* Each hook's own memcg (hooks.h): enough for a shell and a client. */
    DAEMON("hook_memory", parse_size, hook_memory_bytes, 4 * MiB, 4096 * MiB, KEY_PERCENT, "64M"),

    JOB("priority", parse_count, priority, 0, 1000, 0, "500"),
    JOB("limit", parse_size, limit_bytes, 1 * MiB, UNBOUNDED, KEY_MAX | KEY_PERCENT, "max"),
    /* Its default is the limit: finish_job(). */
    JOB("limit_max", parse_size, limit_max_bytes, 1 * MiB, UNBOUNDED, KEY_MAX | KEY_PERCENT, NULL),
    JOB("expect", parse_size, expect_bytes, 0, UNBOUNDED, KEY_PERCENT, NULL),
    JOB("policy", parse_chain, chain, 0, 0, 0, "report, kernel"),
    JOB("kill", parse_kill, kill, 0, 0, 0, "process"),
    /* Match expressions (match.h), the job's own. */
    JOB_WHOLE("protect", parse_protect, 0),
    JOB_WHOLE("prefer", parse_prefer, 0),
    JOB_WHOLE("avoid", parse_avoid, 0),
    JOB_WHOLE("owner", parse_owner, 0),
    /* Graceful kills, shedding and hooks; checks across them in
     * finish_job() and check_timings(). */
    JOB("kill_signal", parse_kill_signal, kill_signal, 0, 0, 0, "SIGKILL"),
    JOB("kill_grace", parse_duration, kill_grace_ms, 10, 600000, KEY_ZERO, "0"),
    JOB("shed_signal", parse_shed_signal, shed_signal, 0, 0, 0, NULL),
    JOB("shed_wait", parse_duration, shed_wait_ms, 10, 600000, KEY_ZERO, NULL),
    /* Default: a quarter of the delay, set in check_timings(). */
    JOB("hook_timeout", parse_duration, hook_timeout_ms, 10, 600000, KEY_ZERO, NULL),
    JOB_WHOLE("before_kill", parse_before_kill, 0),
    JOB_WHOLE("after_kill", parse_after_kill, 0),
    JOB_WHOLE("shed_command", parse_shed_command, 0),
    /* The job's instances are the cgroups these patterns match. */
    JOB_WHOLE("cgroup", parse_cgroups, KEY_REPEAT),
    /* Cgroups the patterns match that are not instances: adopt.c skips them. */
    JOB_WHOLE("cgroup_exclude", parse_excludes, KEY_REPEAT),
    JOB("managed_oom_preference", parse_bool, managed_oom_preference, 0, 0, 0, "yes"),
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
_Static_assert(N_KEYS <= KEYS_MAX, "a section's masks have a bit per key");

static const struct key *find_key(enum section_kind section, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].section == section && strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static unsigned key_index(const struct key *k)
{
	return (unsigned)(k - keys);
}

/* The fields of section's keys in base (a struct config or a struct
 * config_job) get their defaults, parsed as if written in the file. */
static void apply_defaults(struct parse_state *st, enum section_kind section, void *base)
{
	unsigned line = st->line;

	st->line = 0;
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].section == section && keys[i].def)
			(void)keys[i].parse(st, &keys[i], keys[i].def, (char *)base + keys[i].offset);
	st->line = line;
}

/* ------------------------------------------------------------ sections */

/* Names a job cannot have: what the daemon calls the machine in reports,
 * metrics and logs, and the control files of a cgroup directory, which the
 * job's memcg would have to be created beside. */
static const char *reserved_job_name(const char *name)
{
	static const char *const files[] = {"tasks", "notify_on_release", "release_agent"};

	if (strcmp(name, "machine") == 0)
		return "the daemon's name for the machine in reports and metrics";
	if (strncmp(name, "cgroup.", 7) == 0 || strncmp(name, "memory.", 7) == 0)
		return "the prefix of cgroup control files";
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(name, files[i]) == 0)
			return "a cgroup control file";
	return NULL;
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

static bool given(const struct parse_state *st, const char *name, uint64_t mask)
{
	const struct key *k = find_key(st->kind, name);
	return k && (mask & (1ull << key_index(k)));
}

static unsigned line_of(const struct parse_state *st, const char *name)
{
	const struct key *k = find_key(st->kind, name);
	return k ? st->key_line[key_index(k)] : 0;
}

/* A signal other than SIGKILL gives the process a grace before SIGKILL,
 * and a grace needs such a signal.  The timings are checked against the
 * delay at the end of the file, where it is known (check_timings()). */
static void finish_kill(struct parse_state *st)
{
	struct config_job *job = st->job;
	char name[32];

	job->kill_grace_line = line_of(st, "kill_grace");
	job->shed_wait_line = line_of(st, "shed_wait");
	job->hook_timeout_line = line_of(st, "hook_timeout");
	job->policy_line = line_of(st, "policy");
	if (given(st, "kill_signal", st->bad) || given(st, "kill_grace", st->bad))
		return;
	value_format_signal(job->kill_signal, name, sizeof(name));
	if (job->kill_signal != SIGKILL && job->kill_grace_ms == 0)
		add_error(st, line_of(st, "kill_signal"), "kill_signal",
			  "%s needs a kill_grace: how long the process has before SIGKILL", name);
	if (job->kill_signal == SIGKILL && job->kill_grace_ms != 0)
		add_error(st, line_of(st, "kill_grace"), "kill_grace",
			  "a grace needs a kill_signal other than SIGKILL, which ends a process at once");
}

static bool chain_has(const struct policy_chain *chain, enum policy_kind kind)
{
	for (unsigned i = 0; i < chain->n_steps; i++)
		if (chain->steps[i] == kind)
			return true;
	return false;
}

/* shed_signal and shed_command say how a job is asked for memory, shed_wait
 * how long it has; shed in its chain says when.  One without the other
 * would be silently idle. */
static void finish_shed(struct parse_state *st)
{
	static const char *const how[] = {"shed_signal", "shed_command", "shed_wait"};
	bool in_chain = chain_has(&st->job->chain, POLICY_SHED);

	if (given(st, "policy", st->bad))
		return;
	for (size_t i = 0; i < sizeof(how) / sizeof(how[0]) && !in_chain; i++)
		if (given(st, how[i], st->seen) && !given(st, how[i], st->bad))
			add_error(
			    st, line_of(st, how[i]), how[i],
			    "needs shed in the job's policy: the job is asked for memory as a step of its "
			    "chain");
	if (in_chain && !given(st, "shed_signal", st->seen) && !given(st, "shed_command", st->seen))
		add_error(st, line_of(st, "policy"), "policy",
			  "shed needs a shed_signal or a shed_command: how the job is asked to give memory "
			  "back");
}

/* Checks across the keys of one job, once its section is complete. */
static void finish_job(struct parse_state *st)
{
	struct config_job *job = st->job;
	char a[32], b[32];

	if (given(st, "owner", st->seen) && given(st, "cgroup", st->seen))
		add_error(st, line_of(st, "owner"), "owner",
			  "a job that adopts cgroups (cgroup =) is not delegated: its cgroups are their "
			  "makers' (systemd's)");
	finish_kill(st);
	finish_shed(st);
	if (given(st, "hook_timeout", st->seen) && !given(st, "before_kill", st->seen) &&
	    !given(st, "after_kill", st->seen) && !given(st, "shed_command", st->seen))
		add_error(st, line_of(st, "hook_timeout"), "hook_timeout",
			  "needs a hook: before_kill, after_kill or shed_command");
	if (!given(st, "limit_max", st->seen))
		job->limit_max_bytes = job->limit_bytes;
	if (given(st, "limit", st->bad) || given(st, "limit_max", st->bad))
		return;
	if (job->limit_bytes <= job->limit_max_bytes)
		return;
	value_format_size(job->limit_bytes, a, sizeof(a));
	value_format_size(job->limit_max_bytes, b, sizeof(b));
	if (given(st, "limit", st->seen))
		add_error(st, line_of(st, "limit"), "limit", "%s is above limit_max %s", a, b);
	else
		add_error(st, line_of(st, "limit_max"), "limit_max", "%s is below the limit (%s unless set)",
			  b, a);
}

static void end_section(struct parse_state *st)
{
	if (st->kind == SECTION_JOB)
		finish_job(st);
	if (st->kind == SECTION_DAEMON) {
		st->cfg->machine_line = line_of(st, "machine");
		st->cfg->machine_limit_line = line_of(st, "machine_limit");
		st->cfg->policy_line = line_of(st, "policy");
		st->cfg->delay_line = line_of(st, "delay");
	}
	st->kind = SECTION_BAD;
	st->job = NULL;
	st->seen = st->bad = 0;
	memset(st->key_line, 0, sizeof(st->key_line));
}

static void begin_job(struct parse_state *st, const char *job_name)
{
	struct config *cfg = st->cfg;

	const char *reserved;

	if (!valid_job_name(job_name)) {
		add_error(st, st->line, NULL,
			  "bad job name '%s' (letters, digits, '-', '_', '.'; at most %d)", job_name,
			  CONFIG_NAME_MAX - 1);
		return;
	}
	if ((reserved = reserved_job_name(job_name))) {
		add_error(st, st->line, NULL, "the job name '%s' is reserved (%s)", job_name, reserved);
		return;
	}
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
	memset(st->job, 0, sizeof(*st->job));
	apply_defaults(st, SECTION_JOB, st->job);
	snprintf(st->job->name, sizeof(st->job->name), "%s", job_name);
	st->job->line = st->line;
	st->kind = SECTION_JOB;
}

static void begin_section(struct parse_state *st, const char *name)
{
	end_section(st);
	snprintf(st->section, sizeof(st->section), "%.*s", (int)(sizeof(st->section) - 1), name);
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
	begin_job(st, name + 4);
}

/* ------------------------------------------------------------ lines */

/* Classifies one raw line the way libinih will, so that what it would accept
 * by accident (continuations, truncated long lines) is an error here. */
static void check_line(struct parse_state *st, const char *line, size_t len)
{
	const char *s = line;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	/* libinih ends lines at LF only: a file with CR line ends would be one
	 * line, every key after the first silently part of a value. */
	if (memchr(line, '\r', len)) {
		add_error(st, st->line, NULL,
			  "carriage return inside a line (lines end with LF or CR LF, not CR alone)");
		if (line[0] == '[')
			end_section(st); /* a section of unknown name: its keys are skipped */
		return;
	}
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
			end_section(st);
			add_error(st, st->line, NULL, "section header without ']'");
			return;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(close - s - 1), s + 1);
		begin_section(st, name);
		/* libinih ignores the rest of a header line: "[job a] priority = 1"
		 * would lose its key without a word. */
		const char *rest = skip_ws(close + 1);
		if ((size_t)(rest - line) < len && *rest != ';' && *rest != '#')
			add_error(st, st->line, NULL, "text after ']' (a key goes on a line of its own)");
		return;
	}
	if (!memchr(s, '=', len) && !memchr(s, ':', len))
		add_error(st, st->line, NULL, "syntax error: expected 'key = value'");
}

/* libinih ends a value at a ';' after a blank only; a '#' after a blank
 * ends it too, as either starts a comment line ("limit = 512M # half" was a
 * bad size).  The line is cut there, before libinih sees it. */
static void cut_hash_comment(char *line)
{
	for (size_t i = 1; line[0] && line[i]; i++)
		if (line[i] == '#' && (line[i - 1] == ' ' || line[i - 1] == '\t')) {
			line[i] = '\n';
			line[i + 1] = '\0';
			return;
		}
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
	cut_hash_comment(str);
	return str;
}

static void on_section_key(struct parse_state *st, void *base, const char *name, const char *value)
{
	const struct key *k = find_key(st->kind, name);
	unsigned bit;

	if (!k) {
		add_error(st, st->line, name, "unknown key");
		return;
	}
	bit = key_index(k);
	if ((st->seen & (1ull << bit)) && !(k->flags & KEY_REPEAT)) {
		add_error(st, st->line, name, "given twice");
		return;
	}
	st->seen |= 1ull << bit;
	st->key_line[bit] = st->line;
	if (k->parse(st, k, value, (char *)base + k->offset) < 0) {
		st->bad |= 1ull << bit;
		return;
	}
	if ((k->flags & KEY_PENDING) && st->refuse_pending)
		add_error(st, st->line, name,
			  "not supported by this oomkitd yet (refused rather than silently ignored)");
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;

	(void)section; /* the reader tracked it, with its line */
	/* A line the reader refused (an indented continuation libinih appends
	 * to the key before it) is one error, not a cascade. */
	if (st->bad_line == st->line)
		return 1;
	switch (st->kind) {
	case SECTION_NONE:
		add_error(st, st->line, name, "key outside a section");
		break;
	case SECTION_DAEMON:
		on_section_key(st, st->cfg, name, value);
		break;
	case SECTION_JOB:
		on_section_key(st, st->job, name, value);
		break;
	case SECTION_BAD:
		break;
	}
	/* Errors are collected here; a zero would only make libinih count them. */
	return 1;
}

/* ------------------------------------------------------------ whole files */

static void trim_jobs(struct parse_state *st)
{
	struct config *cfg = st->cfg;

	if (cfg->n_jobs > 0 && cfg->n_jobs < st->jobs_cap) {
		struct config_job *jobs = realloc(cfg->jobs, cfg->n_jobs * sizeof(*jobs));
		if (jobs)
			cfg->jobs = jobs;
	}
}

static struct config_cgroup *sort_base;

static int by_pattern(const void *a, const void *b)
{
	const struct config_cgroup *x = &sort_base[*(const unsigned *)a],
				   *y = &sort_base[*(const unsigned *)b];
	int c = strcmp(x->pattern, y->pattern);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* A pattern given twice, in one job or in two, is an error at its second
 * place: a cgroup that is an instance of two jobs would have two priorities. */
static void check_cgroup_duplicates(struct parse_state *st)
{
	struct config *cfg = st->cfg;
	unsigned *order;

	if (cfg->n_cgroups < 2)
		return;
	order = malloc(cfg->n_cgroups * sizeof(*order));
	if (!order) {
		add_error(st, 0, NULL, "out of memory");
		st->out_of_memory = true;
		return;
	}
	for (unsigned i = 0; i < cfg->n_cgroups; i++)
		order[i] = i;
	sort_base = cfg->cgroups;
	qsort(order, cfg->n_cgroups, sizeof(*order), by_pattern);
	for (unsigned i = 1; i < cfg->n_cgroups; i++) {
		const struct config_cgroup *first = &cfg->cgroups[order[i - 1]], *c = &cfg->cgroups[order[i]];
		if (strcmp(first->pattern, c->pattern) != 0)
			continue;
		snprintf(st->section, sizeof(st->section), "job %s", cfg->jobs[c->job].name);
		if (first->job == c->job)
			add_error(st, c->line, "cgroup", "'%s' given twice (first at line %u)", c->pattern,
				  first->line);
		else
			add_error(st, c->line, "cgroup", "'%s' is also a pattern of job %s (line %u)",
				  c->pattern, cfg->jobs[first->job].name, first->line);
	}
	st->section[0] = '\0';
	free(order);
}

/* Whether job excludes exactly what pattern matches (the same pattern). */
static bool excludes_pattern(const struct config *cfg, unsigned job, const char *pattern)
{
	for (unsigned i = 0; i < cfg->n_excludes; i++)
		if (cfg->excludes[i].job == job && strcmp(cfg->excludes[i].pattern, pattern) == 0)
			return true;
	return false;
}

/* A cgroup_exclude of a job with no pattern it could narrow is a mistake. */
static void check_cgroup_excludes(struct parse_state *st)
{
	struct config *cfg = st->cfg;

	for (unsigned i = 0; i < cfg->n_excludes; i++) {
		const struct config_cgroup *e = &cfg->excludes[i];
		bool narrows = false;
		for (unsigned k = 0; k < cfg->n_cgroups && !narrows; k++)
			narrows = cfg->cgroups[k].job == e->job &&
				  pattern_overlap(cfg->cgroups[k].pattern, e->pattern);
		if (narrows)
			continue;
		snprintf(st->section, sizeof(st->section), "job %s", cfg->jobs[e->job].name);
		add_error(st, e->line, "cgroup_exclude",
			  "'%s' matches nothing a cgroup = pattern of the job matches", e->pattern);
	}
	st->section[0] = '\0';
}

/* Patterns of two jobs that one cgroup could match both of: refused at the
 * later one, naming the other (identical ones are duplicates, above), unless
 * one job's cgroup_exclude names the other's pattern exactly.  A cgroup is
 * an instance of one job, with one priority and one chain. */
static void check_cgroup_overlaps(struct parse_state *st)
{
	struct config *cfg = st->cfg;

	for (unsigned i = 0; i < cfg->n_cgroups; i++)
		for (unsigned k = i + 1; k < cfg->n_cgroups; k++) {
			const struct config_cgroup *a = &cfg->cgroups[i], *b = &cfg->cgroups[k];
			if (a->job == b->job || strcmp(a->pattern, b->pattern) == 0 ||
			    !pattern_overlap(a->pattern, b->pattern) ||
			    excludes_pattern(cfg, a->job, b->pattern) ||
			    excludes_pattern(cfg, b->job, a->pattern))
				continue;
			snprintf(st->section, sizeof(st->section), "job %s", cfg->jobs[b->job].name);
			add_error(
			    st, b->line, "cgroup",
			    "'%s' and job %s's '%s' (line %u) can match the same cgroup; a cgroup is an "
			    "instance of one job",
			    b->pattern, cfg->jobs[a->job].name, a->pattern, a->line);
		}
	st->section[0] = '\0';
}

/* Everything a job waits for happens inside the delay: after it the
 * kernel's OOM killer decides, whatever the job is given. */
/* A hook is killed at its timeout: a quarter of the delay unless set, and
 * shorter than the delay (a before_kill's is cut further at run time, to
 * what the kill leaves of it). */
static void check_hook_timeout(struct parse_state *st, struct config_job *job, const char *d)
{
	const struct config *cfg = st->cfg;
	char t[32];

	if (job->hook_timeout_ms == 0)
		job->hook_timeout_ms = cfg->delay_ms / 4 ? cfg->delay_ms / 4 : 1;
	value_format_duration(job->hook_timeout_ms, t, sizeof(t));
	if (job->hook_timeout_line && job->hook_timeout_ms >= cfg->delay_ms)
		add_error(st, job->hook_timeout_line, "hook_timeout",
			  "%s is not shorter than the delay %s, when the kernel decides", t, d);
}

static void check_timings(struct parse_state *st)
{
	struct config *cfg = st->cfg;
	char d[32], a[32], b[32];

	value_format_duration(cfg->delay_ms, d, sizeof(d));
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		struct config_job *job = &cfg->jobs[i];
		/* A shed without a shed_wait has a quarter of the delay. */
		if (job->shed_wait_ms == 0 && chain_has(&job->chain, POLICY_SHED))
			job->shed_wait_ms = cfg->delay_ms / 4 ? cfg->delay_ms / 4 : 1;
		snprintf(st->section, sizeof(st->section), "job %s", job->name);
		check_hook_timeout(st, job, d);
		value_format_duration(job->kill_grace_ms, a, sizeof(a));
		value_format_duration(job->shed_wait_ms, b, sizeof(b));
		if (job->kill_grace_ms >= cfg->delay_ms)
			add_error(st, job->kill_grace_line, "kill_grace",
				  "%s is not shorter than the delay %s, when the kernel decides", a, d);
		else if (job->shed_wait_ms >= cfg->delay_ms)
			add_error(st, job->shed_wait_line, "shed_wait",
				  "%s is not shorter than the delay %s, when the kernel decides", b, d);
		else if (job->kill_grace_ms + job->shed_wait_ms >= cfg->delay_ms)
			add_error(st,
				  job->kill_grace_line > job->shed_wait_line ? job->kill_grace_line
									     : job->shed_wait_line,
				  job->kill_grace_line > job->shed_wait_line ? "kill_grace" : "shed_wait",
				  "shed_wait %s and kill_grace %s together are not shorter than the delay %s",
				  b, a, d);
	}
	st->section[0] = '\0';
}

/* The arrays are final: each job points at its own patterns, rules and commands. */
static void link_lists(struct config *cfg)
{
	for (unsigned i = 0; i < cfg->n_commands; i++)
		cfg->jobs[cfg->commands[i].job].hooks[cfg->commands[i].hook] = cfg->commands[i].text;
	for (unsigned i = cfg->n_cgroups; i-- > 0;)
		cfg->jobs[cfg->cgroups[i].job].cgroups = &cfg->cgroups[i];
	for (unsigned i = cfg->n_excludes; i-- > 0;)
		cfg->jobs[cfg->excludes[i].job].excludes = &cfg->excludes[i];
	for (unsigned i = cfg->n_rules; i-- > 0;)
		if (cfg->rules[i].job == CONFIG_RULE_MACHINE)
			cfg->machine_rules = &cfg->rules[i];
		else
			cfg->jobs[cfg->rules[i].job].rules = &cfg->rules[i];
}

static int parse_text(const char *text, const char *source, bool refuse_pending, uint64_t mem_total_bytes,
		      struct config *ret, char *errors, size_t errors_len)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct parse_state *st = calloc(1, sizeof(*st));
	int r = 0;

	if (!cfg || !st) {
		free(cfg);
		free(st);
		return -ENOMEM;
	}
	snprintf(cfg->source, sizeof(cfg->source), "%s", source);
	st->cfg = cfg;
	st->source = source;
	st->text = text;
	st->errors = errors;
	st->errors_len = errors_len;
	st->refuse_pending = refuse_pending;
	st->mem_total_bytes = mem_total_bytes;
	if (errors && errors_len)
		errors[0] = '\0';
	apply_defaults(st, SECTION_DAEMON, cfg);

	int line = ini_parse_stream(read_line, st, on_key, st);
	if (line > 0 && st->n_errors == 0)
		add_error(st, (unsigned)line, NULL, "syntax error");
	else if (line < 0)
		add_error(st, 0, NULL, "out of memory");
	end_section(st);
	st->section[0] = '\0';
	check_cgroup_duplicates(st);
	check_cgroup_excludes(st);
	check_cgroup_overlaps(st);
	check_timings(st);

	if (st->n_errors == 0) {
		trim_jobs(st);
		link_lists(cfg);
		*ret = *cfg;
	} else {
		r = st->out_of_memory ? -ENOMEM : -EINVAL;
		free(cfg->jobs);
		free(cfg->cgroups);
		free(cfg->excludes);
		free(cfg->rules);
		free(cfg->commands);
	}
	free(cfg);
	free(st);
	return r;
}

int config_parse_string(const char *text, const char *source, struct config *ret, char *errors,
			size_t errors_len)
{
	return parse_text(text, source, false, 0, ret, errors, errors_len);
}

static const char *file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	}
	return "not a file";
}

/* Reads the whole of fd, a regular file of size bytes, into a fresh buffer. */
static int read_all(int fd, size_t size, char **ret_text)
{
	char *text = malloc(size + 1);
	size_t off = 0;

	if (!text)
		return -ENOMEM;
	while (off < size) {
		ssize_t n = read(fd, text + off, size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			free(text);
			return r;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	text[off] = '\0';
	if (strlen(text) != off) {
		free(text);
		return -EILSEQ;
	}
	*ret_text = text;
	return 0;
}

/* Reads a regular file of at most CONFIG_FILE_MAX bytes into a
 * NUL-terminated *ret_text; the message says why not.  The daemon reads it
 * on SIGHUP from its only thread, so nothing here may block: O_NONBLOCK makes
 * opening a FIFO return at once (to be refused), and O_NOCTTY keeps a
 * terminal from becoming the daemon's.  Links are followed: the file is
 * root's to place, and /etc is full of links into package trees. */
static int read_file(const char *path, char **ret_text, char *errors, size_t errors_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat stbuf;
	const char *why = NULL;
	int r = 0;

	if (fd < 0 || fstat(fd, &stbuf) < 0)
		r = -errno;
	else if (!S_ISREG(stbuf.st_mode))
		r = -EINVAL, why = file_type(stbuf.st_mode);
	else if (stbuf.st_size > CONFIG_FILE_MAX)
		r = -EFBIG;
	else
		r = read_all(fd, (size_t)stbuf.st_size, ret_text);
	if (fd >= 0)
		close(fd);
	if (r < 0 && errors && errors_len) {
		if (why)
			snprintf(errors, errors_len, "%s: cannot read: not a regular file (%s)\n", path, why);
		else if (r == -EFBIG)
			snprintf(errors, errors_len, "%s: cannot read: larger than %d bytes\n", path,
				 CONFIG_FILE_MAX);
		else
			snprintf(errors, errors_len, "%s: cannot read: %s\n", path,
				 r == -EILSEQ ? "contains a NUL byte" : strerror(-r));
	}
	return r;
}

/* The machine at the cgroup v2 root: it has no limit of its own and nothing
 * of oomkitd's is made beside systemd's cgroups there, so every job adopts
 * cgroups.  It is the machine when "machine =" names it, and on cgroup v2
 * when the file names no machine (machine_line 0): a default is never a path
 * of the other hierarchy, and a cgroup below the root would hold none of the
 * units the jobs adopt.  A file that needs a machine of its own (a limit, jobs
 * oomkitd makes) is refused with the line to change. */
static void check_root_machine(struct parse_state *st, const struct config_mount *mount, const char *root)
{
	struct config *cfg = st->cfg;
	bool named = cfg->machine_line != 0;

	if (!mount->v2) {
		add_error(st, cfg->machine_line, "machine",
			  "'%s' is the memory cgroup mount itself; the machine must be a cgroup below it "
			  "(only a cgroup v2 root can be the machine)",
			  root);
		return;
	}
	if (cfg->machine_limit_bytes != UINT64_MAX) {
		if (named)
			add_error(
			    st, cfg->machine_limit_line, "machine_limit",
			    "the cgroup v2 root has no limit; with machine = %s it is the machine's RAM "
			    "(see machine_available)",
			    root);
		else
			add_error(
			    st, cfg->machine_limit_line, "machine_limit",
			    "no machine = line, so on cgroup v2 the machine is the root %s, which has no "
			    "limit: name the machine's cgroup with machine = (or leave machine_limit out: "
			    "the root's limit is the RAM, see machine_available)",
			    root);
	}
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		if (cfg->jobs[i].n_cgroups)
			continue;
		snprintf(st->section, sizeof(st->section), "job %s", cfg->jobs[i].name);
		if (named)
			add_error(st, cfg->jobs[i].line, NULL,
				  "with the machine at the cgroup v2 root a job adopts cgroups (cgroup =): "
				  "oomkitd makes none of its own beside systemd's");
		else
			add_error(
			    st, cfg->jobs[i].line, NULL,
			    "no machine = line, so on cgroup v2 the machine is the root %s, where a job "
			    "adopts cgroups (cgroup =): for jobs of oomkitd's own, name their parent with "
			    "machine =",
			    root);
	}
	snprintf(st->section, sizeof(st->section), "oomkitd");
	cfg->machine_is_root = st->n_errors == 0;
}

/* The machine a file that names none gets, from the mount it is resolved
 * against: on cgroup v2 the root (check_root_machine()), on cgroup v1
 * "oomkit" below the memory controller's mount.  root is normalised. */
static int default_machine(struct config *cfg, const struct config_mount *mount, const char *root)
{
	int n;

	if (mount->v2)
		n = snprintf(cfg->machine, sizeof(cfg->machine), "%s", root);
	else
		n = snprintf(cfg->machine, sizeof(cfg->machine), "%s/oomkit",
			     strcmp(root, "/") == 0 ? "" : root);
	return n < 0 || (size_t)n >= sizeof(cfg->machine) ? -ENAMETOOLONG : 0;
}

int config_resolve_machine(struct config *cfg, const struct config_mount *mount, char *errors,
			   size_t errors_len)
{
	struct parse_state st = {.cfg = cfg,
				 .source = cfg->source,
				 .errors = errors,
				 .errors_len = errors_len,
				 .section = "oomkitd"};
	char root[CONFIG_PATH_MAX], why[CONFIG_PATH_MAX + 64];
	const char *rel;
	size_t n;

	if (errors && errors_len)
		errors[0] = '\0';
	if (value_normalize_path(mount->root, root, sizeof(root), why, sizeof(why)) < 0) {
		st.section[0] = '\0';
		add_error(&st, 0, NULL, "the memory cgroup mount: %s", why);
		return -EINVAL;
	}
	if (!cfg->machine_line && default_machine(cfg, mount, root) < 0) {
		add_error(&st, 0, "machine", "the default machine below %s: path too long", root);
		return -EINVAL;
	}
	/* cfg->machine is normalised too, so one comparison of strings is exact. */
	n = strcmp(root, "/") == 0 ? 0 : strlen(root);
	rel = cfg->machine + n;
	cfg->machine_is_root = false;
	if (strcmp(cfg->machine, root) == 0) {
		check_root_machine(&st, mount, root);
		if (st.n_errors)
			return -EINVAL;
		cfg->machine_rel[0] = '\0';
		return 0;
	}
	if (strncmp(cfg->machine, root, n) != 0 || rel[0] != '/') {
		add_error(&st, cfg->machine_line, "machine", "'%s' is not below the memory cgroup mount %s",
			  cfg->machine, root);
		return -EINVAL;
	}
	snprintf(cfg->machine_rel, sizeof(cfg->machine_rel), "%s", rel + 1);
	return 0;
}

#define SWAP(a, b)                                                                                           \
	do {                                                                                                 \
		__typeof__(a) swap_tmp_ = (a);                                                               \
		(a) = (b);                                                                                   \
		(b) = swap_tmp_;                                                                             \
	} while (0)

/* A file that names no machine, machine_limit or job keeps the machine's built-in
 * scope: on a systemd machine on cgroup v2 the root, with systemd's units as
 * jobs; every other setting of the file applies as written.  So the shipped
 * file, every key of which is commented out, means exactly what no file
 * means, and uncommenting readonly_status or report_dir keeps the jobs.  The
 * built-in jobs are parsed with the file's delay, which their defaults
 * (hook_timeout) derive from. */
static int take_builtin_scope(struct config *cfg, const struct config_mount *mount, char *errors,
			      size_t errors_len)
{
	char text[sizeof(builtin_systemd_text) + CONFIG_PATH_MAX], with_delay[sizeof(text) + 64], d[32];
	const char *t = config_builtin_text(mount, text, sizeof(text)), *at = strstr(t, "[oomkitd]\n");
	struct config b;

	if (!t[0] || !at)
		return 0;
	value_format_duration(cfg->delay_ms, d, sizeof(d));
	at += strlen("[oomkitd]\n");
	snprintf(with_delay, sizeof(with_delay), "%.*sdelay = %s\n%s", (int)(at - t), t, d, at);
	int r = parse_text(with_delay, BUILTIN_SOURCE, true, mount->mem_total_bytes, &b, errors, errors_len);
	if (r < 0)
		return r;
	snprintf(cfg->machine, sizeof(cfg->machine), "%s", b.machine);
	cfg->machine_line = b.machine_line; /* named by the default, as the root must be */
	SWAP(cfg->jobs, b.jobs);
	SWAP(cfg->n_jobs, b.n_jobs);
	SWAP(cfg->cgroups, b.cgroups);
	SWAP(cfg->n_cgroups, b.n_cgroups);
	SWAP(cfg->excludes, b.excludes);
	SWAP(cfg->n_excludes, b.n_excludes);
	cfg->builtin = true;
	config_free(&b);
	return 0;
}

int config_read(const char *path, const struct config_mount *mount, struct config *ret, char *errors,
		size_t errors_len)
{
	struct config cfg;
	char *text = NULL, builtin[sizeof(builtin_systemd_text) + CONFIG_PATH_MAX];
	int r;

	if (path && (r = read_file(path, &text, errors, errors_len)) < 0)
		return r;
	r = parse_text(text ? text : config_builtin_text(mount, builtin, sizeof(builtin)),
		       path ? path : BUILTIN_SOURCE, true, mount ? mount->mem_total_bytes : 0, &cfg, errors,
		       errors_len);
	free(text);
	if (r < 0)
		return r;
	cfg.builtin = !path;
	if (path && cfg.machine_line == 0 && cfg.machine_limit_line == 0 && cfg.n_jobs == 0 &&
	    (r = take_builtin_scope(&cfg, mount, errors, errors_len)) < 0) {
		config_free(&cfg);
		return r;
	}
	if (mount && (r = config_resolve_machine(&cfg, mount, errors, errors_len)) < 0) {
		config_free(&cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}

void config_free(struct config *cfg)
{
	free(cfg->jobs);
	free(cfg->cgroups);
	free(cfg->excludes);
	cfg->excludes = NULL;
	cfg->n_excludes = 0;
	free(cfg->rules);
	free(cfg->commands);
	cfg->commands = NULL;
	cfg->n_commands = 0;
	cfg->jobs = NULL;
	cfg->n_jobs = 0;
	cfg->cgroups = NULL;
	cfg->n_cgroups = 0;
	cfg->rules = NULL;
	cfg->n_rules = 0;
	cfg->machine_rules = NULL;
	cfg->n_machine_rules = 0;
}

bool config_excluded(const struct config *cfg, unsigned job, const char *rel)
{
	for (unsigned i = 0; i < cfg->n_excludes; i++)
		if (cfg->excludes[i].job == job && pattern_match(cfg->excludes[i].pattern, rel))
			return true;
	return false;
}

static bool has_prompt(const struct policy_chain *chain)
{
	for (unsigned i = 0; i < chain->n_steps; i++)
		if (chain->steps[i] == POLICY_PROMPT)
			return true;
	return false;
}

unsigned config_prompt_warnings(const struct config *cfg, char *buf, size_t len)
{
	char delay[32], wait[32], min[32], where[64];
	size_t used = 0;
	unsigned n = 0;

	if (len)
		buf[0] = '\0';
	if (cfg->delay_ms / 2 >= CONFIG_PROMPT_ANSWER_MIN_MS)
		return 0;
	value_format_duration(cfg->delay_ms, delay, sizeof(delay));
	value_format_duration(cfg->delay_ms / 2, wait, sizeof(wait));
	value_format_duration(2 * CONFIG_PROMPT_ANSWER_MIN_MS, min, sizeof(min));
	if (cfg->delay_line)
		snprintf(where, sizeof(where), "delay = %s at line %u", delay, cfg->delay_line);
	else
		snprintf(where, sizeof(where), "the default delay, %s", delay);
	for (unsigned j = 0; j <= cfg->n_jobs; j++) {
		const struct config_job *job = j ? &cfg->jobs[j - 1] : NULL; /* [oomkitd] first */
		char section[CONFIG_NAME_MAX + 8];
		if (!has_prompt(job ? &job->chain : &cfg->chain))
			continue;
		snprintf(section, sizeof(section), job ? "job %s" : "oomkitd", job ? job->name : "");
		n++;
		if (used + 1 >= len)
			continue;
		int w = snprintf(
		    buf + used, len - used,
		    "%s:%u: warning: [%s] policy: prompt waits half the delay for an answer, %s (%s): too "
		    "short for a person to read the question and answer; give it a delay of at "
		    "least %s\n",
		    cfg->source, job ? job->policy_line : cfg->policy_line, section, wait, where, min);
		if (w > 0)
			used = used + (size_t)w < len ? used + (size_t)w : len - 1;
	}
	return n;
}

const char *config_builtin_text(const struct config_mount *mount, char *buf, size_t len)
{
	if (!mount || !mount->root || !mount->v2 || !mount->systemd || len == 0)
		return "";
	int n = snprintf(buf, len, builtin_systemd_text, mount->root);
	return n < 0 || (size_t)n >= len ? "" : buf;
}

/* A pattern takes in self if it matches self or an ancestor (not the root)
 * that the job does not exclude. */
static bool takes_in(const struct config *cfg, const struct config_cgroup *c, const char *self)
{
	char prefix[CONFIG_PATH_MAX];
	size_t n = strlen(self);

	if (n >= sizeof(prefix))
		return pattern_match_self_or_ancestor(c->pattern, self);
	for (size_t i = 1; i <= n; i++) {
		if (self[i] != '/' && self[i] != '\0')
			continue;
		memcpy(prefix, self, i);
		prefix[i] = '\0';
		if (pattern_match(c->pattern, prefix) && !config_excluded(cfg, c->job, prefix))
			return true;
	}
	return false;
}

int config_check_self(const struct config *cfg, const char *self, char *errors, size_t errors_len)
{
	struct parse_state st = {.source = cfg->source, .errors = errors, .errors_len = errors_len};

	if (errors && errors_len)
		errors[0] = '\0';
	for (unsigned i = 0; i < cfg->n_cgroups; i++) {
		const struct config_cgroup *c = &cfg->cgroups[i];
		if (!takes_in(cfg, c, self))
			continue;
		snprintf(st.section, sizeof(st.section), "job %s", cfg->jobs[c->job].name);
		add_error(&st, c->line, "cgroup", "'%s' takes in oomkitd's own cgroup %s", c->pattern, self);
	}
	return st.n_errors ? -EINVAL : 0;
}

const struct config_job *config_find_job(const struct config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_jobs; i++)
		if (strcmp(cfg->jobs[i].name, name) == 0)
			return &cfg->jobs[i];
	return NULL;
}
