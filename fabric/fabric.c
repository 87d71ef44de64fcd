/* SPDX-License-Identifier: MIT */
/* The fabric: node and port creation, cables, lookups. See fabric.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fabric/cc.h"
#include "fabric/fabric.h"
#include "fabric/mcast.h"
#include "fabric/port.h"
#include "fabric/route.h"

struct fabric *fabric_new(void)
{
	struct fabric *f = g_new0(struct fabric, 1);

	f->nodes = g_ptr_array_new();
	f->by_id = g_hash_table_new(g_str_hash, g_str_equal);
	f->by_guid = g_hash_table_new(g_int64_hash, g_int64_equal);
	g_queue_init(&f->events);
	fault_set_init(&f->faults, 0);
	return f;
}

static void node_free(struct node *n)
{
	unsigned i;

	for (i = 0; i <= n->nports; i++) {
		struct timer *t = n->ports[i].mkey_lease_timer;

		if (t && timer_armed(t))
			timerq_cancel(n->fabric->tq, t);
		g_free(t);
		g_free(n->ports[i].pkeys);
		g_free(n->ports[i].vlarb);
		g_free(n->ports[i].mlnx_epi);
		g_free(n->ports[i].alias_guids);
		cc_free(&n->ports[i]);
	}
	if (n->sw) {
		g_free(n->sw->lft);
		g_free(n->sw->mft);
		g_free(n->sw);
	}
	g_free(n->ports);
	g_free(n->id);
	g_free(n);
}

void fabric_free(struct fabric *f)
{
	unsigned i;

	if (!f)
		return;
	if (f->verbs)
		f->verbs_ops->free(f->verbs);
	fabric_events_clear(f);
	fault_set_clear(&f->faults);
	fabric_roce_mcast_free(f);
	for (i = 0; i < f->nodes->len; i++)
		node_free(g_ptr_array_index(f->nodes, i));
	g_ptr_array_free(f->nodes, TRUE);
	g_hash_table_destroy(f->by_id);
	g_hash_table_destroy(f->by_guid);
	if (f->roce_by_gid)
		g_hash_table_destroy(f->roce_by_gid);
	g_free(f);
}

struct node *fabric_add_node(struct fabric *f, enum node_type type,
			     const char *id, uint8_t nports, uint64_t guid)
{
	struct node *n;
	unsigned i;

	if (g_hash_table_contains(f->by_id, id) ||
	    g_hash_table_contains(f->by_guid, &guid))
		return NULL;
	n = g_new0(struct node, 1);
	n->fabric = f;
	fabric_roce_gids_changed(f);
	n->type = type;
	n->id = g_strdup(id);
	g_strlcpy(n->desc, id, sizeof(n->desc));
	n->guid = n->sys_guid = guid;
	n->vendor_id = 0x0002c9;
	n->nports = nports;
	n->index = f->nodes->len;
	if (type == NODE_SWITCH) {
		n->device_id = 0xc738;	/* SwitchX */
		n->revision = 0xa0;
		n->partition_cap = 8;
		n->sw = g_new0(struct switch_state, 1);
		n->sw->lft_cap = 0xc000;
		n->sw->mft_cap = 1024;
		n->sw->life_time = 0x12;
		n->sw->partition_enf_cap = 32;
		n->sw->enhanced_port0 = true;
	} else {
		n->device_id = 0x1003;	/* ConnectX-3, "MT4099" */
		n->revision = 1;
		n->partition_cap = 64;
	}
	n->ports = g_new0(struct port, nports + 1u);
	for (i = 0; i <= nports; i++) {
		struct port *p = &n->ports[i];

		p->node = n;
		p->num = (uint8_t)i;
		/* Switch ports all carry the switch GUID; CA ports node+num. */
		p->guid = type == NODE_SWITCH ? guid : guid + i;
		port_init_defaults(p);
	}
	g_ptr_array_add(f->nodes, n);
	g_hash_table_insert(f->by_id, n->id, n);
	g_hash_table_insert(f->by_guid, &n->guid, n);
	return n;
}

struct node *fabric_find(struct fabric *f, const char *id)
{
	return g_hash_table_lookup(f->by_id, id);
}

void fabric_set_node_guid(struct fabric *f, struct node *n, uint64_t guid)
{
	unsigned i;

	if (g_hash_table_lookup(f->by_guid, &n->guid) == n)
		g_hash_table_remove(f->by_guid, &n->guid);
	n->guid = guid;
	/* With duplicates, lookups find the first holder; that is fine. */
	if (!g_hash_table_contains(f->by_guid, &n->guid))
		g_hash_table_insert(f->by_guid, &n->guid, n);
	if (node_is_switch(n))
		for (i = 0; i <= n->nports; i++)
			n->ports[i].guid = guid;
	fabric_roce_gids_changed(f);
}

struct node *fabric_find_guid(struct fabric *f, uint64_t guid)
{
	unsigned i, j;
	struct node *n = g_hash_table_lookup(f->by_guid, &guid);

	if (n)
		return n;
	for (i = 0; i < f->nodes->len; i++) {
		n = g_ptr_array_index(f->nodes, i);
		for (j = 1; j <= n->nports; j++)
			if (n->ports[j].guid == guid)
				return n;
	}
	return NULL;
}

struct node *fabric_lookup(struct fabric *f, const char *name)
{
	struct node *n = fabric_find(f, name);
	char *end;
	uint64_t guid;

	if (n || g_ascii_strncasecmp(name, "0x", 2))
		return n;
	guid = g_ascii_strtoull(name, &end, 16);
	return *end ? NULL : fabric_find_guid(f, guid);
}

int fabric_link(struct port *a, struct port *b, uint8_t width, struct lspeed sp)
{
	struct port *ends[2] = { a, b };
	unsigned i;

	if (a->remote || b->remote || a == b || a->num == 0 || b->num == 0)
		return -1;
	a->remote = b;
	b->remote = a;
	for (i = 0; i < 2; i++) {
		struct port *p = ends[i];

		p->width_active = width;
		if (!(p->width_supported & width))
			p->width_supported = p->width_enabled = p->width_supported | width;
		port_set_speed(p, sp);
	}
	a->phys_state = b->phys_state = PHYS_LINKUP;
	a->state = b->state = PORT_INIT;
	return 0;
}

void port_attach(struct port *p, const struct port_upper *upper)
{
	p->upper = *upper;
}

void fabric_count(struct fabric *f, struct fabric_counts *c)
{
	unsigned i, j;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		c->nodes++;
		if (n->type == NODE_SWITCH)
			c->switches++;
		else if (n->type == NODE_CA)
			c->cas++;
		else
			c->routers++;
		c->ports += n->nports;
		for (j = 1; j <= n->nports; j++)
			if (n->ports[j].remote)
				c->links++;
	}
	c->links /= 2;
}

static const struct {
	const char *iba, *sysfs;
} node_type_names[] = {
	[NODE_CA] = { "CA", "CA" },
	[NODE_SWITCH] = { "Switch", "switch" },
	[NODE_ROUTER] = { "Router", "router" },
};

const char *node_type_name(enum node_type t)
{
	return (unsigned)t < G_N_ELEMENTS(node_type_names) && node_type_names[t].iba ?
	       node_type_names[t].iba : "?";
}

const char *node_type_sysfs_name(enum node_type t)
{
	return (unsigned)t < G_N_ELEMENTS(node_type_names) && node_type_names[t].sysfs ?
	       node_type_names[t].sysfs : "unknown";
}

uint16_t node_lid(const struct node *n)
{
	return n->ports[node_is_switch(n) ? 0 : 1].lid;
}
