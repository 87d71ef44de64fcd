/* SPDX-License-Identifier: MIT */
/*
 * Posting work requests (IBA 11.4.1), completions, and the UD transport
 * (IBA 9.8: one packet a message, no acknowledgement: a UD send completes
 * when it leaves, a receive when a packet finds a receive WR).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/roce_wire.h"
#include "verbs/provider.h"

void ibemu_complete(struct ibemu_qp *qp, bool recv, const struct ibv_wc *wc, bool se)
{
	ibemu_cq_add(to_cq(recv ? ibemu_rx_cq(qp) : qp->qp.send_cq), wc, se);
}

/* ---- UD ----------------------------------------------------------------- */

/* Send @w and complete it: false, and nothing done, when the wire does
 * not take it now (held back: thread.c, flow control). */
static bool ud_send(struct ibemu_qp *qp, struct ibemu_swqe *w)
{
	struct ibemu_context *ctx = qp->ctx;
	struct verbs_wire_pkt h;
	struct ibv_wc wc;
	char *buf = ctx->payload;
	uint64_t len = 0;
	int st = 0;

	memset(&wc, 0, sizeof(wc));
	if (w->inline_data)
		len = w->len;
	else
		st = ibemu_sge_check(ctx, qp->qp.pd, w->sg, w->num_sge, 0, &len);
	/* One packet: a UD message must fit the MTU (IBA 9.8.3). */
	if (!st && len > VERBS_PKT_MAX_PAYLOAD)
		st = IBV_WC_LOC_LEN_ERR;
	if (!st) {
		if (w->inline_data)
			memcpy(buf, w->inline_data, len);
		else
			ibemu_sge_copy(ctx, qp->qp.pd, w->sg, w->num_sge, 0, buf, len, false);
		memset(&h, 0, sizeof(h));
		h.port = w->ah.port_num ? w->ah.port_num : qp->port;
		h.sl = w->ah.sl;
		h.slid = w->ah.src_path_bits;
		h.dlid = w->ah.dlid;
		h.pkey_index = qp->pkey_index;
		h.opcode = w->opcode == IBV_WR_SEND_WITH_IMM ? OP_UD_SEND_ONLY_IMM : OP_UD_SEND_ONLY;
		h.flags = (w->send_flags & IBV_SEND_SOLICITED) ? VERBS_PKT_SE : 0;
		h.sqpn = qp->qp.qp_num;
		h.dqpn = w->remote_qpn;
		/* A Q_Key with the high bit set means the QP's own (IBA 10.2.4). */
		h.qkey = (w->remote_qkey & 0x80000000u) ? qp->qkey : w->remote_qkey;
		h.psn = qp->sq_psn;
		h.imm = w->imm;
		h.len = (uint32_t)len;
		if (w->ah.is_global) {
			/* A GRH: every multicast packet carries the MGID in
			 * one; the daemon fills the SGID in from the index. */
			h.flags |= VERBS_PKT_GRH;
			h.grh_flow = w->ah.grh.flow_label & 0xfffff;
			h.grh_tclass = w->ah.grh.traffic_class;
			h.grh_hop_limit = w->ah.grh.hop_limit;
			h.sgid_index = w->ah.grh.sgid_index;
			memcpy(h.dgid, w->ah.grh.dgid.raw, 16);
		}
		if (!ibemu_send_pkt(qp, &h, buf))
			return false;
		qp->sq_psn = (qp->sq_psn + 1) & PSN_MASK;
	}
	if (st || qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED)) {
		wc.wr_id = w->wr_id;
		wc.status = st;
		wc.opcode = IBV_WC_SEND;
		wc.qp_num = qp->qp.qp_num;
		ibemu_complete(qp, false, &wc, false);
	}
	return true;
}

/* The GRH a packet came with, as the HCA writes it ahead of the payload
 * (IBA 8.3; struct ibv_grh): PayLen counts BTH to ICRC. A RoCE v2
 * packet's is its IP header (Annex A17.4.5.1): IPv4 (below), or IPv6
 * whose next header is UDP and whose payload length counts the UDP
 * header too; libibverbs takes the GID type from it. */
