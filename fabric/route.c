/* SPDX-License-Identifier: MIT */
/*
 * The packet engine. One MAD's way (docs/architecture.md): fabric_send() from
 * the host's port, transmit() over each cable, arrive() at the next node,
 * where the switch forwards it (LFT or DR rules) or local_receive() hands it
 * to the node's SMA, to the attached host, or to the kernel's default reply.
 */
#include "config.h"

#include "abi/verbs_wire.h"
#include "fabric/cc.h"
#include "fabric/pma.h"
#include "fabric/port.h"
#include "fabric/route.h"
#include "fabric/sma.h"
#include "fabric/smi.h"
#include "fabric/vendor_mlx.h"

#define MAX_HOPS 64
/* LRH + BTH + DETH + MAD + ICRC + VCRC = 290 bytes: 72 words, as ibsim. */
#define MAD_PACKET_DWORDS 72

struct event {
	struct port *port;	/* where the packet arrives */
	struct mad_pkt pkt;
	bool faulted;		/* a fault rule already acted on it here */
	bool reorder;		/* held until the next packet reaches the node */
	uint64_t held_during;	/* number of the event that held it */
	struct timer timer;	/* while held back by a delay rule */
	struct fabric *f;
};

static void drop(struct fabric *f, const struct mad_pkt *p, const char *why,
		 const struct port *at)
{
	f->dropped++;
	if (p->data) {
		g_debug("drop data packet %u -> %u qp 0x%x at %s/%u: %s", p->slid, p->dlid,
			p->dqp, at ? at->node->id : "?", at ? at->num : 0, why);
		return;
	}
	g_debug("drop class 0x%02x method 0x%02x attr 0x%04x tid 0x%016" G_GINT64_MODIFIER "x at %s/%u: %s",
		mad_class(p->mad), mad_method(p->mad), mad_attr_id(p->mad),
		mad_tid(p->mad), at ? at->node->id : "?", at ? at->num : 0, why);
}

static struct event *event_new(struct fabric *f, struct port *at,
				const struct mad_pkt *p, bool faulted)
{
	struct event *ev = g_new0(struct event, 1);

	ev->f = f;
	ev->port = at;
	ev->faulted = faulted;
	mad_pkt_copy(&ev->pkt, p);
	return ev;
}

static void event_free(struct event *ev)
{
	mad_pkt_release(&ev->pkt);
	g_free(ev);
}

static void enqueue(struct fabric *f, struct port *at, const struct mad_pkt *p)
{
	g_queue_push_tail(&f->events, event_new(f, at, p, false));
}

static void delayed_arrival(struct timer *t, void *ctx)
{
	struct event *ev = ctx;
	struct fabric *f = ev->f;

	(void)t;
	f->delayed = g_list_remove(f->delayed, ev);
	g_queue_push_tail(&f->events, ev);
	fabric_drain(f);
}

/* Hold @p back for @ms before it arrives at @in (a delay rule). */
static struct event *delay(struct fabric *f, struct port *in,
			   const struct mad_pkt *p, unsigned ms)
{
	struct event *ev = event_new(f, in, p, true);

	if (!f->tq) {
		g_queue_push_tail(&f->events, ev);
		return ev;
	}
	timer_init(&ev->timer, delayed_arrival, ev);
	f->delayed = g_list_append(f->delayed, ev);
	timerq_arm(f->tq, &ev->timer, (uint64_t)ms * 1000);
	return ev;
}

/*
 * Packets that reorder rules held at @n go in behind the one just processed
 * there: it has overtaken them. Not those it made the rule hold itself.
 */
static void release_reordered(struct fabric *f, struct node *n)
{
	GList *l, *next;

	for (l = f->delayed; l; l = next) {
		struct event *ev = l->data;

		next = l->next;
		if (!ev->reorder || ev->held_during >= f->processed || ev->port->node != n)
			continue;
		timerq_cancel(f->tq, &ev->timer);
		f->delayed = g_list_delete_link(f->delayed, l);
		g_queue_push_tail(&f->events, ev);
	}
}

