/* SPDX-License-Identifier: MIT */
/*
 * IPoIB's connected mode (RFC 4755; the kernel's ipoib_cm.c): with
 * `mode` connected an interface sends unicast IP to a neighbour whose
 * hardware address has the RC flag over a reliable connection of its
 * own, messages of up to 65,524 bytes, so its MTU is 65,520. Every
 * interface takes such connections, whatever its own mode, as the
 * kernel's listens on IPOIB_CM_IETF_ID | its UD QPN.
 *
 * The connection is made as ib_cm makes it, with CM MADs through the
 * fabric: REQ (the service ID, our UD QPN and the message size in the
 * private data), REP, RTU; DREQ and DREP when our side lets it go. Its
 * packets are RC SENDs cut at the path MTU, each message's last asking
 * an ACK. ipoib asks retry_count and rnr_retry_count 0 ("RFC draft warns
 * against retries"): a packet lost on the way (a cut cable, a drop rule)
 * makes the receiver NAK the next one, or no ACK comes in time, and the
 * connection fails at once; the sender lets it go (a DREQ) and makes a
 * new one for the next packet, while TCP resends what was lost. So no
 * packet is ever sent twice here, as ipoib's never are.
 *
 * Both ends are ours (every host's interfaces are the emulator's), but
 * all they say to each other goes through the fabric, where a capture
 * shows it and the counters count it.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "fabric/port.h"
#include "kernel/cm_wire.h"
#include "kernel/ipoib_priv.h"
#include "kernel/uverbs.h"
#include "lib/log.h"

/* RFC 4755 §5.1: the service ID of an interface's listener is this with
 * its UD QPN in the low 24 bits. */
#define IPOIB_CM_IETF_ID	0x1000000000000000ull
/* The upper TID bits of our CM MADs, beside the rdma_cm's (0x01000000)
 * and our SA queries' (0x01000003). */
#define CM_HI_TID_IPOIB		0x01000004ull
/* Our communication IDs, apart from the rdma_cm's, which count from 1
 * on the same host. */
#define COMM_ID_FIRST		0x80000000u
/* ipoib_cm_send_req's: responder resources 4, CM response timeouts 20
 * (4.096 us x 2^20, 4.3 s), 15 CM retries, retry and RNR retry 0. */
#define CM_RESP_RES		4
#define CM_RESPONSE_TIMEOUT	20
#define CM_MAX_RETRIES		15
#define CM_TIMEOUT_US		((4096ull << CM_RESPONSE_TIMEOUT) / 1000)
/* The local ACK timeout: the path's packet lifetime, opensm's 18, plus
 * one (cm_format_req), 4.096 us x 2^19 = 2.1 s. */
#define PACKET_LIFE		18
#define ACK_TIMEOUT_US		((4096ull << (PACKET_LIFE + 1)) / 1000)
/* Connections an interface holds, ours and theirs: past it a REQ is
 * refused (No QP) once the least used of theirs was let go, and ours are
 * not made (the packet goes as a datagram's would not: dropped). The
 * kernel bounds them by the HCA's QPs; ours has 1,024 for all. */
#define CONN_MAX		256
/* ... and all interfaces of one HCA together, children too (64 a port):
 * half its QPs, so that REQs from a hostile peer, whatever interface
 * they name, leave the other half to the host's programs. */
#define CONN_DEVICE_MAX		(VERBS_MAX_QP / 2)
/* Packets held for a connection being made (IPOIB_MAX_PATH_REC_QUEUE). */
#define PENDING_MAX		16
/* How long a message waits for a full receiver's credit. */
#define HOLD_US			(1 * G_USEC_PER_SEC)
#define PSN_MASK		0xffffffu
#define QPT_RC			2	/* IBV_QPT_RC */
/* AETH syndromes (IBA 9.7.5.2.1, Table 42). */
#define AETH_ACK		0x1f	/* ACK, credit count "invalid" */
#define AETH_NAK_SEQ		0x60

enum conn_state { CONN_REQ_SENT, CONN_REP_SENT, CONN_UP };

