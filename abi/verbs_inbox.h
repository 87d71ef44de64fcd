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
 * - A **sub-ring** (struct verbs_sub): a memfd of its own for each grant,
 *   mapped by the one sender it was granted to, the receiver and the
 *   daemon. The sender writes records at head, the receiver reads them at
 *   tail, as in verbs_ring.h (indexes only grow; a record never wraps; a
 *   PAD record or a short gap fills an end). Everything in it is the
 *   sender's to spoil, and spoils only its own packets.
 * - The receiver's **binding page** (struct verbs_inbox): a memfd only the
 *   receiving context and the daemon map. For each of VERBS_INBOX_SUBS
 *   slots it holds the binding the daemon made (struct verbs_bind): which
 *   sub-ring (@gen), which packets it may carry (source and destination
 *   QP, Q_Key) and the fields the daemon would have set on them (port,
 *   SLID, P_Key and its index, SL, DLID). The receiver takes from a
 *   sub-ring only PKT and PAD records, only those that match its binding,
 *   with those fields set from the binding, and only up to @limit once the
 *   grant is taken back (@open 0); it counts what it took there, which
 *   the daemon puts on the PMA counters of every port on the way.
 *
 * Grants: the daemon binds a slot (a new memfd, a new @gen) and sets
 * @open; the sub-ring's @grant tells the sender it holds it. To take it
 * back the daemon clears @grant, then reads head into the binding's @limit
 * and clears @open: from then on nothing the sender writes is taken. It
 * waits for no sender: it also writes the limit in the sub-ring and sets
 * @closed, and a sender that finds @grant cleared after it moved head on
 * (a store and a load against the daemon's store and load, sequentially
 * consistent: one of the two sees the other) learns there whether its
 * record is within the limit, and sends it through the daemon if not.
 * A grant is never given again on the same memfd: the next one is
 * a new sub-ring, so what a sender wrote while it had none is never read.
 * A slot is bound anew only when the receiver has taken all up to @limit
 * (@taken, the receiver's own). The receiver reads a binding as a
 * sequence lock: @gen, the fields, @gen again (the daemon clears @gen
 * before it rewrites them).
 *
 * Wake-ups: the receiver's reader sets each sub-ring's @sleeping before it
 * waits; a sender that finds its own set clears it and writes the
 * receiver's eventfd.
 *
 * Sequentially consistent atomics throughout, as verbs_ring.h. Header
 * only, for both ends; all in the host's byte order.
 */
#ifndef IBEMU_ABI_VERBS_INBOX_H
#define IBEMU_ABI_VERBS_INBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "abi/verbs_ring.h"

#define VERBS_INBOX_SUBS	8
#define VERBS_SUB_DATA		(1u << 18)	/* a power of two: 256 KiB */

struct verbs_sub {
	uint64_t head;		/* the sender's */
	uint8_t pad0[56];
	uint64_t tail;		/* the receiver's (for the sender's room) */
	uint8_t pad1[56];
	uint32_t grant;		/* the daemon's word to the sender: 0 or its grant */
	uint32_t closed;	/* the daemon's: taken back, @limit set */
	uint32_t sleeping;	/* the receiver's: its reader waits on its eventfd */
	uint32_t pad2;
	uint64_t limit;		/* the daemon's: what the receiver takes, at most */
	uint8_t pad3[4096 - 152];
	uint8_t data[VERBS_SUB_DATA];
};
_Static_assert(sizeof(struct verbs_sub) == 4096 + VERBS_SUB_DATA, "a sub-ring's layout");
#define VERBS_SUB_BYTES		sizeof(struct verbs_sub)

struct verbs_bind {
	uint32_t gen;		/* the daemon's: the sub-ring's; 0 while rewritten */
	uint32_t open;		/* the daemon's: 1, all to head; 0, to @limit only */
	uint64_t limit;		/* the daemon's: head when the grant was taken back */
	/* The daemon's: what each record must say ... */
	uint32_t sqpn, dqpn, qkey;
	uint8_t ud;		/* check qkey (a UD destination) */
	/* ... and what it sets on it, as uverbs_qp_deliver would. */
	uint8_t port, sl, pad0;
	uint16_t slid, dlid, pkey, pkey_index;
	/* The receiver's: how far it took, what it took (the PMA's). */
	uint64_t taken, packets, dwords;
	uint8_t pad1[128 - 64];
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

/* ---- the receiver's reading (verbs/direct.c; tests/fuzz/fuzz_inbox.c) ---- */

/* How far a receiver at @tail may take a sub-ring whose sender says
 * @head: to @head while the grant holds (@open), to @limit once it was
 * taken back, and never more than a ring ahead; @tail: nothing. */
static inline uint64_t verbs_sub_end(uint64_t tail, uint64_t head, uint32_t open, uint64_t limit)
{
	if (!open && (int64_t)(head - limit) > 0)
		head = limit;
	if ((int64_t)(head - tail) <= 0 || head - tail > VERBS_SUB_DATA)
		return tail;
	return head;
}

/* Whether a sender's packet is one its binding lets through. */
static inline bool verbs_bind_allows(const struct verbs_bind *b, const struct verbs_wire_pkt *p)
{
	return p->sqpn == b->sqpn && p->dqpn == b->dqpn && !(p->flags & VERBS_PKT_GRH) &&
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
				fn(ctx, &p, buf + off + sizeof(p));
			}
		}
		off += rec.len;
	}
}

/* The records of @data (a sub-ring's) from @tail to @end, in pieces that
 * stop at the data's end (a record never wraps). */
static inline void verbs_sub_walk(const struct verbs_bind *b, const uint8_t *data, uint64_t tail,
				  uint64_t end, verbs_sub_fn *fn, void *ctx)
{
	while (tail < end) {
		uint32_t at = (uint32_t)(tail % VERBS_SUB_DATA);
		uint64_t chunk = end - tail < VERBS_SUB_DATA - at ? end - tail : VERBS_SUB_DATA - at;

		verbs_sub_records(b, (const char *)&data[at], chunk, fn, ctx);
		tail += chunk;
	}
}

#endif
