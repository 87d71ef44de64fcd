/* SPDX-License-Identifier: MIT */
/*
 * The direct path's shared memory (docs/verbs.md "The direct path"):
 * sub-rings into which one sending QP writes its packets for one
 * receiving context itself, past the daemon, while the daemon has found
 * nothing on their way that needs it (no fault rule, no capture, links and
 * routes as they were when it said yes).
 *
 * Two kinds of memory, so that a sender can reach nothing but its own:
 *
 * - A **sub-ring** (a struct verbs_ring of VERBS_SUB_DATA bytes,
 *   abi/verbs_ring.h): a memfd of its own for each grant, mapped by the
 *   one sender it was granted to, the receiver and the daemon. The sender
 *   produces, the receiver consumes. Everything in it is the sender's to
 *   spoil, and spoils only its own packets.
 * - The receiver's **binding page** (struct verbs_inbox): a memfd only the
 *   receiving context and the daemon map. For each of VERBS_INBOX_SUBS
 *   slots it holds the binding the daemon made (struct verbs_bind): which
 *   sub-ring (@gen), which packets it may carry (source and destination
 *   QP, Q_Key) and the fields the daemon would have set on them (port,
 *   SLID, P_Key and its index, SL, DLID; on RoCE the GRH's GIDs and the
 *   packet's RoCE version). The receiver takes from a
 *   sub-ring only PKT and PAD records, only those that match its binding,
 *   with those fields set from the binding, and only up to @limit once the
 *   grant is taken back; it counts what it took there, which the daemon
 *   puts on the PMA counters of every port on the way.
 *
 * Grants: the daemon binds a slot (a new memfd, a new @gen, @open
 * VERBS_BIND_OPEN); the sub-ring's @grant tells the sender it holds it.
 * It takes one back in two steps and waits for no sender
 * (verbs_grant_close, verbs_grant_closed): the binding says CLOSING (the
 * receiver takes nothing), the sub-ring's @grant is cleared, and then
 * head is read as the limit; the binding gets the limit and says CLOSED,
 * the sub-ring gets it too and says @closed. A sender, having moved head
 * on, looks at @grant (verbs_grant_holds); where it was cleared it waits
 * for @closed and learns from the limit whether its record counts, and
 * sends it through the daemon if not. The receiver loads head before it
 * looks at @open (verbs_sub_end). Each of the three puts a fence
 * (verbs_ring_fence) between its two steps, so that a record past the
 * limit is taken once, by the daemon: its sender's head store came after
 * the daemon's read, so the sender sees @grant cleared; a receiver whose
 * head holds that record looks at @open after the daemon said CLOSING.
 * (Cleared @grant and CLOSING in one step: with the binding closed only
 * after the limit was read, a receiver could load such a head and then
 * still find the grant open.)
 * A grant is never given again on the same memfd: the next one is
 * a new sub-ring, so what a sender wrote while it had none is never read.
 * A slot is bound anew only when the receiver has taken all up to @limit
 * (@taken, the receiver's own). The receiver reads a binding as a
 * sequence lock (verbs_bind_read): @gen, the fields, @gen again (the
 * daemon clears @gen before it rewrites them).
 *
 * Wake-ups: the receiver's reader sets each sub-ring's @sleeping before it
 * waits; a sender that finds its own set clears it and writes the
 * receiver's eventfd (abi/verbs_ring.h).
 *
 * Header only, for both ends; all in the host's byte order.
 */
#ifndef IBEMU_ABI_VERBS_INBOX_H
#define IBEMU_ABI_VERBS_INBOX_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "abi/verbs_ring.h"

#define VERBS_INBOX_SUBS	8

/* A binding's @open (and what the receiver takes): */
enum {
	VERBS_BIND_CLOSED = 0,	/* taken back: up to @limit */
	VERBS_BIND_OPEN = 1,	/* granted: up to head */
	VERBS_BIND_CLOSING = 2,	/* being taken back: nothing until @limit is set */
};

