/* SPDX-License-Identifier: MIT */
/*
 * RMPP as the kernel's MAD layer does it for a kernel-RMPP agent (IBA
 * 13.6; kernel drivers/infiniband/core/mad_rmpp.c; docs/umad.md "RMPP").
 * A transfer moves through the fabric whole (docs/design-notes.md "RMPP
 * moves whole"); this file writes the RMPP header a sender's transfer
 * carries and cuts a transfer into the segments a user-RMPP agent sees.
 * The header is <infiniband/umad_types.h>'s struct umad_rmpp_hdr, the
 * flags and types <infiniband/mad.h>'s.
 */
#ifndef IBEMU_KERNEL_RMPP_H
#define IBEMU_KERNEL_RMPP_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/umad_types.h>

/* Where the RMPP header ends: the common header and it (the kernel's
 * IB_MGMT_RMPP_HDR, 36), the least a write to an RMPP class carries. */
#define RMPP_HDR_END	(sizeof(struct umad_hdr) + sizeof(struct umad_rmpp_hdr))

/* The class data offset of the kernel's length checks (hdr_len, kernel
 * mad.c ib_get_mad_data_offset): 56 SA, 64 DevMgt/DevAdm/BIS, 40 vendor
 * range 2, else 24. */
size_t rmpp_class_hdr_len(uint8_t mgmt_class);

/* Is the RMPP header's Active flag set? */
bool rmpp_is_active(const uint8_t *mad);
/* Clear the RMPP header (a non-RMPP send of an RMPP class goes so). */
void rmpp_clear_hdr(uint8_t *mad);

/* A transfer of @data_len bytes as the sender's kernel sends it, with the
 * header of segment 1: DATA, Active|First(|Last), SegmentNumber 1,
 * PayloadLength of the whole (mad_rmpp.c send_next_seg). */
GBytes *rmpp_message(const uint8_t *mad, size_t data_len, size_t hdr_len);

/* How many segments transfer @msg takes; segment @i (1-based) of it into
 * @seg (MAD_SIZE bytes) with the header the kernel's sender gave it. */
size_t rmpp_segments(GBytes *msg);
void rmpp_segment(GBytes *msg, size_t i, uint8_t *seg);

#endif
