/* SPDX-License-Identifier: MIT */
/*
 * ibv_create_cq_ex: the same completion queue (cq.c), read one completion
 * at a time through ibv_start_poll / ibv_next_poll / ibv_end_poll and the
 * ibv_wc_read_* calls, as libibverbs' extended CQ API defines them
 * (verbs.h; man ibv_create_cq_ex). Each completion is taken off the ring
 * by start_poll or next_poll into the CQ's `cur`, which the reads look at.
 * What the CQ offers is the standard set of fields
 * (IBV_WC_STANDARD_FLAGS) and the completion's time: in the device's
 * cycles (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP; ibv_query_device_ex says
 * hca_core_clock 1 GHz, so a cycle is a ns of CLOCK_MONOTONIC) and in ns
 * of the wall clock (_WALLCLOCK), with ibv_query_rt_values_ex reading the
 * same clock now. A VLAN, a flow tag or a TM field is asked of a device
 * that has none: EOPNOTSUPP, as mlx5 for what it lacks.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
static uint64_t read_completion_ts(struct ibv_cq_ex *ex) { return of(ex)->cur_ts; }

static uint64_t ns_of(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t ibemu_clock_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

/* The completion's cycle count as wall-clock ns: the two clocks' offset
 * now (what mlx5 does with its clock's sampled offset). */
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *ex)
{
	return of(ex)->cur_ts + (ns_of(CLOCK_REALTIME) - ibemu_clock_ns());
}

int ibemu_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	uint64_t now = ibemu_clock_ns();

	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;	/* the only value there is */
	/* The cycle count whole in tv_nsec, as mlx5 gives it. */
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)
		values->raw_clock = (struct timespec){ .tv_sec = 0, .tv_nsec = (long)now };
	return 0;
}

/* The completion fields a CQ of ours can give. */
#define WC_FLAGS_OK	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define WC_FLAGS_TS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

struct ibv_cq_ex *ibemu_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *ex;
	struct ibv_cq *ibcq;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)WC_FLAGS_OK) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* On a parent domain: its allocators make the ring (mlx5: only a
	 * parent domain, EINVAL for a plain PD). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!ibemu_is_parent_domain(attr->parent_domain) ||
	     attr->parent_domain->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	/* libibverbs fills in the rest (its __lib_ibv_create_cq_ex calls
	 * verbs_init_cq after us, the channel's reference count too). */
	ibcq = ibemu_cq_new(context, (int)attr->cqe, attr->channel, (int)attr->comp_vector,
			    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ? attr->parent_domain :
									   NULL);
	if (!ibcq)
		return NULL;
	if ((attr->wc_flags & WC_FLAGS_TS) &&
	    !(to_cq(ibcq)->ts = calloc((size_t)ibcq->cqe, sizeof(uint64_t)))) {
		ibemu_destroy_cq(ibcq);
		errno = ENOMEM;
		return NULL;
	}
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
	ex->read_completion_ts = read_completion_ts;
	ex->read_completion_wallclock_ns = read_completion_wallclock_ns;
	return ex;
}
