/* SPDX-License-Identifier: MIT */
/*
 * verbs/rc.c, the provider's RC transport (IBA 9.7, 9.9), between two QPs
 * joined by a wire of this test's own: the functions rc.c calls around it
 * (sending a packet, completing a WR, memory keys, the clock) are fakes
 * here, so each case drives both ends packet by packet and can drop,
 * repeat or hold what it likes. PSNs across the 24-bit wrap, a sequence
 * NAK and the resend it brings, RNR NAKs until rnr_retry runs out, a
 * duplicate RDMA READ answered again and taken once, and retries after the
 * timeout until retry_cnt runs out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "verbs/provider.h"

#define MTU		IBV_MTU_256	/* 256 bytes a packet: messages of a few */
#define MEM		16384
#define WIRE_MAX	256
#define WCS_MAX		64
#define RKEY		1

struct sent {
	struct verbs_wire_pkt h;
	char payload[VERBS_PKT_MAX_PAYLOAD];
};

/* One side: its context, QP, memory, what it sent, what it completed. */
static struct side {
	struct ibemu_context ctx;
	struct ibemu_qp qp;
	struct ibemu_swqe sq[16];
	char mem[MEM];
	struct sent wire[WIRE_MAX];
	unsigned nwire, taken;
	struct ibv_wc wc[WCS_MAX];
	unsigned nwc;
	unsigned rwqes;		/* receive WRs it still has */
	unsigned errors;	/* times it went to the error state */
} side[2];
static uint64_t now_us;

static struct side *side_of_ctx(struct ibemu_context *ctx)
{
	return ctx == &side[0].ctx ? &side[0] : &side[1];
}

static struct side *side_of_qp(struct ibemu_qp *qp)
{
	return qp == &side[0].qp ? &side[0] : &side[1];
}

/* ---- the fakes: what rc.c calls ----------------------------------------- */

uint64_t ibemu_now_us(void)
{
	return now_us;
}

void ibemu_timer_at(struct ibemu_context *ctx, uint64_t when_us)
{
	(void)ctx;
	(void)when_us;
}

bool ibemu_send_pkt(struct ibemu_qp *qp, const struct verbs_wire_pkt *hdr,
		    const void *payload)
{
	struct side *s = side_of_ctx(qp->ctx);
	struct sent *p;

	assert_true(s->nwire < WIRE_MAX);
	p = &s->wire[s->nwire++];
	p->h = *hdr;
	if (hdr->len)
		memcpy(p->payload, payload, hdr->len);
	return true;
}


void ibemu_complete(struct ibemu_qp *qp, bool recv, const struct ibv_wc *wc, bool se)
{
	struct side *s = side_of_qp(qp);

	(void)recv;
	(void)se;
	assert_true(s->nwc < WCS_MAX);
	s->wc[s->nwc++] = *wc;
}

void ibemu_qp_to_error(struct ibemu_qp *qp)
{
	qp->state = IBV_QPS_ERR;
	side_of_qp(qp)->errors++;
}

/* One region a side: key RKEY, virtual addresses 0 .. MEM. */
bool ibemu_mr_check(struct ibemu_context *ctx, struct ibv_pd *pd, uint32_t key, bool remote,
		    uint64_t va, uint64_t len, int access, char **host)
{
	(void)pd;
	(void)remote;
	(void)access;
	if (key != RKEY || va > MEM || len > MEM - va)
		return false;
	*host = side_of_ctx(ctx)->mem + va;
	return true;
}

/* Lists of one entry here, whose addr is a pointer into a side's mem. */
int ibemu_sge_check(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, int access, uint64_t *total)
{
	int i;

	(void)ctx;
	(void)pd;
	(void)access;
	for (*total = 0, i = 0; i < n; i++)
		*total += sg[i].length;
	return 0;
}

void ibemu_sge_copy(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, uint64_t off, void *buf, size_t len, bool to_sge)
{
	char *at = (char *)(uintptr_t)sg[0].addr + off;

	(void)ctx;
	(void)pd;
	assert_int_equal(n, 1);
	assert_true(off + len <= sg[0].length);
	if (to_sge)
		memcpy(at, buf, len);
	else
		memcpy(buf, at, len);
}

