/* SPDX-License-Identifier: MIT */
/*
 * Hosts that attach to this emulator from elsewhere (docs/many-hosts.md):
 * a FAST_HOST request on the emulator's fast socket names nodes; they
 * become a umad host of their own with its mock sysfs, served here to the
 * channels the request's channel hands over (FAST_ADOPT), and live while
 * that channel is open.
 * A node serves one host at a time: this emulator's own or one remote.
 */
#ifndef IBEMU_FAST_ATTACH_H
#define IBEMU_FAST_ATTACH_H

#include "ctl/ctl.h"
#include "fast/fastpath.h"

struct attach_owner;

/* Take FAST_HOST requests on @fp, the emulator's fast socket;
 * attachments show in @env's `status`; their channels reach @ctl by
 * FAST_CTL (`ibemu ctl` on the host) when the attacher may steer us. */
struct attach_owner *attach_owner_new(struct ctl_env *env, struct fastpath *fp,
				      struct ctl_server *ctl);
/* After fastpath_free(@fp), which detached every remote host (their
 * files released, as on a last close). */
void attach_owner_free(struct attach_owner *o);

#endif
