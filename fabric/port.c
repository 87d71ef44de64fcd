/* SPDX-License-Identifier: MIT */
/*
 * Port defaults and the link state machine. Values mirror a ConnectX-3 HCA
 * and a SwitchX switch, the devices most ibnetdiscover dumps show.
 */
#include "config.h"

#include <errno.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "fabric/mcast.h"
#include "fabric/port.h"
#include "fabric/trap.h"

void port_init_defaults(struct port *p)
{
	struct node *n = p->node;
	bool sw = node_is_switch(n);
	unsigned i;

	p->width_supported = p->width_enabled = WIDTH_1X | WIDTH_4X;
	p->speed_supported = p->speed_enabled = SPEED_SDR | SPEED_DDR | SPEED_QDR;
	/* A port with no cable reports 1X SDR, as hardware does. */
	p->width_active = WIDTH_1X;
	p->speed_active = SPEED_SDR;
	p->state = PORT_DOWN;
	p->phys_state = PHYS_POLLING;
	p->link_down_default = PHYS_POLLING;
	p->gid_prefix = 0xfe80000000000000ULL;
	p->mtu_cap = 5;		/* 4096 */
	p->neighbor_mtu = 5;
	p->vl_cap = 4;		/* VL0-7 */
	p->oper_vls = 4;
	p->vl_arb_high_cap = 8;
	p->vl_arb_low_cap = 8;
	p->hoq_life = 0x13;
	p->resp_time = 0x10;
	p->subnet_timeout = 0;
	if (!sw)
		p->cap_mask = 0x02510868;	/* mlx4 without IsSM, spec docs/umad.md §1.3.5 */
	else if (p->num == 0)
		p->cap_mask = 0x02510848;
	p->npkeys = sw ? n->sw->partition_enf_cap : n->partition_cap;
	if (sw && p->num == 0)
		p->npkeys = n->partition_cap;
	p->pkeys = g_new0(uint16_t, p->npkeys);
	p->pkeys[0] = PKEY_DEFAULT;
	/* SL i -> VL i for the first VLs, as firmware defaults do. */
	for (i = 0; i < 8; i++)
		p->sl2vl[i] = (uint8_t)(((2 * i) % 8) << 4 | ((2 * i + 1) % 8));
	if (sw && p->num == 0) {
		/* Switch port 0 is not a cable: always physically up. */
		p->state = PORT_INIT;
		p->phys_state = PHYS_LINKUP;
	}
}

void port_changed(struct port *p, unsigned what)
{
	struct port *target = port_mgmt(p);

	fabric_changed(p->node->fabric);
	if (target->upper.changed)
		target->upper.changed(target->upper.ctx, target, what);
}

void port_set_lid(struct port *p, uint16_t lid, uint8_t lmc)
{
	struct port *m = port_mgmt(p);

	if (m->lid == lid && m->lmc == lmc)
		return;
	m->lid = lid;
	m->lmc = lmc;
	port_changed(m, PORT_CHANGED_LID);
}

void port_set_guid(struct port *p, uint64_t guid)
{
	p->guid = guid;
	fabric_roce_gids_changed(p->node->fabric);
	port_changed(p, PORT_CHANGED_GUID);
}

void port_set_cap_bits(struct port *p, uint32_t set, uint32_t clear)
{
	struct port *m = port_mgmt(p);
	uint32_t old = m->cap_mask;

	m->cap_mask = (old | set) & ~clear;
	if (m->cap_mask != old)
		port_changed(m, PORT_CHANGED_CAP);
}

static bool link_trainable(const struct port *p)
{
	return p->remote && !p->cable_cut && !p->node->off && !p->remote->node->off &&
	       p->phys_state != PHYS_DISABLED &&
	       p->remote->phys_state != PHYS_DISABLED;
}

/* Both ends of a cable come up (again) in Init, as after training; on
 * a RoCE network, which has no SM, Active at once, as an Ethernet link
 * is up once it trains (docs/roce.md), and its groups' trees are laid
 * again over what is up now. */
static void link_up(struct port *p)
{
	struct port *r = p->remote;
	unsigned state = p->node->eth_net && r->node->eth_net ? PORT_ACTIVE : PORT_INIT;

	p->phys_state = r->phys_state = PHYS_LINKUP;
	p->state = r->state = (uint8_t)state;
	if (state == PORT_ACTIVE)
		fabric_roce_mcast_reprogram(p->node->fabric);
	port_changed(p, PORT_CHANGED_STATE);
	port_changed(r, PORT_CHANGED_STATE);
	trap_link_state_changed(p);
	trap_link_state_changed(r);
}