/* Receive WRs: 4 KiB of mem each, from the middle up. */
bool ibemu_take_rwqe(struct ibemu_qp *qp, struct ibemu_rwqe *out)
{
	struct side *s = side_of_qp(qp);

	if (!s->rwqes)
		return false;
	s->rwqes--;
	memset(out, 0, sizeof(*out));
	out->wr_id = 100 + s->rwqes;
	out->num_sge = 1;
	out->sg[0].addr = (uintptr_t)(s->mem + MEM / 2);
	out->sg[0].length = MEM / 2;
	return true;
}

/* XRC SRQs (verbs/xrc.c): these tests' QPs are RC, which name none. */
struct ibemu_srq *ibemu_xsrq_find(struct ibemu_context *ctx, uint32_t srqn)
{
	(void)ctx;
	(void)srqn;
	return NULL;
}

/* Memory windows (verbs/mw.c): these tests use regions only. */
int ibemu_mw_local(struct ibemu_qp *qp, const struct ibemu_swqe *w)
{
	(void)qp;
	(void)w;
	return IBV_WC_MW_BIND_ERR;
}

bool ibemu_mw_check(struct ibemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
		    char **host)
{
	(void)qp; (void)rkey; (void)va; (void)len; (void)access; (void)host;
	return false;
}

bool ibemu_mw_invalidate(struct ibemu_qp *qp, uint32_t rkey)
{
	(void)qp;
	(void)rkey;
	return false;
}

/* ---- the harness --------------------------------------------------------- */

static int setup(void **state)
{
	unsigned i;

	(void)state;
	memset(side, 0, sizeof(side));
	now_us = 1000;
	for (i = 0; i < 2; i++) {
		struct ibemu_qp *qp = &side[i].qp;

		qp->ctx = &side[i].ctx;
		qp->qp.qp_num = 0x40 + i;
		qp->dest_qpn = 0x40 + !i;
		qp->state = IBV_QPS_RTS;
		qp->path_mtu = MTU;
		qp->port = 1;
		qp->access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		qp->sq = side[i].sq;
		qp->sq_size = 16;
		qp->sq_sig_all = true;
		qp->timeout = 1;	/* 8 us */
		qp->retry_cnt = qp->retry_left = 2;
		qp->rnr_retry = qp->rnr_left = 2;
		qp->min_rnr_timer = 1;
	}
	return 0;
}

/* Post one WR of @len bytes at mem[@at] on side @s. */
static void post(unsigned s, enum ibv_wr_opcode op, unsigned at, uint64_t len,
		 uint64_t remote_addr)
{
	struct ibemu_qp *qp = &side[s].qp;
	struct ibemu_swqe *w = &qp->sq[(qp->sq_head + qp->sq_count) % qp->sq_size];

	memset(w, 0, sizeof(*w));
	w->wr_id = 7;
	w->opcode = op;
	w->num_sge = 1;
	w->sg[0].addr = (uintptr_t)(side[s].mem + at);
	w->sg[0].length = (uint32_t)len;
	w->len = len;
	w->remote_addr = remote_addr;
	w->rkey = RKEY;
	qp->sq_count++;
	ibemu_rc_send_pending(qp);
}

/* Hand side @from's next unread packet to the other side, unless
 * @drop says no; false when there is none. */
static bool carry(unsigned from, bool (*drop)(const struct verbs_wire_pkt *h))
{
	struct side *s = &side[from];
	struct sent *p;

	if (s->taken == s->nwire)
		return false;
	p = &s->wire[s->taken++];
	if (!drop || !drop(&p->h))
		ibemu_rc_receive(&side[!from].qp, &p->h, p->payload);
	return true;
}

/* Both ways until the wire is quiet. */
static void settle(bool (*drop)(const struct verbs_wire_pkt *h))
{
	while (carry(0, drop) || carry(1, drop))
		;
}

static void fill(char *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(i * 7 + seed);
}

