/* SPDX-License-Identifier: MIT */
/* A channel's slot, the emulator's end; see fastslot.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>

#include "lib/shm.h"
#include "socket/fastslot.h"

struct fastslot {
	struct fast_slot *m;	/* shared with the client */
	uint32_t seen;		/* the last req_seq taken */
};

struct fastslot *fastslot_new(int *memfd)
{
	struct fastslot *s;
	void *m = shm_sealed_map("ibemu-slot", FAST_SLOT_BYTES, memfd);

	if (!m)
		return NULL;
	s = g_new0(struct fastslot, 1);
	s->m = m;
	return s;
}

void fastslot_free(struct fastslot *s)
{
	if (!s)
		return;
	munmap(s->m, FAST_SLOT_BYTES);
	g_free(s);
}

size_t fastslot_take(struct fastslot *s, uint8_t buf[sizeof(struct fast_req) + FAST_SLOT_IN_MAX])
{
	uint32_t seq = __atomic_load_n(&s->m->req_seq, __ATOMIC_ACQUIRE);
	uint32_t n;

	if (seq == s->seen)
		return 0;
	s->seen = seq;
	/* Read once: the client may change it under us. */
	n = __atomic_load_n(&s->m->in_len, __ATOMIC_RELAXED);
	if (n > FAST_SLOT_IN_MAX) {	/* not a request: answered here */
		fastslot_answer(s, -EINVAL, NULL, 0);
		return 0;
	}
	memcpy(buf, &s->m->req, sizeof(struct fast_req));
	memcpy(buf + sizeof(struct fast_req), s->m->in, n);
	return sizeof(struct fast_req) + n;
}

void fastslot_answer(struct fastslot *s, int64_t ret, const void *out, uint32_t out_len)
{
	out_len = MIN(out_len, FAST_SLOT_OUT_MAX);
	s->m->rep = (struct fast_reply){ .ret = ret, .out_len = out_len };
	if (out_len)
		memcpy(s->m->out, out, out_len);
	__atomic_store_n(&s->m->ans_seq, s->seen, __ATOMIC_RELEASE);
	/* Then read the client's flag (the barrier pairs with its own). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->m->sleeping, __ATOMIC_RELAXED))
		syscall(SYS_futex, &s->m->ans_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void fastslot_set_looking(struct fastslot *s, bool on)
{
	__atomic_store_n(&s->m->looking, on ? 1u : 0u, __ATOMIC_RELAXED);
	/* Clearing it, then reading req_seq, is one side of the pair. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
