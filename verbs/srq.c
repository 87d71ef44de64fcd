/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBA 10.2.9): receive WRs that any QP attached to
 * the SRQ takes in arrival order.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

struct ibv_srq *ibemu_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibemu_srq *srq;

	if (!attr->attr.max_wr || attr->attr.max_wr > IBEMU_MAX_WR ||
	    attr->attr.max_sge > IBEMU_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq || !(srq->ring = calloc(attr->attr.max_wr + 1, sizeof(*srq->ring)))) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->size = attr->attr.max_wr + 1;
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
		if (attr->srq_limit >= srq->size)
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

	attr->max_wr = srq->size - 1;
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
	pthread_mutex_unlock(&ctx->lock);
	free(srq->ring);
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
		struct ibemu_rwqe *r;

		if (wr->num_sge < 0 || wr->num_sge > IBEMU_MAX_SGE) {
			err = EINVAL;
			break;
		}
		if (srq->count == srq->size - 1) {
			err = ENOMEM;
			break;
		}
		r = &srq->ring[(srq->head + srq->count) % srq->size];
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		memcpy(r->sg, wr->sg_list, sizeof(*r->sg) * (size_t)wr->num_sge);
		srq->count++;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

bool ibemu_take_rwqe(struct ibemu_qp *qp, struct ibemu_rwqe *out)
{
	struct ibemu_srq *srq = (struct ibemu_srq *)qp->qp.srq;

	if (srq) {
		if (!srq->count)
			return false;
		*out = srq->ring[srq->head];
		srq->head = (srq->head + 1) % srq->size;
		srq->count--;
		return true;
	}
	if (!qp->rq_count)
		return false;
	*out = qp->rq[qp->rq_head];
	qp->rq_head = (qp->rq_head + 1) % qp->rq_size;
	qp->rq_count--;
	return true;
}
