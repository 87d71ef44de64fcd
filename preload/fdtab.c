/* SPDX-License-Identifier: MIT */
/*
 * Which fds are the fast path's: a two-level table indexed by fd, read
 * without a lock on every read, write, ioctl and close of any fd, so it
 * must cost a few loads. Leaves are allocated when first needed and never
 * freed (an fd number, once used, is likely to be used again).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "preload/fast.h"

#define LEAF_BITS	10
#define LEAF_SIZE	(1u << LEAF_BITS)
#define ROOT_SIZE	(1u << 12)	/* fds below 4M: far beyond RLIMIT_NOFILE's usual */
#define CHAN_TAG	((uintptr_t)1)

static uintptr_t *root[ROOT_SIZE];

static uintptr_t *leaf(int fd, int make)
{
	unsigned r = (unsigned)fd >> LEAF_BITS;
	uintptr_t *l, *mine;

	if (fd < 0 || r >= ROOT_SIZE)
		return NULL;
	l = __atomic_load_n(&root[r], __ATOMIC_ACQUIRE);
	if (l || !make)
		return l;
	mine = calloc(LEAF_SIZE, sizeof(*mine));
	if (!mine)
		return NULL;
	if (!__atomic_compare_exchange_n(&root[r], &l, mine, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(mine);	/* another thread's came first: l is it */
		return l;
	}
	return mine;
}

static uintptr_t slot(int fd)
{
	uintptr_t *l = leaf(fd, 0);

	return l ? __atomic_load_n(&l[fd & (LEAF_SIZE - 1)], __ATOMIC_ACQUIRE) : 0;
}

static void set_slot(int fd, uintptr_t v)
{
	uintptr_t *l = leaf(fd, v != 0);

	if (l)
		__atomic_store_n(&l[fd & (LEAF_SIZE - 1)], v, __ATOMIC_RELEASE);
}

struct fast_obj *fdtab_data(int fd)
{
	uintptr_t v = slot(fd);

	return (v & CHAN_TAG) ? NULL : (struct fast_obj *)v;
}

struct fast_obj *fdtab_chan(int fd)
{
	uintptr_t v = slot(fd);

	return (v & CHAN_TAG) ? (struct fast_obj *)(v & ~CHAN_TAG) : NULL;
}

void fdtab_set_data(int fd, struct fast_obj *o)
{
	set_slot(fd, (uintptr_t)o);
}

void fdtab_set_chan(int fd, struct fast_obj *o)
{
	set_slot(fd, (uintptr_t)o | CHAN_TAG);
}

void fdtab_clear(int fd)
{
	set_slot(fd, 0);
}

/* One exchange, so that of two threads closing one fd only one finds
 * what it named (the kernel's close is atomic on the fd table too). */
static uintptr_t swap_slot(int fd, uintptr_t v)
{
	uintptr_t *l = leaf(fd, v != 0);

	return l ? __atomic_exchange_n(&l[fd & (LEAF_SIZE - 1)], v, __ATOMIC_ACQ_REL) : 0;
}

void fdtab_take(int fd, struct fast_obj **data, struct fast_obj **chan)
{
	uintptr_t v = swap_slot(fd, 0);

	*data = (v & CHAN_TAG) ? NULL : (struct fast_obj *)v;
	*chan = (v & CHAN_TAG) ? (struct fast_obj *)(v & ~CHAN_TAG) : NULL;
}

struct fast_obj *fdtab_replace_data(int fd, struct fast_obj *o, struct fast_obj **chan)
{
	uintptr_t v = swap_slot(fd, (uintptr_t)o);

	*chan = (v & CHAN_TAG) ? (struct fast_obj *)(v & ~CHAN_TAG) : NULL;
	return (v & CHAN_TAG) ? NULL : (struct fast_obj *)v;
}

bool fdtab_clear_if(int fd, struct fast_obj *o)
{
	uintptr_t *l = leaf(fd, 0);
	uintptr_t want = (uintptr_t)o;

	return l && __atomic_compare_exchange_n(&l[fd & (LEAF_SIZE - 1)], &want, 0, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

bool fdtab_clear_chan_if(int fd, struct fast_obj *o)
{
	uintptr_t *l = leaf(fd, 0);
	uintptr_t want = (uintptr_t)o | CHAN_TAG;

	return l && __atomic_compare_exchange_n(&l[fd & (LEAF_SIZE - 1)], &want, 0, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void fdtab_foreach(unsigned first, unsigned last, void (*fn)(int fd))
{
	unsigned r;

	for (r = first >> LEAF_BITS; r < ROOT_SIZE && r <= last >> LEAF_BITS; r++) {
		uintptr_t *l = __atomic_load_n(&root[r], __ATOMIC_ACQUIRE);
		unsigned i;

		for (i = 0; l && i < LEAF_SIZE; i++) {
			unsigned fd = (r << LEAF_BITS) | i;

			if (fd >= first && fd <= last && l[i])
				fn((int)fd);
		}
	}
}
