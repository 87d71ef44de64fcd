/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs: creation with the daemon's QP number, the state machine and
 * its attribute rules (IBA 10.3 and 11.2.5, Table 107 "QP state transition
 * properties"; the kernel's ib_modify_qp_is_ok() table), queries, and the
 * error state's flush. Address handles are here too: a UD send's path.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "verbs/provider.h"

/* ---- address handles ---------------------------------------------------- */

/* An address: a LID on an InfiniBand port, a GRH on a RoCE one. */
static bool av_ok(struct ibemu_context *ctx, const struct ibv_ah_attr *attr)
{
	return ibemu_port_roce(ctx, attr->port_num) ? attr->is_global : attr->dlid != 0;
}

struct ibv_ah *ibemu_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibemu_ah *ah;

	/* No GRH routing: one subnet (a GRH to our own subnet is accepted
	 * and travels by LID, as within a subnet); the SGID index must name
	 * one of the port's GIDs (the kernel: no GID there, EINVAL). A RoCE
	 * port's address is its GRH, and it has no LIDs (docs/roce.md). */
	if (!attr->port_num || attr->port_num > 254 ||
	    (attr->is_global && attr->grh.sgid_index >= IBEMU_GID_TBL_LEN) ||
	    !av_ok(to_ctx(pd->context), attr)) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->attr = *attr;
	ibemu_pd_hold(pd, 1);
	return &ah->ah;
}

int ibemu_destroy_ah(struct ibv_ah *ah)
{
	ibemu_pd_hold(ah->pd, -1);
	free((struct ibemu_ah *)ah);
	return 0;
}

/* ---- creation ----------------------------------------------------------- */

struct ibemu_qp *ibemu_qp_find(struct ibemu_context *ctx, uint32_t qpn)
{
	struct ibemu_qp *qp;

	for (qp = ctx->qps; qp; qp = qp->next)
		if (qp->qp.qp_num == qpn)
			return qp;
	return NULL;
}

static bool cap_ok(const struct ibv_qp_init_attr *a)
{
	const struct ibv_qp_cap *c = &a->cap;

	return c->max_send_wr <= IBEMU_MAX_WR && c->max_send_sge <= IBEMU_MAX_SGE &&
	       c->max_inline_data <= IBEMU_MAX_INLINE &&
	       (a->srq || (c->max_recv_wr <= IBEMU_MAX_WR && c->max_recv_sge <= IBEMU_MAX_SGE));
}

/* What each type needs (the kernel's create_qp): CQs for both queues,
 * but an XRC initiator has no receive queue and a target neither queue:
 * it has its domain, and no PD. */
static bool parts_ok(const struct ibv_qp_init_attr *attr, const struct ibv_xrcd *xrcd)
{
	switch (attr->qp_type) {
	case IBV_QPT_XRC_RECV:
		return xrcd != NULL;
	case IBV_QPT_XRC_SEND:
		return attr->send_cq && !attr->srq;
	default:
		return attr->send_cq && attr->recv_cq;
	}
}

