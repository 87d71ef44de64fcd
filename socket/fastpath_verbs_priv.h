/* SPDX-License-Identifier: MIT */
/*
 * A verbs context served over the fast path: its ring (fastpath_verbs.c),
 * and whether it takes the direct path (kernel/uverbs_direct.c).
 */
#ifndef IBEMU_SOCKET_FASTPATH_VERBS_PRIV_H
#define IBEMU_SOCKET_FASTPATH_VERBS_PRIV_H

#include <glib.h>

#include "abi/verbs_ring.h"

struct fast_file;

struct fast_verbs {
	struct fast_file *ff;		/* the file (fastpath_priv.h) */
	struct uverbs_ctx *ctx;		/* its context */
	struct verbs_ring *ring;	/* FAST_VRING's */
	uint64_t head;			/* ours of ring->head */
};

#endif