struct verbs_bind {
	uint32_t gen;		/* the daemon's: the sub-ring's; 0 while rewritten */
	uint32_t open;		/* the daemon's: VERBS_BIND_* */
	uint64_t limit;		/* the daemon's: head when the grant was taken back */
	/* The daemon's: what each record must say ... */
	uint32_t sqpn, dqpn, qkey;
	uint8_t ud;		/* check qkey (a UD destination) */
	/* ... and what it sets on it, as uverbs_qp_deliver would. */
	uint8_t port, sl, pad0;
	uint16_t slid, dlid, pkey, pkey_index;
	/* The receiver's: how far it took, what it took (the PMA's). */
	uint64_t taken, packets, dwords;
	/* The daemon's, for packets with a GRH (RoCE ports only): what each
	 * must say (@grh, its SGID index) and the GIDs and RoCE version it
	 * gets, as the daemon sets them (the port's GID at that index; the
	 * destination's). The rest of the GRH is the sender's, as through
	 * the daemon. */
	uint8_t grh, sgid_index, roce_v2, pad2[5];
	uint64_t sgid[2], dgid[2];
	uint8_t pad1[128 - 104];
};
_Static_assert(sizeof(struct verbs_bind) == 128, "a binding's layout");

struct verbs_inbox {
	uint32_t active;	/* the daemon's: slots ever bound, a bit each */
	uint8_t pad[128 - 4];
	struct verbs_bind bind[VERBS_INBOX_SUBS];
};
#define VERBS_INBOX_BYTES	4096
_Static_assert(sizeof(struct verbs_inbox) <= VERBS_INBOX_BYTES, "a binding page's layout");

/* FAST_VDIRECT's answer (abi/fast_wire.h), with the sub-ring's memfd: the
 * slot @sub of inbox @peer while its grant is @grant; the fields of each
 * record as the daemon would set them (the receiver sets them again). */
struct verbs_direct_grant {
	uint64_t peer;
	uint32_t grant;
	uint8_t sub, rx_port;
	uint16_t rx_pkey_index;
	uint16_t slid, pkey;
	uint32_t reserved;
};

/* FAST_VINBOX's payload and its arg: what to pass. */
struct verbs_inbox_ask {
	uint64_t peer;		/* VERBS_INBOX_BELL: whose (0: one's own) */
	uint32_t gen;		/* VERBS_INBOX_SUB: the binding's */
	uint8_t sub;
	uint8_t pad[3];
};
enum {
	VERBS_INBOX_PAGE = 0,	/* one's own binding page's memfd */
	VERBS_INBOX_BELL = 1,	/* an eventfd: one's own, or that of a peer
				 * one holds a binding in */
	VERBS_INBOX_SUB = 2,	/* one's own slot @sub's sub-ring of @gen */
};

/* ---- a grant taken back (kernel/uverbs_direct.c; verbs/direct.c) -------- */

/* The daemon's first step: the receiver takes nothing from @sub for now,
 * the sender is told; the limit, head as it is once both are said. */
static inline uint64_t verbs_grant_close(struct verbs_ring *sub, struct verbs_bind *b)
{
	__atomic_store_n(&b->open, VERBS_BIND_CLOSING, __ATOMIC_RELAXED);
	__atomic_store_n(&sub->grant, 0u, __ATOMIC_RELAXED);
	verbs_ring_fence();
	return __atomic_load_n(&sub->head, __ATOMIC_RELAXED);
}

/* The daemon's second step: the limit given to the receiver, then to the
 * sender. */
static inline void verbs_grant_closed(struct verbs_ring *sub, struct verbs_bind *b, uint64_t limit)
{
	__atomic_store_n(&b->limit, limit, __ATOMIC_RELAXED);
	__atomic_store_n(&b->open, VERBS_BIND_CLOSED, __ATOMIC_RELEASE);
	__atomic_store_n(&sub->limit, limit, __ATOMIC_RELAXED);
	__atomic_store_n(&sub->closed, 1u, __ATOMIC_RELEASE);
}

/* The sender's, after it published @head and fenced: whether what it
 * wrote up to @head is the receiver's, as @grant still holds or within
 * the limit it was taken back at (the daemon's second step follows its
 * first at once). */
