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

/* The access flags a bind may carry, as rxe takes them (its
 * RXE_ACCESS_SUPPORTED_MW): the remote rights a window gives, and flags
 * a program passes along that give nothing here (LOCAL_WRITE, which
 * rdma-core's own tests set, MW_BIND, ON_DEMAND, the optional range).
 * ZERO_BASED: a type 2 window whose addresses start at 0. */
#define MW_ACCESS_OK	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND | \
			 IBV_ACCESS_OPTIONAL_RANGE)

struct ibemu_mw {
	struct ibv_mw mw;
	struct ibemu_mw *next;
	struct ibemu_mr *mr;	/* bound to; NULL: not bound (free) */
	uint64_t start, len;	/* the window, in the addresses a peer names */
	uint64_t at;		/* where @start is, in the region's addresses */
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
	mw->mw.rkey = ibemu_new_key(ctx);
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.handle = mw->mw.rkey;
	mw->mw.type = type;
	mw->next = ctx->mws;
	ctx->mws = mw;
	pthread_mutex_unlock(&ctx->lock);
	ibemu_pd_hold(pd, 1);
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
	ibemu_pd_hold(ibmw->pd, -1);
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

/* Whether type @type may be bound so on @qp (IBA 10.6.7.2, in the order
 * and with the rules of rxe's rxe_check_bind_mw; every failure is a
 * Memory Window Bind Error completion). */
static bool bind_ok(struct ibemu_qp *qp, const struct ibemu_mw *mw, const struct ibemu_mr *mr,
		    const struct ibv_mw_bind_info *b)
{
	int rights = b->mw_access_flags;

	if ((rights & ~MW_ACCESS_OK) || ibemu_pd_prot(mw->mw.pd) != ibemu_pd_prot(qp->qp.pd))
		return false;
	if (mw->mw.type == IBV_MW_TYPE_1 && (rights & IBV_ACCESS_ZERO_BASED))
		return false;	/* o10-36.2.2 */
	/* o10-37.2.30: a type 2 window must be free; o10-37.2.40: a
	 * region and a length (LOCAL_INV is how one is taken back) */
	if (mw->mw.type == IBV_MW_TYPE_2 && (mw->mr || !mr || !b->length))
		return false;
	if (!b->length)
		return true;	/* a type 1 window unbound */
	/* C10-73: bindable, in the window's PD; C10-74: remote writes
	 * need local write; C10-75: the window inside the region */
	return mr && ibemu_pd_prot(mr->vmr.ibv_mr.pd) == ibemu_pd_prot(mw->mw.pd) &&
	       (mr->vmr.access & IBV_ACCESS_MW_BIND) &&
	       (!(rights & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
		(mr->vmr.access & IBV_ACCESS_LOCAL_WRITE)) &&
	       b->addr >= mr->iova && b->length <= mr->vmr.ibv_mr.length &&
	       b->addr - mr->iova <= mr->vmr.ibv_mr.length - b->length;
}

/* A bind WR reaching the wire: the window bound, or unbound (type 1, a
 * length of 0). A type 2 window takes the key byte of the WR's R_Key,
 * its index stays its own (as rxe and mlx5 take only those 8 bits). */
static int bind(struct ibemu_qp *qp, const struct ibemu_swqe *w)
{
	struct ibemu_mw *mw = to_mw(w->mw);
	const struct ibv_mw_bind_info *b = &w->bind;
	struct ibemu_mr *mr = b->mr ? mr_of(qp->ctx, b->mr) : NULL;

	if (!bind_ok(qp, mw, mr, b))
		return IBV_WC_MW_BIND_ERR;
	if (mw->mw.type == IBV_MW_TYPE_2)
		mw->mw.rkey = (mw->mw.rkey & ~0xffu) | (w->rkey & 0xffu);
	mw->mr = b->length ? mr : NULL;
	mw->start = (b->mw_access_flags & IBV_ACCESS_ZERO_BASED) ? 0 : b->addr;
	mw->at = b->addr;
	mw->len = b->length;
	mw->access = b->mw_access_flags;
	mw->qp = mw->mw.type == IBV_MW_TYPE_2 ? qp : NULL;
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
	if (!mw || mw->mw.type != IBV_MW_TYPE_2 ||
	    ibemu_pd_prot(mw->mw.pd) != ibemu_pd_prot(qp->qp.pd))
		return IBV_WC_LOC_PROT_ERR;
	mw->mr = NULL;
	return 0;
}

bool ibemu_mw_check(struct ibemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
		    char **host)
{
	struct ibemu_mw *mw = by_rkey(qp->ctx, rkey);

	if (!mw || (mw->access & access) != access ||
	    ibemu_pd_prot(mw->mw.pd) != ibemu_pd_prot(ibemu_rx_pd(qp)) ||
	    (mw->mw.type == IBV_MW_TYPE_2 && mw->qp != qp))
		return false;
	if (va < mw->start || len > mw->len || va - mw->start > mw->len - len)
		return false;
	*host = mw->mr->host + (mw->at - mw->mr->iova) + (va - mw->start);
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
