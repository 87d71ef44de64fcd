/* SPDX-License-Identifier: MIT */
/*
 * The direct path (docs/verbs.md "The direct path", abi/verbs_inbox.h):
 * a QP whose packets the daemon has found nothing to do with (no fault
 * rule, no capture, a path that holds) writes them into the receiving
 * context's inbox itself, and the receiver takes them there as it takes
 * its ring: no daemon, no system call, no other thread between a post and
 * the peer's poll. The daemon keeps the authority: it grants a sub-ring
 * (a memfd of that grant's own) for one QP's packets on one path
 * (FAST_VDIRECT) and takes every grant back before anything on the way
 * changes; a QP without one sends through it, as before. The receiver
 * trusts only its binding page, which no sender maps: it takes from a
 * sub-ring the packets its binding lets through, with the binding's
 * fields, up to the limit of a grant taken back (abi/verbs_inbox.h).
 *
 * Order, for each QP: a grant is asked for only when nothing of the
 * context's waits for the daemon (and the daemon gives one only when the
 * receiver has read all it queued); a QP that sends through the daemon
 * again (its grant taken back, the sub-ring full, another destination)
 * drops its grant first, and the receiver takes its inbox before the ring
 * records it saw when it began (ibemu_ring_take), so what went the short
 * way first is taken first.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/verbs_inbox.h"
#include "verbs/provider.h"

/* After a refusal, the QP asks again no sooner than this (and twice as
 * late after each further one, to REFUSED_MAX_US): what it sends
 * meanwhile goes through the daemon. */
#define REFUSED_US		1000
#define REFUSED_MAX_US		(100 * 1000)
/* A full sub-ring: how long the sender waits for room before the packet
 * goes through the daemon (whose flow control then holds it back, or
 * drops it for a receiver that reads nothing). */
#define FULL_WAIT_US		200

bool ibemu_direct_off(void)
{
	static int off = -1;

	if (off < 0) {
		const char *e = getenv("IBEMU_DIRECT");

		off = e && !strcmp(e, "0");
	}
	return off;
}

/* The fields of a packet header a grant holds for. */
static bool same_way(const struct verbs_wire_pkt *a, const struct verbs_wire_pkt *b)
{
	return a->port == b->port && a->sl == b->sl && a->dlid == b->dlid &&
	       a->slid == b->slid && a->pkey_index == b->pkey_index && a->dqpn == b->dqpn &&
	       a->qkey == b->qkey && !(b->flags & VERBS_PKT_GRH);
}

static void refused(struct ibemu_dtx *d)
{
	d->backoff_us = d->backoff_us ? d->backoff_us * 2 : REFUSED_US;
	if (d->backoff_us > REFUSED_MAX_US)
		d->backoff_us = REFUSED_MAX_US;
	d->retry_us = ibemu_now_us() + d->backoff_us;
}

/* The eventfd of inbox @id, asked for if need be (a slot of a peer no QP
 * writes to any more is taken over when all are used). */
static struct ibemu_peer *peer_of(struct ibemu_context *ctx, uint64_t id)
{
	struct verbs_inbox_ask a = { .peer = id };
	struct ibemu_peer *p, *free_one = NULL;
	struct ibemu_qp *qp;
	unsigned i;
	int bell = -1;

	for (i = 0; i < IBEMU_PEERS_MAX; i++) {
		p = &ctx->peers[i];
		if (p->id == id)
			return p;
		if (!free_one && !p->id)
			free_one = p;
	}
	for (i = 0; !free_one && i < IBEMU_PEERS_MAX; i++) {
		p = &ctx->peers[i];
		for (qp = ctx->qps; qp && qp->dtx.peer != p; qp = qp->next)
			;
		if (!qp) {
			close(p->bell);
			memset(p, 0, sizeof(*p));
			free_one = p;
		}
	}
	if (!free_one ||
	    ibemu_fast_ask(ctx, FAST_VINBOX, VERBS_INBOX_BELL, &a, sizeof(a), NULL, 0, &bell) < 0 ||
	    bell < 0)
		return NULL;
	free_one->id = id;
	free_one->bell = bell;
	return free_one;
}

