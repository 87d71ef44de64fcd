/* SPDX-License-Identifier: MIT */
/* RMPP headers and segments; see rmpp.h. */
#include "config.h"

#include <endian.h>
#include <string.h>

#include <infiniband/mad.h>

#include "fabric/packet.h"
#include "kernel/agent.h"
#include "kernel/rmpp.h"

/* Bytes of data a segment carries after the RMPP header (IBA 13.6.2.3:
 * PayloadLength counts from the end of the RMPP header). */
#define RMPP_SEG_PAYLOAD	(MAD_SIZE - RMPP_HDR_END)	/* 220 */

/* The RMPP header follows the common MAD header; copied in and out, as a
 * client's buffer need not be aligned. */
#define RMPP_HDR_OFF	sizeof(struct umad_hdr)

size_t rmpp_class_hdr_len(uint8_t mgmt_class)
{
	if (mgmt_class == UMAD_CLASS_SUBN_ADM)
		return 56;	/* IB_MGMT_SA_HDR */
	if (mgmt_class_is_vendor2(mgmt_class))
		return 40;	/* IB_MGMT_VENDOR_HDR */
	if (mgmt_class_is_rmpp(mgmt_class))
		return 64;	/* IB_MGMT_DEVICE_HDR: DevMgt, DevAdm, BIS */
	return 24;		/* IB_MGMT_MAD_HDR */
}

bool rmpp_is_active(const uint8_t *mad)
{
	struct umad_rmpp_hdr h;

	memcpy(&h, mad + RMPP_HDR_OFF, sizeof(h));
	return h.rmpp_rtime_flags & IB_RMPP_FLAG_ACTIVE;
}

void rmpp_clear_hdr(uint8_t *mad)
{
	memset(mad + RMPP_HDR_OFF, 0, sizeof(struct umad_rmpp_hdr));
}

/* Segments of @d data bytes cut at @seg_data, and the padding of the last. */
static size_t nsegs(size_t d, size_t seg_data, size_t *pad)
{
	size_t segs = d ? (d + seg_data - 1) / seg_data : 1;

	*pad = segs * seg_data - d;
	return segs;
}

GBytes *rmpp_message(const uint8_t *mad, size_t data_len, size_t hdr_len)
{
	size_t pad, segs = nsegs(data_len - hdr_len, MAD_SIZE - hdr_len, &pad);
	uint8_t *m = g_memdup2(mad, data_len);
	struct umad_rmpp_hdr h = {
		.rmpp_version = UMAD_RMPP_VERSION,
		.rmpp_type = IB_RMPP_TYPE_DATA,
		.rmpp_rtime_flags = IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST |
				    (segs == 1 ? IB_RMPP_FLAG_LAST : 0),
		.rmpp_status = 0,
		.seg_num = htobe32(1),
		.paylen_newwin = htobe32((uint32_t)(segs * RMPP_SEG_PAYLOAD - pad)),
	};

	memcpy(m + RMPP_HDR_OFF, &h, sizeof(h));
	return g_bytes_new_take(m, data_len);
}

size_t rmpp_segments(GBytes *msg)
{
	gsize total;
	const uint8_t *m = g_bytes_get_data(msg, &total);
	size_t hdr_len = rmpp_class_hdr_len(mad_class(m)), pad;

	return nsegs(total - hdr_len, MAD_SIZE - hdr_len, &pad);
}

void rmpp_segment(GBytes *msg, size_t i, uint8_t *seg)
{
	gsize total;
	const uint8_t *m = g_bytes_get_data(msg, &total);
	size_t hdr_len = rmpp_class_hdr_len(mad_class(m)), seg_data = MAD_SIZE - hdr_len;
	size_t d = total - hdr_len, pad, segs = nsegs(d, seg_data, &pad);
	size_t off = (i - 1) * seg_data, n = MIN(seg_data, d - off);
	struct umad_rmpp_hdr h;

	memset(seg, 0, MAD_SIZE);
	memcpy(seg, m, hdr_len);
	memcpy(seg + hdr_len, m + hdr_len + off, n);
	memcpy(&h, seg + RMPP_HDR_OFF, sizeof(h));
	h.rmpp_rtime_flags = (uint8_t)((h.rmpp_rtime_flags &
					~(IB_RMPP_FLAG_FIRST | IB_RMPP_FLAG_LAST)) |
				       (i == 1 ? IB_RMPP_FLAG_FIRST : 0) |
				       (i == segs ? IB_RMPP_FLAG_LAST : 0));
	h.seg_num = htobe32((uint32_t)i);
	/* PayloadLength: the whole transfer's in the first segment, the
	 * last one's own in the last, 0 between (IBA 13.6.2.3). */
	if (i != 1)
		h.paylen_newwin = i == segs ? htobe32((uint32_t)(RMPP_SEG_PAYLOAD - pad)) : 0;
	memcpy(seg + RMPP_HDR_OFF, &h, sizeof(h));
}
