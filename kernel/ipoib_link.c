/* SPDX-License-Identifier: MIT */
/*
 * IPoIB's datagram mode on a port (ipoib_link.h, docs/ipoib.md): frames
 * of the TAP device in, IPoIB packets of a UD QP out, and back. The
 * kernel's ipoib_ib.c (the UD QP), ipoib_main.c (neighbours, ARP's
 * hardware addresses) and ipoib_multicast.c (the broadcast group's
 * join) in one file, with the Ethernet edge ib_ipoib does not need.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/if_tun.h>

#include <glib-unix.h>
#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "abi/verbs_wire.h"
#include "fabric/port.h"
#include "kernel/cm_wire.h"
#include "kernel/ipoib_priv.h"
#include "kernel/sa_priv.h"
#include "kernel/sa_wire.h"
#include "lib/log.h"
#include "lib/watch.h"

/* The upper TID bits of our SA queries, beside the rdma_cm's
 * (cma_mcast.c MC_HI_TID), as ib_ipoib's go through ib_sa's agent. */
#define IPOIB_HI_TID		0x01000003ull
/* A join unanswered or refused is asked again this much later. */
#define JOIN_RETRY_US		(1 * G_USEC_PER_SEC)
/* Neighbours an interface keeps (the kernel's arp_tbl gc_thresh3 is
 * 1024 per namespace): past it a new one is not learnt, and said once. */
#define NEIGH_MAX		1024
/* Frames taken from the TAP per wake-up, so one busy interface cannot
 * hold the event loop. */
#define TAP_BURST		64

#define IPOIB_QPT_UD		4	/* IBV_QPT_UD */
#define ETH_P_IP_		0x0800
#define ETH_P_ARP_		0x0806
#define ETH_P_IPV6_		0x86dd
#define IP6_HDR			40
#define IPPROTO_ICMPV6_		58
#define ND_FIRST		133	/* Router Solicitation, ... Redirect (137) */
#define ND_OPT_SLLA		1
#define ND_OPT_TLLA		2
#define ARP_HDR			8
#define ARPHRD_ETHER_		1
#define ARPHRD_INFINIBAND_	32
#define ETH_ARP_LEN		(ARP_HDR + 2 * (6 + 4))
#define IB_ARP_LEN		(ARP_HDR + 2 * (IPOIB_HWADDR_LEN + 4))
/* What a TAP read may give: a frame of connected mode's MTU. */
#define FRAME_MAX		(ETH_HDR + IPOIB_CM_MTU + 64)

/* ---- addresses ------------------------------------------------------------ */

static uint64_t mac_key(const uint8_t mac[6])
{
	uint64_t k = 0;
	unsigned i;

	for (i = 0; i < 6; i++)
		k = k << 8 | mac[i];
	return k;
}

void ipoib_mac_of(const uint8_t hw[IPOIB_HWADDR_LEN], uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */
	unsigned i;

	for (i = 0; i < IPOIB_HWADDR_LEN; i++)
		h = (h ^ hw[i]) * 0x100000001b3ull;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)(h >> (8 * i));
	mac[0] = (uint8_t)((mac[0] & 0xfc) | 0x02);	/* local, unicast */
}

/* A hardware address's QPN, bytes 1-3 (RFC 4391 §9.1.1). */
void ipoib_hw_set_qpn(uint8_t hw[IPOIB_HWADDR_LEN], uint32_t qpn)
{
	hw[1] = (uint8_t)(qpn >> 16);
	hw[2] = (uint8_t)(qpn >> 8);
	hw[3] = (uint8_t)qpn;
}

/* Our hardware address: flags (connected mode taken), the QPN, the
 * port's GID 0. */
void ipoib_own_hw(const struct link *k, uint8_t hw[IPOIB_HWADDR_LEN])
{
	hw[0] = IPOIB_FLAGS_RC;
	ipoib_hw_set_qpn(hw, k->qpn);
	port_gid(k->port, 0, hw + 4);
}

uint32_t ipoib_hw_qpn(const uint8_t hw[IPOIB_HWADDR_LEN])
{
	return (uint32_t)hw[1] << 16 | (uint32_t)hw[2] << 8 | hw[3];
}

/* The path to neighbour @n: what the SA's PathRecord would give for its
 * GID, the LID its port has now (whether a packet gets there is the
 * fabric's to say: a cut cable drops it there, counted). 0: nobody has
 * the GID. The port is looked up once per address learnt, not per
 * packet: a fabric's worth of ports is a long walk. */
uint16_t ipoib_path_lid(const struct neigh *n)
{
	return n->to ? n->to->lid : 0;
}

/* Learn (or refresh) the neighbour @hw, seen in an ARP packet. */
static struct neigh *learn(struct link *k, const uint8_t hw[IPOIB_HWADDR_LEN])
{
	uint8_t mac[6];
	struct neigh *n;
	bool fresh = false;
	uint64_t key;

