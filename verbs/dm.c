/* SPDX-License-Identifier: MIT */
/*
 * Device memory (docs/verbs.md "Device memory"): the HCA's own memory,
 * which a program allocates (ibv_alloc_dm), fills and reads with
 * ibv_memcpy_to_dm / ibv_memcpy_from_dm, and registers as a zero-based
 * region (ibv_reg_dm_mr) that RDMA reaches like any other, as mlx5's
 * MEMIC. Here it is memory of the provider's, in the process, out of a
 * budget of DM_SIZE_MAX a context (max_dm_size).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

/* The access a DM region may have (mlx5's MLX5_IB_DM_ALLOWED_ACCESS); it
 * must be zero-based (ib_uverbs' DM_MR_REG). */
#define DM_ACCESS_OK	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_ZERO_BASED)

struct ibemu_dm {
	struct ibv_dm dm;
	uint8_t *buf;
	size_t length;
	unsigned users;		/* regions on it, under the context's lock */
};

static struct ibemu_dm *to_dm(struct ibv_dm *dm)
{
	return (struct ibemu_dm *)dm;
}

/* Whether a copy of @len bytes at @off may be made: out of range,
 * EFAULT; an offset or a length not a multiple of 4 bytes, EINVAL (the
 * HCA reaches its memory 4 bytes at a time), as mlx5_memcpy_to_dm and
 * _from_dm. */
static int copy_check(const struct ibemu_dm *dm, uint64_t off, size_t len)
{
	if (off > dm->length || len > dm->length - off)
		return EFAULT;
	return (off | len) & 3 ? EINVAL : 0;
}

static int to_dm_copy(struct ibv_dm *ibdm, uint64_t off, const void *src, size_t len)
{
	struct ibemu_dm *dm = to_dm(ibdm);
	int err = copy_check(dm, off, len);

	if (!err)
		memcpy(dm->buf + off, src, len);
	return err;
}

static int from_dm_copy(void *dst, struct ibv_dm *ibdm, uint64_t off, size_t len)
{
	struct ibemu_dm *dm = to_dm(ibdm);
	int err = copy_check(dm, off, len);

	if (!err)
		memcpy(dst, dm->buf + off, len);
	return err;
}

struct ibv_dm *ibemu_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)
{
	struct ibemu_context *ctx = to_ctx(context);
	size_t align = (size_t)1 << (attr->log_align_req < 12 ? attr->log_align_req : 12);
	struct ibemu_dm *dm;

	if (attr->comp_mask || !attr->length || attr->log_align_req > 63) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->length > IBEMU_DM_SIZE_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	if (!(dm = calloc(1, sizeof(*dm))) ||
	    !(dm->buf = aligned_alloc(align < 64 ? 64 : align,
				      (attr->length + 63) & ~(size_t)63))) {
		free(dm);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	if (attr->length > IBEMU_DM_SIZE_MAX - ctx->dm_bytes) {
		/* The HCA's memory is used up (mlx5: ENOMEM). */
		pthread_mutex_unlock(&ctx->lock);
		free(dm->buf);
		free(dm);
		errno = ENOMEM;
		return NULL;
	}
	ctx->dm_bytes += attr->length;
	pthread_mutex_unlock(&ctx->lock);
	memset(dm->buf, 0, attr->length);
	dm->length = attr->length;
	dm->dm.context = context;
	dm->dm.memcpy_to_dm = to_dm_copy;
	dm->dm.memcpy_from_dm = from_dm_copy;
	return &dm->dm;
}

int ibemu_free_dm(struct ibv_dm *ibdm)
{
	struct ibemu_context *ctx = to_ctx(ibdm->context);
	struct ibemu_dm *dm = to_dm(ibdm);

	pthread_mutex_lock(&ctx->lock);
	if (dm->users) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;	/* a region is on it (ib_uverbs' usecnt) */
	}
	ctx->dm_bytes -= dm->length;
	pthread_mutex_unlock(&ctx->lock);
	free(dm->buf);
	free(dm);
	return 0;
}

struct ibv_mr *ibemu_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm, uint64_t off,
			       size_t length, unsigned int access)
{
	struct ibemu_dm *dm = to_dm(ibdm);
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibv_mr *mr;

	if ((access & ~DM_ACCESS_OK) || !(access & IBV_ACCESS_ZERO_BASED) ||
	    off > dm->length || length > dm->length - off || ibdm->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	/* A region of the provider's memory, keyed from 0 (zero-based). */
	mr = ibemu_reg_region(pd, dm->buf + off, length, 0, (int)access, false);
	if (!mr)
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	dm->users++;
	((struct ibemu_mr *)mr)->dm = dm;
	pthread_mutex_unlock(&ctx->lock);
	/* ibv_reg_dm_mr is inline in verbs.h: nobody fills these after us. */
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = NULL;
	mr->length = length;
	return mr;
}

void ibemu_dm_unref(struct ibemu_dm *dm)
{
	dm->users--;
}