struct cm_conn {
	struct link *k;
	struct neigh *n;	/* ours: the neighbour it carries to; theirs: NULL */
	enum conn_state state;
	uint32_t id, remote_id;	/* communication IDs */
	uint64_t remote_guid;
	uint32_t qpn, remote_qpn;
	uint16_t dlid;		/* theirs: the peer's LID, from its REQ */
	uint8_t peer_hw[IPOIB_HWADDR_LEN];	/* theirs: the peer's address */
	uint32_t peer_mtu;	/* the largest message the peer takes */
	MAD_BUF(msg);		/* our REQ or REP, sent again until answered */
	unsigned resends;
	struct timer timer;	/* the CM's resends; ours: the ACK timeout */
	uint32_t psn;		/* ours: the next to send; theirs: the next expected */
	uint32_t acked;		/* ours: every PSN before it acknowledged */
	bool nak_said;
	uint8_t *rbuf;		/* theirs: a message coming, 10 bytes of headroom */
	size_t rlen;
	bool rbad;		/* ... too long: not delivered */
	GQueue pending;		/* ours, being made: GBytes of IPoIB packets */
	uint64_t msgs;		/* sent (ours) or received (theirs) */
	int64_t last_us;	/* when it last carried something */
};

static struct timerq *tq_of(const struct link *k)
{
	return host_tq(k->all->h);
}

static uint16_t conn_dlid(const struct cm_conn *c)
{
	return c->n ? ipoib_path_lid(c->n) : c->dlid;
}

/* ---- connections -------------------------------------------------------------- */

static void conn_timer(struct timer *t, void *ctx);
static void unhold(struct link *k);
static void send_short(struct cm_conn *c, uint16_t attr, uint16_t reason);

static void conn_free(struct cm_conn *c)
{
	struct link *k = c->k;
	struct verbs_ioc_qp q = { .qpn = c->qpn };
	GBytes *b;

	if (k->held && k->held_conn == c) {
		ipoib_drop(k, "its connection went");
		unhold(k);
	}
	timerq_cancel(tq_of(k), &c->timer);
	g_hash_table_remove(k->conn_by_qpn, GUINT_TO_POINTER(c->qpn));
	g_hash_table_remove(k->conn_by_id, GUINT_TO_POINTER(c->id));
	(void)uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_DESTROY, &q);
	if (c->n)
		c->n->cm = NULL;
	while ((b = g_queue_pop_head(&c->pending))) {
		ipoib_drop(k, "its connection went");
		g_bytes_unref(b);
	}
	g_free(c->rbuf);
	g_free(c);
}

/* The least used of the peers' connections, to make room (ipoib's stale
 * task lets theirs go after minutes unused). */
static struct cm_conn *least_used_theirs(struct link *k)
{
	struct cm_conn *c, *old = NULL;
	GHashTableIter it;

	g_hash_table_iter_init(&it, k->conn_by_qpn);
	while (g_hash_table_iter_next(&it, NULL, (void **)&c))
		if (!c->n && (!old || c->last_us < old->last_us))
			old = c;
	return old;
}

/* The connections of every interface on @k's HCA. */
static unsigned device_conns(const struct link *k)
{
	unsigned i, n = 0;

	for (i = 0; i < k->all->links->len; i++) {
		const struct link *o = g_ptr_array_index(k->all->links, i);

		if (o->port->node == k->port->node)
			n += g_hash_table_size(o->conn_by_qpn);
	}
	return n;
}

static bool conns_full(const struct link *k)
{
	return g_hash_table_size(k->conn_by_qpn) >= CONN_MAX ||
	       device_conns(k) >= CONN_DEVICE_MAX;
}

/* A connection with an RC QP of its own on the interface's port, or NULL
 * (no room, no QP). */
static struct cm_conn *conn_new(struct link *k, struct neigh *n)
{
	struct ipoib_links *l = k->all;
	struct verbs_ioc_qp q = { .type = QPT_RC };
	struct cm_conn *c, *old;

	if (conns_full(k) && (old = least_used_theirs(k))) {
		if (old->state == CONN_UP)	/* its peer lets go too, or fails */
			send_short(old, CM_ATTR_DREQ, 0);
		conn_free(old);
	}
	if (conns_full(k)) {
		if (!k->conns_full_said)
			g_warning("ipoib: %s: %u connections, %u on its HCA: no more made", k->name,
				  g_hash_table_size(k->conn_by_qpn), device_conns(k));
		k->conns_full_said = true;
		return NULL;
	}
	if (uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_CREATE, &q) < 0)
		return NULL;
	c = g_new0(struct cm_conn, 1);
	c->k = k;
	c->n = n;
	c->qpn = q.qpn;
	q.port = k->port->num;
	(void)uverbs_ctx_ioctl(k->ctx, VERBS_IOC_QP_SET, &q);
	do
		c->id = COMM_ID_FIRST | (l->next_comm_id++ & ~COMM_ID_FIRST);
	while (g_hash_table_contains(k->conn_by_id, GUINT_TO_POINTER(c->id)));
	g_queue_init(&c->pending);
	timer_init(&c->timer, conn_timer, c);
	c->last_us = g_get_monotonic_time();
	g_hash_table_insert(k->conn_by_qpn, GUINT_TO_POINTER(c->qpn), c);
	g_hash_table_insert(k->conn_by_id, GUINT_TO_POINTER(c->id), c);
	return c;
}

