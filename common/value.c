/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * value.c - sizes and durations as the configuration writes them.  Numbers
 * are read digit by digit, so a sign, spaces, hexadecimal or an overflow is
 * an error rather than whatever strtoull would make of it.
 */
#include "common/value.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static int parse_digits(const char *s, uint64_t *ret, const char **end)
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

int value_parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	const char *end;
	int r = parse_digits(s, &v, &end);

	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int value_parse_size(const char *s, bool allow_max, uint64_t *ret_bytes)
{
	static const char suffixes[] = "KMGT";
	uint64_t v, mult = 1;
	const char *end;
	int r;

	if (allow_max && (strcmp(s, "max") == 0 || strcmp(s, "none") == 0)) {
		*ret_bytes = UINT64_MAX;
		return 0;
	}
	r = parse_digits(s, &v, &end);
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

bool value_is_percent(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && s[n - 1] == '%';
}

int value_parse_percent(const char *s, unsigned *ret_hundredths)
{
	uint64_t whole, frac = 0;
	const char *end;
	int r = parse_digits(s, &whole, &end);

	if (r < 0)
		return r;
	if (*end == '.') {
		const char *f = end + 1;
		if (parse_digits(f, &frac, &end) < 0 || end - f > 2)
			return -EINVAL;
		if (end - f == 1)
			frac *= 10;
	}
	if (strcmp(end, "%") != 0)
		return -EINVAL;
	if (whole > 100 || (whole == 0 && frac == 0) || (whole == 100 && frac > 0))
		return -ERANGE;
	*ret_hundredths = (unsigned)(whole * 100 + frac);
	return 0;
}

uint64_t value_percent_of(uint64_t total_bytes, unsigned hundredths)
{
	/* In two parts, so that no total overflows. */
	uint64_t v = total_bytes / 10000 * hundredths + total_bytes % 10000 * hundredths / 10000;

	return v / 4096 * 4096;
}

int value_parse_duration(const char *s, uint64_t *ret_ms)
{
	uint64_t v;
	const char *end;
	int r = parse_digits(s, &v, &end);

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

void value_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffixes[] = "KMGT";
	int i = -1;

	if (bytes == UINT64_MAX) {
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

void value_format_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms == 0)
		snprintf(buf, len, "0");
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
}

void value_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes == UINT64_MAX)
		snprintf(buf, len, "unlimited");
	else if (bytes >= (10ull << 20))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
}

void value_format_elapsed(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (s < 10)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " s", s, ms % 1000 / 100);
	else if (s < 60)
		snprintf(buf, len, "%" PRIu64 " s", s);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRIu64 " h %" PRIu64 " min", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%" PRIu64 " day%s %" PRIu64 " h", s / 86400, s < 2 * 86400 ? "" : "s",
			 s % 86400 / 3600);
}

/* Normalises an absolute path into out: repeated slashes collapse and a
 * trailing one goes, so that a path has one spelling, the one every check and
 * every message uses.  Refuses what names another place than it seems to: a
 * relative path, "." and ".." components, control characters.  0, -EINVAL or
 * -ENAMETOOLONG, with the reason in why. */
int value_normalize_path(const char *in, char *out, size_t len, char *why, size_t why_len)
{
	size_t o = 0;

	if (in[0] != '/') {
		snprintf(why, why_len, "'%s' is not an absolute path", in);
		return -EINVAL;
	}
	for (const char *p = in; *p;) {
		size_t n;
		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			snprintf(why, why_len, "'%s' has a '%.*s' component", in, (int)n, p);
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
				snprintf(why, why_len, "the path has a control character (byte 0x%02x)",
					 (unsigned char)p[i]);
				return -EINVAL;
			}
		if (o + 1 + n >= len) {
			snprintf(why, why_len, "path too long (at most %zu characters)", len - 1);
			return -ENAMETOOLONG;
		}
		out[o++] = '/';
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static const struct {
	const char *name;
	int sig;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},	    {"QUIT", SIGQUIT}, {"ILL", SIGILL},	  {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT}, {"BUS", SIGBUS},	    {"FPE", SIGFPE},   {"KILL", SIGKILL}, {"USR1", SIGUSR1},
    {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},   {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD}, {"CONT", SIGCONT},   {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU}, {"URG", SIGURG},	    {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM},
    {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},	  {"SYS", SIGSYS},
};

