/* SPDX-License-Identifier: MIT */
/*
 * A verbs context's receive ring (docs/verbs.md "Data path"): what the
 * daemon queues for a context over the fast path, in memory both map, so
 * that a program polling its CQ finds its packets with a load and takes
 * them on its own thread, no system call and no other thread's wake-up
 * between the wire and the completion. The daemon writes whole records
 * (abi/verbs_wire.h) at head and moves head on; the provider reads them at
 * tail and moves tail on; each index only grows (bytes since the start),
 * the byte of index i is data[i % VERBS_RING_DATA]. A record never wraps:
 * where one would not fit before the end, the daemon writes a PAD record
 * (or, with less than a record header of room, the reader skips to the
 * start by itself).
 *
 * Wake-ups go on the fast path's data socket, one byte each way, only when
 * asked for: the provider's reader thread sets @sleeping before it waits
 * there (and looks at the ring once more), and the daemon, having moved
 * head, sends a byte if it is set; the daemon sets @want_room when a record
 * did not fit, and the provider, having moved tail, sends a byte if it is
 * set. Flags and indexes are sequentially consistent atomics: a store of
 * one followed by a load of the other is never reordered.
 *
 * Header only, for both ends; all in the host's byte order.
 */
#ifndef IBEMU_ABI_VERBS_RING_H
#define IBEMU_ABI_VERBS_RING_H

#include <stdint.h>
#include <string.h>

#include "abi/verbs_wire.h"

#define VERBS_RING_DATA		(1u << 19)	/* a power of two: 512 KiB */
#define VERBS_RING_BYTES	(4096 + VERBS_RING_DATA)

/* A record that only fills the rest of the data to its end. */
#define VERBS_REC_PAD		(VERBS_REC_MAGIC | 5)

struct verbs_ring {
	uint64_t head;		/* the daemon's */
	uint8_t pad0[56];
	uint64_t tail;		/* the provider's */
	uint8_t pad1[56];
	uint32_t sleeping;	/* the provider's reader waits on the socket */
	uint32_t want_room;	/* the daemon waits for room */
	uint8_t pad2[4096 - 136];
	uint8_t data[VERBS_RING_DATA];
};
_Static_assert(sizeof(struct verbs_ring) == VERBS_RING_BYTES, "the ring's layout");

static inline uint64_t verbs_ring_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline void verbs_ring_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Where the next record of @len bytes goes at @head in @size bytes of
 * data (a power of two: this ring's, an inbox's sub-ring's), given that
 * it may not wrap: the bytes to skip (a PAD record, or a gap too small
 * for one) before it. */
static inline uint32_t verbs_ring_skip(uint64_t head, uint32_t len, uint32_t size)
{
	uint32_t at = (uint32_t)(head % size);

	return at + len <= size ? 0 : size - at;
}

/* The @skip bytes at @head filled: a PAD record where one fits (the
 * reader passes over a shorter gap by itself). */
static inline void verbs_ring_pad(uint8_t *data, uint32_t size, uint64_t head, uint32_t skip)
{
	struct verbs_wire_rec pad = { .type = VERBS_REC_PAD, .len = skip };

	if (skip >= sizeof(pad))
		memcpy(&data[head % size], &pad, sizeof(pad));
}

#endif
