/* SPDX-License-Identifier: MIT */
/*
 * The verbs devices' data path (uverbs.h, docs/verbs.md "Data path"): QP
 * numbers per HCA, the contexts that own them, packets from a context into
 * the fabric and from the fabric to the context that owns the destination
 * QP. The transport (RC reliability, memory) is the provider's, as it is
 * an HCA's; this is the wire and the HCA's port logic.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "abi/verbs_wire.h"
#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/uverbs.h"
#include "kernel/uverbs_priv.h"
#include "lib/log.h"

/* QP numbers are 24 bits; 0 and 1 are the special QPs (IBA 10.2.5). */
#define QPN_MASK	0xffffffu
#define QPN_FIRST	0x40u
/* QPs one device holds (the max_qp ibv_query_device reports). */
#define QPS_MAX		VERBS_MAX_QP
/* What every context on one fabric may hold unread together, in bytes
 * of records: past it packets are dropped for all (40 contexts of one
 * stopped process once held 1.38 GB). README "Limits". */
#define RX_BYTES_ALL	(256u << 20)
/* Drops are said at most once in this long, with their count: one qperf
 * run once logged 1,583 lines. */
#define DROP_SAY_US	(10 * G_USEC_PER_SEC)

/*
 * Link-level flow control (docs/verbs.md "Flow control"): a context that
 * holds VERBS_RX_MAX records unread still takes what is on its way (to
 * RX_HARD_MAX), and holds the sender back: the context whose write put a
 * packet past the limit is refused (EAGAIN) until the receiver has read
 * down to RX_LOW, when a VERBS_REC_CREDIT record tells it to send again.
 * A receiver that has read nothing while packets waited for longer than
 * the HOQLife of the switch port in front of it is stuck (a stopped
 * process): what comes for it is dropped and nobody waits, as that port
 * discards what waited past its head-of-queue lifetime (IBA chapter 18;
 * PortInfo:HOQLife, 4.096 us x 2^HOQLife, 20 and up for ever; 0x13,
 * 2.1 s, unless an SM sets it: opensm gives ports to CAs 0x10, 268 ms).
 */
#define RX_HARD_MAX	(2 * VERBS_RX_MAX)
#define RX_LOW		(VERBS_RX_MAX / 2)

void uverbs_qps_init(struct uverbs_dev *d)
{
	d->qps = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	d->next_qpn = QPN_FIRST;
	uverbs_mcast_init(d);
}

void uverbs_qps_clear(struct uverbs_dev *d)
{
	uverbs_mcast_clear(d);
	if (d->qps)
		g_hash_table_destroy(d->qps);
	d->qps = NULL;
}

/* ---- receiving ---------------------------------------------------------- */

static void queue_rec(struct uverbs_ctx *c, GBytes *rec)
{
	if (!c->rx.length)
		c->drained_us = g_get_monotonic_time();
	c->rx_bytes += g_bytes_get_size(rec);
	c->net->rx_bytes += g_bytes_get_size(rec);
	g_queue_push_tail(&c->rx, rec);
	if (c->wakeup)
		c->wakeup(c->wakeup_ctx);
}

/* (A fabric no context was opened on has no net: nothing to say.) */
size_t uverbs_rx_bytes_all(struct fabric *f)
{
	const struct uverbs_net *net = f->verbs;

	return net ? net->rx_bytes : 0;
}

uint64_t uverbs_dropped_all(struct fabric *f)
{
	const struct uverbs_net *net = f->verbs;

	return net ? net->dropped : 0;
}

unsigned uverbs_held_back(struct fabric *f)
{
	const struct uverbs_net *net = f->verbs;
	unsigned n = 0;
	GList *l;

	for (l = net ? net->contexts : NULL; l; l = l->next)
		n += ((struct uverbs_ctx *)l->data)->blocked_on != NULL;
	return n;
}

