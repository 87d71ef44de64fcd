/* SPDX-License-Identifier: MIT */
/*
 * The verbs devices of a host (uverbs.h). Event rules: docs/verbs.md
 * "Events", after the kernel's mlx4/mlx5 drivers (port change and port
 * management change events) and ib_uverbs' async event file.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "abi/verbs_wire.h"
#include "fabric/port.h"
#include "kernel/uverbs.h"
#include "kernel/uverbs_priv.h"
#include "lib/log.h"

struct uverbs_events {
	struct uverbs_dev *dev;
	GQueue queue;		/* struct verbs_wire_event * */
	bool said_full;		/* the limit was logged since it last had room */
	void (*wakeup)(void *);
	void *wakeup_ctx;
};

/* ---- events ------------------------------------------------------------ */

static void queue_event(struct uverbs_dev *d, unsigned port, uint32_t type)
{
	GList *l;

	g_debug("%s: port %u: async event %u", d->ca_name, port, type);
	for (l = d->files; l; l = l->next) {
		struct uverbs_events *ev = l->data;
		struct verbs_wire_event *rec;

		if (ev->queue.length >= UVERBS_EVENTS_MAX) {
			if (!ev->said_full)
				g_warning("%s: an async event file holds %u unread events: dropping new ones until it is read",
					  d->ca_name, UVERBS_EVENTS_MAX);
			ev->said_full = true;
			continue;
		}
		rec = g_new0(struct verbs_wire_event, 1);
		rec->element = port;
		rec->event_type = type;
		g_queue_push_tail(&ev->queue, rec);
		if (ev->wakeup)
			ev->wakeup(ev->wakeup_ctx);
	}
}

struct uverbs_dev *uverbs_dev_of_node(struct uverbs *uv, const struct node *n)
{
	return g_hash_table_lookup(uv->by_node, n);
}

/*
 * The kernel's rules (docs/verbs.md "Events"): the port reaching Active is
 * PORT_ACTIVE and leaving it PORT_ERR (the HCA's port change event); LID
 * or LMC, SM LID or SL, the GID prefix or GUIDs, ClientReregister and the
 * P_Key table each have their event, in mlx4's order for one PortInfo Set.
 */
static void on_port_changed(void *ctx, struct port *p, unsigned what)
{
	static const struct { unsigned bit; uint32_t type; } rules[] = {
		{ PORT_CHANGED_LID, VERBS_EV_LID_CHANGE },
		{ PORT_CHANGED_SM, VERBS_EV_SM_CHANGE },
		{ PORT_CHANGED_GUID, VERBS_EV_GID_CHANGE },
		{ PORT_CHANGED_REREG, VERBS_EV_CLIENT_REREGISTER },
		{ PORT_CHANGED_PKEY, VERBS_EV_PKEY_CHANGE },
	};
	struct uverbs_dev *d = uverbs_dev_of_node(ctx, p->node);
	unsigned i;

	/* No one listens: the first open takes the ports as they are then. */
	if (!d || !d->files)
		return;
	if (what & PORT_CHANGED_STATE) {
		uint8_t was = d->last_state[p->num];

		if (p->state == PORT_ACTIVE && was != PORT_ACTIVE)
			queue_event(d, p->num, VERBS_EV_PORT_ACTIVE);
		else if (was == PORT_ACTIVE && p->state != PORT_ACTIVE)
			queue_event(d, p->num, VERBS_EV_PORT_ERR);
	}
	for (i = 0; i < G_N_ELEMENTS(rules); i++)
		if (what & rules[i].bit)
			queue_event(d, p->num, rules[i].type);
	d->last_state[p->num] = p->state;
}

struct uverbs_events *uverbs_events_open(struct uverbs_dev *d)
{
	struct uverbs_events *ev = g_new0(struct uverbs_events, 1);
	unsigned i;

