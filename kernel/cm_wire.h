/* SPDX-License-Identifier: MIT */
/*
 * The communication management MADs (class 0x07, IBA 12.6) as a field
 * table: each field is where IBA Tables 106-120 put it, as a byte offset
 * in the MAD (the CM data start after the 24-byte common header), a bit
 * offset from that byte's most significant bit, and a width in bits.
 * cm_get()/cm_put() read and write any of them big-endian.
 */
#ifndef IBEMU_KERNEL_CM_WIRE_H
#define IBEMU_KERNEL_CM_WIRE_H

#include <stdint.h>
#include <string.h>

#define CM_CLASS		0x07
#define CM_CLASS_VERSION	2
#define CM_METHOD_SEND		0x03

/* Attribute IDs (IBA Table 104; <infiniband/umad_cm.h> names them too). */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

struct cm_field {
	uint16_t byte;		/* from the start of the MAD */
	uint8_t bit;		/* from the MSB of that byte */
	uint8_t width;		/* 1 to 64 */
};

#define CMF(off, bit, width)	((struct cm_field){ 24 + (off), (bit), (width) })

/* REQ, Table 106 */
#define CM_REQ_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_REQ_SERVICE_ID	CMF(8, 0, 64)
#define CM_REQ_LOCAL_CA_GUID	CMF(16, 0, 64)
#define CM_REQ_LOCAL_QKEY	CMF(28, 0, 32)
#define CM_REQ_LOCAL_QPN	CMF(32, 0, 24)
#define CM_REQ_RESP_RES		CMF(35, 0, 8)
#define CM_REQ_INIT_DEPTH	CMF(39, 0, 8)
#define CM_REQ_REMOTE_CM_TIMEOUT CMF(43, 0, 5)
#define CM_REQ_TRANSPORT	CMF(43, 5, 2)	/* 0 RC, 1 UC */
#define CM_REQ_FLOW_CONTROL	CMF(43, 7, 1)
#define CM_REQ_STARTING_PSN	CMF(44, 0, 24)
#define CM_REQ_LOCAL_CM_TIMEOUT	CMF(47, 0, 5)
#define CM_REQ_RETRY_COUNT	CMF(47, 5, 3)
#define CM_REQ_PKEY		CMF(48, 0, 16)
#define CM_REQ_MTU		CMF(50, 0, 4)
#define CM_REQ_RNR_RETRY	CMF(50, 5, 3)
#define CM_REQ_MAX_CM_RETRIES	CMF(51, 0, 4)
#define CM_REQ_SRQ		CMF(51, 4, 1)
#define CM_REQ_PRIMARY_LOCAL_LID CMF(52, 0, 16)
#define CM_REQ_PRIMARY_REMOTE_LID CMF(54, 0, 16)
#define CM_REQ_PRIMARY_LOCAL_GID 24 + 56	/* 16 bytes */
#define CM_REQ_PRIMARY_REMOTE_GID 24 + 72
#define CM_REQ_PRIMARY_RATE	CMF(91, 2, 6)
#define CM_REQ_PRIMARY_SL	CMF(94, 0, 4)
#define CM_REQ_PRIMARY_SUBNET_LOCAL CMF(94, 4, 1)
#define CM_REQ_PRIMARY_ACK_TIMEOUT CMF(95, 0, 5)
#define CM_REQ_PRIVATE		(24 + 140)
#define CM_REQ_PRIVATE_LEN	92

/* MRA, Table 107 */
#define CM_MRA_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_MRA_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_MRA_MESSAGE		CMF(8, 0, 2)	/* 0 REQ, 1 REP, 2 LAP */
#define CM_MRA_SERVICE_TIMEOUT	CMF(9, 0, 5)

/* REJ, Table 108 */
#define CM_REJ_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_REJ_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_REJ_MESSAGE		CMF(8, 0, 2)	/* 0 REQ, 1 REP, 2 other */
#define CM_REJ_INFO_LEN		CMF(9, 0, 7)
#define CM_REJ_REASON		CMF(10, 0, 16)
#define CM_REJ_PRIVATE		(24 + 84)
#define CM_REJ_PRIVATE_LEN	148

