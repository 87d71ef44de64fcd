/* SPDX-License-Identifier: MIT */
/*
 * PMA. Counter widths and CounterSelect bits are those of IBA Table 247
 * (PortCounters) and Table 253 (PortCountersExtended); narrow counters
 * saturate at their maximum, as the spec requires.
 */
#include "config.h"

#include <infiniband/mad.h>

#include "fabric/pma.h"
#include "lib/log.h"

#define PMA_DATA 64	/* PerfMgt data follows 40 reserved bytes */

/* ClassPortInfo:CapabilityMask bits (IBA Table 266 / perfquery) */
#define PMA_CAP_ALL_PORT_SELECT		0x0100
#define PMA_CAP_EXT_WIDTH		0x0200
#define PMA_CAP_XMIT_WAIT		0x1000

static uint32_t sat(uint64_t v, unsigned bits)
{
	uint64_t max = (bits >= 32) ? 0xffffffffull : (1ull << bits) - 1;

	return (uint32_t)(v > max ? max : v);
}

void pma_count(struct port *out, struct port *in, unsigned packets,
	       unsigned dwords, unsigned sl, bool multicast)
{
	out->counters.xmit_data_sl[sl & 15] = sat(out->counters.xmit_data_sl[sl & 15] +
						  (uint64_t)packets * dwords, 32);
	in->counters.rcv_data_sl[sl & 15] = sat(in->counters.rcv_data_sl[sl & 15] +
						(uint64_t)packets * dwords, 32);
	out->counters.xmit_pkts += packets;
	out->counters.xmit_data += (uint64_t)packets * dwords;
	in->counters.rcv_pkts += packets;
	in->counters.rcv_data += (uint64_t)packets * dwords;
	if (multicast) {
		out->counters.mcast_xmit += packets;
		in->counters.mcast_rcv += packets;
	} else {
		out->counters.ucast_xmit += packets;
		in->counters.ucast_rcv += packets;
	}
}


/* The ports PortSelect names: one, or every port (0xFF, AllPortSelect). */
static void port_range(const struct node *n, unsigned sel, unsigned *first,
		       unsigned *last)
{
	*first = sel == 0xff ? 1 : sel;
	*last = sel == 0xff ? n->nports : sel;
}

/* The counters PortSelect names, summed. */
static void gather(struct node *n, unsigned sel, struct port_counters *c)
{
	unsigned i, first, last;

	port_range(n, sel, &first, &last);
	memset(c, 0, sizeof(*c));
	for (i = first; i <= last; i++) {
		const struct port_counters *p = &n->ports[i].counters;

#define ADD(f) c->f += p->f
		ADD(xmit_data); ADD(rcv_data); ADD(xmit_pkts); ADD(rcv_pkts);
		ADD(ucast_xmit); ADD(ucast_rcv); ADD(mcast_xmit); ADD(mcast_rcv);
		ADD(symbol_err); ADD(link_err_recovery); ADD(link_downed);
		ADD(rcv_err); ADD(rcv_remote_phys_err); ADD(rcv_switch_relay_err);
		ADD(xmit_discards); ADD(xmit_constraint_err); ADD(rcv_constraint_err);
		ADD(local_link_integrity_err); ADD(excessive_buf_overrun_err);
		ADD(vl15_dropped); ADD(xmit_wait);
		ADD(base_xmit_data); ADD(base_rcv_data); ADD(base_xmit_pkts);
		ADD(base_rcv_pkts);
#undef ADD
		for (unsigned sl = 0; sl < 16; sl++) {
			c->xmit_data_sl[sl] = sat((uint64_t)c->xmit_data_sl[sl] + p->xmit_data_sl[sl], 32);
			c->rcv_data_sl[sl] = sat((uint64_t)c->rcv_data_sl[sl] + p->rcv_data_sl[sl], 32);
		}
	}
}

