/* SPDX-License-Identifier: MIT */
/*
 * Subnet Management Agent: one const table of attributes (id, name, which
 * nodes have it, get and set hooks returning a MAD status), docs/umad.md §5.5.
 * Field layouts come from libibmad's field table (mad_set_field & co).
 *
 * MAD statuses (IBA 13.4.7): 0x0004 bad class version, 0x000C unsupported
 * method/attribute combination, 0x001C invalid attribute or modifier.
 * SMInfo is never answered here: it belongs to an SM agent (docs/umad.md §4.6 step 3).
 */
#include "config.h"

#include <infiniband/mad.h>

#include "fabric/port.h"
#include "fabric/sma.h"
#include "fabric/trap.h"
#include "lib/log.h"

#define ST_OK		0
#define ST_BAD_VERSION	UMAD_STATUS_BAD_VERSION
#define ST_UNSUPPORTED	UMAD_STATUS_ATTR_NOT_SUPPORTED
#define ST_INVALID	UMAD_STATUS_INVALID_ATTR_VALUE

struct smp_ctx {
	struct node *n;
	struct port *in;	/* arrival port (0 on a switch's own host) */
	uint32_t mod;
	const uint8_t *req;	/* request attribute data, 64 bytes */
	uint8_t *data;		/* response attribute data, 64 bytes */
	bool hide_mkey;		/* M_KeyProtectBits 1 without the key */
};

typedef uint16_t (*sma_fn)(struct smp_ctx *c);

struct sma_attr {
	uint16_t id;
	const char *name;
	bool switch_only;
	sma_fn get, set;
};

#define RD(f)	mad_get_field((void *)c->req, 0, (f))
#define RD64(f)	mad_get_field64((void *)c->req, 0, (f))
#define WR(f, v)	mad_set_field(c->data, 0, (f), (uint32_t)(v))
#define WR64(f, v)	mad_set_field64(c->data, 0, (f), (v))

/* PortInfo and friends name a port by modifier; 0 on a CA is "this one". */
static struct port *ctx_port(struct smp_ctx *c, unsigned num)
{
	if (!node_is_switch(c->n) && num == 0)
		return c->in;
	if (num > c->n->nports || (!node_is_switch(c->n) && num == 0))
		return NULL;
	return &c->n->ports[num];
}

static uint16_t node_desc_get(struct smp_ctx *c)
{
	memcpy(c->data, c->n->desc, strnlen(c->n->desc, 64));
	return ST_OK;
}

static uint16_t node_info_get(struct smp_ctx *c)
{
	struct node *n = c->n;

	WR(IB_NODE_BASE_VERS_F, 1);
	WR(IB_NODE_CLASS_VERS_F, 1);
	WR(IB_NODE_TYPE_F, n->type);
	WR(IB_NODE_NPORTS_F, n->nports);
	WR64(IB_NODE_SYSTEM_GUID_F, n->sys_guid);
	WR64(IB_NODE_GUID_F, n->guid);
	WR64(IB_NODE_PORT_GUID_F, c->in->guid);
	WR(IB_NODE_PARTITION_CAP_F, n->partition_cap);
	WR(IB_NODE_DEVID_F, n->device_id);
	WR(IB_NODE_REVISION_F, n->revision);
	WR(IB_NODE_LOCAL_PORT_F, c->in->num);
	WR(IB_NODE_VENDORID_F, n->vendor_id);
	return ST_OK;
}

static uint16_t switch_info_get(struct smp_ctx *c)
{
	struct switch_state *sw = c->n->sw;

	WR(IB_SW_LINEAR_FDB_CAP_F, sw->lft_cap);
	WR(IB_SW_RANDOM_FDB_CAP_F, 0);
	WR(IB_SW_MCAST_FDB_CAP_F, sw->mft_cap);
	WR(IB_SW_LINEAR_FDB_TOP_F, sw->lft_top);
	WR(IB_SW_DEF_PORT_F, sw->def_port);
	WR(IB_SW_DEF_MCAST_PRIM_F, sw->def_mcast_prim);
	WR(IB_SW_DEF_MCAST_NOT_PRIM_F, sw->def_mcast_not_prim);
	WR(IB_SW_LIFE_TIME_F, sw->life_time);
	WR(IB_SW_STATE_CHANGE_F, sw->port_state_change);
	WR(IB_SW_LIDS_PER_PORT_F, sw->lids_per_port);
	WR(IB_SW_PARTITION_ENFORCE_CAP_F, sw->partition_enf_cap);
	WR(IB_SW_ENHANCED_PORT0_F, sw->enhanced_port0);
	WR(IB_SW_MCAST_FDB_TOP_F, sw->mft_top);
	return ST_OK;
}

