/* SPDX-License-Identifier: MIT */
/*
 * The ring of records both ends of the fast path share (abi/verbs_ring.h)
 * and the direct path's grants over it (abi/verbs_inbox.h), in memory of
 * the test's own: records through many laps in order, none lost, none
 * read twice, with a producer and a consumer on two threads waking each
 * other only through the flags; and a grant taken back while its sender
 * writes past the limit: that record is taken once, by the daemon's way,
 * never by the receiver too.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "abi/verbs_inbox.h"
#include "abi/verbs_ring.h"
#include "testfab.h"

#define GRANT	7u
#define GEN	3u

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct verbs_ring *sub_new(void)
{
	struct verbs_ring *r = aligned_alloc(4096, VERBS_SUB_BYTES);

	assert_non_null(r);
	memset(r, 0, VERBS_SUB_BYTES);
	return r;
}

/* A packet record whose qkey carries @seq, @len bytes of payload. */
static struct verbs_wire_pkt pkt(uint32_t seq, uint32_t len)
{
	return (struct verbs_wire_pkt){
		.rec = { VERBS_REC_PKT, (uint32_t)(sizeof(struct verbs_wire_pkt) + len) },
		.sqpn = 20, .dqpn = 24, .qkey = seq, .len = len,
	};
}

/* ---- records through the laps, two threads ------------------------------ */

#define LAPS_RECORDS	20000u	/* about 150 laps */

struct lap {
	struct verbs_ring *r;
	uint32_t next;		/* the consumer's: the next seq it expects */
	bool bad;
};

static void on_piece(void *arg, const char *buf, uint64_t n)
{
	struct lap *l = arg;
	uint64_t off = 0;

	while (off + sizeof(struct verbs_wire_rec) <= n) {
		struct verbs_wire_pkt p;

		memcpy(&p.rec, buf + off, sizeof(p.rec));
		if (p.rec.len < sizeof(p.rec) || p.rec.len > n - off)
			break;	/* a gap too small for a PAD record */
		if (p.rec.type == VERBS_REC_PKT) {
			memcpy(&p, buf + off, sizeof(p));
			if (p.qkey != l->next || (uint8_t)buf[off + sizeof(p)] != (uint8_t)p.qkey)
				l->bad = true;
			l->next++;
		} else if (p.rec.type != VERBS_REC_PAD) {
			l->bad = true;
		}
		off += p.rec.len;
	}
}

static void *producer(void *arg)
{
	struct verbs_ring *r = arg;
	uint64_t head = 0;
	uint32_t seq;
	uint8_t payload[4000];

	for (seq = 0; seq < LAPS_RECORDS; seq++) {
		uint32_t len = 1 + seq * 2654435761u % (uint32_t)sizeof(payload);
		struct verbs_wire_pkt h = pkt(seq, len);
		uint32_t skip = verbs_ring_skip(head, h.rec.len, VERBS_SUB_DATA);

		while (!verbs_ring_fits(head, verbs_ring_acquire(&r->tail), skip + h.rec.len,
					VERBS_SUB_DATA)) {
			/* Full: ask, look once more, then wait for the word. */
			verbs_ring_flag_set(&r->want_room, true);
			verbs_ring_fence();
			if (verbs_ring_fits(head, verbs_ring_acquire(&r->tail), skip + h.rec.len,
					    VERBS_SUB_DATA)) {
				verbs_ring_flag_set(&r->want_room, false);
				break;
			}
			while (__atomic_load_n(&r->want_room, __ATOMIC_ACQUIRE))
				sched_yield();
		}
		memset(payload, (uint8_t)seq, len);
		head = verbs_ring_write(r, VERBS_SUB_DATA, head, skip, &h, sizeof(h), payload, len);
		verbs_ring_release(&r->head, head);
		verbs_ring_fence();
		(void)verbs_ring_flag_take(&r->sleeping);	/* the "wake-up" is the flag's clearing */
	}
	return NULL;
}

/* The consumer sleeps only on the flags: a lost wake-up hangs it (and the
 * deadline fails the test). */