/* ---- CM MADs ---------------------------------------------------------------- */

static void cm_hdr(const struct cm_conn *c, uint8_t *m, uint16_t attr)
{
	memset(m, 0, MAD_SIZE);
	m[MAD_OFF(base_version)] = 1;
	m[MAD_OFF(mgmt_class)] = CM_CLASS;
	m[MAD_OFF(class_version)] = CM_CLASS_VERSION;
	m[MAD_OFF(method)] = CM_METHOD_SEND;
	mad_set_tid(m, CM_HI_TID_IPOIB << 32 | c->id);
	mad_set_attr_id(m, attr);
}

/* To the peer's GSI, as ib_cm sends along the path. */
static void cm_send_to(struct link *k, uint16_t dlid, const uint8_t *m)
{
	struct mad_pkt pkt = { 0 };

	if (!dlid)
		return;
	memcpy(pkt.mad, m, MAD_SIZE);
	pkt.slid = k->port->lid;
	pkt.dlid = dlid;
	pkt.sqp = 1;
	pkt.dqp = 1;
	pkt.qkey = 0x80010000u;	/* IB_QP1_QKEY */
	pkt.pkey = port_first_pkey(k->port);	/* QP1's: the default's */
	fabric_send(host_fabric(k->all->h), k->port, &pkt);
}

/* Send c->msg (a REQ or a REP), again on the timer until answered. The
 * timer first: the fabric delivers as it sends, and the answer may come
 * before cm_send_to returns. */
static void cm_send_reliable(struct cm_conn *c)
{
	c->resends = 0;
	timerq_arm(tq_of(c->k), &c->timer, CM_TIMEOUT_US);
	cm_send_to(c->k, conn_dlid(c), c->msg);
}

static void put_private(const struct link *k, uint8_t *priv)
{
	/* struct ipoib_cm_data: our UD QPN, the largest message we take. */
	put_be32(priv, 0, k->qpn);
	put_be32(priv, 4, IPOIB_CM_BUF);
}

static void send_req(struct cm_conn *c)
{
	struct link *k = c->k;
	struct port *p = k->port;
	uint8_t *m = c->msg;

	cm_hdr(c, m, CM_ATTR_REQ);
	cm_put(m, CM_REQ_LOCAL_COMM_ID, c->id);
	cm_put(m, CM_REQ_SERVICE_ID, IPOIB_CM_IETF_ID | ipoib_hw_qpn(c->n->hw));
	cm_put(m, CM_REQ_LOCAL_CA_GUID, p->node->guid);
	cm_put(m, CM_REQ_LOCAL_QPN, c->qpn);
	cm_put(m, CM_REQ_RESP_RES, CM_RESP_RES);
	cm_put(m, CM_REQ_REMOTE_CM_TIMEOUT, CM_RESPONSE_TIMEOUT);
	cm_put(m, CM_REQ_TRANSPORT, 0);		/* RC */
	cm_put(m, CM_REQ_STARTING_PSN, 0);	/* as ipoib: 0 */
	cm_put(m, CM_REQ_LOCAL_CM_TIMEOUT, CM_RESPONSE_TIMEOUT);
	cm_put(m, CM_REQ_RETRY_COUNT, 0);
	cm_put(m, CM_REQ_PKEY, ipoib_pkey(k));
	cm_put(m, CM_REQ_MTU, p->neighbor_mtu);
	cm_put(m, CM_REQ_RNR_RETRY, 0);
	cm_put(m, CM_REQ_MAX_CM_RETRIES, CM_MAX_RETRIES);
	cm_put(m, CM_REQ_SRQ, 1);
	cm_put(m, CM_REQ_PRIMARY_LOCAL_LID, p->lid);
	cm_put(m, CM_REQ_PRIMARY_REMOTE_LID, ipoib_path_lid(c->n));
	port_gid(p, 0, m + CM_REQ_PRIMARY_LOCAL_GID);
	memcpy(m + CM_REQ_PRIMARY_REMOTE_GID, c->n->hw + 4, 16);
	cm_put(m, CM_REQ_PRIMARY_SUBNET_LOCAL, 1);
	cm_put(m, CM_REQ_PRIMARY_ACK_TIMEOUT, PACKET_LIFE + 1);
	put_private(k, m + CM_REQ_PRIVATE);
	c->state = CONN_REQ_SENT;
	c->psn = c->acked = 0;
	cm_send_reliable(c);
}