static uint16_t switch_info_set(struct smp_ctx *c)
{
	struct switch_state *sw = c->n->sw;
	unsigned top = RD(IB_SW_LINEAR_FDB_TOP_F);

	if (top >= sw->lft_cap)
		return ST_INVALID;
	sw->lft_top = (uint16_t)top;
	sw->def_port = (uint8_t)RD(IB_SW_DEF_PORT_F);
	sw->def_mcast_prim = (uint8_t)RD(IB_SW_DEF_MCAST_PRIM_F);
	sw->def_mcast_not_prim = (uint8_t)RD(IB_SW_DEF_MCAST_NOT_PRIM_F);
	sw->life_time = (uint8_t)RD(IB_SW_LIFE_TIME_F);
	/* PortStateChange is cleared by writing 1 (IBA 14.2.5.4). */
	if (RD(IB_SW_STATE_CHANGE_F))
		sw->port_state_change = 0;
	sw->mft_top = (uint16_t)RD(IB_SW_MCAST_FDB_TOP_F);
	return ST_OK;
}

static uint16_t guid_info_get(struct smp_ctx *c)
{
	struct port *p = port_mgmt(c->in);
	unsigned i;

	if (c->mod != 0)	/* GUIDCap is 8: one block */
		return ST_INVALID;
	for (i = 0; i < GUIDS_PER_PORT; i++) {
		uint64_t v = htobe64(port_guid(p, i));

		memcpy(c->data + 8 * i, &v, 8);
	}
	return ST_OK;
}

static uint16_t guid_info_set(struct smp_ctx *c)
{
	struct port *p = port_mgmt(c->in);
	unsigned i;
	bool changed = false;

	if (c->mod != 0)
		return ST_INVALID;
	/* Index 0 is the port GUID and read-only. */
	if (!p->alias_guids)
		p->alias_guids = g_new0(uint64_t, GUIDS_PER_PORT - 1);
	for (i = 1; i < GUIDS_PER_PORT; i++) {
		uint64_t v;

		memcpy(&v, c->req + 8 * i, 8);
		changed |= p->alias_guids[i - 1] != be64toh(v);
		p->alias_guids[i - 1] = be64toh(v);
	}
	/* The host's GID table changed: the driver raises GID_CHANGE. */
	if (changed)
		port_changed(p, PORT_CHANGED_GUID);
	return ST_OK;
}

