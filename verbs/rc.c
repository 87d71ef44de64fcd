/* SPDX-License-Identifier: MIT */
/*
 * The RC transport (IBA 9.7 and 9.9), as an HCA does it at both ends, and
 * UC's and XRC's, which are made of it.
 *
 * Requester: each send WR takes PSNs (one a packet; an RDMA READ as many
 * as its response has), goes out split at the path MTU, and stays until
 * acknowledged; at most max_rd_atomic READs and atomics are outstanding.
 * A long message asks for an ACK every ACKREQ_EVERY packets, so that an
 * ACK within it is progress too. No progress for 4.096 us x 2^timeout
 * resends everything unacknowledged, from the first packet no ACK
 * covered, retry_cnt times, then IBV_WC_RETRY_EXC_ERR; an RNR NAK
 * waits its timer and resends, rnr_retry times (7: for ever), then
 * IBV_WC_RNR_RETRY_EXC_ERR; a NAK ends the QP in the error state.
 *
 * Responder: takes the packet with the expected PSN, re-acknowledges
 * duplicates that ask for an ACK (re-reads a duplicate READ), NAKs the
 * first packet past a gap, RNR-NAKs a SEND that finds no receive WR, and checks every remote
 * access against the region's key, range and rights and the QP's.
 *
 * UC (IBA 9.8) shares the packets and the responder's checks: its SENDs
 * and WRITEs are RC's opcodes + 0x20, a WR completes once sent, nothing is
 * acknowledged or sent again, and the responder drops a message silently
 * when a packet of it is missing (a PSN gap), has no receive WR, or breaks
 * a rule; the receive WR stays for the next message.
 *
 * XRC shares all of RC's: its opcodes are RC's + 0xa0, its requests carry
 * the SRQ that takes them at the target (XRCETH), whose PD and CQ the
 * target then uses (verbs/xrc.c). Binds of memory windows and local
 * invalidations are send queue WRs done when they reach the wire and
 * completed in order (verbs/mw.c); SEND with Invalidate carries an IETH.
 *
 * Atomics (IBA 9.4.5): CmpSwap and FetchAdd on an 8-byte aligned word of
 * the responder's memory, in host byte order (as rxe; ConnectX works on
 * big-endian words), with __atomic operations, so the CPU sees them whole
 * too; the original value comes back in an ATOMIC ACKNOWLEDGE and goes to
 * the requester's buffer. A duplicate request gets the saved result.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

/* AETH syndromes (IBA 9.7.5.2.1, Table 42). */
#define AETH_ACK		0x1f	/* ACK, credit count "invalid" */
#define AETH_RNR(t)		(0x20 | (t))
#define AETH_NAK_SEQ		0x60
#define AETH_NAK_INV_REQ	0x61
#define AETH_NAK_REM_ACCESS	0x62
#define AETH_NAK_REM_OP		0x63

/* The RNR NAK timer field in microseconds (IBA Table 45). */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

/*
 * A SEND or WRITE asks for an ACK (BTH:AckReq, IBA 9.2) in its last packet
 * and in every ACKREQ_EVERY-th, as HCAs do: the transport timer measures
 * time without progress, and a message that takes longer than the local
 * ACK timeout to cross (8 MiB in 2,048 packets, in a sanitizer build
 * beside other tests, against perftest's 67 ms) was resent whole, again
 * and again, until RETRY_EXC_ERR.
 */
#define ACKREQ_EVERY	16

/* Local ACK timeout: 4.096 us x 2^timeout; 0 means none (IBA 11.2.4.2). */
static uint64_t timeout_us(const struct ibemu_qp *qp)
{
	return qp->timeout ? (4096ull << qp->timeout) / 1000 : 0;
}

static uint32_t npkts_of(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

/* A packet of @qp to its peer: the fields every RC packet has. */
static void rc_header(const struct ibemu_qp *qp, struct verbs_wire_pkt *h)
{
	memset(h, 0, sizeof(*h));
	h->port = qp->port;
	h->sl = qp->ah.sl;
	h->slid = qp->ah.src_path_bits;
	h->dlid = qp->ah.dlid;
	h->pkey_index = qp->pkey_index;
	h->sqpn = qp->qp.qp_num;
	h->dqpn = qp->dest_qpn;
	/* A path with a GRH (every RoCE one: docs/roce.md) puts it in each
	 * packet; the daemon fills the SGID in from the index. */
	if (qp->ah.is_global) {
		h->flags |= VERBS_PKT_GRH;
		h->grh_flow = qp->ah.grh.flow_label & 0xfffff;
		h->grh_tclass = qp->ah.grh.traffic_class;
		h->grh_hop_limit = qp->ah.grh.hop_limit;
		h->sgid_index = qp->ah.grh.sgid_index;
		memcpy(h->dgid, qp->ah.grh.dgid.raw, 16);
	}
}

/* ---- requester ---------------------------------------------------------- */

static bool signaled(const struct ibemu_qp *qp, const struct ibemu_swqe *w)
{
	return qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);
}