/* @d's grant let go: its sub-ring unmapped (the daemon's memfd stays
 * until the receiver has read it). */
static void drop(struct ibemu_dtx *d)
{
	if (d->sub)
		munmap(d->sub, VERBS_SUB_BYTES);
	d->sub = NULL;
	d->peer = NULL;
}

/* Ask the daemon for a grant for packets like @h: true when @qp has one. */
static bool ask_grant(struct ibemu_qp *qp, const struct verbs_wire_pkt *h)
{
	struct ibemu_context *ctx = qp->ctx;
	struct ibemu_dtx *d = &qp->dtx;
	struct verbs_direct_grant g;
	struct ibemu_peer *p = NULL;
	void *m = MAP_FAILED;
	int memfd = -1;

	if (ctx->fast_chan < 0 || !ctx->ring || ibemu_direct_off() || (h->flags & VERBS_PKT_GRH) ||
	    ibemu_now_us() < d->retry_us)
		return false;
	/* What waits for the daemon goes first (the order of each QP). */
	ibemu_flush(ctx);
	if (ctx->out_len || ctx->tx_held)
		return false;
	if (ibemu_fast_ask(ctx, FAST_VDIRECT, 0, h, sizeof(*h), &g, sizeof(g), &memfd) >= 0 &&
	    memfd >= 0 && g.sub < VERBS_INBOX_SUBS && (p = peer_of(ctx, g.peer)))
		m = mmap(NULL, VERBS_SUB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (memfd >= 0)
		close(memfd);
	if (m == MAP_FAILED) {
		refused(d);
		return false;
	}
	d->key = *h;
	d->g = g;
	d->peer = p;
	d->sub = m;
	d->backoff_us = 0;
	return true;
}

/* Room for @need bytes at @head, the sender's of @s: waited for a
 * little. */
static bool room(struct verbs_sub *s, uint64_t head, uint32_t need)
{
	uint64_t until = 0;

	while (head + need - __atomic_load_n(&s->tail, __ATOMIC_SEQ_CST) > VERBS_SUB_DATA) {
		uint64_t now = ibemu_now_us();

		if (!until)
			until = now + FULL_WAIT_US;
		else if (now > until)
			return false;
		sched_yield();
	}
	return true;
}

bool ibemu_direct_send(struct ibemu_qp *qp, const struct verbs_wire_pkt *h, const void *payload)
{
	struct ibemu_dtx *d = &qp->dtx;
	uint32_t len = (uint32_t)sizeof(*h) + h->len, skip;
	struct verbs_wire_pkt w;
	struct verbs_sub *s;
	uint64_t head;
	bool ok;

	if (!d->sub && !ask_grant(qp, h))
		return false;
	if (!same_way(&d->key, h)) {
		/* Another destination (UD): through the daemon from here,
		 * and no question a packet for a QP that sends to many. */
		drop(d);
		refused(d);
		return false;
	}
	s = d->sub;
	head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
	skip = verbs_ring_skip(head, len, VERBS_SUB_DATA);
	ok = __atomic_load_n(&s->grant, __ATOMIC_SEQ_CST) == d->g.grant &&
	     room(s, head, skip + len);
	if (ok) {
		verbs_ring_pad(s->data, VERBS_SUB_DATA, head, skip);
		head += skip;
		/* As the daemon would have delivered it (uverbs_qp_deliver);
		 * the receiver sets these fields from its binding again. */
		w = *h;
		w.rec.type = VERBS_REC_PKT;
		w.rec.len = len;
		w.port = d->g.rx_port;
		w.pkey_index = d->g.rx_pkey_index;
		w.slid = d->g.slid;
		w.pkey = d->g.pkey;
		memcpy(&s->data[head % VERBS_SUB_DATA], &w, sizeof(w));
		if (h->len)
			memcpy(&s->data[head % VERBS_SUB_DATA + sizeof(w)], payload, h->len);
		__atomic_store_n(&s->head, head + len, __ATOMIC_SEQ_CST);
		/* Taken back meanwhile? The daemon cleared the grant, then
		 * read head into the limit: within it, the receiver takes
		 * it; past it, it goes through the daemon (and the order
		 * holds: the receiver takes the sub-ring first). The daemon
		 * sets closed at once after. */
		if (__atomic_load_n(&s->grant, __ATOMIC_SEQ_CST) != d->g.grant) {
			while (!__atomic_load_n(&s->closed, __ATOMIC_SEQ_CST))
				sched_yield();
			ok = (int64_t)(__atomic_load_n(&s->limit, __ATOMIC_SEQ_CST) - (head + len)) >= 0;
		}
	}
	if (!ok) {
		/* Taken back, or full: the daemon's way, and ask again later. */
		drop(d);
		refused(d);
		return false;
	}
	if (__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&s->sleeping, 0, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;

		(void)!write(d->peer->bell, &one, sizeof(one));	/* or it is gone */
	}
	return true;
}

void ibemu_direct_drop(struct ibemu_qp *qp)
{
	drop(&qp->dtx);
}

/* ---- the receiving side -------------------------------------------------- */

static struct verbs_sub *rx_sub(const struct ibemu_context *ctx, unsigned i)
{
	return (struct verbs_sub *)(ctx->rx_area + (size_t)i * VERBS_SUB_BYTES);
}

/* Binding @i as the daemon wrote it for sub-ring @gen, read as a sequence
 * lock (abi/verbs_inbox.h): false while it is rewritten, or another's. */
static bool read_bind(const struct verbs_inbox *ib, unsigned i, uint32_t gen, struct verbs_bind *o)
{
	const struct verbs_bind *b = &ib->bind[i];

	if (!gen || __atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) != gen)
		return false;
	/* open before limit: the daemon writes limit, then clears open */
	o->open = __atomic_load_n(&b->open, __ATOMIC_SEQ_CST);
	o->limit = __atomic_load_n(&b->limit, __ATOMIC_SEQ_CST);
	o->sqpn = __atomic_load_n(&b->sqpn, __ATOMIC_RELAXED);
	o->dqpn = __atomic_load_n(&b->dqpn, __ATOMIC_RELAXED);
	o->qkey = __atomic_load_n(&b->qkey, __ATOMIC_RELAXED);
	o->ud = __atomic_load_n(&b->ud, __ATOMIC_RELAXED);
	o->port = __atomic_load_n(&b->port, __ATOMIC_RELAXED);
	o->sl = __atomic_load_n(&b->sl, __ATOMIC_RELAXED);
	o->slid = __atomic_load_n(&b->slid, __ATOMIC_RELAXED);
	o->dlid = __atomic_load_n(&b->dlid, __ATOMIC_RELAXED);
	o->pkey = __atomic_load_n(&b->pkey, __ATOMIC_RELAXED);
	o->pkey_index = __atomic_load_n(&b->pkey_index, __ATOMIC_RELAXED);
	return __atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == gen;
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
	struct verbs_sub *s = rx_sub(ctx, i);
	struct taken t = { ctx, 0, 0 };
	uint64_t tail = ctx->rx[i].tail, head;

	/* head before open: one read while the grant held was written
	 * before it was taken back */
	head = __atomic_load_n(&s->head, __ATOMIC_SEQ_CST);
	if (!read_bind(ctx->inbox, i, ctx->rx[i].gen, &b))
		return false;
	/* A sender's head, not ours to trust. */
	if ((head = verbs_sub_end(tail, head, b.open, b.limit)) == tail)
		return false;
	verbs_sub_walk(&b, s->data, tail, head, take_one, &t);
	__atomic_store_n(&ctx->rx[i].tail, head, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tail, head, __ATOMIC_SEQ_CST);
	/* Ours: the daemon frees the slot, and counts, by these. */
	__atomic_store_n(&own->packets, own->packets + t.packets, __ATOMIC_RELAXED);
	__atomic_store_n(&own->dwords, own->dwords + t.dwords, __ATOMIC_RELAXED);
	__atomic_store_n(&own->taken, head, __ATOMIC_SEQ_CST);
	return true;
}

