/* SPDX-License-Identifier: MIT */
/*
 * A MAD on the wire with the fields of its LRH/BTH/DETH that the receiver
 * sees (the kernel's struct ib_mad_recv_wc: docs/umad.md "Receive
 * header"), and helpers to read the common MAD header and the
 * directed-route SMP fields. The layouts are those of
 * <infiniband/umad_types.h> and umad_sm.h (IBA 13.4.3, 14.2.1.2).
 */
#ifndef IBEMU_FABRIC_PACKET_H
#define IBEMU_FABRIC_PACKET_H

#include <endian.h>
#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/umad_types.h>
#include <infiniband/umad_sm.h>

#define MAD_SIZE 256
#define LID_PERMISSIVE 0xffff

/* A MAD buffer: aligned so that the headers' structs (struct umad_hdr,
 * struct umad_smp, with 64-bit fields) can be laid over it. */
#define MAD_BUF(name) _Alignas(8) uint8_t name[MAD_SIZE]

struct mad_pkt {
	MAD_BUF(mad);
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
	 * A kernel-RMPP transfer, moved whole (docs/umad.md §6.6): the entire
	 * message (hdr_len + data bytes); mad[] holds its first segment.
	 * NULL for ordinary MADs. Copies of a packet share it by reference.
	 */
	GBytes *rmpp;
	/*
	 * A data packet (docs/verbs.md "Data path") instead of a MAD: the
	 * whole abi/verbs_wire.h record, header and payload, shared by
	 * reference; the routing fields above (LIDs, QPs, Q_Key, P_Key, SL)
	 * are copies of its. mad[] is zero. NULL for MADs.
	 */
	GBytes *data;
};

/* Take a copy of @src that owns a reference to its RMPP payload. */
static inline void mad_pkt_copy(struct mad_pkt *dst, const struct mad_pkt *src)
{
	*dst = *src;
	if (dst->rmpp)
		g_bytes_ref(dst->rmpp);
	if (dst->data)
		g_bytes_ref(dst->data);
}

static inline void mad_pkt_release(struct mad_pkt *p)
{
	if (p->rmpp)
		g_bytes_unref(p->rmpp);
	if (p->data)
		g_bytes_unref(p->data);
	p->rmpp = p->data = NULL;
}

/* Big-endian fields at any offset of a MAD buffer: get_be16 and put_be16,
 * and the same for 32 and 64 bits. */
#define BE_FIELD(bits)								\
	static inline uint##bits##_t get_be##bits(const uint8_t *m, size_t off)	\
	{									\
		__be##bits v;							\
										\
		memcpy(&v, m + off, sizeof(v));					\
		return be##bits##toh(v);					\
	}									\
	static inline void put_be##bits(uint8_t *m, size_t off, uint##bits##_t x) \
	{									\
		__be##bits v = htobe##bits(x);					\
										\
		memcpy(m + off, &v, sizeof(v));					\
	}
BE_FIELD(16)
BE_FIELD(32)
BE_FIELD(64)
#undef BE_FIELD

/*
 * The common MAD header (IBA 13.4.3) through <infiniband/umad_types.h>'s
 * struct umad_hdr. Fields wider than a byte are copied out (get_be16...),
 * so an unaligned buffer (a client's write) is fine too.
 */
#define MAD_OFF(field) offsetof(struct umad_hdr, field)
static inline uint8_t mad_class(const uint8_t *m) { return m[MAD_OFF(mgmt_class)]; }
static inline uint8_t mad_class_version(const uint8_t *m) { return m[MAD_OFF(class_version)]; }
static inline uint8_t mad_method(const uint8_t *m) { return m[MAD_OFF(method)]; }
static inline uint16_t mad_status(const uint8_t *m) { return get_be16(m, MAD_OFF(status)); }
static inline void mad_set_status(uint8_t *m, uint16_t s) { put_be16(m, MAD_OFF(status), s); }
/*
 * The GetResp to @req, as an agent builds it (ib_mad's and the SMA's
 * answers alike): the request's header and contents, method GetResp,
 * @status. The agent then fills its data; the D bit of a directed-route
 * answer is smi_send_response()'s (fabric/smi.h).
 */
static inline void mad_getresp(uint8_t *resp, const uint8_t *req, uint16_t status)
{
	memcpy(resp, req, MAD_SIZE);
	resp[MAD_OFF(method)] = UMAD_METHOD_GET_RESP;
	mad_set_status(resp, status);
}

static inline uint64_t mad_tid(const uint8_t *m) { return get_be64(m, MAD_OFF(tid)); }
static inline void mad_set_tid(uint8_t *m, uint64_t tid) { put_be64(m, MAD_OFF(tid), tid); }
static inline uint16_t mad_attr_id(const uint8_t *m) { return get_be16(m, MAD_OFF(attr_id)); }
static inline void mad_set_attr_id(uint8_t *m, uint16_t id) { put_be16(m, MAD_OFF(attr_id), id); }
static inline uint32_t mad_attr_mod(const uint8_t *m) { return get_be32(m, MAD_OFF(attr_mod)); }

/* ib_response_mad(): the kernel's notion of a response (docs/umad.md §4.4). */
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

/* Directed-route SMP fields (IBA 14.2.1.2), through struct umad_smp. */
#define SMP_OFF(field) offsetof(struct umad_smp, field)
#define DR_STATUS_D	0x8000
static inline bool dr_d_bit(const uint8_t *m) { return mad_status(m) & DR_STATUS_D; }
static inline uint8_t dr_hop_ptr(const uint8_t *m) { return m[SMP_OFF(hop_ptr)]; }
static inline uint8_t dr_hop_cnt(const uint8_t *m) { return m[SMP_OFF(hop_cnt)]; }
static inline uint16_t dr_slid(const uint8_t *m) { return get_be16(m, SMP_OFF(dr_slid)); }
static inline uint16_t dr_dlid(const uint8_t *m) { return get_be16(m, SMP_OFF(dr_dlid)); }
static inline uint8_t *dr_initial_path(uint8_t *m) { return m + SMP_OFF(initial_path); }
static inline uint8_t *dr_return_path(uint8_t *m) { return m + SMP_OFF(return_path); }
static inline uint8_t *smp_data(uint8_t *m) { return m + SMP_OFF(data); }
static inline uint64_t smp_mkey(const uint8_t *m) { return get_be64(m, SMP_OFF(mkey)); }

#endif
