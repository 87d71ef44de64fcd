/* SPDX-License-Identifier: MIT */
/*
 * SA records as they go on the wire (IBA 15.2.5), for the two who speak
 * them here: the rdma_cm's and IPoIB's queries (cma_addr.c, cma_mcast.c,
 * ipoib_link.c) and the SA
 * of a fabric configured without an SM (sa.c). Component mask bits are
 * the records' field numbers (IBA 15.2.5: the Nth field is bit N; the
 * kernel's IB_SA_PATH_REC_* and IB_SA_MCMEMBER_REC_*); offsets are in
 * bytes from the record's start, where libibmad has no field for them.
 */
#ifndef IBEMU_KERNEL_SA_WIRE_H
#define IBEMU_KERNEL_SA_WIRE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

/* An SA MAD's header (IBA 15.2.1) for a query of ours: its method,
 * attribute, TID and component mask; the rest zero. */
static inline void sa_wire_hdr(struct umad_sa_packet *sa, uint8_t method, uint16_t attr,
			       uint64_t tid, uint64_t comp_mask)
{
	_Static_assert(sizeof(*sa) == 256, "SA MAD");
	memset(sa, 0, sizeof(*sa));
	sa->mad_hdr.base_version = 1;
	sa->mad_hdr.mgmt_class = UMAD_CLASS_SUBN_ADM;
	sa->mad_hdr.class_version = UMAD_SA_CLASS_VERSION;
	sa->mad_hdr.method = method;
	sa->mad_hdr.attr_id = htobe16(attr);
	sa->mad_hdr.tid = htobe64(tid);
	sa->comp_mask = htobe64(comp_mask);
}

/* PathRecord (IBA 15.2.5.16, Table 205). */
#define PR_COMP_SERVICE_ID	(3ull << 0)	/* two fields, ServiceID8MSB and 56LSB */
#define PR_COMP_DGID		(1ull << 2)
#define PR_COMP_SGID		(1ull << 3)
#define PR_COMP_DLID		(1ull << 4)
#define PR_COMP_SLID		(1ull << 5)
#define PR_COMP_REVERSIBLE	(1ull << 11)
#define PR_COMP_NUMB_PATH	(1ull << 12)
#define PR_COMP_PKEY		(1ull << 13)
#define PR_COMP_SL		(1ull << 15)
#define PR_COMP_MTU_SELECTOR	(1ull << 16)
#define PR_COMP_MTU		(1ull << 17)
#define PR_COMP_RATE_SELECTOR	(1ull << 18)
#define PR_COMP_RATE		(1ull << 19)
#define PR_COMP_LIFE_SELECTOR	(1ull << 20)
#define PR_COMP_LIFE		(1ull << 21)

/* MultiPathRecord (IBA 15.2.5.20): its fields, then the source GIDs and
 * the destination GIDs from byte 24. */
#define MPR_COMP_NUMB_PATH	(1ull << 6)
#define MPR_COMP_PKEY		(1ull << 7)
#define MPR_COMP_SGID_COUNT	(1ull << 19)
#define MPR_COMP_DGID_COUNT	(1ull << 20)
#define MPR_NUMB_PATH_OFF	5
#define MPR_PKEY_OFF		6
#define MPR_SGID_COUNT_OFF	15
#define MPR_DGID_COUNT_OFF	16
#define MPR_GIDS_OFF		24

/* MCMemberRecord (IBA 15.2.5.17, Table 210). */
#define MCR_MGID		(1ull << 0)
#define MCR_PORT_GID		(1ull << 1)
#define MCR_QKEY		(1ull << 2)
#define MCR_MLID		(1ull << 3)
#define MCR_MTU_SELECTOR	(1ull << 4)
#define MCR_MTU			(1ull << 5)
#define MCR_TCLASS		(1ull << 6)
#define MCR_PKEY		(1ull << 7)
#define MCR_RATE_SELECTOR	(1ull << 8)
#define MCR_RATE		(1ull << 9)
#define MCR_LIFE_SELECTOR	(1ull << 10)
#define MCR_LIFE		(1ull << 11)
#define MCR_SL			(1ull << 12)
#define MCR_FLOW_LABEL		(1ull << 13)
#define MCR_HOP_LIMIT		(1ull << 14)
#define MCR_SCOPE		(1ull << 15)
#define MCR_JOIN_STATE		(1ull << 16)
#define MCR_PROXY_JOIN		(1ull << 17)
#define MCR_SIZE		52
/* Selector(2) and value(6) bytes: MTU, rate, packet lifetime. */
#define MCR_MTU_OFF		38
#define MCR_RATE_OFF		42
#define MCR_LIFE_OFF		43
/* HopLimit is the last byte of the SL/FlowLabel/HopLimit word at 44,
 * Scope and JoinState the two nibbles at 48 (libibmad has no field for
 * either). */
#define MCR_HOP_LIMIT_OFF	47
#define MCR_SCOPE_JOIN_OFF	48
#define MCR_PROXY_OFF		49

/* The selectors of MTU, rate and packet lifetime (IBA 15.2.5.16). */
enum sa_selector {
	SA_SEL_GREATER = 0,
	SA_SEL_LESS = 1,
	SA_SEL_EXACTLY = 2,
	SA_SEL_LARGEST = 3,
};

#endif