	ipoib_mac_of(hw, mac);
	key = mac_key(mac);
	if (!(n = g_hash_table_lookup(k->neigh, &key))) {
		if (g_hash_table_size(k->neigh) >= NEIGH_MAX) {
			if (!k->neigh_full_said)
				g_warning("ipoib: %u neighbours on one interface: no more learnt",
					  NEIGH_MAX);
			k->neigh_full_said = true;
			return NULL;
		}
		n = g_new0(struct neigh, 1);
		n->key = key;
		g_hash_table_insert(k->neigh, &n->key, n);
		fresh = true;
	}
	if (fresh || memcmp(n->hw, hw, IPOIB_HWADDR_LEN)) {
		memcpy(n->hw, hw, IPOIB_HWADDR_LEN);
		n->to = sa_port_by_guid(host_fabric(k->all->h), get_be64(hw + 4, 8));
	}
	return n;
}

/* ---- the multicast groups --------------------------------------------------- */

/* RFC 4391 §4: ff12:401b:<P_Key>::ffff:ffff, IPv4's broadcast group, and
 * ff12:601b:<P_Key>::1, IPv6's all-nodes (ff02::1) group. */
static void group_mgid(const struct link *k, unsigned i, uint8_t mgid[16])
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x12;
	mgid[2] = i == GROUP_BCAST ? 0x40 : 0x60;
	mgid[3] = 0x1b;
	put_be16(mgid, 4, ipoib_pkey(k));
	if (i == GROUP_BCAST)
		memset(mgid + 12, 0xff, 4);
	else
		mgid[15] = 1;
}

static void join_later(struct link *k, uint64_t us)
{
	timerq_arm(host_tq(k->all->h), &k->join_timer, us);
}

/*
 * SubnAdmSet(MCMemberRecord) as a full member, with what the SA needs to
 * make the group if it has none (ipoib_mcast_join with create: Q_Key,
 * P_Key, SL, FlowLabel, TClass): opensm made it at start with these.
 */
static void join_one(struct link *k, unsigned i)
{
	struct port *m = port_mgmt(k->port);
	struct umad_sa_packet sa;
	struct mad_pkt pkt = { 0 };
	uint8_t gid[16];

	k->g[i].tid = ++k->all->next_tid ? k->all->next_tid : ++k->all->next_tid;
	sa_wire_hdr(&sa, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC,
		    IPOIB_HI_TID << 32 | k->g[i].tid,
		    MCR_MGID | MCR_PORT_GID | MCR_QKEY | MCR_PKEY | MCR_JOIN_STATE | MCR_SL |
		    MCR_FLOW_LABEL | MCR_TCLASS);
	group_mgid(k, i, k->g[i].mgid);
	port_gid(k->port, 0, gid);
	mad_set_array(sa.data, 0, IB_SA_MCM_MGID_F, k->g[i].mgid);
	mad_set_array(sa.data, 0, IB_SA_MCM_PORTGID_F, gid);
	mad_set_field(sa.data, 0, IB_SA_MCM_QKEY_F, IPOIB_QKEY);
	mad_set_field(sa.data, 0, IB_SA_MCM_PKEY_F, ipoib_pkey(k));
	mad_set_field(sa.data, 0, IB_SA_MCM_JOIN_STATE_F, 1);	/* FullMember */
	memcpy(pkt.mad, &sa, MAD_SIZE);
	pkt.slid = k->port->lid;
	pkt.dlid = m->sm_lid;
	pkt.sqp = 1;
	pkt.dqp = 1;
	pkt.qkey = UMAD_QKEY;
	pkt.pkey = port_first_pkey(k->port);	/* QP1's: the default's, as ib_sa */
	pkt.sl = m->sm_sl;
	fabric_send(host_fabric(k->all->h), k->port, &pkt);
}

/*
 * SubnAdmSet(MCMemberRecord) as a full member of each group not joined,
 * with what the SA needs to make the group if it has none
 * (ipoib_mcast_join with create: Q_Key, P_Key, SL, FlowLabel, TClass):
 * opensm made the broadcast group at start with these.
 */
static void join(struct timer *t, void *ctx)
{
	struct link *k = ctx;
	struct port *m = port_mgmt(k->port);
	unsigned i;

	(void)t;
	join_later(k, JOIN_RETRY_US);	/* unless all are answered first */
	if (k->port->state != PORT_ACTIVE || !m->sm_lid || !k->port->lid)
		return;
	for (i = 0; i < GROUPS; i++)
		if (!k->g[i].mlid)
			join_one(k, i);
}

static void leave_groups(struct link *k)
{
	unsigned i;

	for (i = 0; i < GROUPS; i++) {
		struct verbs_ioc_mcast a = { .qpn = k->qpn, .mlid = k->g[i].mlid };

		if (!a.mlid)
			continue;
		memcpy(a.gid, k->g[i].mgid, 16);
		(void)uverbs_ctx_ioctl(k->ctx, VERBS_IOC_MCAST_DETACH, &a);
		k->g[i].mlid = 0;
	}
}

/* The SA's answer to a join of group @i: its MLID, the broadcast group's
 * Q_Key the QP's, the QP attached. */