static void grh_of(const struct verbs_wire_pkt *p, struct ibv_grh *g)
{
	unsigned paylen = verbs_pkt_wire_bytes(p) - 8 - IBEMU_GRH_BYTES - 2;
	bool v2 = p->flags & VERBS_PKT_ROCE_V2;

	/* Between IPv4-mapped GIDs: IPv4, its header in the last 20 of
	 * the 40 bytes, the first 20 zero, as RoCE HCAs write it
	 * (libibverbs' ibv_init_ah_from_wc tells it from IPv6 so: version 4
	 * there, a valid checksum). */
	if (v2 && roce_gid_is_ip4(p->sgid) && roce_gid_is_ip4(p->dgid)) {
		memset(g, 0, sizeof(*g));
		roce_ip4_header((uint8_t *)g + 20, p->grh_tclass, p->grh_hop_limit, 8 + paylen,
				p->sgid, p->dgid);
		return;
	}
	g->version_tclass_flow = htobe32(6u << 28 | (uint32_t)p->grh_tclass << 20 |
					 (p->grh_flow & 0xfffff));
	g->paylen = htobe16((uint16_t)(v2 ? 8 + paylen : paylen));
	g->next_hdr = v2 ? 17 : 0x1b;	/* UDP; IBA: the BTH follows */
	g->hop_limit = p->grh_hop_limit;
	memcpy(g->sgid.raw, p->sgid, 16);
	memcpy(g->dgid.raw, p->dgid, 16);
}

/* UD WRs go in order while the wire takes them; held back (flow
 * control), they wait in the send queue, which fills as on an HCA. */
static void ud_send_pending(struct ibemu_qp *qp)
{
	while (qp->sq_count && qp->state == IBV_QPS_RTS) {
		struct ibemu_swqe *w = &qp->sq[qp->sq_head];

		if (!ud_send(qp, w))
			break;
		free(w->inline_data);
		w->inline_data = NULL;
		qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
		qp->sq_count--;
	}
	qp->sq_next = qp->sq_head;
}

void ibemu_send_pending(struct ibemu_qp *qp)
{
	if (qp->qp.qp_type == IBV_QPT_UD)
		ud_send_pending(qp);
	else if (qp->qp.qp_type != IBV_QPT_XRC_RECV)
		ibemu_rc_send_pending(qp);	/* RC, UC, XRC initiators */
}

/* A UD completion's SL. On a RoCE port, which has no SLs, the packet's
 * type, where a ConnectX reports it (its CQE's SL field: bit 3 UDP,
 * bits 2:0 the L3 header, 0 a GRH (RoCE v1), 1 IPv6, 2 IPv4); UCX's UD
 * transport reads it to know where the DGID is (ud_iface.h,
 * uct_ud_iface_check_grh) and drops what it cannot match. */
static uint8_t wc_sl(const struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	if (!qp->roce)
		return p->sl;
	if (!(p->flags & VERBS_PKT_ROCE_V2))
		return 0;
	return roce_gid_is_ip4(p->sgid) && roce_gid_is_ip4(p->dgid) ? 0x8 | 0x2 : 0x8 | 0x1;
}

void ibemu_ud_receive(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload)
{
	struct ibemu_context *ctx = qp->ctx;
	struct ibemu_rwqe r;
	struct ibv_wc wc;
	uint64_t room;
	int st;

	/* Receives need RTR; a packet without a receive WR is dropped
	 * (IBA 9.8.3.1: UD has no RNR). */
	if ((qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS) || !ibemu_take_rwqe(qp, &r))
		return;
	memset(&wc, 0, sizeof(wc));
	st = ibemu_sge_check(ctx, qp->qp.pd, r.sg, r.num_sge, IBV_ACCESS_LOCAL_WRITE, &room);
	if (!st && room < IBEMU_GRH_BYTES + (uint64_t)p->len)
		st = IBV_WC_LOC_LEN_ERR;
	/* The first 40 bytes are the GRH's: the packet's, with IBV_WC_GRH,
	 * or left as they are when it had none. */
	if (!st)
		ibemu_sge_copy(ctx, qp->qp.pd, r.sg, r.num_sge, IBEMU_GRH_BYTES, (void *)payload,
			       p->len, true);
	if (!st && (p->flags & VERBS_PKT_GRH)) {
		struct ibv_grh g;

		grh_of(p, &g);
		ibemu_sge_copy(ctx, qp->qp.pd, r.sg, r.num_sge, 0, &g, sizeof(g), true);
		wc.wc_flags |= IBV_WC_GRH;
	}
	wc.wr_id = r.wr_id;
	wc.status = st;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = IBEMU_GRH_BYTES + p->len;
	if (p->opcode == OP_UD_SEND_ONLY_IMM) {
		wc.imm_data = p->imm;
		wc.wc_flags |= IBV_WC_WITH_IMM;
	}
	wc.qp_num = qp->qp.qp_num;
	wc.src_qp = p->sqpn;
	wc.slid = ibemu_wc_slid(qp, p);
	wc.sl = wc_sl(qp, p);
	wc.pkey_index = p->pkey_index;
	ibemu_complete(qp, true, &wc, p->flags & VERBS_PKT_SE);
}

/* ---- posting ------------------------------------------------------------- */