static void send_rep(struct cm_conn *c, unsigned rnr_retry)
{
	uint8_t *m = c->msg;

	cm_hdr(c, m, CM_ATTR_REP);
	cm_put(m, CM_REP_LOCAL_COMM_ID, c->id);
	cm_put(m, CM_REP_REMOTE_COMM_ID, c->remote_id);
	cm_put(m, CM_REP_LOCAL_QPN, c->qpn);
	cm_put(m, CM_REP_STARTING_PSN, c->k->psn_seed & PSN_MASK);
	cm_put(m, CM_REP_RNR_RETRY, rnr_retry);
	cm_put(m, CM_REP_SRQ, 1);
	cm_put(m, CM_REP_LOCAL_CA_GUID, c->k->port->node->guid);
	put_private(c->k, m + CM_REP_PRIVATE);
	c->state = CONN_REP_SENT;
	cm_send_reliable(c);
}

/* Two-ID messages: RTU, DREQ, DREP, REJ. */
static void send_short(struct cm_conn *c, uint16_t attr, uint16_t reason)
{
	MAD_BUF(m);

	cm_hdr(c, m, attr);
	cm_put(m, CM_RTU_LOCAL_COMM_ID, c->id);		/* all at 0 and 4 */
	cm_put(m, CM_RTU_REMOTE_COMM_ID, c->remote_id);
	if (attr == CM_ATTR_DREQ)
		cm_put(m, CM_DREQ_REMOTE_QPN, c->remote_qpn);
	if (attr == CM_ATTR_REJ) {
		cm_put(m, CM_REJ_MESSAGE, c->state == CONN_REP_SENT ? 1 : 0);
		cm_put(m, CM_REJ_REASON, reason);
	}
	cm_send_to(c->k, conn_dlid(c), m);
}

/* A REQ refused before any connection was made for it. */
static void reject_req(struct link *k, const struct mad_pkt *pkt, uint16_t reason)
{
	struct cm_conn tmp = { .k = k, .remote_id = (uint32_t)cm_get(pkt->mad, CM_REQ_LOCAL_COMM_ID),
			       .dlid = pkt->slid };

	send_short(&tmp, CM_ATTR_REJ, reason);
}

/* Our connection failed (no ACK, a NAK: retry_count 0): let it go with
 * a DREQ, as ib_destroy_cm_id does for an established one. */
static void conn_fail(struct cm_conn *c, const char *why)
{
	g_debug("ipoib: %s: connection 0x%06x to QPN 0x%06x failed: %s", c->k->name, c->qpn,
		c->remote_qpn, why);
	if (c->state == CONN_UP)
		send_short(c, CM_ATTR_DREQ, 0);
	else if (c->state == CONN_REQ_SENT)
		send_short(c, CM_ATTR_REJ, CM_REJ_TIMEOUT);
	conn_free(c);
}

static void conn_timer(struct timer *t, void *ctx)
{
	struct cm_conn *c = ctx;

	(void)t;
	if (c->state == CONN_UP) {
		if (c->acked != c->psn)
			conn_fail(c, "no ACK in time");
		return;
	}
	if (c->resends++ < CM_MAX_RETRIES) {
		timerq_arm(tq_of(c->k), &c->timer, CM_TIMEOUT_US);
		cm_send_to(c->k, conn_dlid(c), c->msg);
		return;
	}
	g_debug("ipoib: %s: no answer to our %s", c->k->name,
		c->state == CONN_REQ_SENT ? "REQ" : "REP");
	conn_free(c);
}

/* ---- data --------------------------------------------------------------------- */

/* The header of @c's packet @opcode, PSN @psn, @len payload bytes, at
 * P_Key index @pi and DLID @dlid (the caller's, once a message). */
static void rc_hdr(const struct cm_conn *c, struct verbs_wire_pkt *w, unsigned opcode,
		   uint32_t psn, size_t len, int pi, uint16_t dlid)
{
	memset(w, 0, sizeof(*w));
	w->rec.type = VERBS_REC_PKT;
	w->rec.len = (uint32_t)(sizeof(*w) + len);
	w->port = c->k->port->num;
	w->opcode = (uint8_t)opcode;
	w->pkey_index = (uint16_t)MAX(pi, 0);
	w->dlid = dlid;
	w->sqpn = c->qpn;
	w->dqpn = c->remote_qpn;
	w->psn = psn & PSN_MASK;
	w->len = (uint32_t)len;
}

