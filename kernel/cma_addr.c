/* SPDX-License-Identifier: MIT */
/*
 * Addresses and routes of the rdma_cm ids (the kernel's
 * drivers/infiniband/core/addr.c and cma.c; docs/rdmacm.md "Addresses"):
 * IPv4 and IPv6 addresses mapped to CA ports, bind, address resolution,
 * and the route asked of the subnet manager by a PathRecord query.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/port.h"
#include "kernel/cma_priv.h"
#include "kernel/sa.h"
#include "kernel/sa_wire.h"
#include "lib/log.h"

#define EPHEMERAL_FIRST		32768
/* RoCE's path: IB MTU 1024 in a 1500-byte frame (iboe_get_mtu), and the
 * kernel's CMA_IBOE_PACKET_LIFETIME. */
#define ROCE_PATH_MTU		3
#define ROCE_PACKET_LIFE	16
/* The upper TID bits of our SA queries: past umad's agents' 24 bits and
 * beside the CM's (cma.c CM_HI_TID), as ib_sa's agent has its own. */
#define SA_HI_TID		0x01000001ull

/* The CA port that has this address: IPv4 by the address table, IPv6 as
 * the link-local address of a port GUID, AF_IB by GID. */
static struct port *port_of_addr(struct ucma *u, const struct sockaddr_storage *ss)
{
	const uint8_t *a = NULL;
	struct node *n;
	uint64_t guid;
	unsigned k;

	if (ss->ss_family == AF_INET)
		return fabric_port_by_ip4(cma_fabric(u),
					  be32toh(((const struct sockaddr_in *)ss)->sin_addr.s_addr));
	if (ss->ss_family == AF_INET6)
		a = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
	else if (ss->ss_family == AF_IB)
		a = ((const struct sockaddr_ib *)ss)->sib_addr.sib_raw;
	if (!a)
		return NULL;
	memcpy(&guid, a + 8, 8);
	guid = be64toh(guid);
	for (k = 0; k < cma_fabric(u)->nodes->len; k++) {
		unsigned i;

		n = g_ptr_array_index(cma_fabric(u)->nodes, k);
		for (i = 1; !node_is_switch(n) && i <= n->nports; i++)
			if (n->ports[i].guid == guid)
				return &n->ports[i];
	}
	return NULL;
}

/* The address of @p in @family, port @tcp. */
static void port_addr(const struct port *p, int family, uint16_t tcp, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		uint64_t guid = htobe64(p->guid);

		s6->sin6_family = AF_INET6;
		s6->sin6_addr.s6_addr[0] = 0xfe;
		s6->sin6_addr.s6_addr[1] = 0x80;
		memcpy(s6->sin6_addr.s6_addr + 8, &guid, 8);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htobe32(port_ip4(p));
	}
	sa_set_port(ss, tcp);
}

/* The kernel's local port range starts at 32768; ours wraps there too. */
static uint16_t ephemeral(struct ucma *u)
{
	if (u->next_port < EPHEMERAL_FIRST)
		u->next_port = EPHEMERAL_FIRST;
	return u->next_port++;
}

int cma_bind(struct cma_id *id, const struct sockaddr *sa, size_t len)
{
	struct sockaddr_storage ss = { 0 };
	struct port *p = NULL;

	if (id->state != CMA_IDLE)
		return -EINVAL;
	if (len < sizeof(sa->sa_family) || len > sizeof(ss))
		return -EINVAL;
	memcpy(&ss, sa, len);
	switch (ss.ss_family) {
	case AF_INET:
	case AF_INET6:
		/* lo's address is a netdev's, not an IB one: the kernel's
		 * cma_validate_port() finds no port for it (ENODEV), where
		 * an address no interface has is EADDRNOTAVAIL
		 * (rdma_translate_ip). libfabric's verbs provider binds
		 * "localhost" when given no address, and fails the same.
		 * (A port's own loopback address, on the machine's network
		 * of run --host-network, is the port's.) */
		if (!sa_is_any(&ss)) {
			p = port_of_addr(id->u, &ss);
			if (!p && sa_is_loopback(&ss))
				return -ENODEV;
			if (!p || !cma_host_has_port(id->u, p))
				return -EADDRNOTAVAIL;
		}
		if (!sa_port(&ss))
			sa_set_port(&ss, ephemeral(id->u));
		break;
	case AF_IB:
		/* Native IB addressing (librdmacm probes it with a bind): an
		 * any-address bind only; sockaddr_ib destinations are not
		 * resolved (docs/rdmacm.md "Not yet"). */
		if (!sa_is_any(&ss))
			return -EADDRNOTAVAIL;
		break;
	default:
		return -EAFNOSUPPORT;
	}
	id->src = ss;
	id->port = p;
	id->state = CMA_BOUND;
	return 0;
}