static inline bool verbs_grant_holds(struct verbs_ring *sub, uint32_t grant, uint64_t head)
{
	if (__atomic_load_n(&sub->grant, __ATOMIC_RELAXED) == grant)
		return true;
	while (!__atomic_load_n(&sub->closed, __ATOMIC_ACQUIRE))
		sched_yield();
	return (int64_t)(__atomic_load_n(&sub->limit, __ATOMIC_RELAXED) - head) >= 0;
}

/* The sender's: a record of @n1 bytes at @p1 and @n2 at @p2 written at
 * *@head (after @skip bytes, verbs_ring_skip) and published, *@head moved
 * on; whether it is the receiver's as @grant still holds or within the
 * limit it was taken back at (the daemon's way if not). */
static inline bool verbs_sub_put(struct verbs_ring *sub, uint32_t grant, uint64_t *head,
				 uint32_t skip, const void *p1, uint32_t n1, const void *p2,
				 uint32_t n2)
{
	*head = verbs_ring_write(sub, VERBS_SUB_DATA, *head, skip, p1, n1, p2, n2);
	verbs_ring_release(&sub->head, *head);
	verbs_ring_fence();	/* then the daemon's @grant (and the receiver's @sleeping) */
	return verbs_grant_holds(sub, grant, *head);
}

/* ---- a binding, a sequence lock ------------------------------------------ */

