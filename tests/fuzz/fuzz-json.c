/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the JSON writer and the text escaper (lib/json.c) with every byte
 * value: the input, as a key and as string values inside nested objects and
 * arrays, written through a buffer of a size the input picks (so values are
 * cut across flushes) to a memfd and into a buffer alone, must be valid JSON
 * (checked by tests/helpers/jsoncheck.h, written independently) and decode
 * back to the input's bytes; the escaped text must hold no control byte, no
 * tab or newline and no invalid UTF-8, must unescape to the input, and a cut
 * escape must be a prefix of the whole one.
 */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "../helpers/jsoncheck.h"
#include "json.h"

static int hexval(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes the JSON string at *p (after its opening quote) as the writer
 * means it: \u00XX is the byte XX, a \uXXXX past U+00FF that code point in
 * UTF-8.  Returns the decoded length. */
static size_t decode(const char **p, char *out)
{
	const char *s = *p;
	size_t n = 0;

	while (*s != '"') {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s++) {
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 'u': {
			unsigned cp = 0;
			for (int i = 0; i < 4; i++) {
				FUZZ_CHECK(hexval((unsigned char)s[i]) >= 0);
				cp = cp << 4 | (unsigned)hexval((unsigned char)s[i]);
			}
			s += 4;
			if (cp <= 0xff) {
				out[n++] = (char)cp;
				break;
			}
			/* Past U+00FF: a deceptive code point (an override, a
			 * separator, the BOM), valid UTF-8 of three bytes. */
			FUZZ_CHECK(cp >= 0x200e && cp <= 0xfeff);
			out[n++] = (char)(0xe0 | cp >> 12);
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
			break;
		}
		default:
			out[n++] = s[-1]; /* \" and \\ */
		}
	}
	*p = s + 1;
	return n;
}

static void write_doc(struct oomkit__json *w, const char *data, size_t size)
{
	oomkit__json_open(w, NULL, '{');
	oomkit__json_strn(w, "v", data, size);
	oomkit__json_open(w, "nested", '[');
	oomkit__json_open(w, NULL, '{');
	oomkit__json_str(w, "k", "x");
	oomkit__json_u64(w, "n", size);
	oomkit__json_close(w, '}');
	oomkit__json_strn(w, NULL, data, size);
	oomkit__json_close(w, ']');
	oomkit__json_limit(w, "none", UINT64_MAX);
	oomkit__json_fixed(w, "ms", size * 1001u, 3);
	oomkit__json_close(w, '}');
	oomkit__json_newline(w);
}

/* The document must be valid, and both copies of the value the input. */
static void check_doc(const char *doc, size_t len, const char *data, size_t size, char *dec)
{
	FUZZ_CHECK(json_valid(doc, len));
	const char *p = doc + strlen("{\"v\":\"");
	FUZZ_CHECK(decode(&p, dec) == size && memcmp(dec, data, size) == 0);
	p = memmem(p, (size_t)(doc + len - p), "},\"", 3);
	FUZZ_CHECK(p);
	p += 3;
	FUZZ_CHECK(decode(&p, dec) == size && memcmp(dec, data, size) == 0);
}