static enum ibv_wc_opcode wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

/* The oldest send WR is done with @status: complete it (an error always,
 * success when signaled) and, on error, the QP goes to the error state. */
static void complete_head(struct ibemu_qp *qp, enum ibv_wc_status status)
{
	struct ibemu_swqe *w = &qp->sq[qp->sq_head];
	struct ibv_wc wc;

	if (status != IBV_WC_SUCCESS || signaled(qp, w)) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = status;
		wc.opcode = wc_opcode(w->opcode);
		wc.qp_num = qp->qp.qp_num;
		if (ibemu_wr_is_rd_atomic(w->opcode))
			wc.byte_len = (uint32_t)w->len;
		ibemu_complete(qp, false, &wc, false);
	}
	free(w->inline_data);
	w->inline_data = NULL;
	if (qp->sq_next == qp->sq_head)
		qp->sq_next = (qp->sq_next + 1) % qp->sq_size;
	qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
	qp->sq_count--;
	if (status != IBV_WC_SUCCESS)
		ibemu_qp_to_error(qp);
}

/* Something was acknowledged: the retry counts start again. */
static void progress(struct ibemu_qp *qp)
{
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
	qp->deadline_us = qp->sq_head != qp->sq_next && timeout_us(qp) ?
			  ibemu_now_us() + timeout_us(qp) : 0;
	ibemu_timer_at(qp->ctx, qp->deadline_us);
}

/* A request on the wire: UC's and XRC's opcodes are RC's moved (IBA
 * Table 33), and an XRC request names the target's SRQ (XRCETH). */
static bool send_request(struct ibemu_qp *qp, const struct ibemu_swqe *w,
			 struct verbs_wire_pkt *h, const void *payload)
{
	if (qp->qp.qp_type == IBV_QPT_UC) {
		h->opcode += OP_UC_FIRST;
		h->flags &= (uint8_t)~VERBS_PKT_ACKREQ;	/* nothing answers UC */
	} else if (qp->qp.qp_type == IBV_QPT_XRC_SEND) {
		h->opcode += OP_XRC_FIRST;
		h->xrc_srqn = w->remote_srqn;
	}
	return ibemu_send_pkt(qp, h, payload);
}

/* Packet @i of send WR @w on the wire: false when it does not take it
 * now (held back). */
static bool send_packet(struct ibemu_qp *qp, struct ibemu_swqe *w, uint32_t i, char *buf)
{
	uint32_t mtu = ibemu_mtu_bytes(qp->path_mtu);
	bool first = i == 0, last = i == w->npkts - 1, imm = false;
	uint64_t off = (uint64_t)i * mtu;
	struct verbs_wire_pkt h;

	rc_header(qp, &h);
	h.psn = (w->psn + i) & PSN_MASK;
	if (ibemu_wr_is_atomic(w->opcode)) {
		h.opcode = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? OP_RC_CMP_SWAP :
								      OP_RC_FETCH_ADD;
		h.va = w->remote_addr;
		h.rkey = w->rkey;
		h.swap_add = w->swap_add;
		h.compare = w->compare;
		h.flags |= VERBS_PKT_ACKREQ;
		return send_request(qp, w, &h, NULL);
	}
	if (w->opcode == IBV_WR_RDMA_READ) {
		h.opcode = OP_RC_READ_REQUEST;
		h.va = w->remote_addr;
		h.rkey = w->rkey;
		h.dma_len = (uint32_t)w->len;
		h.flags |= VERBS_PKT_ACKREQ;
		return send_request(qp, w, &h, NULL);
	}
	h.len = (uint32_t)(w->len - off < mtu ? w->len - off : mtu);
	if (w->inline_data)
		memcpy(buf, w->inline_data + off, h.len);
	else
		ibemu_sge_copy(qp->ctx, qp->qp.pd, w->sg, w->num_sge, off, buf, h.len, false);
	if (w->opcode == IBV_WR_SEND_WITH_INV) {
		h.opcode = first && last ? OP_RC_SEND_ONLY_INV : first ? OP_RC_SEND_FIRST :
			   last ? OP_RC_SEND_LAST_INV : OP_RC_SEND_MIDDLE;
		if (last)
			h.imm = w->rkey;	/* IETH */
	} else if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM) {
		imm = w->opcode == IBV_WR_SEND_WITH_IMM;
		h.opcode = first && last ? (imm ? OP_RC_SEND_ONLY_IMM : OP_RC_SEND_ONLY) :
			   first ? OP_RC_SEND_FIRST :
			   last ? (imm ? OP_RC_SEND_LAST_IMM : OP_RC_SEND_LAST) : OP_RC_SEND_MIDDLE;
	} else {
		imm = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		h.opcode = first && last ? (imm ? OP_RC_WRITE_ONLY_IMM : OP_RC_WRITE_ONLY) :
			   first ? OP_RC_WRITE_FIRST :
			   last ? (imm ? OP_RC_WRITE_LAST_IMM : OP_RC_WRITE_LAST) : OP_RC_WRITE_MIDDLE;
		if (first) {
			h.va = w->remote_addr;
			h.rkey = w->rkey;
			h.dma_len = (uint32_t)w->len;
		}
	}
	if (last || (i + 1) % ACKREQ_EVERY == 0)
		h.flags |= VERBS_PKT_ACKREQ;
	if (last) {
		if (w->send_flags & IBV_SEND_SOLICITED)
			h.flags |= VERBS_PKT_SE;
		if (imm)
			h.imm = w->imm;
	}
	return send_request(qp, w, &h, buf);
}