/* A packet of @c with no payload: an ACK or a NAK of @psn. */
static void send_ack(struct cm_conn *c, uint32_t psn, unsigned syndrome)
{
	struct verbs_wire_pkt w;

	rc_hdr(c, &w, OP_RC_ACK, psn, 0, ipoib_pkey_index(c->k), conn_dlid(c));
	w.aeth = (uint32_t)syndrome << 24 | (uint32_t)(c->msgs & PSN_MASK);
	(void)uverbs_ctx_write(c->k->ctx, &w, sizeof(w));
}

/* The path MTU in bytes: the port's active MTU (IBA enum: 256 << (n-1)). */
static size_t path_mtu(const struct port *p)
{
	unsigned m = p->neighbor_mtu;

	return m >= 1 && m <= 5 ? 128u << m : 2048;
}

/* A message written: its PSNs are gone, an ACK awaited. */
static void sent(struct cm_conn *c, uint32_t npk)
{
	c->psn = (c->psn + npk) & PSN_MASK;
	c->msgs++;
	c->last_us = g_get_monotonic_time();
	c->k->tx++;
	if (!timer_armed(&c->timer))
		timerq_arm(tq_of(c->k), &c->timer, ACK_TIMEOUT_US);
}

/* The held message goes no more (sent, or given up): frames are taken
 * again. */
static void unhold(struct link *k)
{
	k->held = 0;
	k->held_conn = NULL;
	timerq_cancel(tq_of(k), &k->hold_timer);
	ipoib_link_pause(k, false);
}

/* No credit in time (the receiver's reader went): the message is lost,
 * as one that waited past HOQLife in a switch. */
static void hold_over(struct timer *t, void *ctx)
{
	struct link *k = ctx;

	(void)t;
	ipoib_drop(k, "no credit in time");
	unhold(k);
}

void ipoib_cm_credit(struct link *k)
{
	if (!k->held || uverbs_ctx_write(k->ctx, k->seg, k->held) < 0)
		return;		/* still full: the next credit */
	sent(k->held_conn, k->held_npk);
	unhold(k);
}

/* One message: RC SENDs of at most the path MTU each, the last asking an
 * ACK, written at once (all or none go). A full receiver holds it, and
 * the interface stops taking frames, as ipoib stops its queue when the
 * send queue is full: TCP sees a slower link, not a lost segment. */
static void send_msg(struct cm_conn *c, const uint8_t *p, size_t len)
{
	struct link *k = c->k;
	size_t mtu = path_mtu(k->port), npk = (len + mtu - 1) / mtu, off = 0, i;
	int pi = ipoib_pkey_index(k);
	uint16_t dlid = conn_dlid(c);
	ssize_t ret;

	if (!dlid || len > c->peer_mtu || k->held || pi < 0) {
		ipoib_drop(k, "no path, too long, or held");
		return;
	}
	if (!k->seg)
		k->seg = g_malloc(IPOIB_CM_BUF + (IPOIB_CM_BUF / 256 + 1) *
				  sizeof(struct verbs_wire_pkt));
	for (i = 0; i < npk; i++) {
		struct verbs_wire_pkt w;
		size_t n = MIN(mtu, len - i * mtu);

		rc_hdr(c, &w, npk == 1 ? OP_RC_SEND_ONLY : i == 0 ? OP_RC_SEND_FIRST :
			      i + 1 == npk ? OP_RC_SEND_LAST : OP_RC_SEND_MIDDLE,
		       c->psn + (uint32_t)i, n, pi, dlid);
		w.flags = i + 1 == npk ? VERBS_PKT_ACKREQ : 0;
		memcpy(k->seg + off, &w, sizeof(w));
		memcpy(k->seg + off + sizeof(w), p + i * mtu, n);
		off += sizeof(w) + n;
	}
	if ((ret = uverbs_ctx_write(k->ctx, k->seg, off)) == -EAGAIN) {
		k->held = off;
		k->held_conn = c;
		k->held_npk = (uint32_t)npk;
		timerq_arm(tq_of(k), &k->hold_timer, HOLD_US);
		ipoib_link_pause(k, true);
	} else if (ret < 0) {
		ipoib_drop(k, "refused by the device");
	} else {
		sent(c, (uint32_t)npk);
	}
}