static void joined(struct link *k, unsigned i, const uint8_t *rec)
{
	struct verbs_ioc_mcast a = { .qpn = k->qpn };
	struct verbs_ioc_qp q = { .qpn = k->qpn, .port = k->port->num, .qkey = k->qkey };
	unsigned j;
	int ret;

	a.mlid = (uint16_t)mad_get_field((void *)rec, 0, IB_SA_MCM_MLID_F);
	mad_get_array((void *)rec, 0, IB_SA_MCM_MGID_F, a.gid);
	if (i == GROUP_BCAST)
		q.qkey = k->qkey = mad_get_field((void *)rec, 0, IB_SA_MCM_QKEY_F);
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_SET, &q)) < 0 ||
	    (ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_MCAST_ATTACH, &a)) < 0) {
		g_warning("ipoib: port %u: the group of MLID 0x%04x not attached: %s",
			  k->port->num, a.mlid, g_strerror(-ret));
		return;		/* asked again by the timer */
	}
	k->g[i].mlid = a.mlid;
	g_debug("ipoib: port %u joined group %u, MLID 0x%04x Q_Key 0x%x", k->port->num, i,
		a.mlid, k->qkey);
	for (j = 0; j < GROUPS && k->g[j].mlid; j++)
		;
	if (j == GROUPS)
		timerq_cancel(host_tq(k->all->h), &k->join_timer);
}

static enum upper_verdict on_mad(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct ipoib_links *l = ctx;
	const struct umad_sa_packet *sa = (const void *)pkt->mad;
	uint64_t tid = mad_tid(pkt->mad);
	unsigned i;

	if (!pkt->data && mad_class(pkt->mad) == CM_CLASS)
		return ipoib_cm_mad(l, port, pkt);
	if (pkt->data || mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM ||
	    !(mad_method(pkt->mad) & 0x80) || tid >> 32 != IPOIB_HI_TID)
		return UPPER_UNCLAIMED;
	for (i = 0; i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);
		unsigned j;

		for (j = 0; k->port == port && j < GROUPS; j++) {
			if (k->g[j].tid != (uint32_t)tid)
				continue;
			k->g[j].tid = 0;
			if (mad_status(pkt->mad))
				g_debug("ipoib: port %u: a join was refused (status 0x%x)",
					port->num, mad_status(pkt->mad));	/* asked again */
			else if (!k->g[j].mlid)
				joined(k, j, sa->data);
		}
	}
	return UPPER_TAKEN;
}

/* A port's LID, SM or state changed: join again, as ipoib_event() flushes
 * and restarts the multicast tasks. */
static void on_changed(void *ctx, struct port *port, unsigned what)
{
	struct ipoib_links *l = ctx;
	unsigned i;

	if (!(what & (PORT_CHANGED_LID | PORT_CHANGED_SM | PORT_CHANGED_REREG |
		      PORT_CHANGED_STATE)))
		return;
	for (i = 0; i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);

		if (k->port != port || ((what & ~PORT_CHANGED_STATE) == 0 &&
					k->g[GROUP_BCAST].mlid && port->state == PORT_ACTIVE))
			continue;
		leave_groups(k);
		join_later(k, 0);
	}
}

static const struct host_client ipoib_client = { .deliver = on_mad, .changed = on_changed };

/* ---- frames out: TAP to fabric ---------------------------------------------- */

/* A UD SEND of @len bytes (IPoIB header included) to @dlid/@dqpn, or
 * to group @g when it is not NULL. */
static void send_ud(struct link *k, const struct group *g, uint16_t dlid, uint32_t dqpn,
		    const uint8_t *data, size_t len)
{
	_Alignas(struct verbs_wire_pkt) uint8_t buf[sizeof(struct verbs_wire_pkt) + IPOIB_HDR +
						    IPOIB_UD_MTU];
	struct verbs_wire_pkt *w = (struct verbs_wire_pkt *)buf;
	int pi = ipoib_pkey_index(k);

	if (pi < 0) {
		ipoib_drop(k, "its P_Key not in the port's table");
		return;
	}
	memset(w, 0, sizeof(*w));
	w->rec.type = VERBS_REC_PKT;
	w->rec.len = (uint32_t)(sizeof(*w) + len);
	w->port = k->port->num;
	w->opcode = OP_UD_SEND_ONLY;
	w->pkey_index = (uint16_t)pi;
	w->sqpn = k->qpn;
	w->qkey = k->qkey;
	w->len = (uint32_t)len;
	if (!g) {
		w->dlid = dlid;
		w->dqpn = dqpn;
	} else {
		/* A multicast packet carries its GRH, the MGID its DGID. */
		w->dlid = g->mlid;
		w->dqpn = VERBS_QPN_MCAST;
		w->flags = VERBS_PKT_GRH;
		w->grh_hop_limit = 1;
		memcpy(w->dgid, g->mgid, 16);
	}
	memcpy(buf + sizeof(*w), data, len);
	if (uverbs_ctx_write(k->ctx, buf, w->rec.len) < 0)
		ipoib_drop(k, "a full receiver");
	else
		k->tx++;
}

/* ---- IPv6's neighbour discovery ------------------------------------------------ */

/* Where the options of ND message @type start (RFC 4861 §4: RS, RA,
 * NS, NA, Redirect), from the ICMPv6 header; 0: not ND. */
static size_t nd_opts_off(uint8_t type)
{
	static const uint8_t off[] = { 8, 16, 24, 24, 40 };

	return type >= ND_FIRST && type <= ND_FIRST + 4 ? off[type - ND_FIRST] : 0;
}

