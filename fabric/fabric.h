/* SPDX-License-Identifier: MIT */
/*
 * The simulated subnet: nodes (CAs, switches, routers), their ports and the
 * links between them, and the packet engine that carries MADs across it.
 *
 * Interface: the layer above (kernel/) attaches to a port with
 * port_attach() and sends with fabric_send(); MADs that the node's own
 * firmware (SMA, PMA) does not consume are handed to the attached
 * upper layer, as the HCA driver hands them to ib_mad (docs/umad.md §4.6).
 * Nothing here sees a file descriptor or a FUSE request.
 *
 * Lifetime: the fabric owns its nodes, a node owns its ports and its switch
 * state. Nothing is freed before fabric_free().
 */
#ifndef IBEMU_FABRIC_FABRIC_H
#define IBEMU_FABRIC_FABRIC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "fabric/fault.h"
#include "fabric/packet.h"
#include "lib/timerq.h"

enum node_type {
	NODE_CA = 1,
	NODE_SWITCH = 2,
	NODE_ROUTER = 3,
};

/* PortInfo:PortState (IBA 14.2.5.6, Table 146) */
enum port_state {
	PORT_NOP = 0,
	PORT_DOWN = 1,
	PORT_INIT = 2,
	PORT_ARMED = 3,
	PORT_ACTIVE = 4,
};

/* PortInfo:PortPhysicalState */
enum phys_state {
	PHYS_NOP = 0,
	PHYS_SLEEP = 1,
	PHYS_POLLING = 2,
	PHYS_DISABLED = 3,
	PHYS_TRAINING = 4,
	PHYS_LINKUP = 5,
	PHYS_ERROR_RECOVERY = 6,
};

/* A port's link layer (IBV_LINK_LAYER_*'s numbers). */
enum port_link {
	PORT_LINK_IB = 0,	/* the default */
	PORT_LINK_ETH = 2,	/* RoCE: IBV_LINK_LAYER_ETHERNET */
};

/* LinkWidth bits and LinkSpeed / LinkSpeedExt bits of PortInfo. */
enum { WIDTH_1X = 1, WIDTH_4X = 2, WIDTH_8X = 4, WIDTH_12X = 8, WIDTH_2X = 16 };
enum { SPEED_SDR = 1, SPEED_DDR = 2, SPEED_QDR = 4 };
enum { ESPEED_FDR = 1, ESPEED_EDR = 2, ESPEED_HDR = 4, ESPEED_NDR = 8 };
/* Mellanox ExtendedPortInfo LinkSpeed bits: FDR10 runs QDR as PortInfo
 * tells it; only this attribute says it is FDR10 (libibnetdisc asks it). */
enum { MSPEED_FDR10 = 1 };

/* What a cable trained to, in the three attributes' encodings:
 * LinkSpeedActive, LinkSpeedExtActive (0: none), Mellanox LinkSpeedActive. */
struct lspeed {
	uint8_t speed, espeed, mspeed;
};

#define CAP_IS_SM		0x00000002u
#define CAP_EXT_SPEEDS		0x00004000u

#define PKEY_DEFAULT		0xffff
#define GUIDS_PER_PORT		8
/* A RoCE port's IPv4 addresses with GIDs: pairs 2/3, 4/5, 6/7 of the
 * GUIDS_PER_PORT entries (0/1 are the MAC's link-local GID). */
#define ROCE_IP4_SLOTS		((GUIDS_PER_PORT - 2) / 2)

struct node;
struct fabric;
struct port;

/*
 * Port counters as the PMA reports them (IBA 16.1.3.5, 16.1.4.11). The
 * packet engine counts real traffic; error counters change only by events.
 */
struct port_counters {
	uint64_t xmit_data, rcv_data;		/* in 32-bit words */
	uint64_t xmit_pkts, rcv_pkts;
	uint64_t ucast_xmit, ucast_rcv, mcast_xmit, mcast_rcv;
	uint32_t symbol_err, link_err_recovery, link_downed, rcv_err;
	uint32_t rcv_remote_phys_err, rcv_switch_relay_err, xmit_discards;
	uint32_t xmit_constraint_err, rcv_constraint_err;
	uint32_t local_link_integrity_err, excessive_buf_overrun_err;
	uint32_t vl15_dropped, xmit_wait;
	uint32_t xmit_data_sl[16], rcv_data_sl[16];	/* per SL, words; saturate */
	/*
	 * PortCounters shows the data counters less these, so that clearing
	 * it leaves PortCountersExtended as it was (they are separate views).
	 */
	uint64_t base_xmit_data, base_rcv_data, base_xmit_pkts, base_rcv_pkts;
};