/* The local port for a destination when the id has none: the destination
 * itself (loopback), else the host's port on the same /16 (the default
 * plan's port number), else its first Active one (also for a multicast
 * destination, @dst NULL: the kernel's route to it is the default one). */
struct port *cma_pick_port(struct cma_id *id, struct port *dst)
{
	struct ucma *u = id->u;
	struct port *best = NULL;
	unsigned i;

	if (dst && cma_host_has_port(u, dst))
		return dst;
	for (i = 0; i < host_nports(u->hw); i++) {
		struct port *p = host_port(u->hw, i, NULL);

		if (node_is_switch(p->node))
			continue;
		if (dst && (port_ip4(p) >> 16) == (port_ip4(dst) >> 16))
			return p;
		if (!best && p->state == PORT_ACTIVE)
			best = p;
	}
	return best;
}

int cma_resolve_addr(struct cma_id *id, const struct sockaddr *src, size_t src_len,
		     const struct sockaddr *dst, size_t dst_len, unsigned timeout_ms)
{
	struct sockaddr_storage d = { 0 };
	struct port *dp, *lp;
	bool mcast;
	int r;

	if (dst_len < sizeof(dst->sa_family) || dst_len > sizeof(d))
		return -EINVAL;
	memcpy(&d, dst, dst_len);
	if (id->state == CMA_IDLE) {
		struct sockaddr_storage any = { .ss_family = d.ss_family };

		if (src && src_len >= sizeof(src->sa_family) && src->sa_family)
			r = cma_bind(id, src, src_len);
		else
			r = cma_bind(id, (struct sockaddr *)&any, sizeof(any));
		if (r < 0)
			return r;
	}
	if (id->state != CMA_BOUND)
		return -EINVAL;
	if (d.ss_family != AF_INET && d.ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	id->dst = d;
	/* A group's address resolves at once, to the source's port (IPoIB
	 * maps it without ARP: ip_ib_mc_map), with no remote port; the
	 * group is joined by rdma_join_multicast. */
	mcast = cma_addr_is_mcast(&d);
	dp = mcast ? NULL : port_of_addr(id->u, &d);
	if (!dp && !mcast) {
		/* Nobody answers the ARP: ADDR_ERROR when it times out. */
		id->wait = PENDING_ADDR_ERROR;
		cma_arm(id, (uint64_t)(timeout_ms ? timeout_ms : 2000) * 1000);
		return 0;
	}
	lp = id->port ? id->port : cma_pick_port(id, dp);
	if (!lp || lp->state != PORT_ACTIVE) {
		cma_event(id, UCMA_EV_ADDR_ERROR, -ENETUNREACH, NULL);
		return 0;
	}
	if (sa_is_any(&id->src)) {
		uint16_t tcp = sa_port(&id->src);

		port_addr(lp, d.ss_family == AF_INET6 ? AF_INET6 : AF_INET, tcp, &id->src);
	}
	id->port = lp;
	id->remote = dp;
	id->state = CMA_ADDR_RESOLVED;
	cma_event(id, UCMA_EV_ADDR_RESOLVED, 0, NULL);
	return 0;
}

/* A PathRecord (IBA 15.2.5.16, the SA's or ibacm's) as the route. */
static void take_path(struct cma_id *id, const struct ibv_path_record *pr)
{
	memset(&id->path, 0, sizeof(id->path));
	id->path.slid = be16toh(pr->slid);
	id->path.dlid = be16toh(pr->dlid);
	memcpy(id->path.sgid, &pr->sgid, 16);
	memcpy(id->path.dgid, &pr->dgid, 16);
	id->path.pkey = be16toh(pr->pkey);
	id->path.sl = be16toh(pr->qosclass_sl) & 0xf;
	id->path.mtu = pr->mtu & 0x3f;
	id->path.rate = pr->rate & 0x3f;
	id->path.packet_life = pr->packetlifetime & 0x3f;
}

static void route_done(struct cma_id *id)
{
	id->has_path = true;
	id->state = CMA_ROUTE_RESOLVED;
	cma_event(id, UCMA_EV_ROUTE_RESOLVED, 0, NULL);
}

static void route_failed(struct cma_id *id, int status)
{
	id->state = CMA_ADDR_RESOLVED;
	cma_event(id, UCMA_EV_ROUTE_ERROR, status, NULL);
}

static void forget_query(struct cma_id *id)
{
	if (id->wait == PENDING_SA)
		g_hash_table_remove(id->u->sa_queries, GUINT_TO_POINTER(id->sa_tid));
	cma_disarm(id);
}


/*
 * SubnAdmGet(PathRecord) to the SM's LID (IBA 15.2.5.16; the kernel's
 * cma_query_ib_route asks for SGID, DGID, P_Key, one reversible path),
 * answered by cma_sa_answer() or given up after @timeout_ms.
 */
static void query_sa(struct cma_id *id, unsigned timeout_ms)
{
	struct ucma *u = id->u;
	struct port *lp = id->port, *m = port_mgmt(lp);
	struct umad_sa_packet sa;
	struct ibv_path_record pr = { 0 };
	uint8_t sgid[16], dgid[16];

	do
		id->sa_tid = ++u->next_sa_tid;
	while (!id->sa_tid || g_hash_table_contains(u->sa_queries, GUINT_TO_POINTER(id->sa_tid)));
	sa_wire_hdr(&sa, UMAD_METHOD_GET, UMAD_SA_ATTR_PATH_REC, SA_HI_TID << 32 | id->sa_tid,
		   PR_COMP_SGID | PR_COMP_DGID | PR_COMP_REVERSIBLE | PR_COMP_NUMB_PATH |
		   PR_COMP_PKEY);
	cma_port_gid(lp, sgid);
	cma_port_gid(id->remote, dgid);
	memcpy(&pr.sgid, sgid, 16);
	memcpy(&pr.dgid, dgid, 16);
	pr.reversible_numpath = 0x80 | 1;
	pr.pkey = htobe16(port_first_pkey(lp));
	memcpy(sa.data, &pr, sizeof(pr));
	g_hash_table_insert(u->sa_queries, GUINT_TO_POINTER(id->sa_tid), id);
	id->wait = PENDING_SA;
	cma_arm(id, (uint64_t)(timeout_ms ? timeout_ms : 1000) * 1000);
	cma_send_mad(u, lp, m->sm_lid, NULL, port_first_pkey(lp), m->sm_sl,
		     (const uint8_t *)&sa);
}

bool cma_sa_answer(struct ucma *u, const struct mad_pkt *pkt)
{
	const struct umad_sa_packet *sa = (const void *)pkt->mad;
	uint64_t tid = mad_tid(pkt->mad);
	struct ibv_path_record pr;
	struct cma_id *id;
	uint16_t status;

	if (mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM || mad_method(pkt->mad) != UMAD_METHOD_GET_RESP ||
	    tid >> 32 != SA_HI_TID)
		return false;
	id = g_hash_table_lookup(u->sa_queries, GUINT_TO_POINTER((uint32_t)tid));
	if (!id)
		return true;	/* one given up on: dropped, as ib_mad drops it */
	forget_query(id);
	status = mad_status(pkt->mad);
	if (status == UMAD_STATUS_ATTR_NOT_SUPPORTED) {
		/* No SA agent at the SM's LID: the SM that set it stopped.
		 * The emulator answers as it would have (sa_path). */
		if (!sa_path(id->port, id->remote, port_first_pkey(id->port), &pr)) {
			route_failed(id, -EHOSTUNREACH);
			return true;
		}
		take_path(id, &pr);
		route_done(id);
		return true;
	}
	if (status) {
		/* ib_sa's callback gets -EINVAL for an SA status. */
		g_debug("rdma_cm: PathRecord query: SA status 0x%04x", status);
		route_failed(id, -EINVAL);
		return true;
	}
	memcpy(&pr, sa->data, sizeof(pr));
	take_path(id, &pr);
	route_done(id);
	return true;
}

void cma_addr_timeout(struct cma_id *id)
{
	if (id->wait == PENDING_SA) {
		forget_query(id);
		route_failed(id, -ETIMEDOUT);
		return;
	}
	id->wait = PENDING_NONE;
	cma_event(id, UCMA_EV_ADDR_ERROR, -ETIMEDOUT, NULL);
}

/* A RoCE route (the kernel's cma_resolve_iboe_route): the GIDs of the two
 * addresses (RoCE v2), no LIDs, the MTU of the Ethernet interface (1024),
 * the port's rate, and RoCE's packet lifetime (CMA_IBOE_PACKET_LIFETIME). */
static void roce_route(struct cma_id *id)
{
	struct cma_path *p = &id->path;

	memset(p, 0, sizeof(*p));
	cma_port_gid(id->port, p->sgid);
	cma_port_gid(id->remote, p->dgid);
	p->pkey = PKEY_DEFAULT;
	p->mtu = MIN(id->port->neighbor_mtu, ROCE_PATH_MTU);
	p->rate = sa_rate_code(id->port);
	p->packet_life = ROCE_PACKET_LIFE;
}

/* The path to the resolved destination: asked of the SA at the port's SM
 * LID, as the kernel does; a fabric whose SM LID is this port's own and
 * no SA agent there (--configured) gets the emulator's answer. */
int cma_resolve_route(struct cma_id *id, unsigned timeout_ms)
{
	struct port *lp = id->port, *rp = id->remote;

	/* A multicast destination has no path (the group's address handle
	 * comes with the join). */
	if (id->state != CMA_ADDR_RESOLVED || id->wait == PENDING_SA || !id->remote)
		return -EINVAL;
	/* RoCE: no SA; the path is the addresses' (cma_resolve_iboe_route). */
	if (port_is_roce(lp)) {
		if (lp->state != PORT_ACTIVE || rp->state != PORT_ACTIVE || !port_is_roce(rp)) {
			route_failed(id, -EHOSTUNREACH);
			return 0;
		}
		roce_route(id);
		route_done(id);
		return 0;
	}
	/* No path between ports that are not Active or have no LID: the
	 * query would fail (ROUTE_ERROR). */
	if (lp->state != PORT_ACTIVE || rp->state != PORT_ACTIVE || !cma_port_lid(lp) ||
	    !cma_port_lid(rp) || !port_mgmt(lp)->sm_lid) {
		route_failed(id, -EHOSTUNREACH);
		return 0;
	}
	query_sa(id, timeout_ms);
	return 0;
}

int cma_set_ib_path(struct cma_id *id, const struct ib_path_rec_data *p, size_t n)
{
	struct ibv_path_record pr;
	size_t i;

	/* ucma_set_ib_path(): the primary path, on a resolved address. */
	if (id->state != CMA_ADDR_RESOLVED || id->wait == PENDING_SA)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (p[i].flags & IBV_PATH_FLAG_PRIMARY)
			break;
	if (i == n)
		return -EINVAL;
	memcpy(&pr, p[i].path_rec, sizeof(pr));
	take_path(id, &pr);
	route_done(id);
	return 0;
}

void cma_addr_destroy(struct cma_id *id)
{
	forget_query(id);
}
