/* SPDX-License-Identifier: MIT */
/*
 * Memory regions and scatter-gather lists. The provider is the HCA, in
 * the process that owns the memory: a region is its address range, its
 * access flags and a key; a remote access names the key and the HCA checks
 * range and flags before it touches anything (IBA 10.6.3).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

/* The access a region needs for remote writes and atomics needs local
 * write as well (IBA 10.6.3.1; ib_check_mr_access). */
#define REMOTE_WRITES	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
/* The accesses that write the region's memory. */
#define WRITES		(IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITES)

struct ibv_mr *ibemu_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	return ibemu_reg_region(pd, addr, length, hca_va, access, true);
}

struct ibv_mr *ibemu_reg_region(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t hca_va, int access, bool pin)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	struct ibemu_mr *mr;
	uint64_t pages = 0;	/* none pinned (@pin false) */
	uint32_t key;
	int err;

	if ((access & REMOTE_WRITES) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	/* addr NULL: the whole address space, as an implicit ODP region
	 * (mlx5_ib_reg_user_mr: start 0, length U64_MAX, iova 0); else no
	 * memory there. */
	if (!addr && length && !(length == SIZE_MAX && !hca_va && (access & IBV_ACCESS_ON_DEMAND))) {
		errno = EFAULT;
		return NULL;
	}
	if (pin && (err = ibemu_pin(addr, length, access, &pages)) != 0) {
		errno = err;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		ibemu_unpin(pages);
		errno = ENOMEM;
		return NULL;
	}
	mr->pinned = pages;
	pthread_mutex_lock(&ctx->lock);
	/* Keys: an index in the high 24 bits and a tag in the low 8, as
	 * HCAs make them; never 0. */
	key = ibemu_new_key(ctx) | 0x2a;
	mr->vmr.ibv_mr.lkey = mr->vmr.ibv_mr.rkey = key;
	mr->vmr.ibv_mr.handle = key;
	mr->vmr.mr_type = IBEMU_MR_TYPE_MR;
	mr->vmr.access = access;
	/* libibverbs fills context, pd, addr and length on return (after
	 * the reader thread may look): set those it checks now. Keys name
	 * iovas (ibv_reg_mr_iova2); keep where the iova is here. */
	mr->vmr.ibv_mr.length = length;
	mr->vmr.ibv_mr.pd = pd;
	mr->host = addr;
	mr->iova = hca_va;
	mr->next = ctx->mrs;
	ctx->mrs = mr;
	pthread_mutex_unlock(&ctx->lock);
	ibemu_pd_hold(pd, 1);
	return &mr->vmr.ibv_mr;
}

int ibemu_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		   int access)
{
	struct ibemu_mr *mr = (struct ibemu_mr *)vmr;
	struct ibemu_context *ctx = to_ctx(vmr->ibv_mr.context);
	bool move = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	int new_access = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? access : vmr->access;
	uint64_t pages = 0;
	int err;

	/* libibverbs checked the flags and the translation given. A region
	 * of device memory stays where it is (mlx5: EINVAL). */
	if (((new_access & REMOTE_WRITES) && !(new_access & IBV_ACCESS_LOCAL_WRITE)) || mr->dm)
		return EINVAL;
	if ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != vmr->ibv_mr.context))
		return EINVAL;
	/* The pages of the region as it will be, checked and counted as a
	 * registration's; then the old ones let go (ib_umem_get, then the
	 * old umem released: mlx5_ib_rereg_user_mr). */
	if ((err = ibemu_pin(move ? addr : mr->host, move ? length : vmr->ibv_mr.length,
			     new_access, &pages)) != 0)
		return err;
	ibemu_unpin(mr->pinned);
	pthread_mutex_lock(&ctx->lock);
	mr->pinned = pages;
	vmr->access = new_access;
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		ibemu_pd_hold(pd, 1);
		ibemu_pd_hold(vmr->ibv_mr.pd, -1);
		vmr->ibv_mr.pd = pd;
	}
	if (move) {
		/* The keys stay; their addresses are the new range's own. */
		mr->host = addr;
		mr->iova = (uintptr_t)addr;
		vmr->ibv_mr.length = length;
	}
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* ibv_advise_mr: a prefetch of on-demand regions' pages, which the
 * process has mapped or not already: nothing to do, once every SGE names
 * an ODP region of @pd and falls inside it (else EINVAL, as mlx5's
 * prefetch; a flush only asks it done before the return). */
