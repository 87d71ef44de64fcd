/* SPDX-License-Identifier: MIT */
/*
 * The fabric as it is now, in the topology format topo_load_*() reads:
 * GUIDs, descriptions, LIDs and every cable (written on both ends) with its
 * width and speed. Loading a dump gives the same fabric back.
 */
#include "config.h"

#include "fabric/port.h"
#include "topologies/topo.h"

void topo_dump(struct fabric *f, GString *out)
{
	unsigned i, j;

	g_string_append(out, "# Fabric dump written by ibemu; load it with --topology.\n\n");
	for (i = 0; i < f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(f->nodes, i);
		bool sw = node_is_switch(n);

		g_string_append_printf(out, "vendid=0x%x\ndevid=0x%x\n", n->vendor_id, n->device_id);
		if (!sw && n->nports && n->ports[1].link == PORT_LINK_ETH)
			g_string_append(out, "link_layer=Ethernet\n");
		/* No line for a SystemImageGUID of 0, as ibnetdiscover. */
		if (n->sys_guid)
			g_string_append_printf(out, "sysimgguid=0x%" G_GINT64_MODIFIER "x\n", n->sys_guid);
		g_string_append_printf(out, "%s=0x%" G_GINT64_MODIFIER "x",
				       sw ? "switchguid" : n->type == NODE_ROUTER ? "rtguid" : "caguid",
				       n->guid);
		if (sw)
			g_string_append_printf(out, "(%" G_GINT64_MODIFIER "x)", n->ports[0].guid);
		g_string_append_c(out, '\n');
		g_string_append_printf(out, "%s\t%u \"%s\"\t# \"%s\"", sw ? "Switch" :
				       n->type == NODE_ROUTER ? "Rt" : "Ca", n->nports, n->id, n->desc);
		if (sw)
			g_string_append_printf(out, " %s port 0 lid %u lmc %u",
					       n->sw->enhanced_port0 ? "enhanced" : "base",
					       n->ports[0].lid, n->ports[0].lmc);
		g_string_append_c(out, '\n');
		for (j = 1; j <= n->nports; j++) {
			struct port *p = &n->ports[j];

			if (!p->remote)
				continue;
			g_string_append_printf(out, "[%u]", j);
			if (!sw)
				g_string_append_printf(out, "(%" G_GINT64_MODIFIER "x)", p->guid);
			g_string_append_printf(out, "\t\"%s\"[%u]\tw=%ux s=%s", p->remote->node->id,
					       p->remote->num, width_lanes(p->width_active),
					       port_speed_name(p));
			if (p->ip4)
				g_string_append_printf(out, " addr=" IP4_FMT, IP4_PARTS(p->ip4));
			if (!sw)
				g_string_append_printf(out, "\t# lid %u lmc %u", p->lid, p->lmc);
			g_string_append_c(out, '\n');
		}
		g_string_append_c(out, '\n');
	}
}
