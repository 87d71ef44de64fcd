/* SPDX-License-Identifier: MIT */
/*
 * The connection manager behind the rdma_cm ids (the kernel's
 * drivers/infiniband/core/cma.c and cm.c, docs/rdmacm.md): connections
 * made and ended by CM MADs (class 0x07, IBA 12) sent through the fabric
 * from the port's QP1, retransmitted until answered as ib_cm does, so
 * captures show them and fault rules apply. Addresses and routes are
 * cma_addr.c's.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fabric/port.h"
#include "kernel/cm_wire.h"
#include "kernel/cma_priv.h"
#include "lib/log.h"

/* cma.c: CMA_CM_RESPONSE_TIMEOUT, CMA_MAX_CM_RETRIES. */
#define CM_RESPONSE_TIMEOUT	20
#define CM_MAX_RETRIES		15
/* The upper TID bits of the CM's MADs: past the 24 bits umad's agents
 * take (kernel/umad.c), as ib_cm's agent has a hi_tid of its own. */
#define CM_HI_TID		0x01000000ull

/* The CMA header at the start of a REQ's or SIDR_REQ's private data
 * (IBA Annex A11, RDMA IP CM Service; cma.c struct cma_hdr). */
struct cma_hdr {
	uint8_t version;	/* 0 */
	uint8_t ip_version;	/* 4 or 6, in the upper nibble */
	uint16_t port;		/* the source port, network order */
	uint8_t src[16], dst[16];	/* IPv4 in the last 4 bytes */
};
#define CMA_HDR_SIZE	36
_Static_assert(sizeof(struct cma_hdr) == CMA_HDR_SIZE, "IBA A11 CM header");

/* A RoCE port's is its address's IPv4-mapped RoCE v2 GID, the kernel's
 * default type for the RDMA CM (cma_set_default_gid_type: RoCE v2). */
void cma_port_gid(const struct port *p, uint8_t gid[16])
{
	port_gid(p, port_is_roce(p) ? port_roce_v2_index(p) : 0, gid);
}

/* On a RoCE port the address is the GRH (ib_init_ah_attr_from_path for
 * RoCE): to the path's DGID from the port's address's RoCE v2 GID, hop limit
 * 64 as IPv4's TTL (RDMA_IP hop limit), the LID 0. */
void cma_roce_grh(const struct cma_id *id, struct ib_uverbs_ah_attr *ah)
{
	if (!port_is_roce(id->port))
		return;
	ah->is_global = 1;
	ah->dlid = 0;
	ah->src_path_bits = 0;
	memcpy(ah->grh.dgid, id->path.dgid, 16);
	ah->grh.sgid_index = (uint8_t)port_roce_v2_index(id->port);
	ah->grh.hop_limit = ROCE_HOP_LIMIT;
}

int cma_pkey_index(const struct port *p, uint16_t pkey)
{
	unsigned i;

	for (i = 0; i < p->npkeys; i++)
		if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff) && (p->pkeys[i] & 0x7fff))
			return (int)i;
	return -1;
}

bool cma_host_has_port(const struct ucma *u, const struct port *p)
{
	unsigned i;

	for (i = 0; i < host_nports(u->hw); i++)
		if (host_port(u->hw, i, NULL) == p)
			return true;
	return false;
}

/* ---- addresses ------------------------------------------------------ */

static void id_timer(struct timer *t, void *ctx);

void cma_arm(struct cma_id *id, uint64_t us)
{
	if (!id->timer.fn)
		timer_init(&id->timer, id_timer, id);
	timerq_arm(cma_tq(id->u), &id->timer, us);
}

void cma_disarm(struct cma_id *id)
{
	if (id->timer.fn)
		timerq_cancel(cma_tq(id->u), &id->timer);
	id->wait = PENDING_NONE;
}

/* ---- sending CM MADs ------------------------------------------------ */

/* ib_cm's timeout: twice the packet lifetime plus the peer's response
 * time (cm_convert_to_ms: 4.096 us x 2^t, about 2^(t-8) ms). */
static uint64_t cm_timeout_us(const struct cma_id *id)
{
	unsigned pl = id->path.packet_life;

	return ((2ull << (pl > 8 ? pl - 8 : 0)) + (1ull << (CM_RESPONSE_TIMEOUT - 8))) * 1000;
}

static void cm_hdr(struct cma_id *id, uint8_t *m, uint16_t attr)
{
	struct umad_hdr *h = (struct umad_hdr *)m;

	memset(m, 0, MAD_SIZE);
	h->base_version = 1;
	h->mgmt_class = CM_CLASS;
	h->class_version = CM_CLASS_VERSION;
	h->method = CM_METHOD_SEND;
	mad_set_tid(m, CM_HI_TID << 32 | id->local_comm_id);
	mad_set_attr_id(m, attr);
}

/* Send @m to the peer of @id along its path. On a RoCE port the peer is
 * its GID @dgid's port, reached by the fabric's own routes, and the MAD
 * carries a GRH (docs/roce.md). */
void cma_send_mad(struct ucma *u, struct port *port, uint16_t dlid, const uint8_t *dgid,
		  uint16_t pkey, uint8_t sl, const uint8_t *m)
{
	struct mad_pkt pkt = { 0 };

	memcpy(pkt.mad, m, MAD_SIZE);
	pkt.slid = cma_port_lid(port);
	pkt.dlid = dlid;
	if (port_is_roce(port) && dgid) {
		struct port *to = fabric_roce_port_by_gid(cma_fabric(u), dgid);

		pkt.dlid = to ? cma_port_lid(to) : 0;
		pkt.grh = true;
		cma_port_gid(port, pkt.sgid);
		memcpy(pkt.dgid, dgid, 16);
	}
	pkt.sqp = 1;
	pkt.dqp = 1;
	pkt.qkey = QP1_QKEY;
	pkt.pkey = pkey;
	pkt.sl = sl;
	fabric_send(cma_fabric(u), port, &pkt);
}

