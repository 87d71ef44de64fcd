/* SPDX-License-Identifier: MIT */
/*
 * Memory windows (docs/verbs.md "Memory windows"; IBA 10.6.7): a window
 * gives remote access, under an R_Key of its own, to part of a region
 * registered with IBV_ACCESS_MW_BIND. Type 1 is bound by ibv_bind_mw and
 * usable through any QP of its PD; type 2 (2B) by a BIND_MW WR, usable
 * only through the QP that bound it, and invalidated by LOCAL_INV or by
 * the peer's SEND with Invalidate. A bind or a local invalidation is a WR
 * of the send queue: it takes effect when it reaches the wire, in order,
 * and completes in order (rc.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

/* The rights a window may give (a region's local ones are not). */
#define MW_RIGHTS	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_ATOMIC)

struct ibemu_mw {
	struct ibv_mw mw;
	struct ibemu_mw *next;
	struct ibemu_mr *mr;	/* bound to; NULL: not bound (free) */
	uint64_t va, len;	/* the window, in the region's addresses */
	int access;
	struct ibemu_qp *qp;	/* type 2: the QP it was bound through */
};

static struct ibemu_mw *to_mw(struct ibv_mw *mw)
{
	return (struct ibemu_mw *)mw;
}

struct ibv_mw *ibemu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibemu_mw *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	if (ctx->n_mw >= VERBS_MAX_MW) {
		pthread_mutex_unlock(&ctx->lock);
		free(mw);
		errno = ENOMEM;		/* past max_mw */
		return NULL;
	}
	ctx->n_mw++;
	/* An index of the key space regions use (mr.c), a tag of 0. */
	mw->mw.rkey = ++ctx->next_key << 8;
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.handle = mw->mw.rkey;
	mw->mw.type = type;
	mw->next = ctx->mws;
	ctx->mws = mw;
	pthread_mutex_unlock(&ctx->lock);
	return &mw->mw;
}

int ibemu_dealloc_mw(struct ibv_mw *ibmw)
{
	struct ibemu_context *ctx = to_ctx(ibmw->context);
	struct ibemu_mw *mw = to_mw(ibmw), **pp;

	pthread_mutex_lock(&ctx->lock);
	for (pp = &ctx->mws; *pp && *pp != mw; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mw->next;
	ctx->n_mw--;
	pthread_mutex_unlock(&ctx->lock);
	free(mw);
	return 0;
}

/* ibv_bind_mw (type 1): a BIND_MW WR on @qp, the window's next R_Key
 * (the tag's 8 bits one up) its own at once, as mlx5's bind_mw does. */
int ibemu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = bind->send_flags,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey), .bind_info = bind->bind_info },
	}, *bad;
	int r = ibemu_post_send(qp, &wr, &bad);

	if (!r)
		mw->rkey = wr.bind_mw.rkey;
	return r;
}

static struct ibemu_mr *mr_of(struct ibemu_context *ctx, const struct ibv_mr *m)
{
	struct ibemu_mr *mr;

	for (mr = ctx->mrs; mr; mr = mr->next)
		if (&mr->vmr.ibv_mr == m)
			return mr;
	return NULL;
}

/* A bind (IBA 10.6.7): the region bindable, in the QP's PD as the
 * window is, the range inside it, rights it can give (remote writes
 * need local write); a type 2 window must be free and keep its index. */
static int bind(struct ibemu_qp *qp, const struct ibemu_swqe *w)
{
	struct ibemu_mw *mw = to_mw(w->mw);
	const struct ibv_mw_bind_info *b = &w->bind;
	struct ibemu_mr *mr = b->mr ? mr_of(qp->ctx, b->mr) : NULL;
	int rights = b->mw_access_flags;

	if (mw->mw.pd != qp->qp.pd || (mw->mw.type == IBV_MW_TYPE_2 && mw->mr) ||
	    (mw->mw.type == IBV_MW_TYPE_2 && (w->rkey >> 8) != (mw->mw.rkey >> 8)))
		return IBV_WC_MW_BIND_ERR;
	if (!b->length && mw->mw.type == IBV_MW_TYPE_1) {
		mw->mr = NULL;	/* a type 1 window unbound */
		return 0;
	}
	if (!mr || mr->vmr.ibv_mr.pd != qp->qp.pd || !(mr->vmr.access & IBV_ACCESS_MW_BIND) ||
	    (rights & ~MW_RIGHTS) ||
	    ((rights & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->vmr.access & IBV_ACCESS_LOCAL_WRITE)) ||
	    b->addr < mr->iova || b->length > mr->vmr.ibv_mr.length ||
	    b->addr - mr->iova > mr->vmr.ibv_mr.length - b->length)
		return IBV_WC_MW_BIND_ERR;
	mw->mr = mr;
	mw->va = b->addr;
	mw->len = b->length;
	mw->access = rights;
	mw->qp = mw->mw.type == IBV_MW_TYPE_2 ? qp : NULL;
	if (mw->mw.type == IBV_MW_TYPE_2)
		mw->mw.rkey = w->rkey;
	return 0;
}

static struct ibemu_mw *by_rkey(struct ibemu_context *ctx, uint32_t rkey)
{
	struct ibemu_mw *mw;

	for (mw = ctx->mws; mw; mw = mw->next)
		if (mw->mw.rkey == rkey && mw->mr)
			return mw;
	return NULL;
}

int ibemu_mw_local(struct ibemu_qp *qp, const struct ibemu_swqe *w)
{
	struct ibemu_mw *mw;

	if (w->opcode == IBV_WR_BIND_MW)
		return bind(qp, w);
	/* LOCAL_INV: a bound type 2 window of the QP's PD. */
	mw = by_rkey(qp->ctx, w->rkey);
	if (!mw || mw->mw.type != IBV_MW_TYPE_2 || mw->mw.pd != qp->qp.pd)
		return IBV_WC_LOC_PROT_ERR;
	mw->mr = NULL;
	return 0;
}

bool ibemu_mw_check(struct ibemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
		    char **host)
{
	struct ibemu_mw *mw = by_rkey(qp->ctx, rkey);

	if (!mw || (mw->access & access) != access || mw->mw.pd != ibemu_rx_pd(qp) ||
	    (mw->mw.type == IBV_MW_TYPE_2 && mw->qp != qp))
		return false;
	if (va < mw->va || len > mw->len || va - mw->va > mw->len - len)
		return false;
	*host = mw->mr->host + (va - mw->mr->iova);
	return true;
}

bool ibemu_mw_invalidate(struct ibemu_qp *qp, uint32_t rkey)
{
	struct ibemu_mw *mw = by_rkey(qp->ctx, rkey);

	if (!mw || mw->mw.type != IBV_MW_TYPE_2 || mw->qp != qp)
		return false;
	mw->mr = NULL;
	return true;
}

void ibemu_mw_forget_mr(struct ibemu_context *ctx, struct ibemu_mr *mr)
{
	struct ibemu_mw *mw;

	for (mw = ctx->mws; mw; mw = mw->next)
		if (mw->mr == mr)
			mw->mr = NULL;
}

void ibemu_mw_forget_qp(struct ibemu_context *ctx, struct ibemu_qp *qp)
{
	struct ibemu_mw *mw;

	for (mw = ctx->mws; mw; mw = mw->next)
		if (mw->qp == qp) {
			mw->mr = NULL;
			mw->qp = NULL;
		}
}