static void port_counters_get(const struct port_counters *c, uint8_t *d)
{
	mad_set_field(d, 0, IB_PC_ERR_SYM_F, sat(c->symbol_err, 16));
	mad_set_field(d, 0, IB_PC_LINK_RECOVERS_F, sat(c->link_err_recovery, 8));
	mad_set_field(d, 0, IB_PC_LINK_DOWNED_F, sat(c->link_downed, 8));
	mad_set_field(d, 0, IB_PC_ERR_RCV_F, sat(c->rcv_err, 16));
	mad_set_field(d, 0, IB_PC_ERR_PHYSRCV_F, sat(c->rcv_remote_phys_err, 16));
	mad_set_field(d, 0, IB_PC_ERR_SWITCH_REL_F, sat(c->rcv_switch_relay_err, 16));
	mad_set_field(d, 0, IB_PC_XMT_DISCARDS_F, sat(c->xmit_discards, 16));
	mad_set_field(d, 0, IB_PC_ERR_XMTCONSTR_F, sat(c->xmit_constraint_err, 8));
	mad_set_field(d, 0, IB_PC_ERR_RCVCONSTR_F, sat(c->rcv_constraint_err, 8));
	mad_set_field(d, 0, IB_PC_ERR_LOCALINTEG_F, sat(c->local_link_integrity_err, 4));
	mad_set_field(d, 0, IB_PC_ERR_EXCESS_OVR_F, sat(c->excessive_buf_overrun_err, 4));
	mad_set_field(d, 0, IB_PC_VL15_DROPPED_F, sat(c->vl15_dropped, 16));
	mad_set_field(d, 0, IB_PC_XMT_BYTES_F, sat(c->xmit_data - c->base_xmit_data, 32));
	mad_set_field(d, 0, IB_PC_RCV_BYTES_F, sat(c->rcv_data - c->base_rcv_data, 32));
	mad_set_field(d, 0, IB_PC_XMT_PKTS_F, sat(c->xmit_pkts - c->base_xmit_pkts, 32));
	mad_set_field(d, 0, IB_PC_RCV_PKTS_F, sat(c->rcv_pkts - c->base_rcv_pkts, 32));
	mad_set_field(d, 0, IB_PC_XMT_WAIT_F, sat(c->xmit_wait, 32));
}

/* CounterSelect bit i clears counter i of PortCounters (Table 247). */
static void port_counters_clear(struct port_counters *c, unsigned sel, unsigned sel2)
{
	uint32_t *narrow[] = { &c->symbol_err, &c->link_err_recovery, &c->link_downed,
			       &c->rcv_err, &c->rcv_remote_phys_err,
			       &c->rcv_switch_relay_err, &c->xmit_discards,
			       &c->xmit_constraint_err, &c->rcv_constraint_err,
			       &c->local_link_integrity_err,
			       &c->excessive_buf_overrun_err, &c->vl15_dropped };
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(narrow); i++)
		if (sel & (1u << i))
			*narrow[i] = 0;
	if (sel & (1u << 12))
		c->base_xmit_data = c->xmit_data;
	if (sel & (1u << 13))
		c->base_rcv_data = c->rcv_data;
	if (sel & (1u << 14))
		c->base_xmit_pkts = c->xmit_pkts;
	if (sel & (1u << 15))
		c->base_rcv_pkts = c->rcv_pkts;
	if (sel2 & 1)
		c->xmit_wait = 0;
}

static void ext_counters_get(const struct port_counters *c, uint8_t *d)
{
	mad_set_field64(d, 0, IB_PC_EXT_XMT_BYTES_F, c->xmit_data);
	mad_set_field64(d, 0, IB_PC_EXT_RCV_BYTES_F, c->rcv_data);
	mad_set_field64(d, 0, IB_PC_EXT_XMT_PKTS_F, c->xmit_pkts);
	mad_set_field64(d, 0, IB_PC_EXT_RCV_PKTS_F, c->rcv_pkts);
	mad_set_field64(d, 0, IB_PC_EXT_XMT_UPKTS_F, c->ucast_xmit);
	mad_set_field64(d, 0, IB_PC_EXT_RCV_UPKTS_F, c->ucast_rcv);
	mad_set_field64(d, 0, IB_PC_EXT_XMT_MPKTS_F, c->mcast_xmit);
	mad_set_field64(d, 0, IB_PC_EXT_RCV_MPKTS_F, c->mcast_rcv);
}

/* PortCountersExtended CounterSelect: bits 0..7 (Table 253). */
static void ext_counters_clear(struct port_counters *c, unsigned sel)
{
	uint64_t *wide[] = { &c->xmit_data, &c->rcv_data, &c->xmit_pkts, &c->rcv_pkts,
			     &c->ucast_xmit, &c->ucast_rcv, &c->mcast_xmit,
			     &c->mcast_rcv };
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(wide); i++)
		if (sel & (1u << i))
			*wide[i] = 0;
	/* Keep PortCounters' view from going negative. */
	c->base_xmit_data = MIN(c->base_xmit_data, c->xmit_data);
	c->base_rcv_data = MIN(c->base_rcv_data, c->rcv_data);
	c->base_xmit_pkts = MIN(c->base_xmit_pkts, c->xmit_pkts);
	c->base_rcv_pkts = MIN(c->base_rcv_pkts, c->rcv_pkts);
}

