/* SPDX-License-Identifier: MIT */
/*
 * A RoCE port's packets as its Ethernet carries them (capture_roce.h).
 * RoCE v1 (IBA Annex A16): Ethernet, EtherType 0x8915, then the GRH and
 * the rest of the InfiniBand packet through its ICRC (the LRH masked in
 * the ICRC in either case, so it is the InfiniBand one). RoCE v2 (Annex
 * A17): Ethernet, IPv4 (IPv4-mapped GIDs) or IPv6, UDP to port 4791 from
 * a source port made from the flow label, BTH onwards, and an ICRC over
 * the IP and UDP headers with their variant fields as 1s (A17.3.3).
 * Every frame ends with its FCS.
 */
#include "config.h"

#include <string.h>

#include "abi/roce_wire.h"
#include "ctl/capture.h"
#include "ctl/capture_roce.h"
#include "fabric/packet.h"

#define LRH_BYTES	8
#define GRH_BYTES	40
#define ETH_BYTES	14
#define IP4_BYTES	ROCE_IP4_BYTES
#define IP6_BYTES	40
#define UDP_BYTES	8
#define ICRC_BYTES	4
#define VCRC_BYTES	2
#define FCS_BYTES	4
#define ETHERTYPE_IP4	0x0800
#define ETHERTYPE_IP6	0x86dd
#define ETHERTYPE_ROCE	0x8915	/* RoCE v1 (A16.4.1) */
#define ROCE_V2_PORT	4791	/* A17.3.2 */
#define SPORT_MIN	0xc000	/* the kernel's source ports: 0xC000-0xFFFF */

/* The UDP source port of a RoCE v2 packet (A17.3.2 leaves it to the
 * sender for entropy): the flow label folded into 14 bits, or one made
 * from both QP numbers when the label is 0, as the kernel does
 * (ib_verbs.h: rdma_calc_flow_label, rdma_flow_label_to_udp_sport). */
static uint16_t udp_sport(uint32_t flow, uint32_t sqp, uint32_t dqp)
{
	if (!flow) {
		uint64_t v = (uint64_t)sqp * dqp;

		v ^= v >> 20;
		v ^= v >> 40;
		flow = (uint32_t)v & 0xfffff;
	}
	return (uint16_t)(((flow & 0x3fff) ^ ((flow & 0xfc000) >> 14)) | SPORT_MIN);
}

static void put_le32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

/* The ICRC of a RoCE v2 packet from @ip (its IP header) to @end (the
 * end of its payload): 8 bytes of 1s for the LRH it has not, then the
 * bytes with TOS/TTL/checksum (IPv4) or traffic class, flow label and
 * hop limit (IPv6), the UDP checksum and the BTH's Resv8a as 1s. */
static uint32_t v2_icrc(const uint8_t *ip, size_t len, bool v4)
{
	uint8_t *m = g_malloc(LRH_BYTES + len);
	size_t iph = v4 ? IP4_BYTES : IP6_BYTES;
	uint32_t crc;

	memset(m, 0xff, LRH_BYTES);
	memcpy(m + LRH_BYTES, ip, len);
	if (v4) {
		m[LRH_BYTES + 1] = 0xff;			/* TOS */
		m[LRH_BYTES + 8] = 0xff;			/* TTL */
		m[LRH_BYTES + 10] = m[LRH_BYTES + 11] = 0xff;	/* checksum */
	} else {
		m[LRH_BYTES] |= 0x0f;				/* traffic class, */
		memset(m + LRH_BYTES + 1, 0xff, 3);		/* flow label */
		m[LRH_BYTES + 7] = 0xff;			/* hop limit */
	}
	m[LRH_BYTES + iph + 6] = m[LRH_BYTES + iph + 7] = 0xff;	/* UDP checksum */
	m[LRH_BYTES + iph + UDP_BYTES + 4] = 0xff;		/* BTH Resv8a */
	crc = eth_crc32(m, LRH_BYTES + len);
	g_free(m);
	return crc;
}

size_t roce_frame(const struct roce_ends *e, const uint8_t *ib, size_t len, uint8_t *out)
{
	const uint8_t *grh = ib + LRH_BYTES, *bth = grh + GRH_BYTES;
	size_t body = len - LRH_BYTES - GRH_BYTES - ICRC_BYTES - VCRC_BYTES;	/* BTH..payload */
	uint32_t vtf = get_be32(grh, 0);
	bool v4 = roce_gid_is_ip4(grh + 8) && roce_gid_is_ip4(grh + 24);
	size_t n = ETH_BYTES, ip = ETH_BYTES;
	uint16_t udp_len = (uint16_t)(UDP_BYTES + body + ICRC_BYTES);

	memcpy(out, e->dst_mac, 6);
	memcpy(out + 6, e->src_mac, 6);
	if (!e->v2) {
		put_be16(out, 12, ETHERTYPE_ROCE);
		memcpy(out + n, grh, len - LRH_BYTES - VCRC_BYTES);	/* GRH..ICRC */
		n += len - LRH_BYTES - VCRC_BYTES;
	} else if (v4) {
		put_be16(out, 12, ETHERTYPE_IP4);
		roce_ip4_header(out + n, (uint8_t)(vtf >> 20), grh[7], udp_len, grh + 8, grh + 24);
		n += IP4_BYTES;
	} else {
		put_be16(out, 12, ETHERTYPE_IP6);
		memcpy(out + n, grh, GRH_BYTES);	/* a GRH is an IPv6 header... */
		put_be16(out, n + 4, udp_len);
		out[n + 6] = ROCE_IPPROTO_UDP;		/* ...whose next header is UDP */
		n += IP6_BYTES;
	}
	if (e->v2) {
		put_be16(out, n, udp_sport(vtf & 0xfffff, e->sqp, get_be32(bth, 4) & 0xffffff));
		put_be16(out, n + 2, ROCE_V2_PORT);
		put_be16(out, n + 4, udp_len);
		put_be16(out, n + 6, 0);		/* no UDP checksum (A17.3.2) */
		n += UDP_BYTES;
		memcpy(out + n, bth, body);
		n += body;
		put_le32(out + n, v2_icrc(out + ip, n - ip, v4));
		n += ICRC_BYTES;
	}
	put_le32(out + n, eth_crc32(out, n));
	return n + FCS_BYTES;
}