static unsigned count_op(unsigned s, unsigned opcode, unsigned syndrome_class)
{
	unsigned i, n = 0;

	for (i = 0; i < side[s].nwire; i++)
		if (side[s].wire[i].h.opcode == opcode &&
		    (opcode != OP_RC_ACK || (side[s].wire[i].h.aeth >> 24 & 0xe0) == syndrome_class))
			n++;
	return n;
}

/* ---- the cases ----------------------------------------------------------- */

/* A SEND of three packets whose PSNs cross 0xffffff -> 0. */
static void test_psn_wrap(void **state)
{
	(void)state;
	side[0].qp.sq_psn = 0xfffffe;
	side[1].qp.epsn = 0xfffffe;
	side[1].rwqes = 1;
	fill(side[0].mem, 768, 3);
	post(0, IBV_WR_SEND, 0, 768, 0);
	assert_int_equal(side[0].nwire, 3);
	assert_int_equal(side[0].wire[2].h.psn, 0);
	settle(NULL);
	assert_int_equal(side[1].qp.epsn, 1);
	assert_int_equal(side[1].nwc, 1);
	assert_int_equal(side[1].wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(side[1].wc[0].byte_len, 768);
	assert_memory_equal(side[1].mem + MEM / 2, side[0].mem, 768);
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(side[0].qp.sq_count, 0);
}

static bool drop_first_send(const struct verbs_wire_pkt *h)
{
	static unsigned seen;

	return h->opcode == OP_RC_SEND_FIRST && seen++ == 0;
}

/* The first packet of a message lost: the responder NAKs the gap once
 * (IBA 9.9.2.2), the requester resends from there, the message lands. */
static void test_nak_and_resend(void **state)
{
	(void)state;
	side[1].rwqes = 1;
	fill(side[0].mem, 700, 5);
	post(0, IBV_WR_SEND, 0, 700, 0);
	settle(drop_first_send);
	assert_int_equal(count_op(1, OP_RC_ACK, 0x60), 1);	/* one NAK, not one per packet */
	assert_int_equal(side[1].nwc, 1);
	assert_int_equal(side[1].wc[0].byte_len, 700);
	assert_memory_equal(side[1].mem + MEM / 2, side[0].mem, 700);
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_SUCCESS);
}

/* No receive WR: RNR NAKs; the requester waits the RNR time and tries
 * again, rnr_retry times, then fails the WR (IBA 9.9.2.3, 10.8.3.3). */
static void test_rnr_until_exhausted(void **state)
{
	unsigned round;

	(void)state;
	post(0, IBV_WR_SEND, 0, 100, 0);
	for (round = 0; round < 3; round++) {
		settle(NULL);
		assert_int_equal(count_op(1, OP_RC_ACK, 0x20), round + 1);
		if (round < 2) {
			assert_int_equal(side[0].nwc, 0);
			assert_true(side[0].qp.rnr_until_us > now_us);
			now_us = side[0].qp.rnr_until_us;
			ibemu_rc_timer(&side[0].qp, now_us);
		}
	}
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	assert_int_equal(side[0].qp.state, IBV_QPS_ERR);
}

/* An RDMA READ whose request arrives twice: the responder answers both
 * (a duplicate READ is done again, IBA 9.9.2.1); the requester takes the
 * data once and completes once. */
static void test_duplicate_read(void **state)
{
	(void)state;
	fill(side[1].mem + 1024, 600, 9);
	post(0, IBV_WR_RDMA_READ, 0, 600, 1024);
	assert_int_equal(side[0].nwire, 1);
	/* The request, twice: the second is a duplicate to the responder. */
	ibemu_rc_receive(&side[1].qp, &side[0].wire[0].h, side[0].wire[0].payload);
	settle(NULL);
	assert_int_equal(count_op(1, OP_RC_READ_RESPONSE_FIRST, 0), 2);
	assert_int_equal(count_op(1, OP_RC_READ_RESPONSE_LAST, 0), 2);
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(side[0].wc[0].opcode, IBV_WC_RDMA_READ);
	assert_int_equal(side[0].wc[0].byte_len, 600);
	assert_memory_equal(side[0].mem, side[1].mem + 1024, 600);
}

