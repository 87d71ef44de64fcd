/* SPDX-License-Identifier: MIT */
/*
 * Port behaviour that is not one attribute: defaults per node type, the
 * logical and physical link state machine as a SubnSet(PortInfo) drives it
 * (IBA 7.2 and 14.2.5.6), and the rate as the kernel's sysfs shows it.
 */
#ifndef IBEMU_FABRIC_PORT_H
#define IBEMU_FABRIC_PORT_H

#include <stddef.h>

#include "fabric/fabric.h"

void port_init_defaults(struct port *p);

/* Can this port move to @state (PortInfo:PortState, 0 = no change)? */
bool port_state_change_valid(const struct port *p, unsigned state);
/* Apply a valid state change; a link that goes Down retrains to Init. */
void port_set_state(struct port *p, unsigned state);
/* PortPhysicalState 2 (Polling: enable) or 3 (Disabled); 0 = no change. */
bool port_phys_change_valid(const struct port *p, unsigned phys);
void port_set_phys(struct port *p, unsigned phys);

/* The control plane pulls or restores the cable at @p (both ends). */
void port_cable_set(struct port *p, bool up);
/*
 * The port's IPv4 address (host order), as the connection manager maps
 * addresses to ports (docs/rdmacm.md "Addresses"): the one set in the
 * topology file or by `ibemu ctl`, else the default plan's
 * 10.<port>.<n / 256>.<n % 256>, n the node's position in the fabric from
 * 1 (127.<port>... when the fabric's loopback_addrs says its addresses are
 * on the machine's own network). 0 for a switch port (no IPoIB there).
 * A RoCE port whose first address went (port_clear_ip4): its next one's,
 * or 0 (port_roce_ip4).
 */
uint32_t port_ip4(const struct port *p);
/*
 * RoCE ports (docs/roce.md). A port's MAC: its GUID without the two
 * middle bytes (00:02:c9:00:01:01 for 0x0002c90300000101). Its GID table,
 * as the kernel's for an Ethernet port with one IPv4 address: 0 and 1 the
 * link-local GID of the MAC (fe80::EUI-64), 2 and 3 the IPv4-mapped one
 * (::ffff:a.b.c.d), even entries RoCE v1, odd ones RoCE v2; the type of
 * entry @i ("IB/RoCE v1", "RoCE v2"), NULL past them.
 */
static inline bool port_is_roce(const struct port *p)
{
	return p->link == PORT_LINK_ETH;
}
/* The P_Key a port's requests go with: its table's first, the default
 * when that is empty (what ib_sa and the RDMA CM take). */
static inline uint16_t port_first_pkey(const struct port *p)
{
	return p->pkeys[0] ? p->pkeys[0] : PKEY_DEFAULT;
}
void port_mac(const struct port *p, uint8_t mac[6]);
const char *port_gid_type(const struct port *p, unsigned i);
/* The RoCE port of the fabric whose GID table has @gid, or NULL. */
struct port *fabric_roce_port_by_gid(struct fabric *f, const uint8_t gid[16]);
/* A port's GUID, address or link layer changed, or a node came: the
 * index fabric_roce_port_by_gid keeps is made again when next asked. */
void fabric_roce_gids_changed(struct fabric *f);
#define ROCE_GID_V2_IP4		3	/* the index perftest -x 3 takes */
/* A host-order IPv4 address for printf: IP4_FMT takes IP4_PARTS(a). */
#define IP4_FMT		"%u.%u.%u.%u"
#define IP4_PARTS(a)	(unsigned)((a) >> 24), (unsigned)((a) >> 16 & 0xff), \
			(unsigned)((a) >> 8 & 0xff), (unsigned)((a) & 0xff)
/* The CA port that has @addr (any of a RoCE port's), or NULL. */
struct port *fabric_port_by_ip4(struct fabric *f, uint32_t addr);
/* Whether a port may have @addr: not 0, multicast (224/4) or class E and
 * broadcast (240/4); loopback (127/8) exactly when @loopback (the fabric's
 * loopback_addrs: a run on the machine's network, where only those are
 * never routed off the machine; elsewhere the run's lo has them). */
bool port_ip4_valid(uint32_t addr, bool loopback);
/* 0; -EINVAL for a switch port or an address no port may have; -EEXIST
 * for one another port has (that port in *@other, if @other). */
int port_set_ip4(struct port *p, uint32_t addr, struct port **other);
/* The port's interface lost its address: port_ip4() is 0 until one is set
 * again (a RoCE port's IPv4 GIDs go empty). On a RoCE port either raises
 * GID_CHANGE (PORT_CHANGED_GUID), as the kernel's roce_gid_mgmt does. */
void port_clear_ip4(struct port *p);
/*
 * A RoCE port's IPv4 address slot @slot (< ROCE_IP4_SLOTS: GIDs 2 + 2 *
 * @slot and the next), 0 for empty; slot 0 is port_set_ip4's. Setting one
 * another port has is -EEXIST, one no port may have -EINVAL; a change
 * raises GID_CHANGE.
 */
