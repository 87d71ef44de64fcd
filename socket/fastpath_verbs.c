/* SPDX-License-Identifier: MIT */
/*
 * A verbs context's ring (abi/verbs_ring.h, docs/verbs.md "Data path"):
 * a context served over the fast path (fastpath_file.c) may ask for one
 * with FAST_VRING; from then on what it queues goes into memory both map
 * instead of onto its data socket, and the direct path
 * (kernel/uverbs_direct.c) may name it as a receiver.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "abi/verbs_ring.h"
#include "abi/verbs_wire.h"
#include "kernel/kfile.h"
#include "kernel/uverbs.h"
#include "lib/shm.h"
#include "socket/fastpath_priv.h"
#include "socket/fastpath_verbs_priv.h"
#include "socket/fastslot.h"

bool fast_verbs_put(struct fast_verbs *fv, const uint8_t *b, size_t len, size_t *off)
{
	struct verbs_ring *r = fv->ring;
	bool ok = true;

	while (*off + sizeof(struct verbs_wire_rec) <= len) {
		struct verbs_wire_rec rec;
		uint32_t skip;

		memcpy(&rec, b + *off, sizeof(rec));
		if (rec.len < sizeof(rec) || rec.len > len - *off)
			break;	/* uverbs_ctx_read's records are whole: not here */
		skip = verbs_ring_skip(fv->head, rec.len, VERBS_RING_DATA);
		if (!verbs_ring_fits(fv->head, verbs_ring_acquire(&r->tail), skip + rec.len,
				     VERBS_RING_DATA)) {
			/* Full: ask for a byte when there is room, then look
			 * once more (it may have come between). */
			verbs_ring_flag_set(&r->want_room, true);
			verbs_ring_fence();
			if (!verbs_ring_fits(fv->head, verbs_ring_acquire(&r->tail), skip + rec.len,
					     VERBS_RING_DATA)) {
				ok = false;
				break;
			}
			verbs_ring_flag_set(&r->want_room, false);
		}
		fv->head = verbs_ring_write(r, VERBS_RING_DATA, fv->head, skip, b + *off, rec.len,
					    NULL, 0);
		*off += rec.len;
		verbs_ring_release(&r->head, fv->head);
	}
	/* The provider's reader waits on the socket: wake it. */
	verbs_ring_fence();
	if (verbs_ring_flag_take(&r->sleeping))
		(void)send(fv->ff->data, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return ok;
}

/*
 * Rings at most, 128 MiB of them: beyond the 256 MiB that contexts may
 * hold queued (kernel/uverbs_data.c), this is what their packets may
 * take in the emulator. A context past it is served on its data socket,
 * as an attached host's is (README "Limits").
 */
#define RINGS_MAX	256

struct fast_verbs *fast_verbs_of(struct fast_file *ff)
{
	struct fast_verbs *fv;

	if (ff->ops != &uverbs_ctx_fops || !ff->file || ff->data < 0)
		return NULL;
	if (ff->verbs)
		return ff->verbs;
	fv = g_new0(struct fast_verbs, 1);
	fv->ff = ff;
	fv->ctx = ff->file;
	ff->verbs = fv;
	return fv;
}

/* Whether everything given to @fv's context is in its ring and read: a
 * grant to send to it may be given (kernel/uverbs_direct.c). */
static bool drained(void *arg)
{
	struct fast_verbs *fv = arg;

	return !fv->ff->pend_bytes && verbs_ring_acquire(&fv->ring->tail) == fv->head;
}

int fast_verbs_ring(struct fast_verbs *fv, bool direct, int *memfd)
{
	void *m;

	*memfd = -1;
	if (fv->ring)
		return -EBUSY;
	if (fv->ff->fp->rings >= RINGS_MAX)
		return -ENOSPC;
	/* Sealed, as the umad slot. What the client writes in it (tail,
	 * flags, records) can cost only its own packets: every offset here
	 * is from head, which is ours. */
	if (!(m = shm_sealed_map("ibemu-verbs-ring", VERBS_RING_BYTES, memfd)))
		return -errno;
	fv->ring = m;
	if (direct)
		uverbs_ctx_set_direct(fv->ctx, drained, fv);
	fv->ff->fp->rings++;
	/* What was sent on the socket before stays there, read first: the
	 * provider reads the socket until it has the answer to this. What
	 * waits to be sent goes into the ring from now. */
	return 0;
}

void fast_verbs_free(struct fast_verbs *fv)
{
	if (!fv)
		return;
	uverbs_ctx_set_direct(fv->ctx, NULL, NULL);	/* nothing refers to it */
	if (fv->ring) {
		munmap(fv->ring, VERBS_RING_BYTES);
		fv->ff->fp->rings--;
	}
	g_free(fv);
}
