/* SPDX-License-Identifier: MIT */
/*
 * A RoCE port's packet as an Ethernet frame, for the capture
 * (capture_roce.c; docs/roce.md "Captures").
 */
#ifndef IBEMU_CTL_CAPTURE_ROCE_H
#define IBEMU_CTL_CAPTURE_ROCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct roce_ends {
	uint8_t src_mac[6], dst_mac[6];
	bool v2;		/* RoCE v2 (UDP), else v1 (EtherType 0x8915) */
	uint32_t sqp;		/* the sending QP: the UDP source port's entropy */
};

/* Frames the InfiniBand packet @ib of @len bytes (LRH, GRH, BTH through
 * the payload, ICRC, VCRC) into @out, which has room for @len + 64:
 * the frame's length, FCS included. */
size_t roce_frame(const struct roce_ends *e, const uint8_t *ib, size_t len, uint8_t *out);

#endif
