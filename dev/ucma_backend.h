/* SPDX-License-Identifier: MIT */
/*
 * What devfile_ucma.c's rdma_cm file stands on, as verbs_backend.h for the
 * verbs files: this emulator's connection manager (kernel/ucma.h), or
 * another emulator's, reached over its fast path, for a host attached with
 * `--remote` (fast/remote_ucma.c, docs/many-hosts.md). Parked reads and
 * poll stay on the host whose processes read.
 */
#ifndef IBEMU_DEV_UCMA_BACKEND_H
#define IBEMU_DEV_UCMA_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/ucma_wire.h"

struct ucma_backend {
	/* One open of the rdma_cm device @dev; NULL with errno. */
	void *(*open)(void *dev);
	void (*release)(void *f);
	/* Call @fn(@ctx) whenever an event is queued on @f. */
	void (*set_wakeup)(void *f, void (*fn)(void *), void *ctx);
	bool (*readable)(const void *f);
	/* One event (struct rdma_ucm_event_resp) into @buf: its size,
	 * -EAGAIN when none is queued, -EIO once the device is gone. */
	ssize_t (*read_event)(void *f, void *buf, size_t count);
	/* UCMA_IOC_CMD: ucma_wire_serve()'s work on @w; 0, or -errno when
	 * it could not be done (the answer is then not in @w). */
	int (*command)(void *f, struct ucma_wire_cmd *w);
	/* UCMA_IOC_TOKEN: what names @f to MIGRATE_ID. 0 or -errno. */
	int (*token)(void *f, uint64_t *token);
};

/* This emulator's: @dev is a struct ucma * (a VN_UCMA vnode's ctx). */
extern const struct ucma_backend ucma_backend_local;

/* A VN_UCMA_FWD vnode's ctx: an rdma_cm file another emulator serves. */
struct ucma_fwd {
	const struct ucma_backend *be;
	void *dev;
};

#endif