struct ibv_qp *ibemu_qp_new(struct ibv_context *context, struct ibv_pd *pd,
			    struct ibv_qp_init_attr *attr, struct ibv_xrcd *xrcd, uint32_t flags)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct verbs_ioc_qp ioc = { .type = attr->qp_type | flags };
	bool xrc = attr->qp_type == IBV_QPT_XRC_SEND || attr->qp_type == IBV_QPT_XRC_RECV;
	struct ibemu_qp *qp;

	bool known = attr->qp_type == IBV_QPT_RC || attr->qp_type == IBV_QPT_UC ||
		     attr->qp_type == IBV_QPT_UD || xrc;

	if (!known || !parts_ok(attr, xrcd)) {
		errno = known ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	if (!cap_ok(attr)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto nomem;
	qp->cap = attr->cap;
	if (attr->srq || xrc)
		qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		qp->cap.max_send_wr = qp->cap.max_send_sge = qp->cap.max_inline_data = 0;
	/* A send WQE has room for some inline data whatever was asked, and
	 * the caps given back say how much, as mlx4's and mlx5's do
	 * (rdma_xclient sends 16 bytes inline from a QP that asked none). */
	if (qp->cap.max_inline_data < IBEMU_MIN_INLINE)
		qp->cap.max_inline_data = IBEMU_MIN_INLINE;
	attr->cap.max_inline_data = qp->cap.max_inline_data;
	/* One slot more than asked: a full ring is never empty. */
	qp->sq_size = qp->cap.max_send_wr + 1;
	qp->sq = ibemu_queue_alloc(pd, qp->sq_size, sizeof(*qp->sq), IBEMU_RES_TYPE_QP);
	if (!qp->sq || (!attr->srq && !xrc &&
			ibemu_rq_init(&qp->rq, qp->cap.max_recv_wr, pd, IBEMU_RES_TYPE_QP)))
		goto nomem;
	if (ibemu_ioc(ctx, VERBS_IOC_QP_CREATE, &ioc) < 0)
		goto fail;
	qp->ctx = ctx;
	qp->state = IBV_QPS_RESET;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	/* What libibverbs' ibv_create_qp() leaves to the provider. */
	qp->qp.context = context;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->xrcd = attr->qp_type == IBV_QPT_XRC_RECV ? xrcd : NULL;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.qp_type = attr->qp_type;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_num = ioc.qpn;
	qp->qp.handle = ioc.qpn;
	qp->qp.events_completed = 0;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	pthread_mutex_lock(&ctx->lock);
	qp->next = ctx->qps;
	ctx->qps = qp;
	pthread_mutex_unlock(&ctx->lock);
	return &qp->qp;

nomem:
	errno = ENOMEM;
fail:
	if (qp) {
		ibemu_queue_free(pd, qp->sq, IBEMU_RES_TYPE_QP);
		ibemu_queue_free(pd, qp->rq.ring, IBEMU_RES_TYPE_QP);
	}
	free(qp);
	return NULL;
}

struct ibv_qp *ibemu_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	return ibemu_qp_new(pd->context, pd, attr, NULL, 0);
}

static void free_swqe(struct ibemu_swqe *w)
{
	free(w->inline_data);
	w->inline_data = NULL;
}

