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
#include "kernel/ipoib_link.h"
#include "kernel/sa_priv.h"
#include "kernel/sa_wire.h"
#include "lib/log.h"

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
#define ETH_HDR			14
#define ETH_P_IP_		0x0800
#define ETH_P_ARP_		0x0806
#define IPOIB_HDR		4	/* RFC 4391 §6: EtherType, reserved */
#define ARP_HDR			8
#define ARPHRD_ETHER_		1
#define ARPHRD_INFINIBAND_	32
#define ETH_ARP_LEN		(ARP_HDR + 2 * (6 + 4))
#define IB_ARP_LEN		(ARP_HDR + 2 * (IPOIB_HWADDR_LEN + 4))

struct neigh {
	uint64_t key;		/* its MAC, as a number */
	uint8_t hw[IPOIB_HWADDR_LEN];
	uint16_t lid;		/* the path's DLID */
};

struct link {
	struct ipoib_links *all;
	struct port *port;
	struct uverbs_ctx *ctx;
	uint32_t qpn, qkey;
	int fd;
	guint watch, idle;
	uint8_t mac[6];		/* the TAP's */
	uint8_t mgid[16];
	uint16_t mlid;		/* the broadcast group's; 0 until joined */
	uint32_t join_tid;	/* the join asked; 0: none */
	struct timer join_timer;
	GHashTable *neigh;	/* &key -> struct neigh, owned */
	bool neigh_full_said;
	uint64_t tx, rx, dropped;
};

struct ipoib_links {
	struct host *h;
	struct uverbs *uv;
	GPtrArray *links;	/* struct link *, owned */
	uint32_t next_tid;
};

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

/* Our hardware address (RFC 4391 §9.1.1): flags (no connected mode),
 * the QPN, the port's GID 0. */
static void own_hw(const struct link *k, uint8_t hw[IPOIB_HWADDR_LEN])
{
	hw[0] = 0;
	hw[1] = (uint8_t)(k->qpn >> 16);
	hw[2] = (uint8_t)(k->qpn >> 8);
	hw[3] = (uint8_t)k->qpn;
	port_gid(k->port, 0, hw + 4);
}

static uint32_t hw_qpn(const uint8_t hw[IPOIB_HWADDR_LEN])
{
	return (uint32_t)hw[1] << 16 | (uint32_t)hw[2] << 8 | hw[3];
}

/* The path to @hw's port: what the SA's PathRecord would give for its
 * GID, the port's LID, read here from the fabric. 0: nobody has it. */
static uint16_t path_lid(const struct link *k, const uint8_t hw[IPOIB_HWADDR_LEN])
{
	struct port *to = sa_port_by_guid(host_fabric(k->all->h), get_be64(hw + 4, 8));

	return to && to->state == PORT_ACTIVE ? to->lid : 0;
}

/* Learn (or refresh) the neighbour @hw, seen in an ARP packet. */
static struct neigh *learn(struct link *k, const uint8_t hw[IPOIB_HWADDR_LEN])
{
	uint8_t mac[6];
	struct neigh *n;
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
	}
	memcpy(n->hw, hw, IPOIB_HWADDR_LEN);
	n->lid = path_lid(k, hw);
	return n;
}

/* ---- the broadcast group --------------------------------------------------- */

/* ff12:401b:<P_Key>::ffff:ffff, IPv4's broadcast group (RFC 4391 §4). */
static void broadcast_mgid(const struct link *k, uint8_t mgid[16])
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x12;
	mgid[2] = 0x40;
	mgid[3] = 0x1b;
	put_be16(mgid, 4, port_first_pkey(k->port) | 0x8000);
	memset(mgid + 12, 0xff, 4);
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
static void join(struct timer *t, void *ctx)
{
	struct link *k = ctx;
	struct port *m = port_mgmt(k->port);
	struct umad_sa_packet sa;
	struct mad_pkt pkt = { 0 };
	uint8_t gid[16];

	(void)t;
	if (k->port->state != PORT_ACTIVE || !m->sm_lid || !k->port->lid) {
		join_later(k, JOIN_RETRY_US);
		return;
	}
	k->join_tid = ++k->all->next_tid ? k->all->next_tid : ++k->all->next_tid;
	sa_wire_hdr(&sa, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC,
		    IPOIB_HI_TID << 32 | k->join_tid,
		    MCR_MGID | MCR_PORT_GID | MCR_QKEY | MCR_PKEY | MCR_JOIN_STATE | MCR_SL |
		    MCR_FLOW_LABEL | MCR_TCLASS);
	broadcast_mgid(k, k->mgid);
	port_gid(k->port, 0, gid);
	mad_set_array(sa.data, 0, IB_SA_MCM_MGID_F, k->mgid);
	mad_set_array(sa.data, 0, IB_SA_MCM_PORTGID_F, gid);
	mad_set_field(sa.data, 0, IB_SA_MCM_QKEY_F, IPOIB_QKEY);
	mad_set_field(sa.data, 0, IB_SA_MCM_PKEY_F, port_first_pkey(k->port) | 0x8000);
	mad_set_field(sa.data, 0, IB_SA_MCM_JOIN_STATE_F, 1);	/* FullMember */
	memcpy(pkt.mad, &sa, MAD_SIZE);
	pkt.slid = k->port->lid;
	pkt.dlid = m->sm_lid;
	pkt.sqp = 1;
	pkt.dqp = 1;
	pkt.qkey = UMAD_QKEY;
	pkt.pkey = port_first_pkey(k->port);
	pkt.sl = m->sm_sl;
	join_later(k, JOIN_RETRY_US);	/* unless answered first */
	fabric_send(host_fabric(k->all->h), k->port, &pkt);
}

