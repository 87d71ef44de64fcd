/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level filesystem of namespace mode: device files umadN/issmN
 * and the mock sysfs, served from one vfs on the GLib main loop.
 * docs/fuse-cuse.md explains each choice: FOPEN_STREAM injected on device
 * opens, poll with notifications, parked reads and opens that honour
 * FUSE_INTERRUPT, direct_io everywhere.
 */
#ifndef IBEMU_DEV_FUSEFS_H
#define IBEMU_DEV_FUSEFS_H

#include <glib.h>

#include "dev/vfs.h"
#include "kernel/umad.h"
#include "lib/log.h"

struct fusefs;

struct fusefs *fusefs_new(struct vfs *vfs);
/* Mount on @dir (an existing directory) and serve from the main loop. */
int fusefs_mount(struct fusefs *fs, const char *dir, GError **err);
void fusefs_free(struct fusefs *fs);

#endif
