/* SPDX-License-Identifier: MIT */
/*
 * Directed-route SMI rules. The comments name the IBA compliance statement
 * each branch implements; the kernel's drivers/infiniband/core/smi.c uses
 * the same names. Unlike the kernel (which runs only on the end nodes),
 * these rules also play the switch firmware's part: forwarding, and starting
 * or ending the DR part of a combined (LID-routed + DR) route. Fields go
 * through <infiniband/umad_sm.h>'s struct umad_smp (IBA 14.2.1.2).
 */
#include "config.h"

#include "fabric/packet.h"
#include "fabric/smi.h"

static bool valid_port(unsigned p, unsigned nports)
{
	return p >= 1 && p <= nports;
}

/* C14-13:3 -- the returning SMP reaches the start of the DR part. */
static enum smi_action dr_part_start(uint8_t *mad, bool is_switch, unsigned *out)
{
	struct umad_smp *smp = (struct umad_smp *)mad;

	smp->hop_ptr = 0;
	if (be16toh(smp->dr_slid) == LID_PERMISSIVE)
		return SMI_LOCAL;	/* the requester itself */
	if (!is_switch)
		return SMI_DISCARD;
	*out = be16toh(smp->dr_slid);
	return SMI_LID_ROUTE;	/* combined route: LID-route to DrSLID */
}

enum smi_action smi_recv(uint8_t *mad, bool is_switch, unsigned in_port,
			 unsigned nports, unsigned *out)
{
	struct umad_smp *smp = (struct umad_smp *)mad;
	uint8_t hop_ptr = smp->hop_ptr, hop_cnt = smp->hop_cnt;
	uint8_t *ipath = smp->initial_path, *rpath = smp->return_path;

	if (hop_cnt >= UMAD_SMP_MAX_HOPS)
		return SMI_DISCARD;

	if (!dr_d_bit(mad)) {
		/*
		 * C14-9:1 at a switch reached LID-routed: the DR part of a
		 * combined route starts here (DrSLID is the requester's LID).
		 */
		if (hop_cnt && hop_ptr == 0) {
			if (!is_switch || be16toh(smp->dr_slid) == LID_PERMISSIVE ||
			    !valid_port(ipath[1], nports))
				return SMI_DISCARD;
			smp->hop_ptr = 1;
			*out = ipath[1];
			return SMI_FORWARD;
		}
		/* C14-9:2 -- intermediate hop */
		if (hop_ptr && hop_ptr < hop_cnt) {
			if (!is_switch)
				return SMI_DISCARD;
			rpath[hop_ptr] = (uint8_t)in_port;
			if (!valid_port(ipath[hop_ptr + 1], nports))
				return SMI_DISCARD;
			smp->hop_ptr = ++hop_ptr;
			*out = ipath[hop_ptr];
			return SMI_FORWARD;
		}
		/* C14-9:3 -- end of the DR part of the path */
		if (hop_ptr == hop_cnt) {
			if (hop_cnt)
				rpath[hop_ptr] = (uint8_t)in_port;
			smp->hop_ptr = hop_ptr + 1;
			if (be16toh(smp->dr_dlid) == LID_PERMISSIVE)
				return SMI_LOCAL;
			if (!is_switch)
				return SMI_DISCARD;
			*out = be16toh(smp->dr_dlid);
			return SMI_LID_ROUTE;
		}
		/* C14-9:4 -- hop_ptr == hop_cnt + 1: arrived by DrDLID */
		if (hop_ptr == hop_cnt + 1)
			return SMI_LOCAL;
		/* C14-9:5 -- unreasonable hop pointer */
		return SMI_DISCARD;
	}

	/* C14-13:1 -- a responder LID-routed back to the end of the DR part */
	if (hop_cnt && hop_ptr == hop_cnt + 1) {
		if (!is_switch || !valid_port(rpath[hop_cnt], nports))
			return SMI_DISCARD;
		smp->hop_ptr = hop_cnt;
		*out = rpath[hop_cnt];
		return SMI_FORWARD;
	}
	/* C14-13:2 -- intermediate hop */
	if (hop_ptr >= 2 && hop_ptr <= hop_cnt) {
		if (!is_switch || !valid_port(rpath[hop_ptr - 1], nports))
			return SMI_DISCARD;
		smp->hop_ptr = --hop_ptr;
		*out = rpath[hop_ptr];
		return SMI_FORWARD;
	}
	/* C14-13:3 -- end of the DR part on the way back */
	if (hop_ptr == 1)
		return dr_part_start(mad, is_switch, out);
	/* C14-13:4 -- hop_ptr == 0: arrived by DrSLID, give to the SM */
	if (hop_ptr == 0)
		return SMI_LOCAL;
	/* C14-13:5 */
	return SMI_DISCARD;
}