static void port_info_encode(struct smp_ctx *c, struct port *p)
{
	struct port *ip = port_mgmt(p);
	bool sw_ext = node_is_switch(p->node) && p->num != 0;

	WR64(IB_PORT_MKEY_F, c->hide_mkey ? 0 : ip->mkey);
	WR64(IB_PORT_GID_PREFIX_F, ip->gid_prefix);
	WR(IB_PORT_LID_F, ip->lid);
	WR(IB_PORT_SMLID_F, ip->sm_lid);
	WR(IB_PORT_CAPMASK_F, sw_ext ? p->cap_mask : ip->cap_mask);
	WR(IB_PORT_MKEY_LEASE_F, ip->mkey_lease);
	WR(IB_PORT_LOCAL_PORT_F, c->in->num);
	WR(IB_PORT_LINK_WIDTH_ENABLED_F, p->width_enabled);
	WR(IB_PORT_LINK_WIDTH_SUPPORTED_F, p->width_supported);
	WR(IB_PORT_LINK_WIDTH_ACTIVE_F, p->width_active);
	WR(IB_PORT_LINK_SPEED_SUPPORTED_F, p->speed_supported);
	WR(IB_PORT_STATE_F, p->state);
	WR(IB_PORT_PHYS_STATE_F, p->phys_state);
	WR(IB_PORT_LINK_DOWN_DEF_F, p->link_down_default);
	WR(IB_PORT_MKEY_PROT_BITS_F, ip->mkey_protect);
	WR(IB_PORT_LMC_F, ip->lmc);
	WR(IB_PORT_LINK_SPEED_ACTIVE_F, p->speed_active);
	WR(IB_PORT_LINK_SPEED_ENABLED_F, p->speed_enabled);
	WR(IB_PORT_NEIGHBOR_MTU_F, p->neighbor_mtu);
	WR(IB_PORT_SMSL_F, ip->sm_sl);
	WR(IB_PORT_VL_CAP_F, p->vl_cap);
	WR(IB_PORT_VL_HIGH_LIMIT_F, p->vl_high_limit);
	WR(IB_PORT_VL_ARBITRATION_HIGH_CAP_F, p->vl_arb_high_cap);
	WR(IB_PORT_VL_ARBITRATION_LOW_CAP_F, p->vl_arb_low_cap);
	WR(IB_PORT_MTU_CAP_F, p->mtu_cap);
	WR(IB_PORT_VL_STALL_COUNT_F, p->vl_stall);
	WR(IB_PORT_HOQ_LIFE_F, p->hoq_life);
	WR(IB_PORT_OPER_VLS_F, p->oper_vls);
	WR(IB_PORT_PART_EN_INB_F, p->part_enf_in);
	WR(IB_PORT_PART_EN_OUTB_F, p->part_enf_out);
	WR(IB_PORT_FILTER_RAW_INB_F, p->filter_raw_in);
	WR(IB_PORT_FILTER_RAW_OUTB_F, p->filter_raw_out);
	WR(IB_PORT_MKEY_VIOL_F, ip->mkey_violations);
	WR(IB_PORT_PKEY_VIOL_F, p->pkey_violations);
	WR(IB_PORT_QKEY_VIOL_F, p->qkey_violations);
	WR(IB_PORT_GUID_CAP_F, GUIDS_PER_PORT);
	WR(IB_PORT_CLIENT_REREG_F, ip->client_rereg);
	WR(IB_PORT_SUBN_TIMEOUT_F, ip->subnet_timeout);
	WR(IB_PORT_RESP_TIME_VAL_F, p->resp_time);
	WR(IB_PORT_LOCAL_PHYS_ERR_F, p->local_phys_err);
	WR(IB_PORT_OVERRUN_ERR_F, p->overrun_err);
	if ((sw_ext ? ip : p)->cap_mask & CAP_EXT_SPEEDS) {
		WR(IB_PORT_LINK_SPEED_EXT_ACTIVE_F, p->espeed_active);
		WR(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, p->espeed_supported);
		WR(IB_PORT_LINK_SPEED_EXT_ENABLED_F, p->espeed_enabled);
	}
}

/*
 * PortInfo's attribute modifier (IBA 14.2.5.6): the port number in bits
 * 0-7; bit 31, SMSupportsExtendedSpeeds, tells a port with
 * IsExtendedSpeedsSupported that the SM knows the LinkSpeedExt fields (a
 * Set applies LinkSpeedExtEnabled only then). Bits 8-30 are reserved and
 * ignored on receipt. opensm and ibportstate set bit 31 on every FDR and
 * faster port; a Get answers the same with or without it, as smpquery
 * never sets it and reads LinkSpeedExtActive all the same.
 */
#define PI_MOD_PORT(mod)	((mod) & 0xffu)
#define PI_MOD_SM_EXT_SPEEDS	0x80000000u

/* LinkSpeedExtEnabled's special values (IBA 14.2.5.6): 0 no change. */
#define ESPEED_EN_DISABLE	30
#define ESPEED_EN_SUPPORTED	31

