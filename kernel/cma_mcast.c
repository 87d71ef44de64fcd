/* SPDX-License-Identifier: MIT */
/*
 * Multicast joins of rdma_cm ids (docs/rdmacm.md "Multicast"; the
 * kernel's cma.c rdma_join_multicast, cma_join_ib_multicast and
 * cma_set_mgid, core/multicast.c): the group's MGID from the address, a
 * SubnAdmSet(MCMemberRecord) to the SA (IBA 15.2.5.17), which makes the
 * group and programs the switches, and the MULTICAST_JOIN event with the
 * group's address handle, to which librdmacm attaches the id's QP.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/cma_priv.h"
#include "kernel/sa_wire.h"
#include "lib/log.h"

/* The upper TID bits of our joins and leaves, beside the PathRecord
 * queries' (cma_addr.c SA_HI_TID). */
#define MC_HI_TID		0x01000002ull
/* ib_sa's join waits this long for the SA (core/multicast.c send_join). */
#define JOIN_TIMEOUT_US		(3000 * 1000)

bool cma_addr_is_mcast(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (be32toh(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 28) == 0xe;
	if (ss->ss_family == AF_INET6)
		return ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr[0] == 0xff;
	if (ss->ss_family == AF_IB)
		return ((const struct sockaddr_ib *)ss)->sib_addr.sib_raw[0] == 0xff;
	return false;
}

/*
 * The group's MGID as cma_set_mgid() maps the address: an AF_IB one as it
 * is; an IPv6 one the SA gave (ff1x:a01b::) as it is; other IP addresses
 * as IPoIB maps them (ip_ib_mc_map, ipv6_ib_mc_map: link-local scope, the
 * signature 401b or 601b, the P_Key, the address's low 28 bits or 80),
 * with 01 for 1b for the UDP port space (the RDMA CM's signature). The
 * any address: MGID 0, the SA picks one.
 */
static void mgid_of(const struct cma_mc *mc, uint16_t pkey, uint8_t mgid[16])
{
	const struct sockaddr_storage *ss = &mc->addr;
	const uint8_t *a6 = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
	uint32_t ip;

	memset(mgid, 0, 16);
	if (ss->ss_family == AF_IB) {
		memcpy(mgid, ((const struct sockaddr_ib *)ss)->sib_addr.sib_raw, 16);
		return;
	}
	if (sa_is_any(ss))
		return;
	if (ss->ss_family == AF_INET6 && a6[0] == 0xff && (a6[1] & 0xf0) == 0x10 &&
	    a6[2] == 0xa0 && a6[3] == 0x1b) {
		memcpy(mgid, a6, 16);
		return;
	}
	mgid[0] = 0xff;
	mgid[1] = 0x12;
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
	if (ss->ss_family == AF_INET6) {
		mgid[2] = 0x60;
		memcpy(mgid + 6, a6 + 6, 10);
	} else {
		ip = be32toh(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
		mgid[2] = 0x40;
		mgid[12] = (uint8_t)((ip >> 24) & 0x0f);
		mgid[13] = (uint8_t)(ip >> 16);
		mgid[14] = (uint8_t)(ip >> 8);
		mgid[15] = (uint8_t)ip;
	}
	mgid[3] = mc->id->ps == RDMA_PS_UDP ? 0x01 : 0x1b;
}

/* An MCMemberRecord MAD from @mc's port to its SM's SA. */
static void send_mcr(struct cma_mc *mc, uint8_t method, uint64_t comp, const uint8_t *rec,
		     uint32_t tid)
{
	struct port *m = port_mgmt(mc->port);
	struct umad_sa_packet sa;

	sa_wire_hdr(&sa, method, UMAD_SA_ATTR_MCMEMBER_REC, MC_HI_TID << 32 | tid, comp);
	memcpy(sa.data, rec, IB_SA_DATA_SIZE);
	cma_send_mad(mc->id->u, mc->port, m->sm_lid, NULL, port_first_pkey(mc->port), m->sm_sl,
		     (const uint8_t *)&sa);
}

static uint32_t new_tid(struct ucma *u)
{
	do
		++u->next_mc_tid;
	while (!u->next_mc_tid ||
	       g_hash_table_contains(u->mc_queries, GUINT_TO_POINTER(u->next_mc_tid)));
	return u->next_mc_tid;
}

static void forget_query(struct cma_mc *mc)
{
	if (mc->sa_tid)
		g_hash_table_remove(mc->id->u->mc_queries, GUINT_TO_POINTER(mc->sa_tid));
	mc->sa_tid = 0;
	if (mc->timer.fn)
		timerq_cancel(cma_tq(mc->id->u), &mc->timer);
}

static void join_failed(struct cma_mc *mc, int status)
{
	struct rdma_ucm_event_resp ev = { 0 };

	cma_mc_event(mc, UCMA_EV_MULTICAST_ERROR, status, &ev);
}

static void join_timeout(struct timer *t, void *ctx)
{
	struct cma_mc *mc = ctx;

	(void)t;
	forget_query(mc);
	join_failed(mc, -ETIMEDOUT);
}

/*
 * A RoCE join (the kernel's cma_iboe_join_multicast): no SA. The MGID is
 * the address itself (an IPv4 one mapped, ::ffff:a.b.c.d), the event's
 * address handle a GRH to it from the port's RoCE v2 GID, hop limit 64
 * for IPv4 (1 otherwise), no LID; it comes from a work queue there, from
 * a timer of no delay here. What forwards the group to a port is a QP
 * attached there (kernel/uverbs_mcast.c), as IGMP snooping would have
 * it once the host joins.
 */
static void roce_joined(struct timer *t, void *ctx)
{
	struct cma_mc *mc = ctx;
	struct rdma_ucm_event_resp ev = { 0 };
	struct ib_uverbs_ah_attr *ah = &ev.param.ud.ah_attr;

	(void)t;
	mc->joined = true;
	ev.param.ud.qp_num = 0xffffff;
	ev.param.ud.qkey = UDP_QKEY;
	memcpy(ah->grh.dgid, mc->mgid, 16);
	ah->grh.sgid_index = (uint8_t)port_roce_v2_index(mc->port);
	ah->grh.hop_limit = mc->addr.ss_family == AF_INET ? ROCE_HOP_LIMIT : 1;
	ah->is_global = 1;
	ah->port_num = mc->port->num;
	cma_mc_event(mc, UCMA_EV_MULTICAST_JOIN, 0, &ev);
}

static int roce_join(struct cma_mc *mc)
{
	const struct sockaddr_storage *ss = &mc->addr;

	memset(mc->mgid, 0, 16);
	if (ss->ss_family == AF_INET) {
		mc->mgid[10] = mc->mgid[11] = 0xff;
		memcpy(mc->mgid + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(mc->mgid, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else {
		memcpy(mc->mgid, ((const struct sockaddr_ib *)ss)->sib_addr.sib_raw, 16);
	}
	if (!fabric_gid_is_mcast(mc->mgid))
		return -EINVAL;
	if (mc->timer.fn)
		timerq_cancel(cma_tq(mc->id->u), &mc->timer);
	timer_init(&mc->timer, roce_joined, mc);
	timerq_arm(cma_tq(mc->id->u), &mc->timer, 0);
	return 0;
}

/*
 * cma_join_ib_multicast(): MGID, PortGID (the port's GID 0), P_Key, Q_Key
 * (RDMA_UDP_QKEY), JoinState, and SL, FlowLabel and TClass 0 (the kernel
 * copies those from the IPoIB broadcast group, whose values under opensm
 * are these), so that the SA may create the group.
 */
int cma_mc_join(struct cma_mc *mc)
{
	struct cma_id *id = mc->id;
	uint8_t rec[IB_SA_DATA_SIZE] = { 0 }, gid[16];

	if (!id->port || (id->state != CMA_BOUND && id->state != CMA_ADDR_RESOLVED) ||
	    id->qp_type != IBV_QPT_UD)
		return -EINVAL;
	mc->port = id->port;
	if (port_is_roce(mc->port))
		return roce_join(mc);
	mgid_of(mc, port_first_pkey(mc->port), mc->mgid);
	cma_port_gid(mc->port, gid);
	mad_set_array(rec, 0, IB_SA_MCM_MGID_F, mc->mgid);
	mad_set_array(rec, 0, IB_SA_MCM_PORTGID_F, gid);
	mad_set_field(rec, 0, IB_SA_MCM_QKEY_F, UDP_QKEY);
	mad_set_field(rec, 0, IB_SA_MCM_PKEY_F, port_first_pkey(mc->port));
	mad_set_field(rec, 0, IB_SA_MCM_JOIN_STATE_F, mc->join_state);
	mc->sa_tid = new_tid(id->u);
	g_hash_table_insert(id->u->mc_queries, GUINT_TO_POINTER(mc->sa_tid), mc);
	if (!mc->timer.fn)
		timer_init(&mc->timer, join_timeout, mc);
	timerq_arm(cma_tq(id->u), &mc->timer, JOIN_TIMEOUT_US);
	send_mcr(mc, UMAD_METHOD_SET, MCR_MGID | MCR_PORT_GID | MCR_QKEY | MCR_PKEY |
		 MCR_JOIN_STATE | MCR_SL | MCR_FLOW_LABEL | MCR_TCLASS, rec, mc->sa_tid);
	return 0;
}

/*
 * The SA's answer: the group's record. The event's address handle is
 * ib_init_ah_from_mcmember()'s (DLID the MLID, a GRH to the MGID from the
 * port's GID 0), its QP 0xffffff and Q_Key the group's; a group whose
 * Q_Key is not the id's fails (cma_set_qkey: EINVAL), as does an SA
 * status (ib_sa: EINVAL).
 */
bool cma_mc_sa_answer(struct ucma *u, const struct mad_pkt *pkt)
{
	const struct umad_sa_packet *sa = (const void *)pkt->mad;
	uint64_t tid = mad_tid(pkt->mad);
	struct rdma_ucm_event_resp ev = { 0 };
	struct ib_uverbs_ah_attr *ah = &ev.param.ud.ah_attr;
	uint8_t rec[IB_SA_DATA_SIZE];
	struct cma_mc *mc;
	uint32_t qkey;

	if (mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM || !(mad_method(pkt->mad) & 0x80) ||
	    tid >> 32 != MC_HI_TID)
		return false;
	mc = g_hash_table_lookup(u->mc_queries, GUINT_TO_POINTER((uint32_t)tid));
	if (!mc)
		return true;	/* a leave's answer, or a join given up on */
	forget_query(mc);
	if (mad_status(pkt->mad)) {
		g_debug("rdma_cm: multicast join: SA status 0x%04x", mad_status(pkt->mad));
		join_failed(mc, -EINVAL);
		return true;
	}
	memcpy(rec, sa->data, sizeof(rec));
	qkey = mad_get_field(rec, 0, IB_SA_MCM_QKEY_F);
	if (qkey != UDP_QKEY) {
		g_debug("rdma_cm: multicast join: the group's Q_Key is 0x%x", qkey);
		join_failed(mc, -EINVAL);
		return true;
	}
	mad_get_array(rec, 0, IB_SA_MCM_MGID_F, mc->mgid);
	mc->joined = true;
	ev.param.ud.qp_num = 0xffffff;
	ev.param.ud.qkey = qkey;
	memcpy(ah->grh.dgid, mc->mgid, 16);
	ah->grh.flow_label = mad_get_field(rec, 0, IB_SA_MCM_FLOW_LABEL_F);
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = rec[MCR_HOP_LIMIT_OFF];
	ah->grh.traffic_class = (uint8_t)mad_get_field(rec, 0, IB_SA_MCM_TCLASS_F);
	ah->dlid = (uint16_t)mad_get_field(rec, 0, IB_SA_MCM_MLID_F);
	ah->sl = (uint8_t)mad_get_field(rec, 0, IB_SA_MCM_SL_F);
	ah->static_rate = (uint8_t)mad_get_field(rec, 0, IB_SA_MCM_RATE_F);
	ah->is_global = 1;
	ah->port_num = mc->port->num;
	cma_mc_event(mc, UCMA_EV_MULTICAST_JOIN, 0, &ev);
	return true;
}

/*
 * core/multicast.c's mcast_event_handler: the port leaving Active, a new
 * LID, a new SM or a client reregister is a group error for every join
 * of the port (the SA may have forgotten them): each ends with
 * MULTICAST_ERROR, -ENETRESET, and the program joins again if it wants.
 */
void cma_mc_port_changed(struct ucma *u, struct port *port, unsigned what)
{
	GHashTableIter it;
	void *v;

	if (!(what & (PORT_CHANGED_LID | PORT_CHANGED_SM | PORT_CHANGED_REREG)) &&
	    !((what & PORT_CHANGED_STATE) && port->state != PORT_ACTIVE))
		return;
	g_hash_table_iter_init(&it, u->mcs);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct cma_mc *mc = v;

		if (mc->port != port || !mc->joined)
			continue;
		mc->joined = false;
		join_failed(mc, -ENETRESET);
	}
}

/* Does another join on @mc's port hold the group (core/multicast.c
 * leaves a port's group only with its last member)? */
static bool group_held(const struct cma_mc *mc)
{
	GHashTableIter it;
	void *v;

	g_hash_table_iter_init(&it, mc->id->u->mcs);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		const struct cma_mc *o = v;

		if (o != mc && o->joined && o->port == mc->port && !memcmp(o->mgid, mc->mgid, 16))
			return true;
	}
	return false;
}

void cma_mc_leave(struct cma_mc *mc)
{
	uint8_t rec[IB_SA_DATA_SIZE] = { 0 }, gid[16];

	forget_query(mc);
	if (mc->joined && !group_held(mc) && !port_is_roce(mc->port)) {
		/* SubnAdmDelete of this port's membership; nobody waits
		 * for the answer (ib_sa_free_multicast does not). */
		cma_port_gid(mc->port, gid);
		mad_set_array(rec, 0, IB_SA_MCM_MGID_F, mc->mgid);
		mad_set_array(rec, 0, IB_SA_MCM_PORTGID_F, gid);
		mad_set_field(rec, 0, IB_SA_MCM_JOIN_STATE_F, mc->join_state);
		send_mcr(mc, UMAD_SA_METHOD_DELETE, MCR_MGID | MCR_PORT_GID | MCR_JOIN_STATE, rec,
			 new_tid(mc->id->u));
	}
	mc->joined = false;
}