static void link_down(struct port *p, unsigned local_phys)
{
	if (p->remote && p->phys_state == PHYS_LINKUP) {
		p->counters.link_downed++;
		p->remote->counters.link_downed++;
	}
	p->phys_state = (uint8_t)local_phys;
	p->state = PORT_DOWN;
	if (p->node->eth_net)
		fabric_roce_mcast_reprogram(p->node->fabric);
	port_changed(p, PORT_CHANGED_STATE);
	trap_link_state_changed(p);
	if (p->remote && p->remote->phys_state != PHYS_DISABLED) {
		p->remote->phys_state = PHYS_POLLING;
		p->remote->state = PORT_DOWN;
		port_changed(p->remote, PORT_CHANGED_STATE);
		trap_link_state_changed(p->remote);
	}
}

bool port_state_change_valid(const struct port *p, unsigned state)
{
	switch (state) {
	case PORT_NOP:
	case PORT_DOWN:
		return true;
	case PORT_ARMED:
		return p->state == PORT_INIT || p->state == PORT_ARMED;
	case PORT_ACTIVE:
		return p->state == PORT_ARMED || p->state == PORT_ACTIVE;
	default:
		return false;	/* Init cannot be set (IBA 14.2.5.6) */
	}
}

void port_set_state(struct port *p, unsigned state)
{
	if (state == PORT_NOP || state == p->state)
		return;
	if (state == PORT_DOWN) {
		if (node_is_switch(p->node) && p->num == 0) {
			/* Port 0 has no cable to retrain: back to Init. */
			p->state = PORT_INIT;
			port_changed(p, PORT_CHANGED_STATE);
			return;
		}
		/* The link drops, then retrains: both ends come back in Init. */
		if (link_trainable(p))
			link_up(p);
		else
			link_down(p, p->phys_state);
		return;
	}
	p->state = (uint8_t)state;
	port_changed(p, PORT_CHANGED_STATE);
}

bool port_phys_change_valid(const struct port *p, unsigned phys)
{
	if (node_is_switch(p->node) && p->num == 0)
		return phys == PHYS_NOP;
	return phys == PHYS_NOP || phys == PHYS_POLLING ||
	       phys == PHYS_DISABLED;
}

void port_set_phys(struct port *p, unsigned phys)
{
	if (phys == PHYS_DISABLED) {
		if (p->phys_state != PHYS_DISABLED)
			link_down(p, PHYS_DISABLED);
	} else if (phys == PHYS_POLLING && p->phys_state == PHYS_DISABLED) {
		p->phys_state = PHYS_POLLING;
		if (link_trainable(p))
			link_up(p);
		else
			port_changed(p, PORT_CHANGED_STATE);
	}
}

void port_cable_set(struct port *p, bool up)
{
	if (!p->remote || p->num == 0)
		return;
	p->cable_cut = p->remote->cable_cut = !up;
	if (!up && p->phys_state == PHYS_LINKUP)
		link_down(p, PHYS_POLLING);
	else if (up && p->phys_state != PHYS_LINKUP && link_trainable(p))
		link_up(p);
}

void node_power(struct node *n, bool on)
{
	unsigned i;

	if (n->off == !on)
		return;
	n->off = !on;
	for (i = 1; i <= n->nports; i++) {
		struct port *p = &n->ports[i];

		if (!on && p->phys_state == PHYS_LINKUP)
			link_down(p, PHYS_POLLING);
		else if (on && link_trainable(p))
			link_up(p);
	}
}

unsigned width_lanes(unsigned width_bit)
{
	switch (width_bit) {
	case WIDTH_1X: return 1;
	case WIDTH_2X: return 2;
	case WIDTH_4X: return 4;
	case WIDTH_8X: return 8;
	case WIDTH_12X: return 12;
	default: return 0;
	}
}

/* The link speeds (PortInfo LinkSpeedActive, LinkSpeedExtActive and
 * Mellanox ExtendedPortInfo LinkSpeedActive; IBA 14.2.5.6), their names
 * and lane rates as kernel sysfs.c:rate_show. */
