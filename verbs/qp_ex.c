/* SPDX-License-Identifier: MIT */
/*
 * ibv_create_qp_ex, and the ibv_wr_* API of a QP made with send_ops_flags
 * (verbs.h; man ibv_wr_post): between ibv_wr_start and ibv_wr_complete
 * each ibv_wr_<opcode> call begins a work request with the QP's wr_id
 * and wr_flags, and the ibv_wr_set_* calls that follow give it its data
 * and, on UD, its address. The batch is kept here and posted at
 * wr_complete through ibemu_post_send, as one chain: what it returns,
 * wr_complete returns (the first error of the batch, if a call already
 * failed; nothing of the batch is posted then). ibv_wr_abort drops it.
 *
 * The opcodes are those post_send carries (post.c): SEND and SEND with
 * immediate on every QP type, RDMA WRITE (with immediate) on RC and UC,
 * RDMA READ and the two atomics on RC. A QP asking for others (invalidation, memory
 * windows, TSO) is refused with EOPNOTSUPP, as a device without them
 * refuses it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

#define OPS_MW	(IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
#define OPS_RC	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		 IBV_QP_EX_WITH_RDMA_READ | \
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		 IBV_QP_EX_WITH_SEND_WITH_INV | OPS_MW)
#define OPS_UC	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | OPS_MW)
#define OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

static struct ibemu_qp *of(struct ibv_qp_ex *ex)
{
	return to_qp(&ex->qp_base);
}

/* The first error of a batch is the one wr_complete returns. */
static void fail(struct ibemu_qp *qp, int err)
{
	if (!qp->batch_err)
		qp->batch_err = err;
}

/* The WR the last ibv_wr_<opcode> began, for the setters; NULL (and the
 * batch failed) when none was. */
static struct ibemu_wr_ex *last(struct ibemu_qp *qp)
{
	if (!qp->batch_n) {
		fail(qp, EINVAL);
		return NULL;
	}
	return &qp->batch[qp->batch_n - 1];
}

/* A new WR of @opcode with the QP's wr_id and wr_flags. */
static struct ibemu_wr_ex *begin(struct ibv_qp_ex *ex, enum ibv_wr_opcode opcode)
{
	struct ibemu_qp *qp = of(ex);
	struct ibemu_wr_ex *w;

	if (qp->batch_n == qp->batch_cap) {
		/* More WRs than the send queue holds cannot be posted:
		 * post_send says ENOMEM for the one past it. */
		unsigned cap = qp->batch_cap ? qp->batch_cap * 2 : 16;
		struct ibemu_wr_ex *b;

		if (qp->batch_cap > qp->cap.max_send_wr ||
		    !(b = realloc(qp->batch, cap * sizeof(*b)))) {
			fail(qp, ENOMEM);
			return NULL;
		}
		qp->batch = b;
		qp->batch_cap = cap;
	}
	w = &qp->batch[qp->batch_n++];
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = ex->wr_id;
	w->wr.send_flags = ex->wr_flags;
	w->wr.opcode = opcode;
	return w;
}

static void drop_batch(struct ibemu_qp *qp)
{
	unsigned i;

	for (i = 0; i < qp->batch_n; i++)
		free(qp->batch[i].inline_buf);
	qp->batch_n = 0;
	qp->batch_err = 0;
}

static void wr_start(struct ibv_qp_ex *ex)
{
	drop_batch(of(ex));	/* a batch never completed is forgotten */
}

static int wr_complete(struct ibv_qp_ex *ex)
{
	struct ibemu_qp *qp = of(ex);
	struct ibv_send_wr *bad;
	unsigned i;
	int ret = qp->batch_err;

	if (!ret && qp->batch_n) {
		for (i = 0; i < qp->batch_n; i++) {
			qp->batch[i].wr.sg_list = qp->batch[i].sg;
			qp->batch[i].wr.next = i + 1 < qp->batch_n ? &qp->batch[i + 1].wr : NULL;
		}
		ret = ibemu_post_send(&qp->qp, &qp->batch[0].wr, &bad);
	}
	drop_batch(qp);
	return ret;
}

static void wr_abort(struct ibv_qp_ex *ex)
{
	drop_batch(of(ex));
}

