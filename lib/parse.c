/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * parse.c - parsers for the kernel's text files: memory.oom_control,
 * memory.stat, memory.events, single-value cgroup files, PSI files,
 * /proc/PID/{stat,status,cgroup,cmdline}, /proc/self/mounts and
 * cgroup.procs, plus the normalisation of cgroup path arguments.
 *
 * Every parser takes a buffer and its length: the buffer need not be
 * NUL-terminated and may hold anything, including NUL bytes, so nothing here
 * calls a string function on it.  Nothing allocates; results are written only
 * on success.  The files come from the kernel, but a parser must still hold
 * against a hostile process name, a file that was cut short or a fixture that
 * is wrong, and they are fuzzed for it (tests/fuzz).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Bytes [p, end) of a buffer. */
struct span {
	const char *p;
	const char *end;
};

static struct span span_of(const char *buf, size_t len)
{
	static const char empty[1];

	/* Arithmetic on a NULL pointer is undefined even with a zero offset. */
	if (!buf)
		return (struct span){empty, empty};
	return (struct span){buf, buf + len};
}

static size_t span_len(struct span s)
{
	return (size_t)(s.end - s.p);
}

static bool span_eq(struct span s, const char *str)
{
	size_t n = strlen(str);
	return span_len(s) == n && memcmp(s.p, str, n) == 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_space(char c)
{
	return is_blank(c) || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void skip_blanks(struct span *s)
{
	while (s->p < s->end && is_blank(*s->p))
		s->p++;
}

/* Takes the next line (without its '\n') off the front of s; false at the end. */
static bool next_line(struct span *s, struct span *line)
{
	const char *nl;

	if (s->p >= s->end)
		return false;
	nl = memchr(s->p, '\n', span_len(*s));
	line->p = s->p;
	line->end = nl ? nl : s->end;
	s->p = nl ? nl + 1 : s->end;
	return true;
}

/* Takes the next run of bytes that are not blanks or newlines off s. */
static bool next_token(struct span *s, struct span *tok)
{
	while (s->p < s->end && is_space(*s->p))
		s->p++;
	if (s->p >= s->end)
		return false;
	tok->p = s->p;
	while (s->p < s->end && !is_space(*s->p))
		s->p++;
	tok->end = s->p;
	return true;
}

/* Splits s at its first sep: the part before goes to field, s keeps the part
 * after.  False (and nothing changed) if s has no sep. */
static bool split_at(struct span *s, char sep, struct span *field)
{
	const char *q = memchr(s->p, sep, span_len(*s));

	if (!q)
		return false;
	*field = (struct span){s->p, q};
	s->p = q + 1;
	return true;
}

/* Whether the sep-separated list contains item exactly. */
static bool list_has(struct span list, char sep, const char *item)
{
	struct span f;

	while (split_at(&list, sep, &f))
		if (span_eq(f, item))
			return true;
	return span_eq(list, item);
}

/* Takes the decimal digits at the front of s.  The digits are consumed even
 * when they overflow, so that a caller can tell "too big" from "not a number". */
static int take_u64(struct span *s, uint64_t *ret)
{
	uint64_t v = 0;
	bool overflow = false;

	if (s->p >= s->end || !is_digit(*s->p))
		return -EINVAL;
	for (; s->p < s->end && is_digit(*s->p); s->p++) {
		unsigned d = (unsigned)(*s->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (overflow)
		return -ERANGE;
	*ret = v;
	return 0;
}

/* The whole of s is one number followed by optional blanks. */
static int span_to_u64(struct span s, uint64_t *ret)
{
	uint64_t v;
	int r = take_u64(&s, &v);

	if (r == -EINVAL)
		return r;
	skip_blanks(&s);
	if (s.p != s.end)
		return -EINVAL;
	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

/* Whether s is a non-empty run of digits and nothing else. */
static bool span_all_digits(struct span s)
{
	if (s.p == s.end)
		return false;
	for (; s.p < s.end; s.p++)
		if (!is_digit(*s.p))
			return false;
	return true;
}

/* A pid as the kernel prints it: digits only, positive and within pid_t. */
static int span_to_pid(struct span s, pid_t *ret)
{
	uint64_t v;

	if (!span_all_digits(s) || span_to_u64(s, &v) < 0 || v == 0 || v > INT_MAX)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int oomkit__parse_u64(const char *buf, size_t len, uint64_t *ret)
{
	struct span s = span_of(buf, len);
	uint64_t v;
	int r;

	/* A single-value file ends in '\n'. */
	while (s.end > s.p && is_space(s.end[-1]))
		s.end--;
	if (span_eq(s, "max")) {
		*ret = OOMKIT_UNLIMITED;
		return 0;
	}
	r = take_u64(&s, &v);
	if (r == -EINVAL || s.p != s.end)
		return -EINVAL;
	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

/* ------------------------------------------------- flat keyed files */

/* Splits "key value" into its two parts; false if there is no blank. */
static bool split_key_value(struct span line, struct span *key, struct span *value)
{
	key->p = line.p;
	key->end = line.p;
	while (key->end < line.end && !is_blank(*key->end))
		key->end++;
	if (key->end == key->p || key->end == line.end)
		return false;
	value->p = key->end;
	value->end = line.end;
	skip_blanks(value);
	return true;
}

int oomkit__parse_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *ret)
{
	struct span s = span_of(buf, len), line, k, v;

	if (!key || !*key || strpbrk(key, " \t\n"))
		return -EINVAL;
	while (next_line(&s, &line)) {
		if (!split_key_value(line, &k, &v)) {
			/* A key on its own is the key with a malformed value. */
			if (span_eq(line, key))
				return -EINVAL;
			continue;
		}
		/* Whole-key comparison: "rss" must not match "rss_huge" or "total_rss". */
		if (span_eq(k, key))
			return span_to_u64(v, ret);
	}
	return -ENOENT;
}

struct keyed_slot {
	const char *key;
	uint64_t *value;
	bool seen;
};

/* Parses a whole flat keyed file ("key value" lines, as the kernel documents
 * them) into the slots; keys it does not know are checked and skipped, so a
 * newer kernel's extra counters do no harm.  The first occurrence of a key
 * wins.  Every malformed line, an overflowing value included, is -EINVAL. */
static int parse_flat_keyed(const char *buf, size_t len, struct keyed_slot *slots, size_t n)
{
	struct span s = span_of(buf, len), line, k, v;
	uint64_t value;

	while (next_line(&s, &line)) {
		if (line.p == line.end)
			continue;
		if (!split_key_value(line, &k, &v) || span_to_u64(v, &value) < 0)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (!slots[i].seen && span_eq(k, slots[i].key)) {
				*slots[i].value = value;
				slots[i].seen = true;
			}
	}
	return 0;
}

int oomkit__parse_oom_control(const char *buf, size_t len, struct oomkit__oom_control *ret)
{
	uint64_t disable = 0, under = 0, kills = 0;
	struct keyed_slot slots[] = {
	    {"oom_kill_disable", &disable, false},
	    {"under_oom", &under, false},
	    {"oom_kill", &kills, false},
	};

	if (parse_flat_keyed(buf, len, slots, 3) < 0)
		return -EINVAL;
	if (!slots[0].seen || !slots[1].seen || disable > 1 || under > 1)
		return -EINVAL;
	*ret = (struct oomkit__oom_control){
	    .oom_kill_disable = disable == 1,
	    .under_oom = under == 1,
	    .oom_kill = kills,
	};
	return 0;
}

int oomkit__parse_memory_events(const char *buf, size_t len, struct oomkit__memory_events *ret)
{
	struct oomkit__memory_events ev = {0};
	struct keyed_slot slots[] = {
	    {"low", &ev.low, false},	       {"high", &ev.high, false},
	    {"max", &ev.max, false},	       {"oom", &ev.oom, false},
	    {"oom_kill", &ev.oom_kill, false}, {"oom_group_kill", &ev.oom_group_kill, false},
	};

	if (parse_flat_keyed(buf, len, slots, sizeof(slots) / sizeof(slots[0])) < 0)
		return -EINVAL;
	*ret = ev;
	return 0;
}

/* ----------------------------------------------------------- PSI */

/* "12.34" -> 1234: a percentage with up to two decimals, times 100. */
static int span_to_centi(struct span s, uint64_t *ret)
{
	uint64_t whole, frac = 0;
	size_t decimals = 0;

	if (take_u64(&s, &whole) < 0 || whole > UINT64_MAX / 100 - 1)
		return -EINVAL;
	if (s.p < s.end && *s.p == '.') {
		s.p++;
		for (; s.p < s.end && is_digit(*s.p) && decimals < 2; s.p++, decimals++)
			frac = frac * 10 + (uint64_t)(*s.p - '0');
		if (decimals == 0)
			return -EINVAL;
	}
	if (s.p != s.end)
		return -EINVAL;
	*ret = whole * 100 + (decimals == 1 ? frac * 10 : frac);
	return 0;
}

/* Parses the "avg10=… avg60=… avg300=… total=…" part of a PSI line. */
static int parse_psi_fields(struct span s, struct oomkit__psi_line *ret)
{
	struct oomkit__psi_line psi = {0};
	bool has_avg10 = false, has_total = false;
	struct span tok, name, value;
	int r = 0;

	while (next_token(&s, &tok)) {
		if (!split_at(&tok, '=', &name))
			return -EINVAL;
		value = tok;
		if (span_eq(name, "avg10")) {
			r = span_to_centi(value, &psi.avg10_x100);
			has_avg10 = true;
		} else if (span_eq(name, "avg60")) {
			r = span_to_centi(value, &psi.avg60_x100);
		} else if (span_eq(name, "avg300")) {
			r = span_to_centi(value, &psi.avg300_x100);
		} else if (span_eq(name, "total")) {
			r = span_to_u64(value, &psi.total_us) < 0 ? -EINVAL : 0;
			has_total = true;
		}
		if (r < 0)
			return r;
	}
	if (!has_avg10 || !has_total)
		return -EINVAL;
	*ret = psi;
	return 0;
}

int oomkit__parse_psi_line(const char *buf, size_t len, const char *kind, struct oomkit__psi_line *ret)
{
	struct span s = span_of(buf, len), line, tok;

	if (!kind || !*kind || strpbrk(kind, " \t\n"))
		return -EINVAL;
	while (next_line(&s, &line)) {
		struct span rest = line;
		if (!next_token(&rest, &tok) || !span_eq(tok, kind))
			continue;
		return parse_psi_fields(rest, ret);
	}
	return -ENOENT;
}

/* ----------------------------------------------------- /proc/PID/stat */

/* Takes "PID (" off the front and finds the comm, which ends at the last ')':
 * a comm may itself contain ") Z (" and look like the fields after it. */
static int take_pid_comm(struct span *s, pid_t *ret_pid, struct span *ret_comm)
{
	struct span pid = *s;
	const char *open, *close;

	open = memchr(s->p, '(', span_len(*s));
	if (!open || open == s->p || open[-1] != ' ')
		return -EINVAL;
	pid.end = open - 1;
	if (span_to_pid(pid, ret_pid) < 0)
		return -EINVAL;
	close = memrchr(open + 1, ')', (size_t)(s->end - (open + 1)));
	if (!close)
		return -EINVAL;
	*ret_comm = (struct span){open + 1, close};
	s->p = close + 1;
	return 0;
}

/* The terminal is a device number the kernel prints with %d: it may be
 * negative (a minor number of 2^19 or more). */
static int span_to_tty(struct span s, int *ret)
{
	bool neg = s.p < s.end && *s.p == '-';
	uint64_t v;

	if (neg)
		s.p++;
	if (span_to_u64(s, &v) < 0 || v > (uint64_t)INT_MAX + neg)
		return -EINVAL;
	*ret = neg ? (int)(-(int64_t)v) : (int)v;
	return 0;
}

int oomkit__parse_proc_stat(const char *buf, size_t len, struct oomkit__proc_stat *ret)
{
	struct span s = span_of(buf, len), comm, tok;
	struct oomkit__proc_stat st = {0};
	uint64_t v;

	if (take_pid_comm(&s, &st.pid, &comm) < 0)
		return -EINVAL;
	memcpy(st.comm, comm.p, span_len(comm) < sizeof(st.comm) ? span_len(comm) : sizeof(st.comm) - 1);

	/* Field 3 is the state, 4 the parent, 5 the process group, 6 the
	 * session, 7 the terminal, 22 the start time; 39 the CPU it last ran
	 * on, only a hint (the kill path's, kill.c), so -1 when it is missing
	 * or odd rather than an error. */
	st.processor = -1;
	for (int field = 3; field <= 22; field++) {
		if (!next_token(&s, &tok))
			return -EINVAL;
		if (field == 3) {
			char c = *tok.p;
			if (span_len(tok) != 1 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
				return -EINVAL;
			st.state = c;
		} else if (field == 4) {
			if (span_to_u64(tok, &v) < 0 || v > INT_MAX)
				return -EINVAL; /* 0 is valid: init's and kthreadd's parent */
			st.ppid = (pid_t)v;
		} else if (field == 5 || field == 6) {
			/* A task being reaped has lost its group and session
			 * links: the kernel prints -1 for both (seen on 6.18
			 * between a zombie's wait and its release). */
			if (span_len(tok) == 2 && memcmp(tok.p, "-1", 2) == 0)
				return -ESRCH;
			if (span_to_u64(tok, &v) < 0 || v > INT_MAX)
				return -EINVAL;
			*(field == 5 ? &st.pgid : &st.sid) = (pid_t)v;
		} else if (field == 7) {
			if (span_to_tty(tok, &st.tty_nr) < 0)
				return -EINVAL;
		} else if (field == 22) {
			if (span_to_u64(tok, &st.start_time) < 0)
				return -EINVAL;
		}
	}
	for (int field = 23; field <= 39 && next_token(&s, &tok); field++)
		if (field == 39 && span_to_u64(tok, &v) == 0 && v < INT_MAX)
			st.processor = (int)v;
	*ret = st;
	return 0;
}

/* --------------------------------------------------- /proc/PID/status */

/* If line is "key:<blanks>rest", puts rest into value. */
static bool status_key(struct span line, const char *key, struct span *value)
{
	size_t n = strlen(key);

	if (span_len(line) <= n || memcmp(line.p, key, n) != 0 || line.p[n] != ':')
		return false;
	value->p = line.p + n + 1;
	value->end = line.end;
	skip_blanks(value);
	return true;
}

/* "1234 kB" */
static int span_to_kib(struct span s, uint64_t *ret)
{
	uint64_t v;

	if (take_u64(&s, &v) < 0)
		return -EINVAL;
	skip_blanks(&s);
	if (span_len(s) < 2 || memcmp(s.p, "kB", 2) != 0)
		return -EINVAL;
	s.p += 2;
	skip_blanks(&s);
	if (s.p != s.end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* "Uid:\treal\teffective\tsaved\tfs": the real uid. */
static int span_to_uid(struct span s, uid_t *ret)
{
	uint64_t v;

	if (take_u64(&s, &v) < 0 || v >= UINT32_MAX)
		return -EINVAL; /* (uid_t)-1 is "no uid", never a process's */
	if (s.p != s.end && !is_blank(*s.p))
		return -EINVAL;
	*ret = (uid_t)v;
	return 0;
}

/* A signal mask: 16 hex digits, as the kernel prints SigCgt. */
static int span_to_hex64(struct span s, uint64_t *ret)
{
	uint64_t v = 0;
	size_t n = 0;

	for (; s.p < s.end && n < 17; s.p++, n++) {
		char c = *s.p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	skip_blanks(&s);
	if (n == 0 || n > 16 || s.p != s.end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int oomkit__parse_proc_status(const char *buf, size_t len, struct oomkit__proc_status *ret)
{
	static const char *const kib_keys[] = {"RssAnon", "RssFile", "RssShmem", "VmSwap"};
	struct oomkit__proc_status st = {0};
	uint64_t *kib[] = {&st.rss_anon_kib, &st.rss_file_kib, &st.rss_shmem_kib, &st.swap_kib};
	bool seen[4] = {false}, has_uid = false;
	struct span s = span_of(buf, len), line, value;

	/* Lines this parser does not need are skipped unchecked: their formats
	 * vary between kernels.  The first occurrence of a key wins. */
	while (next_line(&s, &line)) {
		if (!has_uid && status_key(line, "Uid", &value)) {
			if (span_to_uid(value, &st.uid) < 0)
				return -EINVAL;
			has_uid = true;
			continue;
		}
		for (size_t i = 0; i < 4; i++) {
			if (seen[i] || !status_key(line, kib_keys[i], &value))
				continue;
			if (span_to_kib(value, kib[i]) < 0)
				return -EINVAL;
			seen[i] = true;
		}
	}
	if (!has_uid)
		return -EINVAL;
	st.has_rss = seen[0];
	*ret = st;
	return 0;
}

int oomkit__parse_proc_sigcgt(const char *buf, size_t len, uint64_t *ret)
{
	struct span s = span_of(buf, len), line, value;

	while (next_line(&s, &line))
		if (status_key(line, "SigCgt", &value))
			return span_to_hex64(value, ret);
	*ret = 0;
	return 0;
}

/* --------------------------------------------------- /proc/self/mounts */

static int octal_digit(char c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

/* Decodes the "ooo" of a "\ooo" escape at the front of in into *c; a
 * backslash not followed by one is left as it is. */
static void take_escape(struct span *in, char *c)
{
	int a, b, d;

	if (span_len(*in) < 3)
		return;
	a = octal_digit(in->p[0]);
	b = octal_digit(in->p[1]);
	d = octal_digit(in->p[2]);
	if (a < 0 || a > 3 || b < 0 || d < 0)
		return;
	*c = (char)(a * 64 + b * 8 + d);
	in->p += 3;
}

/* Copies a mount point, decoding the kernel's \ooo escapes (\040 for a space). */
static int decode_mount_point(struct span in, char *out, size_t out_len)
{
	size_t o = 0;

	if (span_len(in) == 0 || *in.p != '/')
		return -EINVAL;
	while (in.p < in.end) {
		char c = *in.p++;
		if (c == '\\')
			take_escape(&in, &c);
		if (c == '\0')
			return -EINVAL; /* a path cannot hold a NUL */
		if (o + 1 >= out_len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

/* Records one mounts line if it is a hierarchy we want and the first of its kind. */
static int parse_mount_line(struct span line, struct oomkit__mounts *m)
{
	struct span dev, mnt, type, opts = {"", ""};
	int r = 0;

	if (!next_token(&line, &dev) || !next_token(&line, &mnt) || !next_token(&line, &type))
		return 0;
	next_token(&line, &opts);
	if (span_eq(type, "cgroup2")) {
		if (!m->cgroup2_root[0])
			r = decode_mount_point(mnt, m->cgroup2_root, sizeof(m->cgroup2_root));
		return r;
	}
	if (!span_eq(type, "cgroup"))
		return 0;
	/* One v1 hierarchy may carry several controllers ("cpu,memory"). */
	if (!m->memory_root[0] && list_has(opts, ',', "memory"))
		r = decode_mount_point(mnt, m->memory_root, sizeof(m->memory_root));
	if (r == 0 && !m->freezer_root[0] && list_has(opts, ',', "freezer"))
		r = decode_mount_point(mnt, m->freezer_root, sizeof(m->freezer_root));
	return r;
}

int oomkit__parse_mounts(const char *buf, size_t len, struct oomkit__mounts *ret)
{
	struct oomkit__mounts m = {0};
	struct span s = span_of(buf, len), line;
	int r;

	while (next_line(&s, &line)) {
		r = parse_mount_line(line, &m);
		if (r < 0)
			return r;
	}
	*ret = m;
	return 0;
}

/* ---------------------------------------------------- /proc/PID/cgroup */

/* Whether a path is as the kernel writes it: "/" or "/a/b", every component
 * non-empty and neither "." nor "..".  Anything else could turn into an
 * absolute path ("//x" -> "/x") or leave the hierarchy ("/../x") once the
 * leading '/' is dropped. */
static bool path_is_canonical(struct span path)
{
	struct span c;

	if (span_len(path) == 0 || *path.p != '/')
		return false;
	path.p++;
	if (path.p == path.end)
		return true;
	while (split_at(&path, '/', &c))
		if (c.p == c.end || span_eq(c, ".") || span_eq(c, ".."))
			return false;
	return path.p != path.end && !span_eq(path, ".") && !span_eq(path, "..");
}

/* Whether "ID:controllers" of a /proc/PID/cgroup line selects controller
 * (NULL: the v2 line, "0" with no controllers). */
static bool cgroup_line_matches(struct span id, struct span controllers, const char *controller)
{
	if (!controller)
		return span_eq(id, "0") && controllers.p == controllers.end;
	return list_has(controllers, ',', controller);
}

/* Finds the path of controller's line ("/..." as the kernel wrote it). */
static int find_cgroup_line(const char *buf, size_t len, const char *controller, struct span *ret_path)
{
	struct span s = span_of(buf, len), line, id, controllers;

	if (controller && (!*controller || strpbrk(controller, ",:\n")))
		return -EINVAL;
	while (next_line(&s, &line)) {
		if (line.p == line.end)
			continue;
		/* The path is everything after the second ':' and may hold ':' itself. */
		if (!split_at(&line, ':', &id) || !split_at(&line, ':', &controllers) || !span_all_digits(id))
			return -EINVAL;
		if (!cgroup_line_matches(id, controllers, controller))
			continue;
		if (line.p == line.end || *line.p != '/')
			return -EINVAL;
		*ret_path = line;
		return 0;
	}
	return -ENOENT;
}

int oomkit__parse_proc_cgroup(const char *buf, size_t len, const char *controller, char *out, size_t out_len)
{
	struct span path;
	int r = find_cgroup_line(buf, len, controller, &path);

	if (r < 0)
		return r;
	/* Checked first: a path the kernel cut may end in anything. */
	if (span_len(path) >= OOMKIT__PROC_CGROUP_CUT)
		return -ENAMETOOLONG;
	/* ".." appears for a cgroup outside our cgroup namespace: not usable. */
	if (!path_is_canonical(path) || memchr(path.p, '\0', span_len(path)))
		return -EINVAL;
	path.p++;
	if (span_len(path) >= out_len || span_len(path) > INT_MAX)
		return -ENAMETOOLONG;
	memcpy(out, path.p, span_len(path));
	out[span_len(path)] = '\0';
	return (int)span_len(path);
}

int oomkit__parse_proc_cgroup_under(const char *buf, size_t len, const char *controller, const char *rel)
{
	struct span path;
	size_t n = rel ? strlen(rel) : 0;
	int r = find_cgroup_line(buf, len, controller, &path);

	if (r < 0)
		return r;
	if (!rel || n >= OOMKIT__PROC_CGROUP_CUT - 1)
		return -EINVAL;
	path.p++;
	/* Outside our cgroup namespace, so below none of the cgroups we name. */
	if (span_len(path) >= 2 && memcmp(path.p, "..", 2) == 0 && (span_len(path) == 2 || path.p[2] == '/'))
		return 0;
	if (n == 0)
		return 1;
	/* rel is shorter than any cut, so a cut path still shows whether it
	 * starts with rel and what follows it. */
	if (span_len(path) < n || memcmp(path.p, rel, n) != 0)
		return 0;
	return span_len(path) == n || path.p[n] == '/';
}

/* -------------------------------------------------------- cgroup.procs */

int oomkit__parse_pids_each(const char *buf, size_t len, int (*fn)(pid_t pid, void *userdata), void *userdata,
			    size_t *ret_count)
{
	struct span s = span_of(buf, len), line;
	size_t count = 0;
	pid_t pid;
	int r = 0;

	while (r == 0 && next_line(&s, &line)) {
		if (line.p == line.end)
			continue;
		if (span_to_pid(line, &pid) < 0) {
			r = -EINVAL;
			break;
		}
		count++;
		r = fn(pid, userdata);
	}
	*ret_count = count;
	return r;
}

struct pid_array {
	pid_t *pids;
	size_t n, count;
};

static int add_pid(pid_t pid, void *userdata)
{
	struct pid_array *a = userdata;
	if (a->count >= a->n || a->count >= INT_MAX)
		return -ENOBUFS;
	a->pids[a->count++] = pid;
	return 0;
}

int oomkit__parse_pids(const char *buf, size_t len, pid_t *pids, size_t n)
{
	struct pid_array a = {pids, n, 0};
	size_t lines;
	int r = oomkit__parse_pids_each(buf, len, add_pid, &a, &lines);
	return r < 0 ? r : (int)a.count;
}

/* ---------------------------------------------------- /proc/PID/cmdline */

void oomkit__format_cmdline(const char *buf, size_t len, char *out, size_t out_len)
{
	size_t o = 0;

	if (!out || out_len == 0)
		return;
	if (!buf)
		len = 0;
	/* Arguments end in NUL; a rewritten title may be padded with more. */
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len && o + 1 < out_len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\0')
			c = ' ';
		else if (c < 0x20 || c >= 0x7f)
			c = '?';
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

/* ------------------------------------------------------- cgroup paths */

/* Takes the next '/'-separated non-empty component of a C string off *p. */
static bool next_component(const char **p, struct span *comp)
{
	while (**p == '/')
		(*p)++;
	if (!**p)
		return false;
	comp->p = *p;
	while (**p && **p != '/')
		(*p)++;
	comp->end = *p;
	return true;
}

static bool comp_eq(struct span a, struct span b)
{
	return span_len(a) == span_len(b) && memcmp(a.p, b.p, span_len(a)) == 0;
}

/* Where the path relative to root starts in an absolute in.  An in that shares
 * root's first component but is not under root (a sibling mount such as
 * /sys/fs/cgroup/freezer/x for root /sys/fs/cgroup/memory) is outside root;
 * any other absolute in is taken relative to root ("/jobs/web"). */
static int strip_root(const char *in, const char *root, const char **ret_rest)
{
	const char *i = in, *r = root;
	struct span rc, ic;
	bool first = true;

	while (next_component(&r, &rc)) {
		if (!next_component(&i, &ic) || !comp_eq(rc, ic)) {
			if (!first)
				return -EINVAL;
			*ret_rest = in;
			return 0;
		}
		first = false;
	}
	*ret_rest = i;
	return 0;
}

int oomkit__cgroup_relpath(const char *in, const char *root, char *out, size_t out_len)
{
	const char *rest = in, *p;
	struct span c;
	size_t total = 0, o = 0;
	bool any = false;

	if (!in || !out)
		return -EINVAL;
	if (in[0] == '/' && root && root[0] && strip_root(in, root, &rest) < 0)
		return -EINVAL;
	/* First measure and check, so that out is written only on success. */
	for (p = rest; next_component(&p, &c); any = true) {
		if (span_eq(c, ".") || span_eq(c, ".."))
			return -EINVAL;
		total += span_len(c) + (any ? 1 : 0);
	}
	if (total >= out_len || total > INT_MAX)
		return -ENAMETOOLONG;
	/* Copy forwards: out may be the same buffer as in. */
	for (p = rest, any = false; next_component(&p, &c); any = true) {
		if (any)
			out[o++] = '/';
		for (const char *q = c.p; q < c.end; q++)
			out[o++] = *q;
	}
	out[o] = '\0';
	return (int)total;
}

/* ---------------------------------------------------- /proc/swaps, zram */

/* A size in KiB as /proc/swaps prints it, in bytes. */
static int span_kib_to_bytes(struct span s, uint64_t *ret)
{
	uint64_t v;
	int r;

	if (!span_all_digits(s))
		return -EINVAL;
	if ((r = span_to_u64(s, &v)) < 0)
		return r;
	if (v > UINT64_MAX / 1024)
		return -ERANGE;
	*ret = v * 1024;
	return 0;
}

/* The priority column: a signed int ("-2", "100"). */
static bool span_is_priority(struct span s)
{
	if (s.p < s.end && *s.p == '-')
		s.p++;
	return span_all_digits(s) && span_len(s) <= 11;
}

/* "/dev/zramN": the zram device's number, else -1.  The kernel escapes a
 * blank in the name as \040, so a name is one token. */
static int zram_index(struct span name)
{
	static const char prefix[] = "/dev/zram";
	struct span n = {name.p + sizeof(prefix) - 1, name.end};
	uint64_t v;

	if (span_len(name) <= sizeof(prefix) - 1 || memcmp(name.p, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	if (!span_all_digits(n) || span_len(n) > 6 || span_to_u64(n, &v) < 0)
		return -1;
	return (int)v;
}

static int parse_swap_line(struct span line, struct oomkit__swap_area *ret)
{
	struct span name, type, size, used, prio, extra;
	struct oomkit__swap_area a = {0};

	if (!next_token(&line, &name) || !next_token(&line, &type) || !next_token(&line, &size) ||
	    !next_token(&line, &used) || !next_token(&line, &prio) || next_token(&line, &extra))
		return -EINVAL;
	if (!span_eq(type, "file") && !span_eq(type, "partition"))
		return -EINVAL;
	if (span_kib_to_bytes(size, &a.size_bytes) < 0 || span_kib_to_bytes(used, &a.used_bytes) < 0 ||
	    !span_is_priority(prio) || a.used_bytes > a.size_bytes)
		return -EINVAL;
	a.zram = span_eq(type, "partition") ? zram_index(name) : -1;
	*ret = a;
	return 0;
}

int oomkit__parse_swaps(const char *buf, size_t len, struct oomkit__swap_area *areas, size_t n)
{
	struct span s = span_of(buf, len), line, tok;
	size_t count = 0;
	bool header = false;

	while (next_line(&s, &line)) {
		struct span rest = line;
		if (!next_token(&rest, &tok))
			continue;
		if (!header) {
			/* "Filename Type Size Used Priority" */
			if (!span_eq(tok, "Filename"))
				return -EINVAL;
			header = true;
			continue;
		}
		struct oomkit__swap_area a;
		if (parse_swap_line(line, &a) < 0)
			return -EINVAL;
		if (count < n)
			areas[count] = a;
		count++;
	}
	if (!header)
		return -EINVAL;
	if (count > n)
		return -ENOBUFS;
	return (int)count;
}

int oomkit__parse_zram_mm_stat(const char *buf, size_t len, struct oomkit__zram_mm_stat *ret)
{
	struct span s = span_of(buf, len), tok;
	uint64_t v[4];

	/* orig_data_size compr_data_size mem_used_total mem_limit, then more
	 * columns that newer kernels add. */
	for (size_t i = 0; i < 4; i++) {
		if (!next_token(&s, &tok) || !span_all_digits(tok) || span_to_u64(tok, &v[i]) < 0)
			return -EINVAL;
	}
	while (next_token(&s, &tok))
		if (!span_all_digits(tok))
			return -EINVAL;
	*ret = (struct oomkit__zram_mm_stat){
	    .orig_bytes = v[0], .compr_bytes = v[1], .used_bytes = v[2], .limit_bytes = v[3]};
	return 0;
}

uint64_t oomkit__zram_usable(uint64_t free_bytes, const struct oomkit__zram_mm_stat *st)
{
	/* The ratio of RAM used to data stored; before enough is stored to
	 * tell, one half (lzo and zstd do better on most memory). */
	unsigned __int128 used = 1, orig = 2;
	unsigned __int128 room = free_bytes;

	if (st && st->orig_bytes >= OOMKIT__ZRAM_RATIO_MIN_BYTES) {
		used = st->used_bytes;
		orig = st->orig_bytes;
	}
	if (used >= orig)
		return 0;
	/* A mem_limit caps the RAM it may use: what fits in the rest of it.
	 * Pages that are all one byte take no RAM at all: with only those
	 * stored so far (used 0) the limit says nothing yet. */
	if (st && st->limit_bytes) {
		if (st->used_bytes >= st->limit_bytes)
			return 0;
		if (used) {
			unsigned __int128 fits =
			    (unsigned __int128)(st->limit_bytes - st->used_bytes) * orig / used;
			if (fits < room)
				room = fits;
		}
	}
	/* Each page moved there frees a page of RAM and takes its compressed size. */
	return (uint64_t)(room * (orig - used) / orig);
}