	ev->dev = d;
	g_queue_init(&ev->queue);
	/* Events are news from now on: what the ports are now is the base
	 * (on_port_changed keeps it only while a file is open). */
	if (!d->files)
		for (i = 1; i <= d->node->nports; i++)
			d->last_state[i] = d->node->ports[i].state;
	d->files = g_list_append(d->files, ev);
	return ev;
}

void uverbs_events_close(struct uverbs_events *ev)
{
	if (!ev)
		return;
	ev->dev->files = g_list_remove(ev->dev->files, ev);
	g_queue_clear_full(&ev->queue, g_free);
	g_free(ev);
}

void uverbs_events_set_wakeup(struct uverbs_events *ev, void (*fn)(void *), void *ctx)
{
	ev->wakeup = fn;
	ev->wakeup_ctx = ctx;
}

bool uverbs_events_readable(const struct uverbs_events *ev)
{
	return ev->queue.length > 0;
}

ssize_t uverbs_events_read(struct uverbs_events *ev, void *buf, size_t count)
{
	struct verbs_wire_event *rec;

	if (count < sizeof(*rec))
		return -EINVAL;
	rec = g_queue_pop_head(&ev->queue);
	if (!rec)
		return -EAGAIN;
	memcpy(buf, rec, sizeof(*rec));
	g_free(rec);
	ev->said_full = false;
	return sizeof(*rec);
}

struct kfile_node *uverbs_dev_ctx_node(struct uverbs_dev *d)
{
	return &d->ctx_node;
}

/* ---- attributes -------------------------------------------------------- */

/* The limits (ibv_device_attr) are abi/verbs_wire.h's VERBS_MAX_*. */
/* IBV_DEVICE_BAD_PKEY_CNTR | BAD_QKEY_CNTR | PORT_ACTIVE_EVENT |
 * SYS_IMAGE_GUID | RC_RNR_NAK_GEN | MEM_WINDOW | XRC |
 * MEM_WINDOW_TYPE_2B (verbs.h enum ibv_device_cap_flags): a SEND that
 * finds no receive WR is RNR NAKed (verbs/rc.c); XRC domains, SRQs and
 * QPs are there (verbs/xrc.c), memory windows of type 1 and 2B
 * (verbs/mw.c). */
#define DEV_CAP_FLAGS		0x01121c06u
/* IBV_ATOMIC_HCA: atomics are atomic against each other at this HCA (the
 * responder's reader thread runs them one at a time; verbs/rc.c). */
#define DEV_ATOMIC_CAP		1
#define DEV_ACK_DELAY		16	/* 4.096 us x 2^16, as ConnectX reports */
#define FW_VER			"2.42.5000"	/* as sysfs fw_ver */