static void cm_send(struct cma_id *id, const uint8_t *m)
{
	cma_send_mad(id->u, id->port, id->path.dlid, id->path.dgid, id->path.pkey, id->path.sl, m);
}

/* Send id->msg and retransmit it until answered (ib_cm's send with
 * max_cm_retries). */
static void cm_send_reliable(struct cma_id *id)
{
	/* Armed first: the answer can come before cm_send returns (the
	 * fabric delivers as it sends) and disarm it. */
	id->wait = PENDING_MAD;
	id->resends = 0;
	cma_arm(id, cm_timeout_us(id));
	cm_send(id, id->msg);
}

static uint32_t new_comm_id(struct cma_id *id)
{
	struct ucma *u = id->u;

	do
		id->local_comm_id = u->next_comm_id++;
	while (!id->local_comm_id ||
	       g_hash_table_contains(u->by_comm_id, GUINT_TO_POINTER(id->local_comm_id)));
	g_hash_table_insert(u->by_comm_id, GUINT_TO_POINTER(id->local_comm_id), id);
	return id->local_comm_id;
}

static void forget_comm_id(struct cma_id *id)
{
	if (id->local_comm_id &&
	    g_hash_table_lookup(id->u->by_comm_id, GUINT_TO_POINTER(id->local_comm_id)) == id)
		g_hash_table_remove(id->u->by_comm_id, GUINT_TO_POINTER(id->local_comm_id));
}

/* 24-bit PSNs from a fixed sequence: a run repeats (--seed), as nothing
 * else of the emulator's is random. */
static uint32_t new_psn(struct ucma *u)
{
	u->psn_seed = u->psn_seed * 1103515245u + 12345u;
	return (u->psn_seed >> 8) & 0xffffff;
}

static void put_cma_hdr(uint8_t *priv, const struct cma_id *id)
{
	struct cma_hdr h = { 0 };

	h.ip_version = (id->src.ss_family == AF_INET6 ? 6 : 4) << 4;
	h.port = htobe16(sa_port(&id->src));
	if (id->src.ss_family == AF_INET6) {
		memcpy(h.src, &((const struct sockaddr_in6 *)&id->src)->sin6_addr, 16);
		memcpy(h.dst, &((const struct sockaddr_in6 *)&id->dst)->sin6_addr, 16);
	} else {
		memcpy(h.src + 12, &((const struct sockaddr_in *)&id->src)->sin_addr, 4);
		memcpy(h.dst + 12, &((const struct sockaddr_in *)&id->dst)->sin_addr, 4);
	}
	memcpy(priv, &h, sizeof(h));
}

/* The addresses a request's CMA header names, seen from the passive side. */
static bool get_cma_hdr(const uint8_t *priv, uint16_t dst_port, struct cma_id *c)
{
	struct cma_hdr h;

	memcpy(&h, priv, sizeof(h));
	if (h.version != 0 || ((h.ip_version >> 4) != 4 && (h.ip_version >> 4) != 6))
		return false;
	memset(&c->src, 0, sizeof(c->src));
	memset(&c->dst, 0, sizeof(c->dst));
	if (h.ip_version >> 4 == 6) {
		struct sockaddr_in6 *s = (void *)&c->src, *d = (void *)&c->dst;

		s->sin6_family = d->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, h.dst, 16);
		memcpy(&d->sin6_addr, h.src, 16);
	} else {
		struct sockaddr_in *s = (void *)&c->src, *d = (void *)&c->dst;

		s->sin_family = d->sin_family = AF_INET;
		memcpy(&s->sin_addr, h.dst + 12, 4);
		memcpy(&d->sin_addr, h.src + 12, 4);
	}
	sa_set_port(&c->src, dst_port);
	sa_set_port(&c->dst, be16toh(h.port));
	return true;
}

static uint64_t service_id(const struct cma_id *id, uint16_t port)
{
	return (uint64_t)id->ps << 16 | port;
}

/* ---- the active side ------------------------------------------------ */

static void build_req(struct cma_id *id, const struct rdma_ucm_conn_param *cp)
{
	uint8_t *m = id->msg;
	const struct cma_path *p = &id->path;

	cm_hdr(id, m, CM_ATTR_REQ);
	cm_put(m, CM_REQ_LOCAL_COMM_ID, id->local_comm_id);
	cm_put(m, CM_REQ_SERVICE_ID, service_id(id, sa_port(&id->dst)));
	cm_put(m, CM_REQ_LOCAL_CA_GUID, id->port->node->guid);
	cm_put(m, CM_REQ_LOCAL_QPN, id->local_qpn);
	cm_put(m, CM_REQ_RESP_RES, id->resp_res);
	cm_put(m, CM_REQ_INIT_DEPTH, id->init_depth);
	cm_put(m, CM_REQ_REMOTE_CM_TIMEOUT, CM_RESPONSE_TIMEOUT);
	cm_put(m, CM_REQ_TRANSPORT, 0);	/* RC */
	cm_put(m, CM_REQ_FLOW_CONTROL, cp->flow_control ? 1 : 0);
	cm_put(m, CM_REQ_STARTING_PSN, id->sq_psn);
	cm_put(m, CM_REQ_LOCAL_CM_TIMEOUT, CM_RESPONSE_TIMEOUT);
	cm_put(m, CM_REQ_RETRY_COUNT, id->retry_count);
	cm_put(m, CM_REQ_PKEY, p->pkey);
	cm_put(m, CM_REQ_MTU, p->mtu);
	cm_put(m, CM_REQ_RNR_RETRY, id->rnr_retry);
	cm_put(m, CM_REQ_MAX_CM_RETRIES, CM_MAX_RETRIES);
	cm_put(m, CM_REQ_SRQ, id->srq ? 1 : 0);
	cm_put(m, CM_REQ_PRIMARY_LOCAL_LID, p->slid);
	cm_put(m, CM_REQ_PRIMARY_REMOTE_LID, p->dlid);
	memcpy(m + CM_REQ_PRIMARY_LOCAL_GID, p->sgid, 16);
	memcpy(m + CM_REQ_PRIMARY_REMOTE_GID, p->dgid, 16);
	cm_put(m, CM_REQ_PRIMARY_RATE, p->rate);
	cm_put(m, CM_REQ_PRIMARY_SL, p->sl);
	cm_put(m, CM_REQ_PRIMARY_SUBNET_LOCAL, 1);
	cm_put(m, CM_REQ_PRIMARY_ACK_TIMEOUT, MIN(31, p->packet_life + 1));
	put_cma_hdr(m + CM_REQ_PRIVATE, id);
	memcpy(m + CM_REQ_PRIVATE + CMA_HDR_SIZE, cp->private_data,
	       MIN(cp->private_data_len, CM_REQ_PRIVATE_LEN - CMA_HDR_SIZE));
}

