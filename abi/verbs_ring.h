/* SPDX-License-Identifier: MIT */
/*
 * The ring of records (docs/verbs.md "Data path"), one type for the two
 * places records wait in memory two processes map:
 *
 * - a verbs context's **receive ring** (VERBS_RING_DATA): what the daemon
 *   queues for a context over the fast path, so that a program polling
 *   its CQ finds its packets with a load and takes them on its own thread;
 * - a direct path's **sub-ring** (VERBS_SUB_DATA, abi/verbs_inbox.h): what
 *   one sending QP writes for one receiving context itself.
 *
 * One producer writes whole records (abi/verbs_wire.h) at head and moves
 * head on; one consumer reads them at tail and moves tail on. Each index
 * only grows (bytes since the start); the byte of index i is
 * data[i % size], the size a power of two. A record never wraps: where
 * one would not fit before the end, the producer writes a PAD record (or,
 * with less than a record header of room, the reader skips to the start
 * by itself). Neither side trusts the other's index: the consumer takes
 * at most a ring ahead of its own tail, the producer writes from its own
 * head.
 *
 * Memory orders, named as rdma-core's providers/rxe/rxe_queue.h names
 * them: the producer publishes head with a release store after writing
 * the records, the consumer loads it with acquire before reading them;
 * the consumer publishes tail with release after reading, the producer
 * loads it with acquire before writing over what was read. Where a side
 * stores one word and then looks at another the other side stores (a
 * wait: the consumer's @sleeping against head, the producer's @want_room
 * against tail, a sub-ring's @grant against head), both put a
 * sequentially consistent fence between the store and the load
 * (verbs_ring_fence): then one of the two sees the other's store, and no
 * wake-up is lost.
 *
 * Wake-ups go outside the ring (the fast path's data socket, a receiver's
 * eventfd), one each way, only when asked for: a consumer that is about
 * to wait sets @sleeping, fences and looks at head once more; the
 * producer, having moved head, fences and takes the flag, and wakes it if
 * it was set. The producer sets @want_room when a record did not fit,
 * and the consumer, having moved tail, takes it so.
 *
 * Header only, for both ends; all in the host's byte order.
 */
#ifndef IBEMU_ABI_VERBS_RING_H
#define IBEMU_ABI_VERBS_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "abi/verbs_wire.h"

#define VERBS_RING_CTL		4096		/* the words below, a page */
#define VERBS_RING_DATA		(1u << 19)	/* a receive ring's: 512 KiB */
#define VERBS_RING_BYTES	(VERBS_RING_CTL + VERBS_RING_DATA)
#define VERBS_SUB_DATA		(1u << 18)	/* a sub-ring's: 256 KiB */
#define VERBS_SUB_BYTES		(VERBS_RING_CTL + VERBS_SUB_DATA)

/* The layout and the protocols of both rings, asked for in FAST_VRING's
 * arg (abi/fast_wire.h): a provider of another refuses none, it gets
 * none, and takes its records on the data socket. */
#define VERBS_RING_VERSION	1
#define VERBS_RING_ASK(direct)	((uint64_t)VERBS_RING_VERSION << 8 | ((direct) ? 1u : 0u))

/* A record that only fills the rest of the data to its end. */
#define VERBS_REC_PAD		(VERBS_REC_MAGIC | 5)

struct verbs_ring {
	uint64_t head;		/* the producer's */
	uint8_t pad0[56];
	uint64_t tail;		/* the consumer's */
	uint8_t pad1[56];
	uint32_t sleeping;	/* the consumer's: it waits for a wake-up */
	uint32_t want_room;	/* the producer's: it waits for room */
	/* A sub-ring's, the daemon's words to its sender (verbs_inbox.h). */
	uint32_t grant;		/* 0, or the grant the sender holds */
	uint32_t closed;	/* taken back: @limit set */
	uint64_t limit;		/* what the receiver takes, at most */
	uint8_t pad2[VERBS_RING_CTL - 152];
	uint8_t data[];		/* the ring's size */
};
_Static_assert(offsetof(struct verbs_ring, sleeping) == 128, "the ring's words");
_Static_assert(offsetof(struct verbs_ring, limit) == 144, "the ring's words");
_Static_assert(offsetof(struct verbs_ring, data) == VERBS_RING_CTL, "the ring's layout");