const struct link_speed link_speeds[] = {
	{ "SDR", "2.5", { SPEED_SDR, 0, 0 }, 25 },
	{ "DDR", NULL, { SPEED_DDR, 0, 0 }, 50 },
	{ "QDR", "10", { SPEED_QDR, 0, 0 }, 100 },
	{ "FDR10", NULL, { SPEED_QDR, 0, MSPEED_FDR10 }, 100 },
	{ "FDR", "14", { SPEED_QDR, ESPEED_FDR, 0 }, 140 },
	{ "EDR", "25", { SPEED_QDR, ESPEED_EDR, 0 }, 250 },
	{ "HDR", "50", { SPEED_QDR, ESPEED_HDR, 0 }, 500 },
	{ "NDR", "100", { SPEED_QDR, ESPEED_NDR, 0 }, 1000 },
	{ NULL, NULL, { 0, 0, 0 }, 0 },
};

/*
 * What @sp runs at: the extended speed if any (@ext: only when the port
 * says it has them), else FDR10 if Mellanox's attribute says so, else the
 * base speed; SDR for anything else.
 */
static const struct link_speed *speed_entry(struct lspeed sp, bool ext)
{
	const struct link_speed *s;
	bool use_ext = ext && sp.espeed;

	for (s = link_speeds; s->name; s++)
		if (use_ext ? s->sp.espeed == sp.espeed :
		    !s->sp.espeed && s->sp.speed == sp.speed &&
		    s->sp.mspeed == (sp.mspeed & MSPEED_FDR10))
			return s;
	return &link_speeds[0];
}

const struct link_speed *link_speed_of(struct lspeed sp)
{
	return speed_entry(sp, true);
}

static struct lspeed port_lspeed(const struct port *p)
{
	return (struct lspeed){ p->speed_active, p->espeed_active, p->mspeed_active };
}

const char *port_speed_name(const struct port *p)
{
	return speed_entry(port_lspeed(p), true)->name;
}

/* The host sees an extended speed only where CapabilityMask says so. */
const struct link_speed *port_host_speed(const struct port *p)
{
	bool ext = p->cap_mask & CAP_EXT_SPEEDS ||
		   port_mgmt((struct port *)p)->cap_mask & CAP_EXT_SPEEDS;

	return speed_entry(port_lspeed(p), ext);
}

void port_set_speed(struct port *p, struct lspeed sp)
{
	p->speed_active = sp.speed;
	p->espeed_active = sp.espeed;
	p->mspeed_active = sp.mspeed;
	if (sp.espeed) {
		/* Every extended speed up to the active one (an NDR port
		 * also runs HDR), and FDR and EDR always, as ibsim's. */
		p->espeed_supported = p->espeed_enabled =
			(uint8_t)(p->espeed_supported | sp.espeed | (sp.espeed - 1) |
				  ESPEED_FDR | ESPEED_EDR);
		p->cap_mask |= CAP_EXT_SPEEDS;
		port_mgmt(p)->cap_mask |= CAP_EXT_SPEEDS;
	}
	if (sp.mspeed)
		p->mspeed_supported = p->mspeed_enabled = p->mspeed_supported | sp.mspeed;
}

static unsigned speed_deci(const struct port *p, const char **name)
{
	const struct link_speed *s = port_host_speed(p);

	*name = s->name;
	return s->deci;
}

unsigned port_rate_deci_gbps(const struct port *p)
{
	const char *name;
	unsigned lanes = width_lanes(p->width_active);

	return speed_deci(p, &name) * (lanes ? lanes : 1);
}

void port_rate_string(const struct port *p, char *buf, size_t len)
{
	const char *name;
	unsigned lanes = width_lanes(p->width_active);
	unsigned rate;

	if (!lanes)
		lanes = 1;
	rate = speed_deci(p, &name) * lanes;
	/* kernel sysfs.c:rate_show prints tenths only when there are some */
	snprintf(buf, len, "%u%s Gb/sec (%uX %s)", rate / 10,
		 rate % 10 ? ".5" : "", lanes, name);
}

const char *port_state_name(unsigned state)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED",
					     "ACTIVE", "ACTIVE_DEFER" };

	return state < G_N_ELEMENTS(names) ? names[state] : "UNKNOWN";
}

const char *phys_state_name(unsigned phys)
{
	static const char *const names[] = {
		"<unknown>", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery",
		"Phy Test" };

	return phys < G_N_ELEMENTS(names) ? names[phys] : "<unknown>";
}

bool port_owns_lid(const struct port *p, uint16_t lid)
{
	const struct port *ip = port_mgmt((struct port *)p);
	uint16_t mask = (uint16_t)~((1u << ip->lmc) - 1);

	return ip->lid && lid && lid < 0xc000 && (lid & mask) == ip->lid;
}

uint64_t port_guid(const struct port *p, unsigned i)
{
	return i == 0 ? p->guid : p->alias_guids ? p->alias_guids[i - 1] : 0;
}

