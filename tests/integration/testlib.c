/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testlib.c - integration test helpers on the real memory cgroup v1
 * hierarchy.  Every cgroup lives under one parent named after this process so
 * that cleanup can remove exactly what the test made and nothing else.
 */
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef OOMKIT_HOG
#error "OOMKIT_HOG must name the hog binary"
#endif

static char parent[128];
static bool parent_made;

const char *tl_hog_path(void)
{
	const char *env = getenv("OOMKIT_HOG");
	return env && *env ? env : OOMKIT_HOG;
}

static void fatal_signal(int sig)
{
	tl_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

void tl_require_kernel(void)
{
	const char *req = getenv("OOMKIT_REQUIRE_KERNEL");
	bool required = req && strcmp(req, "1") == 0;
	const char *why = NULL;

	if (geteuid() != 0)
		why = "not root";
	else if (access(TL_MEMORY_ROOT "/memory.oom_control", R_OK) != 0)
		why = "no cgroup v1 memory controller at " TL_MEMORY_ROOT;
	else if (access(TL_MEMORY_ROOT "/cgroup.event_control", W_OK) != 0)
		why = "no cgroup.event_control at " TL_MEMORY_ROOT;
	if (why) {
		fprintf(stderr, "%s: %s\n", required ? "FAIL (OOMKIT_REQUIRE_KERNEL=1)" : "SKIP", why);
		exit(required ? 1 : 77);
	}
	atexit(tl_cleanup);
	signal(SIGINT, fatal_signal);
	signal(SIGTERM, fatal_signal);
	signal(SIGABRT, fatal_signal);
	signal(SIGSEGV, fatal_signal);
	signal(SIGALRM, fatal_signal);
	/* A test must never hang the suite: meson's own timeout SIGTERMs us, which cleans up. */
}

const char *tl_abs(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int i;
	char *b = buf[i++ % 4];
	snprintf(b, PATH_MAX, "%s/%s", TL_MEMORY_ROOT, rel);
	return b;
}

int tl_write(const char *rel, const char *file, const char *value)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", TL_MEMORY_ROOT, rel, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int r = n < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int read_text(const char *rel, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s/%s", TL_MEMORY_ROOT, rel, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

uint64_t tl_read_u64(const char *rel, const char *file)
{
	char buf[64];
	if (read_text(rel, file, buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	return strtoull(buf, NULL, 10);
}

uint64_t tl_read_key(const char *rel, const char *file, const char *key)
{
	static char buf[16384];
	if (read_text(rel, file, buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	size_t klen = strlen(key);
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
	return UINT64_MAX;
}

static void make_cgroup(const char *rel, uint64_t limit)
{
	if (mkdir(tl_abs(rel), 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkdir %s: %s\n", tl_abs(rel), strerror(errno));
		exit(1);
	}
	if (limit) {
		char v[32];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)limit);
		if (tl_write(rel, "memory.limit_in_bytes", v) != 0) {
			fprintf(stderr, "cannot set limit of %s\n", rel);
			exit(1);
		}
	}
}

const char *tl_parent(void)
{
	if (!parent_made) {
		static unsigned counter;
		snprintf(parent, sizeof(parent), "oomkit-test-%d-%u", (int)getpid(), counter++);
		make_cgroup(parent, 1024 * TL_MIB);
		parent_made = true;
	}
	return parent;
}

const char *tl_cgroup(const char *name, uint64_t limit_bytes)
{
	static char names[64][256];
	static int n;
	char *b = names[n++ % 64];
	snprintf(b, 256, "%s/%s", tl_parent(), name);
	make_cgroup(b, limit_bytes);
	return b;
}

static pid_t spawn_in(const char *rel, char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		char v[32];
		snprintf(v, sizeof(v), "%d", (int)getpid());
		if (tl_write(rel, "cgroup.procs", v) != 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

pid_t tl_spawn_hog(const char *rel, unsigned mib, unsigned step_kib, unsigned pause_us)
{
	char a1[16], a2[16], a3[16];
	snprintf(a1, sizeof(a1), "%u", mib);
	snprintf(a2, sizeof(a2), "%u", step_kib);
	snprintf(a3, sizeof(a3), "%u", pause_us);
	char *argv[] = {(char *)tl_hog_path(), a1, a2, a3, NULL};
	return spawn_in(rel, argv);
}

pid_t tl_spawn_sleeper(const char *rel)
{
	/* The hog with 0 MiB only sleeps; same binary, so no dependency on /bin/sleep. */
	return tl_spawn_hog(rel, 0, 1024, 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool tl_wait_for(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		if (cond(arg))
			return true;
		if (now_ms() >= end)
			return false;
		usleep(5000);
	}
}

struct exit_arg {
	pid_t pid;
	int status;
};

static bool exited(void *p)
{
	struct exit_arg *a = p;
	return waitpid(a->pid, &a->status, WNOHANG) == a->pid;
}

int tl_wait_exit(pid_t pid, int timeout_ms)
{
	struct exit_arg a = {pid, 0};
	return tl_wait_for(exited, &a, timeout_ms) ? a.status : -1;
}

bool tl_alive(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

struct usage_arg {
	const char *rel;
	uint64_t bytes;
};

static bool usage_reached(void *p)
{
	struct usage_arg *a = p;
	uint64_t u = tl_read_u64(a->rel, "memory.usage_in_bytes");
	return u != UINT64_MAX && u >= a->bytes;
}

bool tl_wait_usage(const char *rel, uint64_t bytes, int timeout_ms)
{
	struct usage_arg a = {rel, bytes};
	return tl_wait_for(usage_reached, &a, timeout_ms);
}

static bool is_under_oom(void *p)
{
	return tl_read_key(p, "memory.oom_control", "under_oom") == 1;
}

bool tl_wait_under_oom(const char *rel, int timeout_ms)
{
	return tl_wait_for(is_under_oom, (void *)rel, timeout_ms);
}

/* Kills everything in one cgroup and its children, then removes them, deepest first. */
static void remove_tree(const char *abs)
{
	DIR *d = opendir(abs);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s/%s", abs, de->d_name);
		remove_tree(sub);
	}
	closedir(d);

	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/memory.oom_control", abs);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* Blocked allocators must be able to die: give the kernel its killer back. */
		(void)!write(fd, "0", 1);
		close(fd);
	}
	for (int round = 0; round < 400; round++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", abs);
		FILE *f = fopen(path, "re");
		if (!f)
			break;
		int pid, n = 0;
		while (fscanf(f, "%d", &pid) == 1) {
			kill(pid, SIGKILL);
			n++;
		}
		fclose(f);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (n == 0 && rmdir(abs) == 0)
			return;
		usleep(5000);
	}
	if (rmdir(abs) != 0 && errno != ENOENT)
		fprintf(stderr, "testlib: could not remove %s: %s\n", abs, strerror(errno));
}

void tl_cleanup(void)
{
	if (!parent_made)
		return;
	parent_made = false;
	remove_tree(tl_abs(parent));
}