void ipoib_cm_xmit(struct link *k, struct neigh *n, const uint8_t *p, size_t len)
{
	struct cm_conn *c = n->cm;

	if (len > IPOIB_CM_BUF) {
		ipoib_drop(k, "past connected mode's MTU");
		return;
	}
	if (c && c->state == CONN_UP) {
		send_msg(c, p, len);
		return;
	}
	if (!c && !(c = conn_new(k, n))) {
		ipoib_drop(k, "no connection to be had");
		return;
	}
	if (c->pending.length >= PENDING_MAX) {
		ipoib_drop(k, "too many waiting for the connection");
		return;
	}
	/* Held until the connection is up (ipoib's neigh->queue). */
	g_queue_push_tail(&c->pending, g_bytes_new(p, len));
	if (!n->cm) {
		n->cm = c;
		send_req(c);	/* may be answered at once */
	}
}

/* The peer's ACK or NAK for our connection @c. */
static void ack_in(struct cm_conn *c, const struct verbs_wire_pkt *w)
{
	unsigned syn = w->aeth >> 24;

	if (w->opcode != OP_RC_ACK)
		return;
	if ((syn & 0x60) != 0) {	/* a NAK or an RNR NAK: no retries */
		conn_fail(c, syn == AETH_NAK_SEQ ? "a sequence NAK" : "a NAK");
		return;
	}
	c->acked = (w->psn + 1) & PSN_MASK;
	if (c->acked == c->psn)
		timerq_cancel(tq_of(c->k), &c->timer);
	else
		timerq_arm(tq_of(c->k), &c->timer, ACK_TIMEOUT_US);
}

/* A SEND on the peer's connection @c to us, in PSN order or not. */
static void send_in(struct cm_conn *c, const struct verbs_wire_pkt *w, const uint8_t *p)
{
	unsigned op = w->opcode;
	bool first = op == OP_RC_SEND_FIRST || op == OP_RC_SEND_ONLY,
	     last = op == OP_RC_SEND_LAST || op == OP_RC_SEND_ONLY;

	if (op > OP_RC_SEND_ONLY || op == OP_RC_SEND_LAST_IMM)
		return;		/* ipoib sends nothing else */
	if (c->state == CONN_REP_SENT) {
		/* A packet before the RTU: established (IBA 12.9.7). */
		timerq_cancel(tq_of(c->k), &c->timer);
		c->state = CONN_UP;
	}
	if (w->psn != c->psn) {
		/* Behind: a duplicate, ACKed again; ahead: one was lost,
		 * NAKed once (IBA 9.7.5.1.2). */
		if (((c->psn - w->psn) & PSN_MASK) < (PSN_MASK >> 1))
			send_ack(c, w->psn, AETH_ACK);
		else if (!c->nak_said)
			send_ack(c, c->psn, AETH_NAK_SEQ);
		c->nak_said = true;
		return;
	}
	c->nak_said = false;
	c->psn = (c->psn + 1) & PSN_MASK;
	c->last_us = g_get_monotonic_time();
	if (first) {
		if (!c->rbuf)
			c->rbuf = g_malloc(ETH_HDR - IPOIB_HDR + IPOIB_CM_BUF);
		c->rlen = 0;
		c->rbad = false;
	}
	if (!c->rbuf || c->rlen + w->len > IPOIB_CM_BUF) {
		c->rbad = true;
	} else {
		memcpy(c->rbuf + ETH_HDR - IPOIB_HDR + c->rlen, p, w->len);
		c->rlen += w->len;
	}
	if (!last)
		return;
	if (w->flags & VERBS_PKT_ACKREQ)
		send_ack(c, w->psn, AETH_ACK);
	c->msgs++;
	if (c->rbad || c->rlen < IPOIB_HDR)
		ipoib_drop(c->k, "a message malformed");
	else
		ipoib_ip_in(c->k, c->rbuf + ETH_HDR - IPOIB_HDR, c->rlen, true, false,
			    c->peer_hw);
	/* Kept for a connection that carries, let go when it goes. */
}

bool ipoib_cm_pkt_in(struct link *k, const struct verbs_wire_pkt *w, const uint8_t *p)
{
	struct cm_conn *c = g_hash_table_lookup(k->conn_by_qpn, GUINT_TO_POINTER(w->dqpn));

	if (!c)
		return false;
	/* Only the connected QP's packets are taken (IBA 9.6.1.5.1). */
	if (c->state == CONN_REQ_SENT || w->sqpn != c->remote_qpn)
		return true;
	if (c->n)
		ack_in(c, w);
	else
		send_in(c, w, p);
	return true;
}

/* ---- the CM's messages in ---------------------------------------------------- */

