/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <infiniband/mad.h>

#include "fabric/trap.h"

#define TRAP_LINK_STATE_CHANGED	128
#define NOTICE_TYPE_URGENT	1
#define PRODUCER_SWITCH		2

void trap_link_state_changed(struct port *p)
{
	struct node *n = p->node;
	struct port *p0;
	struct mad_pkt pkt = { 0 };
	uint8_t *data = smp_data(pkt.mad);
	static uint32_t tid;

	if (!node_is_switch(n) || p->num == 0)
		return;
	n->sw->port_state_change = 1;
	p0 = &n->ports[0];
	/* Only a switch that an SM has configured knows where to send. */
	if (!p0->lid || !p0->sm_lid || p0->state < PORT_ARMED)
		return;
	pkt.mad[0] = 1;
	pkt.mad[1] = UMAD_CLASS_SUBN_LID_ROUTED;
	pkt.mad[2] = 1;
	pkt.mad[3] = UMAD_METHOD_TRAP;
	mad_set_tid(pkt.mad, (uint64_t)++tid);
	pkt.mad[17] = UMAD_ATTR_NOTICE;
	mad_set_field(data, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(data, 0, IB_NOTICE_TYPE_F, NOTICE_TYPE_URGENT);
	mad_set_field(data, 0, IB_NOTICE_PRODUCER_F, PRODUCER_SWITCH);
	mad_set_field(data, 0, IB_NOTICE_TRAP_NUMBER_F, TRAP_LINK_STATE_CHANGED);
	mad_set_field(data, 0, IB_NOTICE_ISSUER_LID_F, p0->lid);
	mad_set_field(data, 0, IB_NOTICE_DATA_LID_F, p0->lid);
	pkt.slid = p0->lid;
	pkt.dlid = p0->sm_lid;
	pkt.pkey = 0xffff;
	g_debug("trap 128 from %s (LID %u) to SM LID %u: port %u is %s", n->id,
		p0->lid, p0->sm_lid, p->num, p->state == PORT_DOWN ? "down" : "up");
	fabric_send(n->fabric, p0, &pkt);
}