static void test_laps(void **state)
{
	struct verbs_ring *r = sub_new();
	struct lap l = { r, 0, false };
	uint64_t tail = 0, deadline = now_ns() + 60ull * 1000000000u;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, producer, r), 0);
	while (l.next < LAPS_RECORDS && !l.bad && now_ns() < deadline) {
		uint64_t head = verbs_ring_acquire(&r->head);

		if (head == tail) {
			verbs_ring_flag_set(&r->sleeping, true);
			verbs_ring_fence();
			if (verbs_ring_acquire(&r->head) == tail)
				while (__atomic_load_n(&r->sleeping, __ATOMIC_ACQUIRE) &&
				       now_ns() < deadline)
					sched_yield();
			verbs_ring_flag_set(&r->sleeping, false);
			continue;
		}
		assert_true(head - tail <= VERBS_SUB_DATA);
		verbs_ring_walk(r->data, VERBS_SUB_DATA, tail, head, on_piece, &l);
		tail = head;
		verbs_ring_release(&r->tail, tail);
		verbs_ring_fence();
		(void)verbs_ring_flag_take(&r->want_room);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(l.bad);
	assert_int_equal(l.next, LAPS_RECORDS);
	assert_int_equal(verbs_ring_acquire(&r->head), tail);
	free(r);
}

/* ---- a grant taken back mid-write --------------------------------------- */

struct sender {
	struct verbs_ring *sub;
	uint64_t head;
	uint32_t seq;
	bool counted;
};

static void *send_one(void *arg)
{
	struct sender *s = arg;
	struct verbs_wire_pkt h = pkt(s->seq, 0);
	uint32_t skip = verbs_ring_skip(s->head, h.rec.len, VERBS_SUB_DATA);

	s->counted = verbs_sub_put(s->sub, GRANT, &s->head, skip, &h, sizeof(h), NULL, 0);
	return NULL;
}

struct got {
	uint32_t n, seq[4];
};

static void got_one(void *arg, const struct verbs_wire_pkt *p, const char *payload)
{
	struct got *g = arg;

	(void)payload;
	if (g->n < 4)
		g->seq[g->n] = p->qkey;
	g->n++;
}

/* What the receiver takes now, from *@tail (moved on). */
static struct got take(struct verbs_ring *sub, const struct verbs_bind *bind, uint64_t *tail)
{
	struct got g = { 0 };
	struct verbs_bind b = { 0 };
	uint64_t end = verbs_sub_look(sub, bind, GEN, *tail, &b);

	verbs_sub_walk(&b, sub->data, *tail, end, got_one, &g);
	*tail = end;
	return g;
}

static void test_taken_back_mid_write(void **state)
{
	struct verbs_ring *sub = sub_new();
	struct verbs_bind bind = { .gen = GEN, .open = VERBS_BIND_OPEN, .sqpn = 20, .dqpn = 24 };
	struct sender s = { sub, 0, 1, false };
	uint64_t tail = 0, limit, deadline = now_ns() + 10ull * 1000000000u;
	pthread_t t;
	struct got g;

	(void)state;
	sub->grant = GRANT;
	/* One record while the grant holds: the receiver's. */
	send_one(&s);
	assert_true(s.counted);
	/* The daemon's first step; then the sender writes one more (it
	 * waits for the second step to learn where the limit is). */
	limit = verbs_grant_close(sub, &bind);
	assert_int_equal(limit, s.head);
	s.seq = 2;
	assert_int_equal(pthread_create(&t, NULL, send_one, &s), 0);
	while (verbs_ring_acquire(&sub->head) == limit && now_ns() < deadline)
		sched_yield();
	assert_true(verbs_ring_acquire(&sub->head) > limit);
	/* A receiver that loads that head now takes nothing: its binding
	 * says CLOSING. (Had the daemon closed the binding only in the
	 * second step, it would find the grant open and take both.) */
	g = take(sub, &bind, &tail);
	assert_int_equal(g.n, 0);
	assert_int_equal(tail, 0);
	/* The second step: the receiver takes to the limit, the sender
	 * learns that its record is past it (the daemon's way). */
	verbs_grant_closed(sub, &bind, limit);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(s.counted);
	g = take(sub, &bind, &tail);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.seq[0], 1);
	assert_int_equal(tail, limit);
	/* And never more, whatever the sender's head says. */
	g = take(sub, &bind, &tail);
	assert_int_equal(g.n, 0);
	free(sub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_laps),
		cmocka_unit_test(test_taken_back_mid_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