/* Senders that wait for @c may send again: a credit record wakes each. */
static void credit(struct uverbs_ctx *c)
{
	static const struct verbs_wire_rec rec = { VERBS_REC_CREDIT, sizeof(rec) };
	GList *l;

	for (l = c->net->contexts; l; l = l->next) {
		struct uverbs_ctx *b = l->data;

		if (b->blocked_on != c)
			continue;
		b->blocked_on = NULL;
		queue_rec(b, g_bytes_new(&rec, sizeof(rec)));
	}
}

static void unqueue_rec(struct uverbs_ctx *c)
{
	GBytes *b = g_queue_pop_head(&c->rx);

	c->rx_bytes -= g_bytes_get_size(b);
	c->net->rx_bytes -= g_bytes_get_size(b);
	g_bytes_unref(b);
	if (c->rx.length == RX_LOW)
		credit(c);
}

static bool stuck(const struct uverbs_ctx *c, int64_t now)
{
	return c->rx.length && c->hoq_us >= 0 && now - c->drained_us > c->hoq_us;
}

/* The HOQLife of the switch port packets reach @in through, in us. */
static int64_t hoq_us(const struct port *in)
{
	unsigned h = in->remote ? in->remote->hoq_life : in->hoq_life;

	return h >= 20 ? -1 : (int64_t)((4096ull << h) / 1000);
}

/* Whether @c takes @len more bytes: past VERBS_RX_MAX it does, holding
 * the writer back; past RX_HARD_MAX or the bytes of all, or stuck, the
 * packet is dropped, as an HCA drops what it has no buffer for, and that
 * is said now and then. */
static bool room_for(struct uverbs_ctx *c, size_t len)
{
	struct uverbs_net *net = c->net;
	const char *full = net->rx_bytes + len > RX_BYTES_ALL ? "the bytes all contexts may hold" :
			   c->rx.length < VERBS_RX_MAX ? NULL :
			   stuck(c, g_get_monotonic_time()) ?
			   "a context that has read nothing for HOQLife" :
			   c->rx.length >= RX_HARD_MAX ? "the packets one context may hold" : NULL;
	int64_t now;

	if (!full) {
		if (c->rx.length >= VERBS_RX_MAX && net->writer && !net->writer->blocked_on)
			net->writer->blocked_on = c;
		return true;
	}
	net->dropped++;
	now = g_get_monotonic_time();
	if (!net->said_at_us || now - net->said_at_us >= DROP_SAY_US) {
		g_warning("%s: verbs contexts that do not read: %s are held (%u, %u MiB): "
			  "%" G_GUINT64_FORMAT " packets dropped so far", c->dev->ca_name, full,
			  VERBS_RX_MAX, RX_BYTES_ALL >> 20, net->dropped);
		net->said_at_us = now;
	}
	return false;
}

/* data_receive checked that one does. */
uint16_t uverbs_pkey_index_of(const struct port *p, uint16_t pkey)
{
	return (uint16_t)MAX(port_pkey_find(p, pkey), 0);
}

struct uverbs_qp *uverbs_qp_at(struct uverbs_dev *d, const struct port *in, uint32_t qpn)
{
	struct uverbs_qp *q = g_hash_table_lookup(d->qps, GUINT_TO_POINTER(qpn));

	return q && (!q->port || q->port == in->num) ? q : NULL;
}

/*
 * A data packet reached CA port @in: the destination QP's owner gets it. A
 * UD QP takes only what carries its Q_Key (IBA 10.2.4), else the
 * port counts a Q_Key violation; a context that does not read loses
 * packets, not memory.
 */
enum upper_verdict uverbs_on_data(void *ctx, struct port *in, const struct mad_pkt *p)
{
	struct uverbs_dev *d = uverbs_dev_of_node(ctx, in->node);
	struct uverbs_qp *q;

	if (!d)
		return UPPER_UNCLAIMED;
	if (verbs_lid_is_mcast(p->dlid))
		return p->dqp == VERBS_QPN_MCAST ? uverbs_mcast_deliver(d, in, p) : UPPER_UNCLAIMED;
	if (!(q = uverbs_qp_at(d, in, p->dqp)))
		return UPPER_UNCLAIMED;
	return uverbs_qp_deliver(q, in, p);
}