char *uverbs_device_text(const struct uverbs_dev *d)
{
	const struct node *n = d->node;
	GString *s = g_string_new(NULL);

	g_string_append_printf(s, "fw_ver %s\n", FW_VER);
	g_string_append_printf(s, "node_guid 0x%016" G_GINT64_MODIFIER "x\n", n->guid);
	g_string_append_printf(s, "sys_image_guid 0x%016" G_GINT64_MODIFIER "x\n", n->sys_guid);
	g_string_append_printf(s, "max_mr_size 0xffffffffffffffff\n");
	g_string_append_printf(s, "page_size_cap 0xfffffffffffff000\n");
	g_string_append_printf(s, "vendor_id 0x%x\n", n->vendor_id);
	g_string_append_printf(s, "vendor_part_id %u\n", n->device_id);
	g_string_append_printf(s, "hw_ver 0x%x\n", n->revision);
	g_string_append_printf(s, "max_qp %u\nmax_qp_wr %u\n", VERBS_MAX_QP, VERBS_MAX_QP_WR);
	g_string_append_printf(s, "device_cap_flags 0x%x\n", DEV_CAP_FLAGS);
	g_string_append_printf(s, "max_sge %u\nmax_sge_rd %u\n", VERBS_MAX_SGE, VERBS_MAX_SGE);
	g_string_append_printf(s, "max_cq %u\nmax_cqe %u\n", VERBS_MAX_CQ, VERBS_MAX_CQE);
	g_string_append_printf(s, "max_mr %u\nmax_pd %u\n", VERBS_MAX_MR, VERBS_MAX_PD);
	g_string_append_printf(s, "max_qp_rd_atom %u\nmax_qp_init_rd_atom %u\n",
			       VERBS_MAX_RD_ATOM, VERBS_MAX_RD_ATOM);
	g_string_append_printf(s, "max_res_rd_atom %u\n", VERBS_MAX_RD_ATOM * VERBS_MAX_QP);
	g_string_append_printf(s, "atomic_cap %u\n", DEV_ATOMIC_CAP);
	g_string_append_printf(s, "max_srq %u\nmax_srq_wr %u\nmax_srq_sge %u\n", VERBS_MAX_SRQ,
			       VERBS_MAX_SRQ_WR, VERBS_MAX_SRQ_SGE);
	g_string_append_printf(s, "max_ah %u\nmax_mw %u\n", VERBS_MAX_AH, VERBS_MAX_MW);
	g_string_append_printf(s, "max_mcast_grp %u\nmax_mcast_qp_attach %u\n"
			       "max_total_mcast_qp_attach %u\n", VERBS_MAX_MCAST_GRP,
			       VERBS_MAX_MCAST_QP_ATTACH, VERBS_MAX_MCAST_ATTACH);
	g_string_append_printf(s, "max_pkeys %u\n", n->partition_cap);
	g_string_append_printf(s, "local_ca_ack_delay %u\n", DEV_ACK_DELAY);
	g_string_append_printf(s, "phys_port_cnt %u\n", n->nports);
	return g_string_free(s, FALSE);
}

/* ibv_port_attr.active_speed: IB_SPEED_* of kernel ib_verbs.h. */
static unsigned verbs_speed(const struct port *p)
{
	static const struct { const char *name; unsigned code; } codes[] = {
		{ "SDR", 1 }, { "DDR", 2 }, { "QDR", 4 }, { "FDR10", 8 },
		{ "FDR", 16 }, { "EDR", 32 }, { "HDR", 64 }, { "NDR", 128 },
	};
	const char *name = port_host_speed(p)->name;
	unsigned i;

	for (i = 0; i < G_N_ELEMENTS(codes); i++)
		if (!strcmp(codes[i].name, name))
			return codes[i].code;
	return 1;
}

/* A RoCE port's (docs/roce.md): IBV_MTU_1024, and CM_SUP |
 * IP_BASED_GIDS (IBA's CapabilityMask bits 16 and 26, ib_verbs.h). */
#define ROCE_ACTIVE_MTU		3
#define ROCE_CAP_FLAGS		(0x00010000u | 0x04000000u)

/*
 * ibv_port_attr as an HCA driver fills it from its own PortInfo (mlx4's
 * ib_query_port: NeighborMTU is the active MTU, VLCap the max_vl_num).
 */