int value_parse_signal(const char *s, int *ret_sig)
{
	const char *name = strncmp(s, "SIG", 3) == 0 ? s + 3 : s;
	uint64_t n;

	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (strcmp(name, signals[i].name) == 0) {
			*ret_sig = signals[i].sig;
			return 0;
		}
	/* RTMIN+N and RTMAX-N, as kill(1) writes them. */
	if (strncmp(name, "RTMIN", 5) == 0 || strncmp(name, "RTMAX", 5) == 0) {
		bool min = name[4] == 'N';
		int base = min ? SIGRTMIN : SIGRTMAX;
		if (name[5] == '\0')
			n = 0;
		else if (name[5] != (min ? '+' : '-') || value_parse_uint(name + 6, 64, &n) < 0)
			return -EINVAL;
		int sig = min ? base + (int)n : base - (int)n;
		if (sig < SIGRTMIN || sig > SIGRTMAX)
			return -ERANGE;
		*ret_sig = sig;
		return 0;
	}
	return -EINVAL;
}

void value_format_signal(int sig, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i].sig == sig) {
			snprintf(buf, len, "SIG%s", signals[i].name);
			return;
		}
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, sig == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "%d", sig);
}

/* One word of a command: up to the next unquoted blank; "..." groups, with
 * \" and \\ inside.  Writes the word to out (len bytes) and returns where
 * the rest starts, or NULL with the reason in why. */
static const char *command_word(const char *s, char *out, size_t len, char *why, size_t why_len)
{
	size_t o = 0;
	bool quoted = false;

	for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
		char c = *s;
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (quoted && c == '\\' && (s[1] == '"' || s[1] == '\\'))
			c = *++s;
		if (o + 1 >= len) {
			snprintf(why, why_len, "a word of the command is too long");
			return NULL;
		}
		out[o++] = c;
	}
	if (quoted) {
		snprintf(why, why_len, "a '\"' is not closed");
		return NULL;
	}
	out[o] = '\0';
	return s;
}

int value_parse_command(const char *s, char *why, size_t why_len)
{
	char word[VALUE_COMMAND_MAX], path[VALUE_COMMAND_MAX];
	int argc = 0;

	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			if (*c == '\t')
				continue;
			snprintf(why, why_len, "the command has a control character");
			return -EINVAL;
		}
	if (strlen(s) >= VALUE_COMMAND_MAX) {
		snprintf(why, why_len, "command too long (at most %d characters)", VALUE_COMMAND_MAX - 1);
		return -EINVAL;
	}
	while (*(s += strspn(s, " \t"))) {
		if (!(s = command_word(s, word, sizeof(word), why, why_len)))
			return -EINVAL;
		/* The program is run as named, never looked up in $PATH. */
		if (argc == 0 && value_normalize_path(word, path, sizeof(path), why, why_len) < 0)
			return -EINVAL;
		if (argc == 0 && (strcmp(path, word) != 0 || strcmp(path, "/") == 0)) {
			snprintf(why, why_len, "the program '%s' is not an absolute path in normal form",
				 word);
			return -EINVAL;
		}
		if (++argc > VALUE_COMMAND_ARGS) {
			snprintf(why, why_len, "more than %d words", VALUE_COMMAND_ARGS);
			return -EINVAL;
		}
	}
	if (argc == 0) {
		snprintf(why, why_len, "an empty command");
		return -EINVAL;
	}
	return argc;
}

int value_split_command(const char *s, char *buf, size_t len, char **argv, size_t max_argv)
{
	char why[64];
	size_t off = 0, argc = 0;

	while (*(s += strspn(s, " \t"))) {
		if (argc + 1 >= max_argv || off >= len)
			return -E2BIG;
		if (!(s = command_word(s, buf + off, len - off, why, sizeof(why))))
			return -EINVAL;
		argv[argc++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	argv[argc] = NULL;
	return argc ? (int)argc : -EINVAL;
}
