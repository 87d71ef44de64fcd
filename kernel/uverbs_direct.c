/* SPDX-License-Identifier: MIT */
/*
 * The direct path (abi/verbs_inbox.h, docs/verbs.md "The direct path"): a
 * context that sends to another asks (FAST_VDIRECT) whether its packets
 * may skip the packet engine. uverbs_direct_route checks the way as the
 * engine would take it; then the receiver gets an inbox (a page of
 * bindings only it maps), the sender a sub-ring of its own (a memfd of its
 * own: it can reach nothing else), bound to its QP, destination QP and
 * path, and a grant. The receiver takes from a sub-ring only what its
 * binding lets through, with the fields the engine would have set. A
 * receiver whose transport takes no direct path (IBEMU_DIRECT=0 there, no
 * ring: uverbs_ctx_set_direct) is given no sender. Everything here is per
 * fabric (struct uverbs_net); the transport only passes the fds.
 * Anything the check
 * relied on that changes (struct fabric_verbs_ops: an SMP Set, a port's
 * change, a control command such as a fault rule or a capture, a QP's
 * change) takes every grant back before it takes effect; what the
 * receiver took past the engine (its own count) reaches the PMA counters
 * of every port on its way when they are read or a grant ends.
 *
 * Order: a grant is given only while the receiver has read all the
 * engine gave it, so what a sender sent before through the engine is
 * taken first; the receiver takes its inbox before the records its ring
 * held when it looked, so what a sender sends through the engine after
 * its grant ended follows what it wrote before (verbs/direct.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/verbs_inbox.h"
#include "abi/verbs_wire.h"
#include "fabric/fabric.h"
#include "fabric/mcast.h"
#include "fabric/pma.h"
#include "fabric/port.h"
#include "kernel/uverbs.h"
#include "kernel/uverbs_priv.h"
#include "lib/log.h"
#include "lib/shm.h"

/*
 * Bounds (README "Limits"): inboxes, each a page of bindings and an
 * eventfd; sub-rings bound at once in all of them, each VERBS_SUB_BYTES
 * (260 KiB) of shared memory and a memfd here. Past them senders go
 * through the daemon.
 */
#define INBOXES_MAX	64
#define SUBS_MAX	256

/*
 * Whether packets like @w, a record as context @c sends it, may go from @c
 * straight to the context that owns their destination QP, as the fabric
 * would carry them now (every check of uverbs_ctx_write, the packet
 * engine's and uverbs_on_data's). NULL, with that context and the way in
 * @r; or why not. Unicast LID-routed RC, UC and UD packets only, from a
 * context not held back, to one with nothing queued here, on a quiet
 * fabric (fabric_quiet()); on RoCE, unicast with the GRH every packet has
 * there (direct_grh).
 */
#define UVERBS_DIRECT_HOPS	64
struct uverbs_direct {
	struct uverbs_ctx *to;
	uint8_t rx_port, sl;		/* where it arrives; its SL */
	bool ud;			/* to a UD QP: its Q_Key checked */
	uint16_t rx_pkey_index;		/* the arrival port's index of its P_Key */
	uint16_t slid, pkey;		/* as the sending port sets them */
	uint16_t dlid;			/* the one routed by (RoCE: the DGID's port's) */
	bool grh, roce_v2;		/* RoCE: a GRH, and its version */
	uint8_t sgid[16];		/* the port's GID at the packet's index */
	unsigned nhops;
	struct port *hops[UVERBS_DIRECT_HOPS];	/* the ports it leaves by */
};

/*
 * The GRH as send_pkt (kernel/uverbs_data.c) sets it, and the LID the
 * packet is routed by: on RoCE a unicast DGID's port's (the Ethernet
 * switches' forwarding by address), the SGID the port's entry at the
 * packet's index, the version that entry's type. An InfiniBand GRH
 * (routers, their hop limits) and RoCE multicast stay the daemon's.
 */
static const char *direct_grh(struct fabric *f, const struct port *port,
			      const struct verbs_wire_pkt *w, struct uverbs_direct *r)
{
	const struct port *to;
	const char *type;

	r->dlid = w->dlid;
	r->grh = r->roce_v2 = false;
	if (!port_is_roce(port))
		return w->flags & VERBS_PKT_GRH ? "a GRH on InfiniBand" : NULL;
	if (!(w->flags & VERBS_PKT_GRH))
		return "no GRH on a RoCE port";
	if (w->sgid_index >= GUIDS_PER_PORT || !(type = port_gid_type(port, w->sgid_index)))
		return "no GID at that index";
	if (fabric_gid_is_mcast(w->dgid))
		return "RoCE multicast";
	if (!(to = fabric_roce_port_by_gid(f, w->dgid)))
		return "a GID no port has";
	r->dlid = to->lid;
	r->grh = true;
	r->roce_v2 = !strcmp(type, "RoCE v2");
	port_gid(port, w->sgid_index, r->sgid);
	return NULL;
}

