/* SPDX-License-Identifier: MIT */
/*
 * The fast path's server side (lib/fast_wire.h, docs/fast-path.md): the
 * third front-end of the umad files beside FUSE and CUSE. It listens on a
 * SOCK_SEQPACKET socket; each connection opens one umad file of the host
 * and is its request channel; the file's packets go out on its data socket
 * as they are queued, and the file is released when every holder of the
 * data socket has closed it, as the kernel releases on the last close.
 */
#ifndef IBEMU_CUSE_FASTPATH_H
#define IBEMU_CUSE_FASTPATH_H

#include <glib.h>

#include "emulator/umad.h"

struct fastpath;

/* Listen on @path (made 0600; an old socket there is replaced). */
struct fastpath *fastpath_new(struct umad_host *host, const char *path, GError **err);
/* Stop listening, release every file, remove the socket. */
void fastpath_free(struct fastpath *fp);

#endif