/* Why a packet (@smp: an SMP) cannot leave by @out now, or NULL. IBA
 * 7.2: which states may carry what. */
static const char *link_refuses(const struct port *out, bool smp)
{
	const struct port *r = out->remote;

	if (!r || out->phys_state != PHYS_LINKUP || r->phys_state != PHYS_LINKUP)
		return "no link";
	if (smp)	/* SMPs pass in Init, Armed and Active. */
		return out->state < PORT_INIT || r->state < PORT_INIT ? "port down" : NULL;
	return out->state != PORT_ACTIVE || r->state < PORT_ARMED ? "port not active" : NULL;
}

/* Put @p on the cable at @out. */
static void transmit(struct fabric *f, struct port *out, struct mad_pkt *p)
{
	struct port *r = out->remote;
	unsigned packets = 1, dwords = MAD_PACKET_DWORDS;
	const char *why = link_refuses(out, p->dqp == 0);

	if (why) {
		drop(f, p, why, out);
		return;
	}
	if (!p->hops_left) {
		drop(f, p, "hop limit (forwarding loop?)", out);
		return;
	}
	if (f->tap.fn)
		f->tap.fn(f->tap.ctx, out, p, p->hops_left == MAX_HOPS);
	p->hops_left--;
	if (p->data)	/* a data packet's size is its headers' and payload's */
		dwords = (verbs_pkt_wire_bytes(g_bytes_get_data(p->data, NULL)) + 3) / 4;
	else if (p->rmpp)	/* an RMPP transfer crosses as 256-byte segments */
		packets = (unsigned)((g_bytes_get_size(p->rmpp) + 255) / 256);
	pma_count(out, r, packets, dwords, p->sl, p->dlid >= 0xc000 && p->dlid != LID_PERMISSIVE);
	enqueue(f, r, p);
}

static void switch_route(struct fabric *f, struct node *n, struct port *in,
			 struct mad_pkt *p);
static void local_receive(struct fabric *f, struct port *in,
			  struct mad_pkt *p, bool by_lid);

/* Send LID-routed from node @n, whose port @from the packet leaves by. */
static void lid_send(struct fabric *f, struct port *from, struct mad_pkt *p)
{
	struct node *n = from->node;

	if (node_is_switch(n)) {
		switch_route(f, n, &n->ports[0], p);
		return;
	}
	if (port_owns_lid(from, p->dlid)) {
		/* HCA loopback: back in at the same port (docs/umad.md §4.6). */
		enqueue(f, from, p);
		return;
	}
	if (p->data && verbs_lid_is_mcast(p->dlid)) {
		/* Multicast: QPs of this port attached to the group get it
		 * from the HCA itself, the others through the switches. */
		enqueue(f, from, p);
	}
	transmit(f, from, p);
}

/*
 * A data packet to a multicast LID at switch @n: a copy out of every port
 * its MulticastForwardingTable entry names, except the one it came in by
 * (IBA chapter 18, multicast forwarding); port 0, the switch itself,
 * takes no data.
 */
static void switch_multicast(struct fabric *f, struct node *n, struct port *in,
			     struct mad_pkt *p)
{
	struct switch_state *sw = n->sw;
	unsigned positions = n->nports / 16 + 1, i = p->dlid - VERBS_LID_MCAST_FIRST, o;
	bool sent = false;

	for (o = 1; sw->mft && i < sw->mft_cap && o <= n->nports; o++) {
		struct mad_pkt copy = *p;	/* transmit() counts its hops */

		if (&n->ports[o] == in || !(sw->mft[(size_t)i * positions + o / 16] >> (o % 16) & 1))
			continue;
		transmit(f, &n->ports[o], &copy);
		sent = true;
	}
	if (!sent)
		drop(f, p, "no MFT entry", in);
}

/* The switch's forwarding decision for a LID-routed packet. */
static void switch_route(struct fabric *f, struct node *n, struct port *in,
			 struct mad_pkt *p)
{
	struct switch_state *sw = n->sw;
	unsigned out;