/* The packets of @w not on the wire yet, while it takes them (flow
 * control: a context held back stops and goes on later); true when all
 * of them went. */
static bool send_wqe(struct ibemu_qp *qp, struct ibemu_swqe *w)
{
	uint32_t n = w->opcode == IBV_WR_RDMA_READ ? 1 : w->npkts;

	if (w->opcode == IBV_WR_RDMA_READ && !w->sent_pkts)
		w->read_next = w->psn;
	while (w->sent_pkts < n && send_packet(qp, w, w->sent_pkts, qp->ctx->payload))
		w->sent_pkts++;
	return w->sent_pkts == n;
}

/* Everything sent and not acknowledged goes again, oldest first. */
static void resend(struct ibemu_qp *qp)
{
	unsigned i;

	for (i = qp->sq_head; i != qp->sq_next; i = (i + 1) % qp->sq_size) {
		/* Go back to the first packet not acknowledged (IBA 9.9.2.1:
		 * the responder takes a message on from its expected PSN). */
		qp->sq[i].sent_pkts = qp->sq[i].acked_pkts;
		if (!send_wqe(qp, &qp->sq[i]))
			return;	/* held back: the timer sends again */
	}
}

/* Packets an RC requester keeps unacknowledged at most (a message larger
 * still goes alone): with nothing like the IBA's end-to-end credits here
 * yet, a requester that sent whole send queues at once filled the
 * responder's queue in the daemon (8192 packets), which then dropped, and
 * retransmissions into the same full queue ended in RETRY_EXC_ERR (qperf
 * rc_bi_bw failed 5 times in 5). */
#define RC_WINDOW	256

/* READs and atomics sent and not yet answered. */
static unsigned rd_atomic_out(const struct ibemu_qp *qp)
{
	unsigned i, n = 0;

	for (i = qp->sq_head; i != qp->sq_next; i = (i + 1) % qp->sq_size)
		n += ibemu_wr_is_rd_atomic(qp->sq[i].opcode);
	return n;
}

/*
 * Give the WR at sq_next its PSNs if it may go now (the window, the
 * responder's resources, its SGEs): false when it must wait, or failed
 * (the QP is then in error). A local WR is done here, and sq_next moves
 * past it.
 */
static bool start_wqe(struct ibemu_qp *qp, struct ibemu_swqe *w, uint32_t mtu, unsigned *rd_out,
		      unsigned rd_max)
{
	int access = ibemu_wr_is_rd_atomic(w->opcode) ? IBV_ACCESS_LOCAL_WRITE : 0;
	uint64_t len;

	if (ibemu_qp_is_rc_req(qp) && qp->sq_head != qp->sq_next &&
	    (uint32_t)psn_diff(qp->sq_psn, qp->sq[qp->sq_head].psn) +
	    npkts_of(w->len, mtu) > RC_WINDOW)
		return false;	/* an ACK makes room (acknowledge) */
	if (ibemu_wr_is_rd_atomic(w->opcode)) {
		if (*rd_out >= rd_max)
			return false;
		(*rd_out)++;
	}
	if (!w->inline_data &&
	    ibemu_sge_check(qp->ctx, qp->qp.pd, w->sg, w->num_sge, access, &len)) {
		/* Only the oldest can complete: later ones wait behind it,
		 * then flush with the QP. */
		if (qp->sq_next == qp->sq_head)
			complete_head(qp, IBV_WC_LOC_PROT_ERR);
		else
			ibemu_qp_to_error(qp);
		return false;
	}
	w->psn = qp->sq_psn;
	if (ibemu_wr_is_local(w->opcode)) {
		/* A bind or an invalidation: done now, in order; it takes no
		 * PSN and completes after what went before it (ack_upto), at
		 * once when that is all done. */
		bool oldest = qp->sq_next == qp->sq_head;

		w->npkts = 0;
		w->local_status = ibemu_mw_local(qp, w);
		qp->sq_next = (qp->sq_next + 1) % qp->sq_size;
		if (oldest)
			complete_head(qp, w->local_status);
		return true;
	}
	w->npkts = npkts_of(w->len, mtu);
	qp->sq_psn = (qp->sq_psn + w->npkts) & PSN_MASK;
	return true;
}