static void leave_group(struct link *k)
{
	struct verbs_ioc_mcast a = { .qpn = k->qpn, .mlid = k->mlid };

	if (!k->mlid)
		return;
	memcpy(a.gid, k->mgid, 16);
	(void)uverbs_ctx_ioctl(k->ctx, VERBS_IOC_MCAST_DETACH, &a);
	k->mlid = 0;
}

/* The SA's answer to a join: the group's MLID and Q_Key, our QP attached. */
static void joined(struct link *k, const uint8_t *rec)
{
	struct verbs_ioc_mcast a = { .qpn = k->qpn };
	struct verbs_ioc_qp q = { .qpn = k->qpn, .port = k->port->num };
	int ret;

	leave_group(k);
	a.mlid = (uint16_t)mad_get_field((void *)rec, 0, IB_SA_MCM_MLID_F);
	mad_get_array((void *)rec, 0, IB_SA_MCM_MGID_F, a.gid);
	q.qkey = k->qkey = mad_get_field((void *)rec, 0, IB_SA_MCM_QKEY_F);
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_SET, &q)) < 0 ||
	    (ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_MCAST_ATTACH, &a)) < 0) {
		g_warning("ipoib: port %u: the broadcast group's MLID 0x%04x not attached: %s",
			  k->port->num, a.mlid, g_strerror(-ret));
		join_later(k, JOIN_RETRY_US);
		return;
	}
	k->mlid = a.mlid;
	timerq_cancel(host_tq(k->all->h), &k->join_timer);
	g_debug("ipoib: port %u joined the broadcast group, MLID 0x%04x Q_Key 0x%x",
		k->port->num, k->mlid, k->qkey);
}

static enum upper_verdict on_mad(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct ipoib_links *l = ctx;
	const struct umad_sa_packet *sa = (const void *)pkt->mad;
	uint64_t tid = mad_tid(pkt->mad);
	unsigned i;

	if (pkt->data || mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM ||
	    !(mad_method(pkt->mad) & 0x80) || tid >> 32 != IPOIB_HI_TID)
		return UPPER_UNCLAIMED;
	for (i = 0; i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);

		if (k->port != port || k->join_tid != (uint32_t)tid)
			continue;
		k->join_tid = 0;
		if (mad_status(pkt->mad))
			g_debug("ipoib: port %u: the join was refused (status 0x%x)", port->num,
				mad_status(pkt->mad));	/* asked again */
		else
			joined(k, sa->data);
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

		if (k->port != port || ((what & ~PORT_CHANGED_STATE) == 0 && k->mlid &&
					port->state == PORT_ACTIVE))
			continue;
		leave_group(k);
		join_later(k, 0);
	}
}

static const struct host_client ipoib_client = { .deliver = on_mad, .changed = on_changed };

/* ---- frames out: TAP to fabric ---------------------------------------------- */

/* A UD SEND of @len bytes (IPoIB header included) to @dlid/@dqpn, to the
 * broadcast group when @dlid is 0. */