static struct link *link_for_service(struct ipoib_links *l, struct port *port, uint64_t sid)
{
	unsigned i;

	if ((sid & ~(uint64_t)PSN_MASK) != IPOIB_CM_IETF_ID)
		return NULL;
	for (i = 0; i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);

		if (k->port == port && k->qpn == (sid & PSN_MASK))
			return k;
	}
	return NULL;
}

/* The connection of ours @m names in its field @f, at @port. */
static struct cm_conn *conn_named(struct ipoib_links *l, struct port *port, const uint8_t *m,
				  struct cm_field f)
{
	gpointer id = GUINT_TO_POINTER((uint32_t)cm_get(m, f));
	unsigned i;

	for (i = 0; i < l->links->len; i++) {
		struct link *k = g_ptr_array_index(l->links, i);
		struct cm_conn *c;

		if (k->port == port && (c = g_hash_table_lookup(k->conn_by_id, id)))
			return c;
	}
	return NULL;
}

static void take_req(struct link *k, const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	uint32_t rid = (uint32_t)cm_get(m, CM_REQ_LOCAL_COMM_ID);
	uint64_t guid = cm_get(m, CM_REQ_LOCAL_CA_GUID);
	uint32_t mtu = get_be32(m, CM_REQ_PRIVATE + 4);
	struct cm_conn *c;
	GHashTableIter it;

	/* The same REQ again (our REP was lost): the REP again. */
	g_hash_table_iter_init(&it, k->conn_by_qpn);
	while (g_hash_table_iter_next(&it, NULL, (void **)&c))
		if (!c->n && c->remote_id == rid && c->remote_guid == guid) {
			if (c->state == CONN_REP_SENT)
				cm_send_to(k, c->dlid, c->msg);
			return;
		}
	if (cm_get(m, CM_REQ_TRANSPORT) != 0 || mtu <= IPOIB_HDR) {
		reject_req(k, pkt, CM_REJ_CONSUMER_DEFINED);
		return;
	}
	if (!(c = conn_new(k, NULL))) {
		reject_req(k, pkt, CM_REJ_NO_QP);
		return;
	}
	c->remote_id = rid;
	c->remote_guid = guid;
	c->remote_qpn = (uint32_t)cm_get(m, CM_REQ_LOCAL_QPN);
	c->dlid = (uint16_t)cm_get(m, CM_REQ_PRIMARY_LOCAL_LID);
	c->psn = (uint32_t)cm_get(m, CM_REQ_STARTING_PSN);
	c->peer_mtu = mtu;
	/* Its address: flags, its UD QPN, its GID (the stand-in MAC of the
	 * frames it sends us is the one ARP gave for it). */
	c->peer_hw[0] = IPOIB_FLAGS_RC;
	ipoib_hw_set_qpn(c->peer_hw, get_be32(m, CM_REQ_PRIVATE));
	memcpy(c->peer_hw + 4, m + CM_REQ_PRIMARY_LOCAL_GID, 16);
	k->psn_seed = k->psn_seed * 1103515245u + 12345u;
	send_rep(c, (unsigned)cm_get(m, CM_REQ_RNR_RETRY));
}

static void take_rep(struct cm_conn *c, const uint8_t *m)
{
	struct link *k = c->k;
	GBytes *b;

	if (!c->n)
		return;
	if (c->state == CONN_UP) {	/* our RTU was lost */
		send_short(c, CM_ATTR_RTU, 0);
		return;
	}
	c->remote_id = (uint32_t)cm_get(m, CM_REP_LOCAL_COMM_ID);
	c->remote_guid = cm_get(m, CM_REP_LOCAL_CA_GUID);
	c->remote_qpn = (uint32_t)cm_get(m, CM_REP_LOCAL_QPN);
	c->peer_mtu = get_be32(m, CM_REP_PRIVATE + 4);
	if (c->peer_mtu <= IPOIB_HDR) {	/* ipoib_cm_rep_handler refuses it */
		send_short(c, CM_ATTR_REJ, CM_REJ_CONSUMER_DEFINED);
		conn_free(c);
		return;
	}
	/* We send from our REQ's starting PSN (the REP's is the peer's,
	 * which only its ACKs' echo). */
	timerq_cancel(tq_of(k), &c->timer);
	c->state = CONN_UP;
	send_short(c, CM_ATTR_RTU, 0);
	g_debug("ipoib: %s: connected, QP 0x%06x to 0x%06x", k->name, c->qpn, c->remote_qpn);
	while (c->state == CONN_UP && (b = g_queue_pop_head(&c->pending))) {
		gsize n;
		const uint8_t *p = g_bytes_get_data(b, &n);

		send_msg(c, p, n);
		g_bytes_unref(b);
	}
}