static void fuzz_writer(const char *data, size_t size)
{
	size_t cap = 12 * size + 256, small = 1 + (size ? (unsigned char)data[0] % 97 : 0);
	char *doc = malloc(cap), *dec = malloc(size + 1), *buf = malloc(small);
	struct oomkit__json w;

	/* Into a buffer alone. */
	oomkit__json_init(&w, -1, doc, cap);
	write_doc(&w, data, size);
	int n = oomkit__json_end(&w);
	FUZZ_CHECK(n > 0);
	check_doc(doc, (size_t)n, data, size, dec);

	/* Through a small buffer to a file: the same bytes. */
	int fd = memfd_create("fuzz-json", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	oomkit__json_init(&w, fd, buf, small);
	write_doc(&w, data, size);
	FUZZ_CHECK(oomkit__json_end(&w) == n);
	char *file = malloc((size_t)n);
	FUZZ_CHECK(pread(fd, file, (size_t)n, 0) == n && memcmp(file, doc, (size_t)n) == 0);
	close(fd);

	/* A buffer too small and no fd: an error, never an overflow. */
	oomkit__json_init(&w, -1, buf, small);
	write_doc(&w, data, size);
	FUZZ_CHECK(oomkit__json_end(&w) == -EMSGSIZE || (size_t)n <= small);
	free(file);
	free(doc);
	free(dec);
	free(buf);
}

static void check_text(const char *t, size_t len)
{
	const unsigned char *s = (const unsigned char *)t;

	for (size_t i = 0; i < len;) {
		FUZZ_CHECK(s[i] >= 0x20 && s[i] != 0x7f);
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = oomkit__utf8_len(s + i, len - i);
		FUZZ_CHECK(k > 0);
		FUZZ_CHECK(!(s[i] == 0xc2 && s[i + 1] < 0xa0)); /* no C1 control */
		i += k;
	}
}

static void fuzz_escape(const char *data, size_t size)
{
	size_t cap = 4 * size + 1;
	char *esc = malloc(cap), *back = malloc(size + 1), *cut = malloc(cap);

	size_t n = oomkit__escape_text(esc, cap, data, size);
	FUZZ_CHECK(n < cap && esc[n] == '\0' && strlen(esc) == n);
	check_text(esc, n);
	FUZZ_CHECK(oomkit__unescape_text(back, size + 1, esc, n) == (int)size);
	FUZZ_CHECK(memcmp(back, data, size) == 0);
	for (size_t len = 0; len <= n && len < 40; len++) {
		FUZZ_CHECK(oomkit__escape_text(cut, len, data, size) == n);
		if (len > 0)
			FUZZ_CHECK(strlen(cut) < len && memcmp(cut, esc, strlen(cut)) == 0);
	}
	/* Whatever text comes back is refused or decoded within bounds. */
	int r = oomkit__unescape_text(back, size + 1, data, size);
	FUZZ_CHECK(r == -EINVAL || (r >= 0 && (size_t)r <= size));
	free(esc);
	free(back);
	free(cut);
}

/* The notification body's form: the text escaper's guarantees, and no byte
 * a markup parser reads but & starting one of the five entities. */
static void fuzz_markup(const char *data, size_t size)
{
	size_t cap = 6 * size + 1;
	char *esc = malloc(cap);

	size_t n = oomkit__escape_markup(esc, cap, data, size);
	FUZZ_CHECK(n < cap && esc[n] == '\0' && strlen(esc) == n);
	check_text(esc, n);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(esc[i] != '<' && esc[i] != '>' && esc[i] != '"' && esc[i] != '\'');
		if (esc[i] == '&')
			FUZZ_CHECK(!strncmp(esc + i, "&amp;", 5) || !strncmp(esc + i, "&lt;", 4) ||
				   !strncmp(esc + i, "&gt;", 4) || !strncmp(esc + i, "&quot;", 6) ||
				   !strncmp(esc + i, "&apos;", 6));
	}
	free(esc);
}

/* What the text escaper writes passes its check; what the check passes
 * unescapes and escapes back to itself. */
static void fuzz_check(const char *data, size_t size)
{
	size_t cap = 4 * size + 1;
	char *esc = malloc(cap), *back = malloc(size + 1);

	size_t n = oomkit__escape_text(esc, cap, data, size);
	FUZZ_CHECK(oomkit__text_check(esc, n) == 0);
	if (oomkit__text_check(data, size) == 0) {
		int k = oomkit__unescape_text(back, size + 1, data, size);
		FUZZ_CHECK(k >= 0);
		char *again = malloc(4 * (size_t)k + 1);
		FUZZ_CHECK(oomkit__escape_text(again, 4 * (size_t)k + 1, back, (size_t)k) == size &&
			   memcmp(again, data, size) == 0);
		free(again);
	}
	free(esc);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	fuzz_writer((const char *)data, size);
	fuzz_escape((const char *)data, size);
	fuzz_markup((const char *)data, size);
	fuzz_check((const char *)data, size);
	return 0;
}