/* What the host did with a MAD it was given (port_upper.deliver). */
enum upper_verdict {
	/* No agent wants it: the fabric answers an unclaimed Get/Set with
	 * status 0x000C, as the kernel's MAD layer does. */
	UPPER_UNCLAIMED,
	UPPER_TAKEN,		/* queued for an agent */
	UPPER_DROPPED,		/* thrown away (queue full, unmatched response) */
};

/* What the emulator provides to receive MADs that reach an attached port. */
struct port_upper {
	/* @pkt arrived for the host at @port and firmware did not take it. */
	enum upper_verdict (*deliver)(void *ctx, struct port *port, const struct mad_pkt *pkt);
	/* What port_changed() says changed (enum port_change bits); NULL:
	 * the host reads everything live (sysfs). */
	void (*changed)(void *ctx, struct port *port, unsigned what);
	/* A data packet reached @port (docs/verbs.md "Data path"): the
	 * host's table of QPs. UPPER_UNCLAIMED and UPPER_DROPPED both drop
	 * it (no such QP, a Q_Key mismatch, a full queue); NULL: dropped. */
	enum upper_verdict (*data)(void *ctx, struct port *port, const struct mad_pkt *pkt);
	void *ctx;
};

/*
 * A port. Switch-wide fields (LID, LMC, SM LID, M_Key, capability mask) are
 * kept on port 0 of a switch and read from there for every port.
 */
struct port {
	struct node *node;
	uint8_t num;
	uint64_t guid;
	struct port *remote;	/* peer across the cable; NULL when none */

	uint8_t width_enabled, width_supported, width_active;
	uint8_t speed_enabled, speed_supported, speed_active;
	uint8_t espeed_enabled, espeed_supported, espeed_active;
	uint8_t mspeed_enabled, mspeed_supported, mspeed_active;	/* MSPEED_ */
	uint8_t state;		/* enum port_state */
	uint8_t phys_state;	/* enum phys_state */
	uint8_t link_down_default;

	uint16_t lid, sm_lid;
	uint8_t lmc, sm_sl;
	uint64_t mkey, gid_prefix;
	uint16_t mkey_lease;	/* seconds; 0 = the lease never ends */
	uint8_t mkey_protect;
	struct timer *mkey_lease_timer;	/* on first violation with a lease */
	uint32_t cap_mask;

	uint8_t mtu_cap, neighbor_mtu;
	uint8_t vl_cap, oper_vls, vl_high_limit, vl_arb_high_cap, vl_arb_low_cap;
	uint8_t hoq_life, vl_stall, subnet_timeout, resp_time;
	uint8_t part_enf_in, part_enf_out, filter_raw_in, filter_raw_out;
	uint8_t client_rereg;
	uint16_t mkey_violations, pkey_violations, qkey_violations;
	uint8_t local_phys_err, overrun_err;

	uint16_t *pkeys;	/* npkeys entries */
	unsigned npkeys;
	/* GUIDInfo entries 1..7 (entry 0 is @guid), on the first Set: most
	 * ports never get alias GUIDs, and 56 bytes a port add up at 10^5. */
	uint64_t *alias_guids;
	uint8_t sl2vl[8];	/* SLtoVL, two SLs a byte (per output port) */
	uint8_t *vlarb;		/* 4 blocks x 64 bytes, allocated on first Set */
	uint8_t *mlnx_epi;	/* Mellanox ExtendedPortInfo (64 bytes), on first Set;
				 * its speeds are the mspeed_ fields */
	struct port_counters counters;
	struct cc_state *cc;	/* its Congestion Control agent's (cc.c), on first MAD */