void ibemu_rc_send_pending(struct ibemu_qp *qp)
{
	uint32_t mtu = ibemu_mtu_bytes(qp->path_mtu);
	unsigned tail = (qp->sq_head + qp->sq_count) % qp->sq_size;
	bool was_idle = qp->sq_head == qp->sq_next;
	/* The responder keeps max_rd_atomic READs and atomics at a time
	 * (its responder resources); one more waits here until an answer
	 * frees one (IBA 9.4.4). 0 is taken as 1: none would never go. */
	unsigned rd_max = qp->max_rd_atomic ? qp->max_rd_atomic : 1;
	unsigned rd_out = rd_atomic_out(qp);

	if (qp->state != IBV_QPS_RTS)
		return;
	while (qp->sq_next != tail && qp->state == IBV_QPS_RTS) {
		struct ibemu_swqe *w = &qp->sq[qp->sq_next];

		/* A WR not started takes its PSNs now; one held back before
		 * all of its packets went (flow control) goes on under the
		 * PSNs it has (npkts set), never taking new ones. */
		if (!w->npkts && !start_wqe(qp, w, mtu, &rd_out, rd_max))
			break;
		if (ibemu_wr_is_local(w->opcode))
			continue;	/* done, and gone from sq_next */
		if (!send_wqe(qp, w))
			break;	/* held back: the rest when a credit comes */
		qp->sq_next = (qp->sq_next + 1) % qp->sq_size;
		if (qp->qp.qp_type == IBV_QPT_UC)
			complete_head(qp, IBV_WC_SUCCESS);	/* sent is done */
	}
	if (qp->qp.qp_type == IBV_QPT_UC)
		return;
	if (was_idle && qp->sq_head != qp->sq_next) {
		qp->deadline_us = timeout_us(qp) ? ibemu_now_us() + timeout_us(qp) : 0;
		ibemu_timer_at(qp->ctx, qp->deadline_us);
	}
}

