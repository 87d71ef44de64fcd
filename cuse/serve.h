/* SPDX-License-Identifier: MIT */
/*
 * The serve loop both front-ends share: a FUSE mount (fusefs.c) and each
 * CUSE device (cusedev.c) is a libfuse session whose fd is a source on the
 * main loop; this reads and dispatches its requests.
 */
#ifndef IBEMU_CUSE_SERVE_H
#define IBEMU_CUSE_SERVE_H

#include <glib-unix.h>
#include <stdbool.h>

struct fuse_session;
struct fuse_buf;

/* Serve requests waiting on @fd (the connection of @se), and keep looking
 * for a short while after each: a libibumad round trip is three requests
 * in a row. false when the connection has closed. */
bool serve_requests(struct fuse_session *se, struct fuse_buf *buf, int fd);

/* Watch @fd on the main loop, calling @fn when a request waits. */
guint serve_watch(int fd, GUnixFDSourceFunc fn, void *data);

#endif
