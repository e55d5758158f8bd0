/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes /proc/PID/cgroup parsing.  Byte 0 picks the controller, byte 1 the
 * output size; the rest is the file.  Whether the process lies below a
 * cgroup must agree with the path the parser returns.
 */
#include "fuzz.h"

static const char *const controllers[] = {NULL, "memory", "freezer", "cpu", "name=systemd", ""};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[256 + 32];
	const char *controller;
	size_t out_len;
	int r;

	if (size < 2)
		return 0;
	controller = controllers[data[0] % (sizeof(controllers) / sizeof(controllers[0]))];
	out_len = data[1];
	memset(out, 0xa5, sizeof(out));
	r = oomkit__parse_proc_cgroup((const char *)data + 2, size - 2, controller, out, out_len);
	FUZZ_CHECK(r >= 0 || r == -ENOENT || r == -EINVAL || r == -ENAMETOOLONG);
	/* The head of a path: whole components, never past out_len, the whole
	 * path itself when it was neither cut nor too long. */
	char head[256 + 32];
	bool cut = false;
	int h = out_len >= 2 ? oomkit__parse_proc_cgroup_head((const char *)data + 2, size - 2, controller,
							      head, out_len, &cut)
			     : -EINVAL;
	FUZZ_CHECK(h >= 0 || h == -ENOENT || h == -EINVAL);
	if (h >= 0)
		FUZZ_CHECK((size_t)h < out_len && head[h] == '\0' && strlen(head) == (size_t)h);
	if (h >= 0 && r >= 0 && !cut)
		FUZZ_CHECK(strcmp(head, out) == 0);
	if (h >= 0 && r >= 0 && cut)
		FUZZ_CHECK(strncmp(head, out, (size_t)h) == 0 && (out[h] == '/' || h == 0));
	int under = oomkit__parse_proc_cgroup_under((const char *)data + 2, size - 2, controller, "a");
	FUZZ_CHECK(under == 0 || under == 1 || under == -ENOENT || under == -EINVAL);
	if (r >= 0) {
		FUZZ_CHECK(
		    oomkit__parse_proc_cgroup_under((const char *)data + 2, size - 2, controller, out) == 1);
		FUZZ_CHECK(
		    oomkit__parse_proc_cgroup_under((const char *)data + 2, size - 2, controller, "") == 1);
		FUZZ_CHECK(under == (strcmp(out, "a") == 0 || strncmp(out, "a/", 2) == 0));
	}
	if (r < 0) {
		FUZZ_CHECK(fuzz_all(out, 0xa5, sizeof(out)));
		return 0;
	}
	FUZZ_CHECK((size_t)r < out_len);
	FUZZ_CHECK(out[r] == '\0' && strlen(out) == (size_t)r);
	FUZZ_CHECK(fuzz_all(out + out_len, 0xa5, sizeof(out) - out_len));
	/* Relative and canonical: "//x" must not come out as the absolute "/x". */
	FUZZ_CHECK(out[0] != '/' && !strstr(out, "//") && (r == 0 || out[r - 1] != '/'));
	/* No way out of the hierarchy. */
	FUZZ_CHECK(strcmp(out, "..") != 0 && strncmp(out, "../", 3) != 0 && !strstr(out, "/../"));
	FUZZ_CHECK(r < 3 || strcmp(out + r - 3, "/..") != 0);
	return 0;
}