enum upper_verdict uverbs_qp_deliver(struct uverbs_qp *q, struct port *in,
				     const struct mad_pkt *p)
{
	struct verbs_wire_pkt *w;
	const void *data;
	gsize len;

	if (q->type == QPT_UD && p->qkey != q->qkey) {
		if (in->qkey_violations < 0xffff)
			in->qkey_violations++;
		return UPPER_DROPPED;
	}
	data = g_bytes_get_data(p->data, &len);
	q->owner->hoq_us = hoq_us(in);
	if (!room_for(q->owner, len))
		return UPPER_DROPPED;
	w = g_memdup2(data, len);
	w->port = in->num;
	w->pkey_index = uverbs_pkey_index_of(in, p->pkey);
	w->dqpn = q->qpn;	/* a multicast copy's QP */
	queue_rec(q->owner, g_bytes_new_take(w, len));
	return UPPER_TAKEN;
}

/* ---- contexts ------------------------------------------------------------ */

static void net_free(void *arg)
{
	struct uverbs_net *net = arg;

	g_warn_if_fail(!net->contexts);
	uverbs_direct_net_free(net);
	g_free(net);
}

struct uverbs_net *uverbs_net_of(struct fabric *f)
{
	static const struct fabric_verbs_ops ops = {
		uverbs_direct_revoke, uverbs_direct_sync, net_free,
	};
	struct uverbs_net *net = f->verbs;

	if (!net) {
		net = g_new0(struct uverbs_net, 1);
		net->f = f;
		f->verbs = net;
		f->verbs_ops = &ops;
	}
	return net;
}

struct uverbs_ctx *uverbs_ctx_open(struct uverbs_dev *d)
{
	struct uverbs_ctx *c = g_new0(struct uverbs_ctx, 1);

	c->dev = d;
	c->net = uverbs_net_of(host_fabric(d->uv->hw));
	g_queue_init(&c->rx);
	c->net->contexts = g_list_prepend(c->net->contexts, c);
	return c;
}

void uverbs_ctx_close(struct uverbs_ctx *c)
{
	GList *l;

	if (!c)
		return;
	fabric_changed(uverbs_ctx_fabric(c));	/* direct paths to and from it */
	uverbs_direct_forget(c);
	for (l = c->qps; l; l = l->next) {
		struct uverbs_qp *q = l->data;

		uverbs_mcast_detach_all(c->dev, q);
		g_hash_table_remove(c->dev->qps, GUINT_TO_POINTER(q->qpn));
	}
	g_list_free(c->qps);
	c->net->contexts = g_list_remove(c->net->contexts, c);
	while (c->rx.length)
		unqueue_rec(c);
	credit(c);	/* nobody waits for a context that is gone */
	g_free(c);
#ifdef __GLIBC__
	/* What it held goes back to the system, not only to malloc's free
	 * lists: a dead process's queues should not stay in our RSS. */
	malloc_trim(0);
#endif
}

struct fabric *uverbs_ctx_fabric(const struct uverbs_ctx *c)
{
	return host_fabric(c->dev->uv->hw);
}

void uverbs_ctx_set_wakeup(struct uverbs_ctx *c, void (*fn)(void *), void *ctx)
{
	c->wakeup = fn;
	c->wakeup_ctx = ctx;
}

bool uverbs_ctx_readable(const struct uverbs_ctx *c)
{
	return c->rx.length > 0;
}

void uverbs_ctx_queue(struct uverbs_ctx *c, const void *rec, size_t len)
{
	queue_rec(c, g_bytes_new(rec, len));
}

ssize_t uverbs_ctx_read(struct uverbs_ctx *c, void *buf, size_t count)
{
	size_t done = 0;
	GBytes *b;

	while ((b = g_queue_peek_head(&c->rx))) {
		gsize len;
		const void *data = g_bytes_get_data(b, &len);

		if (len > count - done)
			break;
		memcpy((char *)buf + done, data, len);
		done += len;
		unqueue_rec(c);
	}
	if (done) {
		c->drained_us = g_get_monotonic_time();	/* not stuck: it reads */
		return (ssize_t)done;
	}
	return c->rx.length ? -EINVAL : -EAGAIN;
}