static uint16_t class_port_info(struct node *n, uint8_t *d)
{
	mad_set_field(d, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(d, 0, IB_CPI_CLASSVER_F, 1);
	mad_set_field(d, 0, IB_CPI_CAPMASK_F, PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT |
		      (node_is_switch(n) ? PMA_CAP_ALL_PORT_SELECT : 0));
	mad_set_field(d, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
	return 0;
}

/* Check PortSelect; 0 on a CA means its own port. False if invalid. */
static bool select_ports(struct node *n, struct port *in, unsigned *sel)
{
	if (*sel == 0 && !node_is_switch(n))
		*sel = in->num;	/* a CA's own port */
	if (*sel == 0xff)
		return node_is_switch(n);
	return *sel <= n->nports && (*sel || node_is_switch(n));
}

void pma_process(struct node *n, struct port *in, const uint8_t *req,
		 uint8_t *resp)
{
	const uint8_t *rd = req + PMA_DATA;
	uint8_t *d = resp + PMA_DATA;
	bool set = mad_method(req) == UMAD_METHOD_SET;
	unsigned sel = mad_get_field((void *)rd, 0, IB_PC_PORT_SELECT_F);
	uint16_t status = 0;
	struct port_counters c;
	unsigned i;

	memcpy(resp, req, MAD_SIZE);
	memset(d, 0, MAD_SIZE - PMA_DATA);
	resp[3] = UMAD_METHOD_GET_RESP;
	if (mad_class_version(req) != 1) {
		status = UMAD_STATUS_BAD_VERSION;
		goto out;
	}
	switch (mad_attr_id(req)) {
	case IB_GSI_PORT_COUNTERS:
	case IB_GSI_PORT_COUNTERS_EXT:
		if (!select_ports(n, in, &sel)) {
			status = UMAD_STATUS_INVALID_ATTR_VALUE;
			goto out;
		}
		if (set) {
			unsigned first, last;

			port_range(n, sel, &first, &last);
			for (i = first; i <= last; i++) {
				if (mad_attr_id(req) == IB_GSI_PORT_COUNTERS)
					port_counters_clear(&n->ports[i].counters,
							    mad_get_field((void *)rd, 0, IB_PC_COUNTER_SELECT_F),
							    mad_get_field((void *)rd, 0, IB_PC_COUNTER_SELECT2_F));
				else
					ext_counters_clear(&n->ports[i].counters,
							   mad_get_field((void *)rd, 0, IB_PC_EXT_COUNTER_SELECT_F));
			}
		}
		gather(n, sel, &c);
		mad_set_field(d, 0, IB_PC_PORT_SELECT_F, sel);
		if (mad_attr_id(req) == IB_GSI_PORT_COUNTERS) {
			mad_set_field(d, 0, IB_PC_COUNTER_SELECT_F,
				      mad_get_field((void *)rd, 0, IB_PC_COUNTER_SELECT_F));
			port_counters_get(&c, d);
		} else {
			mad_set_field(d, 0, IB_PC_EXT_COUNTER_SELECT_F,
				      mad_get_field((void *)rd, 0, IB_PC_EXT_COUNTER_SELECT_F));
			ext_counters_get(&c, d);
		}
		break;
	case IB_GSI_PORT_XMIT_DATA_SL:
	case IB_GSI_PORT_RCV_DATA_SL:
		if (!select_ports(n, in, &sel)) {
			status = UMAD_STATUS_INVALID_ATTR_VALUE;
			goto out;
		}
		gather(n, sel, &c);
		mad_set_field(d, 0, IB_PC_PORT_SELECT_F, sel);
		for (i = 0; i < 16; i++) {
			if (mad_attr_id(req) == IB_GSI_PORT_XMIT_DATA_SL)
				mad_set_field(d, 0, IB_PC_XMT_DATA_SL0_F + i, sat(c.xmit_data_sl[i], 32));
			else
				mad_set_field(d, 0, IB_PC_RCV_DATA_SL0_F + i, sat(c.rcv_data_sl[i], 32));
		}
		break;
	case IB_GSI_PORT_RCV_ERROR_DETAILS:
	case IB_GSI_PORT_XMIT_DISCARD_DETAILS:
		/* Nothing in the simulation makes these errors yet: all 0. */
		if (!select_ports(n, in, &sel))
			status = UMAD_STATUS_INVALID_ATTR_VALUE;
		else
			mad_set_field(d, 0, IB_PC_PORT_SELECT_F, sel);
		break;
	case UMAD_ATTR_CLASS_PORT_INFO:
		status = set ? UMAD_STATUS_ATTR_NOT_SUPPORTED : class_port_info(n, d);
		break;
	default:
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;
	}
out:
	mad_set_status(resp, status);
	if (log_tracing())
		g_debug("PMA %s: %s attr 0x%04x port %u -> status 0x%04x", n->id,
			set ? "Set" : "Get", mad_attr_id(req), sel, status);
}
