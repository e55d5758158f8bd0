/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tracker.c - see tracker.h.  Every directory the tracker knows is a node:
 * one that some pattern walks through (watched), one that some pattern
 * matches whole (a match), or both.  Nodes are found by path through a hash
 * table and by watch descriptor through the watched ones; a change in a
 * watched directory is handled by name, and a lost event queue by walking
 * every watched directory again and comparing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "rules/pattern.h"
#include "scope/tracker.h"

#define WATCH_MASK                                                                                           \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

struct tpattern {
	char text[PATTERN_MAX];
	unsigned n_comp;
	unsigned matches;
};

struct tnode {
	char *rel; /* NULL: a free slot */
	unsigned depth;
	int parent;    /* -1: the root */
	int wd;	       /* -1: not watched */
	int pattern;   /* -1: matched by no pattern */
	int next;      /* the next node in its hash bucket, -1 at the end */
	unsigned seen; /* the walk that last saw it (resync) */
};

struct tracker {
	char *root;
	int root_fd, ifd;
	struct tpattern *patterns;
	unsigned n_patterns;
	unsigned max_depth; /* of any pattern */
	struct tnode *nodes;
	unsigned n_nodes, cap_nodes;
	int free_list; /* free slots, chained through next */
	int *buckets;
	unsigned n_buckets; /* a power of two */
	unsigned n_watches;
	unsigned walk;
	tracker_fn fn;
	void *data;
	unsigned changes; /* reported in this call */
};

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static unsigned depth_of(const char *rel)
{
	unsigned d = rel[0] != '\0';

	for (; *rel; rel++)
		d += *rel == '/';
	return d;
}

/* Whether the first depth components of p match rel (depth components). */
static bool prefix_matches(const struct tpattern *p, unsigned depth, const char *rel)
{
	char prefix[PATTERN_MAX];
	unsigned comps = 0;
	size_t i = 0;

	if (depth == 0)
		return true;
	for (; p->text[i]; i++)
		if (p->text[i] == '/' && ++comps == depth)
			break;
	memcpy(prefix, p->text, i);
	prefix[i] = '\0';
	return pattern_match(prefix, rel);
}

/* What the directory rel at depth is to the patterns: the first pattern
 * that matches it whole (-1: none), and whether one walks through it. */
static int role(const struct tracker *t, const char *rel, unsigned depth, bool *ret_walked)
{
	int match = -1;

	*ret_walked = false;
	for (unsigned i = 0; i < t->n_patterns; i++) {
		const struct tpattern *p = &t->patterns[i];
		if (p->n_comp == depth && match < 0 && pattern_match(p->text, rel))
			match = (int)i;
		else if (p->n_comp > depth && !*ret_walked && prefix_matches(p, depth, rel))
			*ret_walked = true;
	}
	return match;
}

static int find(const struct tracker *t, const char *rel)
{
	for (int i = t->buckets[hash(rel) & (t->n_buckets - 1)]; i >= 0; i = t->nodes[i].next)
		if (strcmp(t->nodes[i].rel, rel) == 0)
			return i;
	return -1;
}

static int find_wd(const struct tracker *t, int wd)
{
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].rel && t->nodes[i].wd == wd)
			return (int)i;
	return -1;
}

static void link_node(struct tracker *t, int i)
{
	int *b = &t->buckets[hash(t->nodes[i].rel) & (t->n_buckets - 1)];

	t->nodes[i].next = *b;
	*b = i;
}

static void unlink_node(struct tracker *t, int i)
{
	int *p = &t->buckets[hash(t->nodes[i].rel) & (t->n_buckets - 1)];

	while (*p != i)
		p = &t->nodes[*p].next;
	*p = t->nodes[i].next;
}

/* Twice the buckets once there are more nodes than buckets. */
static int grow_buckets(struct tracker *t)
{
	unsigned n = t->n_buckets * 2;
	int *b = malloc(n * sizeof(*b));

	if (!b)
		return -ENOMEM;
	free(t->buckets);
	t->buckets = b;
	t->n_buckets = n;
	for (unsigned i = 0; i < n; i++)
		b[i] = -1;
	for (unsigned i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].rel)
			link_node(t, (int)i);
	return 0;
}