uint32_t port_roce_ip4(const struct port *p, unsigned slot);
/* Whether @addr (not 0) is one of @p's (port_ip4, or any slot of a RoCE port). */
bool port_has_ip4(const struct port *p, uint32_t addr);
int port_set_roce_ip4(struct port *p, unsigned slot, uint32_t addr);
/* The RoCE v2 GID index of the port's address (its first slot with one;
 * ROCE_GID_V2_IP4 when none): the RDMA CM's source GID. */
unsigned port_roce_v2_index(const struct port *p);

/* Power a node off (it answers nothing; its cables go dark) or on. */
void node_power(struct node *n, bool on);

/*
 * What changed at a port, for the host attached there (port_upper.changed):
 * the events a real HCA's driver raises (IB_EVENT_PORT_ACTIVE/ERR,
 * LID_CHANGE, SM_CHANGE, PKEY_CHANGE, GID_CHANGE, CLIENT_REREGISTER; kernel
 * include/rdma/ib_verbs.h) follow from these.
 */
enum port_change {
	PORT_CHANGED_STATE = 1 << 0,	/* PortState or PortPhysicalState */
	PORT_CHANGED_LID = 1 << 1,	/* LID or LMC */
	PORT_CHANGED_SM = 1 << 2,	/* SM LID or SM SL */
	PORT_CHANGED_CAP = 1 << 3,	/* CapabilityMask (IsSM) */
	PORT_CHANGED_GUID = 1 << 4,	/* port GUID, GID prefix, a RoCE port's address */
	PORT_CHANGED_PKEY = 1 << 5,	/* P_Key table */
	PORT_CHANGED_REREG = 1 << 6,	/* ClientReregister was set */
};
/* Tell the host attached to @p's management port (port_mgmt) of @what. */
void port_changed(struct port *p, unsigned what);

/* Setters that keep the invariants: the fields go to the management
 * port, and the host hears of the change. */
void port_set_lid(struct port *p, uint16_t lid, uint8_t lmc);
void port_set_guid(struct port *p, uint64_t guid);
void port_set_cap_bits(struct port *p, uint32_t set, uint32_t clear);

struct link_speed {
	const char *name;	/* "QDR" */
	const char *lane_gbps;	/* "10", or NULL (DDR: ibnetdiscover writes no rate) */
	struct lspeed sp;	/* how the attributes say it */
	unsigned deci;		/* a lane's rate in tenths of Gb/s */
};
/* Every speed, slowest first; the last entry has a NULL name. */
extern const struct link_speed link_speeds[];
/* The entry for @sp (SDR if it names none). */
const struct link_speed *link_speed_of(struct lspeed sp);
/* "SDR" .. "NDR", "FDR10": the speed the port runs at. */
const char *port_speed_name(const struct port *p);
/* The speed the host's driver reports (sysfs rate, verbs active_speed):
 * an extended speed only when CapabilityMask has IsExtendedSpeedsSupported. */
const struct link_speed *port_host_speed(const struct port *p);
/* The port trained to @sp: its active speeds, and what it supports and
 * enables grows to include them (CapabilityMask gains
 * IsExtendedSpeedsSupported with an extended speed). */
void port_set_speed(struct port *p, struct lspeed sp);

/* Active rate in deci-Gb/s x width, as kernel sysfs.c:rate_show. */
unsigned port_rate_deci_gbps(const struct port *p);
/* "40 Gb/sec (4X QDR)" without the newline. */
void port_rate_string(const struct port *p, char *buf, size_t len);
unsigned width_lanes(unsigned width_bit);
const char *port_state_name(unsigned state);
const char *phys_state_name(unsigned phys);

/* P_Keys (IBA 10.9): the low 15 bits name the partition, bit 15 says
 * full member. The index of the first entry of @pkey's partition, or -1;
 * and whether a packet carrying @pkey is accepted here (C9-42). */
#define PKEY_BASE_MASK		0x7fff
#define PKEY_FULL_MEMBER	0x8000
int port_pkey_find(const struct port *p, uint16_t pkey);
bool port_pkey_accepts(const struct port *p, uint16_t pkey);

/* Does @lid address this port, given its base LID and LMC? */
bool port_owns_lid(const struct port *p, uint16_t lid);

/* GUIDInfo's GUID @i of the port (i < GUIDS_PER_PORT): 0 is the port
 * GUID, 1 to 7 the alias GUIDs (0 while unset). */
uint64_t port_guid(const struct port *p, unsigned i);
/* GID @i of the port into @gid, network order: the subnet prefix and
 * GUID i. An unset alias GUID gives the all-zero GID, as the kernel's GID
 * cache shows it. */
void port_gid(const struct port *p, unsigned i, uint8_t gid[16]);

#endif
