/* SPDX-License-Identifier: MIT */
/* Fd watches without GLib's blocking around each dispatch (watch.h). */
#include "config.h"

#include "lib/watch.h"

guint watch_fd(int fd, GIOCondition cond, GUnixFDSourceFunc fn, gpointer data)
{
	GSource *src = g_unix_fd_source_new(fd, cond);
	guint id;

	g_source_set_can_recurse(src, TRUE);
	g_source_set_callback(src, (GSourceFunc)(void (*)(void))fn, data, NULL);
	id = g_source_attach(src, NULL);
	g_source_unref(src);
	return id;
}
