/* SPDX-License-Identifier: MIT */
/*
 * Packet capture for Wireshark: every packet as it crosses a cable,
 * written to a pcap file (LINKTYPE_INFINIBAND, 247) as the wire carries
 * it: LRH, GRH when there is one, BTH, then DETH (MADs, UD) or the RC
 * extension headers, the payload, ICRC and VCRC (IBA 7.7, 7.8, 9.2, 9.3).
 * An RMPP transfer, which moves whole inside the fabric
 * (docs/design-notes.md), is written as the DATA segments the sender's
 * kernel would put on the link. Timestamps are the emulator's clock.
 *
 * The whole fabric: each packet once, on its first cable. One port: every
 * packet that crosses that port's cable, both ways.
 */
#ifndef IBEMU_CTL_CAPTURE_H
#define IBEMU_CTL_CAPTURE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define CAPTURE_DEFAULT_MAX_MB	1024	/* a file stops growing here */

struct pkt_capture;

/* What to capture: @port's cable, or else every cable of @node, or else
 * the whole fabric; at most @max_bytes of file (0: the default). */
struct capture_opts {
	const struct port *port;
	const struct node *node;
	uint64_t max_bytes;
};

/* Start writing to @path (created, or a regular file there replaced);
 * NULL with @err when it cannot be (not a regular file, the header cannot
 * be written). The fabric has one tap: one capture at a time. The file
 * holds whole records only: a write that fails (a full disk) is cut back
 * to the last whole one, and no more is written. */
struct pkt_capture *pkt_capture_start(struct fabric *f, const char *path,
				      const struct capture_opts *o, GError **err);
/* Write what waits (then the counts are the file's). */
void pkt_capture_flush(struct pkt_capture *c);
/* Flush, close, and take the tap off the fabric. NULL is fine. */
void pkt_capture_stop(struct pkt_capture *c);

/* For `ibemu ctl capture`: the file, what is in it (or waits to be
 * written), why it stopped growing ("its size cap", a write's error) or
 * NULL, and the size of the file it replaced (-1: none). */
const char *pkt_capture_path(const struct pkt_capture *c);
uint64_t pkt_capture_packets(const struct pkt_capture *c);
uint64_t pkt_capture_bytes(const struct pkt_capture *c);
const char *pkt_capture_stopped(const struct pkt_capture *c);
int64_t pkt_capture_replaced(const struct pkt_capture *c);

/* The CRCs of a packet of @len bytes from its LRH to the end of its
 * payload (ICRC, IBA 7.8.1: the LRH and the variant GRH and BTH fields as
 * 1s) and of @len bytes from the LRH through the ICRC (VCRC, 7.8.2). */
uint32_t ib_icrc(const uint8_t *pkt, size_t len);
uint16_t ib_vcrc(const uint8_t *pkt, size_t len);
/* IEEE 802.3's CRC-32 of @len bytes (an FCS; the ICRC's too). */
uint32_t eth_crc32(const uint8_t *b, size_t len);

#endif
