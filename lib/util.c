/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.c - the library's file I/O on cgroupfs and procfs, its clock, its log
 * callback and the names of its public enums.
 *
 * Reads go straight to openat/read/pread into caller buffers: no stdio, no
 * allocation, so the handler path can use them.  Writes to cgroupfs are one
 * write() per value, because a control file takes each write as one value.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* A cgroup removed between open() and read() or write() answers ENODEV
 * (kernfs has deactivated its files): the same "it is gone" as the ENOENT
 * an open() after the removal gets, and callers test for that one. */
static int gone_errno(int err)
{
	return err == ENODEV ? -ENOENT : -err;
}

/* Reads fd into buf (pread at offsets from 0 if positional, else read) until
 * end of file, then checks with one more byte that nothing was left out.
 * Positional reads are of cgroup control files, which the kernel writes out
 * whole in one show() call into a read with room for it: a pread that
 * leaves room in buf has read all there is, and a second call to see the
 * end would be one more system call on the handler path. */
static int read_all(int fd, bool positional, char *buf, size_t len)
{
	size_t n = 0, room;
	ssize_t k;
	char extra;

	if (!buf || len == 0)
		return -EINVAL;
	room = len - 1 < INT_MAX ? len - 1 : INT_MAX;
	for (;;) {
		char *dst = n < room ? buf + n : &extra;
		size_t want = n < room ? room - n : 1;

		k = positional ? pread(fd, dst, want, (off_t)n) : read(fd, dst, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return gone_errno(errno);
		if (k == 0)
			break;
		if (n >= room)
			return -EFBIG;
		n += (size_t)k;
		if (positional && n < room)
			break;
	}
	buf[n] = '\0';
	return (int)n;
}

int oomkit__read_file_at(int dirfd, const char *name, char *buf, size_t len)
{
	int fd, r;

	if (!buf || len == 0)
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_all(fd, false, buf, len);
	close(fd);
	return r;
}

int oomkit__pread_all(int fd, char *buf, size_t len)
{
	return read_all(fd, true, buf, len);
}

int oomkit__write_file_at(int dirfd, const char *name, const char *s)
{
	size_t len;
	ssize_t k;
	int fd, r = 0;

	if (!s)
		return -EINVAL;
	len = strlen(s);
	fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One call: cgroupfs parses each write() as a whole value, so a value
	 * must never be split, and a short write is an error, not a retry. */
	do
		k = write(fd, s, len);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		r = gone_errno(errno);
	else if ((size_t)k != len)
		r = -EIO;
	close(fd);
	return r;
}

int oomkit__append(char *out, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);
	if (*len + n >= size)
		return -ENAMETOOLONG;
	memcpy(out + *len, s, n + 1);
	*len += n;
	return 0;
}

int oomkit__append_u64(char *out, size_t size, size_t *len, uint64_t v)
{
	char digits[21];
	size_t i = sizeof(digits) - 1;
	digits[i] = 0;
	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	return oomkit__append(out, size, len, digits + i);
}

uint64_t oomkit__now_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int oomkit__ms_until(uint64_t end_ns)
{
	uint64_t now, left;

	if (end_ns == UINT64_MAX)
		return -1;
	now = oomkit__now_ns();
	if (now >= end_ns)
		return 0;
	left = (end_ns - now + 999999u) / 1000000u;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

void oomkit__log(const oomkit_ctx *ctx, enum oomkit_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	/* Check first: formatting costs time on the handler path for nobody. */
	if (!ctx || !ctx->log)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* The callback's contract is one message without a trailing newline. */
	for (size_t len = strlen(msg); len > 0 && msg[len - 1] == '\n'; len--)
		msg[len - 1] = '\0';
	ctx->log(level, msg, ctx->log_userdata);
}

OOMKIT__EXPORT const char *oomkit_event_kind_name(enum oomkit_event_kind kind)
{
	switch (kind) {
	case OOMKIT_EVENT_OOM:
		return "oom";
	case OOMKIT_EVENT_THRESHOLD:
		return "threshold";
	case OOMKIT_EVENT_PRESSURE:
		return "pressure";
	case OOMKIT_EVENT_GONE:
		return "gone";
	}
	return "unknown";
}

OOMKIT__EXPORT const char *oomkit_verdict_name(enum oomkit_verdict verdict)
{
	switch (verdict) {
	case OOMKIT_RESOLVED:
		return "resolved";
	case OOMKIT_KERNEL:
		return "kernel";
	case OOMKIT_WAIT:
		return "wait";
	}
	return "unknown";
}

OOMKIT__EXPORT const char *oomkit_oom_cause_name(enum oomkit_oom_cause cause)
{
	switch (cause) {
	case OOMKIT_OOM_CAUSE_NONE:
		return "none";
	case OOMKIT_OOM_CAUSE_NO_SWAP:
		return "no-swap";
	case OOMKIT_OOM_CAUSE_SWAP_MAX:
		return "swap-max";
	case OOMKIT_OOM_CAUSE_SWAP_FULL:
		return "swap-full";
	case OOMKIT_OOM_CAUSE_STALLED:
		return "stalled";
	case OOMKIT_OOM_CAUSE_LIMIT:
		return "limit";
	}
	return "unknown";
}

OOMKIT__EXPORT const char *oomkit_pressure_level_name(enum oomkit_pressure_level level)
{
	switch (level) {
	case OOMKIT_PRESSURE_LOW:
		return "low";
	case OOMKIT_PRESSURE_MEDIUM:
		return "medium";
	case OOMKIT_PRESSURE_CRITICAL:
		return "critical";
	}
	return "unknown";
}