/* The ICMPv6 checksum of IPv6 packet @p of @len bytes (RFC 4443 §2.3). */
static uint16_t icmp6_csum(const uint8_t *p, size_t len)
{
	size_t plen = len - IP6_HDR, i;
	uint32_t sum = (uint32_t)(plen >> 16) + (uint32_t)(plen & 0xffff) + IPPROTO_ICMPV6_;

	for (i = 8; i < IP6_HDR; i += 2)
		sum += get_be16(p, i);
	for (i = IP6_HDR; i + 1 < len; i += 2)
		sum += get_be16(p, i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * IPv6 packet @in of @len bytes into @out (room for @cap): the same, but
 * for neighbour discovery's link-layer address options (RFC 4861 §4.6.1),
 * Ethernet's 8-byte form to IPoIB's 24 bytes (RFC 4391 §9.1.1: two bytes
 * of padding, then the 20-byte address, ours) when @to_wire, else back,
 * the neighbour learnt. Its length, or 0 (malformed, or no room).
 */
static size_t nd_rewrite(struct link *k, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
			 bool to_wire)
{
	size_t opts, off, olen, w;

	if (len < IP6_HDR || len > cap)
		return 0;
	if (in[6] != IPPROTO_ICMPV6_ || len < IP6_HDR + 4 || !(opts = nd_opts_off(in[IP6_HDR]))) {
		memcpy(out, in, len);
		return len;
	}
	if (len < IP6_HDR + opts)
		return 0;
	memcpy(out, in, IP6_HDR + opts);
	w = IP6_HDR + opts;
	for (off = w; off < len; off += olen) {
		uint8_t t = in[off];

		if (len - off < 2 || !(olen = in[off + 1] * 8u) || off + olen > len)
			return 0;
		if ((t == ND_OPT_SLLA || t == ND_OPT_TLLA) && olen == (to_wire ? 8u : 24u)) {
			if (w + (to_wire ? 24 : 8) > cap)
				return 0;
			out[w] = t;
			if (to_wire) {
				out[w + 1] = 3;
				out[w + 2] = out[w + 3] = 0;
				ipoib_own_hw(k, out + w + 4);
				w += 24;
			} else {
				(void)learn(k, in + off + 4);
				out[w + 1] = 1;
				ipoib_mac_of(in + off + 4, out + w + 2);
				w += 8;
			}
			continue;
		}
		if (w + olen > cap)
			return 0;
		memcpy(out + w, in + off, olen);
		w += olen;
	}
	put_be16(out, 4, (uint16_t)(w - IP6_HDR));
	put_be16(out, IP6_HDR + 2, 0);
	put_be16(out, IP6_HDR + 2, icmp6_csum(out, w));
	return w;
}

/* An ARP frame from the host: the same in IPoIB's form (RFC 4391 §4.1). */
static void arp_out(struct link *k, const uint8_t *arp, size_t len)
{
	uint8_t out[IPOIB_HDR + IB_ARP_LEN] = { 0 }, *a = out + IPOIB_HDR;
	uint16_t op;
	struct neigh *n = NULL;
	uint64_t key;

	if (len < ETH_ARP_LEN || get_be16(arp, 0) != ARPHRD_ETHER_ ||
	    get_be16(arp, 2) != ETH_P_IP_ || arp[4] != 6 || arp[5] != 4)
		goto drop;
	op = get_be16(arp, 6);
	put_be16(out, 0, ETH_P_ARP_);
	put_be16(a, 0, ARPHRD_INFINIBAND_);
	put_be16(a, 2, ETH_P_IP_);
	a[4] = IPOIB_HWADDR_LEN;
	a[5] = 4;
	put_be16(a, 6, op);
	ipoib_own_hw(k, a + ARP_HDR);
	memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN, arp + ARP_HDR + 6, 4);	/* SPA */
	memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN + 4 + IPOIB_HWADDR_LEN, arp + ARP_HDR + 16, 4);
	/* THA: a reply names the asker, whose address we learnt. */
	key = mac_key(arp + ARP_HDR + 10);
	if (key && (n = g_hash_table_lookup(k->neigh, &key)))
		memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN + 4, n->hw, IPOIB_HWADDR_LEN);
	if (op == 2 && n && ipoib_path_lid(n))
		send_ud(k, NULL, ipoib_path_lid(n), ipoib_hw_qpn(n->hw), out, sizeof(out));
	else if (op == 1 && k->g[GROUP_BCAST].mlid)
		send_ud(k, &k->g[GROUP_BCAST], 0, 0, out, sizeof(out));
	else
		goto drop;
	return;
drop:
	ipoib_drop(k, "ARP not sent");
}

/* Whether IPv6 packet @ip of @len bytes is neighbour discovery's. */
static bool is_nd(const uint8_t *ip, size_t len)
{
	return len >= IP6_HDR + 4 && ip[6] == IPPROTO_ICMPV6_ && nd_opts_off(ip[IP6_HDR]);
}

/*
 * A frame @f of @len bytes from the host. IP is made an IPoIB packet in
 * place (its 4-byte header over the end of the Ethernet header), but
 * for neighbour discovery, whose options grow.
 */