static uint16_t port_info_get(struct smp_ctx *c)
{
	struct port *p = ctx_port(c, PI_MOD_PORT(c->mod));

	if (!p)
		return ST_INVALID;
	port_info_encode(c, p);
	return ST_OK;
}

/*
 * SubnSet(PortInfo): every field is checked before any is applied, so an
 * invalid request changes nothing (IBA 14.2.5.6).
 */
static uint16_t port_info_set(struct smp_ctx *c)
{
	struct port *p = ctx_port(c, PI_MOD_PORT(c->mod));
	struct port *ip;
	unsigned changed = 0;	/* enum port_change */
	bool sw_ext;
	unsigned state, phys, width, speed, espeed, lid, lmc;

	if (!p)
		return ST_INVALID;
	ip = port_mgmt(p);
	sw_ext = node_is_switch(p->node) && p->num != 0;
	state = RD(IB_PORT_STATE_F);
	phys = RD(IB_PORT_PHYS_STATE_F);
	width = RD(IB_PORT_LINK_WIDTH_ENABLED_F);
	speed = RD(IB_PORT_LINK_SPEED_ENABLED_F);
	espeed = c->mod & PI_MOD_SM_EXT_SPEEDS ? RD(IB_PORT_LINK_SPEED_EXT_ENABLED_F) : 0;
	lid = RD(IB_PORT_LID_F);
	lmc = RD(IB_PORT_LMC_F);

	if (!port_state_change_valid(p, state) || !port_phys_change_valid(p, phys))
		return ST_INVALID;
	if (width && width != 0xff && (width & ~p->width_supported))
		return ST_INVALID;
	if (speed && speed != 0xf && (speed & ~p->speed_supported))
		return ST_INVALID;
	if (espeed && espeed < ESPEED_EN_DISABLE && (espeed & ~p->espeed_supported))
		return ST_INVALID;
	if (!sw_ext && (lid >= 0xc000 || lmc > 7))
		return ST_INVALID;

	if (!sw_ext) {
		if (ip->lid != lid || ip->lmc != lmc)
			changed |= PORT_CHANGED_LID;
		if (ip->sm_lid != RD(IB_PORT_SMLID_F) || ip->sm_sl != RD(IB_PORT_SMSL_F))
			changed |= PORT_CHANGED_SM;
		if (ip->gid_prefix != RD64(IB_PORT_GID_PREFIX_F))
			changed |= PORT_CHANGED_GUID;
		if (RD(IB_PORT_CLIENT_REREG_F))
			changed |= PORT_CHANGED_REREG;
		ip->mkey = RD64(IB_PORT_MKEY_F);
		ip->gid_prefix = RD64(IB_PORT_GID_PREFIX_F);
		ip->lid = (uint16_t)lid;
		ip->sm_lid = (uint16_t)RD(IB_PORT_SMLID_F);
		ip->mkey_lease = (uint16_t)RD(IB_PORT_MKEY_LEASE_F);
		ip->mkey_protect = (uint8_t)RD(IB_PORT_MKEY_PROT_BITS_F);
		ip->lmc = (uint8_t)lmc;
		ip->sm_sl = (uint8_t)RD(IB_PORT_SMSL_F);
		ip->subnet_timeout = (uint8_t)RD(IB_PORT_SUBN_TIMEOUT_F);
		ip->client_rereg = 0;	/* a one-shot request to the host */
		ip->mkey_violations = (uint16_t)RD(IB_PORT_MKEY_VIOL_F);
	}
	if (width)
		p->width_enabled = (uint8_t)(width == 0xff ? p->width_supported : width);
	if (speed)
		p->speed_enabled = (uint8_t)(speed == 0xf ? p->speed_supported : speed);
	if (espeed)
		p->espeed_enabled = espeed == ESPEED_EN_SUPPORTED ? p->espeed_supported :
				    espeed == ESPEED_EN_DISABLE ? 0 : (uint8_t)espeed;
	if (RD(IB_PORT_LINK_DOWN_DEF_F))
		p->link_down_default = (uint8_t)RD(IB_PORT_LINK_DOWN_DEF_F);
	if (RD(IB_PORT_NEIGHBOR_MTU_F))
		p->neighbor_mtu = (uint8_t)RD(IB_PORT_NEIGHBOR_MTU_F);
	if (RD(IB_PORT_OPER_VLS_F))
		p->oper_vls = (uint8_t)RD(IB_PORT_OPER_VLS_F);
	p->vl_high_limit = (uint8_t)RD(IB_PORT_VL_HIGH_LIMIT_F);
	p->vl_stall = (uint8_t)RD(IB_PORT_VL_STALL_COUNT_F);
	p->hoq_life = (uint8_t)RD(IB_PORT_HOQ_LIFE_F);
	p->part_enf_in = (uint8_t)RD(IB_PORT_PART_EN_INB_F);
	p->part_enf_out = (uint8_t)RD(IB_PORT_PART_EN_OUTB_F);
	p->filter_raw_in = (uint8_t)RD(IB_PORT_FILTER_RAW_INB_F);
	p->filter_raw_out = (uint8_t)RD(IB_PORT_FILTER_RAW_OUTB_F);
	p->pkey_violations = (uint16_t)RD(IB_PORT_PKEY_VIOL_F);
	p->qkey_violations = (uint16_t)RD(IB_PORT_QKEY_VIOL_F);
	p->local_phys_err = (uint8_t)RD(IB_PORT_LOCAL_PHYS_ERR_F);
	p->overrun_err = (uint8_t)RD(IB_PORT_OVERRUN_ERR_F);

	port_set_phys(p, phys);
	port_set_state(p, state);
	if (changed)
		port_changed(ip, changed);
	return ST_OK;
}

