/* SPDX-License-Identifier: MIT */
/*
 * The direct path's inboxes (lib/verbs_inbox.h, docs/verbs.md "The
 * direct path"): a context that sends to another over the fast path asks
 * here (FAST_VDIRECT) whether its packets may skip the daemon. The kernel
 * layer checks the way as the packet engine would take it
 * (uverbs_direct_route); here the receiver gets an inbox (a page of
 * bindings only it maps), the sender a sub-ring of its own (a memfd of its
 * own: it can reach nothing else), bound to its QP, destination QP and
 * path, and a grant. The receiver takes from a sub-ring only what its
 * binding lets through, with the fields the daemon would have set. A
 * receiver that did not ask for the direct path when it took its ring
 * (IBEMU_DIRECT=0 there) is given no sender.
 * Anything the check
 * relied on that changes (struct fabric_shortcut: an SMP Set, a port's
 * change, a control command such as a fault rule or a capture, a QP's
 * change) takes every grant back before it takes effect; what the
 * receiver took past the engine (its own count) reaches the PMA counters
 * of every port on its way when they are read or a grant ends.
 *
 * Order: a grant is given only while the receiver has read all the
 * daemon gave it, so what a sender sent before through the daemon is
 * taken first; the receiver takes its inbox before the records its ring
 * held when it looked, so what a sender sends through the daemon after
 * its grant ended follows what it wrote before (verbs/direct.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "fabric/pma.h"
#include "fast/fastpath_priv.h"
#include "fast/fastpath_verbs.h"
#include "fast/fastpath_verbs_priv.h"
#include "fast/fastslot.h"
#include "kernel/uverbs.h"
#include "lib/log.h"
#include "lib/verbs_inbox.h"

/*
 * Bounds (README "Limits"): inboxes, each a page of bindings and an
 * eventfd; sub-rings bound at once in all of them, each VERBS_SUB_BYTES
 * (260 KiB) of shared memory and a memfd here. Past them senders go
 * through the daemon.
 */
#define INBOXES_MAX	64
#define SUBS_MAX	256

struct direct_sub {
	struct fast_verbs *from;	/* the sender it was granted to, or NULL */
	struct verbs_wire_pkt key;	/* the header it was granted for */
	uint32_t gen;			/* its sub-ring's; 0: a free slot */
	bool open;			/* the grant holds */
	uint64_t limit;			/* when not: what the receiver may take */
	int memfd;
	struct verbs_sub *map;
	uint64_t packets, dwords;	/* of the receiver's counts, what the PMA has */
	unsigned nhops;
	struct port **hops;		/* the ports the path leaves by */
};

struct direct_inbox {
	uint64_t id;
	struct fast_verbs *fv;		/* the receiver */
	int memfd, bell;
	struct verbs_inbox *map;	/* its binding page: no sender has it */
	struct direct_sub sub[VERBS_INBOX_SUBS];
};

static GHashTable *inboxes;		/* id -> struct direct_inbox * */
static uint64_t next_id = 1;
static uint32_t next_gen = 1;
static unsigned subs_bound;		/* slots with a sub-ring, all inboxes */
static struct fabric *fabric;		/* whose shortcut this is */

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
		fabric->delivered += p - s->packets;
		fabric->direct_packets += p - s->packets;
	}
	s->packets = p;
	s->dwords = d;
}

/* Take the grant of @s back: nothing its sender writes after this is
 * taken (the receiver reads to the limit only). No wait for the sender:
 * one in the middle of a write finds out from the sub-ring's limit
 * whether its record made it (lib/verbs_inbox.h), so one stopped there,
 * or hostile, holds nobody up. */
static void take_back(struct direct_inbox *ib, struct direct_sub *s)
{
	struct verbs_bind *b = bind_of(ib, s);

	if (s->open) {
		__atomic_store_n(&s->map->grant, 0, __ATOMIC_SEQ_CST);
		s->limit = __atomic_load_n(&s->map->head, __ATOMIC_SEQ_CST);
		/* The receiver's word, then the sender's. */
		__atomic_store_n(&b->limit, s->limit, __ATOMIC_SEQ_CST);
		__atomic_store_n(&b->open, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->map->limit, s->limit, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->map->closed, 1, __ATOMIC_SEQ_CST);
		s->open = false;
	}
	fold(ib, s);
}

/* @fn on every slot with a sub-ring of every inbox whose sender is @from
 * (NULL: any). */
static void each_bound(void (*fn)(struct direct_inbox *, struct direct_sub *),
		       const struct fast_verbs *from)
{
	GHashTableIter it;
	struct direct_inbox *ib;
	unsigned i;

	if (!inboxes)
		return;
	g_hash_table_iter_init(&it, inboxes);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&ib))
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			if (ib->sub[i].gen && (!from || ib->sub[i].from == from))
				fn(ib, &ib->sub[i]);
}

