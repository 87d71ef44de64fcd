/* SPDX-License-Identifier: MIT */
/*
 * An fd watch on the default main context that GLib does not block while
 * its callback runs. g_unix_fd_add's source is blocked around each
 * dispatch (g_main_dispatch: block_source, unblock_source), which takes
 * its fd out of the poll set and puts it back, each a write to the
 * context's wake-up eventfd, and so one more poll and a read of that
 * eventfd before the next wait: four system calls a dispatch that carry
 * nothing. A watch that can recurse is not blocked; ours never run the
 * loop from their callbacks (the nested loops, nsmode.c and cusedev.c,
 * run before any watch of a device or channel exists).
 */
#ifndef IBEMU_LIB_WATCH_H
#define IBEMU_LIB_WATCH_H

#include <glib.h>
#include <glib-unix.h>

/* As g_unix_fd_add: the source's id. */
guint watch_fd(int fd, GIOCondition cond, GUnixFDSourceFunc fn, gpointer data);

#endif