static void build_sidr_req(struct cma_id *id, const struct rdma_ucm_conn_param *cp)
{
	uint8_t *m = id->msg;

	cm_hdr(id, m, CM_ATTR_SIDR_REQ);
	cm_put(m, CM_SIDR_REQ_ID, id->local_comm_id);
	cm_put(m, CM_SIDR_REQ_PKEY, id->path.pkey);
	cm_put(m, CM_SIDR_REQ_SERVICE_ID, service_id(id, sa_port(&id->dst)));
	put_cma_hdr(m + CM_SIDR_REQ_PRIVATE, id);
	memcpy(m + CM_SIDR_REQ_PRIVATE + CMA_HDR_SIZE, cp->private_data,
	       MIN(cp->private_data_len, CM_SIDR_REQ_PRIVATE_LEN - CMA_HDR_SIZE));
}

int cma_connect(struct cma_id *id, const struct rdma_ucm_conn_param *cp)
{
	/* The private data must fit beside the CMA header (cma_connect_ib:
	 * EINVAL). */
	size_t room = (id->qp_type == IBV_QPT_UD ? CM_SIDR_REQ_PRIVATE_LEN : CM_REQ_PRIVATE_LEN) -
		      CMA_HDR_SIZE;

	if (id->state != CMA_ROUTE_RESOLVED)
		return -EINVAL;
	if (cp->private_data_len > room)
		return -EINVAL;
	new_comm_id(id);
	id->local_qpn = cp->qp_num & 0xffffff;
	id->resp_res = cp->responder_resources;
	id->init_depth = cp->initiator_depth;
	id->retry_count = MIN(cp->retry_count, 7);
	id->rnr_retry = MIN(cp->rnr_retry_count, 7);
	id->srq = cp->srq;
	id->sq_psn = new_psn(id->u);
	if (id->qp_type == IBV_QPT_UD)
		build_sidr_req(id, cp);
	else
		build_req(id, cp);
	id->state = CMA_REQ_SENT;
	cm_send_reliable(id);
	return 0;
}

static void build_rtu(struct cma_id *id, uint8_t *m)
{
	cm_hdr(id, m, CM_ATTR_RTU);
	cm_put(m, CM_RTU_LOCAL_COMM_ID, id->local_comm_id);
	cm_put(m, CM_RTU_REMOTE_COMM_ID, id->remote_comm_id);
}

static void build_rej(struct cma_id *id, uint8_t *m, unsigned msg, uint16_t reason,
		      const uint8_t *priv, size_t len)
{
	cm_hdr(id, m, CM_ATTR_REJ);
	cm_put(m, CM_REJ_LOCAL_COMM_ID, id->local_comm_id);
	cm_put(m, CM_REJ_REMOTE_COMM_ID, id->remote_comm_id);
	cm_put(m, CM_REJ_MESSAGE, msg);
	cm_put(m, CM_REJ_REASON, reason);
	if (priv)
		memcpy(m + CM_REJ_PRIVATE, priv, MIN(len, CM_REJ_PRIVATE_LEN));
}

static void build_dreq(struct cma_id *id, uint8_t *m)
{
	cm_hdr(id, m, CM_ATTR_DREQ);
	cm_put(m, CM_DREQ_LOCAL_COMM_ID, id->local_comm_id);
	cm_put(m, CM_DREQ_REMOTE_COMM_ID, id->remote_comm_id);
	cm_put(m, CM_DREQ_REMOTE_QPN, id->remote_qpn);
}

/* ---- the passive side ----------------------------------------------- */

int cma_listen(struct cma_id *id, unsigned backlog)
{
	GList *l;

	g_debug("rdma_cm: listen ps 0x%x family %u port %u", id->ps, id->src.ss_family,
		sa_port(&id->src));
	if (id->state == CMA_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };
		int r = cma_bind(id, (struct sockaddr *)&any, sizeof(any));

		if (r < 0)
			return r;
	}
	if (id->state == CMA_LISTEN) {
		id->backlog = backlog;
		return 0;
	}
	if (id->state != CMA_BOUND)
		return -EINVAL;
	for (l = id->u->listeners; l; l = l->next) {
		struct cma_id *o = l->data;

		/* cma_check_port(): two AFONLY ids of two families do not
		 * meet (tgt's iSER portals on 0.0.0.0 and [::]). */
		if (o->afonly && id->afonly && o->src.ss_family != id->src.ss_family)
			continue;
		if (o->ps == id->ps && sa_port(&o->src) == sa_port(&id->src) &&
		    (!o->port || !id->port || o->port == id->port))
			return -EADDRINUSE;
	}
	id->backlog = backlog;
	id->state = CMA_LISTEN;
	id->u->listeners = g_list_prepend(id->u->listeners, id);
	return 0;
}

