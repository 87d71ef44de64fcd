/* SPDX-License-Identifier: MIT */
/*
 * CUSE mode's host plumbing: the checks before start, and the mock sysfs
 * placed over the host's own /sys/class (the same overlay and binds as
 * namespace mode, but in the host's mount namespace, so every process
 * sees them) with the verbs provider named in /etc/libibverbs.d and
 * ib_core kept from autoloading, all taken away again, also after a crash.
 */
#ifndef IBEMU_NS_HOSTMODE_H
#define IBEMU_NS_HOSTMODE_H

#include <glib.h>

struct fusefs;

/* Root, /dev/cuse, no real InfiniBand device and no ib_core: else why
 * not, in @err. */
int host_preflight(GError **err);
/* Remove the mounts (how many) and the modprobe blacklist of an ibemu
 * that is gone. */
unsigned host_unmount(void);
/* Serve @fs and place its infiniband/ and infiniband_mad/ over /sys/class. */
int host_mount(struct fusefs *fs, GError **err);

#endif