void ibemu_rc_timer(struct ibemu_qp *qp, uint64_t now)
{
	if (qp->state != IBV_QPS_RTS)
		return;
	if (qp->rnr_until_us && now >= qp->rnr_until_us) {
		qp->rnr_until_us = 0;
		resend(qp);
		qp->deadline_us = timeout_us(qp) ? now + timeout_us(qp) : 0;
		return;
	}
	if (!qp->deadline_us || now < qp->deadline_us)
		return;
	if (qp->sq_head == qp->sq_next) {
		qp->deadline_us = 0;
		return;
	}
	if (!qp->retry_left) {
		complete_head(qp, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	qp->retry_left--;
	resend(qp);
	qp->deadline_us = now + timeout_us(qp);
}

/* Complete the WRs that end before PSN @psn (or at it, @inclusive); an
 * unfinished READ or atomic stops it: its data has not come. An ACK
 * within a SEND or WRITE marks its packets up to there done. True when
 * anything new was acknowledged: progress. */
static bool ack_upto(struct ibemu_qp *qp, uint32_t psn, bool inclusive)
{
	bool any = false;

	while (qp->sq_head != qp->sq_next) {
		struct ibemu_swqe *w = &qp->sq[qp->sq_head];
		int32_t d = psn_diff(w->psn + w->npkts - 1, psn);

		if (ibemu_wr_is_rd_atomic(w->opcode))
			break;
		if (d > 0 || (d == 0 && !inclusive)) {
			int32_t n = psn_diff(psn, w->psn) + inclusive;

			if (n > (int32_t)w->acked_pkts && n <= (int32_t)w->sent_pkts) {
				w->acked_pkts = (uint32_t)n;
				any = true;
			}
			break;
		}
		/* A local WR after what this acknowledges ends with it. */
		complete_head(qp, ibemu_wr_is_local(w->opcode) ? w->local_status : IBV_WC_SUCCESS);
		any = true;
	}
	return any;
}

static void read_response(struct ibemu_qp *qp, const struct verbs_wire_pkt *p,
			  const char *payload)
{
	uint32_t mtu = ibemu_mtu_bytes(qp->path_mtu);
	struct ibemu_swqe *w;

	ack_upto(qp, p->psn, false);
	if (qp->sq_head == qp->sq_next)
		return;
	w = &qp->sq[qp->sq_head];
	/* Only the response packet expected next; a gap waits for the
	 * timer, which asks again. */
	if (w->opcode != IBV_WR_RDMA_READ || p->psn != w->read_next)
		return;
	ibemu_sge_copy(qp->ctx, qp->qp.pd, w->sg, w->num_sge,
		       (uint64_t)(uint32_t)psn_diff(p->psn, w->psn) * mtu, (void *)payload, p->len,
		       true);
	w->read_next = (w->read_next + 1) & PSN_MASK;
	if (p->opcode == OP_RC_READ_RESPONSE_LAST || p->opcode == OP_RC_READ_RESPONSE_ONLY) {
		complete_head(qp, IBV_WC_SUCCESS);
		progress(qp);
		ibemu_rc_send_pending(qp);	/* a READ or atomic may go now */
		return;
	}
	progress(qp);
}

/* An ATOMIC ACKNOWLEDGE: the original value to the WR's buffer. */
static void atomic_response(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	struct ibemu_swqe *w;

	ack_upto(qp, p->psn, false);
	if (qp->sq_head == qp->sq_next)
		return;
	w = &qp->sq[qp->sq_head];
	if (!ibemu_wr_is_atomic(w->opcode) || p->psn != w->psn)
		return;	/* a duplicate's, or not the one awaited */
	ibemu_sge_copy(qp->ctx, qp->qp.pd, w->sg, w->num_sge, 0, (void *)&p->swap_add,
		       sizeof(p->swap_add), true);
	complete_head(qp, IBV_WC_SUCCESS);
	progress(qp);
	ibemu_rc_send_pending(qp);
}

static void acknowledge(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	unsigned syn = p->aeth >> 24;

	switch (syn & 0xe0) {
	case 0x00:	/* ACK */
		if (ack_upto(qp, p->psn, true)) {
			progress(qp);
			ibemu_rc_send_pending(qp);	/* the window moved */
		}
		return;
	case 0x20:	/* RNR NAK: the PSN named waits, the ones before are done */
		ack_upto(qp, p->psn, false);
		if (qp->sq_head == qp->sq_next)
			return;
		if (qp->rnr_retry != 7 && !qp->rnr_left) {
			complete_head(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->rnr_retry != 7)
			qp->rnr_left--;
		qp->deadline_us = 0;
		qp->rnr_until_us = ibemu_now_us() + rnr_us[syn & 0x1f];
		ibemu_timer_at(qp->ctx, qp->rnr_until_us);
		return;
	case 0x60:	/* NAK */
		ack_upto(qp, p->psn, false);
		if (qp->sq_head == qp->sq_next)
			return;
		switch (syn) {
		case AETH_NAK_SEQ:
			resend(qp);
			return;
		case AETH_NAK_INV_REQ:
			complete_head(qp, IBV_WC_REM_INV_REQ_ERR);
			return;
		case AETH_NAK_REM_ACCESS:
			complete_head(qp, IBV_WC_REM_ACCESS_ERR);
			return;
		default:
			complete_head(qp, IBV_WC_REM_OP_ERR);
			return;
		}
	}
}

/* ---- responder ---------------------------------------------------------- */

/* A response's opcode: an XRC target answers in XRC's (IBA Table 33). */
static unsigned response_op(const struct ibemu_qp *qp, unsigned rc_op)
{
	return qp->qp.qp_type == IBV_QPT_XRC_RECV ? rc_op + OP_XRC_FIRST : rc_op;
}

/* An ACKNOWLEDGE (or NAK) of @psn; an ATOMIC ACKNOWLEDGE carries @orig. */
static void ack_packet(struct ibemu_qp *qp, unsigned opcode, uint32_t psn, unsigned syndrome,
		       uint64_t orig)
{
	struct verbs_wire_pkt h;

	rc_header(qp, &h);
	h.opcode = (uint8_t)response_op(qp, opcode);
	h.psn = psn & PSN_MASK;
	h.aeth = (uint32_t)syndrome << 24 | (qp->msn & PSN_MASK);
	h.swap_add = orig;
	ibemu_send_pkt(qp, &h, NULL);
}

static void send_ack(struct ibemu_qp *qp, uint32_t psn, unsigned syndrome)
{
	ack_packet(qp, OP_RC_ACK, psn, syndrome, 0);
}

/* The region of an RDMA request, checked (IBA 9.7.4.1.3, 10.6.3): the
 * QP must allow the access and the key cover the range with the right. */
static bool remote_ok(struct ibemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
		      char **host)
{
	static char none;

	if (!(qp->access & access))
		return false;
	if (!len) {
		*host = &none;
		return true;
	}
	return ibemu_mr_check(qp->ctx, ibemu_rx_pd(qp), rkey, true, va, len, access, host) ||
	       ibemu_mw_check(qp, rkey, va, len, access, host);
}

/* Answer a READ request at @psn: its response packets, from memory now. */
static bool read_reply(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	uint32_t mtu = ibemu_mtu_bytes(qp->path_mtu), n = npkts_of(p->dma_len, mtu), i;
	struct verbs_wire_pkt h;
	char *host;

	if (!remote_ok(qp, p->rkey, p->va, p->dma_len, IBV_ACCESS_REMOTE_READ, &host))
		return false;
	for (i = 0; i < n; i++) {
		uint64_t off = (uint64_t)i * mtu;

		rc_header(qp, &h);
		h.psn = (p->psn + i) & PSN_MASK;
		h.opcode = (uint8_t)response_op(qp, n == 1 ? OP_RC_READ_RESPONSE_ONLY :
						i == 0 ? OP_RC_READ_RESPONSE_FIRST :
						i == n - 1 ? OP_RC_READ_RESPONSE_LAST :
						OP_RC_READ_RESPONSE_MIDDLE);
		h.len = (uint32_t)(p->dma_len - off < mtu ? p->dma_len - off : mtu);
		h.aeth = (uint32_t)AETH_ACK << 24 | (qp->msn & PSN_MASK);
		ibemu_dma_read(qp->ctx->payload, host + off, h.len);
		ibemu_send_pkt(qp, &h, qp->ctx->payload);
	}
	return true;
}

/* Run the atomic of @p on the responder's memory: 0 and the original
 * value in *@orig, or the NAK's syndrome. */
static unsigned atomic_execute(struct ibemu_qp *qp, const struct verbs_wire_pkt *p,
			       uint64_t *orig)
{
	char *host;

	if (qp->recv_open || (p->va & 7))
		return AETH_NAK_INV_REQ;	/* inside a message, or not 8-aligned */
	if (!remote_ok(qp, p->rkey, p->va, 8, IBV_ACCESS_REMOTE_ATOMIC, &host))
		return AETH_NAK_REM_ACCESS;
	if (!ibemu_dma_mapped(host, 8)) {
		*orig = 0;	/* a pinned page unmapped since: nothing seen */
		return 0;
	}
	if (!((uintptr_t)host & 7)) {
		uint64_t *m = (uint64_t *)(void *)host;

		if (p->opcode == OP_RC_CMP_SWAP) {
			*orig = p->compare;	/* becomes what was there if not equal */
			__atomic_compare_exchange_n(m, orig, p->swap_add, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		} else {
			*orig = __atomic_fetch_add(m, p->swap_add, __ATOMIC_SEQ_CST);
		}
	} else {
		/* A region registered at an iova of another alignment: still
		 * whole against every other atomic here, which this thread
		 * runs one at a time under the context's lock. */
		uint64_t v;

		ibemu_dma_read(&v, host, 8);
		*orig = v;
		if (p->opcode == OP_RC_FETCH_ADD)
			v += p->swap_add;
		else if (v == p->compare)
			v = p->swap_add;
		ibemu_dma_write(host, &v, 8);
	}
	return 0;
}

/* A new atomic request at the expected PSN: executed, saved, answered. */
static unsigned atomic_request(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	unsigned why, k;
	uint64_t orig;

	if ((why = atomic_execute(qp, p, &orig)) != 0)
		return why;
	k = qp->atomic_next++ % IBEMU_MAX_RD_ATOM;
	qp->atomic_done[k].psn = p->psn;
	qp->atomic_done[k].orig = orig;
	qp->atomic_done[k].valid = true;
	qp->msn++;
	ack_packet(qp, OP_RC_ATOMIC_ACK, p->psn, AETH_ACK, orig);
	return 0;
}

/* A duplicate atomic: the saved result again, never a second execution;
 * one too old to be kept is not answered (the requester times out). */
static void atomic_duplicate(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	unsigned k;

	for (k = 0; k < IBEMU_MAX_RD_ATOM; k++)
		if (qp->atomic_done[k].valid && qp->atomic_done[k].psn == p->psn) {
			ack_packet(qp, OP_RC_ATOMIC_ACK, p->psn, AETH_ACK, qp->atomic_done[k].orig);
			return;
		}
}

/* The receive completion of a message this QP took. */
static void complete_recv(struct ibemu_qp *qp, const struct verbs_wire_pkt *p,
			  enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->cur.wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = op;
	wc.byte_len = len;
	if (verbs_op_has_imm(p->opcode)) {
		wc.imm_data = p->imm;
		wc.wc_flags = IBV_WC_WITH_IMM;
	}
	if (verbs_op_has_ieth(p->opcode)) {
		wc.invalidated_rkey = p->imm;
		wc.wc_flags = IBV_WC_WITH_INV;
	}
	wc.qp_num = qp->qp.qp_num;
	wc.src_qp = p->sqpn;
	wc.slid = ibemu_wc_slid(qp, p);
	wc.sl = p->sl;
	wc.pkey_index = p->pkey_index;
	qp->cur_has_wqe = false;
	ibemu_complete(qp, true, &wc, p->flags & VERBS_PKT_SE);
}

static bool is_first(unsigned op)
{
	return op == OP_RC_SEND_FIRST || op == OP_RC_SEND_ONLY || op == OP_RC_SEND_ONLY_IMM ||
	       op == OP_RC_SEND_ONLY_INV || op == OP_RC_WRITE_FIRST || op == OP_RC_WRITE_ONLY ||
	       op == OP_RC_WRITE_ONLY_IMM;
}

static bool is_last(unsigned op)
{
	return op != OP_RC_SEND_FIRST && op != OP_RC_SEND_MIDDLE && op != OP_RC_WRITE_FIRST &&
	       op != OP_RC_WRITE_MIDDLE;
}

static bool is_send(unsigned op)
{
	return op <= OP_RC_SEND_ONLY_IMM || verbs_op_has_ieth(op);
}

/* Why a request fails, as the AETH syndrome of the NAK; 0 when it was
 * taken; AETH_RNR when no receive WR is there for it. */
static unsigned take_request(struct ibemu_qp *qp, const struct verbs_wire_pkt *p,
			     const char *payload)
{
	unsigned op = p->opcode;
	bool imm = op == OP_RC_WRITE_LAST_IMM || op == OP_RC_WRITE_ONLY_IMM;
	uint64_t room;
	char *host;

	if (is_first(op) == qp->recv_open)
		return AETH_NAK_INV_REQ;	/* a FIRST inside a message, or a MIDDLE outside */
	if (is_first(op) && !is_send(op)) {
		if (!remote_ok(qp, p->rkey, p->va, p->dma_len, IBV_ACCESS_REMOTE_WRITE, &host))
			return AETH_NAK_REM_ACCESS;
		qp->wr_va = p->va;
		qp->wr_rkey = p->rkey;
		qp->wr_total = p->dma_len;
		qp->cur_off = 0;
	}
	/* A receive WR for a SEND, and for the immediate of a WRITE. */
	if (((is_send(op) && is_first(op)) || imm) && !qp->cur_has_wqe) {
		if (!ibemu_take_rwqe(qp, &qp->cur))
			return AETH_RNR(0);
		qp->cur_has_wqe = true;
		if (is_send(op))
			qp->cur_off = 0;
	}
	/* SEND with Invalidate: its R_Key must name a type 2 window bound
	 * through this QP (IBA 10.6.7), which is then invalid. */
	if (verbs_op_has_ieth(op) && !ibemu_mw_invalidate(qp, p->imm))
		return AETH_NAK_INV_REQ;
	if (is_send(op)) {
		/* The receive WR's own fault (a key, PD or range that no
		 * longer holds: a local protection error, NAK Remote
		 * Operational Error), or the message's (longer than the WR:
		 * a length error, NAK Invalid Request); IBA 9.9.3.1.2, as
		 * mlx5 and rxe. */
		if (ibemu_sge_check(qp->ctx, ibemu_rx_pd(qp), qp->cur.sg, qp->cur.num_sge,
				    IBV_ACCESS_LOCAL_WRITE, &room))
			return AETH_NAK_REM_OP;
		if (qp->cur_off + p->len > room)
			return AETH_NAK_INV_REQ;
		ibemu_sge_copy(qp->ctx, ibemu_rx_pd(qp), qp->cur.sg, qp->cur.num_sge, qp->cur_off,
			       (void *)payload, p->len, true);
	} else {
		if (qp->cur_off + p->len > qp->wr_total ||
		    !remote_ok(qp, qp->wr_rkey, qp->wr_va + qp->cur_off, p->len,
			       IBV_ACCESS_REMOTE_WRITE, &host))
			return AETH_NAK_REM_ACCESS;
		ibemu_dma_write(host, payload, p->len);
	}
	qp->cur_off += p->len;
	qp->recv_open = !is_last(op);
	if (is_last(op)) {
		if (is_send(op))
			complete_recv(qp, p, IBV_WC_RECV, (uint32_t)qp->cur_off);
		else if (imm)
			complete_recv(qp, p, IBV_WC_RECV_RDMA_WITH_IMM, qp->wr_total);
		qp->msn++;
	}
	return 0;
}

static void request(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload)
{
	int32_t d = psn_diff(p->psn, qp->epsn);
	unsigned why;

	if (d > 0) {
		/* A gap: one NAK until the expected PSN comes (IBA 9.9.2.2). */
		if (!qp->nak_sent)
			send_ack(qp, qp->epsn, AETH_NAK_SEQ);
		qp->nak_sent = true;
		return;
	}
	if (d < 0) {
		/* A duplicate: done already; say so again (IBA 9.9.2.1). */
		if (p->opcode == OP_RC_READ_REQUEST)
			read_reply(qp, p);
		else if (verbs_op_has_atomiceth(p->opcode))
			atomic_duplicate(qp, p);
		else if (p->flags & VERBS_PKT_ACKREQ)
			send_ack(qp, (qp->epsn - 1) & PSN_MASK, AETH_ACK);	/* one for many */
		return;
	}
	qp->nak_sent = false;
	if (verbs_op_has_atomiceth(p->opcode)) {
		why = atomic_request(qp, p);
		if (why) {
			/* Class B/C: the requester's QP ends, and this one. */
			send_ack(qp, p->psn, why);
			ibemu_qp_to_error(qp);
			return;
		}
		qp->epsn = (p->psn + 1) & PSN_MASK;
		return;
	}
	if (p->opcode == OP_RC_READ_REQUEST) {
		if (qp->recv_open || !read_reply(qp, p)) {
			send_ack(qp, p->psn, qp->recv_open ? AETH_NAK_INV_REQ : AETH_NAK_REM_ACCESS);
			return;
		}
		qp->msn++;
		qp->epsn = (p->psn + npkts_of(p->dma_len, ibemu_mtu_bytes(qp->path_mtu))) & PSN_MASK;
		return;
	}
	why = take_request(qp, p, payload);
	if ((why & 0xe0) == 0x20) {
		send_ack(qp, p->psn, AETH_RNR(qp->min_rnr_timer));
		return;
	}
	if (why) {
		/* The requester's QP ends; so does this one (IBA 9.9.3.1.2,
		 * responder class B and C errors), completing the receive WR
		 * it was filling with the error. */
		send_ack(qp, p->psn, why);
		if (qp->cur_has_wqe) {
			struct ibv_wc wc;

			memset(&wc, 0, sizeof(wc));
			wc.wr_id = qp->cur.wr_id;
			wc.status = why == AETH_NAK_INV_REQ ? IBV_WC_LOC_LEN_ERR :
				    why == AETH_NAK_REM_OP ? IBV_WC_LOC_PROT_ERR : IBV_WC_REM_ACCESS_ERR;
			wc.opcode = IBV_WC_RECV;
			wc.qp_num = qp->qp.qp_num;
			qp->cur_has_wqe = false;
			ibemu_complete(qp, true, &wc, false);
		}
		ibemu_qp_to_error(qp);
		return;
	}
	qp->epsn = (p->psn + 1) & PSN_MASK;
	if (p->flags & VERBS_PKT_ACKREQ)
		send_ack(qp, p->psn, AETH_ACK);
}

/* A UC packet (@p with RC's opcode): taken, or its message dropped. */
static void uc_request(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload)
{
	if (p->psn != qp->epsn) {
		/* Packets were lost: the message they were part of is gone
		 * (IBA 9.8.3.2); a new one may start here. */
		qp->recv_open = false;
		qp->cur_off = 0;
		if (!is_first(p->opcode)) {
			qp->epsn = (p->psn + 1) & PSN_MASK;
			return;
		}
	}
	qp->epsn = (p->psn + 1) & PSN_MASK;
	if (take_request(qp, p, payload)) {
		/* No receive WR, a bad key or range, a message too long:
		 * dropped, nothing said; a receive WR keeps for the next. */
		qp->recv_open = false;
		qp->cur_off = 0;
	}
}

/* The SRQ an XRC request names, for the target @qp to take it with; an
 * SRQ that is not there or not in its domain is an invalid request. */
static bool xrc_srq(struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	struct ibemu_srq *srq = ibemu_xsrq_find(qp->ctx, p->xrc_srqn);

	if (srq && srq->xrcd == qp->xrcd) {
		qp->xsrq = srq;
		return true;
	}
	if (p->psn == qp->epsn) {
		send_ack(qp, p->psn, AETH_NAK_INV_REQ);
		ibemu_qp_to_error(qp);
	}
	return false;
}

void ibemu_rc_receive(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload)
{
	struct verbs_wire_pkt q;

	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS)
		return;
	/* Only the peer: an RC QP takes packets from the QP it is connected
	 * to (IBA 9.6.1.5). */
	if (p->sqpn != qp->dest_qpn)
		return;
	if (qp->qp.qp_type == IBV_QPT_UC) {
		if (p->opcode < OP_UC_FIRST || p->opcode > OP_UC_LAST)
			return;	/* another transport's: not for this QP */
		q = *p;
		q.opcode = (uint8_t)verbs_op_rc(p->opcode);
		uc_request(qp, &q, payload);
		return;
	}
	if (qp->qp.qp_type == IBV_QPT_XRC_SEND || qp->qp.qp_type == IBV_QPT_XRC_RECV) {
		/* XRC: RC with other opcodes; an initiator takes only the
		 * responses, a target only the requests, each naming the
		 * SRQ of its domain that takes it. */
		if (!verbs_op_is_xrc(p->opcode) ||
		    verbs_op_is_response(p->opcode) != (qp->qp.qp_type == IBV_QPT_XRC_SEND))
			return;
		q = *p;
		q.opcode = (uint8_t)verbs_op_rc(p->opcode);
		p = &q;
		if (qp->qp.qp_type == IBV_QPT_XRC_RECV && !xrc_srq(qp, p))
			return;
	}
	if ((p->opcode >= OP_RC_READ_RESPONSE_FIRST && p->opcode <= OP_RC_ACK) ||
	    p->opcode == OP_RC_ATOMIC_ACK) {
		if (qp->state != IBV_QPS_RTS)
			return;
		if (p->opcode == OP_RC_ACK)
			acknowledge(qp, p);
		else if (p->opcode == OP_RC_ATOMIC_ACK)
			atomic_response(qp, p);
		else
			read_response(qp, p, payload);
		return;
	}
	if (p->opcode <= OP_RC_READ_REQUEST || verbs_op_has_atomiceth(p->opcode) ||
	    verbs_op_has_ieth(p->opcode))
		request(qp, p, payload);
}
