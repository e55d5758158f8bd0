/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler.c - see sampler.h.  Reads /proc/PID/stat (start time) and
 * /proc/PID/statm (resident pages) of the processes whose /proc directory
 * the uid owns. */
#include <dirent.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler.h"

/* One sample a second while a question is open, for a minute, with room. */
#define RING 72

struct track {
	pid_t pid;
	uint64_t start_time;
	char comm[SAMPLER_COMM_MAX];
	uint64_t t_ms[RING], rss[RING];
	unsigned head, n;   /* head: the newest */
	bool all_kept;	    /* its first sample is still in the ring */
	uint64_t before_ms; /* the tick before its first, when it did not exist yet; 0: none */
	uint64_t seen_ms;
};

struct sampler {
	char *proc_root;
	uid_t uid;
	long page;
	uint64_t last_tick_ms; /* 0: none yet */
	GHashTable *procs;     /* pid -> struct track */
};

struct sampler *sampler_new(const char *proc_root, uid_t uid)
{
	struct sampler *s = g_new0(struct sampler, 1);

	s->proc_root = g_strdup(proc_root);
	s->uid = uid;
	s->page = sysconf(_SC_PAGESIZE);
	if (s->page <= 0)
		s->page = 4096;
	s->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	return s;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	g_hash_table_destroy(s->procs);
	g_free(s->proc_root);
	g_free(s);
}

static bool read_small(int dir, const char *name, char *buf, size_t len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* comm and start time from stat: the comm is between the first "(" and the
 * last ")", and may hold anything, ")" and spaces too. */
static bool read_stat(int dir, char comm[SAMPLER_COMM_MAX], uint64_t *ret_start)
{
	char buf[1024];
	char *open_, *close_, *p;
	unsigned long long start;

	if (!read_small(dir, "stat", buf, sizeof(buf)))
		return false;
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_)
		return false;
	size_t n = (size_t)(close_ - open_ - 1);
	if (n >= SAMPLER_COMM_MAX)
		n = SAMPLER_COMM_MAX - 1;
	memcpy(comm, open_ + 1, n);
	comm[n] = '\0';
	/* Field 22 is the start time; the state (field 3) follows ") ". */
	p = close_ + 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &start) != 1)
		return false;
	*ret_start = start;
	return true;
}

static void sample_one(struct sampler *s, int procfd, const char *name, pid_t pid, uint64_t now_ms)
{
	char comm[SAMPLER_COMM_MAX], statm[128];
	unsigned long long size, resident;
	uint64_t start;
	struct stat st;
	int dir;

	if (fstatat(procfd, name, &st, 0) < 0 || st.st_uid != s->uid)
		return;
	dir = openat(procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	bool ok = read_stat(dir, comm, &start) && read_small(dir, "statm", statm, sizeof(statm)) &&
		  sscanf(statm, "%llu %llu", &size, &resident) == 2;
	close(dir);
	if (!ok)
		return;
	struct track *t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(pid));
	if (t && t->start_time != start) {
		g_hash_table_remove(s->procs, GINT_TO_POINTER(pid));
		t = NULL;
	}
	if (!t) {
		t = g_new0(struct track, 1);
		t->pid = pid;
		t->start_time = start;
		t->all_kept = true;
		t->before_ms = s->last_tick_ms;
		g_hash_table_insert(s->procs, GINT_TO_POINTER(pid), t);
	}
	memcpy(t->comm, comm, sizeof(t->comm));
	t->head = (t->head + 1) % RING;
	t->t_ms[t->head] = now_ms;
	t->rss[t->head] = (uint64_t)resident * (uint64_t)s->page;
	if (t->n < RING)
		t->n++;
	else
		t->all_kept = false;
	/* Samples older than a minute are not compared with. */
	while (t->n > 1 && now_ms - t->t_ms[(t->head + RING - (t->n - 1)) % RING] > SAMPLER_KEEP_MS) {
		t->n--;
		t->all_kept = false;
	}
	t->seen_ms = now_ms;
}

