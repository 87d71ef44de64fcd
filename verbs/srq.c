/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBA 10.2.9): receive WRs that any QP attached to
 * the SRQ takes in arrival order; and the ring of receive WRs that SRQs
 * and QPs' own receive queues both are.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

struct ibv_srq *ibemu_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibemu_srq *srq;

	if (!attr->attr.max_wr || attr->attr.max_wr > VERBS_MAX_SRQ_WR ||
	    attr->attr.max_sge > VERBS_MAX_SRQ_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq || ibemu_rq_init(&srq->rq, attr->attr.max_wr, pd, IBEMU_RES_TYPE_SRQ)) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->limit = attr->attr.srq_limit;
	/* libibverbs sets context, srq_context, pd, mutex and cond. */
	srq->srq.handle = 1;
	return &srq->srq;
}

int ibemu_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct ibemu_srq *srq = (struct ibemu_srq *)ibsrq;
	struct ibemu_context *ctx = to_ctx(ibsrq->context);

	/* Resizing is not offered (no IBV_DEVICE_SRQ_RESIZE). */
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	if (mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit >= srq->rq.size)
			return EINVAL;
		pthread_mutex_lock(&ctx->lock);
		srq->limit = attr->srq_limit;
		pthread_mutex_unlock(&ctx->lock);
	}
	return 0;
}

int ibemu_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibemu_srq *srq = (struct ibemu_srq *)ibsrq;

	attr->max_wr = srq->rq.size - 1;
	attr->max_sge = IBEMU_MAX_SGE;
	attr->srq_limit = srq->limit;
	return 0;
}

int ibemu_destroy_srq(struct ibv_srq *ibsrq)
{
	struct ibemu_context *ctx = to_ctx(ibsrq->context);
	struct ibemu_srq *srq = (struct ibemu_srq *)ibsrq;
	struct ibemu_qp *qp;

	pthread_mutex_lock(&ctx->lock);
	for (qp = ctx->qps; qp; qp = qp->next)
		if (qp->qp.srq == ibsrq) {
			pthread_mutex_unlock(&ctx->lock);
			return EBUSY;
		}
	if (srq->xrcd)
		ibemu_xsrq_forget(ctx, srq);
	pthread_mutex_unlock(&ctx->lock);
	ibemu_queue_free(ibsrq->pd, srq->rq.ring, IBEMU_RES_TYPE_SRQ);
	free(srq);
	return 0;
}

int ibemu_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct ibemu_context *ctx = to_ctx(ibsrq->context);
	struct ibemu_srq *srq = (struct ibemu_srq *)ibsrq;
	int err = 0;

	pthread_mutex_lock(&ctx->lock);
	for (; wr; wr = wr->next) {
		err = ibemu_rq_push(&srq->rq, wr, IBEMU_MAX_SGE);
		if (err)
			break;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

bool ibemu_take_rwqe(struct ibemu_qp *qp, struct ibemu_rwqe *out)
{
	struct ibemu_srq *srq = qp->xsrq ? qp->xsrq : (struct ibemu_srq *)qp->qp.srq;

	return ibemu_rq_pop(srq ? &srq->rq : &qp->rq, out);
}

/* ---- receive rings ------------------------------------------------------- */

int ibemu_rq_init(struct ibemu_rq *rq, unsigned max_wr, struct ibv_pd *pd, uint64_t type)
{
	rq->size = max_wr + 1;		/* a full ring is never empty */
	rq->head = rq->count = 0;
	rq->ring = ibemu_queue_alloc(pd, rq->size, sizeof(*rq->ring), type);
	return rq->ring ? 0 : ENOMEM;
}

int ibemu_rq_push(struct ibemu_rq *rq, const struct ibv_recv_wr *wr, unsigned max_sge)
{
	struct ibemu_rwqe *r;

	if (wr->num_sge < 0 || (unsigned)wr->num_sge > max_sge)
		return EINVAL;
	if (rq->count == rq->size - 1)
		return ENOMEM;
	r = &rq->ring[(rq->head + rq->count) % rq->size];
	r->wr_id = wr->wr_id;
	r->num_sge = wr->num_sge;
	memcpy(r->sg, wr->sg_list, sizeof(*r->sg) * (size_t)wr->num_sge);
	rq->count++;
	return 0;
}

bool ibemu_rq_pop(struct ibemu_rq *rq, struct ibemu_rwqe *out)
{
	if (!rq->count)
		return false;
	*out = rq->ring[rq->head];
	rq->head = (rq->head + 1) % rq->size;
	rq->count--;
	return true;
}