static void send_ud(struct link *k, uint16_t dlid, uint32_t dqpn, const uint8_t *data,
		    size_t len)
{
	uint8_t buf[sizeof(struct verbs_wire_pkt) + IPOIB_HDR + IPOIB_UD_MTU];
	struct verbs_wire_pkt *w = (struct verbs_wire_pkt *)buf;
	int pi = port_pkey_find(k->port, port_first_pkey(k->port));

	memset(w, 0, sizeof(*w));
	w->rec.type = VERBS_REC_PKT;
	w->rec.len = (uint32_t)(sizeof(*w) + len);
	w->port = k->port->num;
	w->opcode = OP_UD_SEND_ONLY;
	w->pkey_index = (uint16_t)MAX(pi, 0);
	w->sqpn = k->qpn;
	w->qkey = k->qkey;
	w->len = (uint32_t)len;
	if (dlid) {
		w->dlid = dlid;
		w->dqpn = dqpn;
	} else {
		/* A multicast packet carries its GRH, the MGID its DGID. */
		w->dlid = k->mlid;
		w->dqpn = VERBS_QPN_MCAST;
		w->flags = VERBS_PKT_GRH;
		w->grh_hop_limit = 1;
		memcpy(w->dgid, k->mgid, 16);
	}
	memcpy(buf + sizeof(*w), data, len);
	if (uverbs_ctx_write(k->ctx, buf, w->rec.len) < 0)
		k->dropped++;	/* a full receiver: IP's to retransmit */
	else
		k->tx++;
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
	own_hw(k, a + ARP_HDR);
	memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN, arp + ARP_HDR + 6, 4);	/* SPA */
	memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN + 4 + IPOIB_HWADDR_LEN, arp + ARP_HDR + 16, 4);
	/* THA: a reply names the asker, whose address we learnt. */
	key = mac_key(arp + ARP_HDR + 10);
	if (key && (n = g_hash_table_lookup(k->neigh, &key)))
		memcpy(a + ARP_HDR + IPOIB_HWADDR_LEN + 4, n->hw, IPOIB_HWADDR_LEN);
	if (op == 2 && n && n->lid)
		send_ud(k, n->lid, hw_qpn(n->hw), out, sizeof(out));
	else if (op == 1 && k->mlid)
		send_ud(k, 0, 0, out, sizeof(out));
	else
		goto drop;
	return;
drop:
	k->dropped++;
}

static void frame_out(struct link *k, const uint8_t *f, size_t len)
{
	uint8_t out[IPOIB_HDR + IPOIB_UD_MTU];
	uint16_t type;
	struct neigh *n;
	uint64_t key;

	if (len < ETH_HDR) {
		k->dropped++;
		return;
	}
	type = get_be16(f, 12);
	if (type == ETH_P_ARP_) {
		arp_out(k, f + ETH_HDR, len - ETH_HDR);
		return;
	}
	/* IPv4 only: IPv6's neighbour discovery carries link-layer
	 * addresses this edge does not translate yet (docs/ipoib.md). */
	if (type != ETH_P_IP_ || len - ETH_HDR > IPOIB_UD_MTU) {
		k->dropped++;
		return;
	}
	put_be16(out, 0, type);
	put_be16(out, 2, 0);
	memcpy(out + IPOIB_HDR, f + ETH_HDR, len - ETH_HDR);
	if (f[0] & 1) {		/* broadcast, multicast: the broadcast group */
		if (k->mlid)
			send_ud(k, 0, 0, out, IPOIB_HDR + len - ETH_HDR);
		else
			k->dropped++;
		return;
	}
	key = mac_key(f);
	n = g_hash_table_lookup(k->neigh, &key);
	if (n && !n->lid)
		n->lid = path_lid(k, n->hw);
	if (!n || !n->lid) {
		k->dropped++;
		return;
	}
	send_ud(k, n->lid, hw_qpn(n->hw), out, IPOIB_HDR + len - ETH_HDR);
}

static gboolean on_tap(gint fd, GIOCondition cond, gpointer data)
{
	struct link *k = data;
	uint8_t f[ETH_HDR + IPOIB_UD_MTU + 64];
	unsigned i;

	(void)cond;
	for (i = 0; i < TAP_BURST; i++) {
		ssize_t n = read(fd, f, sizeof(f));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		frame_out(k, f, (size_t)n);
	}
	return G_SOURCE_CONTINUE;
}

/* ---- packets in: fabric to TAP ---------------------------------------------- */

static void tap_write(struct link *k, const uint8_t *f, size_t len)
{
	if (write(k->fd, f, len) == (ssize_t)len)
		k->rx++;
	else
		k->dropped++;	/* the host's queue is full, or it went */
}

