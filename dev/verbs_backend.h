/* SPDX-License-Identifier: MIT */
/*
 * What devfile_verbs.c's verbs files stand on, as umad_backend.h for the
 * umad files: this emulator's verbs devices (kernel/uverbs.h), or
 * another emulator's, reached over its fast path, for a host attached
 * with `--remote` (fast/remote_verbs.c, docs/many-hosts.md). The calls are
 * kernel/uverbs.h's, through a table, so that the file operations
 * (parked reads, the completion channel's upcall, poll) are written once
 * and stay on the host whose processes make the channels.
 */
#ifndef IBEMU_DEV_VERBS_BACKEND_H
#define IBEMU_DEV_VERBS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct verbs_backend {
	/* A verbs context of device @dev (the command file's open); NULL
	 * with errno. */
	void *(*ctx_open)(void *dev);
	void (*ctx_close)(void *c);
	/* Call @fn(@ctx) whenever a record is queued on @c. */
	void (*ctx_set_wakeup)(void *c, void (*fn)(void *), void *ctx);
	bool (*ctx_readable)(const void *c);
	/* uverbs_ctx_write, _read, _queue and _ioctl's contracts. */
	ssize_t (*ctx_write)(void *c, const void *buf, size_t count);
	ssize_t (*ctx_read)(void *c, void *buf, size_t count);
	void (*ctx_queue)(void *c, const void *rec, size_t len);
	int (*ctx_ioctl)(void *c, unsigned cmd, void *arg);
	/* An async event queue of device @dev; NULL with errno. */
	void *(*events_open)(void *dev);
	void (*events_close)(void *ev);
	void (*events_set_wakeup)(void *ev, void (*fn)(void *), void *ctx);
	bool (*events_readable)(const void *ev);
	ssize_t (*events_read)(void *ev, void *buf, size_t count);
};

/* This emulator's devices: @dev is a struct uverbs_dev * (the ctx of a
 * VN_VCMD or VN_VEVENTS vnode). */
extern const struct verbs_backend verbs_backend_local;

/* A VN_VCMD_FWD or VN_VEVENTS_FWD vnode's ctx: a verbs file another
 * emulator serves. */
struct verbs_fwd {
	const struct verbs_backend *be;
	void *dev;
};

#endif
