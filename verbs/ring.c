/* SPDX-License-Identifier: MIT */
/*
 * The receive side of the fast path (docs/verbs.md "Data path", "The
 * direct path"): a context takes its records from rings it consumes
 * (abi/verbs_ring.h), all read here. One is its receive ring, which the
 * daemon fills; the others are the sub-rings of its inbox, which senders
 * granted a slot there fill themselves, read only through the bindings
 * the daemon wrote in the inbox's page (abi/verbs_inbox.h). A program
 * that polls its CQ takes them on its own thread (cq.c), the fast reader
 * when it does not (thread.c); both under ctx->lock.
 *
 * Order, for each sending QP: the inbox first, then the records the ring
 * held before it (ibemu_ring_take), so that what a sender wrote in its
 * sub-ring before its grant ended comes before what it sent through the
 * daemon after (direct.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/verbs_inbox.h"
#include "abi/verbs_ring.h"
#include "verbs/provider.h"

/* ---- the sub-rings of the inbox ------------------------------------------ */

static struct verbs_ring *rx_sub(const struct ibemu_context *ctx, unsigned i)
{
	return (struct verbs_ring *)(ctx->rx_area + (size_t)i * VERBS_SUB_BYTES);
}

/* What take_sub counts of what it took, as the engine counts on a port. */
struct taken {
	struct ibemu_context *ctx;
	uint64_t packets, dwords;
};

static void take_one(void *arg, const struct verbs_wire_pkt *p, const char *payload)
{
	struct taken *t = arg;

	ibemu_on_packet(t->ctx, p, payload);
	t->packets++;
	t->dwords += (verbs_pkt_wire_bytes(p) + 3) / 4;
}

/* What slot @i's sub-ring holds that its binding lets us take. */
static bool take_sub(struct ibemu_context *ctx, unsigned i)
{
	struct verbs_bind *own = &ctx->inbox->bind[i], b;
	struct verbs_ring *s = rx_sub(ctx, i);
	struct taken t = { ctx, 0, 0 };
	uint64_t tail = ctx->rx[i].tail, head;

	if ((head = verbs_sub_look(s, own, ctx->rx[i].gen, tail, &b)) == tail)
		return false;
	verbs_sub_walk(&b, s->data, tail, head, take_one, &t);
	__atomic_store_n(&ctx->rx[i].tail, head, __ATOMIC_RELAXED);
	verbs_ring_release(&s->tail, head);
	/* Ours: the daemon frees the slot, and counts, by these. */
	__atomic_store_n(&own->packets, own->packets + t.packets, __ATOMIC_RELAXED);
	__atomic_store_n(&own->dwords, own->dwords + t.dwords, __ATOMIC_RELAXED);
	__atomic_store_n(&own->taken, head, __ATOMIC_RELEASE);
	return true;
}

static bool inbox_pending(const struct ibemu_context *ctx)
{
	const struct verbs_inbox *ib = __atomic_load_n(&ctx->inbox, __ATOMIC_ACQUIRE);
	uint32_t active;
	unsigned i;

	if (!ib)
		return false;
	active = __atomic_load_n(&ib->active, __ATOMIC_ACQUIRE);
	for (i = 0; active; i++, active >>= 1) {
		uint64_t tail = __atomic_load_n(&ctx->rx[i].tail, __ATOMIC_RELAXED), head;

		if (!(active & 1) || !__atomic_load_n(&ctx->rx[i].gen, __ATOMIC_RELAXED))
			continue;
		head = verbs_ring_acquire(&rx_sub(ctx, i)->head);
		/* A hint: a grant taken back holds nothing past its limit. */
		if (__atomic_load_n(&ib->bind[i].open, __ATOMIC_ACQUIRE) == VERBS_BIND_CLOSED &&
		    tail == __atomic_load_n(&ib->bind[i].limit, __ATOMIC_RELAXED))
			continue;
		if (head != tail)
			return true;
	}
	return false;
}

static bool inbox_take(struct ibemu_context *ctx)
{
	uint32_t active;
	bool took = false;
	unsigned i;

	if (!ctx->inbox)
		return false;
	active = __atomic_load_n(&ctx->inbox->active, __ATOMIC_ACQUIRE);
	for (i = 0; i < VERBS_INBOX_SUBS; i++)
		if ((active >> i & 1) && ctx->rx[i].gen && take_sub(ctx, i))
			took = true;
	if (took)
		ibemu_flush(ctx);	/* what the packets answered */
	return took;
}

