/* SPDX-License-Identifier: MIT */
/*
 * What devfile.c's umad files stand on: this host's umad core
 * (kernel/umad.h) for the files of an emulator's own fabric, or another
 * emulator's, reached over its fast path, for a host attached with
 * `--remote` (fast/remote_umad.c, docs/many-hosts.md). The same calls as
 * the umad core's, through a table, so that the FUSE file operations
 * (parked reads, pieces of long calls, poll, ENOSPC) are written once.
 */
#ifndef IBEMU_DEV_UMAD_BACKEND_H
#define IBEMU_DEV_UMAD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct umad_backend {
	/* A new open file of @dev for thread @pid; NULL with errno. */
	void *(*open)(void *dev, int pid, const char *path);
	/* Call @fn(@ctx) whenever a packet is queued on @f. */
	void (*set_wakeup)(void *f, void (*fn)(void *), void *ctx);
	bool (*readable)(const void *f);
	size_t (*next_len)(const void *f);	/* the head packet's read length, 0: none */
	unsigned (*hdr_size)(const void *f);
	ssize_t (*read)(void *f, void *buf, size_t count);	/* umad_read's rules */
	ssize_t (*write)(void *f, const void *buf, size_t count);
	int (*check_write_size)(void *f, size_t count);
	int (*ioctl)(void *f, unsigned cmd, void *arg, size_t *out_len);
	void (*release)(void *f);
};

/* The umad core of this emulator: @dev is a struct umad_dev * (devfile.c). */
extern const struct umad_backend umad_backend_local;

/* A VN_UMAD_FWD vnode's ctx: a device another emulator serves. */
struct umad_fwd {
	const struct umad_backend *be;
	void *dev;
};

/*
 * A VN_ISSM_FWD vnode's ctx: an issm file another emulator serves, whose
 * holder sets IsSM on the port there. @open asks for it as an open(2) with
 * @flags would (O_NONBLOCK: EAGAIN at once while it is held; else wait
 * until the holder lets go) and calls @done(@ctx, holding, 0), or
 * @done(@ctx, NULL, -errno), from the event loop once answered. It returns
 * the pending ask, or NULL with errno; @cancel drops a pending ask (the open
 * was interrupted: @done is not called); @release lets go of a holding.
 */
struct issm_fwd {
	void *(*open)(struct issm_fwd *f, int flags,
		      void (*done)(void *ctx, void *holding, int err), void *ctx);
	void (*cancel)(void *pending);
	void (*release)(void *holding);
};

#endif