	struct port_upper upper;	/* .deliver NULL when not attached */
	bool cable_cut;		/* link taken down by the control plane */
	/* The IPv4 address an IPoIB interface on this CA port would have
	 * (host order; 0: the default plan's, port_ip4() in port.h). */
	uint32_t ip4;
	bool ip4_none;		/* its interface has none now (port_clear_ip4) */
	/* A RoCE port's further IPv4 addresses, host order, 0 for none: GIDs
	 * 4/5 and 6/7 (its address above is 2/3), as the kernel adds a pair
	 * per address and leaves a deleted one's empty. */
	uint32_t ip4_more[ROCE_IP4_SLOTS - 1];
	/* A CA port's link layer (enum port_link): Ethernet for a RoCE
	 * port (docs/roce.md), whose LID and routes are the fabric's own,
	 * never shown. */
	uint8_t link;
};

struct switch_state {
	uint16_t lft_cap, mft_cap;
	uint16_t lft_top;
	uint8_t *lft;		/* lft_len bytes, 0xff = no route */
	unsigned lft_len;
	uint16_t *mft;		/* [mlid - 0xc000][position], on first Set */
	uint16_t mft_top;
	uint8_t def_port, def_mcast_prim, def_mcast_not_prim;
	uint8_t life_time, port_state_change, lids_per_port;
	uint16_t partition_enf_cap;
	bool enhanced_port0;
};

struct node {
	struct fabric *fabric;
	enum node_type type;
	char *id;		/* name in the topology file */
	char desc[65];		/* NodeDescription, NUL-terminated */
	uint64_t guid, sys_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	uint32_t revision;
	uint16_t partition_cap;
	uint8_t nports;
	struct port *ports;	/* [0..nports]; [0] is real only on switches */
	struct switch_state *sw;	/* switches only */
	bool led;
	bool off;		/* powered off: answers nothing */
	/* On a RoCE network (cabled to RoCE ports; fabric_roce_networks):
	 * no SM there, a switch stands for an Ethernet switch. */
	bool eth_net;
	unsigned eth_net_id;	/* which RoCE network: its first CA's index + 1 */
	unsigned index;		/* position in fabric->nodes */
	uint32_t trap_tid;	/* its SMA's last Trap's TID (trap.c) */
};

/*
 * Who sees each packet as it leaves a port onto its cable (route.c
 * transmit; ctl/capture.c writes them to a pcap file). @first: the
 * packet's first cable since it was sent or answered, so a whole-fabric
 * capture records each packet once, not at every hop.
 */
struct fabric_tap {
	void (*fn)(void *ctx, const struct port *out, const struct mad_pkt *p, bool first);
	void *ctx;
};

/*
 * The verbs layer's state on a fabric (kernel/uverbs_priv.h's struct
 * uverbs_net), as a kernel keeps a subsystem's per network namespace,
 * and its way past the packet engine for data packets (the direct path,
 * docs/verbs.md), which holds only while nothing on their way changes:
 * @revoke is called before anything a path depends on changes (an SMP
 * Set, a port's change, a control command, a QP's), @sync before the PMA
 * counters are read, to bring in what went that way, @free with the
 * fabric.
 */
struct fabric_verbs_ops {
	void (*revoke)(void *verbs);
	void (*sync)(void *verbs);
	void (*free)(void *verbs);
};

struct fabric {
	GPtrArray *nodes;	/* struct node *, owned */
	GHashTable *by_id;	/* id -> node */
	GHashTable *by_guid;	/* &node->guid -> node */
	GQueue events;		/* packets in flight, see route.c */
	GList *delayed;		/* packets held back by delay rules */
	uint64_t processed;	/* packets processed so far (orders holds) */
	bool draining;
	struct fault_set faults;
	struct timerq *tq;	/* for delays; set by the owner */
	struct fabric_tap tap;	/* fn NULL: nobody looks */
	uint64_t delivered, dropped;	/* statistics for tests and dumps */
	/* When an SMA last took a Set (tq's clock, us; 0: never): an SM's
	 * sweep ends with Sets after the ports go Active (`ctl wait sm-up`). */
	uint64_t last_smp_set_us;
	void *verbs;	/* opaque here; NULL: no verbs context yet */
	const struct fabric_verbs_ops *verbs_ops;
	uint64_t direct_packets;	/* what went that way (in delivered too) */
	/* The CA ports' addresses are on the machine's own network (run
	 * --host-network, CUSE mode): from 127.0.0.0/8, which never leaves
	 * it (port_ip4). Otherwise the run has a network of its own. */
	bool loopback_addrs;
	GPtrArray *roce_groups;	/* the RoCE networks' multicast (mcast.c) */
	/* RoCE ports by GID (port.c), made when first asked and again after
	 * anything a GID comes from changed (fabric_roce_gids_changed). */
	GHashTable *roce_by_gid;
	bool roce_gids_stale;
};

