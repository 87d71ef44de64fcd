/* SPDX-License-Identifier: MIT */
/*
 * Multicast forwarding (mcast.h): a group's tree over the switches, as
 * an SM programs the MulticastForwardingTables (IBA 18.2.4.3.2), and the
 * groups of the RoCE networks, which have no SM: the switches there stand
 * for Ethernet switches that snoop IGMP, forwarding a group's packets to
 * the ports with a QP attached to it.
 */
#include "config.h"

#include <string.h>

#include "abi/roce_wire.h"
#include "fabric/mcast.h"
#include "fabric/port.h"

/* Is the cable at @p up both ways (a tree may use it)? */
static bool link_up(const struct port *p)
{
	return p->remote && p->state == PORT_ACTIVE && p->remote->state == PORT_ACTIVE &&
	       !p->node->off && !p->remote->node->off;
}

/* Set or clear @port in the MFT entry of @mlid at switch @n. */
static void mft_set(struct node *n, uint16_t mlid, unsigned port, bool on)
{
	struct switch_state *sw = n->sw;
	unsigned positions = n->nports / 16 + 1, i = mlid - FABRIC_MLID_FIRST;
	uint16_t *e;

	if (i >= sw->mft_cap)
		return;
	if (!sw->mft) {
		if (!on)
			return;
		sw->mft = g_new0(uint16_t, (size_t)sw->mft_cap * positions);
	}
	e = &sw->mft[(size_t)i * positions + port / 16];
	*e = on ? (uint16_t)(*e | 1u << (port % 16)) : (uint16_t)(*e & ~(1u << (port % 16)));
	if (on && mlid > sw->mft_top)
		sw->mft_top = mlid;
}

/* Member @i of @members (fabric_mcast_program: its elements begin with
 * the port). */
static struct port *member(const GArray *members, unsigned i)
{
	struct port *p;

	memcpy(&p, members->data + (size_t)i * g_array_get_element_size((GArray *)members),
	       sizeof(p));
	return p;
}

static bool is_member(const GArray *members, const struct port *p)
{
	unsigned i;

	for (i = 0; i < members->len; i++)
		if (member(members, i) == p)
			return true;
	return false;
}

void fabric_mcast_program(struct fabric *f, uint16_t mlid, bool eth_net, const GArray *members)
{
	unsigned nn = f->nodes->len, i, j, head = 0, total = 0;
	struct node **order = g_new0(struct node *, nn);
	uint8_t *parent_port = g_new0(uint8_t, nn);	/* port toward the root */
	unsigned *sub = g_new0(unsigned, nn), norder = 0;
	struct node **parent = g_new0(struct node *, nn);
	bool *seen = g_new0(bool, nn);
	struct node *root = NULL;

	for (i = 0; i < nn; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (node_is_switch(n) && n->eth_net == eth_net)
			for (j = 1; j <= n->nports; j++)
				mft_set(n, mlid, j, false);
	}
	/* Members count at the switch their cable reaches. */
	for (i = 0; i < members->len; i++) {
		struct port *p = member(members, i);

		if (!link_up(p) || !node_is_switch(p->remote->node))
			continue;
		if (!root)
			root = p->remote->node;
		sub[p->remote->node->index]++;
		total++;
	}
	if (root) {
		order[norder++] = root;
		seen[root->index] = true;
	}
	while (head < norder) {
		struct node *n = order[head++];

		for (j = 1; j <= n->nports; j++) {
			struct port *r = n->ports[j].remote;

			if (!link_up(&n->ports[j]) || !node_is_switch(r->node) || seen[r->node->index])
				continue;
			seen[r->node->index] = true;
			parent[r->node->index] = n;
			parent_port[r->node->index] = r->num;
			order[norder++] = r->node;
		}
	}
	/* Subtree counts, leaves first. */
	for (i = norder; i-- > 1;)
		sub[parent[order[i]->index]->index] += sub[order[i]->index];
	for (i = 0; i < norder; i++) {
		struct node *n = order[i];

		for (j = 1; j <= n->nports; j++) {
			struct port *r = n->ports[j].remote;

			if (!link_up(&n->ports[j]))
				continue;
			if (!node_is_switch(r->node)) {
				if (is_member(members, r))
					mft_set(n, mlid, j, true);	/* a member's cable */
			} else if (parent[r->node->index] == n && seen[r->node->index] &&
				   parent_port[r->node->index] == r->num && sub[r->node->index]) {
				mft_set(n, mlid, j, true);	/* a child with members */
			}
		}
		if (n != root && total > sub[n->index])
			mft_set(n, mlid, parent_port[n->index], true);
	}
	fabric_changed(f);	/* the direct path: multicast ways changed */
	g_free(order);
	g_free(parent_port);
	g_free(sub);
	g_free(parent);
	g_free(seen);
}