int ibemu_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sges)
{
	struct ibemu_context *ctx = to_ctx(pd->context);
	uint32_t i;
	char *host;
	int ret = 0;

	if ((advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	     advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	     advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) ||
	    (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !num_sges)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	for (i = 0; i < num_sges && !ret; i++)
		if (!ibemu_mr_check(ctx, pd, sg_list[i].lkey, false, sg_list[i].addr,
				    sg_list[i].length, IBV_ACCESS_ON_DEMAND, &host))
			ret = EINVAL;
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

int ibemu_dereg_mr(struct verbs_mr *vmr)
{
	struct ibemu_mr *mr = (struct ibemu_mr *)vmr, **pp;
	struct ibemu_context *ctx = to_ctx(vmr->ibv_mr.context);

	/* An imported region's is its owner's to end (docs/verbs.md
	 * "Importing objects"): this lets go of it. */
	if (mr->imported) {
		ibemu_unimport_mr(&vmr->ibv_mr);
		return 0;
	}
	pthread_mutex_lock(&ctx->lock);
	for (pp = &ctx->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mr->next;
	ibemu_mw_forget_mr(ctx, mr);
	if (mr->dm)
		ibemu_dm_unref(mr->dm);
	pthread_mutex_unlock(&ctx->lock);
	ibemu_unpin(mr->pinned);
	ibemu_pd_hold(vmr->ibv_mr.pd, -1);
	free(mr);
	return 0;
}

uint32_t ibemu_new_key(struct ibemu_context *ctx)
{
	/* From the context whose objects it shares (import.c): a key is
	 * one region's in both. */
	return __atomic_add_fetch(&ibemu_root(ctx)->next_key, 1, __ATOMIC_RELAXED) << 8;
}

/* The region of @list with @key: 1 and *@host if the access is allowed,
 * 0 if not, -1 if no region there has the key. */
static int check_in(struct ibemu_mr *list, struct ibv_pd *pd, uint32_t key, bool remote,
		    uint64_t va, uint64_t len, int access, char **host)
{
	struct ibemu_mr *mr;

	for (mr = list; mr; mr = mr->next) {
		struct ibv_mr *m = &mr->vmr.ibv_mr;

		if ((remote ? m->rkey : m->lkey) != key)
			continue;
		if (ibemu_pd_prot(m->pd) != ibemu_pd_prot(pd) ||
		    (mr->vmr.access & access) != access)
			return 0;
		if (va < mr->iova || len > m->length || va - mr->iova > m->length - len)
			return 0;
		*host = (char *)mr->host + (va - mr->iova);
		/* On demand: a page not mapped now, or not writable for a
		 * write, fails the access, as the HCA's page fault would
		 * (pin.c). */
		if (!(mr->vmr.access & IBV_ACCESS_ON_DEMAND))
			return 1;
		return access & WRITES ? ibemu_dma_range_writable(*host, len) :
					 ibemu_dma_range_mapped(*host, len);
	}
	return -1;
}

bool ibemu_mr_check(struct ibemu_context *ctx, struct ibv_pd *pd, uint32_t key, bool remote,
		    uint64_t va, uint64_t len, int access, char **host)
{
	int r = check_in(ctx->mrs, pd, key, remote, va, len, access, host);
	struct ibemu_context *root;

	/* An imported context sees its root's regions too (import.c). */
	if (r < 0 && (root = ibemu_root(ctx)) != ctx) {
		pthread_mutex_lock(&root->lock);
		r = check_in(root->mrs, pd, key, remote, va, len, access, host);
		pthread_mutex_unlock(&root->lock);
	}
	return r > 0;
}

/*
 * ibv_import_mr: the region @handle of the context whose objects @pd's
 * shares, or of its own, as a region on @pd: its keys and length (the
 * kernel's query gives no address). The region itself stays the
 * other's: a key this context does not have is looked for there
 * (ibemu_mr_check), and its deregistration ends it for both. EINVAL: no
 * such region, or another PD's.
 */
struct ibv_mr *ibemu_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	struct ibemu_context *ctx = to_ctx(pd->context), *root;
	struct ibemu_mr *mr, *found;

	if (!(mr = calloc(1, sizeof(*mr)))) {
		errno = ENOMEM;
		return NULL;
	}
	root = ibemu_root_lock(ctx);
	for (found = root->mrs; found && found->vmr.ibv_mr.handle != handle; found = found->next)
		;
	if (found && ibemu_pd_prot(found->vmr.ibv_mr.pd) == ibemu_pd_prot(pd)) {
		mr->vmr.ibv_mr.lkey = found->vmr.ibv_mr.lkey;
		mr->vmr.ibv_mr.rkey = found->vmr.ibv_mr.rkey;
		mr->vmr.ibv_mr.length = found->vmr.ibv_mr.length;
		mr->vmr.access = found->vmr.access;
	} else
		found = NULL;
	ibemu_root_unlock(ctx, root);
	if (!found) {
		free(mr);
		errno = EINVAL;
		return NULL;
	}
	mr->imported = true;
	mr->vmr.mr_type = IBEMU_MR_TYPE_MR;
	mr->vmr.ibv_mr.context = pd->context;
	mr->vmr.ibv_mr.pd = pd;
	mr->vmr.ibv_mr.handle = handle;
	ibemu_pd_hold(pd, 1);
	return &mr->vmr.ibv_mr;
}

void ibemu_unimport_mr(struct ibv_mr *ibmr)
{
	struct ibemu_mr *mr = (struct ibemu_mr *)ibmr;

	if (!mr->imported)
		return;		/* not an imported one: the program's error */
	ibemu_pd_hold(ibmr->pd, -1);
	free(mr);
}

int ibemu_sge_check(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, int access, uint64_t *total)
{
	char *host;
	int i;

	*total = 0;
	for (i = 0; i < n; i++) {
		if (sg[i].length &&
		    !ibemu_mr_check(ctx, pd, sg[i].lkey, false, sg[i].addr, sg[i].length, access,
				    &host))
			return IBV_WC_LOC_PROT_ERR;
		*total += sg[i].length;
	}
	return 0;
}

/* Copy @len bytes between @buf and the list at byte @off of it; the
 * list was checked (ibemu_sge_check), so every lkey resolves. */
void ibemu_sge_copy(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, uint64_t off, void *buf, size_t len, bool to_sge)
{
	char *b = buf, *host;
	int i;

	for (i = 0; i < n && len; i++) {
		uint64_t take;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		take = sg[i].length - off;
		if (take > len)
			take = len;
		if (ibemu_mr_check(ctx, pd, sg[i].lkey, false, sg[i].addr + off, take, 0, &host)) {
			if (to_sge)
				ibemu_dma_write(host, b, take);
			else
				ibemu_dma_read(b, host, take);
		}
		b += take;
		len -= take;
		off = 0;
	}
}