/* The daemon's: @b to be rewritten (its fields, then verbs_bind_publish). */
static inline void verbs_bind_retract(struct verbs_bind *b)
{
	__atomic_store_n(&b->gen, 0u, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void verbs_bind_publish(struct verbs_bind *b, uint32_t gen)
{
	__atomic_store_n(&b->gen, gen, __ATOMIC_RELEASE);
}

/* The receiver's: binding @b as the daemon wrote it for sub-ring @gen,
 * in @o; false while it is rewritten, or another's. */
static inline bool verbs_bind_read(const struct verbs_bind *b, uint32_t gen, struct verbs_bind *o)
{
	if (!gen || __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != gen)
		return false;
	/* open before limit: the daemon writes the limit, then CLOSED */
	o->open = __atomic_load_n(&b->open, __ATOMIC_ACQUIRE);
	o->limit = __atomic_load_n(&b->limit, __ATOMIC_RELAXED);
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
	o->grh = __atomic_load_n(&b->grh, __ATOMIC_RELAXED);
	o->sgid_index = __atomic_load_n(&b->sgid_index, __ATOMIC_RELAXED);
	o->roce_v2 = __atomic_load_n(&b->roce_v2, __ATOMIC_RELAXED);
	o->sgid[0] = __atomic_load_n(&b->sgid[0], __ATOMIC_RELAXED);
	o->sgid[1] = __atomic_load_n(&b->sgid[1], __ATOMIC_RELAXED);
	o->dgid[0] = __atomic_load_n(&b->dgid[0], __ATOMIC_RELAXED);
	o->dgid[1] = __atomic_load_n(&b->dgid[1], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&b->gen, __ATOMIC_RELAXED) == gen;
}

/* ---- the receiver's reading (verbs/ring.c; tests/fuzz/fuzz_inbox.c) ---- */

/* How far a receiver at @tail may take a sub-ring whose sender says
 * @head (loaded, then a fence, then the binding read): to @head while the
 * grant holds, nothing while it is taken back, to @limit once it was, and
 * never more than a ring ahead; @tail: nothing. */
static inline uint64_t verbs_sub_end(uint64_t tail, uint64_t head, uint32_t open, uint64_t limit)
{
	if (open == VERBS_BIND_CLOSING)
		return tail;
	if (open != VERBS_BIND_OPEN && (int64_t)(head - limit) > 0)
		head = limit;
	if ((int64_t)(head - tail) <= 0 || head - tail > VERBS_SUB_DATA)
		return tail;
	return head;
}

/* Whether @a and @b, packet headers, go the same way as far as their GRH
 * says (both none, or the same SGID index and DGID): part of what a grant
 * holds for, the sender's and the daemon's alike. */
static inline bool verbs_pkt_same_grh(const struct verbs_wire_pkt *a,
				      const struct verbs_wire_pkt *b)
{
	return (a->flags & VERBS_PKT_GRH) == (b->flags & VERBS_PKT_GRH) &&
	       (!(a->flags & VERBS_PKT_GRH) ||
		(a->sgid_index == b->sgid_index && !memcmp(a->dgid, b->dgid, 16)));
}

/* Whether a sender's packet is one its binding lets through. */
static inline bool verbs_bind_allows(const struct verbs_bind *b, const struct verbs_wire_pkt *p)
{
	return p->sqpn == b->sqpn && p->dqpn == b->dqpn &&
	       !(p->flags & VERBS_PKT_GRH) == !b->grh && (!b->grh || p->sgid_index == b->sgid_index) &&
	       (!b->ud || p->qkey == b->qkey);
}

/* A packet taken: a copy with the binding's fields set, and its payload
 * (p->len bytes at @payload, inside the sub-ring's data). */
typedef void verbs_sub_fn(void *ctx, const struct verbs_wire_pkt *p, const char *payload);

/* @fn on each PKT record of the @n bytes at @buf that @b lets through;
 * PAD and any other record passed over (credit, upcall and inbox records
 * come from the daemon's ring only); a record that does not fit ends the
 * piece. Each header is copied once: the sender may change it meanwhile. */
static inline void verbs_sub_records(const struct verbs_bind *b, const char *buf, uint64_t n,
				     verbs_sub_fn *fn, void *ctx)
{
	uint64_t off;

	for (off = 0; off + sizeof(struct verbs_wire_rec) <= n; ) {
		struct verbs_wire_rec rec;
		struct verbs_wire_pkt p;

		memcpy(&rec, buf + off, sizeof(rec));
		if (rec.len < sizeof(rec) || rec.len > n - off)
			break;
		if (rec.type == VERBS_REC_PKT && rec.len >= sizeof(p)) {
			memcpy(&p, buf + off, sizeof(p));
			if (p.len <= rec.len - sizeof(p) && verbs_bind_allows(b, &p)) {
				p.port = b->port;
				p.sl = b->sl;
				p.slid = b->slid;
				p.dlid = b->dlid;
				p.pkey = b->pkey;
				p.pkey_index = b->pkey_index;
				/* The GIDs and version are the binding's: a
				 * sender's say nothing (the daemon's way sets
				 * them too, kernel/uverbs_data.c send_pkt). */
				p.flags &= (uint8_t)~VERBS_PKT_ROCE_V2;
				if (b->grh) {
					memcpy(p.sgid, b->sgid, 16);
					memcpy(p.dgid, b->dgid, 16);
					if (b->roce_v2)
						p.flags |= VERBS_PKT_ROCE_V2;
				}
				fn(ctx, &p, buf + off + sizeof(p));
			}
		}
		off += rec.len;
	}
}

/* The receiver's look at sub-ring @sub: how far from @tail it may take,
 * by binding @bind of @gen, read into @b (head first, a fence, then the
 * binding: a grant taken back, above); @tail: nothing now. */
static inline uint64_t verbs_sub_look(const struct verbs_ring *sub, const struct verbs_bind *bind,
				      uint32_t gen, uint64_t tail, struct verbs_bind *b)
{
	uint64_t head = verbs_ring_acquire(&sub->head);	/* a sender's: not trusted */

	if (head == tail)
		return tail;
	verbs_ring_fence();
	if (!verbs_bind_read(bind, gen, b))
		return tail;
	return verbs_sub_end(tail, head, b->open, b->limit);
}

struct verbs_sub_piece {
	const struct verbs_bind *b;
	verbs_sub_fn *fn;
	void *ctx;
};

static inline void verbs_sub_piece(void *arg, const char *buf, uint64_t n)
{
	const struct verbs_sub_piece *p = arg;

	verbs_sub_records(p->b, buf, n, p->fn, p->ctx);
}

/* The records of @data (a sub-ring's) from @tail to @end that @b lets
 * through, each to @fn. */
static inline void verbs_sub_walk(const struct verbs_bind *b, const uint8_t *data, uint64_t tail,
				  uint64_t end, verbs_sub_fn *fn, void *ctx)
{
	struct verbs_sub_piece p = { b, fn, ctx };

	verbs_ring_walk(data, VERBS_SUB_DATA, tail, end, verbs_sub_piece, &p);
}

#endif