enum upper_verdict ipoib_cm_mad(struct ipoib_links *l, struct port *port,
				const struct mad_pkt *pkt)
{
	const uint8_t *m = pkt->mad;
	struct cm_conn *c;
	struct link *k;

	if (pkt->data || mad_class(m) != CM_CLASS || mad_method(m) != CM_METHOD_SEND)
		return UPPER_UNCLAIMED;
	switch (mad_attr_id(m)) {
	case CM_ATTR_REQ:
		if (!(k = link_for_service(l, port, cm_get(m, CM_REQ_SERVICE_ID))))
			return UPPER_UNCLAIMED;
		take_req(k, pkt);
		return UPPER_TAKEN;
	case CM_ATTR_REP:
	case CM_ATTR_RTU:
	case CM_ATTR_REJ:
	case CM_ATTR_DREQ:
	case CM_ATTR_DREP:
	case CM_ATTR_MRA:
		/* Each names ours second (IBA Tables 107-113). */
		if (!(c = conn_named(l, port, m, CM_RTU_REMOTE_COMM_ID)))
			return UPPER_UNCLAIMED;
		break;
	default:
		return UPPER_UNCLAIMED;
	}
	switch (mad_attr_id(m)) {
	case CM_ATTR_REP:
		if (c->state == CONN_REQ_SENT || c->state == CONN_UP)
			take_rep(c, m);
		break;
	case CM_ATTR_RTU:
		if (!c->n && c->state == CONN_REP_SENT) {
			timerq_cancel(tq_of(c->k), &c->timer);
			c->state = CONN_UP;
		}
		break;
	case CM_ATTR_REJ:
		g_debug("ipoib: %s: connection refused (reason %u)", c->k->name,
			(unsigned)cm_get(m, CM_REJ_REASON));
		conn_free(c);
		break;
	case CM_ATTR_DREQ:
		send_short(c, CM_ATTR_DREP, 0);
		conn_free(c);
		break;
	default:	/* DREP: gone already; MRA: we wait as long anyway */
		break;
	}
	return UPPER_TAKEN;
}

/* ---- the interface's --------------------------------------------------------- */

void ipoib_cm_init(struct link *k)
{
	timer_init(&k->hold_timer, hold_over, k);
	k->conn_by_qpn = g_hash_table_new(NULL, NULL);
	k->conn_by_id = g_hash_table_new(NULL, NULL);
	k->psn_seed = k->qpn;
}

static void free_all(struct link *k, bool ours_only, bool say)
{
	GHashTableIter it;
	struct cm_conn *c;
	GPtrArray *go = g_ptr_array_new();
	unsigned i;

	g_hash_table_iter_init(&it, k->conn_by_qpn);
	while (g_hash_table_iter_next(&it, NULL, (void **)&c))
		if (!ours_only || c->n)
			g_ptr_array_add(go, c);
	for (i = 0; i < go->len; i++) {
		c = g_ptr_array_index(go, i);
		if (say && c->state == CONN_UP)
			send_short(c, CM_ATTR_DREQ, 0);
		conn_free(c);
	}
	g_ptr_array_free(go, TRUE);
}

void ipoib_cm_flush(struct link *k)
{
	free_all(k, true, true);
}

void ipoib_cm_fini(struct link *k)
{
	if (!k->conn_by_qpn)
		return;
	timerq_cancel(tq_of(k), &k->hold_timer);
	free_all(k, false, false);
	g_hash_table_destroy(k->conn_by_qpn);
	g_hash_table_destroy(k->conn_by_id);
	g_free(k->seg);
}

void ipoib_cm_status(const struct link *k, GString *s)
{
	static const char *const state[] = { "REQ sent", "REP sent", "up" };
	GHashTableIter it;
	struct cm_conn *c;

	g_hash_table_iter_init(&it, k->conn_by_qpn);
	while (g_hash_table_iter_next(&it, NULL, (void **)&c))
		g_string_append_printf(s, "ipoib:   connection %s: QP 0x%06x %s LID %u QP 0x%06x, "
				       "%s, %" G_GUINT64_FORMAT " messages %s\n",
				       c->n ? "out" : "in", c->qpn, c->n ? "to" : "from",
				       conn_dlid(c), c->remote_qpn, state[c->state], c->msgs,
				       c->n ? "sent" : "received");
}
