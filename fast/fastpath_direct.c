/* SPDX-License-Identifier: MIT */
/*
 * The direct path's inboxes (lib/verbs_inbox.h, docs/verbs.md "The
 * direct path"): a context that sends to another over the fast path asks
 * here (FAST_VDIRECT) whether its packets may skip the daemon. The kernel
 * layer checks the way as the packet engine would take it
 * (uverbs_direct_route); here the receiver gets an inbox, the sender a
 * sub-ring of it, bound to its path, and a grant. Anything the check
 * relied on that changes (struct fabric_shortcut: an SMP Set, a port's
 * change, a control command such as a fault rule or a capture, a QP's
 * change) takes every grant back before it takes effect; what went past
 * the engine reaches the PMA counters of every port on its way when they
 * are read or a grant ends.
 *
 * Order: a grant is given only while the receiver has read all the
 * daemon gave it, so what a sender sent before through the daemon is
 * taken first; the receiver takes its inbox before the records its ring
 * held when it looked, so what a sender sends through the daemon after
 * its grant ended follows what it wrote before (verbs/direct.c).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "fabric/pma.h"
#include "fast/fastpath_verbs.h"
#include "fast/fastpath_verbs_priv.h"
#include "fast/fastslot.h"
#include "kernel/uverbs.h"
#include "lib/log.h"
#include "lib/verbs_inbox.h"

/*
 * Inboxes at most: each is VERBS_INBOX_BYTES (2 MiB) of shared memory
 * and two fds here; past it senders go through the daemon (README
 * "Limits").
 */
#define INBOXES_MAX	64
/* How long taking a grant back waits for a sender in the middle of a
 * write (a few microseconds, unless it was stopped there). */
#define BUSY_WAIT_US	(100 * 1000)

struct direct_sub {
	struct fast_verbs *from;	/* the sender it is bound to, or NULL */
	uint8_t port, sl;		/* its path: source port, SL, DLID */
	uint16_t dlid;
	uint32_t grant;			/* as written there; 0: none */
	uint64_t packets, dwords;	/* of the sender's counts, what the PMA has */
	unsigned nhops;
	struct port **hops;		/* the ports the path leaves by */
};

struct direct_inbox {
	uint64_t id;
	struct fast_verbs *fv;		/* the receiver */
	int memfd, bell;
	struct verbs_inbox *map;
	struct direct_sub sub[VERBS_INBOX_SUBS];
};

static GHashTable *inboxes;		/* id -> struct direct_inbox * */
static uint64_t next_id = 1;
static uint32_t next_grant = 1;
static struct fabric *fabric;		/* whose shortcut this is */

/* What the sender wrote past what the PMA has: onto every port it crossed. */
static void fold(struct direct_inbox *ib, struct direct_sub *s)
{
	struct verbs_sub *m = &ib->map->sub[s - ib->sub];
	uint64_t p = __atomic_load_n(&m->packets, __ATOMIC_RELAXED);
	uint64_t d = __atomic_load_n(&m->dwords, __ATOMIC_RELAXED);
	unsigned i;

	/* The sender's numbers: one that went back is a new start. */
	if (p > s->packets && d >= s->dwords) {
		for (i = 0; i < s->nhops; i++)
			pma_count_words(s->hops[i], s->hops[i]->remote, p - s->packets,
					d - s->dwords, s->sl, false);
		fabric->delivered += p - s->packets;
		fabric->direct_packets += p - s->packets;
	}
	s->packets = p;
	s->dwords = d;
}

/* Take the grant of @s back: nothing comes in that way after this. */
static void take_back(struct direct_inbox *ib, struct direct_sub *s)
{
	struct verbs_sub *m = &ib->map->sub[s - ib->sub];
	int64_t until = g_get_monotonic_time() + BUSY_WAIT_US;

	if (s->grant) {
		__atomic_store_n(&m->grant, 0, __ATOMIC_SEQ_CST);
		s->grant = 0;
		/* A sender that read the grant before we wrote it is
		 * writing: let it finish (a closed one never will). One
		 * that stays busy (stopped there, or hostile) is waited for
		 * once, and gets no grant again. */
		while (s->from && !s->from->direct_stuck &&
		       __atomic_load_n(&m->busy, __ATOMIC_SEQ_CST)) {
			if (g_get_monotonic_time() > until) {
				g_warning("verbs direct path: a sender stayed in the middle of a write "
					  "for %d ms (stopped?): going on without it, and it gets "
					  "no grant again", BUSY_WAIT_US / 1000);
				s->from->direct_stuck = true;
				break;
			}
			sched_yield();
		}
	}
	fold(ib, s);
}

/* @fn on every sub-ring of every inbox bound to @from (NULL: to anyone). */
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
			if (ib->sub[i].from && (!from || ib->sub[i].from == from))
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

/* Whether the receiver has read all a sub-ring holds. */
static bool drained(const struct direct_inbox *ib, unsigned i)
{
	const struct verbs_sub *m = &ib->map->sub[i];

	return __atomic_load_n(&m->head, __ATOMIC_SEQ_CST) ==
	       __atomic_load_n(&m->tail, __ATOMIC_SEQ_CST);
}

/* The grant of @s taken back, and its binding undone. */
static void let_go(struct direct_inbox *ib, struct direct_sub *s)
{
	take_back(ib, s);
	g_free(s->hops);
	s->hops = NULL;
	s->nhops = 0;
	s->from = NULL;
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
	/* Sealed, as the ring: what others write in it can cost only its
	 * own packets. */
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
	/* The receiver maps it when it reads this, before anything comes
	 * in it: a sender's first write follows this grant's answer. */
	uverbs_ctx_queue(fv->ctx, &rec, sizeof(rec));
	return ib;
}