static int check_send_wr(const struct ibemu_qp *qp, const struct ibv_send_wr *wr)
{
	bool rc = ibemu_qp_is_rc_req(qp), ud = qp->qp.qp_type == IBV_QPT_UD;

	/* An XRC target has no send queue. */
	if (qp->qp.qp_type == IBV_QPT_XRC_RECV || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:	/* RC and UC */
		if (ud)
			return EINVAL;
		break;
	case IBV_WR_RDMA_READ:		/* RC only: UC has no responses */
		if (!rc)
			return EINVAL;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* One 8-byte local buffer for the original value; never
		 * inline (IBA 9.4.5, 10.7.2.3). */
		if (!rc || wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    (wr->send_flags & IBV_SEND_INLINE))
			return EINVAL;
		break;
	case IBV_WR_SEND_WITH_INV:	/* RC only (IBA Table 33) */
		if (!rc)
			return EINVAL;
		break;
	case IBV_WR_BIND_MW:		/* connected QPs (mw.c) */
		if (ud || !wr->bind_mw.mw)
			return EINVAL;
		break;
	case IBV_WR_LOCAL_INV:
		if (ud)
			return EINVAL;
		break;
	default:	/* TSO, driver opcodes: the device offers none */
		return EINVAL;
	}
	if (ud && !wr->wr.ud.ah)
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) && wr->opcode == IBV_WR_RDMA_READ)
		return EINVAL;
	return 0;
}

/* Copy @wr into the free slot @w; EINVAL for inline data past the cap. */
static int take_send_wr(struct ibemu_qp *qp, struct ibemu_swqe *w, const struct ibv_send_wr *wr)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->imm = wr->imm_data;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = 0;
		char *p;

		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->cap.max_inline_data)
			return EINVAL;
		/* Inline data is copied now: the buffer is free on return. */
		w->inline_data = p = malloc(len ? len : 1);
		if (!p)
			return ENOMEM;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		w->len = len;
	} else {
		w->num_sge = wr->num_sge;
		memcpy(w->sg, wr->sg_list, sizeof(*w->sg) * (size_t)wr->num_sge);
		for (i = 0; i < wr->num_sge; i++)
			w->len += wr->sg_list[i].length;
	}
	if (qp->qp.qp_type == IBV_QPT_UD) {
		w->ah = ((struct ibemu_ah *)wr->wr.ud.ah)->attr;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (qp->qp.qp_type == IBV_QPT_XRC_SEND)
		w->remote_srqn = wr->qp_type.xrc.remote_srqn;
	if (wr->opcode == IBV_WR_BIND_MW) {
		w->mw = wr->bind_mw.mw;
		w->rkey = wr->bind_mw.rkey;
		w->bind = wr->bind_mw.bind_info;
	} else if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_SEND_WITH_INV) {
		w->rkey = wr->invalidate_rkey;
	}
	if (ibemu_wr_is_atomic(wr->opcode)) {
		/* wr.atomic lays its fields out otherwise than wr.rdma. */
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			w->compare = wr->wr.atomic.compare_add;
			w->swap_add = wr->wr.atomic.swap;
		} else {
			w->swap_add = wr->wr.atomic.compare_add;	/* the addend */
		}
	}
	return 0;
}

int ibemu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct ibemu_qp *qp = to_qp(ibqp);
	struct ibemu_context *ctx = qp->ctx;
	int err = 0;

	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		struct ibemu_swqe *w;

		/* Posting to a send queue that is not there yet is an error
		 * (IBA 10.8.2: Reset, Init, RTR); in Error it flushes. */
		if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD &&
		    qp->state != IBV_QPS_ERR) {
			err = EINVAL;
			break;
		}
		err = check_send_wr(qp, wr);
		if (err)
			break;
		if (qp->sq_count == qp->sq_size - 1) {
			err = ENOMEM;
			break;
		}
		w = &qp->sq[(qp->sq_head + qp->sq_count) % qp->sq_size];
		err = take_send_wr(qp, w, wr);
		if (err)
			break;
		qp->sq_count++;
	}
	if (qp->state == IBV_QPS_ERR)
		ibemu_qp_to_error(qp);
	else
		ibemu_send_pending(qp);
	ibemu_flush(ctx);
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

int ibemu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct ibemu_qp *qp = to_qp(ibqp);
	struct ibemu_context *ctx = qp->ctx;
	int err = 0;

	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		/* A QP with an SRQ has no receive queue, nor has an XRC
		 * QP; Reset has none yet. */
		err = ibqp->srq || qp->qp.qp_type == IBV_QPT_XRC_SEND ||
		      qp->qp.qp_type == IBV_QPT_XRC_RECV || qp->state == IBV_QPS_RESET ? EINVAL :
		      ibemu_rq_push(&qp->rq, wr, qp->cap.max_recv_sge);
		if (err)
			break;
	}
	if (qp->state == IBV_QPS_ERR)
		ibemu_qp_to_error(qp);
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		*bad_wr = wr;
	return err;
}
