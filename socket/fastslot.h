/* SPDX-License-Identifier: MIT */
/*
 * The emulator's end of a channel's slot (abi/fast_wire.h, docs/fast-path.md
 * "The slot"): shared memory where a client puts a write or an ioctl and
 * finds its answer, no system call on either side while both look.
 * The memory is the client's to scribble on: a request is copied out
 * whole before anything in it is believed.
 */
#ifndef IBEMU_SOCKET_FASTSLOT_H
#define IBEMU_SOCKET_FASTSLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/fast_wire.h"

struct fastslot;

/* A new slot and, in *@memfd, the memfd to pass to the client (ours to
 * close once passed); NULL with errno. */
struct fastslot *fastslot_new(int *memfd);
void fastslot_free(struct fastslot *s);

/*
 * A request not seen before: copied to @buf (a struct fast_req then the
 * payload, as on the channel), its length returned; 0 if there is none.
 * The answer must follow with fastslot_answer() before the next take.
 * (One whose in_len is past FAST_SLOT_IN_MAX is answered EINVAL here.)
 */
size_t fastslot_take(struct fastslot *s, uint8_t buf[sizeof(struct fast_req) + FAST_SLOT_IN_MAX]);
void fastslot_answer(struct fastslot *s, int64_t ret, const void *out, uint32_t out_len);
/* Say whether a request made now will be seen without a FAST_RING. */
void fastslot_set_looking(struct fastslot *s, bool on);

#endif