static bool drop_all(const struct verbs_wire_pkt *h)
{
	(void)h;
	return true;
}

/* Nothing comes back: each timeout resends, retry_cnt times, then the WR
 * fails with RETRY_EXC_ERR and the QP goes to the error state. */
static void test_retry_exhausted(void **state)
{
	unsigned sends = 0, round;

	(void)state;
	fill(side[0].mem, 300, 1);
	post(0, IBV_WR_RDMA_WRITE, 0, 300, 0);
	for (round = 0; round < 3; round++) {
		settle(drop_all);
		sends = side[0].nwire;
		assert_int_equal(side[0].nwc, 0);
		now_us = side[0].qp.deadline_us;
		ibemu_rc_timer(&side[0].qp, now_us);
	}
	/* Sent once, then again after each of the 2 timeouts allowed. */
	assert_int_equal(sends, 3 * 2);	/* 300 bytes: two packets a try */
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(side[0].qp.state, IBV_QPS_ERR);
	assert_int_equal(side[1].nwc, 0);
}

/* A SEND of 32 packets that takes longer than the local ACK timeout to
 * cross: the ACK it asks for after its 16th packet is progress, so the
 * timer does not resend it whole; a timeout after that resends from the
 * 17th packet only; the message lands once, whole. */
static void test_long_message_acked_within(void **state)
{
	struct ibemu_qp *qp = &side[0].qp;
	unsigned i, before;

	(void)state;
	side[1].rwqes = 1;
	fill(side[0].mem, MEM / 2, 9);
	post(0, IBV_WR_SEND, 0, MEM / 2, 0);
	assert_int_equal(side[0].nwire, 32);
	for (i = 0; i < 16; i++)
		carry(0, NULL);
	assert_int_equal(count_op(1, OP_RC_ACK, 0), 1);	/* asked for in the 16th */
	now_us += 6;	/* the ACK comes late, the timeout (8 us) not yet past */
	carry(1, NULL);
	now_us += 4;	/* past the first deadline, not past the ACK's */
	ibemu_rc_timer(qp, now_us);
	assert_int_equal(side[0].nwire, 32);	/* nothing resent */
	assert_int_equal(qp->retry_left, qp->retry_cnt);
	now_us = qp->deadline_us;
	ibemu_rc_timer(qp, now_us);
	before = 32;
	assert_int_equal(side[0].nwire, before + 16);	/* packets 17..32 again */
	assert_int_equal(side[0].wire[before].h.psn, 16);
	settle(NULL);
	assert_int_equal(side[1].nwc, 1);
	assert_int_equal(side[1].wc[0].byte_len, MEM / 2);
	assert_memory_equal(side[1].mem + MEM / 2, side[0].mem, MEM / 2);
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_SUCCESS);
	/* The 16 duplicates: one ACK for them, asked for by the last. */
	assert_int_equal(count_op(1, OP_RC_ACK, 0), 1 + 1 + 1);
}

/* An RDMA WRITE to a range the key does not cover: a remote access NAK,
 * and the requester's WR fails with REM_ACCESS_ERR. */
static void test_write_out_of_range(void **state)
{
	(void)state;
	post(0, IBV_WR_RDMA_WRITE, 0, 512, MEM - 100);
	settle(NULL);
	assert_int_equal(count_op(1, OP_RC_ACK, 0x60), 1);
	assert_int_equal(side[0].nwc, 1);
	assert_int_equal(side[0].wc[0].status, IBV_WC_REM_ACCESS_ERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_psn_wrap, setup),
		cmocka_unit_test_setup(test_nak_and_resend, setup),
		cmocka_unit_test_setup(test_rnr_until_exhausted, setup),
		cmocka_unit_test_setup(test_duplicate_read, setup),
		cmocka_unit_test_setup(test_retry_exhausted, setup),
		cmocka_unit_test_setup(test_write_out_of_range, setup),
		cmocka_unit_test_setup(test_long_message_acked_within, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
