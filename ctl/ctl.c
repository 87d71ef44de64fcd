/* SPDX-License-Identifier: MIT */
/*
 * The control socket, server side (ctl/ctl_client.c is the other). Protocol:
 * the client sends its arguments separated by tabs and ended by a newline;
 * the server answers '0' (success) or '1' (error), the text's length in
 * decimal and a newline, then the text, and closes: a client can tell a
 * complete answer from a cut one. The socket file is 0600, and a peer whose
 * uid is neither ours nor root's is refused (SO_PEERCRED), so other users
 * cannot steer the fabric. Inside a user namespace (a run by a normal
 * user) root outside is unmapped and shows as the overflow uid: that one
 * is let in too, as only root can pass the 0600 socket of a user's 0700
 * directory besides the owner (cli/emulator.c emu_ctl_dir_prepare). Requests
 * are read and answers written without blocking the loop; a request may
 * be at most 64 KiB; at most 64 clients at once; a connection that moves
 * nothing for 10 s is closed. The fast path hands over channels whose
 * peer it has vouched for (FAST_CTL, abi/fast_wire.h): SOCK_SEQPACKET, so
 * a request is read whole and the answer is sent 64 KiB a datagram.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "ctl/ctl.h"
#include "lib/listener.h"
#include "lib/log.h"
#include "lib/watch.h"

#define CTL_MAX_REQUEST	65536
#define CTL_MAX_SEND	65536	/* a send: a datagram of an adopted channel */
#define CTL_MAX_CLIENTS	64
#define CTL_IDLE_S	10	/* a connection that moves nothing this long goes */

struct ctl_server {
	struct ctl_env *env;
	char *path;
	ino_t ino;		/* of the socket file we made */
	int fd;
	struct listener listener;
	unsigned clients;
};

/*
 * One client: its request comes in, then the answer goes out as the socket
 * takes it (a dump of a big fabric is megabytes), never blocking the loop.
 */
struct ctl_conn {
	struct ctl_server *srv;
	int fd;
	GString *in;
	GString *out;		/* the framed answer */
	size_t sent;
	guint watch, idle;
};

/* The answer on the wire: '0' (success) or '1', its length, '\n', text. */
static GString *frame(bool ok, const char *text)
{
	GString *s = g_string_new(NULL);

	g_string_append_printf(s, "%c%zu\n%s", ok ? '0' : '1', strlen(text), text);
	return s;
}

/* A short refusal before any request: one write, whatever it takes. */
static void refuse(int fd, const char *text)
{
	GString *s = frame(false, text);

	if (write(fd, s->str, s->len) < 0)
		g_debug("control socket: refusal not sent: %s", g_strerror(errno));
	g_string_free(s, TRUE);
}

static void conn_close(struct ctl_conn *c)
{
	if (c->watch)
		g_source_remove(c->watch);
	if (c->idle)
		g_source_remove(c->idle);
	close(c->fd);
	g_string_free(c->in, TRUE);
	if (c->out)
		g_string_free(c->out, TRUE);
	c->srv->clients--;
	g_free(c);
}

static gboolean on_idle(gpointer data)
{
	struct ctl_conn *c = data;

	g_message("control socket: a client sent or took nothing for %u s: closed", CTL_IDLE_S);
	c->idle = 0;
	conn_close(c);
	return G_SOURCE_REMOVE;
}

static void touch(struct ctl_conn *c)
{
	if (c->idle)
		g_source_remove(c->idle);
	c->idle = g_timeout_add_seconds(CTL_IDLE_S, on_idle, c);
}

/* Send what the socket takes; true when there is more to send. */
static bool flush_out(struct ctl_conn *c)
{
	while (c->sent < c->out->len) {
		ssize_t n = send(c->fd, c->out->str + c->sent,
				 MIN(c->out->len - c->sent, CTL_MAX_SEND), MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0)
			return false;	/* the client went: nothing to tell */
		c->sent += (size_t)n;
		touch(c);
	}
	return false;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer data)
{
	struct ctl_conn *c = data;

	(void)fd;
	(void)cond;
	if (flush_out(c))
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	conn_close(c);
	return G_SOURCE_REMOVE;
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	struct ctl_conn *c = data;
	static char buf[CTL_MAX_REQUEST];	/* a datagram is read whole */
	char *nl, **argv;
	ssize_t n = read(fd, buf, sizeof(buf));
	GString *text;
	int ret;

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		c->watch = 0;
		conn_close(c);
		return G_SOURCE_REMOVE;
	}
	touch(c);
	g_string_append_len(c->in, buf, n);
	nl = memchr(c->in->str, '\n', c->in->len);
	if (!nl && c->in->len < CTL_MAX_REQUEST)
		return G_SOURCE_CONTINUE;
	if (!nl) {
		c->out = frame(false, "error: request too long\n");
	} else {
		*nl = 0;
		argv = g_strsplit(c->in->str, "\t", -1);
		text = g_string_new(NULL);
		ret = ctl_run(c->srv->env, argv, text);
		c->out = frame(ret == 0, text->str);
		g_string_free(text, TRUE);
		g_strfreev(argv);
	}
	c->watch = watch_fd(fd, G_IO_OUT, on_writable, c);
	return G_SOURCE_REMOVE;
}

