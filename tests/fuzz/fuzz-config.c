/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes oomkitd's configuration parser on arbitrary text.  Either it accepts
 * the text and every value is within its documented range, every path in its
 * normal form and the machine resolves below the mount or is refused, or it
 * rejects it with a non-empty, terminated error text whose every line names
 * the file.
 */
#include "fuzz.h"

#include <signal.h>

#include "config/config.h"

#define SOURCE "fuzz.conf"
#define MEMORY_ROOT "/sys/fs/cgroup/memory"

/* Absolute, no empty, "." or ".." component, no trailing slash but "/". */
static bool normal_path(const char *p)
{
	size_t len = strlen(p);

	if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../"))
		return false;
	if (len > 1 && p[len - 1] == '/')
		return false;
	if ((len >= 2 && strcmp(p + len - 2, "/.") == 0) || (len >= 3 && strcmp(p + len - 3, "/..") == 0))
		return false;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

static bool errors_well_formed(const char *errors)
{
	for (const char *line = errors; *line;) {
		const char *nl = strchr(line, '\n');
		if (!nl || strncmp(line, SOURCE, strlen(SOURCE)) != 0)
			return false;
		line = nl + 1;
	}
	return true;
}

static bool limit_ok(uint64_t bytes, uint64_t min)
{
	return bytes == UINT64_MAX || bytes >= min;
}

static void check_job(const struct config_job *job)
{
	FUZZ_CHECK(FUZZ_TERMINATED(job->name));
	FUZZ_CHECK(strcmp(job->name, "machine") != 0);
	FUZZ_CHECK(job->priority <= 1000);
	FUZZ_CHECK(job->chain.n_steps <= POLICY_MAX_CHAIN);
	FUZZ_CHECK(job->n_rules <= CONFIG_MAX_RULES);
	FUZZ_CHECK(limit_ok(job->limit_bytes, 1 << 20));
	FUZZ_CHECK(limit_ok(job->limit_max_bytes, 1 << 20));
	FUZZ_CHECK(job->limit_bytes <= job->limit_max_bytes);
}

/* A job's patterns are its own, valid, each written once in all jobs, and
 * each matches a cgroup its stars are filled in for. */
static void check_cgroups(const struct config *cfg, unsigned job)
{
	const struct config_job *j = &cfg->jobs[job];
	char why[PATTERN_MAX + 128], sample[PATTERN_MAX];

	FUZZ_CHECK(j->n_cgroups <= CONFIG_MAX_CGROUPS);
	FUZZ_CHECK(j->n_cgroups == 0 || (j->cgroups >= cfg->cgroups &&
					 j->cgroups + j->n_cgroups <= cfg->cgroups + cfg->n_cgroups));
	for (unsigned i = 0; i < j->n_cgroups; i++) {
		const struct config_cgroup *c = &j->cgroups[i];
		FUZZ_CHECK(c->job == job && FUZZ_TERMINATED(c->pattern));
		FUZZ_CHECK(pattern_check(c->pattern, why, sizeof(why)) == 0);
		for (unsigned k = 0; k < cfg->n_cgroups; k++)
			FUZZ_CHECK(&cfg->cgroups[k] == c || strcmp(cfg->cgroups[k].pattern, c->pattern) != 0);
		snprintf(sample, sizeof(sample), "%s", c->pattern);
		for (char *p = sample; *p; p++)
			if (*p == '*')
				*p = 'x';
		FUZZ_CHECK(pattern_match(c->pattern, sample));
	}
}

/* A job's rules are its own and each reads back as itself. */
static void check_rules(const struct config *cfg, unsigned job)
{
	const struct config_job *j = &cfg->jobs[job];
	char text[MATCH_TEXT_MAX + 16], why[MATCH_TEXT_MAX + 256];
	struct match_expr again;

	FUZZ_CHECK(j->n_rules <= CONFIG_MAX_RULES);
	FUZZ_CHECK(j->n_rules == 0 ||
		   (j->rules >= cfg->rules && j->rules + j->n_rules <= cfg->rules + cfg->n_rules));
	for (unsigned i = 0; i < j->n_rules; i++) {
		FUZZ_CHECK(j->rules[i].job == job && j->rules[i].list <= RULE_AVOID);
		match_format(&j->rules[i].expr, text, sizeof(text));
		FUZZ_CHECK(match_parse(text, &again, why, sizeof(why)) == 0);
	}
}

/* A job's kill and shed settings fit together and inside the delay. */
static void check_kill(const struct config *cfg, const struct config_job *j)
{
	char why[VALUE_COMMAND_MAX + 128];

	FUZZ_CHECK(j->kill_signal > 0 && j->kill_signal != SIGSTOP && j->kill_signal != SIGCONT);
	FUZZ_CHECK((j->kill_signal != SIGKILL) == (j->kill_grace_ms > 0));
	FUZZ_CHECK(j->shed_signal != SIGKILL && j->shed_signal != SIGSTOP);
	FUZZ_CHECK(j->kill_grace_ms + j->shed_wait_ms < cfg->delay_ms);
	for (int h = 0; h < HOOK__COUNT; h++)
		FUZZ_CHECK(!j->hooks[h] || value_parse_command(j->hooks[h], why, sizeof(why)) > 0);
}

static void check_accepted(struct config *cfg)
{
	static char errors[CONFIG_ERRORS_MAX];

	FUZZ_CHECK(cfg->n_jobs <= CONFIG_MAX_JOBS);
	FUZZ_CHECK(cfg->chain.n_steps <= POLICY_MAX_CHAIN);
	FUZZ_CHECK(limit_ok(cfg->machine_limit_bytes, 16 << 20));
	FUZZ_CHECK(cfg->delay_ms >= 10 && cfg->delay_ms <= 600000);
	FUZZ_CHECK(normal_path(cfg->machine) && strcmp(cfg->machine, "/") != 0);
	FUZZ_CHECK(normal_path(cfg->report_dir) && normal_path(cfg->socket));
	FUZZ_CHECK(cfg->metrics[0] == '\0' || normal_path(cfg->metrics));
	/* The machine's rules ([oomkitd]'s protect, prefer, avoid) are in
	 * cfg->rules too, beside every job's. */
	unsigned n_cgroups = 0, n_rules = cfg->n_machine_rules;
	FUZZ_CHECK(cfg->n_machine_rules <= CONFIG_MAX_RULES);
	FUZZ_CHECK(cfg->n_machine_rules == 0 ||
		   (cfg->machine_rules >= cfg->rules &&
		    cfg->machine_rules + cfg->n_machine_rules <= cfg->rules + cfg->n_rules));
	for (unsigned i = 0; i < cfg->n_jobs; i++) {
		check_job(&cfg->jobs[i]);
		check_cgroups(cfg, i);
		check_rules(cfg, i);
		check_kill(cfg, &cfg->jobs[i]);
		n_cgroups += cfg->jobs[i].n_cgroups;
		n_rules += cfg->jobs[i].n_rules;
	}
	FUZZ_CHECK(n_cgroups == cfg->n_cgroups && n_rules == cfg->n_rules);

	/* Resolved against a mount, the machine is strictly below it. */
	struct config_mount mount = {.root = MEMORY_ROOT};
	int r = config_resolve_machine(cfg, &mount, errors, sizeof(errors));
	if (r == 0) {
		FUZZ_CHECK(strncmp(cfg->machine, MEMORY_ROOT "/", strlen(MEMORY_ROOT) + 1) == 0);
		FUZZ_CHECK(cfg->machine_rel[0] != '\0' && cfg->machine_rel[0] != '/');
		FUZZ_CHECK(strcmp(cfg->machine + strlen(MEMORY_ROOT) + 1, cfg->machine_rel) == 0);
	} else {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(errors[0] != '\0' && errors_well_formed(errors));
	}
}

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

	r = config_parse_string(text, SOURCE, &cfg, errors, sizeof(errors));
	free(text);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
		FUZZ_CHECK(memchr(errors, '\0', sizeof(errors)) != NULL);
		FUZZ_CHECK(r == -ENOMEM || errors[0] != '\0');
		/* A full buffer cuts the last line; every complete one names the file. */
		if (strlen(errors) < sizeof(errors) - 1)
			FUZZ_CHECK(r == -ENOMEM || errors_well_formed(errors));
		return 0;
	}
	FUZZ_CHECK(r == 0);
	check_accepted(&cfg);
	config_free(&cfg);
	return 0;
}