int ibemu_destroy_qp(struct ibv_qp *ibqp)
{
	struct ibemu_qp *qp = to_qp(ibqp), **pp;
	struct ibemu_context *ctx = qp->ctx;
	struct verbs_ioc_qp ioc = { .qpn = ibqp->qp_num };
	unsigned i;

	/* The daemon refuses while multicast groups are attached (EBUSY,
	 * as the kernel); then the QP stays whole. Under the lock, with the
	 * unlinking: the reader thread must not answer a packet from a QP
	 * the daemon no longer has (a refused batch loses others' too). */
	pthread_mutex_lock(&ctx->lock);
	if (ibemu_ioc(ctx, VERBS_IOC_QP_DESTROY, &ioc) < 0 && errno == EBUSY) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	for (pp = &ctx->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = qp->next;
	ibemu_direct_drop(qp);
	ibemu_mw_forget_qp(ctx, qp);
	/* Its completions not polled go with it, as libmlx5's destroy. */
	if (ibqp->send_cq)	/* (an XRC target has none) */
		ibemu_cq_clean(to_cq(ibqp->send_cq), ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		ibemu_cq_clean(to_cq(ibqp->recv_cq), ibqp->qp_num);
	pthread_mutex_unlock(&ctx->lock);
	for (i = 0; i < qp->sq_size; i++)
		free_swqe(&qp->sq[i]);
	ibemu_qp_ex_free(qp);
	ibemu_queue_free(qp->qp.pd, qp->sq, IBEMU_RES_TYPE_QP);
	ibemu_queue_free(qp->qp.pd, qp->rq.ring, IBEMU_RES_TYPE_QP);
	free(qp);
	return 0;
}

/* ---- the error state ----------------------------------------------------- */

void ibemu_qp_to_error(struct ibemu_qp *qp)
{
	struct ibemu_rwqe r;
	struct ibv_wc wc;

	/* Ours only: ibv_qp's state is libibverbs', set by ibv_modify_qp and
	 * ibv_query_qp (verbs.c), as an HCA's error transition leaves it.
	 * UCX asserts it is still RTS when it flushes a failed endpoint. */
	qp->state = IBV_QPS_ERR;
	qp->deadline_us = qp->rnr_until_us = 0;
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.qp_num = qp->qp.qp_num;
	/* Flushed WRs complete whether signaled or not (IBA 10.8.3). */
	while (qp->sq_count) {
		struct ibemu_swqe *w = &qp->sq[qp->sq_head];

		wc.wr_id = w->wr_id;
		wc.opcode = IBV_WC_SEND;
		ibemu_cq_add(to_cq(qp->qp.send_cq), &wc, false);
		free_swqe(w);
		qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
		qp->sq_count--;
	}
	qp->sq_next = qp->sq_head;
	while (ibemu_rq_pop(&qp->rq, &r)) {
		wc.wr_id = r.wr_id;
		wc.opcode = IBV_WC_RECV;
		ibemu_cq_add(to_cq(qp->qp.recv_cq), &wc, false);
	}
	if (qp->cur_has_wqe && ibemu_rx_cq(qp)) {
		wc.wr_id = qp->cur.wr_id;
		wc.opcode = IBV_WC_RECV;
		ibemu_cq_add(to_cq(ibemu_rx_cq(qp)), &wc, false);
	}
	qp->cur_has_wqe = false;
	qp->recv_open = false;
}

/* Back to Reset: everything is forgotten, nothing completes (IBA 10.3.1). */
static void qp_reset(struct ibemu_qp *qp)
{
	unsigned i;

	for (i = 0; i < qp->sq_size; i++)
		free_swqe(&qp->sq[i]);
	qp->sq_head = qp->sq_next = qp->sq_count = 0;
	qp->rq.head = qp->rq.count = 0;
	qp->deadline_us = qp->rnr_until_us = 0;
	qp->recv_open = qp->cur_has_wqe = qp->nak_sent = false;
	qp->msn = 0;
	/* Its completions not yet polled go too (libmlx5 cleans its CQs of
	 * a QP put in Reset): flushes of an error before do not meet the
	 * QP's next life. An SRQ's receives stay its own. */
	if (qp->qp.send_cq)
		ibemu_cq_clean(to_cq(qp->qp.send_cq), qp->qp.qp_num);
	if (qp->qp.recv_cq && qp->qp.recv_cq != qp->qp.send_cq)
		ibemu_cq_clean(to_cq(qp->qp.recv_cq), qp->qp.qp_num);
}

/* ---- the state machine -------------------------------------------------- */

/*
 * The attributes each transition needs and may take, for RC, UD and UC
 * (IBA Table 107; the kernel's qp_state_table in core/verbs.c).
 * Transitions not listed are not allowed; to Reset and to Error take only
 * the state.
 */
struct transition {
	enum ibv_qp_state from, to;
	int rc_req, rc_opt, ud_req, ud_opt, uc_req, uc_opt;
};

#define S IBV_QP_STATE
static const struct transition transitions[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT,
	  S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0,
	  S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0,
	  S | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0 },
	{ IBV_QPS_INIT, IBV_QPS_INIT,
	  S, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	  S, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
	  S, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  S | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
	  S, IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
	  S | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
	  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX },
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  S | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	  IBV_QP_MAX_QP_RD_ATOMIC,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
	  IBV_QP_PATH_MIG_STATE,
	  S | IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY,
	  S | IBV_QP_SQ_PSN,
	  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE },
	{ IBV_QPS_RTS, IBV_QPS_RTS,
	  S, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
	  IBV_QP_MIN_RNR_TIMER,
	  S, IBV_QP_CUR_STATE | IBV_QP_QKEY,
	  S, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE },
};
#undef S

/* The attributes of an RC QP's responder and of its requester. */
#define RC_RESPONDER	(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_REQUESTER	(IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY)

/* The attributes of the RC half an XRC QP has not: an initiator has no
 * responder, a target no requester. */
static int xrc_unused(const struct ibemu_qp *qp)
{
	return qp->qp.qp_type == IBV_QPT_XRC_SEND ? RC_RESPONDER :
	       qp->qp.qp_type == IBV_QPT_XRC_RECV ? RC_REQUESTER : 0;
}

static const struct transition *find_transition(enum ibv_qp_state from, enum ibv_qp_state to)
{
	unsigned i;

	for (i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
		if (transitions[i].from == from && transitions[i].to == to)
			return &transitions[i];
	return NULL;
}

/* Is @mask right for @qp going from its state to @to? */
static bool mask_ok(const struct ibemu_qp *qp, enum ibv_qp_state to, int mask)
{
	const struct transition *t;
	int req, opt;

	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		return (mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE)) == 0;
	t = find_transition(qp->state, to);
	if (!t)
		return false;
	switch (qp->qp.qp_type) {
	case IBV_QPT_RC: req = t->rc_req; opt = t->rc_opt; break;
	case IBV_QPT_UC: req = t->uc_req; opt = t->uc_opt; break;
	case IBV_QPT_XRC_SEND:	/* RC's, but for the half it has not */
	case IBV_QPT_XRC_RECV:
		req = t->rc_req & ~xrc_unused(qp);
		opt = t->rc_opt & ~xrc_unused(qp);
		break;
	default: req = t->ud_req; opt = t->ud_opt; break;
	}
	return (mask & req) == req && (mask & ~(req | opt)) == 0;
}

