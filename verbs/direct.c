/* SPDX-License-Identifier: MIT */
/*
 * The direct path (docs/verbs.md "The direct path", lib/verbs_inbox.h):
 * a QP whose packets the daemon has found nothing to do with (no fault
 * rule, no capture, a path that holds) writes them into the receiving
 * context's inbox itself, and the receiver takes them there as it takes
 * its ring: no daemon, no system call, no other thread between a post and
 * the peer's poll. The daemon keeps the authority: it grants a sub-ring
 * for one path (FAST_VDIRECT) and takes every grant back before anything
 * on the way changes; a QP without one sends through it, as before.
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

#include "lib/fast_wire.h"
#include "lib/verbs_inbox.h"
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

static bool disabled(void)
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

/* Map inbox @id (0: this context's own) and get its eventfd in *@bell:
 * NULL when the daemon gives neither. */
static struct verbs_inbox *map_inbox(struct ibemu_context *ctx, uint64_t id, int *bell)
{
	int memfd = -1;
	void *m = MAP_FAILED;

	*bell = -1;
	if (ibemu_fast_ask(ctx, FAST_VINBOX, 0, &id, sizeof(id), NULL, 0, &memfd) >= 0 &&
	    memfd >= 0 && ibemu_fast_ask(ctx, FAST_VINBOX, 1, &id, sizeof(id), NULL, 0, bell) >= 0 &&
	    *bell >= 0)
		m = mmap(NULL, VERBS_INBOX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (memfd >= 0)
		close(memfd);
	if (m != MAP_FAILED)
		return m;
	if (*bell >= 0)
		close(*bell);
	*bell = -1;
	return NULL;
}

static void unmap_peer(struct ibemu_peer *p)
{
	munmap(p->map, VERBS_INBOX_BYTES);
	close(p->bell);
	memset(p, 0, sizeof(*p));
}

/* The mapping of inbox @id, made if need be (a slot of a peer no QP
 * writes to any more is taken over when all are used). */
static struct ibemu_peer *peer_of(struct ibemu_context *ctx, uint64_t id)
{
	struct ibemu_peer *p, *free_one = NULL;
	struct verbs_inbox *m;
	struct ibemu_qp *qp;
	unsigned i;
	int bell;

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
			unmap_peer(p);
			free_one = p;
		}
	}
	if (!free_one || !(m = map_inbox(ctx, id, &bell)))
		return NULL;
	free_one->id = id;
	free_one->map = m;
	free_one->bell = bell;
	return free_one;
}

/* Ask the daemon for a grant for packets like @h: true when @qp has one. */
static bool ask_grant(struct ibemu_qp *qp, const struct verbs_wire_pkt *h)
{
	struct ibemu_context *ctx = qp->ctx;
	struct ibemu_dtx *d = &qp->dtx;
	struct verbs_direct_grant g;
	struct ibemu_peer *p;

	if (ctx->fast_chan < 0 || !ctx->ring || disabled() || (h->flags & VERBS_PKT_GRH) ||
	    ibemu_now_us() < d->retry_us)
		return false;
	/* What waits for the daemon goes first (the order of each QP). */
	ibemu_flush(ctx);
	if (ctx->out_len || ctx->tx_held)
		return false;
	if (ibemu_fast_ask(ctx, FAST_VDIRECT, 0, h, sizeof(*h), &g, sizeof(g), NULL) < 0 ||
	    g.sub >= VERBS_INBOX_SUBS || !(p = peer_of(ctx, g.peer))) {
		refused(d);
		return false;
	}
	d->key = *h;
	d->g = g;
	d->peer = p;
	d->sub = &p->map->sub[g.sub];
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
		d->sub = NULL;
		d->peer = NULL;
		refused(d);
		return false;
	}
	s = d->sub;
	__atomic_store_n(&s->busy, 1, __ATOMIC_SEQ_CST);
	head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
	skip = verbs_ring_skip(head, len, VERBS_SUB_DATA);
	ok = __atomic_load_n(&s->grant, __ATOMIC_SEQ_CST) == d->g.grant &&
	     room(s, head, skip + len);
	if (ok) {
		verbs_ring_pad(s->data, VERBS_SUB_DATA, head, skip);
		head += skip;
		/* As the daemon would have delivered it (uverbs_qp_deliver). */
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
		/* transmit()'s count: the daemon puts it on every port. */
		__atomic_store_n(&s->packets, s->packets + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->dwords, s->dwords + (verbs_pkt_wire_bytes(&w) + 3) / 4,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
	if (!ok) {
		/* Taken back, or full: the daemon's way, and ask again later. */
		d->sub = NULL;
		d->peer = NULL;
		refused(d);
		return false;
	}
	if (__atomic_load_n(&d->peer->map->sleeping, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&d->peer->map->sleeping, 0, __ATOMIC_SEQ_CST)) {
		uint64_t one = 1;

		(void)!write(d->peer->bell, &one, sizeof(one));	/* or it is gone */
	}
	return true;
}

/* ---- the receiving side -------------------------------------------------- */

bool ibemu_inbox_pending(const struct ibemu_context *ctx)
{
	const struct verbs_inbox *ib = ctx->inbox;
	uint32_t active;
	unsigned i;

	if (!ib)
		return false;
	active = __atomic_load_n(&ib->active, __ATOMIC_SEQ_CST);
	for (i = 0; active; i++, active >>= 1)
		if ((active & 1) && __atomic_load_n(&ib->sub[i].head, __ATOMIC_SEQ_CST) !=
				    __atomic_load_n(&ib->sub[i].tail, __ATOMIC_RELAXED))
			return true;
	return false;
}

bool ibemu_inbox_take(struct ibemu_context *ctx)
{
	struct verbs_inbox *ib = ctx->inbox;
	uint32_t active;
	bool took = false;
	unsigned i;

	if (!ib)
		return false;
	active = __atomic_load_n(&ib->active, __ATOMIC_SEQ_CST);
	for (i = 0; i < VERBS_INBOX_SUBS; i++) {
		struct verbs_sub *s = &ib->sub[i];
		uint64_t tail, head;

		if (!(active >> i & 1))
			continue;
		tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
		head = __atomic_load_n(&s->head, __ATOMIC_SEQ_CST);
		/* A sender's head, not ours to trust: at most a ring ahead. */
		if (head - tail > VERBS_SUB_DATA)
			head = tail;
		if (head != tail)
			took = true;
		ibemu_take_span(ctx, s->data, VERBS_SUB_DATA, tail, head);
		__atomic_store_n(&s->tail, head, __ATOMIC_SEQ_CST);
	}
	return took;
}

void ibemu_inbox_map(struct ibemu_context *ctx)
{
	struct verbs_inbox *m;
	int bell;

	if (ctx->inbox)
		return;
	if (!(m = map_inbox(ctx, 0, &bell))) {
		fprintf(stderr, "libibemu: cannot map this context's inbox: %s\n", strerror(errno));
		return;
	}
	ctx->inbox_bell = bell;
	__atomic_store_n(&ctx->inbox, m, __ATOMIC_RELEASE);
}

void ibemu_direct_close(struct ibemu_context *ctx)
{
	unsigned i;

	for (i = 0; i < IBEMU_PEERS_MAX; i++)
		if (ctx->peers[i].id)
			unmap_peer(&ctx->peers[i]);
	if (ctx->inbox) {
		munmap(ctx->inbox, VERBS_INBOX_BYTES);
		close(ctx->inbox_bell);
		ctx->inbox = NULL;
	}
}