static void frame_out(struct link *k, uint8_t *f, size_t len)
{
	uint8_t nd[IPOIB_HDR + IPOIB_UD_MTU], *out, *ip = f + ETH_HDR;
	const struct group *g;
	size_t n, iplen = len - ETH_HDR;
	uint16_t type;
	struct neigh *nb;
	uint64_t key;
	const char *why = "a frame cut short";

	if (len < ETH_HDR)
		goto drop;
	type = get_be16(f, 12);
	if (type == ETH_P_ARP_) {
		arp_out(k, ip, iplen);
		return;
	}
	if (type == ETH_P_IPV6_ && is_nd(ip, iplen)) {
		out = nd;
		n = nd_rewrite(k, ip, iplen, out + IPOIB_HDR, IPOIB_UD_MTU, true);
	} else if (type == ETH_P_IP_ || (type == ETH_P_IPV6_ && iplen >= IP6_HDR)) {
		out = ip - IPOIB_HDR;
		n = iplen;
	} else {
		why = "not IP";
		goto drop;
	}
	why = "a malformed IPv6 packet";
	if (!n)
		goto drop;
	put_be16(out, 0, type);
	put_be16(out, 2, 0);
	if (f[0] & 1) {
		/* Broadcast and IPv4 multicast to the broadcast group, IPv6
		 * multicast to the all-nodes group, as datagrams always. */
		g = &k->g[type == ETH_P_IP_ ? GROUP_BCAST : GROUP_ALL_NODES];
		why = !g->mlid ? "the group not joined" : "multicast past the datagram MTU";
		if (!g->mlid || n > IPOIB_UD_MTU)
			goto drop;
		send_ud(k, g, 0, 0, out, IPOIB_HDR + n);
		return;
	}
	key = mac_key(f);
	nb = g_hash_table_lookup(k->neigh, &key);
	why = !nb ? "no such neighbour" : "no path to the neighbour";
	if (!nb || !ipoib_path_lid(nb))
		goto drop;
	/* Connected mode, to a neighbour that takes it (ipoib_cm_enabled). */
	if (k->connected && (nb->hw[0] & IPOIB_FLAGS_RC)) {
		ipoib_cm_xmit(k, nb, out, IPOIB_HDR + n);
		return;
	}
	why = "past the datagram MTU";
	if (n > IPOIB_UD_MTU)
		goto drop;
	send_ud(k, NULL, ipoib_path_lid(nb), ipoib_hw_qpn(nb->hw), out, IPOIB_HDR + n);
	return;
drop:
	ipoib_drop(k, why);
}

static gboolean on_tap(gint fd, GIOCondition cond, gpointer data)
{
	struct link *k = data;
	unsigned i;
	int err = 0;

	(void)cond;	/* an error or a hang-up is what read says */
	for (i = 0; i < TAP_BURST && !err; i++) {
		ssize_t n = read(fd, k->frame, FRAME_MAX);

		if (n > 0)
			frame_out(k, k->frame, (size_t)n);
		else if (n < 0 && errno == EAGAIN)
			return G_SOURCE_CONTINUE;
		else if (n == 0 || errno != EINTR)
			err = n ? errno : EPIPE;
	}
	if (!err)
		return G_SOURCE_CONTINUE;
	/* The device went (its namespace, or the host took it away): the
	 * interface carries nothing more. */
	g_info("ipoib: port %u: its interface went (%s)", k->port->num, g_strerror(err));
	k->watch = 0;
	k->gone = true;
	return G_SOURCE_REMOVE;
}

void ipoib_drop(struct link *k, const char *why)
{
	k->dropped++;
	g_debug("ipoib: %s: dropped: %s", k->name, why);
}

void ipoib_link_pause(struct link *k, bool pause)
{
	if (pause && k->watch) {
		g_source_remove(k->watch);
		k->watch = 0;
	} else if (!pause && !k->watch && !k->gone) {
		k->watch = watch_fd(k->fd, G_IO_IN | G_IO_ERR | G_IO_HUP, on_tap, k);
	}
}

/* ---- packets in: fabric to TAP ---------------------------------------------- */

static void tap_write(struct link *k, const uint8_t *f, size_t len)
{
	if (write(k->fd, f, len) == (ssize_t)len)
		k->rx++;
	else
		ipoib_drop(k, "the host took no frame");
}

/* An IPoIB ARP packet: learnt, then given to the host in Ethernet's form. */
static void arp_in(struct link *k, const uint8_t *a, size_t len)
{
	uint8_t f[ETH_HDR + ETH_ARP_LEN] = { 0 }, *e = f + ETH_HDR, me[IPOIB_HWADDR_LEN];
	const uint8_t *tha = a + ARP_HDR + IPOIB_HWADDR_LEN + 4;

	if (len < IB_ARP_LEN || get_be16(a, 0) != ARPHRD_INFINIBAND_ ||
	    get_be16(a, 2) != ETH_P_IP_ || a[4] != IPOIB_HWADDR_LEN || a[5] != 4 ||
	    !learn(k, a + ARP_HDR)) {
		ipoib_drop(k, "ARP not taken");
		return;
	}
	ipoib_own_hw(k, me);
	put_be16(e, 0, ARPHRD_ETHER_);
	put_be16(e, 2, ETH_P_IP_);
	e[4] = 6;
	e[5] = 4;
	memcpy(e + 6, a + 6, 2);						/* op */
	ipoib_mac_of(a + ARP_HDR, e + ARP_HDR);				/* SHA */
	memcpy(e + ARP_HDR + 6, a + ARP_HDR + IPOIB_HWADDR_LEN, 4);		/* SPA */
	if (!memcmp(tha + 4, me + 4, 16))
		memcpy(e + ARP_HDR + 10, k->mac, 6);				/* THA */
	memcpy(e + ARP_HDR + 16, tha + IPOIB_HWADDR_LEN, 4);			/* TPA */
	if (get_be16(a, 6) == 1)
		memset(f, 0xff, 6);
	else
		memcpy(f, k->mac, 6);
	memcpy(f + 6, e + ARP_HDR, 6);
	put_be16(f, 12, ETH_P_ARP_);
	tap_write(k, f, sizeof(f));
}

