/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * meminfo.c - /proc/meminfo: what the whole machine has, for handlers that
 * grow a limit only when the machine has room, and the swap it has left,
 * for cgroup v2's swap rule (cgroup-v2.c).
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* Finds "Key:   123 kB" and returns the value in bytes; -ENOENT if absent. */
static int meminfo_value(const char *buf, size_t len, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i + klen < len;) {
		const char *line = buf + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;
		if (llen > klen && memcmp(line, key, klen) == 0 && line[klen] == ':') {
			uint64_t v = 0;
			size_t j = klen + 1;
			while (j < llen && line[j] == ' ')
				j++;
			if (j == llen || line[j] < '0' || line[j] > '9')
				return -EINVAL;
			for (; j < llen && line[j] >= '0' && line[j] <= '9'; j++) {
				if (v > (UINT64_MAX - 9) / 10)
					return -ERANGE;
				v = v * 10 + (uint64_t)(line[j] - '0');
			}
			if (v > UINT64_MAX / 1024)
				return -ERANGE;
			*ret = v * 1024;
			return 0;
		}
		i += llen + 1;
	}
	return -ENOENT;
}

OOMKIT__EXPORT int oomkit_system_memory(oomkit_ctx *ctx, struct oomkit_system_memory *ret_mem)
{
	struct oomkit_system_memory m = {0};
	int n = oomkit__read_file_at(ctx->proc_fd, "meminfo", ctx->iobuf2, OOMKIT__IOBUF_SIZE);
	if (n < 0)
		return n;
	size_t len = (size_t)n;
	int r;
	if ((r = meminfo_value(ctx->iobuf2, len, "MemTotal", &m.total_bytes)) < 0 ||
	    (r = meminfo_value(ctx->iobuf2, len, "MemFree", &m.free_bytes)) < 0 ||
	    (r = meminfo_value(ctx->iobuf2, len, "MemAvailable", &m.available_bytes)) < 0)
		return r;
	/* A kernel without swap support has no Swap lines: no swap. */
	(void)meminfo_value(ctx->iobuf2, len, "SwapTotal", &m.swap_total_bytes);
	(void)meminfo_value(ctx->iobuf2, len, "SwapFree", &m.swap_free_bytes);
	*ret_mem = m;
	return 0;
}

int oomkit__swap_space(int fd, uint64_t *ret_total, uint64_t *ret_free)
{
	/* /proc/meminfo is about 1.5 KiB on 6.x kernels. */
	char buf[4096];
	uint64_t total = 0, free_bytes = 0;
	int n = oomkit__pread_all(fd, buf, sizeof(buf));

	if (n < 0)
		return n;
	(void)meminfo_value(buf, (size_t)n, "SwapTotal", &total);
	(void)meminfo_value(buf, (size_t)n, "SwapFree", &free_bytes);
	*ret_total = total;
	*ret_free = free_bytes > total ? total : free_bytes;
	return 0;
}