static void wr_send(struct ibv_qp_ex *ex)
{
	begin(ex, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ex, __be32 imm)
{
	struct ibemu_wr_ex *w = begin(ex, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->wr.imm_data = imm;
}

static void rdma(struct ibv_qp_ex *ex, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		 __be32 imm)
{
	struct ibemu_wr_ex *w = begin(ex, op);

	if (!w)
		return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = addr;
	w->wr.imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t addr)
{
	rdma(ex, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(ex, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t addr)
{
	rdma(ex, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *ex, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		   uint64_t compare_add, uint64_t swap)
{
	struct ibemu_wr_ex *w = begin(ex, op);

	if (!w)
		return;
	w->wr.wr.atomic.rkey = rkey;
	w->wr.wr.atomic.remote_addr = addr;
	w->wr.wr.atomic.compare_add = compare_add;
	w->wr.wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	atomic(ex, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(ex, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void wr_set_ud_addr(struct ibv_qp_ex *ex, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibemu_wr_ex *w = last(of(ex));

	if (!w)
		return;
	w->wr.wr.ud.ah = ah;
	w->wr.wr.ud.remote_qpn = qpn;
	w->wr.wr.ud.remote_qkey = qkey;
}

/* An XRC initiator's WR: the target's SRQ; another QP's: EINVAL. */
static void wr_set_xrc_srqn(struct ibv_qp_ex *ex, uint32_t srqn)
{
	struct ibemu_qp *qp = of(ex);
	struct ibemu_wr_ex *w = last(qp);

	if (!w)
		return;
	if (qp->qp.qp_type != IBV_QPT_XRC_SEND)
		fail(qp, EINVAL);
	w->wr.qp_type.xrc.remote_srqn = srqn;
}

static void wr_set_sge_list(struct ibv_qp_ex *ex, size_t n, const struct ibv_sge *sg)
{
	struct ibemu_qp *qp = of(ex);
	struct ibemu_wr_ex *w = last(qp);

	if (!w)
		return;
	if (n > qp->cap.max_send_sge || n > IBEMU_MAX_SGE) {
		fail(qp, EINVAL);
		return;
	}
	if (n)	/* sg may be NULL for none */
		memcpy(w->sg, sg, n * sizeof(*sg));
	w->wr.num_sge = (int)n;
}

static void wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(ex, 1, &sg);
}

/* Inline data is copied now (the caller may reuse its buffers at once)
 * and posted as one inline SGE; post_send checks it against the cap. */
static void wr_set_inline_data_list(struct ibv_qp_ex *ex, size_t n, const struct ibv_data_buf *bufs)
{
	struct ibemu_qp *qp = of(ex);
	struct ibemu_wr_ex *w = last(qp);
	size_t i, len = 0;
	char *p;

	if (!w)
		return;
	for (i = 0; i < n; i++)
		len += bufs[i].length;
	if (len > qp->cap.max_inline_data) {
		fail(qp, EINVAL);
		return;
	}
	free(w->inline_buf);
	w->inline_buf = p = malloc(len ? len : 1);
	if (!p) {
		fail(qp, ENOMEM);
		return;
	}
	for (i = 0; i < n; i++) {
		if (bufs[i].length)
			memcpy(p, bufs[i].addr, bufs[i].length);
		p += bufs[i].length;
	}
	w->sg[0] = (struct ibv_sge){ .addr = (uintptr_t)w->inline_buf, .length = (uint32_t)len };
	w->wr.num_sge = 1;
	w->wr.send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *ex, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(ex, 1, &b);
}

/* An opcode the device does not have: the batch fails. */
static void not_asked(struct ibv_qp_ex *ex)
{
	struct ibemu_qp *qp = of(ex);

	fail(qp, EOPNOTSUPP);
	begin(ex, IBV_WR_SEND);	/* the setters that follow have a WR */
}

static void wr_bind_mw(struct ibv_qp_ex *ex, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *b)
{
	struct ibemu_wr_ex *w = begin(ex, IBV_WR_BIND_MW);

	if (!w)
		return;
	w->wr.bind_mw.mw = mw;
	w->wr.bind_mw.rkey = rkey;
	w->wr.bind_mw.bind_info = *b;
}

static void invalidate(struct ibv_qp_ex *ex, enum ibv_wr_opcode op, uint32_t rkey)
{
	struct ibemu_wr_ex *w = begin(ex, op);

	if (w)
		w->wr.invalidate_rkey = rkey;
}

static void wr_local_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	invalidate(ex, IBV_WR_LOCAL_INV, rkey);
}

static void wr_send_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	invalidate(ex, IBV_WR_SEND_WITH_INV, rkey);
}

static void na_tso(struct ibv_qp_ex *ex, void *hdr, uint16_t sz, uint16_t mss)
{
	(void)hdr; (void)sz; (void)mss;
	not_asked(ex);
}

/* Every opcode post_send carries, whether asked or not (as mlx5 gives all
 * of a QP type's): one not asked for still posts, one the QP type lacks
 * fails there (EINVAL), one the device lacks fails the batch. */
static void set_ops(struct ibv_qp_ex *ex)
{
	ex->wr_start = wr_start;
	ex->wr_complete = wr_complete;
	ex->wr_abort = wr_abort;
	ex->wr_send = wr_send;
	ex->wr_send_imm = wr_send_imm;
	ex->wr_rdma_write = wr_rdma_write;
	ex->wr_rdma_write_imm = wr_rdma_write_imm;
	ex->wr_rdma_read = wr_rdma_read;
	ex->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	ex->wr_atomic_fetch_add = wr_atomic_fetch_add;
	ex->wr_bind_mw = wr_bind_mw;
	ex->wr_local_inv = wr_local_inv;
	ex->wr_send_inv = wr_send_inv;
	ex->wr_send_tso = na_tso;
	ex->wr_set_ud_addr = wr_set_ud_addr;
	ex->wr_set_xrc_srqn = wr_set_xrc_srqn;
	ex->wr_set_inline_data = wr_set_inline_data;
	ex->wr_set_inline_data_list = wr_set_inline_data_list;
	ex->wr_set_sge = wr_set_sge;
	ex->wr_set_sge_list = wr_set_sge_list;
}

struct ibv_qp *ibemu_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_XRCD;
	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_init_attr base;
	uint64_t ops = 0;
	uint32_t flags = 0;
	struct ibv_qp *ibqp;

	if (attr->comp_mask & ~known) {	/* TSO, RSS, a source QPN: none here */
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A PD, but for an XRC target, which has its domain instead. */
	if (tgt ? !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd :
		  !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	/* One create flag: a UD QP's multicast not looped back to it (as
	 * mlx4 and mlx5 take it); the rest (FCS, VLAN, a source QPN, ...)
	 * are for raw packet QPs and Ethernet, none here. */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags) {
		if ((attr->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) ||
		    attr->qp_type != IBV_QPT_UD) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		flags = VERBS_QP_BLOCK_SELF_MCAST;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		uint64_t can = attr->qp_type == IBV_QPT_UD ? OPS_UD :
			       attr->qp_type == IBV_QPT_UC ? OPS_UC :
			       tgt ? 0 : OPS_RC;	/* RC and XRC initiators */

		if (ops & ~can) {
			errno = EOPNOTSUPP;
			return NULL;
		}
	}
	base = (struct ibv_qp_init_attr){
		.qp_context = attr->qp_context, .send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq, .srq = attr->srq, .cap = attr->cap,
		.qp_type = attr->qp_type, .sq_sig_all = attr->sq_sig_all,
	};
	ibqp = ibemu_qp_new(context, tgt ? NULL : attr->pd, &base, tgt ? attr->xrcd : NULL, flags);
	if (!ibqp)
		return NULL;
	attr->cap = base.cap;	/* what it got, as ibv_create_qp says */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		struct ibemu_qp *qp = to_qp(ibqp);

		set_ops(&qp->vqp.qp_ex);
		qp->vqp.comp_mask |= IBEMU_VERBS_QP_EX;
	}
	return ibqp;
}

void ibemu_qp_ex_free(struct ibemu_qp *qp)
{
	drop_batch(qp);
	free(qp->batch);
	qp->batch = NULL;
}