/* ---- the memory orders, named -------------------------------------------- */

/* The other side's index: what it published before is visible after. */
static inline uint64_t verbs_ring_acquire(const uint64_t *idx)
{
	return __atomic_load_n(idx, __ATOMIC_ACQUIRE);
}

/* One's own index moved on: what one wrote (or read) before is done. */
static inline void verbs_ring_release(uint64_t *idx, uint64_t v)
{
	__atomic_store_n(idx, v, __ATOMIC_RELEASE);
}

/* Between a store of one word and a load of another that the other side
 * stores (a wait's flag and an index): one of the two sides sees the
 * other's store. */
static inline void verbs_ring_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* A wait's flag, set or cleared by the side that waits. */
static inline void verbs_ring_flag_set(uint32_t *flag, bool on)
{
	__atomic_store_n(flag, on ? 1u : 0u, __ATOMIC_RELAXED);
}

/* A wait's flag taken by the other side (after verbs_ring_fence): whether
 * it was set, and so a wake-up is owed. One taker wins. */
static inline bool verbs_ring_flag_take(uint32_t *flag)
{
	return __atomic_load_n(flag, __ATOMIC_RELAXED) &&
	       __atomic_exchange_n(flag, 0u, __ATOMIC_RELAXED);
}

/* ---- the producer -------------------------------------------------------- */

/* Where the next record of @len bytes goes at @head in @size bytes of
 * data, given that it may not wrap: the bytes to skip (a PAD record, or a
 * gap too small for one) before it. */
static inline uint32_t verbs_ring_skip(uint64_t head, uint32_t len, uint32_t size)
{
	uint32_t at = (uint32_t)(head % size);

	return at + len <= size ? 0 : size - at;
}

/* Whether @need bytes (the skip included) fit at @head before @tail. */
static inline bool verbs_ring_fits(uint64_t head, uint64_t tail, uint32_t need, uint32_t size)
{
	return head + need - tail <= size;
}

/* A record of @n1 bytes at @p1 and @n2 at @p2 written at @head (the
 * @skip bytes before it filled: a PAD record where one fits); the head
 * after it, to publish with verbs_ring_release. */
static inline uint64_t verbs_ring_write(struct verbs_ring *r, uint32_t size, uint64_t head,
					uint32_t skip, const void *p1, uint32_t n1,
					const void *p2, uint32_t n2)
{
	struct verbs_wire_rec pad = { .type = VERBS_REC_PAD, .len = skip };

	if (skip >= sizeof(pad))
		memcpy(&r->data[head % size], &pad, sizeof(pad));
	head += skip;
	memcpy(&r->data[head % size], p1, n1);
	if (n2)
		memcpy(&r->data[head % size + n1], p2, n2);
	return head + n1 + n2;
}

/* ---- the consumer -------------------------------------------------------- */

/* Whole records of the @n bytes at @buf, to one reader's taste. */
typedef void verbs_ring_piece_fn(void *arg, const char *buf, uint64_t n);

/* The records of @size bytes of @data from @tail to @end, in pieces that
 * stop at the data's end (a record never wraps; what lies past the last
 * record of a piece is a PAD record or a short gap, which @fn passes
 * over). */
static inline void verbs_ring_walk(const uint8_t *data, uint32_t size, uint64_t tail, uint64_t end,
				   verbs_ring_piece_fn *fn, void *arg)
{
	while (tail < end) {
		uint32_t at = (uint32_t)(tail % size);
		uint64_t chunk = end - tail < size - at ? end - tail : size - at;

		fn(arg, (const char *)&data[at], chunk);
		tail += chunk;
	}
}

#endif
