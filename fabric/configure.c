/* SPDX-License-Identifier: MIT */
/*
 * Offline configuration (see configure.h). Routes are min-hop by a
 * breadth-first search from every switch over the switch graph, exploring
 * ports in ascending order, so ties go to the lowest port: deterministic.
 */
#include "config.h"

#include <errno.h>

#include "fabric/configure.h"
#include "fabric/port.h"
#include "lib/log.h"

static bool lid_taken(GHashTable *used, unsigned lid)
{
	return g_hash_table_contains(used, GUINT_TO_POINTER(lid));
}

/* The next free unicast LID, or 0 once 1..0xBFFF are all taken. */
static uint16_t next_lid(GHashTable *used, unsigned *cursor)
{
	while (*cursor <= FABRIC_MAX_UCAST_LID && lid_taken(used, *cursor))
		(*cursor)++;
	if (*cursor > FABRIC_MAX_UCAST_LID)
		return 0;
	g_hash_table_add(used, GUINT_TO_POINTER(*cursor));
	return (uint16_t)(*cursor)++;
}

unsigned fabric_lids_needed(const struct fabric *f)
{
	unsigned i, j, n = 0;

	for (i = 0; i < f->nodes->len; i++) {
		const struct node *nd = g_ptr_array_index(f->nodes, i);

		if (node_is_switch(nd)) {
			n++;
			continue;
		}
		for (j = 1; j <= nd->nports; j++)
			n += nd->ports[j].remote != NULL;
	}
	return n;
}

/* The next free unicast LID from the top down (RoCE networks: clear of
 * the LIDs an SM gives from 1 up on the InfiniBand ones), or 0. */
static uint16_t next_lid_down(GHashTable *used, unsigned *cursor)
{
	while (*cursor >= 1 && lid_taken(used, *cursor))
		(*cursor)--;
	if (*cursor < 1)
		return 0;
	g_hash_table_add(used, GUINT_TO_POINTER(*cursor));
	return (uint16_t)(*cursor)--;
}

/* The nodes configure() works on: all, or those with @eth_net as given. */
struct scope {
	bool all;
	bool eth_net;
};

static bool in_scope(const struct scope *sc, const struct node *n)
{
	return sc->all || n->eth_net == sc->eth_net;
}

static void assign_lids(struct fabric *f, const struct scope *sc, unsigned *max)
{
	GHashTable *used = g_hash_table_new(NULL, NULL);
	bool down = !sc->all && sc->eth_net;
	unsigned i, j, cursor = down ? FABRIC_MAX_UCAST_LID : 1;
	uint16_t (*next)(GHashTable *, unsigned *) = down ? next_lid_down : next_lid;

	/* Keep the LIDs the topology file gave. */
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (j = 0; j <= n->nports; j++)
			if (n->ports[j].lid)
				g_hash_table_add(used, GUINT_TO_POINTER((unsigned)n->ports[j].lid));
	}
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (!in_scope(sc, n))
			continue;
		if (node_is_switch(n)) {
			if (!n->ports[0].lid)
				n->ports[0].lid = next(used, &cursor);
			*max = MAX(*max, n->ports[0].lid);
			continue;
		}
		for (j = 1; j <= n->nports; j++) {
			if (!n->ports[j].remote)
				continue;
			if (!n->ports[j].lid)
				n->ports[j].lid = next(used, &cursor);
			*max = MAX(*max, n->ports[j].lid);
		}
	}
	g_hash_table_destroy(used);
}

/* First-hop port from @from toward every switch, by BFS; 0 = itself. */
static void bfs(struct fabric *f, struct node *from, uint8_t *first_hop,
		bool *seen)
{
	GQueue q = G_QUEUE_INIT;
	unsigned i;

	memset(seen, 0, f->nodes->len * sizeof(*seen));
	seen[from->index] = true;
	first_hop[from->index] = 0;
	g_queue_push_tail(&q, from);
	while (!g_queue_is_empty(&q)) {
		struct node *n = g_queue_pop_head(&q);

		for (i = 1; i <= n->nports; i++) {
			struct port *r = n->ports[i].remote;

			if (!r || !node_is_switch(r->node) || seen[r->node->index])
				continue;
			seen[r->node->index] = true;
			first_hop[r->node->index] = n == from ? (uint8_t)i : first_hop[n->index];
			g_queue_push_tail(&q, r->node);
		}
	}
}

static void set_route(struct switch_state *sw, unsigned lid, uint8_t port)
{
	sw->lft[lid] = port;
}