/* P_KeyTable: 32 entries a block; switches name the port in bits 16-23. */
static struct port *pkey_port(struct smp_ctx *c, unsigned *block)
{
	struct port *p = node_is_switch(c->n) ? ctx_port(c, (c->mod >> 16) & 0xff) : c->in;

	*block = c->mod & 0xffff;
	if (!p || *block * 32 >= p->npkeys)
		return NULL;
	return p;
}

static uint16_t pkey_get(struct smp_ctx *c)
{
	unsigned block, i;
	struct port *p = pkey_port(c, &block);

	if (!p)
		return ST_INVALID;
	for (i = 0; i < 32 && block * 32 + i < p->npkeys; i++) {
		c->data[2 * i] = p->pkeys[block * 32 + i] >> 8;
		c->data[2 * i + 1] = p->pkeys[block * 32 + i] & 0xff;
	}
	return ST_OK;
}

static uint16_t pkey_set(struct smp_ctx *c)
{
	unsigned block, i, changed = 0;
	struct port *p = pkey_port(c, &block);

	if (!p)
		return ST_INVALID;
	for (i = 0; i < 32 && block * 32 + i < p->npkeys; i++) {
		uint16_t k = (uint16_t)(c->req[2 * i] << 8 | c->req[2 * i + 1]);

		changed |= p->pkeys[block * 32 + i] != k;
		p->pkeys[block * 32 + i] = k;
	}
	if (changed)
		port_changed(p, PORT_CHANGED_PKEY);
	return ST_OK;
}

/*
 * SLtoVLMappingTable. Switches address (input << 8 | output); one table per
 * output port is kept -- per input port tables are not emulated.
 */
static struct port *sl2vl_port(struct smp_ctx *c)
{
	if (!node_is_switch(c->n))
		return c->mod ? NULL : c->in;
	return ctx_port(c, c->mod & 0xff);
}

static uint16_t sl2vl_get(struct smp_ctx *c)
{
	struct port *p = sl2vl_port(c);

	if (!p)
		return ST_INVALID;
	memcpy(c->data, p->sl2vl, sizeof(p->sl2vl));
	return ST_OK;
}

static uint16_t sl2vl_set(struct smp_ctx *c)
{
	struct port *p = sl2vl_port(c);

	if (!p)
		return ST_INVALID;
	memcpy(p->sl2vl, c->req, sizeof(p->sl2vl));
	return ST_OK;
}