struct uverbs_qp *uverbs_owned_qp(struct uverbs_ctx *c, uint32_t qpn)
{
	struct uverbs_qp *q = g_hash_table_lookup(c->dev->qps, GUINT_TO_POINTER(qpn));

	return q && q->owner == c ? q : NULL;
}

/* One packet record @w of @len bytes, checked: NULL, or why it is refused. */
static const char *check_pkt(struct uverbs_ctx *c, const struct verbs_wire_pkt *w, size_t len)
{
	struct node *n = c->dev->node;

	if (len < sizeof(*w) || w->rec.type != VERBS_REC_PKT || w->len > VERBS_PKT_MAX_PAYLOAD ||
	    w->rec.len != sizeof(*w) + w->len)
		return "malformed packet record";
	if (w->port < 1 || w->port > n->nports)
		return "no such port";
	if (!uverbs_owned_qp(c, w->sqpn))
		return "the source QP is not this context's";
	if (w->pkey_index >= n->ports[w->port].npkeys)
		return "P_Key index past the port's table";
	if ((w->flags & VERBS_PKT_GRH) && w->sgid_index >= GUIDS_PER_PORT)
		return "GID index past the port's table";
	/* RoCE: every packet has its GRH, the only address there is. */
	if (port_is_roce(&n->ports[w->port]) && !(w->flags & VERBS_PKT_GRH))
		return "no GRH on a RoCE port";
	return NULL;
}

/*
 * Into the fabric as the HCA sends it: SLID is the port's LID with the
 * path bits the sender chose (IBA 7.11.1, LMC), the BTH P_Key the port's
 * table entry the QP names.
 */
static void send_pkt(struct uverbs_ctx *c, const void *rec, size_t len)
{
	struct verbs_wire_pkt *w = g_memdup2(rec, len);	/* aligned, ours */
	struct port *port = &c->dev->node->ports[w->port];
	uint16_t mask = (uint16_t)((1u << port->lmc) - 1);
	struct mad_pkt p;

	w->slid = (uint16_t)((port->lid & ~mask) | (w->slid & mask));
	w->pkey = port->pkeys[w->pkey_index];
	memset(&p, 0, sizeof(p));
	if (w->flags & VERBS_PKT_GRH) {
		port_gid(port, w->sgid_index, w->sgid);
		p.grh = true;
		memcpy(p.sgid, w->sgid, 16);
		memcpy(p.dgid, w->dgid, 16);
	}
	/* RoCE: the destination is its GID's port, reached by the routes the
	 * fabric keeps for it (Ethernet switches' forwarding, docs/roce.md);
	 * a multicast GID its network's group, if it has members; a GID
	 * nobody has goes nowhere (LID 0). */
	w->flags &= (uint8_t)~VERBS_PKT_ROCE_V2;
	if (port_is_roce(port)) {
		struct fabric *f = host_fabric(c->dev->uv->hw);
		const char *type = port_gid_type(port, w->sgid_index);

		if (fabric_gid_is_mcast(w->dgid)) {
			w->dlid = fabric_roce_mcast_mlid(f, port, w->dgid);
		} else {
			struct port *to = fabric_roce_port_by_gid(f, w->dgid);

			w->dlid = to ? to->lid : 0;
		}
		if (type && !strcmp(type, "RoCE v2"))
			w->flags |= VERBS_PKT_ROCE_V2;
	}
	p.slid = w->slid;
	p.dlid = w->dlid;
	p.sqp = w->sqpn;
	p.dqp = w->dqpn;
	p.qkey = w->qkey;
	p.pkey = w->pkey;
	p.sl = w->sl;
	p.data = g_bytes_new_take(w, len);
	fabric_send(host_fabric(c->dev->uv->hw), port, &p);
	g_bytes_unref(p.data);
}

