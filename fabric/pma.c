/* SPDX-License-Identifier: MIT */
/*
 * PMA. One const table of attributes as the SMA has (sma.c); counter
 * widths and CounterSelect bits are those of IBA Table 247 (PortCounters)
 * and Table 253 (PortCountersExtended); narrow counters saturate at their
 * maximum, as the spec requires (IBA 16.1.3.5).
 */
#include "config.h"

#include "fabric/pma.h"
#include "lib/log.h"

#define PMA_DATA 64	/* PerfMgt data follows 40 reserved bytes */

/* ClassPortInfo:CapabilityMask bits (IBA Table 266 / perfquery) */
#define PMA_CAP_ALL_PORT_SELECT		0x0100
#define PMA_CAP_EXT_WIDTH		0x0200
#define PMA_CAP_XMIT_WAIT		0x1000

/* A narrow counter holds what its PortCounters field can (IBA 16.1.3.5:
 * it stops at all ones), so `ctl counters set` names that range. */
#define NARROW(n, f, b, mf) { n, G_STRUCT_OFFSET(struct port_counters, f), false, -1, b, mf, \
			      (b) >= 32 ? G_MAXUINT32 : (1u << (b)) - 1 }
#define WIDE(n, f, b, mf) { n, G_STRUCT_OFFSET(struct port_counters, f), true, \
			    G_STRUCT_OFFSET(struct port_counters, base_##f), b, mf, G_MAXUINT64 }
/* Index i is CounterSelect bit i; PortXmitWait is CounterSelect2 bit 0. */
const struct counter_field counter_fields[] = {
	NARROW("SymbolErrorCounter", symbol_err, 16, IB_PC_ERR_SYM_F),
	NARROW("LinkErrorRecoveryCounter", link_err_recovery, 8, IB_PC_LINK_RECOVERS_F),
	NARROW("LinkDownedCounter", link_downed, 8, IB_PC_LINK_DOWNED_F),
	NARROW("PortRcvErrors", rcv_err, 16, IB_PC_ERR_RCV_F),
	NARROW("PortRcvRemotePhysicalErrors", rcv_remote_phys_err, 16, IB_PC_ERR_PHYSRCV_F),
	NARROW("PortRcvSwitchRelayErrors", rcv_switch_relay_err, 16, IB_PC_ERR_SWITCH_REL_F),
	NARROW("PortXmitDiscards", xmit_discards, 16, IB_PC_XMT_DISCARDS_F),
	NARROW("PortXmitConstraintErrors", xmit_constraint_err, 8, IB_PC_ERR_XMTCONSTR_F),
	NARROW("PortRcvConstraintErrors", rcv_constraint_err, 8, IB_PC_ERR_RCVCONSTR_F),
	NARROW("LocalLinkIntegrityErrors", local_link_integrity_err, 4, IB_PC_ERR_LOCALINTEG_F),
	NARROW("ExcessiveBufferOverrunErrors", excessive_buf_overrun_err, 4, IB_PC_ERR_EXCESS_OVR_F),
	NARROW("VL15Dropped", vl15_dropped, 16, IB_PC_VL15_DROPPED_F),
	WIDE("PortXmitData", xmit_data, 32, IB_PC_XMT_BYTES_F),
	WIDE("PortRcvData", rcv_data, 32, IB_PC_RCV_BYTES_F),
	WIDE("PortXmitPkts", xmit_pkts, 32, IB_PC_XMT_PKTS_F),
	WIDE("PortRcvPkts", rcv_pkts, 32, IB_PC_RCV_PKTS_F),
	NARROW("PortXmitWait", xmit_wait, 32, IB_PC_XMT_WAIT_F),
};
const unsigned counter_fields_n = G_N_ELEMENTS(counter_fields);
#define XMIT_WAIT (G_N_ELEMENTS(counter_fields) - 1)

/* The 64-bit counters of PortCountersExtended, CounterSelect bit order. */
static const struct {
	glong offset;
	enum MAD_FIELDS field;
} ext_fields[] = {
#define EXT(f, mf) { G_STRUCT_OFFSET(struct port_counters, f), mf }
	EXT(xmit_data, IB_PC_EXT_XMT_BYTES_F), EXT(rcv_data, IB_PC_EXT_RCV_BYTES_F),
	EXT(xmit_pkts, IB_PC_EXT_XMT_PKTS_F), EXT(rcv_pkts, IB_PC_EXT_RCV_PKTS_F),
	EXT(ucast_xmit, IB_PC_EXT_XMT_UPKTS_F), EXT(ucast_rcv, IB_PC_EXT_RCV_UPKTS_F),
	EXT(mcast_xmit, IB_PC_EXT_XMT_MPKTS_F), EXT(mcast_rcv, IB_PC_EXT_RCV_MPKTS_F),
#undef EXT
};
/* The first four are PortCounters' wide counters too (counter_fields),
 * summed with them; the unicast/multicast ones after are this table's own. */
#define EXT_OWN_FIRST	4

static uint64_t sat(uint64_t v, unsigned bits)
{
	uint64_t max = bits >= 64 ? G_MAXUINT64 : (1ull << bits) - 1;

	return v > max ? max : v;
}

#define U32(c, off) G_STRUCT_MEMBER(uint32_t, c, off)
#define U64(c, off) G_STRUCT_MEMBER(uint64_t, c, off)

uint64_t counter_get(const struct port_counters *c, const struct counter_field *f)
{
	return f->wide ? U64(c, f->offset) : U32(c, f->offset);
}

void counter_change(struct port_counters *c, const struct counter_field *f, bool set, uint64_t v)
{
	uint64_t old = counter_get(c, f), now = set ? v : old + v;

	if (!set && now < old)
		now = f->max;
	now = MIN(now, f->max);
	if (f->wide)
		U64(c, f->offset) = now;
	else
		U32(c, f->offset) = (uint32_t)now;
}

const struct counter_field *counter_field_find(const char *name)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(counter_fields); i++)
		if (!g_ascii_strcasecmp(name, counter_fields[i].name))
			return &counter_fields[i];
	return NULL;
}

