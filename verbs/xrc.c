/* SPDX-License-Identifier: MIT */
/*
 * XRC, eXtended Reliable Connected (docs/verbs.md "XRC"): a
 * domain, SRQs in it that any target QP of the domain delivers to, and
 * the initiator and target QPs (qp.c, rc.c). A sender names the SRQ in
 * each request (XRCETH); the target QP takes the receive WR from that
 * SRQ, checks keys against its PD and completes on its CQ.
 *
 * A domain is this context's: ibv_open_xrcd's file (fd) is accepted and
 * not shared with other processes, as the kernel's inode-keyed sharing
 * would (docs/verbs.md "XRC").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

/* SRQ numbers are 24 bits (XRCETH); 0 is never given. */
#define SRQN_MASK	0xffffffu

struct ibv_xrcd *ibemu_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	const uint32_t known = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct verbs_xrcd *x;

	/* ib_uverbs_open_xrcd: OFLAGS is required; an fd of -1 asks for a
	 * new domain, which needs O_CREAT. */
	if ((attr->comp_mask & ~known) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (attr->oflags & ~(O_CREAT | O_EXCL)) ||
	    (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && !(attr->oflags & O_CREAT)) ||
	    ((attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && attr->fd == -1 &&
	     !(attr->oflags & O_CREAT))) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	x->xrcd.context = context;
	x->comp_mask = 0;
	x->handle = 1;
	return &x->xrcd;
}

/* ib_dealloc_xrcd: not while an SRQ or a QP is in it (EBUSY). */
int ibemu_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct ibemu_context *ctx = to_ctx(xrcd->context);
	struct ibemu_srq *s;
	struct ibemu_qp *qp;
	bool used = false;

	pthread_mutex_lock(&ctx->lock);
	for (s = ctx->xsrqs; s && !used; s = s->next)
		used = s->xrcd == xrcd;
	for (qp = ctx->qps; qp && !used; qp = qp->next)
		used = qp->xrcd == xrcd;
	pthread_mutex_unlock(&ctx->lock);
	if (used)
		return EBUSY;
	free((struct verbs_xrcd *)xrcd);
	return 0;
}

struct ibemu_srq *ibemu_xsrq_find(struct ibemu_context *ctx, uint32_t srqn)
{
	struct ibemu_srq *s;

	for (s = ctx->xsrqs; s; s = s->next)
		if (s->srqn == srqn)
			return s;
	return NULL;
}

void ibemu_xsrq_forget(struct ibemu_context *ctx, struct ibemu_srq *srq)
{
	struct ibemu_srq **pp;
	struct ibemu_qp *qp;

	for (pp = &ctx->xsrqs; *pp && *pp != srq; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = srq->next;
	for (qp = ctx->qps; qp; qp = qp->next)
		if (qp->xsrq == srq)
			qp->xsrq = NULL;
}

/*
 * ibv_create_srq_ex: a basic SRQ as ibv_create_srq makes it, or an XRC
 * one, which needs its domain, a CQ and a PD (ib_create_srq_user: EINVAL
 * without). libibverbs' ibv_create_srq_ex sets nothing of the SRQ when it
 * calls a provider's: the fields are set here.
 */
struct ibv_srq *ibemu_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct ibemu_context *ctx = to_ctx(context);
	enum ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? attr->srq_type :
									   IBV_SRQT_BASIC;
	struct ibv_srq_init_attr base = { .srq_context = attr->srq_context, .attr = attr->attr };
	struct ibemu_srq *srq;
	struct ibv_srq *ibsrq;

	if ((attr->comp_mask & ~known) || type == IBV_SRQT_TM) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    (type == IBV_SRQT_XRC && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
				      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))) {
		errno = EINVAL;
		return NULL;
	}
	ibsrq = ibemu_limited_create_srq(attr->pd, &base);
	if (!ibsrq)
		return NULL;
	attr->attr = base.attr;
	ibsrq->context = context;
	ibsrq->srq_context = attr->srq_context;
	ibsrq->pd = attr->pd;
	ibsrq->events_completed = 0;
	pthread_mutex_init(&ibsrq->mutex, NULL);
	pthread_cond_init(&ibsrq->cond, NULL);
	if (type != IBV_SRQT_XRC)
		return ibsrq;
	srq = (struct ibemu_srq *)ibsrq;
	srq->xrcd = attr->xrcd;
	srq->cq = attr->cq;
	pthread_mutex_lock(&ctx->lock);
	do
		ctx->next_srqn = (ctx->next_srqn + 1) & SRQN_MASK;
	while (!ctx->next_srqn || ibemu_xsrq_find(ctx, ctx->next_srqn));
	srq->srqn = ctx->next_srqn;
	srq->next = ctx->xsrqs;
	ctx->xsrqs = srq;
	pthread_mutex_unlock(&ctx->lock);
	return ibsrq;
}

int ibemu_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct ibemu_srq *srq = (struct ibemu_srq *)ibsrq;

	if (!srq->xrcd)
		return EINVAL;	/* only XRC SRQs have one */
	*srq_num = srq->srqn;
	return 0;
}