/* Does listener @o take a request of IP version @ipver (its CMA
 * header's; cma_match_private_data): an any-address listener without
 * AFONLY takes both, another only its own family's. */
static bool takes_family(const struct cma_id *o, unsigned ipver)
{
	if (sa_is_any(&o->src) && !o->afonly)
		return true;
	return (o->src.ss_family == AF_INET6 ? 6 : 4) == ipver;
}

static struct cma_id *find_listener(struct ucma *u, struct port *port, uint16_t ps,
				    uint16_t tcp, const uint8_t *priv)
{
	unsigned ipver = priv[offsetof(struct cma_hdr, ip_version)] >> 4;
	GList *l;

	for (l = u->listeners; l; l = l->next) {
		struct cma_id *o = l->data;

		if (o->ps == ps && sa_port(&o->src) == tcp && (!o->port || o->port == port) &&
		    takes_family(o, ipver))
			return o;
	}
	return NULL;
}

/* An answer to a MAD from nobody we know (a REJ to a REQ, a DREP to a
 * DREQ): back to its sender on the path it came. */
static void reply_stateless(struct ucma *u, struct port *port, const struct mad_pkt *pkt,
			    uint8_t *m)
{
	cma_send_mad(u, port, pkt->slid, pkt->grh ? pkt->sgid : NULL, pkt->pkey, pkt->sl, m);
}

static void reject_req(struct ucma *u, struct port *port, const struct mad_pkt *pkt,
		       uint16_t reason)
{
	struct cma_id tmp = { .u = u };
	MAD_BUF(m);

	tmp.remote_comm_id = (uint32_t)cm_get(pkt->mad, CM_REQ_LOCAL_COMM_ID);
	build_rej(&tmp, m, 0, reason, NULL, 0);
	mad_set_tid(m, mad_tid(pkt->mad));
	reply_stateless(u, port, pkt, m);
}

/* A REQ that repeats one we have: ib_cm's cm_dup_req_handler sends the
 * REP again if it went. */
static bool dup_req(struct ucma *u, const uint8_t *m)
{
	uint32_t remote = (uint32_t)cm_get(m, CM_REQ_LOCAL_COMM_ID);
	uint64_t guid = cm_get(m, CM_REQ_LOCAL_CA_GUID);
	GHashTableIter it;
	void *v;

	g_hash_table_iter_init(&it, u->by_comm_id);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct cma_id *id = v;

		if (id->remote_comm_id == remote && id->remote_guid == guid &&
		    id->state >= CMA_REQ_RCVD) {
			if (id->state == CMA_REP_SENT)
				cm_send(id, id->msg);
			return true;
		}
	}
	return false;
}

