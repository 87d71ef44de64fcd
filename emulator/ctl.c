/* SPDX-License-Identifier: MIT */
/*
 * The control socket. Protocol: the client sends its arguments separated by
 * tabs and ended by a newline; the server answers with '0' (success) or
 * '1' (error), then text, then closes. The socket file is 0600, and a peer
 * whose uid is neither ours nor root's is refused (SO_PEERCRED), so other
 * users cannot steer the fabric. Requests are read without blocking the
 * loop; a request may be at most 64 KiB; at most 64 clients at once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "emulator/ctl.h"
#include "lib/log.h"

#define CTL_MAX_REQUEST	65536
#define CTL_MAX_CLIENTS	64

struct ctl_server {
	struct ctl_env *env;
	char *path;
	int fd;
	guint watch;
	unsigned clients;
};

struct ctl_conn {
	struct ctl_server *srv;
	int fd;
	GString *in;
};

static void conn_close(struct ctl_conn *c)
{
	close(c->fd);
	g_string_free(c->in, TRUE);
	c->srv->clients--;
	g_free(c);
}

static void reply(int fd, bool ok, const char *text)
{
	char status = ok ? '0' : '1';
	size_t len = strlen(text), off = 0;

	/* Small answers to a local peer: a blocking write is fine here. */
	if (write(fd, &status, 1) != 1)
		return;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

static gboolean on_conn(gint fd, GIOCondition cond, gpointer data)
{
	struct ctl_conn *c = data;
	char buf[4096], *nl, **argv;
	ssize_t n = read(fd, buf, sizeof(buf));
	GString *out;
	int ret;

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		conn_close(c);
		return G_SOURCE_REMOVE;
	}
	g_string_append_len(c->in, buf, n);
	nl = memchr(c->in->str, '\n', c->in->len);
	if (!nl) {
		if (c->in->len < CTL_MAX_REQUEST)
			return G_SOURCE_CONTINUE;
		reply(fd, false, "error: request too long\n");
		conn_close(c);
		return G_SOURCE_REMOVE;
	}
	*nl = 0;
	argv = g_strsplit(c->in->str, "\t", -1);
	out = g_string_new(NULL);
	ret = ctl_run(c->srv->env, argv, out);
	reply(fd, ret == 0, out->str);
	g_string_free(out, TRUE);
	g_strfreev(argv);
	conn_close(c);
	return G_SOURCE_REMOVE;
}

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data)
{
	struct ctl_server *srv = data;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ctl_conn *c;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	(void)cond;
	if (cfd < 0)
		return G_SOURCE_CONTINUE;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		g_warning("control socket: refused a client of uid %u", cred.uid);
		reply(cfd, false, "error: permission denied\n");
		close(cfd);
		return G_SOURCE_CONTINUE;
	}
	if (srv->clients >= CTL_MAX_CLIENTS) {
		reply(cfd, false, "error: too many control clients\n");
		close(cfd);
		return G_SOURCE_CONTINUE;
	}
	c = g_new0(struct ctl_conn, 1);
	c->srv = srv;
	c->fd = cfd;
	c->in = g_string_new(NULL);
	srv->clients++;
	g_unix_fd_add(cfd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_conn, c);
	return G_SOURCE_CONTINUE;
}

struct ctl_server *ctl_server_new(struct ctl_env *env, const char *path, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *srv;
	char *dir = g_path_get_dirname(path);
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		g_set_error(err, IBEMU_ERROR, ENAMETOOLONG, "control socket path too long: %s", path);
		g_free(dir);
		return NULL;
	}
	if (g_mkdir_with_parents(dir, 0700) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot create %s: %s", dir, g_strerror(errno));
		g_free(dir);
		return NULL;
	}
	g_free(dir);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(path);	/* a socket left by a crashed run */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot listen on %s: %s", path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	srv = g_new0(struct ctl_server, 1);
	srv->env = env;
	srv->path = g_strdup(path);
	srv->fd = fd;
	srv->watch = g_unix_fd_add(fd, G_IO_IN, on_accept, srv);
	return srv;
}

void ctl_server_free(struct ctl_server *srv)
{
	if (!srv)
		return;
	g_source_remove(srv->watch);
	close(srv->fd);
	unlink(srv->path);
	g_free(srv->path);
	g_free(srv);
}

/* Send @argv, return the raw answer (status byte first) or NULL. */
static GString *exchange(const char *path, int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	GString *req = g_string_new(NULL), *ans = g_string_new(NULL);
	char buf[4096];
	ssize_t n;
	int fd, i;

	for (i = 0; i < argc; i++) {
		if (strchr(argv[i], '\t') || strchr(argv[i], '\n')) {
			fprintf(stderr, "ibemu ctl: arguments cannot contain tabs or newlines\n");
			goto fail;
		}
		g_string_append_printf(req, "%s%s", i ? "\t" : "", argv[i]);
	}
	g_string_append_c(req, '\n');
	g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "ibemu ctl: cannot reach the emulator at %s: %s\n", path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	/* A refusal (too many clients) is written before our request is
	 * read and the socket closed: no SIGPIPE, read the refusal instead. */
	if (send(fd, req->str, req->len, MSG_NOSIGNAL) != (ssize_t)req->len && errno != EPIPE) {
		fprintf(stderr, "ibemu ctl: cannot send: %s\n", g_strerror(errno));
		close(fd);
		goto fail;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(ans, buf, n);
	close(fd);
	if (!ans->len) {
		fprintf(stderr, "ibemu ctl: no answer from %s\n", path);
		goto fail;
	}
	g_string_free(req, TRUE);
	return ans;
fail:
	g_string_free(req, TRUE);
	g_string_free(ans, TRUE);
	return NULL;
}

int ctl_client(const char *path, int argc, char **argv)
{
	GString *ans = exchange(path, argc, argv);
	int ret;

	if (!ans)
		return 1;
	ret = ans->str[0] == '0' ? 0 : 1;
	fputs(ans->str + 1, ret ? stderr : stdout);
	g_string_free(ans, TRUE);
	return ret;
}

char *ctl_ask(const char *path, int argc, char **argv)
{
	GString *ans = exchange(path, argc, argv);

	if (!ans)
		return NULL;
	if (ans->str[0] != '0') {
		fputs(ans->str + 1, stderr);
		g_string_free(ans, TRUE);
		return NULL;
	}
	g_string_erase(ans, 0, 1);
	return g_string_free(ans, FALSE);
}