/* VLArbitrationTable: modifier (block << 16) | port, blocks 1..4. */
static struct port *vlarb_port(struct smp_ctx *c, unsigned *block)
{
	struct port *p = node_is_switch(c->n) ? ctx_port(c, c->mod & 0xff) : c->in;

	*block = (c->mod >> 16) & 0xff;
	if (!p || *block < 1 || *block > 4)
		return NULL;
	return p;
}

static uint16_t vlarb_get(struct smp_ctx *c)
{
	unsigned block;
	struct port *p = vlarb_port(c, &block);

	if (!p)
		return ST_INVALID;
	if (p->vlarb)
		memcpy(c->data, p->vlarb + 64 * (block - 1), 64);
	return ST_OK;
}

static uint16_t vlarb_set(struct smp_ctx *c)
{
	unsigned block;
	struct port *p = vlarb_port(c, &block);

	if (!p)
		return ST_INVALID;
	if (!p->vlarb)
		p->vlarb = g_malloc0(4 * 64);
	memcpy(p->vlarb + 64 * (block - 1), c->req, 64);
	return ST_OK;
}

/* LinearForwardingTable: 64 one-byte entries a block, grown on Set. */
static uint16_t lft_get(struct smp_ctx *c)
{
	struct switch_state *sw = c->n->sw;
	unsigned base = c->mod * 64, i;

	if (c->mod >= sw->lft_cap / 64u)
		return ST_INVALID;
	for (i = 0; i < 64; i++)
		c->data[i] = base + i < sw->lft_len ? sw->lft[base + i] : 0xff;
	return ST_OK;
}

static uint16_t lft_set(struct smp_ctx *c)
{
	struct switch_state *sw = c->n->sw;
	unsigned base = c->mod * 64;

	if (c->mod >= sw->lft_cap / 64u)
		return ST_INVALID;
	if (base + 64 > sw->lft_len) {
		sw->lft = g_realloc(sw->lft, base + 64);
		memset(sw->lft + sw->lft_len, 0xff, base + 64 - sw->lft_len);
		sw->lft_len = base + 64;
	}
	memcpy(sw->lft + base, c->req, 64);
	return ST_OK;
}

/*
 * MulticastForwardingTable: modifier (position << 28) | block; a block is
 * 32 MLIDs, a position 16 ports of each MLID's port mask.
 */
static uint16_t *mft_entry(struct smp_ctx *c, bool create, unsigned i)
{
	struct switch_state *sw = c->n->sw;
	unsigned positions = c->n->nports / 16 + 1;
	unsigned pos = c->mod >> 28, mlid = (c->mod & 0x1ff) * 32 + i;

	if (!sw->mft) {
		if (!create)
			return NULL;
		sw->mft = g_new0(uint16_t, (size_t)sw->mft_cap * positions);
	}
	return &sw->mft[(size_t)mlid * positions + pos];
}

static bool mft_mod_valid(struct smp_ctx *c)
{
	return (c->mod >> 28) * 16 <= c->n->nports &&
	       (c->mod & 0x1ff) * 32 < c->n->sw->mft_cap &&
	       !(c->mod & 0x0ffffe00);
}

static uint16_t mft_get(struct smp_ctx *c)
{
	unsigned i;

	if (!mft_mod_valid(c))
		return ST_INVALID;
	for (i = 0; i < 32; i++) {
		uint16_t *e = mft_entry(c, false, i);
		uint16_t v = e ? *e : 0;

		c->data[2 * i] = v >> 8;
		c->data[2 * i + 1] = v & 0xff;
	}
	return ST_OK;
}

static uint16_t mft_set(struct smp_ctx *c)
{
	unsigned i;

	if (!mft_mod_valid(c))
		return ST_INVALID;
	for (i = 0; i < 32; i++)
		*mft_entry(c, true, i) = (uint16_t)(c->req[2 * i] << 8 | c->req[2 * i + 1]);
	return ST_OK;
}

static uint16_t led_get(struct smp_ctx *c)
{
	c->data[0] = c->n->led ? 0x80 : 0;	/* LedMask, bit 31 */
	return ST_OK;
}