	if (port_owns_lid(&n->ports[0], p->dlid)) {
		if (p->data)
			drop(f, p, "data for a switch (it has no data QPs)", in);
		else
			local_receive(f, in, p, true);
		return;
	}
	if (p->data && verbs_lid_is_mcast(p->dlid)) {
		switch_multicast(f, n, in, p);
		return;
	}
	out = p->dlid < sw->lft_len ? sw->lft[p->dlid] : 0xff;
	if (out > n->nports) {
		drop(f, p, "no LFT entry", in);
		return;
	}
	if (out == 0) {
		local_receive(f, in, p, true);
		return;
	}
	transmit(f, &n->ports[out], p);
}

/* Our own LID for the source of an answer from @n at @in. */
static uint16_t reply_slid(struct node *n, struct port *in, uint16_t dlid)
{
	struct port *ip = port_mgmt(in);

	return port_owns_lid(ip, dlid) ? dlid : ip->lid;
}

/* Hand @p to the host attached at @hp, counting it delivered or dropped. */
static enum upper_verdict to_host(struct fabric *f, struct port *hp, struct mad_pkt *p)
{
	enum upper_verdict v = hp->upper.deliver ?
			       hp->upper.deliver(hp->upper.ctx, hp, p) : UPPER_UNCLAIMED;

	if (v == UPPER_TAKEN)
		f->delivered++;
	else if (v == UPPER_DROPPED)
		drop(f, p, "the host dropped it (receive queue full, or unmatched)", hp);
	return v;
}

static void deliver_up(struct fabric *f, struct port *in, struct mad_pkt *p)
{
	struct port *hp = port_mgmt(in);

	if (to_host(f, hp, p) == UPPER_UNCLAIMED)
		drop(f, p, "no host agent for response", hp);
}

/* Send the response @resp to the request @req that arrived at @in. */
static void respond(struct fabric *f, struct port *in, const struct mad_pkt *req,
		    const uint8_t *resp, bool by_lid)
{
	struct node *n = in->node;
	struct mad_pkt r = *req;
	enum smi_action act;
	unsigned out = 0;

	memcpy(r.mad, resp, MAD_SIZE);
	r.rmpp = NULL;		/* firmware answers fit one MAD */
	r.duplicated = false;	/* a new packet */
	r.hops_left = MAX_HOPS;
	r.sqp = req->dqp;
	r.dqp = req->sqp;
	if (mad_class(r.mad) != UMAD_CLASS_SUBN_DIRECTED_ROUTE) {
		r.dlid = req->slid;
		r.slid = reply_slid(n, in, req->dlid);
		lid_send(f, in, &r);
		return;
	}
	act = smi_send_response(r.mad, node_is_switch(n), in->num, n->nports, by_lid, &out);
	switch (act) {
	case SMI_FORWARD:
		r.slid = r.dlid = LID_PERMISSIVE;
		transmit(f, &n->ports[out], &r);
		break;
	case SMI_LOCAL:
		/* A local completion: the kernel reports SLID 0xffff. */
		r.slid = r.dlid = LID_PERMISSIVE;
		deliver_up(f, in, &r);
		break;
	case SMI_LID_ROUTE:
		r.dlid = (uint16_t)out;
		r.slid = port_mgmt(in)->lid;
		lid_send(f, in, &r);
		break;
	case SMI_REPLY_LID:
		r.dlid = req->slid;
		r.slid = reply_slid(n, in, req->dlid);
		lid_send(f, in, &r);
		break;
	default:
		drop(f, &r, "DR response has no way back", in);
	}
}

/*
 * A data packet reaching the CA port @in it is addressed to: the P_Key
 * check of IBA 9.2.7 (C9-42), as for GMPs, counted in P_KeyViolations;
 * then the QP's owner, through the host attached there (port_upper.data;
 * the Q_Key check is the QP's).
 */
