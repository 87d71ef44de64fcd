/* SPDX-License-Identifier: MIT */
/*
 * A MAD on the wire with the fields of its LRH/BTH/DETH that the receiver
 * sees (umad-spec §4.7), and helpers to read the common MAD header. The
 * layouts are those of <infiniband/umad_types.h> and umad_sm.h; offsets of
 * the directed-route SMP fields are from umad-spec §5.1.
 */
#ifndef IBEMU_FABRIC_PACKET_H
#define IBEMU_FABRIC_PACKET_H

#include <endian.h>
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/umad_types.h>
#include <infiniband/umad_sm.h>

#define MAD_SIZE 256
#define LID_PERMISSIVE 0xffff

struct mad_pkt {
	uint8_t mad[MAD_SIZE];
	uint16_t slid, dlid;	/* LRH; 0xffff on directed-route hops */
	uint32_t sqp, dqp;
	uint32_t qkey;
	uint16_t pkey;		/* the P_Key value carried in the BTH */
	uint8_t sl;
	uint8_t hops_left;	/* guard against forwarding loops */
	/* A duplicate fault rule copies a packet once along its way, not at
	 * every hop: 2^hops copies of a 21-hop SMP once ate 4 GB. */
	bool duplicated;
	bool grh;
	uint8_t sgid[16], dgid[16];
	/*
	 * A kernel-RMPP transfer, moved whole (umad-spec §6.6): the entire
	 * message (hdr_len + data bytes); mad[] holds its first segment.
	 * NULL for ordinary MADs. Copies of a packet share it by reference.
	 */
	GBytes *rmpp;
};

/* Take a copy of @src that owns a reference to its RMPP payload. */
static inline void mad_pkt_copy(struct mad_pkt *dst, const struct mad_pkt *src)
{
	*dst = *src;
	if (dst->rmpp)
		g_bytes_ref(dst->rmpp);
}

static inline void mad_pkt_release(struct mad_pkt *p)
{
	if (p->rmpp)
		g_bytes_unref(p->rmpp);
	p->rmpp = NULL;
}

static inline uint8_t mad_class(const uint8_t *m) { return m[1]; }
static inline uint8_t mad_class_version(const uint8_t *m) { return m[2]; }
static inline uint8_t mad_method(const uint8_t *m) { return m[3]; }
static inline uint16_t mad_status(const uint8_t *m)
{
	return (uint16_t)(m[4] << 8 | m[5]);
}
static inline void mad_set_status(uint8_t *m, uint16_t s)
{
	m[4] = s >> 8;
	m[5] = s & 0xff;
}
static inline uint64_t mad_tid(const uint8_t *m)
{
	uint64_t v;

	memcpy(&v, m + 8, 8);
	return be64toh(v);
}
static inline void mad_set_tid(uint8_t *m, uint64_t tid)
{
	uint64_t v = htobe64(tid);

	memcpy(m + 8, &v, 8);
}
static inline uint16_t mad_attr_id(const uint8_t *m)
{
	return (uint16_t)(m[16] << 8 | m[17]);
}
static inline uint32_t mad_attr_mod(const uint8_t *m)
{
	return (uint32_t)m[20] << 24 | (uint32_t)m[21] << 16 |
	       (uint32_t)m[22] << 8 | m[23];
}

/* ib_response_mad(): the kernel's notion of a response (umad-spec §4.4). */
static inline bool mad_is_response(const uint8_t *m)
{
	uint8_t method = mad_method(m);

	if (method & UMAD_METHOD_RESP_MASK ||
	    method == UMAD_METHOD_TRAP_REPRESS)
		return true;
	return mad_class(m) == UMAD_CLASS_BM && (mad_attr_mod(m) & 1);
}

static inline bool mad_is_smp(const uint8_t *m)
{
	return mad_class(m) == UMAD_CLASS_SUBN_LID_ROUTED ||
	       mad_class(m) == UMAD_CLASS_SUBN_DIRECTED_ROUTE;
}

/* Directed-route SMP fields (umad-spec §5.1). */
#define DR_STATUS_D	0x8000
static inline bool dr_d_bit(const uint8_t *m) { return m[4] & 0x80; }
static inline uint8_t dr_hop_ptr(const uint8_t *m) { return m[6]; }
static inline uint8_t dr_hop_cnt(const uint8_t *m) { return m[7]; }
static inline uint16_t dr_slid(const uint8_t *m)
{
	return (uint16_t)(m[32] << 8 | m[33]);
}
static inline uint16_t dr_dlid(const uint8_t *m)
{
	return (uint16_t)(m[34] << 8 | m[35]);
}
static inline uint8_t *dr_initial_path(uint8_t *m) { return m + 128; }
static inline uint8_t *dr_return_path(uint8_t *m) { return m + 192; }
static inline uint8_t *smp_data(uint8_t *m) { return m + 64; }
static inline uint64_t smp_mkey(const uint8_t *m)
{
	uint64_t v;

	memcpy(&v, m + 24, 8);
	return be64toh(v);
}

#endif