static gboolean gone(gpointer key, gpointer value, gpointer data)
{
	(void)key;
	return ((struct track *)value)->seen_ms != *(const uint64_t *)data;
}

unsigned sampler_tick(struct sampler *s, uint64_t now_ms)
{
	int procfd = open(s->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = procfd >= 0 ? fdopendir(dup(procfd)) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		sample_one(s, procfd, e->d_name, (pid_t)pid, now_ms);
	}
	if (d)
		closedir(d);
	if (procfd >= 0)
		close(procfd);
	g_hash_table_foreach_remove(s->procs, gone, &now_ms);
	s->last_tick_ms = now_ms;
	return g_hash_table_size(s->procs);
}

static void growth_of(const struct track *t, uint64_t window_ms, int64_t *ret_grew, uint64_t *ret_span)
{
	uint64_t now = t->t_ms[t->head];
	unsigned back = 0;

	for (unsigned k = 1; k < t->n; k++) {
		unsigned i = (t->head + RING - k) % RING;
		if (now - t->t_ms[i] > window_ms)
			break;
		back = k;
	}
	unsigned old = (t->head + RING - back) % RING;
	/* Started since the tick before its first sample, inside the window:
	 * all it holds grew in that time. */
	if (back == t->n - 1 && t->all_kept && t->before_ms && now - t->before_ms <= window_ms) {
		*ret_grew = (int64_t)t->rss[t->head];
		*ret_span = now - t->before_ms;
		return;
	}
	*ret_grew = (int64_t)t->rss[t->head] - (int64_t)t->rss[old];
	*ret_span = now - t->t_ms[old];
}

bool sampler_growth(const struct sampler *s, pid_t pid, uint64_t window_ms, uint64_t *ret_rss_bytes,
		    int64_t *ret_grew_bytes, uint64_t *ret_span_ms)
{
	const struct track *t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(pid));
	int64_t grew;
	uint64_t span;

	if (!t)
		return false;
	growth_of(t, window_ms, &grew, &span);
	*ret_rss_bytes = t->rss[t->head];
	if (!span)
		return false;
	*ret_grew_bytes = grew;
	*ret_span_ms = span;
	return true;
}

static int by_rss(const void *x, const void *y)
{
	const struct sampler_top *a = x, *b = y;
	return a->rss_bytes < b->rss_bytes ? 1 : a->rss_bytes > b->rss_bytes ? -1 : a->pid - b->pid;
}

unsigned sampler_top(const struct sampler *s, struct sampler_top *ret, unsigned n)
{
	GHashTableIter it;
	gpointer value;
	GArray *all = g_array_new(FALSE, TRUE, sizeof(struct sampler_top));

	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		const struct track *t = value;
		struct sampler_top top = {.pid = t->pid, .rss_bytes = t->rss[t->head]};
		memcpy(top.comm, t->comm, sizeof(top.comm));
		growth_of(t, SAMPLER_KEEP_MS, &top.grew_bytes, &top.span_ms);
		g_array_append_val(all, top);
	}
	g_array_sort(all, by_rss);
	unsigned k = all->len < n ? all->len : n;
	memcpy(ret, all->data, k * sizeof(*ret));
	g_array_free(all, TRUE);
	return k;
}

bool sampler_meminfo(const char *proc_root, uint64_t *ret_mem_total, uint64_t *ret_mem_available,
		     uint64_t *ret_swap_total, uint64_t *ret_swap_free)
{
	char path[256], line[256];
	unsigned long long v;
	unsigned found = 0;
	uint64_t mt = 0, ma = 0, st = 0, sf = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", proc_root);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
			mt = v << 10, found |= 1;
		else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
			ma = v << 10, found |= 2;
		else if (sscanf(line, "SwapTotal: %llu kB", &v) == 1)
			st = v << 10, found |= 4;
		else if (sscanf(line, "SwapFree: %llu kB", &v) == 1)
			sf = v << 10, found |= 8;
	}
	fclose(f);
	if (found != 15)
		return false;
	*ret_mem_total = mt;
	*ret_mem_available = ma;
	*ret_swap_total = st;
	*ret_swap_free = sf;
	return true;
}