static void data_receive(struct fabric *f, struct port *in, struct mad_pkt *p)
{
	enum upper_verdict v;

	if (!port_pkey_accepts(in, p->pkey)) {
		if (in->pkey_violations < 0xffff)
			in->pkey_violations++;
		drop(f, p, "P_Key not in the port's table", in);
		return;
	}
	v = in->upper.data ? in->upper.data(in->upper.ctx, in, p) : UPPER_UNCLAIMED;
	if (v == UPPER_TAKEN)
		f->delivered++;
	else if (v == UPPER_UNCLAIMED && verbs_lid_is_mcast(p->dlid))
		;	/* no QP here is in the group: nothing was meant for it */
	else
		drop(f, p, v == UPPER_DROPPED ? "the QP refused it (Q_Key, or its queue is full)" :
			   "no such QP", in);
}

/*
 * The node's own processing of a MAD addressed to it (docs/umad.md §4.6):
 * validation, firmware (SMA), then the attached host's agents, then the
 * kernel's reply to unclaimed Get/Set.
 */
static void local_receive(struct fabric *f, struct port *in, struct mad_pkt *p,
			  bool by_lid)
{
	struct node *n = in->node;
	struct port *hp = port_mgmt(in);
	MAD_BUF(resp);
	uint8_t method = mad_method(p->mad);

	struct fault_rule *r;

	if (p->data) {
		data_receive(f, in, p);
		return;
	}
	/* validate_mad(): base version 1, SMPs on QP0 only, GMPs on QP1. */
	if (p->mad[0] != 1 || mad_is_smp(p->mad) != (p->dqp == 0)) {
		drop(f, p, "invalid MAD for QP", in);
		return;
	}
	/*
	 * P_Key check of GMPs (IBA 9.2.7, C9-42): the packet's P_Key must be
	 * in the receiving port's table, and one of the two a full member.
	 * A violation is dropped and counted in PortInfo:P_KeyViolations.
	 */
	if (p->dqp != 0 && !port_pkey_accepts(hp, p->pkey)) {
		if (hp->pkey_violations < 0xffff)
			hp->pkey_violations++;
		drop(f, p, "P_Key not in the port's table", hp);
		return;
	}
	/* A "status" rule: the node answers with that MAD status instead. */
	r = fault_check(&f->faults, in, p, true, f->tq ? timerq_now(f->tq) : 0);
	if (r) {
		mad_getresp(resp, p->mad, (uint16_t)r->arg);
		respond(f, in, p, resp, by_lid);
		return;
	}
	if ((mad_is_smp(p->mad) && !mad_is_response(p->mad)) ||
	    (mad_is_smp(p->mad) && method == UMAD_METHOD_TRAP_REPRESS)) {
		switch (sma_process(n, in, p->mad, resp)) {
		case SMA_REPLY:
			f->delivered++;
			respond(f, in, p, resp, by_lid);
			return;
		case SMA_CONSUMED:
			f->delivered++;
			return;
		case SMA_PASS:
			break;
		}
	}
	/* PerfMgt Get/Set are answered by firmware (docs/umad.md §4.6 step 3). */
	if (mad_class(p->mad) == UMAD_CLASS_PERF_MGMT &&
	    (method == UMAD_METHOD_GET || method == UMAD_METHOD_SET)) {
		fabric_sync(f);	/* what went past the engine counts too */
		pma_process(n, in, p->mad, resp);
		f->delivered++;
		respond(f, in, p, resp, by_lid);
		return;
	}
	/* So is Congestion Control: a switch's agent on port 0 (cc.c). */
	if (mad_class(p->mad) == IB_CC_CLASS &&
	    (method == UMAD_METHOD_GET || method == UMAD_METHOD_SET)) {
		if (!cc_process(node_is_switch(n) ? &n->ports[0] : in, p->mad, resp)) {
			drop(f, p, "CC_Key violation", in);
			return;
		}
		f->delivered++;
		respond(f, in, p, resp, by_lid);
		return;
	}
	/* And Mellanox's vendor class, on a Mellanox node (vendor_mlx.c). */
	if (mad_class(p->mad) == VENDOR_MLX_CLASS &&
	    (method == UMAD_METHOD_GET || method == UMAD_METHOD_SET) &&
	    vendor_mlx_process(n, p->mad, resp)) {
		f->delivered++;
		respond(f, in, p, resp, by_lid);
		return;
	}
	if (to_host(f, hp, p) != UPPER_UNCLAIMED)
		return;
	if (mad_is_response(p->mad) ||
	    (method != UMAD_METHOD_GET && method != UMAD_METHOD_SET)) {
		drop(f, p, "no agent", in);
		return;
	}
	/* generate_unmatched_resp(): GetResp with "unsupported" (0x000C). */
	mad_getresp(resp, p->mad, UMAD_STATUS_ATTR_NOT_SUPPORTED);
	respond(f, in, p, resp, by_lid);
}