/* An IPoIB ARP packet: learnt, then given to the host in Ethernet's form. */
static void arp_in(struct link *k, const uint8_t *a, size_t len)
{
	uint8_t f[ETH_HDR + ETH_ARP_LEN] = { 0 }, *e = f + ETH_HDR, me[IPOIB_HWADDR_LEN];
	const uint8_t *tha = a + ARP_HDR + IPOIB_HWADDR_LEN + 4;

	if (len < IB_ARP_LEN || get_be16(a, 0) != ARPHRD_INFINIBAND_ ||
	    get_be16(a, 2) != ETH_P_IP_ || a[4] != IPOIB_HWADDR_LEN || a[5] != 4 ||
	    !learn(k, a + ARP_HDR)) {
		k->dropped++;
		return;
	}
	own_hw(k, me);
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

static void pkt_in(struct link *k, const struct verbs_wire_pkt *w)
{
	const uint8_t *p = (const uint8_t *)(w + 1);
	uint8_t f[ETH_HDR + IPOIB_UD_MTU], hw[IPOIB_HWADDR_LEN] = { 0 };
	uint16_t type;

	if (w->rec.type != VERBS_REC_PKT || w->len < IPOIB_HDR)
		return;
	type = get_be16(p, 0);
	if (type == ETH_P_ARP_) {
		arp_in(k, p + IPOIB_HDR, w->len - IPOIB_HDR);
		return;
	}
	if (type != ETH_P_IP_ || w->len - IPOIB_HDR > IPOIB_UD_MTU) {
		k->dropped++;
		return;
	}
	/* To us, or to the group: the Ethernet destination says which. */
	if (w->dlid == k->mlid && k->mlid)
		memset(f, 0xff, 6);
	else
		memcpy(f, k->mac, 6);
	/* The source: a MAC for its QPN and LID (IP does not look). */
	hw[1] = (uint8_t)(w->sqpn >> 16);
	hw[2] = (uint8_t)(w->sqpn >> 8);
	hw[3] = (uint8_t)w->sqpn;
	put_be16(hw, 18, w->slid);
	ipoib_mac_of(hw, f + 6);
	put_be16(f, 12, type);
	memcpy(f + ETH_HDR, p + IPOIB_HDR, w->len - IPOIB_HDR);
	tap_write(k, f, ETH_HDR + w->len - IPOIB_HDR);
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
			const struct verbs_wire_pkt *w = (const void *)(buf + off);

			if (w->rec.len < sizeof(w->rec) || off + w->rec.len > (size_t)n)
				break;
			if (w->rec.len >= sizeof(*w))
				pkt_in(k, w);
			off += w->rec.len;
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
	if (k->watch)
		g_source_remove(k->watch);
	if (k->idle)
		g_source_remove(k->idle);
	if (k->ctx)
		uverbs_ctx_close(k->ctx);	/* its QP and attachment go too */
	if (k->fd >= 0)
		close(k->fd);
	if (k->neigh)
		g_hash_table_destroy(k->neigh);
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

int ipoib_link_add(struct ipoib_links *l, struct port *p, int fd)
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
	k->fd = fd;
	k->qkey = IPOIB_QKEY;
	k->neigh = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	timer_init(&k->join_timer, join, k);
	k->ctx = uverbs_ctx_open(d);
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_CREATE, &q)) < 0) {
		link_free(k);
		return ret;
	}
	k->qpn = q.qpn;
	q.qkey = k->qkey;
	q.port = p->num;
	if ((ret = uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_SET, &q)) < 0) {
		link_free(k);
		return ret;
	}
	/* The interface's MAC stands for its IPoIB address, as a peer's
	 * does (a tap takes a new one while up, IFF_LIVE_ADDR_CHANGE). */
	own_hw(k, hw);
	ipoib_mac_of(hw, k->mac);
	ifr.ifr_hwaddr.sa_family = 1;	/* ARPHRD_ETHER */
	memcpy(ifr.ifr_hwaddr.sa_data, k->mac, 6);
	if (ioctl(fd, SIOCSIFHWADDR, &ifr) < 0 && ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(k->mac, ifr.ifr_hwaddr.sa_data, 6);
	uverbs_ctx_set_wakeup(k->ctx, on_queued, k);
	k->watch = g_unix_fd_add(fd, G_IO_IN, on_tap, k);
	g_ptr_array_add(l->links, k);
	join_later(k, 0);
	return 0;
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

		char name[IFNAMSIZ] = "?";

		(void)host_netdev_name(l->h, k->port, name, sizeof(name));
		g_string_append_printf(s, "ipoib: %s: QPN 0x%06x, ", name, k->qpn);
		if (k->mlid)
			g_string_append_printf(s, "broadcast group joined (MLID 0x%04x)", k->mlid);
		else
			g_string_append(s, "not joined");
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
					       n->lid);
		}
	}
	return g_string_free(s, FALSE);
}