enum smi_action smi_send_request(uint8_t *mad, bool is_switch, unsigned port,
				 unsigned nports, unsigned *out)
{
	struct umad_smp *smp = (struct umad_smp *)mad;
	uint8_t hop_ptr = smp->hop_ptr, hop_cnt = smp->hop_cnt;
	uint8_t *ipath = smp->initial_path;

	if (dr_d_bit(mad) || hop_cnt >= UMAD_SMP_MAX_HOPS)
		return SMI_DISCARD;
	/* C14-9:4 -- already at hop_cnt + 1: for the local SMA or SM. */
	if (hop_ptr == hop_cnt + 1)
		return SMI_LOCAL;
	if (hop_ptr != 0)
		return SMI_DISCARD;
	smp->hop_ptr = 1;
	/* C14-9:1 -- the first hop must leave by the sending port */
	if (hop_cnt) {
		if (is_switch ? !valid_port(ipath[1], nports) : ipath[1] != port)
			return SMI_DISCARD;
		*out = ipath[1];
		return SMI_FORWARD;
	}
	/* C14-9:3 with hop_cnt 0 -- for the local SMA */
	if (is_switch || be16toh(smp->dr_dlid) == LID_PERMISSIVE)
		return SMI_LOCAL;
	return SMI_DISCARD;
}

enum smi_action smi_send_returning(uint8_t *mad, bool is_switch, unsigned port,
				   unsigned nports, unsigned *out)
{
	struct umad_smp *smp = (struct umad_smp *)mad;
	uint8_t hop_ptr = smp->hop_ptr, hop_cnt = smp->hop_cnt;
	uint8_t *rpath = smp->return_path;

	if (!dr_d_bit(mad) || hop_cnt >= UMAD_SMP_MAX_HOPS)
		return SMI_DISCARD;
	/* C14-13:1 and C14-13:2 -- leave by the return path; a CA only by
	 * the port it sends from */
	if ((hop_cnt && hop_ptr == hop_cnt + 1) || (hop_ptr >= 2 && hop_ptr <= hop_cnt)) {
		if (hop_ptr <= hop_cnt && !is_switch)
			return SMI_DISCARD;
		smp->hop_ptr = --hop_ptr;
		if (!valid_port(rpath[hop_ptr], nports) || (!is_switch && rpath[hop_ptr] != port))
			return SMI_DISCARD;
		*out = rpath[hop_ptr];
		return SMI_FORWARD;
	}
	/* C14-13:3 -- the DR part ends here */
	if (hop_ptr == 1)
		return dr_part_start(mad, is_switch, out);
	/* C14-13:4 -- already home; C14-13:5 -- unreasonable hop pointer */
	return hop_ptr == 0 ? SMI_LOCAL : SMI_DISCARD;
}

enum smi_action smi_send_response(uint8_t *mad, bool is_switch, unsigned port,
				  unsigned nports, bool arrived_by_lid,
				  unsigned *out)
{
	struct umad_smp *smp = (struct umad_smp *)mad;

	smp->status |= htobe16(DR_STATUS_D);
	smp->hop_ptr = smp->hop_cnt + 1;
	if (arrived_by_lid && be16toh(smp->dr_dlid) != LID_PERMISSIVE)
		return SMI_REPLY_LID;
	return smi_send_returning(mad, is_switch, port, nports, out);
}
