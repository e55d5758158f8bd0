/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * oomkit-bench: runs one benchmark and prints its raw samples for
 * bench/run.sh, one per line: "S BENCH SERIES VALUE", notes "N TEXT" and
 * failures to measure "F TEXT".
 *
 *   oomkit-bench notify|resolve|idle|storm|machine|daemon|rules|churn [--NAME=VALUE]...
 *
 * Run it as root; every memcg it makes lies under $OOMKIT_BENCH_PARENT/BENCH
 * (or oomkit-bench-PID/BENCH) and is removed at exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

unsigned bench_opt(int argc, char **argv, const char *name, unsigned fallback)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, n) == 0 &&
		    argv[i][2 + n] == '=')
			return (unsigned)strtoul(argv[i] + 3 + n, NULL, 10);
	return fallback;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} benches[] = {
	    {"notify", bench_notify}, {"resolve", bench_resolve}, {"idle", bench_idle},
	    {"storm", bench_storm},   {"machine", bench_machine}, {"daemon", bench_daemon},
	    {"rules", bench_rules},   {"churn", bench_churn},
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof(benches) / sizeof(benches[0]); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			return benches[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "usage: %s notify|resolve|idle|storm|machine|daemon|rules|churn [--NAME=VALUE]...\n",
		argv[0]);
	return 2;
}