void ipoib_ip_in(struct link *k, uint8_t *p, size_t len, bool headroom, bool mcast,
		 const uint8_t hw[IPOIB_HWADDR_LEN])
{
	uint8_t copy[ETH_HDR + IPOIB_UD_MTU], *f, *ip = p + IPOIB_HDR;
	size_t n = len - IPOIB_HDR;
	uint16_t type = get_be16(p, 0);

	if (type == ETH_P_IPV6_ && n < IP6_HDR) {
		n = 0;
	} else if (type == ETH_P_IPV6_ && is_nd(ip, n)) {
		f = copy;
		n = nd_rewrite(k, ip, n, f + ETH_HDR, IPOIB_UD_MTU, false);
	} else if ((type == ETH_P_IP_ || type == ETH_P_IPV6_) && headroom) {
		f = ip - ETH_HDR;	/* in place: over the IPoIB header */
	} else if ((type == ETH_P_IP_ || type == ETH_P_IPV6_) && n <= IPOIB_UD_MTU) {
		f = copy;
		memcpy(f + ETH_HDR, ip, n);
	} else {
		n = 0;
	}
	if (!n) {
		ipoib_drop(k, "a packet not delivered");
		return;
	}
	/* To us, or to a group: the Ethernet destination says which (IPv6
	 * multicast's 33:33 and the address's last four bytes, RFC 2464). */
	if (mcast && type == ETH_P_IPV6_) {
		f[0] = f[1] = 0x33;
		memcpy(f + 2, f + ETH_HDR + 36, 4);
	} else if (mcast) {
		memset(f, 0xff, 6);
	} else {
		memcpy(f, k->mac, 6);
	}
	ipoib_mac_of(hw, f + 6);
	put_be16(f, 12, type);
	tap_write(k, f, ETH_HDR + n);
}

/* A packet record: its header @w (a copy: records lie back to back, at
 * any alignment) and its payload @p, for our UD QP or a connection's. */
static void pkt_in(struct link *k, const struct verbs_wire_pkt *w, uint8_t *p)
{
	uint8_t hw[IPOIB_HWADDR_LEN] = { 0 };

	if (w->rec.type != VERBS_REC_PKT)
		return;
	if (w->dqpn != k->qpn && w->dqpn != VERBS_QPN_MCAST) {
		if (!ipoib_cm_pkt_in(k, w, p))
			ipoib_drop(k, "for no QP of ours");
		return;
	}
	if (w->len < IPOIB_HDR || w->len > IPOIB_HDR + IPOIB_UD_MTU) {
		ipoib_drop(k, "a datagram past the MTU");
		return;
	}
	if (get_be16(p, 0) == ETH_P_ARP_) {
		arp_in(k, p + IPOIB_HDR, w->len - IPOIB_HDR);
		return;
	}
	/* The source: a MAC for its QPN and LID (IP does not look). */
	ipoib_hw_set_qpn(hw, w->sqpn);
	put_be16(hw, 18, w->slid);
	ipoib_ip_in(k, p, w->len, false, verbs_lid_is_mcast(w->dlid), hw);
}

