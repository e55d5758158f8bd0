/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay.c - a main() for the fuzz targets without libFuzzer: runs the
 * target once on every file of the corpus directories given, so the seeds and
 * every crash kept as a regression case run in the unit suite with any compiler.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;
	size_t n;

	if (!f || fstat(fileno(f), &st) < 0) {
		perror(path);
		return -1;
	}
	/* Exactly the file's size, so that AddressSanitizer sees an over-read. */
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int total = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char path[4096];

		if (!d) {
			perror(argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay_file(path) < 0) {
				closedir(d);
				return 1;
			}
			total++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", total);
	/* An empty corpus would make this test unable to fail. */
	return total > 0 ? 0 : 1;
}