static void revoke_all(void *unused)
{
	(void)unused;
	each_bound(take_back, NULL);
}

static void sync_all(void *unused)
{
	(void)unused;
	each_bound(fold, NULL);
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
	subs_bound--;
}

/* Whether @s may be bound anew: free, or its grant over and all of it
 * taken by the receiver (its own count, not the sender's). */
static bool reusable(struct direct_inbox *ib, struct direct_sub *s)
{
	return !s->gen || (!s->open && (int64_t)(__atomic_load_n(&bind_of(ib, s)->taken,
								 __ATOMIC_SEQ_CST) - s->limit) >= 0);
}

/* @fv's inbox, made on first need: NULL past INBOXES_MAX or without memory. */
static struct direct_inbox *inbox_of(struct fast_verbs *fv)
{
	static const struct verbs_wire_rec rec = { VERBS_REC_INBOX, sizeof(rec) };
	struct direct_inbox *ib;
	void *m;
	int memfd, bell = -1;

	if (fv->inbox)
		return fv->inbox;
	if (!inboxes)
		inboxes = g_hash_table_new(g_int64_hash, g_int64_equal);
	if (g_hash_table_size(inboxes) >= INBOXES_MAX)
		return NULL;
	if (!(m = fast_shared_map("ibemu-verbs-inbox", VERBS_INBOX_BYTES, &memfd)) ||
	    (bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		g_debug("verbs direct path: no inbox: %s", g_strerror(errno));
		if (m) {
			munmap(m, VERBS_INBOX_BYTES);
			close(memfd);
		}
		return NULL;
	}
	ib = g_new0(struct direct_inbox, 1);
	ib->id = next_id++;
	ib->fv = fv;
	ib->memfd = memfd;
	ib->bell = bell;
	ib->map = m;
	g_hash_table_insert(inboxes, &ib->id, ib);
	fv->inbox = ib;
	/* The receiver maps its page when it reads this. */
	uverbs_ctx_queue(fv->ctx, &rec, sizeof(rec));
	return ib;
}

/* The header fields a grant holds for (verbs/direct.c's same_way). */
static bool same_key(const struct verbs_wire_pkt *a, const struct verbs_wire_pkt *b)
{
	return a->port == b->port && a->sl == b->sl && a->dlid == b->dlid &&
	       a->slid == b->slid && a->pkey_index == b->pkey_index && a->sqpn == b->sqpn &&
	       a->dqpn == b->dqpn && a->qkey == b->qkey;
}

/* A new sub-ring in slot @s for @from's packets like @w, on the way @r:
 * its binding written in the receiver's page, the receiver told. */
static bool bind_sub(struct direct_inbox *ib, struct direct_sub *s, struct fast_verbs *from,
		     const struct verbs_wire_pkt *w, const struct uverbs_direct *r)
{
	static const struct verbs_wire_rec rec = { VERBS_REC_INBOX, sizeof(rec) };
	struct verbs_bind *b = bind_of(ib, s);
	struct verbs_sub *m;
	int memfd;

	unbind(ib, s);
	if (subs_bound >= SUBS_MAX ||
	    !(m = fast_shared_map("ibemu-verbs-sub", VERBS_SUB_BYTES, &memfd)))
		return false;
	subs_bound++;
	if (!next_gen)
		next_gen++;
	/* Rewritten under a cleared gen: the receiver reads it as a
	 * sequence lock (lib/verbs_inbox.h). */
	__atomic_store_n(&b->gen, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&b->limit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&b->open, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&b->sqpn, w->sqpn, __ATOMIC_RELAXED);
	__atomic_store_n(&b->dqpn, w->dqpn, __ATOMIC_RELAXED);
	__atomic_store_n(&b->qkey, w->qkey, __ATOMIC_RELAXED);
	__atomic_store_n(&b->ud, r->ud, __ATOMIC_RELAXED);
	__atomic_store_n(&b->port, r->rx_port, __ATOMIC_RELAXED);
	__atomic_store_n(&b->sl, w->sl, __ATOMIC_RELAXED);
	__atomic_store_n(&b->slid, r->slid, __ATOMIC_RELAXED);
	__atomic_store_n(&b->dlid, w->dlid, __ATOMIC_RELAXED);
	__atomic_store_n(&b->pkey, r->pkey, __ATOMIC_RELAXED);
	__atomic_store_n(&b->pkey_index, r->rx_pkey_index, __ATOMIC_RELAXED);
	__atomic_store_n(&b->taken, 0, __ATOMIC_RELAXED);
	s->gen = next_gen++;
	s->from = from;
	s->key = *w;
	s->open = true;
	s->limit = 0;
	s->memfd = memfd;
	s->map = m;
	s->nhops = r->nhops;
	s->hops = g_memdup2(r->hops, sizeof(r->hops[0]) * r->nhops);
	__atomic_store_n(&m->grant, s->gen, __ATOMIC_SEQ_CST);
	__atomic_store_n(&b->gen, s->gen, __ATOMIC_SEQ_CST);
	__atomic_or_fetch(&ib->map->active, 1u << (s - ib->sub), __ATOMIC_SEQ_CST);
	/* The receiver maps it where this stands among its records: what
	 * the sender writes there comes before what it sends through the
	 * daemon after its grant ends (verbs/direct.c). */
	uverbs_ctx_queue(ib->fv->ctx, &rec, sizeof(rec));
	return true;
}

/* The slot of @ib granted to @from for @w, bound now if need be. */
static struct direct_sub *sub_for(struct direct_inbox *ib, struct fast_verbs *from,
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

int64_t fast_direct_grant(struct fast_verbs *fv, const uint8_t *payload, size_t n, void *out,
			  uint32_t *out_len, int *fd)
{
	struct verbs_direct_grant g = { 0 };
	struct uverbs_direct r;
	struct verbs_wire_pkt w;
	struct direct_inbox *ib;
	struct direct_sub *s;
	struct fast_verbs *to;
	const char *why;

	*out_len = 0;
	*fd = -1;
	if (!fv->ctx || n < sizeof(w))
		return -EINVAL;
	memcpy(&w, payload, sizeof(w));
	if (!fabric) {
		fabric = uverbs_ctx_fabric(fv->ctx);
		fabric->shortcut = (struct fabric_shortcut){ revoke_all, sync_all, NULL };
	}
	if ((why = uverbs_direct_route(fv->ctx, &w, &r)))
		goto not_now;
	to = uverbs_ctx_owner(r.to);
	why = "the receiver keeps out (IBEMU_DIRECT=0), or has no ring";
	if (!to || !to->ring || !to->direct_ok)
		goto not_now;
	why = "the receiver has not read all its ring holds";
	if (to->ff->pend_bytes || verbs_ring_load(&to->ring->tail) != to->head)
		goto not_now;
	why = "no inbox (INBOXES_MAX)";
	if (!(ib = inbox_of(to)))
		goto not_now;
	why = "no slot free there, or no sub-ring (SUBS_MAX)";
	if (!(s = sub_for(ib, fv, &w, &r)))
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

int fast_direct_inbox_fd(struct fast_verbs *fv, uint64_t which, const uint8_t *payload, size_t n,
			 int *fd)
{
	struct verbs_inbox_ask a = { 0 };
	struct direct_inbox *ib = NULL;
	struct direct_sub *s;
	unsigned i;

	*fd = -1;
	if (!fv->ctx || n < sizeof(a.peer))
		return -EINVAL;
	memcpy(&a, payload, MIN(n, sizeof(a)));
	switch (which) {
	case VERBS_INBOX_PAGE:
		/* One's own only: no sender sees the bindings. */
		if (a.peer)
			return -EPERM;
		if (!(ib = fv->inbox))
			return -ENOENT;
		*fd = ib->memfd;
		return 0;
	case VERBS_INBOX_BELL:
		if (!a.peer) {
			ib = fv->inbox;
		} else if (inboxes && (ib = g_hash_table_lookup(inboxes, &a.peer))) {
			/* Only a sender granted a slot there gets it. */
			for (i = 0; i < VERBS_INBOX_SUBS && ib->sub[i].from != fv; i++)
				;
			if (i == VERBS_INBOX_SUBS)
				ib = NULL;
		}
		if (!ib)
			return -ENOENT;
		*fd = ib->bell;
		return 0;
	case VERBS_INBOX_SUB:
		if (!(ib = fv->inbox) || n < sizeof(a) || a.sub >= VERBS_INBOX_SUBS)
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

void fast_direct_forget(struct fast_verbs *fv)
{
	struct direct_inbox *ib;
	unsigned i;

	/* As a sender: its grants end, what it wrote stays to be read. */
	each_bound(forget_sender, fv);
	/* As a receiver: its inbox goes (senders keep their mapping of
	 * their sub-rings until they let them go; nothing reads them). */
	if ((ib = fv->inbox)) {
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			unbind(ib, &ib->sub[i]);
		g_hash_table_remove(inboxes, &ib->id);
		munmap(ib->map, VERBS_INBOX_BYTES);
		close(ib->memfd);
		close(ib->bell);
		g_free(ib);
		fv->inbox = NULL;
	}
}