/* Slot @i's place made anonymous zeros again: nothing there to take. */
static void rx_clear(struct ibemu_context *ctx, unsigned i)
{
	if (mmap(rx_sub(ctx, i), VERBS_SUB_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		ibemu_err("cannot unmap a direct path's sub-ring: %s", strerror(errno));
	__atomic_store_n(&ctx->rx[i].gen, 0, __ATOMIC_RELAXED);
	ctx->rx[i].tail = 0;
}

/* Slot @i's sub-ring of binding @gen mapped in its place, and what it
 * holds taken now, where the daemon's word of it stands among the ring's
 * records (the order of each QP: the top). */
static void rx_map(struct ibemu_context *ctx, unsigned i, uint32_t gen)
{
	struct verbs_inbox_ask a = { .gen = gen, .sub = (uint8_t)i };
	void *m = MAP_FAILED;
	int memfd = -1;

	if (ibemu_fast_ask(ctx, FAST_VINBOX, VERBS_INBOX_SUB, &a, sizeof(a), NULL, 0, &memfd) >= 0 &&
	    memfd >= 0)
		m = mmap(rx_sub(ctx, i), VERBS_SUB_BYTES, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, memfd, 0);
	if (memfd >= 0)
		close(memfd);
	if (m == MAP_FAILED) {
		rx_clear(ctx, i);	/* bound again since, or out of memory */
		return;
	}
	ctx->rx[i].tail = 0;
	__atomic_store_n(&ctx->rx[i].gen, gen, __ATOMIC_RELAXED);
	/* The reader sleeps: this sender must ring too (then a look). */
	if (__atomic_load_n(&ctx->ring->sleeping, __ATOMIC_RELAXED)) {
		verbs_ring_flag_set(&rx_sub(ctx, i)->sleeping, true);
		verbs_ring_fence();
	}
	take_sub(ctx, i);
}

/* The binding page and eventfd, and the place for the sub-rings. */
static bool map_page(struct ibemu_context *ctx)
{
	struct verbs_inbox_ask a = { 0 };
	void *m = MAP_FAILED, *area;
	int memfd = -1, bell = -1;

	if (ibemu_fast_ask(ctx, FAST_VINBOX, VERBS_INBOX_PAGE, &a, sizeof(a), NULL, 0, &memfd) >= 0 &&
	    memfd >= 0 &&
	    ibemu_fast_ask(ctx, FAST_VINBOX, VERBS_INBOX_BELL, &a, sizeof(a), NULL, 0, &bell) >= 0 &&
	    bell >= 0)
		m = mmap(NULL, VERBS_INBOX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (memfd >= 0)
		close(memfd);
	area = m == MAP_FAILED ? MAP_FAILED :
	       mmap(NULL, VERBS_INBOX_SUBS * VERBS_SUB_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		ibemu_err("cannot map this context's inbox: %s", strerror(errno));
		if (m != MAP_FAILED)
			munmap(m, VERBS_INBOX_BYTES);
		if (bell >= 0)
			close(bell);
		return false;
	}
	ctx->rx_area = area;
	ctx->inbox_bell = bell;
	__atomic_store_n(&ctx->inbox, m, __ATOMIC_RELEASE);
	return true;
}

void ibemu_inbox_map(struct ibemu_context *ctx)
{
	unsigned i;

	/* Kept out (FAST_VRING said so): no sender is bound here. */
	if (ibemu_direct_off() || (!ctx->inbox && !map_page(ctx)))
		return;
	for (i = 0; i < VERBS_INBOX_SUBS; i++) {
		uint32_t gen = __atomic_load_n(&ctx->inbox->bind[i].gen, __ATOMIC_ACQUIRE);

		if (gen && gen != ctx->rx[i].gen)
			rx_map(ctx, i, gen);
	}
}

void ibemu_inbox_unmap(struct ibemu_context *ctx)
{
	if (!ctx->inbox)
		return;
	munmap(ctx->inbox, VERBS_INBOX_BYTES);
	munmap(ctx->rx_area, VERBS_INBOX_SUBS * VERBS_SUB_BYTES);
	close(ctx->inbox_bell);
	ctx->inbox = NULL;
	ctx->rx_area = NULL;
	memset(ctx->rx, 0, sizeof(ctx->rx));
}

/* ---- the receive ring, and both together --------------------------------- */

static void on_piece(void *ctx, const char *buf, uint64_t n)
{
	ibemu_on_records(ctx, buf, (ssize_t)n);
}

bool ibemu_records_pending(const struct ibemu_context *ctx)
{
	return verbs_ring_acquire(&ctx->ring->head) != ctx->ring->tail || inbox_pending(ctx);
}

bool ibemu_ring_take(struct ibemu_context *ctx)
{
	struct verbs_ring *r = ctx->ring;
	uint64_t tail = r->tail, head = verbs_ring_acquire(&r->head);
	bool took = inbox_take(ctx);	/* first: the top */

	if (tail == head)
		return took;
	verbs_ring_walk(r->data, VERBS_RING_DATA, tail, head, on_piece, ctx);
	verbs_ring_release(&r->tail, head);
	/* The daemon waits for room: say there is. */
	verbs_ring_fence();
	if (verbs_ring_flag_take(&r->want_room))
		(void)send(ctx->fast_data, "r", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return true;
}

void ibemu_rx_sleeping(struct ibemu_context *ctx, bool on)
{
	unsigned i;

	verbs_ring_flag_set(&ctx->ring->sleeping, on);
	/* Each place is always mapped: a sub-ring, or zeros; one mapped
	 * meanwhile gets the word from rx_map. */
	if (__atomic_load_n(&ctx->inbox, __ATOMIC_ACQUIRE))
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			verbs_ring_flag_set(&rx_sub(ctx, i)->sleeping, on);
	if (on)
		verbs_ring_fence();	/* then the look at the heads */
}
