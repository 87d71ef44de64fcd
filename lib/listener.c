/* SPDX-License-Identifier: MIT */
/* Accepting with a back-off at the fd limit; see listener.h. */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>

#include <glib-unix.h>

#include "lib/listener.h"
#include "lib/watch.h"

static gboolean on_listen(gint fd, GIOCondition cond, gpointer data);

static gboolean on_pause_over(gpointer data)
{
	struct listener *l = data;

	l->pause = 0;
	l->watch = watch_fd(l->fd, G_IO_IN, on_listen, l);
	return G_SOURCE_REMOVE;
}

static bool out_of_fds(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static gboolean on_listen(gint fd, GIOCondition cond, gpointer data)
{
	struct listener *l = data;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	(void)cond;
	if (c >= 0) {
		l->on_client(l->data, c);
		return G_SOURCE_CONTINUE;
	}
	if (!out_of_fds(errno))
		return G_SOURCE_CONTINUE;	/* the client went meanwhile, say */
	/* Once, and again only after a quiet while: at the limit, a freed
	 * fd lets one client in and the next pause begins at once. */
	if (!l->said_at || g_get_monotonic_time() - l->said_at > LISTENER_SAY_AGAIN_US) {
		g_warning("%s: cannot accept a client: %s; trying again every %d ms",
			  l->what, g_strerror(errno), LISTENER_PAUSE_MS);
		l->said_at = g_get_monotonic_time();
	}
	l->watch = 0;
	l->pause = g_timeout_add(LISTENER_PAUSE_MS, on_pause_over, l);
	return G_SOURCE_REMOVE;
}

void listener_start(struct listener *l, int fd, const char *what,
		    void (*on_client)(void *data, int fd), void *data)
{
	*l = (struct listener){ .fd = fd, .what = what, .on_client = on_client, .data = data };
	l->watch = watch_fd(fd, G_IO_IN, on_listen, l);
}

void listener_stop(struct listener *l)
{
	if (l->watch)
		g_source_remove(l->watch);
	if (l->pause)
		g_source_remove(l->pause);
	l->watch = l->pause = 0;
}
