/* SPDX-License-Identifier: MIT */
/*
 * Hosts that attach to this emulator from elsewhere (docs/many-hosts.md):
 * a FAST_HOST request on the emulator's fast socket names nodes; they
 * become a umad host of their own with its mock sysfs, served here to the
 * channels the request's channel hands over (FAST_ADOPT), and live while
 * that channel is open.
 * A node serves one host at a time: this emulator's own or one remote.
 */
#ifndef IBEMU_SOCKET_ATTACH_H
#define IBEMU_SOCKET_ATTACH_H

#include "ctl/ctl.h"
#include "socket/fastpath.h"

struct attach_owner;

/* Take FAST_HOST requests on @fp, the emulator's fast socket;
 * attachments show in @env's `status`; their channels reach @ctl by
 * FAST_CTL (`ibemu ctl` on the host) when the attacher may steer us. */
struct attach_owner *attach_owner_new(struct ctl_env *env, struct fastpath *fp,
				      struct ctl_server *ctl);
/* After fastpath_free(@fp), which detached every remote host (their
 * files released, as on a last close); the run's own hosts go here. */
void attach_owner_free(struct attach_owner *o);

/*
 * A host of this run (`ibemu run --hosts`, docs/virtual-cluster.md):
 * @nodes, CAs that no host holds, become a host named @label as a remote
 * one's do, listed with the remotes (local), whose programs' fast path
 * is the socket @sock; until attach_owner_free(). NULL with @err when a
 * node cannot be attached or the socket not made.
 */
struct attachment;
struct attachment *attach_local(struct attach_owner *o, const char *label, char **nodes,
				const char *sock, GError **err);
/* Its mock sysfs and device files (to mount), its MAD layer, ports, and
 * status entry. */
struct vfs *attach_vfs(struct attachment *a);
struct umad_host *attach_umad_host(struct attachment *a);
struct host *attach_hw(struct attachment *a);
struct ctl_remote *attach_remote(struct attachment *a);
/* Its ibN interfaces carried over the fabric (kernel/ipoib_link.h). */
struct ipoib_links *attach_ipoib(struct attachment *a);

#endif