static const char *uverbs_direct_route(struct uverbs_ctx *c, const struct verbs_wire_pkt *w,
				       struct uverbs_direct *r)
{
	struct fabric *f = uverbs_ctx_fabric(c);
	struct node *n = c->dev->node;
	struct port *port, *dest;
	struct uverbs_dev *d;
	struct uverbs_qp *q;
	uint16_t mask;
	const char *why;

	if (w->port < 1 || w->port > n->nports || !uverbs_owned_qp(c, w->sqpn) ||
	    w->pkey_index >= n->ports[w->port].npkeys)
		return "not a packet this context may send";
	if (c->blocked_on)
		return "held back";
	if (!fabric_quiet(f))
		return "a fault rule, a capture, or packets held or in flight";
	port = &n->ports[w->port];
	if ((why = direct_grh(f, port, w, r)))
		return why;
	mask = (uint16_t)((1u << port->lmc) - 1);
	r->slid = (uint16_t)((port->lid & ~mask) | (w->slid & mask));
	r->pkey = port->pkeys[w->pkey_index];
	if ((why = fabric_data_path(port, r->dlid, r->pkey, r->hops, UVERBS_DIRECT_HOPS, &r->nhops,
				    &dest)))
		return why;
	/* uverbs_on_data() and uverbs_qp_deliver() at the far end */
	if (!(d = uverbs_dev_at(dest)))
		return "no verbs device there";
	if (!(q = uverbs_qp_at(d, dest, w->dqpn)))
		return "no such QP";
	if (q->type == QPT_UD && w->qkey != q->qkey)
		return "a Q_Key the QP refuses";
	if (q->owner->rx.length)
		return "the receiver has packets queued";
	r->to = q->owner;
	r->rx_port = dest->num;
	r->ud = q->type == QPT_UD;
	r->rx_pkey_index = uverbs_pkey_index_of(dest, r->pkey);
	r->sl = w->sl;
	return NULL;
}

struct direct_sub {
	struct uverbs_ctx *from;	/* the sender it was granted to, or NULL */
	struct verbs_wire_pkt key;	/* the header it was granted for */
	uint32_t gen;			/* its sub-ring's; 0: a free slot */
	bool open;			/* the grant holds */
	uint64_t limit;			/* when not: what the receiver may take */
	int memfd;
	struct verbs_ring *map;
	uint64_t packets, dwords;	/* of the receiver's counts, what the PMA has */
	unsigned nhops;
	struct port **hops;		/* the ports the path leaves by */
};

struct direct_inbox {
	uint64_t id;
	struct uverbs_ctx *to;		/* the receiver */
	int memfd, bell;
	struct verbs_inbox *map;	/* its binding page: no sender has it */
	struct direct_sub sub[VERBS_INBOX_SUBS];
};

static struct verbs_bind *bind_of(struct direct_inbox *ib, const struct direct_sub *s)
{
	return &ib->map->bind[s - ib->sub];
}

/* What the receiver took past what the PMA has: onto every port on the
 * way. The receiver's own count (a sender's words are not trusted). */
static void fold(struct direct_inbox *ib, struct direct_sub *s)
{
	struct verbs_bind *b = bind_of(ib, s);
	uint64_t p = __atomic_load_n(&b->packets, __ATOMIC_RELAXED);
	uint64_t d = __atomic_load_n(&b->dwords, __ATOMIC_RELAXED);
	unsigned i;

	if (p > s->packets && d >= s->dwords) {
		for (i = 0; i < s->nhops; i++)
			pma_count_words(s->hops[i], s->hops[i]->remote, p - s->packets,
					d - s->dwords, s->key.sl, false);
		ib->to->net->f->delivered += p - s->packets;
		ib->to->net->f->direct_packets += p - s->packets;
	}
	s->packets = p;
	s->dwords = d;
}

/* Take the grant of @s back: nothing its sender writes after this is
 * taken (the receiver reads to the limit only). No wait for the sender:
 * one in the middle of a write finds out from the sub-ring's limit
 * whether its record made it (abi/verbs_inbox.h), so one stopped there,
 * or hostile, holds nobody up. */