/*
 * The uid a peer outside our user namespace shows as (the kernel's
 * overflowuid), or -1 in the initial namespace, where it is a real user.
 * Asked at each use: the run enters its namespace after making the socket.
 */
static uid_t outsider_uid(void)
{
	char *map = NULL, *text = NULL;
	unsigned inside, outside, count;
	uid_t uid = (uid_t)-1;

	if (g_file_get_contents("/proc/self/uid_map", &map, NULL, NULL) &&
	    sscanf(map, "%u %u %u", &inside, &outside, &count) == 3 &&
	    !(inside == 0 && outside == 0 && count == 4294967295u) &&
	    g_file_get_contents("/proc/sys/kernel/overflowuid", &text, NULL, NULL))
		uid = (uid_t)strtoul(text, NULL, 10);
	g_free(map);
	g_free(text);
	return uid;
}

bool ctl_peer_trusted(uid_t uid, bool shared)
{
	/* Outside our user namespace every uid looks the same: root (whom
	 * file permissions let through a socket that is ours alone), or,
	 * on a socket a group may open, any member. */
	return uid == geteuid() || uid == 0 || (!shared && uid == outsider_uid());
}

void ctl_server_adopt(struct ctl_server *srv, int fd)
{
	struct ctl_conn *c;

	if (srv->clients >= CTL_MAX_CLIENTS) {
		refuse(fd, "error: too many control clients\n");
		close(fd);
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c = g_new0(struct ctl_conn, 1);
	c->srv = srv;
	c->fd = fd;
	c->in = g_string_new(NULL);
	srv->clients++;
	c->watch = watch_fd(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, c);
	touch(c);
}

static void on_client(void *data, int cfd)
{
	struct ctl_server *srv = data;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		refuse(cfd, "error: permission denied\n");
		close(cfd);
		return;
	}
	if (cred.uid != geteuid() && cred.uid != 0) {
		if (cred.uid != outsider_uid()) {
			g_warning("control socket: refused a client of uid %u (pid %d)",
				  cred.uid, (int)cred.pid);
			refuse(cfd, "error: permission denied\n");
			close(cfd);
			return;
		}
		g_message("control socket: a client from outside our user namespace (root)");
	}
	ctl_server_adopt(srv, cfd);
}

static bool our_socket(const struct stat *st)
{
	return S_ISSOCK(st->st_mode) && st->st_uid == geteuid();
}

enum ctl_probe ctl_probe(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	enum ctl_probe r;
	int fd;

	if (lstat(path, &st) < 0)
		return CTL_NONE;
	if (!our_socket(&st) || strlen(path) >= sizeof(sa.sun_path))
		return CTL_NOT_OURS;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return CTL_NOT_OURS;
	/* A listener takes the connection (or its backlog is full: alive
	 * too); nobody listening is ECONNREFUSED. A SEQPACKET listener
	 * (EPROTOTYPE) is an attached host's hand-over socket, alive too
	 * (`ibemu start --remote`, socket/remote.h). */
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN ||
	    errno == EPROTOTYPE ? CTL_LIVE : errno == ECONNREFUSED ? CTL_STALE : CTL_NOT_OURS;
	close(fd);
	return r;
}

void ctl_unlink_if_ours(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && our_socket(&st))
		unlink(path);
}

int ctl_listen(const char *path, int type, int backlog, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, backlog) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot listen on %s: %s", path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct ctl_server *ctl_server_new(struct ctl_env *env, const char *path, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_server *srv;
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		g_set_error(err, IBEMU_ERROR, ENAMETOOLONG, "control socket path too long: %s", path);
		return NULL;
	}
	switch (ctl_probe(path)) {
	case CTL_LIVE:
		g_set_error(err, IBEMU_ERROR, EEXIST,
			    "an emulator is running under this name already (%s); choose another --name",
			    path);
		return NULL;
	case CTL_NOT_OURS:
		g_set_error(err, IBEMU_ERROR, EEXIST,
			    "%s is there and is not a control socket of ours: not touching it", path);
		return NULL;
	case CTL_STALE:
		unlink(path);	/* a crashed emulator's */
		break;
	case CTL_NONE:
		break;
	}
	if ((fd = ctl_listen(path, SOCK_STREAM, 16, err)) < 0)
		return NULL;
	if (lstat(path, &st) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot listen on %s: %s", path, g_strerror(errno));
		close(fd);
		return NULL;
	}
	srv = g_new0(struct ctl_server, 1);
	srv->env = env;
	srv->path = g_strdup(path);
	srv->ino = st.st_ino;
	srv->fd = fd;
	listener_start(&srv->listener, fd, "control socket", on_client, srv);
	return srv;
}

void ctl_server_free(struct ctl_server *srv)
{
	struct stat st;

	if (!srv)
		return;
	listener_stop(&srv->listener);
	close(srv->fd);
	/* Only our own file: another emulator may have taken the name since. */
	if (lstat(srv->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == srv->ino)
		unlink(srv->path);
	g_free(srv->path);
	g_free(srv);
}