static gboolean drain(gpointer data)
{
	struct link *k = data;
	uint8_t buf[16 * 1024];	/* several records of the largest packet */
	ssize_t n;

	k->idle = 0;
	while ((n = uverbs_ctx_read(k->ctx, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (off + sizeof(struct verbs_wire_rec) <= (size_t)n) {
			struct verbs_wire_pkt w;

			memcpy(&w.rec, buf + off, sizeof(w.rec));
			if (w.rec.len < sizeof(w.rec) || off + w.rec.len > (size_t)n)
				break;
			if (w.rec.type == VERBS_REC_CREDIT)
				ipoib_cm_credit(k);
			if (w.rec.len >= sizeof(w)) {
				memcpy(&w, buf + off, sizeof(w));
				if (w.len <= w.rec.len - sizeof(w))
					pkt_in(k, &w, buf + off + sizeof(w));
			}
			off += w.rec.len;
		}
	}
	return G_SOURCE_REMOVE;
}

/* A record was queued: read them from the loop, not from inside the
 * sender's send. */
static void on_queued(void *data)
{
	struct link *k = data;

	if (!k->idle)
		k->idle = g_idle_add(drain, k);
}

/* ---- the interfaces ----------------------------------------------------------- */

static struct uverbs_dev *dev_of(struct uverbs *uv, const struct node *n)
{
	unsigned i;

	for (i = 0; i < uverbs_ndevs(uv); i++)
		if (uverbs_dev_node(uverbs_dev(uv, i)) == n)
			return uverbs_dev(uv, i);
	return NULL;
}

struct ipoib_links *ipoib_links_new(struct host *h)
{
	struct ipoib_links *l = g_new0(struct ipoib_links, 1);

	l->h = h;
	l->links = g_ptr_array_new();
	host_register_client(h, &ipoib_client, l);
	return l;
}

static void link_free(struct link *k)
{
	timerq_cancel(host_tq(k->all->h), &k->join_timer);
	/* Gone first: a held message let go below must not read it again. */
	k->gone = true;
	ipoib_cm_fini(k);
	if (k->watch)
		g_source_remove(k->watch);
	if (k->idle)
		g_source_remove(k->idle);
	if (k->ctx)
		uverbs_ctx_close(k->ctx);	/* its QPs and attachments go too */
	if (k->fd >= 0)
		close(k->fd);
	if (k->neigh)
		g_hash_table_destroy(k->neigh);
	g_free(k->frame);
	g_free(k);
}

void ipoib_links_free(struct ipoib_links *l)
{
	unsigned i;

	if (!l)
		return;
	host_unregister_client(l->h, &ipoib_client, l);
	for (i = 0; i < l->links->len; i++)
		link_free(g_ptr_array_index(l->links, i));
	g_ptr_array_free(l->links, TRUE);
	g_free(l);
}

void ipoib_links_set_verbs(struct ipoib_links *l, struct uverbs *uv)
{
	l->uv = uv;
}

/* Interface @name on port @p, whose TAP fd is @fd (taken), of P_Key
 * @pkey (0: the port's first): its UD QP made, its groups to be joined.
 * 0, or -errno. */
static int link_new(struct ipoib_links *l, struct port *p, int fd, uint16_t pkey,
		    const char *name, struct link *parent)
{
	struct uverbs_dev *d = l->uv ? dev_of(l->uv, p->node) : NULL;
	struct verbs_ioc_qp q = { .type = IPOIB_QPT_UD | VERBS_QP_BLOCK_SELF_MCAST };
	struct ifreq ifr = { 0 };
	struct link *k;
	uint8_t hw[IPOIB_HWADDR_LEN];
	int ret;

	if (!d) {
		close(fd);
		return -ENODEV;
	}
	k = g_new0(struct link, 1);
	k->all = l;
	k->port = p;
	k->pkey = pkey;
	k->parent = parent;
	k->fd = fd;
	k->qkey = IPOIB_QKEY;
	k->neigh = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	k->frame = g_malloc(FRAME_MAX);
	k->mtu = IPOIB_UD_MTU;
	g_strlcpy(k->name, name, sizeof(k->name));
	timer_init(&k->join_timer, join, k);
	k->ctx = uverbs_ctx_open(d);
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_CREATE, &q)) < 0) {
		link_free(k);
		return ret;
	}
	k->qpn = q.qpn;
	ipoib_cm_init(k);
	q.qkey = k->qkey;
	q.port = p->num;
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_SET, &q)) < 0) {
		link_free(k);
		return ret;
	}
	/* The interface's MAC stands for its IPoIB address, as a peer's
	 * does (a tap takes a new one while up, IFF_LIVE_ADDR_CHANGE). */
	ipoib_own_hw(k, hw);
	ipoib_mac_of(hw, k->mac);
	ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, k->mac, 6);
	if (ioctl(fd, SIOCSIFHWADDR, &ifr) < 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(k->mac, ifr.ifr_hwaddr.sa_data, 6);
	uverbs_ctx_set_wakeup(k->ctx, on_queued, k);
	k->watch = watch_fd(fd, G_IO_IN | G_IO_ERR | G_IO_HUP, on_tap, k);
	g_ptr_array_add(l->links, k);
	join_later(k, 0);
	return 0;
}

int ipoib_link_add(struct ipoib_links *l, struct port *p, int fd)
{
	char name[IFNAMSIZ] = "";

	(void)host_netdev_name(l->h, p, name, sizeof(name));
	return link_new(l, p, fd, 0, name, NULL);
}

char *ipoib_links_status(const struct ipoib_links *l)
{
	GString *s = g_string_new(NULL);
	unsigned i;

	for (i = 0; l && i < l->links->len; i++) {
		const struct link *k = g_ptr_array_index(l->links, i);
		GHashTableIter it;
		struct neigh *n;
		unsigned j;

		g_string_append_printf(s, "ipoib: %s: QPN 0x%06x, ", k->name, k->qpn);
		if (k->pkey)
			g_string_append_printf(s, "P_Key 0x%04x, ", k->pkey);
		if (k->g[GROUP_BCAST].mlid)
			g_string_append_printf(s, "broadcast group joined (MLID 0x%04x)",
					       k->g[GROUP_BCAST].mlid);
		else
			g_string_append(s, "not joined");
		g_string_append_printf(s, ", %s mode, MTU %u", k->connected ? "connected" : "datagram",
				       k->mtu);
		g_string_append_printf(s, ", %" G_GUINT64_FORMAT " sent, %" G_GUINT64_FORMAT
				       " received, %" G_GUINT64_FORMAT " dropped\n", k->tx, k->rx,
				       k->dropped);
		g_hash_table_iter_init(&it, k->neigh);
		while (g_hash_table_iter_next(&it, NULL, (void **)&n)) {
			g_string_append(s, "ipoib:   neighbour ");
			for (j = 0; j < IPOIB_HWADDR_LEN; j++)
				g_string_append_printf(s, "%s%02x", j ? ":" : "", n->hw[j]);
			g_string_append_printf(s, " as %02x:%02x:%02x:%02x:%02x:%02x, LID %u\n",
					       (unsigned)(n->key >> 40) & 0xff,
					       (unsigned)(n->key >> 32) & 0xff,
					       (unsigned)(n->key >> 24) & 0xff,
					       (unsigned)(n->key >> 16) & 0xff,
					       (unsigned)(n->key >> 8) & 0xff, (unsigned)n->key & 0xff,
					       ipoib_path_lid(n));
		}
		ipoib_cm_status(k, s);
	}
	return g_string_free(s, FALSE);
}