static uint16_t led_set(struct smp_ctx *c)
{
	c->n->led = c->req[0] & 0x80;
	return led_get(c);
}

/* Mellanox firmware: Mellanox's own devices and Bull's built on them
 * (libibnetdisc asks both for ExtendedPortInfo). */
static bool mlnx_firmware(const struct node *n)
{
	return n->vendor_id == 0x02c9 || n->vendor_id == 0x119f;
}

/*
 * Mellanox ExtendedPortInfo (0xFF90): only Mellanox firmware knows it. Its
 * link speeds are the port's FDR10 state (read-only but LinkSpeedEnabled);
 * the rest is kept as the SM set it.
 */
static uint16_t mlnx_epi_get(struct smp_ctx *c)
{
	struct port *p = ctx_port(c, c->mod);

	if (!mlnx_firmware(c->n))
		return ST_UNSUPPORTED;
	if (!p)
		return ST_INVALID;
	if (p->mlnx_epi)
		memcpy(c->data, p->mlnx_epi, 64);
	WR(IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F, p->mspeed_supported);
	WR(IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F, p->mspeed_enabled);
	WR(IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, p->mspeed_active);
	return ST_OK;
}

static uint16_t mlnx_epi_set(struct smp_ctx *c)
{
	struct port *p = ctx_port(c, c->mod);
	unsigned en = RD(IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F);

	if (!mlnx_firmware(c->n))
		return ST_UNSUPPORTED;
	if (!p || (en & ~p->mspeed_supported))
		return ST_INVALID;
	if (!p->mlnx_epi)
		p->mlnx_epi = g_malloc(64);
	memcpy(p->mlnx_epi, c->req, 64);
	p->mspeed_enabled = (uint8_t)en;
	return ST_OK;
}

static const struct sma_attr sma_attrs[] = {
	{ UMAD_SM_ATTR_NODE_DESC, "NodeDescription", false, node_desc_get, NULL },
	{ UMAD_SM_ATTR_NODE_INFO, "NodeInfo", false, node_info_get, NULL },
	{ UMAD_SM_ATTR_SWITCH_INFO, "SwitchInfo", true, switch_info_get, switch_info_set },
	{ UMAD_SM_ATTR_GUID_INFO, "GUIDInfo", false, guid_info_get, guid_info_set },
	{ UMAD_SM_ATTR_PORT_INFO, "PortInfo", false, port_info_get, port_info_set },
	{ UMAD_SM_ATTR_PKEY_TABLE, "P_KeyTable", false, pkey_get, pkey_set },
	{ UMAD_SM_ATTR_SLVL_TABLE, "SLtoVLMappingTable", false, sl2vl_get, sl2vl_set },
	{ UMAD_SM_ATTR_VL_ARB_TABLE, "VLArbitrationTable", false, vlarb_get, vlarb_set },
	{ UMAD_SM_ATTR_LINEAR_FT, "LinearForwardingTable", true, lft_get, lft_set },
	{ UMAD_SM_ATTR_MCAST_FT, "MulticastForwardingTable", true, mft_get, mft_set },
	{ UMAD_SM_ATTR_LED_INFO, "LedInfo", false, led_get, led_set },
	{ UMAD_SM_ATTR_MLNX_EXT_PORT_INFO, "MlnxExtPortInfo", false, mlnx_epi_get, mlnx_epi_set },
};

static const struct sma_attr *find_attr(uint16_t id)
{
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(sma_attrs); i++)
		if (sma_attrs[i].id == id)
			return &sma_attrs[i];
	return NULL;
}

const char *sma_attr_name(uint16_t id)
{
	const struct sma_attr *a = find_attr(id);

	if (a)
		return a->name;
	if (id == UMAD_SM_ATTR_SM_INFO)
		return "SMInfo";
	if (id == UMAD_ATTR_NOTICE)
		return "Notice";
	return NULL;
}

/* IBA 14.2.4.2: the lease ran out with no SMP bearing the key: the
 * protection goes (M_KeyProtectBits 0), the key stays. */
