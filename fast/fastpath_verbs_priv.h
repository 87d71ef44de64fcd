/* SPDX-License-Identifier: MIT */
/*
 * What fastpath_verbs.c (a verbs file's channel) and fastpath_direct.c
 * (the direct path's inboxes) share of a verbs file.
 */
#ifndef IBEMU_FAST_FASTPATH_VERBS_PRIV_H
#define IBEMU_FAST_FASTPATH_VERBS_PRIV_H

#include <glib.h>

#include "lib/verbs_ring.h"

struct direct_inbox;

struct fast_verbs {
	struct uverbs_ctx *ctx;		/* a command file's, or */
	struct uverbs_events *ev;	/* an event file's, or */
	struct ucma_file *cm;		/* the rdma_cm file's */
	int data;			/* our end of the data socket */
	guint out_watch;		/* while the socket has no room */
	uint8_t *pend;			/* a datagram waiting for room (then no
					 * other is taken: the order holds) */
	size_t pend_len, pend_off;	/* pend_off: what of it went into the ring */
	struct verbs_ring *ring;	/* FAST_VRING's, or NULL */
	uint64_t head;			/* ours of ring->head */
	guint in_watch;			/* the provider's wake-ups (ring) */
	struct direct_inbox *inbox;	/* where senders write for it, or NULL */
	bool direct_ok;			/* takes an inbox (FAST_VRING's arg 1) */
};

/* fastpath_direct.c: the file closes; the direct paths to and from it go. */
void fast_direct_forget(struct fast_verbs *fv);

#endif