bool ibemu_inbox_pending(const struct ibemu_context *ctx)
{
	const struct verbs_inbox *ib = __atomic_load_n(&ctx->inbox, __ATOMIC_ACQUIRE);
	uint32_t active;
	unsigned i;

	if (!ib)
		return false;
	active = __atomic_load_n(&ib->active, __ATOMIC_SEQ_CST);
	for (i = 0; active; i++, active >>= 1) {
		uint64_t tail = __atomic_load_n(&ctx->rx[i].tail, __ATOMIC_RELAXED), head;

		if (!(active & 1) || !__atomic_load_n(&ctx->rx[i].gen, __ATOMIC_RELAXED))
			continue;
		head = __atomic_load_n(&rx_sub(ctx, i)->head, __ATOMIC_SEQ_CST);
		/* A hint: a grant taken back holds nothing past its limit. */
		if (!__atomic_load_n(&ib->bind[i].open, __ATOMIC_SEQ_CST) &&
		    tail == __atomic_load_n(&ib->bind[i].limit, __ATOMIC_SEQ_CST))
			continue;
		if (head != tail)
			return true;
	}
	return false;
}

bool ibemu_inbox_take(struct ibemu_context *ctx)
{
	uint32_t active;
	bool took = false;
	unsigned i;

	if (!ctx->inbox)
		return false;
	active = __atomic_load_n(&ctx->inbox->active, __ATOMIC_SEQ_CST);
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
 * records (the order of each QP: direct.c's top). */
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
	if (__atomic_load_n(&ctx->ring->sleeping, __ATOMIC_SEQ_CST))
		__atomic_store_n(&rx_sub(ctx, i)->sleeping, 1, __ATOMIC_SEQ_CST);
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
		uint32_t gen = __atomic_load_n(&ctx->inbox->bind[i].gen, __ATOMIC_SEQ_CST);

		if (gen && gen != ctx->rx[i].gen)
			rx_map(ctx, i, gen);
	}
}

