/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <string.h>

#include <infiniband/mad.h>

#include "fabric/trap.h"

#define TRAP_LINK_STATE_CHANGED	128
#define TRAP_BAD_MKEY		256
#define NOTICE_TYPE_URGENT	1
#define NOTICE_TYPE_SECURITY	2
#define PRODUCER_CA		1
#define PRODUCER_SWITCH		2

/*
 * A generic Notice from @ip (the port holding LID and SM LID: port 0 of a
 * switch), or false when the port has nowhere to send it: only a port an
 * SM has configured knows its SM.
 */
static bool notice_start(struct mad_pkt *pkt, struct port *ip, unsigned type,
			 unsigned trap)
{
	uint8_t *data = smp_data(pkt->mad);
	static uint32_t tid;

	if (!ip->lid || !ip->sm_lid || ip->state < PORT_ARMED)
		return false;
	pkt->mad[0] = 1;
	pkt->mad[1] = UMAD_CLASS_SUBN_LID_ROUTED;
	pkt->mad[2] = 1;
	pkt->mad[3] = UMAD_METHOD_TRAP;
	mad_set_tid(pkt->mad, (uint64_t)++tid);
	pkt->mad[17] = UMAD_ATTR_NOTICE;
	mad_set_field(data, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(data, 0, IB_NOTICE_TYPE_F, type);
	mad_set_field(data, 0, IB_NOTICE_PRODUCER_F,
		      node_is_switch(ip->node) ? PRODUCER_SWITCH : PRODUCER_CA);
	mad_set_field(data, 0, IB_NOTICE_TRAP_NUMBER_F, trap);
	mad_set_field(data, 0, IB_NOTICE_ISSUER_LID_F, ip->lid);
	pkt->slid = ip->lid;
	pkt->dlid = ip->sm_lid;
	pkt->pkey = 0xffff;
	return true;
}

void trap_link_state_changed(struct port *p)
{
	struct node *n = p->node;
	struct mad_pkt pkt = { 0 };

	if (!node_is_switch(n) || p->num == 0)
		return;
	n->sw->port_state_change = 1;
	if (!notice_start(&pkt, &n->ports[0], NOTICE_TYPE_URGENT, TRAP_LINK_STATE_CHANGED))
		return;
	mad_set_field(smp_data(pkt.mad), 0, IB_NOTICE_DATA_LID_F, n->ports[0].lid);
	g_debug("trap 128 from %s (LID %u) to SM LID %u: port %u is %s", n->id,
		n->ports[0].lid, n->ports[0].sm_lid, p->num, p->state == PORT_DOWN ? "down" : "up");
	fabric_send(n->fabric, &n->ports[0], &pkt);
}

/*
 * DataDetails of Trap 256 (IBA 14.2.5.1, Table 134), from byte 10 of the
 * Notice: reserved 16 bits, LIDADDR (the requester; known only for a DR
 * SMP, as its DrSLID), DRSLID, Method, reserved, AttributeID,
 * AttributeModifier, M_Key (the one given), then for a DR SMP the hop
 * count (DRNotice bit set) and the return path, cut to 30 hops.
 */
void trap_bad_mkey(struct port *ip, struct port *in, const uint8_t *req)
{
	struct mad_pkt pkt = { 0 };
	uint8_t *d;
	bool dr = req[1] == UMAD_CLASS_SUBN_DIRECTED_ROUTE;
	unsigned hops = dr_hop_cnt(req);

	if (!notice_start(&pkt, ip, NOTICE_TYPE_SECURITY, TRAP_BAD_MKEY))
		return;
	d = smp_data(pkt.mad) + 10;
	if (dr) {
		d[2] = d[4] = req[32];
		d[3] = d[5] = req[33];
	}
	d[6] = req[3];
	d[8] = req[16];
	d[9] = req[17];
	memcpy(d + 10, req + 20, 4);
	memcpy(d + 14, req + 24, 8);
	if (dr) {
		d[22] = (uint8_t)(0x80 | MIN(hops, 30u));
		memcpy(d + 23, req + 192 + 1, MIN(hops, 30u));
	}
	g_message("trap 256 (bad M_Key) from %s port %u (LID %u) to SM LID %u", in->node->id,
		  in->num, ip->lid, ip->sm_lid);
	fabric_send(ip->node->fabric, ip, &pkt);
}