/* Apply the fault rules to @p arriving at @in; false if it goes no further. */
static bool apply_faults(struct fabric *f, struct port *in, struct mad_pkt *p)
{
	struct fault_rule *r = fault_check(&f->faults, in, p, false,
					   f->tq ? timerq_now(f->tq) : 0);

	if (!r)
		return true;
	switch (r->action) {
	case FAULT_DROP:
		drop(f, p, "fault rule", in);
		return false;
	case FAULT_DELAY:
		delay(f, in, p, fault_delay_ms(&f->faults, r));
		return false;
	case FAULT_REORDER: {
		struct event *ev = delay(f, in, p, r->arg ? r->arg : 100);

		ev->reorder = true;
		ev->held_during = f->processed;
		return false;
	}
	case FAULT_DUPLICATE:
		if (!p->duplicated) {
			p->duplicated = true;	/* the copy too */
			g_queue_push_tail(&f->events, event_new(f, in, p, true));
		}
		return true;
	case FAULT_CORRUPT:
		if (p->data) {
			/* The ICRC no longer matches: the receiver throws it
			 * away and counts PortRcvErrors (IBA 7.8.1, 16.1.3.5). */
			in->counters.rcv_err++;
			drop(f, p, "fault rule: corrupt (bad ICRC)", in);
			return false;
		}
		p->mad[r->arg % MAD_SIZE] ^= 0xff;
		return true;
	case FAULT_STATUS:
		break;
	}
	return true;
}

static void arrive(struct fabric *f, struct port *in, struct mad_pkt *p,
		   bool faulted)
{
	struct node *n = in->node;
	bool sw = node_is_switch(n);
	enum smi_action act;
	unsigned out = 0;

	if (n->off) {
		drop(f, p, "node is powered off", in);
		return;
	}
	if (!faulted && !apply_faults(f, in, p))
		return;
	if (mad_class(p->mad) == UMAD_CLASS_SUBN_DIRECTED_ROUTE &&
	    (p->dlid == LID_PERMISSIVE || port_owns_lid(port_mgmt(in), p->dlid))) {
		bool by_lid = p->dlid != LID_PERMISSIVE;

		act = smi_recv(p->mad, sw, in->num, n->nports, &out);
		switch (act) {
		case SMI_FORWARD:
			p->slid = p->dlid = LID_PERMISSIVE;
			transmit(f, &n->ports[out], p);
			return;
		case SMI_LOCAL:
			if (dr_d_bit(p->mad))
				deliver_up(f, in, p);
			else
				local_receive(f, in, p, by_lid);
			return;
		case SMI_LID_ROUTE:
			p->dlid = (uint16_t)out;
			p->slid = n->ports[0].lid;
			switch_route(f, n, in, p);
			return;
		default:
			drop(f, p, "directed route rules", in);
			return;
		}
	}
	if (sw) {
		switch_route(f, n, in, p);
		return;
	}
	if (port_owns_lid(in, p->dlid) || (p->data && verbs_lid_is_mcast(p->dlid))) {
		local_receive(f, in, p, true);
		return;
	}
	drop(f, p, "not our LID", in);
}

void fabric_drain(struct fabric *f)
{
	struct event *ev;

	if (f->draining)
		return;
	f->draining = true;
	while ((ev = g_queue_pop_head(&f->events))) {
		f->processed++;
		arrive(f, ev->port, &ev->pkt, ev->faulted);
		if (f->delayed)
			release_reordered(f, ev->port->node);
		event_free(ev);
	}
	f->draining = false;
}

