/* SPDX-License-Identifier: MIT */
/*
 * Traps the SMA sends its SM (IBA 14.2.5.1 Notice, 14.3.8 Traps): 128
 * (a switch's port changed state) and 256 (a bad M_Key). Each is sent
 * once; nothing retransmits it, so TrapRepress has nothing to stop.
 */
#include "config.h"

#include <stddef.h>
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

	if (!ip->lid || !ip->sm_lid || ip->state < PORT_ARMED)
		return false;
	struct umad_hdr *h = (struct umad_hdr *)pkt->mad;

	h->base_version = 1;
	h->mgmt_class = UMAD_CLASS_SUBN_LID_ROUTED;
	h->class_version = 1;
	h->method = UMAD_METHOD_TRAP;
	mad_set_tid(pkt->mad, (uint64_t)++ip->node->trap_tid);
	mad_set_attr_id(pkt->mad, UMAD_ATTR_NOTICE);
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
 * Notice; libibmad has no fields for it. LIDADDR is the requester, known
 * only for a DR SMP (its DrSLID); the M_Key is the one given; for a DR SMP
 * the DRNotice bit, the hop count and the return path cut to 30 hops.
 */
struct trap256_details {
	__be16 reserved;
	__be16 lidaddr;
	__be16 dr_slid;
	uint8_t method;
	uint8_t reserved2;
	__be16 attr_id;
	__be32 attr_mod;
	__be64 mkey;
	uint8_t dr_notice_hop_cnt;	/* DRNotice (bit 7), DRPathTruncated, HopCount */
	uint8_t dr_return_path[30];
} __attribute__((packed));
#define TRAP256_DETAILS_OFF	10	/* in the Notice's data */
_Static_assert(offsetof(struct trap256_details, dr_return_path) == 33 - TRAP256_DETAILS_OFF,
	       "Table 134 puts the return path at Notice byte 33");
#define DR_NOTICE 0x80

void trap_bad_mkey(struct port *ip, struct port *in, const uint8_t *req)
{
	const struct umad_smp *smp = (const struct umad_smp *)req;
	struct trap256_details d = { 0 };
	struct mad_pkt pkt = { 0 };
	bool dr = mad_class(req) == UMAD_CLASS_SUBN_DIRECTED_ROUTE;
	unsigned hops = MIN(dr_hop_cnt(req), (unsigned)sizeof(d.dr_return_path));

	if (!notice_start(&pkt, ip, NOTICE_TYPE_SECURITY, TRAP_BAD_MKEY))
		return;
	if (dr)
		d.lidaddr = d.dr_slid = smp->dr_slid;
	d.method = smp->method;
	d.attr_id = smp->attr_id;
	d.attr_mod = smp->attr_mod;
	d.mkey = smp->mkey;
	if (dr) {
		d.dr_notice_hop_cnt = (uint8_t)(DR_NOTICE | hops);
		/* return_path[0] is unused: hop i's port is at index i */
		memcpy(d.dr_return_path, smp->return_path + 1, hops);
	}
	memcpy(smp_data(pkt.mad) + TRAP256_DETAILS_OFF, &d, sizeof(d));
	g_message("trap 256 (bad M_Key) from %s port %u (LID %u) to SM LID %u", in->node->id,
		  in->num, ip->lid, ip->sm_lid);
	fabric_send(ip->node->fabric, ip, &pkt);
}