/* REP, Table 110 */
#define CM_REP_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_REP_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_REP_LOCAL_QKEY	CMF(8, 0, 32)
#define CM_REP_LOCAL_QPN	CMF(12, 0, 24)
#define CM_REP_STARTING_PSN	CMF(20, 0, 24)
#define CM_REP_RESP_RES		CMF(24, 0, 8)
#define CM_REP_INIT_DEPTH	CMF(25, 0, 8)
#define CM_REP_TARGET_ACK_DELAY	CMF(26, 0, 5)
#define CM_REP_FAILOVER		CMF(26, 5, 2)
#define CM_REP_FLOW_CONTROL	CMF(26, 7, 1)
#define CM_REP_RNR_RETRY	CMF(27, 0, 3)
#define CM_REP_SRQ		CMF(27, 3, 1)
#define CM_REP_LOCAL_CA_GUID	CMF(28, 0, 64)
#define CM_REP_PRIVATE		(24 + 36)
#define CM_REP_PRIVATE_LEN	196

/* RTU, DREQ, DREP: Tables 111-113 */
#define CM_RTU_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_RTU_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_RTU_PRIVATE		(24 + 8)
#define CM_RTU_PRIVATE_LEN	224
#define CM_DREQ_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_DREQ_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_DREQ_REMOTE_QPN	CMF(8, 0, 24)
#define CM_DREQ_PRIVATE		(24 + 12)
#define CM_DREQ_PRIVATE_LEN	220
#define CM_DREP_LOCAL_COMM_ID	CMF(0, 0, 32)
#define CM_DREP_REMOTE_COMM_ID	CMF(4, 0, 32)
#define CM_DREP_PRIVATE		(24 + 8)
#define CM_DREP_PRIVATE_LEN	224

/* SIDR_REQ, SIDR_REP: Tables 119, 120 */
#define CM_SIDR_REQ_ID		CMF(0, 0, 32)
#define CM_SIDR_REQ_PKEY	CMF(4, 0, 16)
#define CM_SIDR_REQ_SERVICE_ID	CMF(8, 0, 64)
#define CM_SIDR_REQ_PRIVATE	(24 + 16)
#define CM_SIDR_REQ_PRIVATE_LEN	216
#define CM_SIDR_REP_ID		CMF(0, 0, 32)
#define CM_SIDR_REP_STATUS	CMF(4, 0, 8)
#define CM_SIDR_REP_QPN		CMF(8, 0, 24)
#define CM_SIDR_REP_SERVICE_ID	CMF(12, 0, 64)
#define CM_SIDR_REP_QKEY	CMF(20, 0, 32)
#define CM_SIDR_REP_PRIVATE	(24 + 96)
#define CM_SIDR_REP_PRIVATE_LEN	136

/* REJ reasons (IBA Table 109; the kernel's enum ib_cm_rej_reason) the
 * CM gives itself. */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_INVALID_COMM_ID = 6,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_CONSUMER_DEFINED = 28,
};

static inline uint64_t cm_get(const uint8_t *m, struct cm_field f)
{
	unsigned nbytes = (f.bit + f.width + 7) / 8, i;
	unsigned __int128 v = 0;

	for (i = 0; i < nbytes; i++)
		v = v << 8 | m[f.byte + i];
	v >>= nbytes * 8 - f.bit - f.width;
	return (uint64_t)(v & (((unsigned __int128)1 << f.width) - 1));
}

static inline void cm_put(uint8_t *m, struct cm_field f, uint64_t x)
{
	unsigned nbytes = (f.bit + f.width + 7) / 8, i;
	unsigned shift = nbytes * 8 - f.bit - f.width;
	unsigned __int128 mask = (((unsigned __int128)1 << f.width) - 1) << shift, v = 0;

	for (i = 0; i < nbytes; i++)
		v = v << 8 | m[f.byte + i];
	v = (v & ~mask) | (((unsigned __int128)x << shift) & mask);
	for (i = nbytes; i-- > 0; v >>= 8)
		m[f.byte + i] = (uint8_t)v;
}

#endif