void port_mac(const struct port *p, uint8_t mac[6])
{
	uint64_t g = p->guid;

	mac[0] = (uint8_t)(g >> 56);
	mac[1] = (uint8_t)(g >> 48);
	mac[2] = (uint8_t)(g >> 40);
	mac[3] = (uint8_t)(g >> 16);
	mac[4] = (uint8_t)(g >> 8);
	mac[5] = (uint8_t)g;
}

/* A RoCE port's GID @i (see port.h): the kernel's default GIDs of a
 * netdev with one IPv4 address (roce_gid_mgmt.c), both types each. */
static void roce_gid(const struct port *p, unsigned i, uint8_t gid[16])
{
	uint8_t mac[6];
	uint32_t ip = i >= 2 ? port_roce_ip4(p, i / 2 - 1) : 0;

	memset(gid, 0, 16);
	if (i < 2) {
		port_mac(p, mac);
		gid[0] = 0xfe;
		gid[1] = 0x80;
		gid[8] = mac[0] ^ 0x02;	/* EUI-64: the universal/local bit flipped */
		gid[9] = mac[1];
		gid[10] = mac[2];
		gid[11] = 0xff;
		gid[12] = 0xfe;
		gid[13] = mac[3];
		gid[14] = mac[4];
		gid[15] = mac[5];
	} else if (ip) {
		gid[10] = gid[11] = 0xff;
		gid[12] = (uint8_t)(ip >> 24);
		gid[13] = (uint8_t)(ip >> 16);
		gid[14] = (uint8_t)(ip >> 8);
		gid[15] = (uint8_t)ip;
	}
}

const char *port_gid_type(const struct port *p, unsigned i)
{
	if (!port_is_roce(p))
		return port_guid(p, i) ? "IB/RoCE v1" : NULL;
	if (i >= GUIDS_PER_PORT || (i >= 2 && !port_roce_ip4(p, i / 2 - 1)))
		return NULL;
	return i % 2 ? "RoCE v2" : "IB/RoCE v1";
}

static guint gid_hash(gconstpointer k)
{
	const uint8_t *g = k;
	uint64_t lo;

	memcpy(&lo, g + 8, 8);	/* the interface id or the address: what differs */
	return g_int64_hash(&lo);
}

static gboolean gid_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, 16);
}

void fabric_roce_gids_changed(struct fabric *f)
{
	f->roce_gids_stale = true;
}

/* Every RoCE port's GIDs, the first holder of each (ports in node order,
 * as a scan would find them). Unset GIDs (all zero) are left out. */
static void roce_index(struct fabric *f)
{
	static const uint8_t zero[16];
	unsigned i, k, g;

	if (f->roce_by_gid)
		g_hash_table_remove_all(f->roce_by_gid);
	else
		f->roce_by_gid = g_hash_table_new_full(gid_hash, gid_equal, g_free, NULL);
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (k = 1; !node_is_switch(n) && k <= n->nports; k++) {
			if (!port_is_roce(&n->ports[k]))
				continue;
			for (g = 0; g < GUIDS_PER_PORT; g++) {
				uint8_t gid[16];

				roce_gid(&n->ports[k], g, gid);
				if (memcmp(gid, zero, 16) && !g_hash_table_contains(f->roce_by_gid, gid))
					g_hash_table_insert(f->roce_by_gid, g_memdup2(gid, 16),
							    &n->ports[k]);
			}
		}
	}
	f->roce_gids_stale = false;
}

/* Each RoCE packet asks this (the daemon's send, the CM, captures): a
 * hash lookup, the index made again only after a change. */
struct port *fabric_roce_port_by_gid(struct fabric *f, const uint8_t gid[16])
{
	if (!f->roce_by_gid || f->roce_gids_stale)
		roce_index(f);
	return g_hash_table_lookup(f->roce_by_gid, gid);
}

void port_gid(const struct port *p, unsigned i, uint8_t gid[16])
{
	const struct port *ip = port_mgmt((struct port *)p);
	uint64_t g = port_guid(p, i);
	uint64_t pfx = g ? htobe64(ip->gid_prefix) : 0;

	if (port_is_roce(p)) {
		roce_gid(p, i, gid);
		return;
	}
	g = htobe64(g);
	memcpy(gid, &pfx, 8);
	memcpy(gid + 8, &g, 8);
}

int port_pkey_find(const struct port *p, uint16_t pkey)
{
	unsigned i;

	for (i = 0; i < p->npkeys; i++)
		if (p->pkeys[i] && (p->pkeys[i] & PKEY_BASE_MASK) == (pkey & PKEY_BASE_MASK))
			return (int)i;
	return -1;
}

