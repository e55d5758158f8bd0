/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes oomkitd's configuration parser on arbitrary text.  Either it accepts
 * the text and every number is within its documented range, or it rejects it
 * with a non-empty, terminated error text.
 */
#include "fuzz.h"

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char errors[CONFIG_ERRORS_MAX];
	struct config cfg;
	char *text;
	int r;

	if (size > 1 << 16)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(errors, 0, sizeof(errors));

	r = config_parse_string(text, "fuzz.conf", &cfg, errors, sizeof(errors));
	free(text);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
		FUZZ_CHECK(memchr(errors, '\0', sizeof(errors)) != NULL);
		FUZZ_CHECK(r == -ENOMEM || errors[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(r == 0);
	FUZZ_CHECK(cfg.n_jobs <= CONFIG_MAX_JOBS);
	FUZZ_CHECK(cfg.chain.n_steps <= POLICY_MAX_CHAIN);
	for (unsigned i = 0; i < cfg.n_jobs; i++) {
		const struct config_job *job = &cfg.jobs[i];

		FUZZ_CHECK(FUZZ_TERMINATED(job->name));
		FUZZ_CHECK(job->priority <= 1000);
		FUZZ_CHECK(job->chain.n_steps <= POLICY_MAX_CHAIN);
		FUZZ_CHECK(job->n_protect <= CONFIG_MAX_PROTECT);
		if (job->limit_bytes != UINT64_MAX && job->limit_max_bytes != UINT64_MAX)
			FUZZ_CHECK(job->limit_bytes <= job->limit_max_bytes);
	}
	config_free(&cfg);
	return 0;
}