/* ---- RoCE groups ---------------------------------------------------------- */

struct roce_member {
	struct port *port;	/* first: fabric_mcast_program reads it */
	unsigned refs;		/* QPs attached there */
};

struct roce_group {
	uint8_t mgid[16];
	unsigned net;		/* node->eth_net_id of its network */
	uint16_t mlid;
	GArray *members;	/* struct roce_member */
};

bool fabric_gid_is_mcast(const uint8_t gid[16])
{
	/* IPv6 multicast, or an IPv4-mapped one of 224.0.0.0/4 (the
	 * kernel's rdma_is_multicast_addr). */
	return gid[0] == 0xff || (roce_gid_is_ip4(gid) && (gid[12] & 0xf0) == 0xe0);
}

static struct roce_group *group_of(struct fabric *f, unsigned net, const uint8_t mgid[16])
{
	unsigned i;

	for (i = 0; f->roce_groups && i < f->roce_groups->len; i++) {
		struct roce_group *g = g_ptr_array_index(f->roce_groups, i);

		if (g->net == net && !memcmp(g->mgid, mgid, 16))
			return g;
	}
	return NULL;
}

/* An MLID no RoCE group has, from the top of what every MFT holds down
 * (an SA's groups on the InfiniBand networks take theirs from the
 * bottom up, on other switches), or 0. */
static uint16_t free_mlid(struct fabric *f)
{
	unsigned i, k, cap = FABRIC_MCAST_MLIDS;

	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		if (node_is_switch(n) && n->eth_net)
			cap = MIN(cap, n->sw->mft_cap);
	}
	for (i = cap; i-- > 0;) {
		uint16_t mlid = (uint16_t)(FABRIC_MLID_FIRST + i);

		for (k = 0; k < f->roce_groups->len; k++)
			if (((struct roce_group *)g_ptr_array_index(f->roce_groups, k))->mlid == mlid)
				break;
		if (k == f->roce_groups->len)
			return mlid;
	}
	return 0;
}

static void program(struct fabric *f, struct roce_group *g)
{
	fabric_mcast_program(f, g->mlid, true, g->members);
}

static void group_free(gpointer p)
{
	struct roce_group *g = p;

	g_array_free(g->members, TRUE);
	g_free(g);
}

int fabric_roce_mcast_join(struct fabric *f, struct port *p, const uint8_t mgid[16])
{
	struct roce_group *g = group_of(f, p->node->eth_net_id, mgid);
	unsigned i;

	if (!g) {
		if (!f->roce_groups)
			f->roce_groups = g_ptr_array_new_with_free_func(group_free);
		g = g_new0(struct roce_group, 1);
		if (!(g->mlid = free_mlid(f))) {
			g_free(g);
			return -1;
		}
		memcpy(g->mgid, mgid, 16);
		g->net = p->node->eth_net_id;
		g->members = g_array_new(FALSE, TRUE, sizeof(struct roce_member));
		g_ptr_array_add(f->roce_groups, g);
	}
	for (i = 0; i < g->members->len; i++) {
		struct roce_member *m = &g_array_index(g->members, struct roce_member, i);

		if (m->port == p) {
			m->refs++;
			return 0;
		}
	}
	g_array_append_val(g->members, ((struct roce_member){ .port = p, .refs = 1 }));
	program(f, g);
	return 0;
}

void fabric_roce_mcast_leave(struct fabric *f, struct port *p, const uint8_t mgid[16])
{
	struct roce_group *g = group_of(f, p->node->eth_net_id, mgid);
	unsigned i;

	for (i = 0; g && i < g->members->len; i++) {
		struct roce_member *m = &g_array_index(g->members, struct roce_member, i);

		if (m->port != p || --m->refs)
			continue;
		g_array_remove_index(g->members, i);
		program(f, g);	/* without it; none: the entries cleared */
		if (!g->members->len)
			g_ptr_array_remove(f->roce_groups, g);
		return;
	}
}

uint16_t fabric_roce_mcast_mlid(struct fabric *f, const struct port *from, const uint8_t mgid[16])
{
	struct roce_group *g = group_of(f, from->node->eth_net_id, mgid);

	return g ? g->mlid : 0;
}

void fabric_roce_mcast_reprogram(struct fabric *f)
{
	unsigned i;

	for (i = 0; f->roce_groups && i < f->roce_groups->len; i++)
		program(f, g_ptr_array_index(f->roce_groups, i));
}

void fabric_roce_mcast_free(struct fabric *f)
{
	if (f->roce_groups)
		g_ptr_array_free(f->roce_groups, TRUE);
	f->roce_groups = NULL;
}