void ibemu_inbox_sleeping(struct ibemu_context *ctx, bool on)
{
	unsigned i;

	if (!__atomic_load_n(&ctx->inbox, __ATOMIC_ACQUIRE))
		return;
	/* Each place is always mapped: a sub-ring, or zeros; one mapped
	 * meanwhile gets the word from rx_map. */
	for (i = 0; i < VERBS_INBOX_SUBS; i++)
		__atomic_store_n(&rx_sub(ctx, i)->sleeping, on, __ATOMIC_SEQ_CST);
}

void ibemu_direct_close(struct ibemu_context *ctx)
{
	struct ibemu_qp *qp;
	unsigned i;

	for (qp = ctx->qps; qp; qp = qp->next)
		drop(&qp->dtx);
	for (i = 0; i < IBEMU_PEERS_MAX; i++)
		if (ctx->peers[i].id) {
			close(ctx->peers[i].bell);
			memset(&ctx->peers[i], 0, sizeof(ctx->peers[i]));
		}
	if (ctx->inbox) {
		munmap(ctx->inbox, VERBS_INBOX_BYTES);
		munmap(ctx->rx_area, VERBS_INBOX_SUBS * VERBS_SUB_BYTES);
		close(ctx->inbox_bell);
		ctx->inbox = NULL;
		ctx->rx_area = NULL;
		memset(ctx->rx, 0, sizeof(ctx->rx));
	}
}