void pma_count(struct port *out, struct port *in, unsigned packets,
	       unsigned dwords, unsigned sl, bool multicast)
{
	pma_count_words(out, in, packets, (uint64_t)packets * dwords, sl, multicast);
}

void pma_count_words(struct port *out, struct port *in, uint64_t packets, uint64_t words,
		     unsigned sl, bool multicast)
{
	struct port_counters *o = &out->counters, *i = &in->counters;

	o->xmit_data_sl[sl & 15] = (uint32_t)sat(o->xmit_data_sl[sl & 15] + words, 32);
	i->rcv_data_sl[sl & 15] = (uint32_t)sat(i->rcv_data_sl[sl & 15] + words, 32);
	o->xmit_pkts += packets;
	o->xmit_data += words;
	i->rcv_pkts += packets;
	i->rcv_data += words;
	if (multicast) {
		o->mcast_xmit += packets;
		i->mcast_rcv += packets;
	} else {
		o->ucast_xmit += packets;
		i->ucast_rcv += packets;
	}
}

/* One request being answered. */
struct pma_ctx {
	struct node *n;
	unsigned first, last;	/* the ports PortSelect names */
	const uint8_t *req;	/* PerfMgt data of the request */
	uint8_t *data;		/* and of the answer */
};

/* The counters of the selected ports, summed (saturating per SL). */
static void gather(const struct pma_ctx *x, struct port_counters *c)
{
	unsigned i, k, sl;

	memset(c, 0, sizeof(*c));
	for (i = x->first; i <= x->last; i++) {
		const struct port_counters *p = &x->n->ports[i].counters;

		for (k = 0; k < G_N_ELEMENTS(counter_fields); k++) {
			const struct counter_field *f = &counter_fields[k];

			if (f->wide) {
				U64(c, f->offset) += U64(p, f->offset);
				U64(c, f->base) += U64(p, f->base);
			} else
				U32(c, f->offset) = (uint32_t)sat((uint64_t)U32(c, f->offset) +
								  U32(p, f->offset), 32);
		}
		for (k = EXT_OWN_FIRST; k < G_N_ELEMENTS(ext_fields); k++)
			U64(c, ext_fields[k].offset) += U64(p, ext_fields[k].offset);
		for (sl = 0; sl < 16; sl++) {
			c->xmit_data_sl[sl] = (uint32_t)sat((uint64_t)c->xmit_data_sl[sl] +
							    p->xmit_data_sl[sl], 32);
			c->rcv_data_sl[sl] = (uint32_t)sat((uint64_t)c->rcv_data_sl[sl] +
							   p->rcv_data_sl[sl], 32);
		}
	}
}

