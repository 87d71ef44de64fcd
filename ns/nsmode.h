/* SPDX-License-Identifier: MIT */
/*
 * Namespace mode plumbing (docs/architecture.md, docs/fuse-cuse.md
 * "Mount plumbing"): a private mount namespace (inside a user namespace
 * when not root) where /dev/infiniband and /sys/class/infiniband{,_mad}
 * are the FUSE tree, while the rest of /dev and /sys/class stay visible.
 */
#ifndef IBEMU_NS_NSMODE_H
#define IBEMU_NS_NSMODE_H

#include <glib.h>

#include "lib/log.h"

struct fusefs;

/*
 * The verbs provider that `make install` put in IBEMU_PROVIDER_DIR, or the
 * one built beside this ibemu binary when it runs from its build tree, as
 * the "driver" line of libibverbs.d names it (the path without
 * -rdmav34.so); NULL when there is none. Found on the first call: make it
 * before ns_enter(), as /proc/self/exe of a chrooted process can read as a
 * path outside the chroot once it has a mount namespace of its own (seen
 * in the VM tier).
 */
const char *ns_provider(void);
/* Enter the namespaces. Must run before any thread exists. */
int ns_enter(GError **err);
/*
 * Mount @fs and place its infiniband/, infiniband_mad/ and
 * infiniband_verbs/ dirs over /sys/class, name the verbs provider in
 * /etc/libibverbs.d, and with @with_dev put its dev/ at /dev/infiniband.
 * CUSE mode calls it in the host's own mount namespace without @with_dev.
 */
int ns_mount(struct fusefs *fs, bool with_dev, GError **err);

#endif