/* An empty fabric; its owner sets f->tq before anything is delayed. */
struct fabric *fabric_new(void);
void fabric_free(struct fabric *f);

/* Create a node with ports 1..nports (and port 0). NULL if @id is taken. */
struct node *fabric_add_node(struct fabric *f, enum node_type type,
			     const char *id, uint8_t nports, uint64_t guid);
struct node *fabric_find(struct fabric *f, const char *id);
/* Change a node's GUID (its switch ports' too), keeping lookups right. */
void fabric_set_node_guid(struct fabric *f, struct node *n, uint64_t guid);
struct node *fabric_find_guid(struct fabric *f, uint64_t guid);
/* By id, or by node or port GUID written as 0x...; NULL if none. */
struct node *fabric_lookup(struct fabric *f, const char *name);

/* Connect two free ports with a cable: both go LinkUp/Init. */
int fabric_link(struct port *a, struct port *b, uint8_t width, struct lspeed sp);
/* Port @num of @n, or NULL past its last. */
static inline struct port *node_port(struct node *n, unsigned num)
{
	return num <= n->nports ? &n->ports[num] : NULL;
}
static inline bool node_is_switch(const struct node *n)
{
	return n->type == NODE_SWITCH;
}
/*
 * The port that holds the management fields of @p (LID, LMC, SM LID,
 * capability mask, P_Keys as the SMA sees them): a switch has one set, on
 * its port 0 (IBA 14.2.5.6, "switch external ports ... use port 0"); a CA
 * or router port holds its own.
 */
static inline struct port *port_mgmt(struct port *p)
{
	return node_is_switch(p->node) ? &p->node->ports[0] : p;
}

void port_attach(struct port *p, const struct port_upper *upper);

/* "CA", "Switch", "Router" (NodeInfo:NodeType, IBA Table 150), as
 * ibnetdiscover writes them; and as the kernel's sysfs node_type shows
 * them ("CA", "switch", "router": drivers/infiniband/core/sysfs.c). */
const char *node_type_name(enum node_type t);
const char *node_type_sysfs_name(enum node_type t);
/* The LID a node answers at: its port 0 (switch) or port 1 (CA). */
uint16_t node_lid(const struct node *n);

/* Counts for `topo check` and dumps. */
struct fabric_counts {
	unsigned nodes, switches, cas, routers, ports, links;
};
void fabric_count(struct fabric *f, struct fabric_counts *c);

/* route.c: inject a MAD, or a data packet (pkt->data), from @port as the
 * host attached there sends it. */
void fabric_send(struct fabric *f, struct port *port, const struct mad_pkt *pkt);

/* The direct path's (struct fabric_verbs_ops): something it relies on
 * is about to change; the PMA counters are about to be read. */
void fabric_changed(struct fabric *f);
void fabric_sync(struct fabric *f);
/* Whether every data packet would go its way untouched: no fault rule,
 * no capture, nothing held back or in flight. */
bool fabric_quiet(const struct fabric *f);
/*
 * The way a unicast data packet with @pkey from CA port @from to @dlid
 * would take now, as fabric_send() would carry it: NULL, with the ports
 * it leaves by in @out (*@n of at most @max: the CA's, then each
 * switch's) and the CA port that takes it in *@dest; or why it would not
 * arrive (a link down, no LFT entry, a P_Key the port refuses).
 */
const char *fabric_data_path(struct port *from, uint16_t dlid, uint16_t pkey, struct port **out,
			     unsigned max, unsigned *n, struct port **dest);

#endif