bool port_pkey_accepts(const struct port *p, uint16_t pkey)
{
	unsigned i;

	/* Same base, and one of the two a full member (IBA 10.9.3). */
	for (i = 0; i < p->npkeys; i++)
		if (p->pkeys[i] && (p->pkeys[i] & PKEY_BASE_MASK) == (pkey & PKEY_BASE_MASK) &&
		    ((p->pkeys[i] | pkey) & PKEY_FULL_MEMBER))
			return true;
	return false;
}

/* Slot 0's: the topology's, `ibemu ctl`'s or the default plan's, or none. */
static uint32_t first_ip4(const struct port *p)
{
	unsigned n = p->node->index + 1;
	uint32_t net = p->node->fabric->loopback_addrs ? 127 : 10;

	if (node_is_switch(p->node) || p->num == 0 || p->ip4_none)
		return 0;
	if (p->ip4)
		return p->ip4;
	return net << 24 | (uint32_t)p->num << 16 | (n & 0xffff);
}

uint32_t port_roce_ip4(const struct port *p, unsigned slot)
{
	if (slot == 0)
		return first_ip4(p);
	return slot < ROCE_IP4_SLOTS && port_is_roce(p) ? p->ip4_more[slot - 1] : 0;
}

/* The port's first slot with an address, or ROCE_IP4_SLOTS. */
static unsigned first_slot(const struct port *p)
{
	unsigned k;

	for (k = 0; k < ROCE_IP4_SLOTS && !port_roce_ip4(p, k); k++)
		;
	return k;
}

uint32_t port_ip4(const struct port *p)
{
	unsigned k = first_slot(p);

	return k < ROCE_IP4_SLOTS ? port_roce_ip4(p, k) : 0;
}

unsigned port_roce_v2_index(const struct port *p)
{
	unsigned k = first_slot(p);

	return k < ROCE_IP4_SLOTS ? 2 + 2 * k + 1 : ROCE_GID_V2_IP4;
}

bool port_has_ip4(const struct port *p, uint32_t addr)
{
	unsigned k;

	for (k = 0; k < ROCE_IP4_SLOTS; k++)
		if (port_roce_ip4(p, k) == addr)
			return true;
	return false;
}

struct port *fabric_port_by_ip4(struct fabric *f, uint32_t addr)
{
	unsigned i, k;

	if (!addr)
		return NULL;	/* what a port without an address says */
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (node_is_switch(n))
			continue;
		for (k = 1; k <= n->nports; k++)
			if (port_has_ip4(&n->ports[k], addr))
				return &n->ports[k];
	}
	return NULL;
}

bool port_ip4_valid(uint32_t addr, bool loopback)
{
	return addr != 0 && (addr >> 24 == 127) == loopback && addr >> 28 != 0xe &&
	       addr >> 28 != 0xf;
}

/* An address of @p changed: the GID index, and on a RoCE port its GIDs
 * with it (GID_CHANGE). */
static void addr_changed(struct port *p)
{
	fabric_roce_gids_changed(p->node->fabric);
	if (port_is_roce(p))
		port_changed(p, PORT_CHANGED_GUID);
}

int port_set_ip4(struct port *p, uint32_t addr, struct port **other)
{
	struct port *o;

	if (!port_ip4_valid(addr, p->node->fabric->loopback_addrs) || node_is_switch(p->node) ||
	    p->num == 0)
		return -EINVAL;
	o = fabric_port_by_ip4(p->node->fabric, addr);
	if (o && o != p) {
		if (other)
			*other = o;
		return -EEXIST;
	}
	p->ip4 = addr;
	p->ip4_none = false;
	addr_changed(p);
	return 0;
}

int port_set_roce_ip4(struct port *p, unsigned slot, uint32_t addr)
{
	struct port *o;

	if (slot == 0)
		return addr ? port_set_ip4(p, addr, NULL) : (port_clear_ip4(p), 0);
	if (slot >= ROCE_IP4_SLOTS || !port_is_roce(p) ||
	    (addr && !port_ip4_valid(addr, p->node->fabric->loopback_addrs)))
		return -EINVAL;
	if (addr && (o = fabric_port_by_ip4(p->node->fabric, addr)) && o != p)
		return -EEXIST;
	p->ip4_more[slot - 1] = addr;
	addr_changed(p);
	return 0;
}

void port_clear_ip4(struct port *p)
{
	p->ip4_none = true;
	addr_changed(p);
}
