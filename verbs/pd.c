/* SPDX-License-Identifier: MIT */
/*
 * Protection domains, thread domains and parent domains (docs/verbs.md
 * "Parent domains"). A PD only groups the objects of the data path, so
 * the process keeps it: nothing of it needs the daemon.
 *
 * A parent domain (ibv_alloc_parent_domain) is a PD that objects are made
 * on as on any, standing for its protection domain in every check (a
 * region of either serves a QP of either: ibemu_pd_prot), with a thread
 * domain or none, and the program's allocators for the queues of what is
 * made on it (its QPs', SRQs' and, by IBV_CQ_INIT_ATTR_MASK_PD, CQs'
 * rings: ibemu_queue_alloc), as mlx5's. A PD with parent domains or
 * objects on it, and a thread domain one uses, cannot go (EBUSY).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

struct ibemu_pd {
	struct ibv_pd pd;
	struct ibemu_pd *prot;	/* itself; a parent domain's or an imported
				 * one's: the PD it stands for */
	struct ibemu_pd *next;	/* the context's PDs (not parent domains) */
	bool imported;		/* ibv_import_pd's (holds @prot as a user) */
	bool unimported;	/* and let go of while objects were on it */
	unsigned parents;	/* parent domains on this PD (context lock) */
	unsigned users;		/* objects on it: regions, windows, AHs and
				 * the queues of QPs, SRQs, CQs (atomic) */
	struct ibemu_td *td;	/* a parent domain's, or NULL */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};

struct ibemu_td {
	struct ibv_td td;
	unsigned users;		/* parent domains on it (context lock) */
};

static struct ibemu_pd *to_pd(struct ibv_pd *pd)
{
	return (struct ibemu_pd *)pd;
}

struct ibv_pd *ibemu_alloc_pd(struct ibv_context *context)
{
	struct ibemu_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->prot = pd;
	pd->pd.context = context;
	pthread_mutex_lock(&to_ctx(context)->lock);
	/* Handles from the context whose objects it shares (import.c). */
	pd->pd.handle = __atomic_add_fetch(&ibemu_root(to_ctx(context))->next_pd_handle, 1,
					   __ATOMIC_RELAXED);
	pd->next = to_ctx(context)->pds;
	to_ctx(context)->pds = pd;
	pthread_mutex_unlock(&to_ctx(context)->lock);
	return &pd->pd;
}

