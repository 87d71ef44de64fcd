/* SPDX-License-Identifier: MIT */
/*
 * CUSE mode's devices (docs/fuse-cuse.md): each umadN and issmN
 * vnode becomes a character device /dev/infiniband/<name> that every
 * process on the host sees, one CUSE connection (/dev/cuse) each, served
 * on the GLib main loop by the same devfile.c operations as namespace
 * mode. The devices go away when their connection closes: on free, or
 * when the process dies.
 */
#ifndef IBEMU_DEV_CUSEDEV_H
#define IBEMU_DEV_CUSEDEV_H

#include <glib.h>
#include <sys/types.h>

#include "dev/vfs.h"

struct cusedevs;

struct cusedevs *cusedevs_new(void);
/* Register one device per device file of @dir whose kind is a character
 * device (kfile_ops.chardev: umadN, issmN, uverbsN), this emulator's or an
 * attached host's (`start --remote`). */
int cusedevs_add_dir(struct cusedevs *cd, struct vnode *dir, GError **err);
/* Run the main loop until every device node exists under /dev (the kernel
 * makes them after CUSE_INIT), at most @timeout_ms; then give them @mode
 * and @gid when those are not -1. */
int cusedevs_wait(struct cusedevs *cd, unsigned timeout_ms, int mode, gid_t gid,
		  GError **err);
/* "umad0 umad1 issm0 issm1" */
char *cusedevs_names(const struct cusedevs *cd);
void cusedevs_free(struct cusedevs *cd);

#endif