void ipoib_links_set_host(struct ipoib_links *l, int pid, const struct ipoib_host_ops *ops)
{
	l->pid = pid;
	l->ops = ops;
}

/* The interface on port @p (the parent, or its child of P_Key @pkey),
 * at the host that has it. */
static struct link *link_of(const struct port *p, uint16_t pkey)
{
	struct ipoib_links *l = host_client_at(p, &ipoib_client);
	unsigned i;

	for (i = 0; l && i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);

		if (k->port == p && k->pkey == pkey)
			return k;
	}
	return NULL;
}

static struct link *link_at(const struct port *p)
{
	return link_of(p, 0);
}

/* A P_Key as create_child reads it (sscanf %i): 0 if it is none. */
static uint16_t child_pkey(const char *buf)
{
	char *end;
	long v = strtol(buf, &end, 0);

	return end == buf || v <= 0 || v > 0xffff || v == 0x8000 ? 0 : (uint16_t)v;
}

int ipoib_port_create_child(const struct port *p, const char *buf)
{
	struct link *k = link_at(p);
	uint16_t pkey = child_pkey(buf);
	char name[IFNAMSIZ];
	unsigned i, n = 0;
	int fd, ret;

	if (!k || !k->all->ops)
		return -EOPNOTSUPP;
	if (!pkey)
		return -EINVAL;
	if (link_of(p, pkey | 0x8000))
		return -ENOTUNIQ;
	for (i = 0; i < k->all->links->len; i++)
		n += ((struct link *)g_ptr_array_index(k->all->links, i))->parent == k;
	if (n >= IPOIB_CHILDREN_MAX)
		return -EMLINK;
	/* Named for the P_Key as written (ipoib_vlan_add: "%s.%04x"). */
	if (snprintf(name, sizeof(name), "%s.%04x", k->name, pkey) >= (int)sizeof(name))
		return -EINVAL;
	if ((fd = k->all->ops->add_if(k->all->pid, name, IPOIB_UD_MTU)) < 0)
		return fd;
	if ((ret = link_new(k->all, k->port, fd, pkey | 0x8000, name, k)) == 0)
		g_info("ipoib: %s: child %s of P_Key 0x%04x", k->name, name, pkey | 0x8000);
	return ret;
}

int ipoib_port_delete_child(const struct port *p, const char *buf)
{
	struct link *k = link_at(p), *c;
	uint16_t pkey = child_pkey(buf);

	if (!k)
		return -EOPNOTSUPP;
	if (!pkey)
		return -EINVAL;
	if (!(c = link_of(p, pkey | 0x8000)))
		return -ENODEV;
	g_info("ipoib: %s: child %s gone", k->name, c->name);
	g_ptr_array_remove(k->all->links, c);
	leave_groups(c);
	link_free(c);	/* its fd closed: the device goes */
	return 0;
}

char *ipoib_port_mode(const struct port *p)
{
	const struct link *k = link_at(p);

	return k ? g_strdup(k->connected ? "connected\n" : "datagram\n") : NULL;
}

/* The interface's MTU, as dev_set_mtu: the host's network's to change. */
static void set_mtu(struct link *k, unsigned mtu)
{
	int ret = k->all->ops ? k->all->ops->set_mtu(k->all->pid, k->name, mtu) : -ENOSYS;

	if (ret < 0)
		g_warning("ipoib: %s: MTU %u not set: %s", k->name, mtu, g_strerror(-ret));
	else
		k->mtu = mtu;
}

/*
 * ipoib_set_mode: "connected\n" or "datagram\n" exactly (what `echo`
 * writes), else EINVAL. Connected mode takes its MTU, datagram mode
 * IPoIB's (the broadcast group's, 2,044 here); our connections go
 * either way (ipoib_flush_paths), theirs to us stay.
 */
int ipoib_port_set_mode(const struct port *p, const char *buf)
{
	struct link *k = link_at(p);
	bool cm;

	if (!k)
		return -EOPNOTSUPP;
	if (!strcmp(buf, "connected\n"))
		cm = true;
	else if (!strcmp(buf, "datagram\n"))
		cm = false;
	else
		return -EINVAL;
	if (cm == k->connected)
		return 0;
	k->connected = cm;
	g_info("ipoib: %s: %s mode", k->name, cm ? "connected" : "datagram");
	set_mtu(k, cm ? IPOIB_CM_MTU : MIN(IPOIB_UD_MTU, k->mtu));
	ipoib_cm_flush(k);
	return 0;
}