/* The sub-ring of @ib for @from on the path of @w, bound now if need be. */
static struct direct_sub *sub_for(struct direct_inbox *ib, struct fast_verbs *from,
				  const struct verbs_wire_pkt *w, const struct uverbs_direct *r)
{
	struct direct_sub *s, *free_one = NULL;
	unsigned i;

	for (i = 0; i < VERBS_INBOX_SUBS; i++) {
		s = &ib->sub[i];
		if (s->from == from && s->port == w->port && s->sl == w->sl && s->dlid == w->dlid)
			return s;
		if (!s->from && !free_one && drained(ib, i))
			free_one = s;
	}
	if (!(s = free_one))
		return NULL;
	s->from = from;
	s->port = w->port;
	s->sl = w->sl;
	s->dlid = w->dlid;
	s->nhops = r->nhops;
	s->hops = g_memdup2(r->hops, sizeof(r->hops[0]) * r->nhops);
	/* Counts go on from what the last sender left there. */
	s->grant = 0;
	s->packets = __atomic_load_n(&ib->map->sub[s - ib->sub].packets, __ATOMIC_RELAXED);
	s->dwords = __atomic_load_n(&ib->map->sub[s - ib->sub].dwords, __ATOMIC_RELAXED);
	__atomic_or_fetch(&ib->map->active, 1u << (s - ib->sub), __ATOMIC_SEQ_CST);
	return s;
}

int64_t fast_direct_grant(struct fast_verbs *fv, const uint8_t *payload, size_t n, void *out,
			  uint32_t *out_len)
{
	struct verbs_direct_grant g = { 0 };
	struct uverbs_direct r;
	struct verbs_wire_pkt w;
	struct direct_inbox *ib;
	struct direct_sub *s;
	struct fast_verbs *to;
	const char *why;

	*out_len = 0;
	if (!fv->ctx || n < sizeof(w))
		return -EINVAL;
	memcpy(&w, payload, sizeof(w));
	if (!fabric) {
		fabric = uverbs_ctx_fabric(fv->ctx);
		fabric->shortcut = (struct fabric_shortcut){ revoke_all, sync_all, NULL };
	}
	why = "it stayed in the middle of a write once";
	if (fv->direct_stuck || (why = uverbs_direct_route(fv->ctx, &w, &r)))
		goto not_now;
	to = uverbs_ctx_owner(r.to);
	why = "the receiver has no ring, or has not read all it holds";
	if (!to || !to->ring || to->pend || verbs_ring_load(&to->ring->tail) != to->head)
		goto not_now;
	why = "no inbox (INBOXES_MAX), or no sub-ring free there";
	if (!(ib = inbox_of(to)) || !(s = sub_for(ib, fv, &w, &r)))
		goto not_now;
	if (!s->grant) {
		if (!next_grant)
			next_grant++;
		s->grant = next_grant++;
		__atomic_store_n(&ib->map->sub[s - ib->sub].grant, s->grant, __ATOMIC_SEQ_CST);
	}
	g.peer = ib->id;
	g.grant = s->grant;
	g.sub = (uint8_t)(s - ib->sub);
	g.rx_port = r.rx_port;
	g.rx_pkey_index = r.rx_pkey_index;
	g.slid = r.slid;
	g.pkey = r.pkey;
	memcpy(out, &g, sizeof(g));
	*out_len = sizeof(g);
	return 0;
not_now:
	g_debug("verbs direct path: QP 0x%x -> LID %u QP 0x%x through the daemon: %s",
		w.sqpn, w.dlid, w.dqpn, why);
	return -EAGAIN;
}

int fast_direct_inbox_fd(struct fast_verbs *fv, uint64_t which, const uint8_t *payload, size_t n,
			 int *fd)
{
	struct direct_inbox *ib = NULL;
	uint64_t id;
	unsigned i;

	*fd = -1;
	if (!fv->ctx || n < sizeof(id) || which > 1)
		return -EINVAL;
	memcpy(&id, payload, sizeof(id));
	if (!id) {
		ib = fv->inbox;
	} else if (inboxes && (ib = g_hash_table_lookup(inboxes, &id))) {
		/* Only a sender it is bound to gets another's inbox. */
		for (i = 0; i < VERBS_INBOX_SUBS && ib->sub[i].from != fv; i++)
			;
		if (i == VERBS_INBOX_SUBS)
			ib = NULL;
	}
	if (!ib)
		return -ENOENT;
	*fd = which ? ib->bell : ib->memfd;
	return 0;
}

static void forget_sender(struct direct_inbox *ib, struct direct_sub *s)
{
	s->from = NULL;		/* gone: not waited for */
	let_go(ib, s);
}

void fast_direct_forget(struct fast_verbs *fv)
{
	struct direct_inbox *ib;
	unsigned i;

	/* As a sender: its grants end, what it wrote stays to be read. */
	each_bound(forget_sender, fv);
	/* As a receiver: its inbox goes (senders keep their mapping of
	 * the memory until they let it go; nothing they write is read). */
	if ((ib = fv->inbox)) {
		for (i = 0; i < VERBS_INBOX_SUBS; i++)
			if (ib->sub[i].from)
				let_go(ib, &ib->sub[i]);
		g_hash_table_remove(inboxes, &ib->id);
		munmap(ib->map, VERBS_INBOX_BYTES);
		close(ib->memfd);
		close(ib->bell);
		g_free(ib);
		fv->inbox = NULL;
	}
}
