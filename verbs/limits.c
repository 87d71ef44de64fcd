/* SPDX-License-Identifier: MIT */
/*
 * The device's limits on PDs, MRs, CQs, AHs and SRQs (abi/verbs_wire.h
 * VERBS_MAX_*, what ibv_query_device says), kept per open context: each
 * create is counted first and refused with ENOMEM at the limit, as an HCA
 * driver refuses one past its tables; each destroy that succeeds gives
 * one back. The ops table (provider.c) calls these, which call the
 * objects' own (pd.c, mr.c, cq.c, cq_ex.c, qp.c, srq.c). QPs are the
 * daemon's to count (it numbers them).
 */
#include "config.h"

#include <errno.h>

#include "verbs/provider.h"

static bool take(struct ibemu_context *ctx, unsigned *n, unsigned max)
{
	bool ok;

	pthread_mutex_lock(&ctx->lock);
	ok = *n < max;
	if (ok)
		(*n)++;
	pthread_mutex_unlock(&ctx->lock);
	if (!ok)
		errno = ENOMEM;
	return ok;
}

static void give_back(struct ibemu_context *ctx, unsigned *n)
{
	pthread_mutex_lock(&ctx->lock);
	(*n)--;
	pthread_mutex_unlock(&ctx->lock);
}

struct ibv_pd *ibemu_limited_alloc_pd(struct ibv_context *context)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct ibv_pd *pd;

	if (!take(ctx, &ctx->n_pd, VERBS_MAX_PD))
		return NULL;
	if (!(pd = ibemu_alloc_pd(context)))
		give_back(ctx, &ctx->n_pd);
	return pd;
}

struct ibv_pd *ibemu_limited_alloc_parent_domain(struct ibv_context *context,
						 struct ibv_parent_domain_init_attr *attr)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct ibv_pd *pd;

	if (!take(ctx, &ctx->n_pd, VERBS_MAX_PD))
		return NULL;
	if (!(pd = ibemu_alloc_parent_domain(context, attr)))
		give_back(ctx, &ctx->n_pd);
	return pd;
}

int ibemu_limited_dealloc_pd(struct ibv_pd *pd)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	int r = ibemu_dealloc_pd(pd);

	if (!r)
		give_back(ctx, &ctx->n_pd);
	return r;
}

struct ibv_mr *ibemu_limited_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				    uint64_t hca_va, int access)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibv_mr *mr;

	if (!take(ctx, &ctx->n_mr, VERBS_MAX_MR))
		return NULL;
	if (!(mr = ibemu_reg_mr(pd, addr, length, hca_va, access)))
		give_back(ctx, &ctx->n_mr);
	return mr;
}

struct ibv_mr *ibemu_limited_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off,
				       size_t length, unsigned int access)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibv_mr *mr;

	if (!take(ctx, &ctx->n_mr, VERBS_MAX_MR))
		return NULL;
	if (!(mr = ibemu_reg_dm_mr(pd, dm, off, length, access)))
		give_back(ctx, &ctx->n_mr);
	return mr;
}

int ibemu_limited_dereg_mr(struct verbs_mr *vmr)
{
	struct ibemu_context *ctx = to_ctx(vmr->ibv_mr.context);
	int r = ibemu_dereg_mr(vmr);

	if (!r)
		give_back(ctx, &ctx->n_mr);
	return r;
}

struct ibv_cq *ibemu_limited_create_cq(struct ibv_context *context, int cqe,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct ibv_cq *cq;

	if (!take(ctx, &ctx->n_cq, VERBS_MAX_CQ))
		return NULL;
	if (!(cq = ibemu_create_cq(context, cqe, channel, comp_vector)))
		give_back(ctx, &ctx->n_cq);
	return cq;
}

struct ibv_cq_ex *ibemu_limited_create_cq_ex(struct ibv_context *context,
					     struct ibv_cq_init_attr_ex *attr)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct ibv_cq_ex *cq;

	if (!take(ctx, &ctx->n_cq, VERBS_MAX_CQ))
		return NULL;
	if (!(cq = ibemu_create_cq_ex(context, attr)))
		give_back(ctx, &ctx->n_cq);
	return cq;
}

int ibemu_limited_destroy_cq(struct ibv_cq *cq)
{
	struct ibemu_context *ctx = to_ctx(cq->context);
	int r = ibemu_destroy_cq(cq);

	if (!r)
		give_back(ctx, &ctx->n_cq);
	return r;
}

struct ibv_ah *ibemu_limited_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibv_ah *ah;

	if (!take(ctx, &ctx->n_ah, VERBS_MAX_AH))
		return NULL;
	if (!(ah = ibemu_create_ah(pd, attr)))
		give_back(ctx, &ctx->n_ah);
	return ah;
}

int ibemu_limited_destroy_ah(struct ibv_ah *ah)
{
	struct ibemu_context *ctx = to_ctx(ah->context);
	int r = ibemu_destroy_ah(ah);

	if (!r)
		give_back(ctx, &ctx->n_ah);
	return r;
}

struct ibv_srq *ibemu_limited_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibv_srq *srq;

	if (!take(ctx, &ctx->n_srq, VERBS_MAX_SRQ))
		return NULL;
	if (!(srq = ibemu_create_srq(pd, attr)))
		give_back(ctx, &ctx->n_srq);
	return srq;
}

int ibemu_limited_destroy_srq(struct ibv_srq *srq)
{
	struct ibemu_context *ctx = to_ctx(srq->context);
	int r = ibemu_destroy_srq(srq);

	if (!r)
		give_back(ctx, &ctx->n_srq);
	return r;
}