void fabric_events_clear(struct fabric *f)
{
	struct event *ev;

	while ((ev = g_queue_pop_head(&f->events)))
		event_free(ev);
	while (f->delayed) {
		ev = f->delayed->data;
		if (f->tq)
			timerq_cancel(f->tq, &ev->timer);
		f->delayed = g_list_delete_link(f->delayed, f->delayed);
		event_free(ev);
	}
}

void fabric_send(struct fabric *f, struct port *port, const struct mad_pkt *pkt)
{
	struct node *n = port->node;
	struct mad_pkt p = *pkt;
	unsigned out = 0;

	p.hops_left = MAX_HOPS;
	if (n->off) {
		drop(f, &p, "sending node is powered off", port);
		return;
	}
	if (mad_class(p.mad) == UMAD_CLASS_SUBN_DIRECTED_ROUTE &&
	    dr_slid(p.mad) == LID_PERMISSIVE && !dr_d_bit(p.mad)) {
		switch (smi_send_request(p.mad, node_is_switch(n), port->num,
					 n->nports, &out)) {
		case SMI_FORWARD:
			p.slid = p.dlid = LID_PERMISSIVE;
			transmit(f, &n->ports[out], &p);
			break;
		case SMI_LOCAL:
			local_receive(f, port, &p, false);
			break;
		default:
			drop(f, &p, "directed route invalid at source", port);
		}
	} else if (mad_class(p.mad) == UMAD_CLASS_SUBN_DIRECTED_ROUTE &&
		   dr_d_bit(p.mad) && p.dlid == LID_PERMISSIVE) {
		/* A host agent (an SM) answering a DR request. */
		switch (smi_send_returning(p.mad, node_is_switch(n), port->num,
					   n->nports, &out)) {
		case SMI_FORWARD:
			transmit(f, &n->ports[out], &p);
			break;
		case SMI_LOCAL:
			deliver_up(f, port, &p);
			break;
		case SMI_LID_ROUTE:
			p.dlid = (uint16_t)out;
			p.slid = port_mgmt(port)->lid;
			lid_send(f, port, &p);
			break;
		default:
			drop(f, &p, "directed route response invalid at source", port);
		}
	} else {
		lid_send(f, port, &p);
	}
	fabric_drain(f);
}

/* ---- the direct path's view (fabric.h) ------------------------------------- */

void fabric_changed(struct fabric *f)
{
	if (f->verbs)
		f->verbs_ops->revoke(f->verbs);
}

void fabric_sync(struct fabric *f)
{
	if (f->verbs)
		f->verbs_ops->sync(f->verbs);
}

bool fabric_quiet(const struct fabric *f)
{
	return !f->faults.rules->len && !f->tap.fn && !f->delayed && !f->events.length;
}

const char *fabric_data_path(struct port *from, uint16_t dlid, uint16_t pkey, struct port **out,
			     unsigned max, unsigned *n, struct port **dest)
{
	struct port *at = from;
	const char *why;

	*n = 0;
	if (from->node->off || node_is_switch(from->node))
		return "not a powered CA port";
	if (verbs_lid_is_mcast(dlid))
		return "multicast";
	/* lid_send(): an HCA's loopback goes back in at the same port. */
	if (!port_owns_lid(from, dlid)) {
		for (;;) {
			struct node *sw;
			unsigned o;

			if (*n >= max || *n >= MAX_HOPS)
				return "hop limit";
			/* transmit()'s, and a powered node at the far end */
			if ((why = link_refuses(at, false)))
				return why;
			if (at->remote->node->off)
				return "node powered off";
			out[(*n)++] = at;
			at = at->remote;
			sw = at->node;
			if (!node_is_switch(sw))
				break;
			/* switch_route() */
			if (port_owns_lid(&sw->ports[0], dlid))
				return "data for a switch";
			o = dlid < sw->sw->lft_len ? sw->sw->lft[dlid] : 0xff;
			if (o == 0 || o > sw->nports)
				return "no LFT entry";
			at = &sw->ports[o];
		}
		if (!port_owns_lid(at, dlid))
			return "not our LID";
	}
	if (!port_pkey_accepts(at, pkey))
		return "P_Key not in the port's table";
	*dest = at;
	return NULL;
}
