/* SPDX-License-Identifier: MIT */
/*
 * What fastpath_verbs.c (a verbs context's ring) and fastpath_direct.c
 * (the direct path's inboxes) share of a context served over the fast
 * path.
 */
#ifndef IBEMU_FAST_FASTPATH_VERBS_PRIV_H
#define IBEMU_FAST_FASTPATH_VERBS_PRIV_H

#include <glib.h>

#include "lib/verbs_ring.h"

struct direct_inbox;
struct fast_file;

struct fast_verbs {
	struct fast_file *ff;		/* the file (fastpath_priv.h) */
	struct uverbs_ctx *ctx;		/* its context */
	struct verbs_ring *ring;	/* FAST_VRING's */
	uint64_t head;			/* ours of ring->head */
	struct direct_inbox *inbox;	/* where senders write for it, or NULL */
	bool direct_ok;			/* takes an inbox (FAST_VRING's arg 1) */
};

/* fastpath_direct.c: the file closes; the direct paths to and from it go. */
void fast_direct_forget(struct fast_verbs *fv);

#endif
