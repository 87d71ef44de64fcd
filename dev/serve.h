/* SPDX-License-Identifier: MIT */
/*
 * The serve loop both front-ends share: a FUSE mount (fusefs.c) and each
 * CUSE device (cusedev.c) is a libfuse session whose fd is a source on the
 * main loop; this reads and dispatches its requests.
 */
#ifndef IBEMU_DEV_SERVE_H
#define IBEMU_DEV_SERVE_H

#include <glib-unix.h>
#include <stdbool.h>
#include <stdint.h>

struct fuse_session;
struct fuse_buf;

/*
 * Give @se the connection @fd (/dev/fuse we mounted, or /dev/cuse), which
 * the session then owns and closes. "/dev/fd/N" as the mount point does it
 * in every libfuse 3 release; fuse_session_custom_io came only in 3.13,
 * after Ubuntu 22.04's 3.10. -1 on failure.
 */
int serve_attach(struct fuse_session *se, int fd);

/*
 * Serve requests waiting on @fd (the connection of @se), and keep looking
 * for a short while after each: a libibumad round trip is three requests
 * in a row. While a request is being dispatched, *@unique (if not NULL)
 * holds its id, for an adapter that writes a reply of its own; 0 between
 * requests. false when the connection has closed.
 */
bool serve_requests(struct fuse_session *se, struct fuse_buf *buf, int fd, uint64_t *unique);

/* Look at @fd for up to @us microseconds: true as soon as it is readable
 * (a client's next request, worth serving before going back to sleep). */
bool serve_next_soon(int fd, int64_t us);

/* Watch @fd on the main loop, calling @fn when a request waits. */
guint serve_watch(int fd, GUnixFDSourceFunc fn, void *data);

#endif