static void take_back(struct direct_inbox *ib, struct direct_sub *s)
{
	struct verbs_bind *b = bind_of(ib, s);

	if (s->open) {
		s->limit = verbs_grant_close(s->map, b);
		verbs_grant_closed(s->map, b, s->limit);
		s->open = false;
	}
	fold(ib, s);
}

/* @fn on every slot with a sub-ring of every inbox whose sender is @from
 * (NULL: any). */
static void each_bound(struct uverbs_net *net,
		       void (*fn)(struct direct_inbox *, struct direct_sub *),
		       const struct uverbs_ctx *from)
{
	GHashTableIter it;
	struct direct_inbox *ib;
	unsigned i;

	if (!net->inboxes)
		return;
	g_hash_table_iter_init(&it, net->inboxes);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&ib))
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			if (ib->sub[i].gen && (!from || ib->sub[i].from == from))
				fn(ib, &ib->sub[i]);
}

void uverbs_direct_revoke(void *net)
{
	each_bound(net, take_back, NULL);
}

void uverbs_direct_sync(void *net)
{
	each_bound(net, fold, NULL);
}

/* The slot's sub-ring let go (its grant taken back first). */
static void unbind(struct direct_inbox *ib, struct direct_sub *s)
{
	if (!s->gen)
		return;
	take_back(ib, s);
	munmap(s->map, VERBS_SUB_BYTES);
	close(s->memfd);
	g_free(s->hops);
	s->hops = NULL;
	s->nhops = 0;
	s->from = NULL;
	s->map = NULL;
	s->gen = 0;
	ib->to->net->subs_bound--;
}

/* Whether @s may be bound anew: free, or its grant over and all of it
 * taken by the receiver (its own count, not the sender's). */
static bool reusable(struct direct_inbox *ib, struct direct_sub *s)
{
	return !s->gen || (!s->open && (int64_t)(__atomic_load_n(&bind_of(ib, s)->taken,
								 __ATOMIC_ACQUIRE) - s->limit) >= 0);
}

/* @c's inbox, made on first need: NULL past INBOXES_MAX or without memory. */
static struct direct_inbox *inbox_of(struct uverbs_ctx *c)
{
	static const struct verbs_wire_rec rec = { VERBS_REC_INBOX, sizeof(rec) };
	struct uverbs_net *net = c->net;
	struct direct_inbox *ib;
	void *m;
	int memfd, bell = -1;

