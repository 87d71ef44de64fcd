/* SPDX-License-Identifier: MIT */
/*
 * ibv_create_cq_ex: the same completion queue (cq.c), read one completion
 * at a time through ibv_start_poll / ibv_next_poll / ibv_end_poll and the
 * ibv_wc_read_* calls, as libibverbs' extended CQ API defines them
 * (verbs.h; man ibv_create_cq_ex). Each completion is taken off the ring
 * by start_poll or next_poll into the CQ's `cur`, which the reads look at.
 * What the CQ offers is the standard set of fields
 * (IBV_WC_STANDARD_FLAGS); a timestamp, a VLAN or a flow tag is asked of a
 * device that has none: EOPNOTSUPP, as mlx5 for what it lacks.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/provider.h"

static struct ibemu_cq *of(struct ibv_cq_ex *ex)
{
	return to_cq(ibv_cq_ex_to_cq(ex));
}

/* The completion taken, shown in the ibv_cq_ex fields libibverbs reads
 * directly (status, wr_id). */
static int took(struct ibemu_cq *cq, bool got)
{
	if (!got)
		return ENOENT;
	cq->vcq.cq_ex.status = cq->cur.status;
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	return 0;
}

static int start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	struct ibemu_cq *cq = of(ex);

	if (attr->comp_mask)	/* no attribute is defined yet */
		return EINVAL;
	return took(cq, ibemu_cq_take(cq, &cq->cur));
}

static int next_poll(struct ibv_cq_ex *ex)
{
	struct ibemu_cq *cq = of(ex);

	return took(cq, ibemu_cq_take(cq, &cq->cur));
}

static void end_poll(struct ibv_cq_ex *ex)
{
	(void)ex;	/* each take locks and lets go by itself */
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *ex) { return of(ex)->cur.opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *ex) { return of(ex)->cur.vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *ex) { return of(ex)->cur.byte_len; }
static __be32 read_imm_data(struct ibv_cq_ex *ex) { return of(ex)->cur.imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *ex) { return of(ex)->cur.qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *ex) { return of(ex)->cur.src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *ex) { return of(ex)->cur.wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *ex) { return of(ex)->cur.slid; }
static uint8_t read_sl(struct ibv_cq_ex *ex) { return of(ex)->cur.sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *ex) { return of(ex)->cur.dlid_path_bits; }

struct ibv_cq_ex *ibemu_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *ex;
	struct ibv_cq *ibcq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* libibverbs fills in the rest (its __lib_ibv_create_cq_ex calls
	 * verbs_init_cq after us, the channel's reference count too). */
	ibcq = ibemu_create_cq(context, (int)attr->cqe, attr->channel, (int)attr->comp_vector);
	if (!ibcq)
		return NULL;
	ex = &to_cq(ibcq)->vcq.cq_ex;
	ex->start_poll = start_poll;
	ex->next_poll = next_poll;
	ex->end_poll = end_poll;
	ex->read_opcode = read_opcode;
	ex->read_vendor_err = read_vendor_err;
	ex->read_byte_len = read_byte_len;
	ex->read_imm_data = read_imm_data;
	ex->read_qp_num = read_qp_num;
	ex->read_src_qp = read_src_qp;
	ex->read_wc_flags = read_wc_flags;
	ex->read_slid = read_slid;
	ex->read_sl = read_sl;
	ex->read_dlid_path_bits = read_dlid_path_bits;
	return ex;
}