/* The values, whatever the transition (IBA 11.2.5 ranges). */
/* The device's port count, asked of the daemon once: it never changes. */
static uint8_t port_count(struct ibemu_context *ctx)
{
	struct ibv_device_attr dev;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->nports)
		ctx->nports = ibv_query_device(&ctx->vctx.context, &dev) ? 2 : dev.phys_port_cnt;
	pthread_mutex_unlock(&ctx->lock);
	return ctx->nports;
}

static bool values_ok(struct ibemu_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	uint8_t nports = port_count(qp->ctx);

	if ((mask & IBV_QP_PORT) && (a->port_num < 1 || a->port_num > nports))
		return false;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index >= 128)
		return false;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return false;
	if ((mask & IBV_QP_AV) &&
	    ((a->ah_attr.port_num && a->ah_attr.port_num > nports) ||
	     !av_ok(qp->ctx, &(struct ibv_ah_attr){ .dlid = a->ah_attr.dlid,
		    .is_global = a->ah_attr.is_global,
		    .port_num = a->ah_attr.port_num ? a->ah_attr.port_num :
			       mask & IBV_QP_PORT ? a->port_num : qp->port })))
		return false;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return false;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return false;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return false;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return false;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > IBEMU_MAX_RD_ATOM)
		return false;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > IBEMU_MAX_RD_ATOM)
		return false;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != qp->state)
		return false;
	return true;
}

static void apply(struct ibemu_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if (mask & IBV_QP_PORT)
		qp->port = a->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->pkey_index = a->pkey_index;
	if (mask & IBV_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		qp->ah = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		qp->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num & PSN_MASK;
	if (mask & IBV_QP_RQ_PSN)
		qp->epsn = a->rq_psn & PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		qp->sq_psn = a->sq_psn & PSN_MASK;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		qp->retry_cnt = qp->retry_left = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = qp->rnr_left = a->rnr_retry;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
}

int ibemu_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct ibemu_qp *qp = to_qp(ibqp);
	struct ibemu_context *ctx = qp->ctx;
	enum ibv_qp_state to;
	struct verbs_ioc_qp ioc;
	bool roce;
	int err = 0;

	/* The kernel drops what an XRC QP has no use for before it checks
	 * the mask (uverbs_cmd.c modify_qp_mask): perftest gives its targets
	 * the retry counts. */
	mask &= ~xrc_unused(qp);
	if (!values_ok(qp, attr, mask))
		return EINVAL;
	/* The port's link layer, asked before the lock (the receiving
	 * thread reads it under the lock: ibemu_wc_slid). */
	roce = (mask & IBV_QP_PORT) ? ibemu_port_roce(ctx, attr->port_num) : qp->roce;
	pthread_mutex_lock(&ctx->lock);
	to = (mask & IBV_QP_STATE) ? attr->qp_state : qp->state;
	if (!(mask & IBV_QP_STATE) || !mask_ok(qp, to, mask)) {
		pthread_mutex_unlock(&ctx->lock);
		return EINVAL;
	}
	apply(qp, attr, mask);
	qp->roce = roce;
	if (to == IBV_QPS_RESET)
		qp_reset(qp);
	if (to == IBV_QPS_ERR && qp->state != IBV_QPS_ERR)
		ibemu_qp_to_error(qp);
	qp->state = to;
	ioc = (struct verbs_ioc_qp){ .qpn = ibqp->qp_num, .qkey = qp->qkey,
				     .port = to == IBV_QPS_RESET ? 0 : qp->port };
	/* RTS sends what was posted in RTR's wait (nothing, for a new QP). */
	if (to == IBV_QPS_RTS)
		ibemu_send_pending(qp);
	ibemu_flush(ctx);
	pthread_mutex_unlock(&ctx->lock);
	/* The daemon checks Q_Keys and the port packets arrive at. */
	if (ibemu_ioc(ctx, VERBS_IOC_QP_SET, &ioc) < 0)
		err = errno;
	return err;
}

int ibemu_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init)
{
	struct ibemu_qp *qp = to_qp(ibqp);

	pthread_mutex_lock(&qp->ctx->lock);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->epsn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->cap = qp->cap;
	attr->ah_attr = qp->ah;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = qp->port;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	memset(init, 0, sizeof(*init));
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_all = qp->sq_sig_all;
	pthread_mutex_unlock(&qp->ctx->lock);
	return 0;
}
