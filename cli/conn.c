/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conn.c - see conn.h. */
#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "term.h"

static int connect_daemon(const struct cli *cli, struct conn *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	*c = (struct conn){.fd = -1};
	if (strlen(cli->socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(sa.sun_path, cli->socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	c->fd = fd;
	return 0;
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	*c = (struct conn){.fd = -1};
}

int conn_send(struct conn *c, const struct protocol_request *req)
{
	char line[PROTOCOL_REQUEST_MAX];
	int len = protocol_format_request(req, line, sizeof(line));

	if (len < 0)
		return len;
	for (size_t off = 0; off < (size_t)len;) {
		ssize_t n = send(c->fd, line + off, (size_t)len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

int conn_read(struct conn *c, struct reply *ret)
{
	size_t end;

	if (c->used) {
		memmove(c->buf, c->buf + c->used, c->len - c->used);
		c->len -= c->used;
		c->used = 0;
	}
	while (!(end = protocol_frame_end(c->buf, c->len))) {
		if (c->len + 4096 > c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 16384;
			char *nb = realloc(c->buf, cap);
			if (!nb)
				return -ENOMEM;
			c->buf = nb;
			c->cap = cap;
		}
		ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		c->len += (size_t)n;
	}
	c->used = end;
	protocol_reader_init(&ret->rd, c->buf, end);
	char *first = protocol_next_line(&ret->rd);
	if (!first || protocol_parse_status(first, &ret->status) < 0)
		return -EBADMSG;
	return 0;
}

struct protocol_record *reply_next(struct reply *r, struct protocol_record *rec, int *ret_err)
{
	char *line = protocol_next_line(&r->rd);

	if (!line)
		return NULL;
	if (protocol_parse_record(line, rec) < 0) {
		*ret_err = -EBADMSG;
		return NULL;
	}
	return rec;
}

static int unreachable(const struct cli *cli, int r)
{
	cli_err("cannot reach oomkitd at %s: %s", cli->socket_path, strerror(-r));
	return EXIT_UNREACHABLE;
}

int conn_request(const struct cli *cli, const struct protocol_request *req, struct conn *c, struct reply *ret)
{
	int r = connect_daemon(cli, c);

	if (r < 0)
		return unreachable(cli, r);
	if ((r = conn_send(c, req)) == 0)
		r = conn_read(c, ret);
	if (r < 0) {
		cli_err("oomkitd at %s: %s", cli->socket_path,
			r == -EBADMSG ? "a reply not in the protocol's form" : strerror(-r));
		conn_close(c);
		return EXIT_UNREACHABLE;
	}
	if (ret->status.kind != PROTOCOL_OK) {
		cli_err("%s", ret->status.kind == PROTOCOL_ERROR ? TTY(ret->status.message, 0)
								 : "unexpected reply");
		conn_close(c);
		return EXIT_REFUSED;
	}
	return 0;
}

int conn_malformed(const struct cli *cli)
{
	cli_err("oomkitd at %s: a reply not in the protocol's form", cli->socket_path);
	return EXIT_UNREACHABLE;
}

int reply_data_text(struct reply *r, char **ret, size_t *ret_len)
{
	struct protocol_record rec;
	size_t len = 0, cap = 4096;
	char *text = malloc(cap);
	int bad = 0;

	while (text && reply_next(r, &rec, &bad)) {
		const char *chunk;
		size_t n;
		if (protocol_parse_data(&rec, &chunk, &n) < 0)
			continue;
		while (len + n + 1 > cap) {
			char *nt = realloc(text, cap *= 2);
			if (!nt) {
				free(text);
				return -ENOMEM;
			}
			text = nt;
		}
		memcpy(text + len, chunk, n);
		len += n;
	}
	if (!text || bad) {
		free(text);
		return text ? bad : -ENOMEM;
	}
	text[len] = '\0';
	*ret = text;
	*ret_len = len;
	return 0;
}