static void take_req(struct ucma *u, struct port *port, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	uint64_t sid = cm_get(m, CM_REQ_SERVICE_ID);
	struct rdma_ucm_event_resp ev = { 0 };
	struct cma_id *l, *c;

	if (dup_req(u, m))
		return;
	l = find_listener(u, port, (uint16_t)(sid >> 16), (uint16_t)sid, m + CM_REQ_PRIVATE);
	if (!l || (sid >> 32)) {
		g_debug("rdma_cm: REQ for service 0x%016" G_GINT64_MODIFIER "x at %s/%u: no listener",
			sid, port->node->id, port->num);
		reject_req(u, port, pkt, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (l->pending >= l->backlog || !(c = l->handler->new_conn_id(l))) {
		reject_req(u, port, pkt, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	if (!get_cma_hdr(m + CM_REQ_PRIVATE, (uint16_t)sid, c)) {
		c->handler->drop_id(c);
		reject_req(u, port, pkt, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	c->port = port;
	c->remote = NULL;
	c->path.slid = (uint16_t)cm_get(m, CM_REQ_PRIMARY_REMOTE_LID);
	c->path.dlid = (uint16_t)cm_get(m, CM_REQ_PRIMARY_LOCAL_LID);
	memcpy(c->path.sgid, m + CM_REQ_PRIMARY_REMOTE_GID, 16);
	memcpy(c->path.dgid, m + CM_REQ_PRIMARY_LOCAL_GID, 16);
	c->path.pkey = (uint16_t)cm_get(m, CM_REQ_PKEY);
	c->path.sl = (uint8_t)cm_get(m, CM_REQ_PRIMARY_SL);
	c->path.mtu = (uint8_t)cm_get(m, CM_REQ_MTU);
	c->path.rate = (uint8_t)cm_get(m, CM_REQ_PRIMARY_RATE);
	c->path.packet_life = (uint8_t)cm_get(m, CM_REQ_PRIMARY_ACK_TIMEOUT);
	c->path.packet_life -= c->path.packet_life > 0;
	c->has_path = true;
	c->remote_comm_id = (uint32_t)cm_get(m, CM_REQ_LOCAL_COMM_ID);
	c->remote_guid = cm_get(m, CM_REQ_LOCAL_CA_GUID);
	c->remote_qpn = (uint32_t)cm_get(m, CM_REQ_LOCAL_QPN);
	c->rq_psn = (uint32_t)cm_get(m, CM_REQ_STARTING_PSN);
	c->resp_res = (uint8_t)cm_get(m, CM_REQ_INIT_DEPTH);
	c->init_depth = (uint8_t)cm_get(m, CM_REQ_RESP_RES);
	c->retry_count = (uint8_t)cm_get(m, CM_REQ_RETRY_COUNT);
	c->rnr_retry = (uint8_t)cm_get(m, CM_REQ_RNR_RETRY);
	c->srq = (uint8_t)cm_get(m, CM_REQ_SRQ);
	c->sq_psn = new_psn(u);
	c->state = CMA_REQ_RCVD;
	new_comm_id(c);
	/* cm_format_req_event: the peer's depths, seen from here. */
	ev.param.conn.qp_num = c->remote_qpn;
	ev.param.conn.responder_resources = c->resp_res;
	ev.param.conn.initiator_depth = c->init_depth;
	ev.param.conn.flow_control = (uint8_t)cm_get(m, CM_REQ_FLOW_CONTROL);
	ev.param.conn.retry_count = c->retry_count;
	ev.param.conn.rnr_retry_count = c->rnr_retry;
	ev.param.conn.srq = c->srq;
	ev.param.conn.private_data_len = CM_REQ_PRIVATE_LEN - CMA_HDR_SIZE;
	memcpy(ev.param.conn.private_data, m + CM_REQ_PRIVATE + CMA_HDR_SIZE,
	       CM_REQ_PRIVATE_LEN - CMA_HDR_SIZE);
	l->pending++;
	if (!cma_event(c, UCMA_EV_CONNECT_REQUEST, 0, &ev)) {
		c->handler->drop_id(c);
		reject_req(u, port, pkt, CM_REJ_CONSUMER_DEFINED);
	}
}

static void take_sidr_req(struct ucma *u, struct port *port, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	uint64_t sid = cm_get(m, CM_SIDR_REQ_SERVICE_ID);
	struct rdma_ucm_event_resp ev = { 0 };
	struct cma_id *l = find_listener(u, port, (uint16_t)(sid >> 16), (uint16_t)sid,
					 m + CM_SIDR_REQ_PRIVATE), *c;

	if (!l || l->pending >= l->backlog || !(c = l->handler->new_conn_id(l)))
		return;	/* the requester times out (SIDR has no REJ) */
	if (!get_cma_hdr(m + CM_SIDR_REQ_PRIVATE, (uint16_t)sid, c)) {
		c->handler->drop_id(c);
		return;
	}
	c->port = port;
	c->path.slid = cma_port_lid(port);
	c->path.dlid = pkt->slid;
	c->path.pkey = (uint16_t)cm_get(m, CM_SIDR_REQ_PKEY);
	c->path.sl = pkt->sl;
	if (port_is_roce(port) && pkt->grh) {
		/* RoCE: no LIDs; the requester is its GRH's source GID. */
		c->path.slid = c->path.dlid = 0;
		cma_port_gid(port, c->path.sgid);
		memcpy(c->path.dgid, pkt->sgid, 16);
	}
	c->has_path = true;
	c->remote_comm_id = (uint32_t)cm_get(m, CM_SIDR_REQ_ID);
	c->remote_qpn = pkt->sqp;
	c->state = CMA_REQ_RCVD;
	/* The address to answer the requester by (ib_init_ah_attr_from_wc). */
	ev.param.ud.ah_attr.dlid = c->path.dlid;
	ev.param.ud.ah_attr.sl = pkt->sl;
	ev.param.ud.ah_attr.port_num = port->num;
	cma_roce_grh(c, &ev.param.ud.ah_attr);
	ev.param.ud.private_data_len = CM_SIDR_REQ_PRIVATE_LEN - CMA_HDR_SIZE;
	memcpy(ev.param.ud.private_data, m + CM_SIDR_REQ_PRIVATE + CMA_HDR_SIZE,
	       CM_SIDR_REQ_PRIVATE_LEN - CMA_HDR_SIZE);
	/* The TID the SIDR_REP must carry. */
	memcpy(c->msg, m, MAD_SIZE);
	l->pending++;
	if (!cma_event(c, UCMA_EV_CONNECT_REQUEST, 0, &ev))
		c->handler->drop_id(c);
}

static void leave_listener(struct cma_id *id)
{
	if (id->listener && id->listener->pending)
		id->listener->pending--;
	id->listener = NULL;
}

int cma_accept(struct cma_id *id, const struct rdma_ucm_conn_param *cp, bool user)
{
	uint8_t *m = id->msg;

	if (!user) {
		/* The active side, its QP at RTS: the RTU (cm_rep_handler's
		 * consumer calling ib_send_cm_rtu). */
		if (id->state != CMA_REP_RCVD)
			return -EINVAL;
		build_rtu(id, m);
		cm_send(id, m);
		id->state = CMA_ESTABLISHED;
		return 0;
	}
	if (id->state != CMA_REQ_RCVD)
		return -EINVAL;
	leave_listener(id);
	if (id->qp_type == IBV_QPT_UD) {
		uint64_t tid = mad_tid(m);

		cm_hdr(id, m, CM_ATTR_SIDR_REP);
		mad_set_tid(m, tid);
		cm_put(m, CM_SIDR_REP_ID, id->remote_comm_id);
		cm_put(m, CM_SIDR_REP_STATUS, 0);
		cm_put(m, CM_SIDR_REP_QPN, cp->qp_num & 0xffffff);
		cm_put(m, CM_SIDR_REP_SERVICE_ID, service_id(id, sa_port(&id->src)));
		cm_put(m, CM_SIDR_REP_QKEY, cp->qkey ? cp->qkey : UDP_QKEY);
		memcpy(m + CM_SIDR_REP_PRIVATE, cp->private_data,
		       MIN(cp->private_data_len, CM_SIDR_REP_PRIVATE_LEN));
		cm_send(id, m);
		id->state = CMA_ESTABLISHED;
		return 0;
	}
	if (cp->private_data_len > CM_REP_PRIVATE_LEN)
		return -EINVAL;
	id->local_qpn = cp->qp_num & 0xffffff;
	id->resp_res = cp->responder_resources;
	id->init_depth = cp->initiator_depth;
	id->rnr_retry = MIN(cp->rnr_retry_count, 7);
	id->srq = cp->srq;
	cm_hdr(id, m, CM_ATTR_REP);
	cm_put(m, CM_REP_LOCAL_COMM_ID, id->local_comm_id);
	cm_put(m, CM_REP_REMOTE_COMM_ID, id->remote_comm_id);
	cm_put(m, CM_REP_LOCAL_QPN, id->local_qpn);
	cm_put(m, CM_REP_STARTING_PSN, id->sq_psn);
	cm_put(m, CM_REP_RESP_RES, id->resp_res);
	cm_put(m, CM_REP_INIT_DEPTH, id->init_depth);
	cm_put(m, CM_REP_FLOW_CONTROL, cp->flow_control ? 1 : 0);
	cm_put(m, CM_REP_RNR_RETRY, id->rnr_retry);
	cm_put(m, CM_REP_SRQ, id->srq ? 1 : 0);
	cm_put(m, CM_REP_LOCAL_CA_GUID, id->port->node->guid);
	memcpy(m + CM_REP_PRIVATE, cp->private_data, cp->private_data_len);
	id->state = CMA_REP_SENT;
	cm_send_reliable(id);
	return 0;
}

int cma_reject(struct cma_id *id, const uint8_t *priv, uint8_t len, uint8_t reason)
{
	if (id->state != CMA_REQ_RCVD)
		return -EINVAL;
	leave_listener(id);
	if (id->qp_type == IBV_QPT_UD) {
		uint64_t tid = mad_tid(id->msg);

		cm_hdr(id, id->msg, CM_ATTR_SIDR_REP);
		mad_set_tid(id->msg, tid);
		cm_put(id->msg, CM_SIDR_REP_ID, id->remote_comm_id);
		cm_put(id->msg, CM_SIDR_REP_STATUS, 2);	/* rejected */
		memcpy(id->msg + CM_SIDR_REP_PRIVATE, priv, MIN(len, CM_SIDR_REP_PRIVATE_LEN));
	} else {
		build_rej(id, id->msg, 0, reason ? reason : CM_REJ_CONSUMER_DEFINED, priv, len);
	}
	cm_send(id, id->msg);
	forget_comm_id(id);
	id->state = CMA_DISCONNECTED;
	return 0;
}

/* ---- disconnection -------------------------------------------------- */

static void timewait_over(struct timer *t, void *ctx)
{
	struct cma_id *id = ctx;

	(void)t;
	cma_event(id, UCMA_EV_TIMEWAIT_EXIT, 0, NULL);
}

/* ib_cm's timewait (cm_enter_timewait): the path's av.timeout, its
 * packet lifetime + 1, in ms as cm_convert_to_ms() has it (2.1 s for
 * opensm's 18). */
static uint64_t timewait_us(const struct cma_id *id)
{
	unsigned t = id->path.packet_life + 1u;

	return (1ull << (t > 8 ? t - 8 : 0)) * 1000;
}

/* The connection is over: DISCONNECTED now, TIMEWAIT_EXIT once the
 * packets it may still have in flight are gone (ib_cm's timewait). */
static void disconnected(struct cma_id *id)
{
	cma_disarm(id);
	forget_comm_id(id);
	id->state = CMA_DISCONNECTED;
	cma_event(id, UCMA_EV_DISCONNECTED, 0, NULL);
	timer_init(&id->timewait, timewait_over, id);
	timerq_arm(cma_tq(id->u), &id->timewait, timewait_us(id));
}

int cma_disconnect(struct cma_id *id)
{
	if (id->qp_type == IBV_QPT_UD)
		return -EINVAL;	/* no connection to end */
	switch (id->state) {
	case CMA_ESTABLISHED:
	case CMA_REP_RCVD:
		build_dreq(id, id->msg);
		id->state = CMA_DREQ_SENT;
		cm_send_reliable(id);
		return 0;
	case CMA_DREQ_SENT:
	case CMA_DISCONNECTED:
		return 0;
	default:
		return -EINVAL;
	}
}

void cma_destroy(struct cma_id *id)
{
	MAD_BUF(m);

	id->handler->free_mcs(id);
	cma_addr_destroy(id);
	if (id->timewait.fn)
		timerq_cancel(cma_tq(id->u), &id->timewait);
	switch (id->qp_type == IBV_QPT_UD && id->state != CMA_LISTEN ? CMA_IDLE : id->state) {
	case CMA_ESTABLISHED:
	case CMA_REP_RCVD:
		build_dreq(id, m);
		cm_send(id, m);
		break;
	case CMA_REQ_SENT:
		build_rej(id, m, 0, CM_REJ_TIMEOUT, NULL, 0);
		cm_send(id, m);
		break;
	case CMA_REQ_RCVD:
	case CMA_REP_SENT:
		build_rej(id, m, id->state == CMA_REP_SENT ? 1 : 0, CM_REJ_CONSUMER_DEFINED,
			  NULL, 0);
		cm_send(id, m);
		break;
	case CMA_LISTEN:
		id->u->listeners = g_list_remove(id->u->listeners, id);
		break;
	default:
		break;
	}
	leave_listener(id);
	forget_comm_id(id);
	id->state = CMA_IDLE;
}

/* ---- timers --------------------------------------------------------- */

static void id_timer(struct timer *t, void *ctx)
{
	struct cma_id *id = ctx;

	(void)t;
	if (id->wait == PENDING_ADDR_ERROR || id->wait == PENDING_SA) {
		cma_addr_timeout(id);
		return;
	}
	if (id->wait != PENDING_MAD)
		return;
	if (id->resends++ < CM_MAX_RETRIES) {
		cma_arm(id, cm_timeout_us(id));
		cm_send(id, id->msg);
		return;
	}
	id->wait = PENDING_NONE;
	switch (id->state) {
	case CMA_REQ_SENT:
	case CMA_REP_SENT:
		/* IB_CM_REQ_ERROR, IB_CM_REP_ERROR, SIDR timeout. */
		forget_comm_id(id);
		id->state = CMA_DISCONNECTED;
		cma_event(id, UCMA_EV_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case CMA_DREQ_SENT:
		disconnected(id);	/* IB_CM_DREQ_ERROR */
		break;
	default:
		break;
	}
}

/* ---- receiving ------------------------------------------------------ */

static struct cma_id *by_remote_field(struct ucma *u, const uint8_t *m, struct cm_field f)
{
	return g_hash_table_lookup(u->by_comm_id, GUINT_TO_POINTER((uint32_t)cm_get(m, f)));
}

static void take_rep(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_REP_REMOTE_COMM_ID);
	struct rdma_ucm_event_resp ev = { 0 };
	MAD_BUF(rtu);

	if (!id)
		return;
	if (id->state == CMA_ESTABLISHED) {	/* our RTU was lost */
		build_rtu(id, rtu);
		cm_send(id, rtu);
		return;
	}
	if (id->state != CMA_REQ_SENT || id->qp_type == IBV_QPT_UD)
		return;
	cma_disarm(id);
	id->wait = PENDING_NONE;
	id->remote_comm_id = (uint32_t)cm_get(m, CM_REP_LOCAL_COMM_ID);
	id->remote_guid = cm_get(m, CM_REP_LOCAL_CA_GUID);
	id->remote_qpn = (uint32_t)cm_get(m, CM_REP_LOCAL_QPN);
	id->rq_psn = (uint32_t)cm_get(m, CM_REP_STARTING_PSN);
	/* The REP's depths bound ours (cm_rep_handler: the initiator depth
	 * the peer accepts, the responder resources it grants). */
	id->init_depth = MIN(id->init_depth, (uint8_t)cm_get(m, CM_REP_RESP_RES));
	id->resp_res = MIN(id->resp_res, (uint8_t)cm_get(m, CM_REP_INIT_DEPTH));
	id->rnr_retry = (uint8_t)cm_get(m, CM_REP_RNR_RETRY);
	id->state = CMA_REP_RCVD;
	ev.param.conn.qp_num = id->remote_qpn;
	ev.param.conn.responder_resources = (uint8_t)cm_get(m, CM_REP_INIT_DEPTH);
	ev.param.conn.initiator_depth = (uint8_t)cm_get(m, CM_REP_RESP_RES);
	ev.param.conn.flow_control = (uint8_t)cm_get(m, CM_REP_FLOW_CONTROL);
	ev.param.conn.rnr_retry_count = id->rnr_retry;
	ev.param.conn.srq = (uint8_t)cm_get(m, CM_REP_SRQ);
	ev.param.conn.private_data_len = CM_REP_PRIVATE_LEN;
	memcpy(ev.param.conn.private_data, m + CM_REP_PRIVATE, CM_REP_PRIVATE_LEN);
	cma_event(id, UCMA_EV_CONNECT_RESPONSE, 0, &ev);
}

static void take_rtu(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_RTU_REMOTE_COMM_ID);
	struct rdma_ucm_event_resp ev = { 0 };

	if (!id || id->state != CMA_REP_SENT)
		return;
	cma_disarm(id);
	id->wait = PENDING_NONE;
	id->state = CMA_ESTABLISHED;
	ev.param.conn.private_data_len = CM_RTU_PRIVATE_LEN;
	memcpy(ev.param.conn.private_data, m + CM_RTU_PRIVATE, CM_RTU_PRIVATE_LEN);
	cma_event(id, UCMA_EV_ESTABLISHED, 0, &ev);
}

static void take_rej(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_REJ_REMOTE_COMM_ID);
	struct rdma_ucm_event_resp ev = { 0 };

	if (!id || (id->state != CMA_REQ_SENT && id->state != CMA_REP_SENT &&
		    id->state != CMA_REP_RCVD))
		return;
	cma_disarm(id);
	id->wait = PENDING_NONE;
	forget_comm_id(id);
	id->state = CMA_DISCONNECTED;
	ev.param.conn.private_data_len = CM_REJ_PRIVATE_LEN;
	memcpy(ev.param.conn.private_data, m + CM_REJ_PRIVATE, CM_REJ_PRIVATE_LEN);
	cma_event(id, UCMA_EV_REJECTED, (int)cm_get(m, CM_REJ_REASON), &ev);
}

static void take_dreq(struct ucma *u, struct port *port, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	struct cma_id *id = by_remote_field(u, m, CM_DREQ_REMOTE_COMM_ID);
	struct cma_id tmp = { .u = u };
	MAD_BUF(drep);

	/* A DREP always goes back, to a DREQ for a connection long gone
	 * too (cm_issue_drep). */
	tmp.local_comm_id = (uint32_t)cm_get(m, CM_DREQ_REMOTE_COMM_ID);
	tmp.remote_comm_id = (uint32_t)cm_get(m, CM_DREQ_LOCAL_COMM_ID);
	cm_hdr(&tmp, drep, CM_ATTR_DREP);
	mad_set_tid(drep, mad_tid(m));
	cm_put(drep, CM_DREP_LOCAL_COMM_ID, tmp.local_comm_id);
	cm_put(drep, CM_DREP_REMOTE_COMM_ID, tmp.remote_comm_id);
	reply_stateless(u, port, pkt, drep);
	if (id && (id->state == CMA_ESTABLISHED || id->state == CMA_REP_RCVD ||
		   id->state == CMA_DREQ_SENT || id->state == CMA_REP_SENT))
		disconnected(id);
}

static void take_drep(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_DREP_REMOTE_COMM_ID);

	if (id && id->state == CMA_DREQ_SENT)
		disconnected(id);
}

static void take_mra(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_MRA_REMOTE_COMM_ID);

	/* The peer needs longer: wait its service timeout once more. */
	if (id && id->wait == PENDING_MAD)
		cma_arm(id, cm_timeout_us(id) +
			    (4ull << cm_get(m, CM_MRA_SERVICE_TIMEOUT)));
}

static void take_sidr_rep(struct ucma *u, const uint8_t *m)
{
	struct cma_id *id = by_remote_field(u, m, CM_SIDR_REP_ID);
	struct rdma_ucm_event_resp ev = { 0 };

	if (!id || id->state != CMA_REQ_SENT || id->qp_type != IBV_QPT_UD)
		return;
	cma_disarm(id);
	id->wait = PENDING_NONE;
	forget_comm_id(id);
	if (cm_get(m, CM_SIDR_REP_STATUS)) {
		id->state = CMA_DISCONNECTED;
		cma_event(id, UCMA_EV_UNREACHABLE, -ECONNREFUSED, NULL);
		return;
	}
	id->state = CMA_ESTABLISHED;
	id->remote_qpn = (uint32_t)cm_get(m, CM_SIDR_REP_QPN);
	id->remote_qkey = (uint32_t)cm_get(m, CM_SIDR_REP_QKEY);
	ev.param.ud.qp_num = id->remote_qpn;
	ev.param.ud.qkey = id->remote_qkey;
	ev.param.ud.ah_attr.dlid = id->path.dlid;
	ev.param.ud.ah_attr.sl = id->path.sl;
	ev.param.ud.ah_attr.port_num = id->port->num;
	cma_roce_grh(id, &ev.param.ud.ah_attr);
	ev.param.ud.private_data_len = CM_SIDR_REP_PRIVATE_LEN;
	memcpy(ev.param.ud.private_data, m + CM_SIDR_REP_PRIVATE, CM_SIDR_REP_PRIVATE_LEN);
	cma_event(id, UCMA_EV_ESTABLISHED, 0, &ev);
}

enum upper_verdict cma_deliver(struct ucma *u, struct port *port, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;

	if (pkt->data)
		return UPPER_UNCLAIMED;
	if (cma_sa_answer(u, pkt) || cma_mc_sa_answer(u, pkt))
		return UPPER_TAKEN;
	if (mad_class(m) != CM_CLASS)
		return UPPER_UNCLAIMED;
	/* ib_cm's agent takes class version 2, method Send; else no agent. */
	if (mad_class_version(m) != CM_CLASS_VERSION || mad_method(m) != CM_METHOD_SEND)
		return UPPER_UNCLAIMED;
	switch (mad_attr_id(m)) {
	case CM_ATTR_REQ:
		take_req(u, port, pkt);
		break;
	case CM_ATTR_MRA:
		take_mra(u, m);
		break;
	case CM_ATTR_REJ:
		take_rej(u, m);
		break;
	case CM_ATTR_REP:
		take_rep(u, m);
		break;
	case CM_ATTR_RTU:
		take_rtu(u, m);
		break;
	case CM_ATTR_DREQ:
		take_dreq(u, port, pkt);
		break;
	case CM_ATTR_DREP:
		take_drep(u, m);
		break;
	case CM_ATTR_SIDR_REQ:
		take_sidr_req(u, port, pkt);
		break;
	case CM_ATTR_SIDR_REP:
		take_sidr_rep(u, m);
		break;
	default:
		break;	/* LAP, APR: path migration is not done */
	}
	return UPPER_TAKEN;
}

/* ---- QP attributes -------------------------------------------------- */

int cma_init_qp_attr(struct cma_id *id, unsigned state, struct ib_uverbs_qp_attr *a)
{
	uint16_t pkey = id->has_path ? id->path.pkey : (id->port ? id->port->pkeys[0] : 0);
	bool ud = id->qp_type == IBV_QPT_UD;
	int pi;

	if (!id->port)
		return -EINVAL;
	switch (state) {
	case IBV_QPS_INIT:
		if ((pi = cma_pkey_index(id->port, pkey)) < 0)
			return -EINVAL;
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->pkey_index = (uint16_t)pi;
		a->port_num = id->port->num;
		if (ud) {
			a->qp_attr_mask |= IBV_QP_QKEY;
			a->qkey = UDP_QKEY;
		} else {
			/* cm_init_qp_init_attr: reads and atomics only with
			 * responder resources. */
			a->qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (id->resp_res)
				a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
						      IBV_ACCESS_REMOTE_ATOMIC;
		}
		return 0;
	case IBV_QPS_RTR:
		a->qp_attr_mask = IBV_QP_STATE;
		if (ud)
			return 0;
		if (id->state < CMA_REQ_RCVD && id->state != CMA_REP_RCVD)
			return -EINVAL;
		a->qp_attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		a->ah_attr.dlid = id->path.dlid;
		a->ah_attr.sl = id->path.sl;
		a->ah_attr.src_path_bits = id->path.slid & ((1u << port_mgmt(id->port)->lmc) - 1);
		a->ah_attr.port_num = id->port->num;
		cma_roce_grh(id, &a->ah_attr);
		a->path_mtu = id->path.mtu;
		a->dest_qp_num = id->remote_qpn;
		a->rq_psn = id->rq_psn;
		a->max_dest_rd_atomic = id->resp_res;
		a->min_rnr_timer = 0;
		return 0;
	case IBV_QPS_RTS:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		if (id->state < CMA_REQ_RCVD && id->state != CMA_REP_RCVD)
			return -EINVAL;
		a->qp_attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC;
		a->sq_psn = id->sq_psn;
		a->timeout = id->ack_timeout ? id->ack_timeout : MIN(31, id->path.packet_life + 1);
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry;
		a->max_rd_atomic = id->init_depth;
		return 0;
	default:
		return -EINVAL;
	}
}

void cma_init(struct ucma *u)
{
	u->by_comm_id = g_hash_table_new(NULL, NULL);
	u->sa_queries = g_hash_table_new(NULL, NULL);
	u->mcs = g_hash_table_new(NULL, NULL);
	u->mc_queries = g_hash_table_new(NULL, NULL);
	u->next_comm_id = 1;
	u->psn_seed = 0x5eed;
}

void cma_fini(struct ucma *u)
{
	g_list_free(u->listeners);
	g_hash_table_destroy(u->by_comm_id);
	g_hash_table_destroy(u->sa_queries);
	g_hash_table_destroy(u->mcs);
	g_hash_table_destroy(u->mc_queries);
}
