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
	       a->qkey == b->qkey && verbs_pkt_same_grh(a, b);
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

	if (ctx->fast_chan < 0 || !ctx->ring || ibemu_direct_off() || ibemu_now_us() < d->retry_us)
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
static bool room(struct verbs_ring *s, uint64_t head, uint32_t need)
{
	uint64_t until = 0;

	while (!verbs_ring_fits(head, verbs_ring_acquire(&s->tail), need, VERBS_SUB_DATA)) {
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
	struct verbs_ring *s;
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
	head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);	/* ours */
	skip = verbs_ring_skip(head, len, VERBS_SUB_DATA);
	ok = __atomic_load_n(&s->grant, __ATOMIC_RELAXED) == d->g.grant &&
	     room(s, head, skip + len);
	if (ok) {
		/* As the daemon would have delivered it (uverbs_qp_deliver);
		 * the receiver sets these fields from its binding again. */
		w = *h;
		w.rec.type = VERBS_REC_PKT;
		w.rec.len = len;
		w.port = d->g.rx_port;
		w.pkey_index = d->g.rx_pkey_index;
		w.slid = d->g.slid;
		w.pkey = d->g.pkey;
		/* Taken back meanwhile: within the limit, the receiver
		 * takes it; past it, it goes through the daemon (and the
		 * order holds: the receiver takes the sub-ring first). */
		ok = verbs_sub_put(s, d->g.grant, &head, skip, &w, sizeof(w), payload, h->len);
	}
	if (!ok) {
		/* Taken back, or full: the daemon's way, and ask again later. */
		drop(d);
		refused(d);
		return false;
	}
	if (verbs_ring_flag_take(&s->sleeping)) {
		uint64_t one = 1;

		(void)!write(d->peer->bell, &one, sizeof(one));	/* or it is gone */
	}
	return true;
}

void ibemu_direct_drop(struct ibemu_qp *qp)
{
	drop(&qp->dtx);
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
	ibemu_inbox_unmap(ctx);
}
