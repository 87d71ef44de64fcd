/* SPDX-License-Identifier: MIT */
/*
 * CUSE mode's host plumbing: the checks before start, and the mock sysfs
 * placed over the host's own /sys/class (the same overlay and binds as
 * namespace mode, but in the host's mount namespace, so every process
 * sees them) and taken away again, also after a crash.
 */
#ifndef IBEMU_CLI_HOSTMODE_H
#define IBEMU_CLI_HOSTMODE_H

#include <glib.h>

struct fusefs;

/* Root, /dev/cuse, and no real InfiniBand device: else why not, in @err. */
int host_preflight(GError **err);
/* Remove the /sys/class mounts of an ibemu that is gone; how many. */
unsigned host_unmount(void);
/* Serve @fs and place its infiniband/ and infiniband_mad/ over /sys/class. */
int host_mount(struct fusefs *fs, GError **err);

#endif