static void port_counters_get(const struct pma_ctx *x, const struct port_counters *c)
{
	unsigned k;

	mad_set_field(x->data, 0, IB_PC_COUNTER_SELECT_F,
		      mad_get_field((void *)x->req, 0, IB_PC_COUNTER_SELECT_F));
	for (k = 0; k < G_N_ELEMENTS(counter_fields); k++) {
		const struct counter_field *f = &counter_fields[k];
		uint64_t v = counter_get(c, f) - (f->wide ? U64(c, f->base) : 0);

		mad_set_field(x->data, 0, f->field, (uint32_t)sat(v, f->bits));
	}
}

/* CounterSelect bit i clears counter i (Table 247); the wide ones only
 * move their base, so PortCountersExtended is left as it was. */
static void port_counters_clear(struct port_counters *c, const uint8_t *req)
{
	unsigned sel = mad_get_field((void *)req, 0, IB_PC_COUNTER_SELECT_F);
	unsigned sel2 = mad_get_field((void *)req, 0, IB_PC_COUNTER_SELECT2_F);
	unsigned k;

	for (k = 0; k < G_N_ELEMENTS(counter_fields); k++) {
		const struct counter_field *f = &counter_fields[k];
		bool on = k == XMIT_WAIT ? sel2 & 1 : sel & (1u << k);

		if (!on)
			continue;
		if (f->wide)
			U64(c, f->base) = U64(c, f->offset);
		else
			U32(c, f->offset) = 0;
	}
}

static void ext_counters_get(const struct pma_ctx *x, const struct port_counters *c)
{
	unsigned k;

	mad_set_field(x->data, 0, IB_PC_EXT_COUNTER_SELECT_F,
		      mad_get_field((void *)x->req, 0, IB_PC_EXT_COUNTER_SELECT_F));
	for (k = 0; k < G_N_ELEMENTS(ext_fields); k++)
		mad_set_field64(x->data, 0, ext_fields[k].field, U64(c, ext_fields[k].offset));
}

/* PortCountersExtended CounterSelect: bits 0..7 (Table 253). */
static void ext_counters_clear(struct port_counters *c, const uint8_t *req)
{
	unsigned sel = mad_get_field((void *)req, 0, IB_PC_EXT_COUNTER_SELECT_F);
	unsigned k;

	for (k = 0; k < G_N_ELEMENTS(ext_fields); k++)
		if (sel & (1u << k))
			U64(c, ext_fields[k].offset) = 0;
	/* Keep PortCounters' view from going negative. */
	c->base_xmit_data = MIN(c->base_xmit_data, c->xmit_data);
	c->base_rcv_data = MIN(c->base_rcv_data, c->rcv_data);
	c->base_xmit_pkts = MIN(c->base_xmit_pkts, c->xmit_pkts);
	c->base_rcv_pkts = MIN(c->base_rcv_pkts, c->rcv_pkts);
}

static uint16_t get_class_port_info(struct pma_ctx *x)
{
	mad_set_field(x->data, 0, IB_CPI_BASEVER_F, 1);
	mad_set_field(x->data, 0, IB_CPI_CLASSVER_F, 1);
	mad_set_field(x->data, 0, IB_CPI_CAPMASK_F, PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT |
		      (node_is_switch(x->n) ? PMA_CAP_ALL_PORT_SELECT : 0));
	mad_set_field(x->data, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
	return 0;
}

static void xmit_data_sl_get(const struct pma_ctx *x, const struct port_counters *c)
{
	for (unsigned sl = 0; sl < 16; sl++)
		mad_set_field(x->data, 0, IB_PC_XMT_DATA_SL0_F + sl, c->xmit_data_sl[sl]);
}

static void rcv_data_sl_get(const struct pma_ctx *x, const struct port_counters *c)
{
	for (unsigned sl = 0; sl < 16; sl++)
		mad_set_field(x->data, 0, IB_PC_RCV_DATA_SL0_F + sl, c->rcv_data_sl[sl]);
}

/* Nothing in the simulation makes these errors yet: all 0. */
static void zeros_get(const struct pma_ctx *x, const struct port_counters *c)
{
}

/*
 * The attributes. Counter attributes take PortSelect: their Get encodes
 * the selected ports' counters summed, their Set clears what
 * CounterSelect names on each, then answers as Get.
 */
static const struct pma_attr {
	uint16_t id;
	const char *name;
	uint16_t (*get)(struct pma_ctx *x);	/* not a counter attribute */
	void (*encode)(const struct pma_ctx *x, const struct port_counters *c);
	void (*clear)(struct port_counters *c, const uint8_t *req);	/* NULL: no Set */
} pma_attrs[] = {
	{ UMAD_ATTR_CLASS_PORT_INFO, "ClassPortInfo", get_class_port_info, NULL, NULL },
	{ IB_GSI_PORT_COUNTERS, "PortCounters", NULL, port_counters_get, port_counters_clear },
	{ IB_GSI_PORT_COUNTERS_EXT, "PortCountersExtended", NULL, ext_counters_get,
	  ext_counters_clear },
	{ IB_GSI_PORT_XMIT_DATA_SL, "PortXmitDataSL", NULL, xmit_data_sl_get, NULL },
	{ IB_GSI_PORT_RCV_DATA_SL, "PortRcvDataSL", NULL, rcv_data_sl_get, NULL },
	{ IB_GSI_PORT_RCV_ERROR_DETAILS, "PortRcvErrorDetails", NULL, zeros_get, NULL },
	{ IB_GSI_PORT_XMIT_DISCARD_DETAILS, "PortXmitDiscardDetails", NULL, zeros_get, NULL },
};

static const struct pma_attr *find_attr(uint16_t id)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(pma_attrs); i++)
		if (pma_attrs[i].id == id)
			return &pma_attrs[i];
	return NULL;
}