static int new_slot(struct tracker *t)
{
	if (t->free_list >= 0) {
		int i = t->free_list;
		t->free_list = t->nodes[i].next;
		return i;
	}
	if (t->n_nodes == t->cap_nodes) {
		unsigned cap = t->cap_nodes ? t->cap_nodes * 2 : 16;
		struct tnode *n = realloc(t->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nodes = n;
		t->cap_nodes = cap;
	}
	if (t->n_nodes >= t->n_buckets && grow_buckets(t) < 0)
		return -ENOMEM;
	return (int)t->n_nodes++;
}

static void report(struct tracker *t, const struct tnode *n, bool added)
{
	t->patterns[n->pattern].matches += added ? 1 : -1u;
	t->changes++;
	t->fn(t->data, n->rel, (unsigned)n->pattern, added);
}

static int path_of(const struct tracker *t, const char *rel, char **ret)
{
	return asprintf(ret, "%s/%s", t->root, rel) < 0 ? -ENOMEM : 0;
}

static int add_watch(struct tracker *t, const char *rel)
{
	char *path;
	int wd;

	if (path_of(t, rel, &path) < 0)
		return -ENOMEM;
	wd = inotify_add_watch(t->ifd, path, WATCH_MASK);
	free(path);
	return wd < 0 ? -errno : wd;
}

static int scan(struct tracker *t, int i, bool resync);

/* A directory rel that a pattern walks through or matches: known from now
 * on, watched first (then listed, so that nothing made meanwhile is missed)
 * if a pattern walks through it, reported if one matches it.  A directory
 * removed before it could be watched is not known: nothing is reported. */
static int node_add(struct tracker *t, int parent, const char *rel, unsigned depth, int pattern, bool walked)
{
	int wd = -1, i;

	if (walked && (wd = add_watch(t, rel)) < 0) {
		if (wd == -ENOENT || wd == -ENOTDIR)
			return 0;
		log_warning("cannot watch cgroup %s for new cgroups: %s", rel, strerror(-wd));
		wd = -1;
	}
	if ((i = new_slot(t)) < 0 || !(t->nodes[i].rel = strdup(rel))) {
		if (i >= 0) {
			t->nodes[i].next = t->free_list;
			t->free_list = i;
		}
		if (wd >= 0)
			inotify_rm_watch(t->ifd, wd);
		return -ENOMEM;
	}
	t->nodes[i] = (struct tnode){.rel = t->nodes[i].rel,
				     .depth = depth,
				     .parent = parent,
				     .wd = wd,
				     .pattern = pattern,
				     .seen = t->walk};
	link_node(t, i);
	t->n_watches += wd >= 0;
	if (pattern >= 0)
		report(t, &t->nodes[i], true);
	return wd >= 0 ? scan(t, i, false) : 0;
}

/* Forgets node i and every node below it, reporting each match as gone. */
static void node_remove(struct tracker *t, int i, bool dir_exists)
{
	for (unsigned c = 0; c < t->n_nodes; c++)
		if (t->nodes[c].rel && t->nodes[c].parent == i)
			node_remove(t, (int)c, dir_exists);
	struct tnode *n = &t->nodes[i];
	if (n->pattern >= 0)
		report(t, n, false);
	if (n->wd >= 0) {
		/* A removed directory's watch is gone with it (IN_IGNORED). */
		if (dir_exists)
			inotify_rm_watch(t->ifd, n->wd);
		t->n_watches--;
	}
	unlink_node(t, i);
	free(n->rel);
	n->rel = NULL;
	n->next = t->free_list;
	t->free_list = i;
}

static int child_rel(const struct tnode *parent, const char *name, char *buf, size_t len)
{
	int n =
	    parent->rel[0] ? snprintf(buf, len, "%s/%s", parent->rel, name) : snprintf(buf, len, "%s", name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static bool exists(const struct tracker *t, const char *rel)
{
	struct stat st;

	return fstatat(t->root_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* A directory entry name of node i was made (or found by a walk). */
static int child_appeared(struct tracker *t, int i, const char *name)
{
	char rel[PATH_MAX];
	bool walked;
	int c, pattern;
	unsigned depth = t->nodes[i].depth + 1;

	if (child_rel(&t->nodes[i], name, rel, sizeof(rel)) < 0)
		return 0; /* longer than any pattern can match */
	if ((c = find(t, rel)) >= 0) {
		t->nodes[c].seen = t->walk;
		return 0;
	}
	pattern = role(t, rel, depth, &walked);
	if (pattern < 0 && !walked)
		return 0;
	/* An event read late may name a directory removed since: its
	 * removal follows in the queue, and reporting both would be noise. */
	if (!walked && !exists(t, rel))
		return 0;
	return node_add(t, i, rel, depth, pattern, walked);
}

static void child_gone(struct tracker *t, int i, const char *name)
{
	char rel[PATH_MAX];
	int c;

	if (child_rel(&t->nodes[i], name, rel, sizeof(rel)) == 0 && (c = find(t, rel)) >= 0)
		node_remove(t, c, false);
}

static bool is_dir(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Lists node i's directory and adds what patterns take of it.  With
 * resync, children known but no longer there are removed, and watched
 * children are listed again in turn. */
static int scan(struct tracker *t, int i, bool resync)
{
	int fd = openat(t->root_fd, t->nodes[i].rel[0] ? t->nodes[i].rel : ".",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		/* Removed meanwhile: its parent's watch reports it. */
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	}
	while (r >= 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && is_dir(fd, de))
			r = child_appeared(t, i, de->d_name);
	closedir(d);
	if (!resync || r < 0)
		return r;
	for (unsigned c = 0; c < t->n_nodes && r >= 0; c++) {
		struct tnode *n = &t->nodes[c];
		if (!n->rel || n->parent != i)
			continue;
		if (n->seen != t->walk)
			node_remove(t, (int)c, false);
		else if (n->wd >= 0)
			r = scan(t, (int)c, true);
	}
	return r;
}

static int resync(struct tracker *t)
{
	t->walk++;
	return scan(t, 0, true);
}

int tracker_new(const char *root, const char *const *patterns, unsigned n, tracker_fn fn, void *data,
		struct tracker **ret)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (t)
		t->root_fd = t->ifd = -1;
	if (!t || !(t->root = strdup(root)) || !(t->patterns = calloc(n ? n : 1, sizeof(*t->patterns))) ||
	    !(t->buckets = malloc(16 * sizeof(*t->buckets)))) {
		tracker_free(t);
		return -ENOMEM;
	}
	t->free_list = -1;
	t->n_buckets = 16;
	for (unsigned i = 0; i < 16; i++)
		t->buckets[i] = -1;
	t->fn = fn;
	t->data = data;
	t->n_patterns = n;
	for (unsigned i = 0; i < n; i++) {
		if (strlen(patterns[i]) >= PATTERN_MAX || !patterns[i][0]) {
			tracker_free(t);
			return -EINVAL;
		}
		snprintf(t->patterns[i].text, PATTERN_MAX, "%s", patterns[i]);
		t->patterns[i].n_comp = depth_of(patterns[i]);
		if (t->patterns[i].n_comp > t->max_depth)
			t->max_depth = t->patterns[i].n_comp;
	}
	*ret = t;
	return 0;
}

int tracker_start(struct tracker *t)
{
	int r, i;

	t->root_fd = open(t->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	t->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->root_fd < 0 || t->ifd < 0)
		return -errno;
	if ((i = new_slot(t)) < 0 || !(t->nodes[i].rel = strdup("")))
		return -ENOMEM;
	r = inotify_add_watch(t->ifd, t->root, WATCH_MASK);
	if (r < 0)
		return -errno;
	t->nodes[i] = (struct tnode){.rel = t->nodes[i].rel, .parent = -1, .wd = r, .pattern = -1};
	link_node(t, i);
	t->n_watches = 1;
	t->changes = 0;
	return scan(t, i, false);
}

int tracker_fd(const struct tracker *t)
{
	return t->ifd;
}

static int handle(struct tracker *t, const struct inotify_event *ie)
{
	int i;

	if (ie->mask & IN_Q_OVERFLOW)
		return resync(t);
	if ((i = find_wd(t, ie->wd)) < 0)
		return 0;
	if (ie->mask & IN_IGNORED) {
		/* The directory went; its parent's watch removes the node. */
		t->nodes[i].wd = -1;
		t->n_watches--;
		return 0;
	}
	if (!(ie->mask & IN_ISDIR) || !ie->len)
		return 0;
	if (ie->mask & (IN_DELETE | IN_MOVED_FROM)) {
		child_gone(t, i, ie->name);
		return 0;
	}
	if (ie->mask & (IN_CREATE | IN_MOVED_TO))
		return child_appeared(t, i, ie->name);
	return 0;
}

int tracker_dispatch(struct tracker *t)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	int r = 0;

	t->changes = 0;
	while ((n = read(t->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;
			int e = handle(t, ie);
			if (e < 0 && r == 0)
				r = e;
			p += sizeof(*ie) + ie->len;
		}
	}
	if (n < 0 && errno != EAGAIN && r == 0)
		r = -errno;
	return r < 0 ? r : (int)t->changes;
}

unsigned tracker_matches(const struct tracker *t, unsigned pattern)
{
	return pattern < t->n_patterns ? t->patterns[pattern].matches : 0;
}

unsigned tracker_watches(const struct tracker *t)
{
	return t->n_watches;
}

void tracker_free(struct tracker *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->n_nodes; i++)
		free(t->nodes[i].rel);
	if (t->ifd >= 0)
		close(t->ifd);
	if (t->root_fd >= 0)
		close(t->root_fd);
	free(t->nodes);
	free(t->buckets);
	free(t->patterns);
	free(t->root);
	free(t);
}