static void mkey_lease_expired(struct timer *t, void *ctx)
{
	struct port *ip = ctx;

	(void)t;
	ip->mkey_protect = 0;
	g_message("%s port %u: M_Key lease of %u s expired, protection off", ip->node->id,
		  ip->num, ip->mkey_lease);
}

static void mkey_lease_start(struct port *ip)
{
	struct timerq *tq = ip->node->fabric->tq;

	if (!ip->mkey_lease || !tq)
		return;	/* lease 0: protection never expires */
	if (!ip->mkey_lease_timer) {
		ip->mkey_lease_timer = g_new0(struct timer, 1);
		timer_init(ip->mkey_lease_timer, mkey_lease_expired, ip);
	}
	if (!timer_armed(ip->mkey_lease_timer))
		timerq_arm(tq, ip->mkey_lease_timer, (uint64_t)ip->mkey_lease * 1000000);
}

/*
 * M_Key check (IBA 14.2.4, docs/umad.md §5.4). Returns false when the SMP is to
 * be dropped silently; sets hide_mkey for protect level 1 Gets. A failed
 * check counts in M_KeyViolations, starts the lease and raises Trap 256;
 * the right key stops the lease.
 */
static bool mkey_allows(struct smp_ctx *c, const uint8_t *req, uint8_t method)
{
	struct port *ip = port_mgmt(c->in);

	if (!ip->mkey)
		return true;
	if (smp_mkey(req) == ip->mkey) {
		if (ip->mkey_lease_timer && timer_armed(ip->mkey_lease_timer))
			timerq_cancel(ip->node->fabric->tq, ip->mkey_lease_timer);
		return true;
	}
	if (method == UMAD_METHOD_GET && ip->mkey_protect <= 1) {
		c->hide_mkey = ip->mkey_protect == 1;
		return true;
	}
	if (ip->mkey_violations < 0xffff)
		ip->mkey_violations++;
	mkey_lease_start(ip);
	trap_bad_mkey(ip, c->in, req);
	return false;
}

enum sma_result sma_process(struct node *n, struct port *in,
			    const uint8_t *req, uint8_t *resp)
{
	struct smp_ctx c = { .n = n, .in = in, .mod = mad_attr_mod(req),
			     .req = req + 64, .data = resp + 64 };
	uint8_t method = mad_method(req);
	const struct sma_attr *a;
	uint16_t status;

	if (method == UMAD_METHOD_TRAP_REPRESS)
		return SMA_CONSUMED;	/* trap.c sends each trap once: nothing to stop */
	if (method != UMAD_METHOD_GET && method != UMAD_METHOD_SET)
		return SMA_PASS;	/* Trap, Send...: for an SM agent */
	if (mad_attr_id(req) == UMAD_SM_ATTR_SM_INFO)
		return SMA_PASS;
	if (!mkey_allows(&c, req, method))
		return SMA_CONSUMED;

	mad_getresp(resp, req, 0);
	memset(smp_data(resp), 0, 64);
	a = find_attr(mad_attr_id(req));
	if (mad_class_version(req) != 1)
		status = ST_BAD_VERSION;
	else if (!a || (a->switch_only && !node_is_switch(n)))
		status = ST_UNSUPPORTED;
	else if (method == UMAD_METHOD_SET && !a->set)
		status = ST_UNSUPPORTED;
	else if (method == UMAD_METHOD_SET) {
		if (n->fabric->tq)
			n->fabric->last_smp_set_us = timerq_now(n->fabric->tq);
		fabric_changed(n->fabric);	/* routes, states, P_Keys */
		status = a->set(&c);
		if (status == ST_OK)
			status = a->get(&c);
		else
			memcpy(resp + 64, req + 64, 64);
	} else
		status = a->get(&c);
	/* The D bit of a DR response is set by smi_send_response(). */
	mad_set_status(resp, status);
	if (log_tracing())
		g_debug("SMA %s: %s %s(0x%04x) mod 0x%x -> status 0x%04x", n->id,
			method == UMAD_METHOD_GET ? "Get" : "Set",
			a ? a->name : "?", mad_attr_id(req), c.mod, status);
	return SMA_REPLY;
}