/* PortSelect: 0 on a CA means its own port, 0xFF every port of a switch
 * (AllPortSelect); false if it names no port here. */
static bool select_ports(struct pma_ctx *x, struct port *in, unsigned *sel)
{
	struct node *n = x->n;

	if (*sel == 0 && !node_is_switch(n))
		*sel = in->num;	/* a CA's own port */
	if (*sel == 0xff && !node_is_switch(n))
		return false;
	if (*sel != 0xff && (*sel > n->nports || (!*sel && !node_is_switch(n))))
		return false;
	x->first = *sel == 0xff ? 1 : *sel;
	x->last = *sel == 0xff ? n->nports : *sel;
	return true;
}

void pma_process(struct node *n, struct port *in, const uint8_t *req,
		 uint8_t *resp)
{
	struct pma_ctx x = { .n = n, .req = req + PMA_DATA, .data = resp + PMA_DATA };
	bool set = mad_method(req) == UMAD_METHOD_SET;
	const struct pma_attr *a = find_attr(mad_attr_id(req));
	unsigned sel = mad_get_field((void *)x.req, 0, IB_PC_PORT_SELECT_F);
	uint16_t status = 0;

	mad_getresp(resp, req, 0);
	memset(x.data, 0, MAD_SIZE - PMA_DATA);
	if (mad_class_version(req) != 1)
		status = UMAD_STATUS_BAD_VERSION;
	else if (!a || (set && !a->clear))
		status = UMAD_STATUS_ATTR_NOT_SUPPORTED;
	else if (a->get)
		status = a->get(&x);
	else if (!select_ports(&x, in, &sel))
		status = UMAD_STATUS_INVALID_ATTR_VALUE;
	else {
		struct port_counters c;

		for (unsigned i = x.first; set && i <= x.last; i++)
			a->clear(&n->ports[i].counters, x.req);
		gather(&x, &c);
		mad_set_field(x.data, 0, IB_PC_PORT_SELECT_F, sel);
		a->encode(&x, &c);
	}
	mad_set_status(resp, status);
	if (log_tracing())
		g_debug("PMA %s: %s %s(0x%04x) port %u -> status 0x%04x", n->id,
			set ? "Set" : "Get", a ? a->name : "?", mad_attr_id(req), sel, status);
}

/* The kernel's sysfs way in (pma.h): a Get as process_mad() carries it. */
bool pma_query(struct port *p, uint16_t attr, enum MAD_FIELDS field, uint64_t *val)
{
	MAD_BUF(req) = { 0 };
	MAD_BUF(resp);

	req[MAD_OFF(base_version)] = 1;
	req[MAD_OFF(mgmt_class)] = UMAD_CLASS_PERF_MGMT;
	req[MAD_OFF(class_version)] = 1;
	req[MAD_OFF(method)] = UMAD_METHOD_GET;
	mad_set_attr_id(req, attr);
	mad_set_field(req + PMA_DATA, 0, IB_PC_PORT_SELECT_F, p->num);
	fabric_sync(p->node->fabric);	/* what went past the engine */
	pma_process(p->node, p, req, resp);
	if (mad_status(resp))
		return false;
	/* mad_get_field64 reads 8 bytes: only for the 64-bit counters. */
	*val = attr == IB_GSI_PORT_COUNTERS_EXT ? mad_get_field64(resp + PMA_DATA, 0, field) :
	       mad_get_field(resp + PMA_DATA, 0, field);
	return true;
}
