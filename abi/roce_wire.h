/* SPDX-License-Identifier: MIT */
/*
 * RoCE v2's IP header as its wire carries it (IBA Annex A17.4): written
 * by the daemon's captures (ctl/capture_roce.c) and, as an HCA writes it
 * ahead of a UD receive's payload, by the provider (verbs/post.c).
 */
#ifndef IBEMU_ABI_ROCE_WIRE_H
#define IBEMU_ABI_ROCE_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define ROCE_IP4_BYTES		20
#define ROCE_IPPROTO_UDP	17

/* An IPv4-mapped GID (::ffff:a.b.c.d): its packets travel as IPv4. */
static inline bool roce_gid_is_ip4(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, pfx, sizeof(pfx));
}

/* The IPv4 header (RFC 791) of a RoCE v2 packet between IPv4-mapped
 * GIDs @sgid and @dgid: TOS the traffic class, TTL the hop limit, UDP,
 * don't fragment, @udp_len bytes after it, its checksum. */
static inline void roce_ip4_header(uint8_t h[ROCE_IP4_BYTES], uint8_t tclass, uint8_t hop_limit,
				   unsigned udp_len, const uint8_t sgid[16], const uint8_t dgid[16])
{
	unsigned total = ROCE_IP4_BYTES + udp_len, i;
	uint32_t sum = 0;

	memset(h, 0, ROCE_IP4_BYTES);
	h[0] = 0x45;
	h[1] = tclass;
	h[2] = (uint8_t)(total >> 8);
	h[3] = (uint8_t)total;
	h[6] = 0x40;
	h[8] = hop_limit;
	h[9] = ROCE_IPPROTO_UDP;
	memcpy(h + 12, sgid + 12, 4);
	memcpy(h + 16, dgid + 12, 4);
	for (i = 0; i < ROCE_IP4_BYTES; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	h[10] = (uint8_t)(~sum >> 8);
	h[11] = (uint8_t)~sum;
}

#endif
