/* SPDX-License-Identifier: MIT */
/*
 * The fast path's server side (abi/fast_wire.h, docs/fast-path.md): the
 * third front-end of the umad files beside FUSE and CUSE. It listens on a
 * SOCK_SEQPACKET socket; each connection opens one umad file of the host
 * and is its request channel; the file's packets go out on its data socket
 * as they are queued, and the file is released when every holder of the
 * data socket has closed it, as the kernel releases on the last close.
 */
#ifndef IBEMU_SOCKET_FASTPATH_H
#define IBEMU_SOCKET_FASTPATH_H

#include <glib.h>

#include "kernel/umad.h"

struct fastpath;

/* Listen on @path (made 0600; an old socket there is replaced), or on
 * nothing for NULL: then channels come by fastpath_adopt() only. */
struct fastpath *fastpath_new(struct umad_host *host, const char *path, GError **err);
/*
 * Let @group (a name or number) connect too: the socket is made 0660 and
 * that group's (docs/many-hosts.md: for a bind mount into a container).
 * A peer that is not ours or root's may only attach a host (FAST_HOST, and
 * FAST_ADOPT on it); anything else it asks is refused with EACCES. 0, or
 * -1 with @err.
 */
int fastpath_open_to_group(struct fastpath *fp, const char *group, GError **err);
/* @fd, a connected SOCK_SEQPACKET socket, is a new channel (ours now). */
void fastpath_adopt(struct fastpath *fp, int fd);
/* How many channels are connected (an attachment's cap, socket/attach.c). */
unsigned fastpath_channels(const struct fastpath *fp);
/* Stop listening, release every file, remove the socket. */
void fastpath_free(struct fastpath *fp);

/* Answer FAST_SYSFS_LIST and FAST_SYSFS_READ from @vfs (the host's mock
 * sysfs, as mounted: "infiniband/...", "infiniband_mad/...", "dev/..."). */
struct vfs;
void fastpath_set_vfs(struct fastpath *fp, struct vfs *vfs);

/* Answer FAST_CTL (a channel becomes a connection of @ctl's, as if to
 * its socket), or refuse it with EACCES when @refused (the channels of a
 * host whose attacher may not steer the fabric). */
struct ctl_server;
void fastpath_set_ctl(struct fastpath *fp, struct ctl_server *ctl, bool refused);

/*
 * Answer FAST_HOST (docs/many-hosts.md) with @begin: it gets the channel's
 * peer and the request's payload, and returns a handle for the attachment,
 * or NULL with -errno in *@err; either way its words (the socket's path,
 * or why not) go to @out. @end gets the handle when the channel closes.
 */
typedef void *(*fast_host_begin_fn)(void *ctx, int pid, unsigned uid, bool guest,
				    const char *payload, size_t n, GString *out, int *err);
typedef void (*fast_host_end_fn)(void *ctx, void *handle);
/* FAST_ADOPT on that channel: @fd is the handle's host's new channel. */
typedef int (*fast_host_adopt_fn)(void *ctx, void *handle, int fd);
/* FAST_PING on it, with the round trip the host measured (ns, not 0). */
typedef void (*fast_host_rtt_fn)(void *ctx, void *handle, uint64_t rtt_ns);
void fastpath_set_hosting(struct fastpath *fp, fast_host_begin_fn begin, fast_host_end_fn end,
			  fast_host_adopt_fn adopt, fast_host_rtt_fn rtt, void *ctx);

#endif