static void fill_lfts(struct fabric *f, const struct scope *sc, unsigned max_lid)
{
	uint8_t *first_hop = g_new0(uint8_t, f->nodes->len);
	bool *seen = g_new0(bool, f->nodes->len);
	unsigned i, j, k;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *s = g_ptr_array_index(f->nodes, i);
		struct switch_state *sw = s->sw;

		if (!sw || !in_scope(sc, s))
			continue;
		bfs(f, s, first_hop, seen);
		g_free(sw->lft);
		sw->lft_len = (max_lid / 64 + 1) * 64;
		sw->lft = g_malloc(sw->lft_len);
		memset(sw->lft, 0xff, sw->lft_len);
		sw->lft_top = (uint16_t)max_lid;
		for (j = 0; j < f->nodes->len; j++) {
			struct node *d = g_ptr_array_index(f->nodes, j);

			if (node_is_switch(d)) {
				if (seen[d->index] && d->ports[0].lid)
					set_route(sw, d->ports[0].lid, first_hop[d->index]);
				continue;
			}
			/* An end port is reached through the switch it hangs off. */
			for (k = 1; k <= d->nports; k++) {
				struct port *r = d->ports[k].remote;

				if (!r || !d->ports[k].lid || !node_is_switch(r->node) ||
				    !seen[r->node->index])
					continue;
				set_route(sw, d->ports[k].lid, r->node == s ? r->num :
					  first_hop[r->node->index]);
			}
		}
	}
	g_free(first_hop);
	g_free(seen);
}

static unsigned configure(struct fabric *f, struct port *sm, const struct scope *sc)
{
	unsigned i, j, max_lid = 0;
	uint16_t sm_lid;

	assign_lids(f, sc, &max_lid);
	fill_lfts(f, sc, max_lid);
	sm_lid = sm ? port_mgmt(sm)->lid : 0;
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (!in_scope(sc, n))
			continue;

		for (j = 0; j <= n->nports; j++) {
			struct port *p = &n->ports[j];

			if (j == 0 && !node_is_switch(n))
				continue;
			p->sm_lid = sm_lid;
			if (p->phys_state == PHYS_LINKUP && (j == 0 || p->remote))
				p->state = PORT_ACTIVE;
			port_changed(p, PORT_CHANGED_STATE | PORT_CHANGED_SM);
		}
	}
	return max_lid;
}

unsigned fabric_configure(struct fabric *f, struct port *sm)
{
	const struct scope all = { .all = true }, ib = { .eth_net = false };

	/* With RoCE networks beside, the SM's are the InfiniBand ones. */
	return configure(f, sm, fabric_has_roce(f) ? &ib : &all);
}

bool fabric_has_roce(const struct fabric *f)
{
	unsigned i;

	for (i = 0; i < f->nodes->len; i++)
		if (((struct node *)g_ptr_array_index(f->nodes, i))->eth_net)
			return true;
	return false;
}

unsigned fabric_configure_roce(struct fabric *f)
{
	const struct scope eth = { .eth_net = true };

	return configure(f, NULL, &eth);
}

/* Marks the nodes of the network (cabled component) of @n; false when
 * it has CA ports of both link layers (@eth and @ib say one of each). */
static bool mark_network(struct fabric *f, struct node *n, struct port **eth, struct port **ib)
{
	GQueue q = G_QUEUE_INIT;
	GPtrArray *seen = g_ptr_array_new();
	unsigned i, k;

	*eth = *ib = NULL;
	n->eth_net = true;
	n->eth_net_id = n->index + 1;
	g_queue_push_tail(&q, n);
	while (!g_queue_is_empty(&q)) {
		struct node *m = g_queue_pop_head(&q);

		g_ptr_array_add(seen, m);
		for (k = 1; k <= m->nports; k++) {
			struct port *p = &m->ports[k], *r = p->remote;

			if (!node_is_switch(m))
				*(port_is_roce(p) ? eth : ib) = p;
			if (r && !r->node->eth_net) {
				r->node->eth_net = true;
				r->node->eth_net_id = n->index + 1;
				g_queue_push_tail(&q, r->node);
			}
		}
	}
	/* A network of InfiniBand ports only is not a RoCE one. */
	for (i = 0; !*eth && i < seen->len; i++) {
		((struct node *)g_ptr_array_index(seen, i))->eth_net = false;
		((struct node *)g_ptr_array_index(seen, i))->eth_net_id = 0;
	}
	g_ptr_array_free(seen, true);
	return !*eth || !*ib;
}

bool fabric_roce_networks(struct fabric *f, GError **err)
{
	unsigned i, k;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);
		struct port *eth, *ib;

		for (k = 1; !node_is_switch(n) && !n->eth_net && k <= n->nports; k++) {
			if (!port_is_roce(&n->ports[k]))
				continue;
			if (!mark_network(f, n, &eth, &ib)) {
				g_set_error(err, IBEMU_ERROR, EINVAL,
					    "%s/%u is a RoCE (Ethernet) port and %s/%u an InfiniBand "
					    "one on the same network: a network has one link layer",
					    eth->node->id, eth->num, ib->node->id, ib->num);
				return false;
			}
			break;
		}
	}
	return true;
}

void fabric_set_roce(struct fabric *f)
{
	unsigned i, j;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (j = 1; !node_is_switch(n) && j <= n->nports; j++)
			n->ports[j].link = PORT_LINK_ETH;
	}
	fabric_roce_gids_changed(f);
}