	if (c->inbox)
		return c->inbox;
	if (!net->inboxes)
		net->inboxes = g_hash_table_new(g_int64_hash, g_int64_equal);
	if (g_hash_table_size(net->inboxes) >= INBOXES_MAX)
		return NULL;
	if (!(m = shm_sealed_map("ibemu-verbs-inbox", VERBS_INBOX_BYTES, &memfd)) ||
	    (bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		g_debug("verbs direct path: no inbox: %s", g_strerror(errno));
		if (m) {
			munmap(m, VERBS_INBOX_BYTES);
			close(memfd);
		}
		return NULL;
	}
	ib = g_new0(struct direct_inbox, 1);
	ib->id = ++net->next_inbox;
	ib->to = c;
	ib->memfd = memfd;
	ib->bell = bell;
	ib->map = m;
	g_hash_table_insert(net->inboxes, &ib->id, ib);
	c->inbox = ib;
	/* The receiver maps its page when it reads this. */
	uverbs_ctx_queue(c, &rec, sizeof(rec));
	return ib;
}

/* The header fields a grant holds for (verbs/direct.c's same_way). */
static bool same_key(const struct verbs_wire_pkt *a, const struct verbs_wire_pkt *b)
{
	return a->port == b->port && a->sl == b->sl && a->dlid == b->dlid &&
	       a->slid == b->slid && a->pkey_index == b->pkey_index && a->sqpn == b->sqpn &&
	       a->dqpn == b->dqpn && a->qkey == b->qkey && verbs_pkt_same_grh(a, b);
}

/* A new sub-ring in slot @s for @from's packets like @w, on the way @r:
 * its binding written in the receiver's page, the receiver told. */
static bool bind_sub(struct direct_inbox *ib, struct direct_sub *s, struct uverbs_ctx *from,
		     const struct verbs_wire_pkt *w, const struct uverbs_direct *r)
{
	static const struct verbs_wire_rec rec = { VERBS_REC_INBOX, sizeof(rec) };
	struct uverbs_net *net = ib->to->net;
	struct verbs_bind *b = bind_of(ib, s);
	struct verbs_ring *m;
	uint64_t gids[4];
	int memfd;

	unbind(ib, s);
	if (net->subs_bound >= SUBS_MAX ||
	    !(m = shm_sealed_map("ibemu-verbs-sub", VERBS_SUB_BYTES, &memfd)))
		return false;
	net->subs_bound++;
	if (!++net->next_gen)
		net->next_gen++;	/* 0 says a free slot */
	/* Rewritten under a cleared gen: the receiver reads it as a
	 * sequence lock (abi/verbs_inbox.h). */
	verbs_bind_retract(b);
	__atomic_store_n(&b->limit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&b->open, VERBS_BIND_OPEN, __ATOMIC_RELAXED);
	__atomic_store_n(&b->sqpn, w->sqpn, __ATOMIC_RELAXED);
	__atomic_store_n(&b->dqpn, w->dqpn, __ATOMIC_RELAXED);
	__atomic_store_n(&b->qkey, w->qkey, __ATOMIC_RELAXED);
	__atomic_store_n(&b->ud, r->ud, __ATOMIC_RELAXED);
	__atomic_store_n(&b->port, r->rx_port, __ATOMIC_RELAXED);
	__atomic_store_n(&b->sl, w->sl, __ATOMIC_RELAXED);
	__atomic_store_n(&b->slid, r->slid, __ATOMIC_RELAXED);
	__atomic_store_n(&b->dlid, r->dlid, __ATOMIC_RELAXED);
	__atomic_store_n(&b->pkey, r->pkey, __ATOMIC_RELAXED);
	__atomic_store_n(&b->pkey_index, r->rx_pkey_index, __ATOMIC_RELAXED);
	__atomic_store_n(&b->grh, r->grh, __ATOMIC_RELAXED);
	__atomic_store_n(&b->sgid_index, w->sgid_index, __ATOMIC_RELAXED);
	__atomic_store_n(&b->roce_v2, r->roce_v2, __ATOMIC_RELAXED);
	memcpy(gids, r->sgid, 16);
	memcpy(gids + 2, w->dgid, 16);
	__atomic_store_n(&b->sgid[0], gids[0], __ATOMIC_RELAXED);
	__atomic_store_n(&b->sgid[1], gids[1], __ATOMIC_RELAXED);
	__atomic_store_n(&b->dgid[0], gids[2], __ATOMIC_RELAXED);
	__atomic_store_n(&b->dgid[1], gids[3], __ATOMIC_RELAXED);
	__atomic_store_n(&b->taken, 0, __ATOMIC_RELAXED);
	s->gen = net->next_gen;
	s->from = from;
	s->key = *w;
	s->open = true;
	s->limit = 0;
	s->memfd = memfd;
	s->map = m;
	s->nhops = r->nhops;
	s->hops = g_memdup2(r->hops, sizeof(r->hops[0]) * r->nhops);
	__atomic_store_n(&m->grant, s->gen, __ATOMIC_RELEASE);
	verbs_bind_publish(b, s->gen);
	__atomic_or_fetch(&ib->map->active, 1u << (s - ib->sub), __ATOMIC_RELEASE);
	/* The receiver maps it where this stands among its records: what
	 * the sender writes there comes before what it sends through the
	 * daemon after its grant ends (verbs/direct.c). */
	uverbs_ctx_queue(ib->to, &rec, sizeof(rec));
	return true;
}

/* The slot of @ib granted to @from for @w, bound now if need be. */
static struct direct_sub *sub_for(struct direct_inbox *ib, struct uverbs_ctx *from,
				  const struct verbs_wire_pkt *w, const struct uverbs_direct *r)
{
	struct direct_sub *s, *free_one = NULL;
	unsigned i;

	for (i = 0; i < VERBS_INBOX_SUBS; i++) {
		s = &ib->sub[i];
		if (s->open && s->from == from && same_key(&s->key, w))
			return s;
		if (!free_one && reusable(ib, s))
			free_one = s;
	}
	return free_one && bind_sub(ib, free_one, from, w, r) ? free_one : NULL;
}

int64_t uverbs_direct_grant(struct uverbs_ctx *c, const void *payload, size_t n, void *out,
			    uint32_t *out_len, int *fd)
{
	struct verbs_direct_grant g = { 0 };
	struct uverbs_direct r;
	struct verbs_wire_pkt w;
	struct direct_inbox *ib;
	struct direct_sub *s;
	const char *why;

	*out_len = 0;
	*fd = -1;
	if (n < sizeof(w))
		return -EINVAL;
	memcpy(&w, payload, sizeof(w));
	if ((why = uverbs_direct_route(c, &w, &r)))
		goto not_now;
	why = "the receiver keeps out (IBEMU_DIRECT=0), or has no ring";
	if (!r.to->drained)
		goto not_now;
	why = "the receiver has not read all its ring holds";
	if (!r.to->drained(r.to->drained_arg))
		goto not_now;
	why = "no inbox (INBOXES_MAX)";
	if (!(ib = inbox_of(r.to)))
		goto not_now;
	why = "no slot free there, or no sub-ring (SUBS_MAX)";
	if (!(s = sub_for(ib, c, &w, &r)))
		goto not_now;
	g.peer = ib->id;
	g.grant = s->gen;
	g.sub = (uint8_t)(s - ib->sub);
	g.rx_port = r.rx_port;
	g.rx_pkey_index = r.rx_pkey_index;
	g.slid = r.slid;
	g.pkey = r.pkey;
	memcpy(out, &g, sizeof(g));
	*out_len = sizeof(g);
	*fd = s->memfd;
	return 0;
not_now:
	g_debug("verbs direct path: QP 0x%x -> LID %u QP 0x%x through the daemon: %s",
		w.sqpn, w.dlid, w.dqpn, why);
	return -EAGAIN;
}

int uverbs_direct_fd(struct uverbs_ctx *c, uint64_t which, const void *payload, size_t n,
		     int *fd)
{
	struct verbs_inbox_ask a = { 0 };
	struct direct_inbox *ib = NULL;
	struct direct_sub *s;
	unsigned i;

	*fd = -1;
	if (n < sizeof(a.peer))
		return -EINVAL;
	memcpy(&a, payload, MIN(n, sizeof(a)));
	switch (which) {
	case VERBS_INBOX_PAGE:
		/* One's own only: no sender sees the bindings. */
		if (a.peer)
			return -EPERM;
		if (!(ib = c->inbox))
			return -ENOENT;
		*fd = ib->memfd;
		return 0;
	case VERBS_INBOX_BELL:
		if (!a.peer) {
			ib = c->inbox;
		} else if (c->net->inboxes && (ib = g_hash_table_lookup(c->net->inboxes, &a.peer))) {
			/* Only a sender granted a slot there gets it. */
			for (i = 0; i < VERBS_INBOX_SUBS && ib->sub[i].from != c; i++)
				;
			if (i == VERBS_INBOX_SUBS)
				ib = NULL;
		}
		if (!ib)
			return -ENOENT;
		*fd = ib->bell;
		return 0;
	case VERBS_INBOX_SUB:
		if (!(ib = c->inbox) || n < sizeof(a) || a.sub >= VERBS_INBOX_SUBS)
			return -ENOENT;
		s = &ib->sub[a.sub];
		if (!s->gen || s->gen != a.gen)
			return -ENOENT;
		*fd = s->memfd;
		return 0;
	default:
		return -EINVAL;
	}
}

static void forget_sender(struct direct_inbox *ib, struct direct_sub *s)
{
	s->from = NULL;
	take_back(ib, s);	/* what it wrote stays to be read */
}

void uverbs_direct_forget(struct uverbs_ctx *c)
{
	struct direct_inbox *ib;
	unsigned i;

	/* As a sender: its grants end, what it wrote stays to be read. */
	each_bound(c->net, forget_sender, c);
	/* As a receiver: its inbox goes (senders keep their mapping of
	 * their sub-rings until they let them go; nothing reads them). */
	if ((ib = c->inbox)) {
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			unbind(ib, &ib->sub[i]);
		g_hash_table_remove(c->net->inboxes, &ib->id);
		munmap(ib->map, VERBS_INBOX_BYTES);
		close(ib->memfd);
		close(ib->bell);
		g_free(ib);
		c->inbox = NULL;
	}
}

void uverbs_ctx_set_direct(struct uverbs_ctx *c, bool (*drained)(void *arg), void *arg)
{
	if (!drained)
		uverbs_direct_forget(c);
	c->drained = drained;
	c->drained_arg = arg;
}

void uverbs_direct_net_free(struct uverbs_net *net)
{
	if (net->inboxes)
		g_hash_table_destroy(net->inboxes);
}
