/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* oomkitd.c - see oomkitd.h. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "benchlib.h"
#include "oomkitd.h"

const char *bench_daemon_delay = "2s";

static int write_config(const struct bench_daemon *d, const char *dir, unsigned job_limit_mib,
			const char *job_extra)
{
	FILE *f = fopen(d->conf, "we");
	if (!f)
		return -1;
	fprintf(f,
		"[oomkitd]\nmachine = %s/%s\nmachine_limit = 1G\npolicy = kill-largest\ndelay = %s\n"
		"reserve = 16M\nreport_dir = %s\nsocket = %s/oomkitd-%u.sock\nmetrics = %s\n",
		BL_MEMORY_ROOT, d->machine, bench_daemon_delay, d->reports, dir, d->jobs, d->metrics);
	for (unsigned i = 0; i < d->jobs; i++)
		fprintf(f, "\n[job j%u]\nlimit = %uM\npolicy = kill-largest\n%s", i, job_limit_mib,
			job_extra ? job_extra : "");
	return fclose(f) == 0 ? 0 : -1;
}

bool bench_file_has(const char *path, const char *what)
{
	char buf[16384];
	size_t keep = 0, w = strlen(what);
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || w >= sizeof(buf) / 2) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (;;) {
		ssize_t n = read(fd, buf + keep, sizeof(buf) - 1 - keep);
		if (n <= 0)
			break;
		size_t len = keep + (size_t)n;
		buf[len] = 0;
		if (strstr(buf, what)) {
			found = true;
			break;
		}
		/* Keep the tail, in case what straddles two reads. */
		keep = len < w ? len : w;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

int bench_daemon_start(struct bench_daemon *d, const char *dir, const char *rel, unsigned jobs,
		       unsigned job_limit_mib)
{
	return bench_daemon_start_with(d, dir, rel, jobs, job_limit_mib, NULL);
}

int bench_daemon_start_with(struct bench_daemon *d, const char *dir, const char *rel, unsigned jobs,
			    unsigned job_limit_mib, const char *job_extra)
{
	memset(d, 0, sizeof(*d));
	d->jobs = jobs;
	snprintf(d->machine, sizeof(d->machine), "%s", rel);
	snprintf(d->conf, sizeof(d->conf), "%s/oomkitd-%u.conf", dir, jobs);
	snprintf(d->log, sizeof(d->log), "%s/oomkitd-%u.log", dir, jobs);
	snprintf(d->reports, sizeof(d->reports), "%s/reports-%u", dir, jobs);
	snprintf(d->metrics, sizeof(d->metrics), "%s/metrics-%u.prom", dir, jobs);
	if (write_config(d, dir, job_limit_mib, job_extra) < 0) {
		bl_fail("oomkitd: cannot write %s", d->conf);
		return -1;
	}
	int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	char *argv[] = {(char *)bl_oomkitd(), "-c", d->conf, NULL};
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		return -1;
	bl_track(pid);
	/* A thousand jobs take well under a second here; a loaded machine gets 30 s. */
	for (int i = 0; i < 30000 && !bench_file_has(d->log, "oomkitd ready"); i++)
		bl_sleep_us(1000);
	if (!bench_file_has(d->log, "oomkitd ready")) {
		bl_fail("oomkitd with %u jobs did not become ready (log %s)", jobs, d->log);
		return -1;
	}
	d->pid = pid;
	d->guardian = bl_child_named(pid, "oomkit-guardian");
	return 0;
}
