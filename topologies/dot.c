/* SPDX-License-Identifier: MIT */
/*
 * The fabric as a Graphviz graph: switches as boxes, CAs as ellipses, one
 * edge per cable labelled with its width and speed. With @live, it also
 * shows what is happening now: LIDs, links that are not Active (dashed)
 * or down (red, dotted), powered-off nodes (grey) and nodes that fault
 * rules are aimed at (orange, with the rule count).
 */
#include "config.h"

#include "fabric/port.h"
#include "topologies/topo.h"

static unsigned rules_at(struct fabric *f, const struct node *n)
{
	unsigned i, k = 0;

	for (i = 0; f->faults.rules && i < f->faults.rules->len; i++)
		if (((struct fault_rule *)g_ptr_array_index(f->faults.rules, i))->node == n)
			k++;
	return k;
}

void topo_dot(struct fabric *f, GString *out, bool live)
{
	unsigned i, j;

	g_string_append(out, "graph fabric {\n"
			"\tgraph [overlap=false, splines=true, fontname=\"Helvetica\"];\n"
			"\tnode [fontname=\"Helvetica\", fontsize=10];\n"
			"\tedge [fontname=\"Helvetica\", fontsize=8];\n");
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);
		bool sw = node_is_switch(n);
		unsigned rules = live ? rules_at(f, n) : 0;
		GString *label = g_string_new(n->desc);

		if (live) {
			if (sw && n->ports[0].lid)
				g_string_append_printf(label, "\\nLID %u", n->ports[0].lid);
			for (j = 1; !sw && j <= n->nports; j++)
				if (n->ports[j].lid)
					g_string_append_printf(label, "\\nport %u: LID %u", j, n->ports[j].lid);
			if (rules)
				g_string_append_printf(label, "\\n%u fault rule%s", rules, rules > 1 ? "s" : "");
		}
		g_string_append_printf(out, "\t\"%s\" [shape=%s, label=\"%s\"%s%s];\n", n->id,
				       sw ? "box" : "ellipse", label->str,
				       live && n->off ? ", style=filled, fillcolor=grey" : "",
				       rules ? ", color=orange, penwidth=2" : "");
		g_string_free(label, TRUE);
	}
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);

		for (j = 1; j <= n->nports; j++) {
			struct port *p = &n->ports[j], *r = p->remote;
			const char *style = "";

			/* One edge per cable: from the end that comes first. */
			if (!r || r->node->index < n->index || (r->node == n && r->num < j))
				continue;
			if (live && p->phys_state != PHYS_LINKUP)
				style = ", color=red, style=dotted";
			else if (live && (p->state != PORT_ACTIVE || r->state != PORT_ACTIVE))
				style = ", style=dashed";
			g_string_append_printf(out, "\t\"%s\" -- \"%s\" [taillabel=\"%u\", headlabel=\"%u\", label=\"%ux %s\"%s];\n",
					       n->id, r->node->id, j, r->num, width_lanes(p->width_active),
					       port_speed_name(p), style);
		}
	}
	g_string_append(out, "}\n");
}