ssize_t uverbs_ctx_write(struct uverbs_ctx *c, const void *buf, size_t count)
{
	const char *b = buf, *why = NULL;
	size_t off;

	/* All or nothing: check every record before the first goes out. */
	for (off = 0; off < count && !why; ) {
		struct verbs_wire_pkt w;

		if (count - off < sizeof(w)) {
			why = "a record cut short";
			break;
		}
		memcpy(&w, b + off, sizeof(w));
		if (w.rec.len > count - off)
			why = "a record cut short";
		else
			why = check_pkt(c, &w, w.rec.len);
		off += w.rec.len;
	}
	if (why) {
		g_debug("%s: verbs write refused: %s", c->dev->ca_name, why);
		return -EINVAL;
	}
	/* Held back: a receiver it sent to is full and reading. */
	if (c->blocked_on) {
		if (c->blocked_on->rx.length > RX_LOW && !stuck(c->blocked_on, g_get_monotonic_time()))
			return -EAGAIN;
		c->blocked_on = NULL;
	}
	c->net->writer = c;
	for (off = 0; off < count; ) {
		struct verbs_wire_rec rec;

		memcpy(&rec, b + off, sizeof(rec));
		send_pkt(c, b + off, rec.len);
		off += rec.len;
	}
	c->net->writer = NULL;
	return (ssize_t)count;
}

/* ---- QP numbers ---------------------------------------------------------- */

static int qp_create(struct uverbs_ctx *c, struct verbs_ioc_qp *a)
{
	struct uverbs_dev *d = c->dev;
	uint32_t type = VERBS_QP_TYPE(a->type), flags = a->type & ~0xffffu;
	struct uverbs_qp *q;

	if (type != QPT_RC && type != QPT_UC && type != QPT_UD &&
	    type != QPT_XRC_SEND && type != QPT_XRC_RECV)
		return -EINVAL;
	if ((flags & ~VERBS_QP_BLOCK_SELF_MCAST) || (flags && type != QPT_UD))
		return -EINVAL;
	if (g_hash_table_size(d->qps) >= QPS_MAX)
		return -ENOMEM;		/* past max_qp, as an HCA driver */
	while (g_hash_table_contains(d->qps, GUINT_TO_POINTER(d->next_qpn)) ||
	       d->next_qpn < QPN_FIRST || d->next_qpn == VERBS_QPN_MCAST)
		d->next_qpn = (d->next_qpn + 1) & QPN_MASK;
	q = g_new0(struct uverbs_qp, 1);
	q->qpn = d->next_qpn;
	d->next_qpn = (d->next_qpn + 1) & QPN_MASK;
	q->type = type;
	q->block_self_mcast = flags & VERBS_QP_BLOCK_SELF_MCAST;
	q->owner = c;
	g_hash_table_insert(d->qps, GUINT_TO_POINTER(q->qpn), q);
	c->qps = g_list_prepend(c->qps, q);
	a->qpn = q->qpn;
	return 0;
}

int uverbs_ctx_ioctl(struct uverbs_ctx *c, unsigned cmd, void *arg)
{
	struct verbs_ioc_qp *a = arg;
	struct uverbs_qp *q;

	if (cmd == VERBS_IOC_QP_CREATE)
		return qp_create(c, a);
	if (!verbs_ioc_is_qp(cmd))
		return -ENOTTY;
	/* Every QP ioctl's struct starts with the QPN. */
	q = uverbs_owned_qp(c, a->qpn);
	if (!q)
		return -EINVAL;
	if (cmd == VERBS_IOC_MCAST_ATTACH)
		return uverbs_mcast_attach(c->dev, q, arg);
	if (cmd == VERBS_IOC_MCAST_DETACH)
		return uverbs_mcast_detach(c->dev, q, arg);
	/* What a direct path to or from it was checked against changes. */
	fabric_changed(uverbs_ctx_fabric(c));
	if (cmd == VERBS_IOC_QP_SET) {
		if (a->port > c->dev->node->nports)
			return -EINVAL;
		q->qkey = a->qkey;
		q->port = (uint8_t)a->port;
		return 0;
	}
	if (q->mcast)
		return -EBUSY;	/* uverbs_free_qp: detach first */
	c->qps = g_list_remove(c->qps, q);
	g_hash_table_remove(c->dev->qps, GUINT_TO_POINTER(a->qpn));
	return 0;
}