char *uverbs_port_text(const struct uverbs_dev *d, unsigned num)
{
	struct port *p;
	GString *s;
	bool roce;

	if (num < 1 || num > d->node->nports)
		return NULL;
	p = &d->node->ports[num];
	roce = port_is_roce(p);
	s = g_string_new(NULL);
	g_string_append_printf(s, "state %u\n", p->state);
	/* RoCE's active MTU is the IB MTU that fits the interface's 1500
	 * (iboe_get_mtu: 1024); no LIDs, no SM; the capability flags an
	 * Ethernet port has (CM, IP-based GIDs). */
	g_string_append_printf(s, "max_mtu %u\nactive_mtu %u\n", p->mtu_cap,
			       roce ? MIN(p->neighbor_mtu, ROCE_ACTIVE_MTU) : p->neighbor_mtu);
	g_string_append_printf(s, "gid_tbl_len %u\n", GUIDS_PER_PORT);
	g_string_append_printf(s, "port_cap_flags 0x%08x\n",
			       roce ? ROCE_CAP_FLAGS : p->cap_mask);
	g_string_append_printf(s, "max_msg_sz 0x80000000\n");
	g_string_append_printf(s, "bad_pkey_cntr %u\nqkey_viol_cntr %u\n",
			       p->pkey_violations, p->qkey_violations);
	g_string_append_printf(s, "pkey_tbl_len %u\n", p->npkeys);
	g_string_append_printf(s, "lid %u\nsm_lid %u\nlmc %u\nsm_sl %u\n",
			       roce ? 0 : p->lid, roce ? 0 : p->sm_lid, roce ? 0 : p->lmc,
			       roce ? 0 : p->sm_sl);
	g_string_append_printf(s, "max_vl_num %u\n", p->vl_cap);
	g_string_append_printf(s, "subnet_timeout %u\ninit_type_reply 0\n", p->subnet_timeout);
	g_string_append_printf(s, "active_width %u\nactive_speed %u\n", p->width_active,
			       verbs_speed(p));
	g_string_append_printf(s, "phys_state %u\n", p->phys_state);
	/* enum ibv_link_layer: 1 InfiniBand, 2 Ethernet (port_link's). */
	g_string_append_printf(s, "link_layer %u\n", roce ? PORT_LINK_ETH : 1u);
	g_string_append_printf(s, "flags 0\nport_cap_flags2 0\n");
	return g_string_free(s, FALSE);
}

/* ---- devices ----------------------------------------------------------- */

/* The host's client hooks: its ports' changes, data packets for our QPs. */
static const struct host_client uverbs_client = {
	.changed = on_port_changed, .data = uverbs_on_data,
};

struct uverbs_dev *uverbs_dev_at(const struct port *p)
{
	struct uverbs *uv = host_client_at(p, &uverbs_client);

	return uv ? uverbs_dev_of_node(uv, p->node) : NULL;
}

struct uverbs *uverbs_new(struct host *h)
{
	struct uverbs *uv = g_new0(struct uverbs, 1);
	unsigned k;

	uv->hw = h;
	uv->devs = g_ptr_array_new();
	uv->by_node = g_hash_table_new(NULL, NULL);
	for (k = 0; k < host_ncas(h); k++) {
		const char *name = NULL;
		struct node *n = host_ca(h, k, &name);
		struct uverbs_dev *d;

		if (node_is_switch(n))
			continue;
		d = g_new0(struct uverbs_dev, 1);
		d->uv = uv;
		d->index = uv->devs->len;
		d->ca_name = name;
		d->node = n;
		d->last_state = g_new0(uint8_t, n->nports + 1);
		d->ctx_node = (struct kfile_node){ &uverbs_ctx_fops, d };
		uverbs_qps_init(d);
		g_ptr_array_add(uv->devs, d);
		g_hash_table_insert(uv->by_node, n, d);
	}
	host_register_client(h, &uverbs_client, uv);
	return uv;
}

void uverbs_free(struct uverbs *uv)
{
	unsigned i;

	if (!uv)
		return;
	host_unregister_client(uv->hw, &uverbs_client, uv);
	for (i = 0; i < uv->devs->len; i++) {
		struct uverbs_dev *d = g_ptr_array_index(uv->devs, i);

		while (d->files)
			uverbs_events_close(d->files->data);
		uverbs_qps_clear(d);
		g_free(d->last_state);
		g_free(d);
	}
	g_ptr_array_free(uv->devs, TRUE);
	g_hash_table_destroy(uv->by_node);
	g_free(uv);
}

unsigned uverbs_ndevs(const struct uverbs *uv) { return uv->devs->len; }

struct uverbs_dev *uverbs_dev(struct uverbs *uv, unsigned index)
{
	return index < uv->devs->len ? g_ptr_array_index(uv->devs, index) : NULL;
}

unsigned uverbs_dev_index(const struct uverbs_dev *d) { return d->index; }
const char *uverbs_dev_ca_name(const struct uverbs_dev *d) { return d->ca_name; }
struct node *uverbs_dev_node(const struct uverbs_dev *d) { return d->node; }