static void unlink_pd(struct ibemu_context *ctx, struct ibemu_pd *pd)
{
	struct ibemu_pd **pp;

	for (pp = &ctx->pds; *pp && *pp != pd; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = pd->next;
}

int ibemu_dealloc_pd(struct ibv_pd *ibpd)
{
	struct ibemu_context *ctx = to_ctx(ibpd->context);
	struct ibemu_pd *pd = to_pd(ibpd);

	/* In use: a parent domain or an object on it (the kernel's usecnt
	 * says EBUSY too; the checks of what is on it look at it). */
	pthread_mutex_lock(&ctx->lock);
	if (pd->parents || __atomic_load_n(&pd->users, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	if (pd->imported)
		ibemu_pd_hold(&pd->prot->pd, -1);
	else if (pd->prot != pd) {
		pd->prot->parents--;
		if (pd->td)
			pd->td->users--;
	} else
		unlink_pd(ctx, pd);
	pthread_mutex_unlock(&ctx->lock);
	free(pd);
	return 0;
}

/*
 * ibv_import_pd: the PD @handle of the context whose objects @context
 * shares (import.c), or its own; one that stands for it, as a parent
 * domain for its PD (ibemu_pd_prot). It holds that PD as a user would
 * (its dealloc is EBUSY meanwhile). EINVAL: no such PD.
 */
struct ibv_pd *ibemu_import_pd(struct ibv_context *context, uint32_t handle)
{
	struct ibemu_context *ctx = to_ctx(context), *root;
	struct ibemu_pd *pd, *found = NULL;

	if (!(pd = calloc(1, sizeof(*pd)))) {
		errno = ENOMEM;
		return NULL;
	}
	root = ibemu_root_lock(ctx);
	for (found = root->pds; found && found->pd.handle != handle; found = found->next)
		;
	if (found)
		ibemu_pd_hold(&found->pd, 1);
	ibemu_root_unlock(ctx, root);
	if (!found) {
		free(pd);
		errno = EINVAL;
		return NULL;
	}
	pd->prot = found;
	pd->imported = true;
	pd->pd.context = context;
	pd->pd.handle = handle;
	return &pd->pd;
}

void ibemu_unimport_pd(struct ibv_pd *ibpd)
{
	struct ibemu_pd *pd = to_pd(ibpd);

	if (!pd->imported)
		return;		/* not an imported one: the program's error */
	/* The import's hold on the PD it stands for goes; the PD itself
	 * with the last object on it (ibemu_pd_hold). */
	__atomic_sub_fetch(&pd->prot->users, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&pd->unimported, true, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE))
		free(pd);
}

void ibemu_pd_hold(struct ibv_pd *ibpd, int delta)
{
	struct ibemu_pd *pd = to_pd(ibpd);
	unsigned left;

	if (!pd)
		return;
	/* An object on an imported PD is on the PD it stands for too, as
	 * the kernel's one object is (its dealloc is EBUSY meanwhile). */
	if (pd->imported)
		__atomic_add_fetch(&pd->prot->users, (unsigned)delta, __ATOMIC_RELEASE);
	left = __atomic_add_fetch(&pd->users, (unsigned)delta, __ATOMIC_ACQ_REL);
	/* The last object on one the program let go of (ibemu_unimport_pd). */
	if (pd->imported && !left && __atomic_load_n(&pd->unimported, __ATOMIC_ACQUIRE))
		free(pd);
}

struct ibv_pd *ibemu_pd_prot(struct ibv_pd *pd)
{
	return pd ? &to_pd(pd)->prot->pd : NULL;
}

/* ---- thread domains ------------------------------------------------------ */

struct ibv_td *ibemu_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct ibemu_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	if (!(td = calloc(1, sizeof(*td)))) {
		errno = ENOMEM;
		return NULL;
	}
	td->td.context = context;
	return &td->td;
}

int ibemu_dealloc_td(struct ibv_td *ibtd)
{
	struct ibemu_context *ctx = to_ctx(ibtd->context);
	struct ibemu_td *td = (struct ibemu_td *)ibtd;

	pthread_mutex_lock(&ctx->lock);
	if (td->users) {
		pthread_mutex_unlock(&ctx->lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&ctx->lock);
	free(td);
	return 0;
}

/* ---- parent domains ------------------------------------------------------ */

struct ibv_pd *ibemu_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct ibemu_context *ctx = to_ctx(context);
	struct ibemu_pd *pd, *prot = attr->pd ? to_pd(attr->pd) : NULL;
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	/* A PD of this context, not a parent domain; a TD of it; both
	 * allocators or none (mlx5_alloc_parent_domain's checks). */
	if ((attr->comp_mask & ~known) || !prot || prot->prot != prot ||
	    attr->pd->context != context || (attr->td && attr->td->context != context) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	if (!(pd = calloc(1, sizeof(*pd)))) {
		errno = ENOMEM;
		return NULL;
	}
	pd->prot = prot;
	pd->pd.context = context;
	pd->pd.handle = prot->pd.handle;	/* what a command would name */
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	pthread_mutex_lock(&ctx->lock);
	prot->parents++;
	if ((pd->td = (struct ibemu_td *)attr->td))
		pd->td->users++;
	pthread_mutex_unlock(&ctx->lock);
	return &pd->pd;
}

bool ibemu_is_parent_domain(struct ibv_pd *pd)
{
	return pd && to_pd(pd)->prot != to_pd(pd);
}

/* ---- the queues of what is made on a domain ------------------------------ */

/* Each queue starts with this, so that it goes back where it came from
 * (the allocator may say IBV_ALLOCATOR_USE_DEFAULT); the queue follows,
 * 64-byte aligned. */
struct queue_head {
	bool custom;
	uint8_t pad[63];
};

void *ibemu_queue_alloc(struct ibv_pd *ibpd, size_t n, size_t size, uint64_t type)
{
	struct ibemu_pd *pd = ibpd ? to_pd(ibpd) : NULL;
	size_t len;
	struct queue_head *h = IBV_ALLOCATOR_USE_DEFAULT;

	if (size && n > (SIZE_MAX - sizeof(*h)) / size)
		return NULL;
	len = sizeof(*h) + n * size;
	if (pd && pd->alloc)
		h = pd->alloc(ibpd, pd->pd_context, len, 64, type);
	if (h == IBV_ALLOCATOR_USE_DEFAULT) {
		if (!(h = aligned_alloc(64, (len + 63) & ~(size_t)63)))
			return NULL;
		h->custom = false;
	} else if (!h) {
		return NULL;
	} else {
		h->custom = true;
	}
	memset(h + 1, 0, n * size);
	ibemu_pd_hold(ibpd, 1);
	return h + 1;
}

void ibemu_queue_free(struct ibv_pd *ibpd, void *q, uint64_t type)
{
	struct queue_head *h = q ? (struct queue_head *)q - 1 : NULL;
	struct ibemu_pd *pd = ibpd ? to_pd(ibpd) : NULL;

	if (!h)
		return;
	ibemu_pd_hold(ibpd, -1);
	if (h->custom && pd && pd->free)
		pd->free(ibpd, pd->pd_context, h, type);
	else
		free(h);
}
