/* SPDX-License-Identifier: MIT */
/*
 * ib_umad file semantics over the simulated fabric. Section numbers are
 * those of docs/umad.md; "kernel" means user_mad.c and mad.c.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "fabric/port.h"
#include "fabric/smi.h"
#include "kernel/agent.h"
#include "kernel/host.h"
#include "kernel/kfile.h"
#include "kernel/rmpp.h"
#include "kernel/umad.h"
#include "kernel/umad_abi.h"
#include "lib/log.h"

struct umad_host {
	struct host *hw;	/* the ports, the fabric, the clock (kernel/host.h) */
	GPtrArray *devs;	/* struct umad_dev *, index = N of umadN */
	GHashTable *by_port;	/* struct port * -> its struct umad_dev * */
	GHashTable *by_hi_tid;	/* hi_tid -> struct umad_agent * */
	uint32_t next_hi_tid;
	unsigned recv_max;	/* packets a file's receive queue holds */
	size_t recv_max_bytes;	/* and bytes */
	GQueue files;		/* struct umad_file *, open, for `ctl status` */
};

struct umad_dev {
	struct umad_host *host;
	struct port *port;
	unsigned index;
	const char *ca_name;	/* the host's (host.h) */
	struct agent_table *agents;
	bool sm_held;
	GQueue issm_waiters;	/* struct kfile_wait *: blocking issm opens */
};

struct umad_file {
	struct umad_dev *dev;
	struct umad_agent *agents[UMAD_MAX_AGENTS];
	bool use_pkey_index;
	bool already_used;
	GQueue recv;		/* struct queued_packet * */
	size_t recv_bytes;	/* data bytes queued, for UMAD_RECV_BYTES_MAX */
	size_t outside;		/* taken, not read yet (umad_set_outside) */
	bool said_full;		/* the limit was logged since the queue was empty */
	void (*wakeup)(void *);
	void *wakeup_ctx;
	void (*accepted)(void *);	/* umad_set_accepted */
	void *accepted_ctx;
	GList link;		/* in host->files */
	int client_pid;		/* who opened it, and through what */
	const char *path;
};

/* A packet waiting for read(): the header and the MAD, a reassembled
 * RMPP message, or the 24 bytes of an ETIMEDOUT report. */
struct queued_packet {
	struct umad_abi_hdr hdr;
	bool timeout;		/* an ETIMEDOUT report (docs/umad.md §4.5) */
	size_t len;		/* bytes of data[] */
	uint8_t data[];
};

static struct queued_packet *packet_new(size_t len)
{
	struct queued_packet *qp = g_malloc0(sizeof(*qp) + len);

	qp->len = len;
	return qp;
}

struct umad_send {
	struct umad_agent *agent;
	struct umad_abi_hdr hdr;	/* as the user wrote it */
	struct mad_pkt pkt;
	uint64_t tid;
	unsigned retries_left;
	struct timer timer;
};

/* ---- host and devices ---------------------------------------------- */

static enum upper_verdict dev_deliver(struct umad_dev *d, struct port *port,
				      const struct mad_pkt *pkt);

/* The host's client hook: a MAD for one of our ports. */
static enum upper_verdict host_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct umad_host *h = ctx;
	struct umad_dev *d = g_hash_table_lookup(h->by_port, port);

	return d ? dev_deliver(d, port, pkt) : UPPER_UNCLAIMED;
}

static const struct host_client umad_client = { .deliver = host_deliver };

struct umad_host *umad_host_new(struct host *hw)
{
	struct umad_host *h = g_new0(struct umad_host, 1);
	unsigned i;

	h->hw = hw;
	h->devs = g_ptr_array_new();
	h->by_port = g_hash_table_new(NULL, NULL);
	h->by_hi_tid = g_hash_table_new(NULL, NULL);
	h->next_hi_tid = 1;
	h->recv_max = UMAD_RECV_LIST_MAX;
	h->recv_max_bytes = UMAD_RECV_BYTES_MAX;
	/* A umad device for each port of the host: each CA port, or port 0
	 * of a switch (user_mad.c makes one per port of an ib_device). */
	for (i = 0; i < host_nports(hw); i++) {
		struct umad_dev *d = g_new0(struct umad_dev, 1);
		const char *ca;

		d->host = h;
		d->port = host_port(hw, i, &ca);
		d->index = i;
		d->ca_name = ca;	/* the host's: renamed in place */
		d->agents = agent_table_new();
		g_ptr_array_add(h->devs, d);
		g_hash_table_insert(h->by_port, d->port, d);
	}
	host_register_client(hw, &umad_client, h);
	return h;
}

void umad_host_set_recv_limits(struct umad_host *h, unsigned packets, size_t bytes)
{
	h->recv_max = packets;
	h->recv_max_bytes = bytes;
}

void umad_host_free(struct umad_host *h)
{
	unsigned i;

	if (!h)
		return;
	host_unregister_client(h->hw, &umad_client, h);
	for (i = 0; i < h->devs->len; i++) {
		struct umad_dev *d = g_ptr_array_index(h->devs, i);

		agent_table_free(d->agents);
		g_queue_clear(&d->issm_waiters);	/* at exit: none is answered */
		g_free(d);
	}
	g_ptr_array_free(h->devs, TRUE);
	g_hash_table_destroy(h->by_port);
	g_hash_table_destroy(h->by_hi_tid);
	g_free(h);
}

unsigned umad_host_ndevs(const struct umad_host *h) { return h->devs->len; }

struct umad_dev *umad_host_dev(struct umad_host *h, unsigned index)
{
	return index < h->devs->len ? g_ptr_array_index(h->devs, index) : NULL;
}

struct host *umad_host_hw(const struct umad_host *h) { return h->hw; }

unsigned umad_dev_index(const struct umad_dev *d) { return d->index; }
struct port *umad_dev_port(const struct umad_dev *d) { return d->port; }
const char *umad_dev_ca_name(const struct umad_dev *d) { return d->ca_name; }

/* ---- issm (docs/umad.md §7) ---------------------------------------- */

int umad_issm_open(struct umad_dev *d)
{
	if (d->sm_held)
		return -EAGAIN;
	d->sm_held = true;
	port_set_cap_bits(d->port, CAP_IS_SM, 0);
	return 0;
}

void umad_issm_close(struct umad_dev *d)
{
	struct kfile_wait *next;

	d->sm_held = false;
	port_set_cap_bits(d->port, 0, CAP_IS_SM);
	/* The first open waiting takes it, as the kernel's down() in
	 * ib_umad_sm_open wakes one sleeper, whichever transport it came by. */
	if ((next = g_queue_pop_head(&d->issm_waiters))) {
		umad_issm_open(d);
		next->done(next, 0, d);
	}
}

void umad_issm_wait(struct umad_dev *d, struct kfile_wait *w)
{
	g_queue_push_tail(&d->issm_waiters, w);
}

void umad_issm_unwait(struct umad_dev *d, struct kfile_wait *w)
{
	g_queue_remove(&d->issm_waiters, w);
}

bool umad_issm_held(const struct umad_dev *d) { return d->sm_held; }

/* ---- receive queue --------------------------------------------------- */

void umad_set_outside(struct umad_file *file, size_t bytes)
{
	file->outside = bytes;
}

/*
 * Past MAX_UMAD_RECV_LIST_SIZE packets the kernel drops received MADs
 * (user_mad.c queue_packet()); we also drop past UMAD_RECV_BYTES_MAX bytes
 * (those a front-end took ahead of its reader counted in: umad_set_outside),
 * so a flood of long RMPP messages to a file nobody reads stays bounded.
 * Send completions (timeouts) are never dropped. False: dropped.
 */
static bool queue_packet(struct umad_file *file, struct queued_packet *pkt)
{
	const struct umad_host *h = file->dev->host;

	if (!pkt->timeout && (g_queue_get_length(&file->recv) >= h->recv_max ||
			      file->recv_bytes + file->outside + pkt->len > h->recv_max_bytes)) {
		if (!file->said_full)
			g_message("umad%u: receive queue full (%u packets or %zu bytes unread): dropping what arrives, as the kernel does",
				  file->dev->index, h->recv_max, h->recv_max_bytes);
		file->said_full = true;
		g_free(pkt);
		return false;
	}
	file->recv_bytes += pkt->len;
	g_queue_push_tail(&file->recv, pkt);
	if (file->wakeup)
		file->wakeup(file->wakeup_ctx);
	return true;
}

static bool kernel_rmpp(const struct umad_agent *a)
{
	return a->rmpp_version && !(a->flags & UMAD_REG_USER_RMPP);
}


/* recv_handler(): the header a received MAD is read with (docs/umad.md §4.7). */
static bool deliver_packet(struct umad_agent *a, const struct mad_pkt *pkt,
			   const uint8_t *data, size_t len)
{
	struct umad_file *file = a->file;
	struct port *ip = port_mgmt(file->dev->port);
	struct queued_packet *up = packet_new(len);

	up->hdr.id = a->id;
	up->hdr.qpn = htobe32(pkt->sqp);
	up->hdr.lid = htobe16(pkt->slid);
	up->hdr.sl = pkt->sl;
	up->hdr.path_bits = (uint8_t)(pkt->dlid & ((1u << ip->lmc) - 1));
	up->hdr.grh_present = pkt->grh;
	if (pkt->grh)
		memcpy(up->hdr.gid, pkt->sgid, 16);
	up->hdr.pkey_index = (uint16_t)MAX(port_pkey_find(file->dev->port, pkt->pkey), 0);
	memcpy(up->data, data, len);
	return queue_packet(file, up);
}

/*
 * A user-RMPP agent sees the wire: every segment of a transfer with the
 * RMPP header the kernel's sender gave it (mad_rmpp.c send_next_seg).
 */
static bool deliver_segments(struct umad_agent *a, const struct mad_pkt *pkt)
{
	size_t i, segs = rmpp_segments(pkt->rmpp);
	bool all = true;

	for (i = 1; i <= segs; i++) {
		MAD_BUF(seg);

		rmpp_segment(pkt->rmpp, i, seg);
		all = deliver_packet(a, pkt, seg, MAD_SIZE) && all;
	}
	return all;
}

/*
 * A kernel-RMPP agent gets an RMPP transfer reassembled, hdr_len + D bytes
 * long (docs/umad.md §6.5); a user-RMPP agent its segments; any other agent the first
 * segment as a plain MAD, later ones being unmatched (docs/umad.md §6.7).
 */
static enum upper_verdict deliver_to_agent(struct umad_agent *a, const struct mad_pkt *pkt)
{
	bool ok;

	if (pkt->rmpp && kernel_rmpp(a))
		ok = deliver_packet(a, pkt, g_bytes_get_data(pkt->rmpp, NULL),
				    g_bytes_get_size(pkt->rmpp));
	else if (pkt->rmpp && (a->flags & UMAD_REG_USER_RMPP))
		ok = deliver_segments(a, pkt);
	else
		ok = deliver_packet(a, pkt, pkt->mad, MAD_SIZE);
	return ok ? UPPER_TAKEN : UPPER_DROPPED;
}

static void send_free(struct umad_send *s)
{
	timerq_cancel(host_tq(s->agent->file->dev->host->hw), &s->timer);
	g_queue_remove(&s->agent->sends, s);
	mad_pkt_release(&s->pkt);
	g_free(s);
}

/* A response arrived: find the send it answers, by hi_tid then TID+class. */
static enum upper_verdict deliver_response(struct umad_dev *d, const struct mad_pkt *pkt)
{
	uint64_t tid = mad_tid(pkt->mad);
	struct umad_agent *a = g_hash_table_lookup(d->host->by_hi_tid,
						   GUINT_TO_POINTER((guint)(tid >> 32)));
	GList *l;

	if (!a || a->file->dev != d) {
		g_debug("umad%u: unmatched response tid 0x%016" G_GINT64_MODIFIER "x dropped", d->index, tid);
		return UPPER_DROPPED;
	}
	for (l = a->sends.head; l; l = l->next) {
		struct umad_send *s = l->data;

		if (s->tid == tid && mad_class(s->pkt.mad) == mad_class(pkt->mad)) {
			send_free(s);
			return deliver_to_agent(a, pkt);
		}
	}
	g_debug("umad%u: response tid 0x%016" G_GINT64_MODIFIER "x matches no outstanding send", d->index, tid);
	return UPPER_DROPPED;	/* as the kernel drops unmatched responses */
}

static enum upper_verdict dev_deliver(struct umad_dev *d, struct port *port,
				      const struct mad_pkt *pkt)
{
	struct umad_agent *a;
	uint32_t oui = 0;

	(void)port;
	if (mad_is_response(pkt->mad))
		return deliver_response(d, pkt);
	if (mgmt_class_is_vendor2(mad_class(pkt->mad)))
		oui = (uint32_t)pkt->mad[37] << 16 | (uint32_t)pkt->mad[38] << 8 | pkt->mad[39];
	a = agent_table_find(d->agents, mad_class(pkt->mad),
			     mad_class_version(pkt->mad), mad_method(pkt->mad), oui);
	if (!a)
		return UPPER_UNCLAIMED;
	return deliver_to_agent(a, pkt);
}

/* ---- files ----------------------------------------------------------- */

struct umad_file *umad_open(struct umad_dev *d)
{
	struct umad_file *file = g_new0(struct umad_file, 1);

	file->dev = d;
	g_queue_init(&file->recv);
	file->link.data = file;
	file->path = "";
	g_queue_push_tail_link(&d->host->files, &file->link);
	return file;
}

void umad_set_accepted(struct umad_file *file, void (*fn)(void *), void *ctx)
{
	file->accepted = fn;
	file->accepted_ctx = ctx;
}

void umad_set_client(struct umad_file *file, int pid, const char *path)
{
	file->client_pid = pid;
	file->path = path;
}

void umad_host_foreach_file(struct umad_host *h, umad_file_fn fn, void *ctx)
{
	GList *l;

	for (l = h->files.head; l; l = l->next) {
		const struct umad_file *f = l->data;

		fn(ctx, f->dev->index, f->client_pid, f->path);
	}
}

void umad_set_wakeup(struct umad_file *file, void (*fn)(void *), void *ctx)
{
	file->wakeup = fn;
	file->wakeup_ctx = ctx;
}

unsigned umad_hdr_size(const struct umad_file *file)
{
	return file->use_pkey_index ? UMAD_HDR_SIZE : UMAD_HDR_SIZE_OLD;
}

static void agent_destroy(struct umad_file *file, unsigned id)
{
	struct umad_agent *a = file->agents[id];
	struct umad_send *s;

	/* Outstanding sends are flushed without telling the user (docs/umad.md §4.3). */
	while ((s = g_queue_peek_head(&a->sends)))
		send_free(s);
	agent_table_remove(file->dev->agents, a);
	g_hash_table_remove(file->dev->host->by_hi_tid, GUINT_TO_POINTER(a->hi_tid));
	file->agents[id] = NULL;
	g_free(a);
}

void umad_release(struct umad_file *file)
{
	unsigned i;

	for (i = 0; i < UMAD_MAX_AGENTS; i++)
		if (file->agents[i])
			agent_destroy(file, i);
	g_queue_clear_full(&file->recv, g_free);
	g_queue_unlink(&file->dev->host->files, &file->link);
	g_free(file);
}

bool umad_readable(const struct umad_file *file)
{
	return file->recv.length != 0;
}

size_t umad_next_len(const struct umad_file *file)
{
	const struct queued_packet *up = g_queue_peek_head((GQueue *)&file->recv);

	return up ? umad_hdr_size(file) + up->len : 0;
}

/* hi_tid: cyclic over [1, 2^24-1], as modern kernels' xa_alloc_cyclic. */
static uint32_t alloc_hi_tid(struct umad_host *h)
{
	while (g_hash_table_contains(h->by_hi_tid, GUINT_TO_POINTER(h->next_hi_tid)))
		h->next_hi_tid = h->next_hi_tid % 0xffffff + 1;
	return h->next_hi_tid++;
}

static int register_agent(struct umad_file *file, const struct agent_reg *r,
			  bool v2, uint32_t *id)
{
	struct umad_agent *a;
	unsigned slot;
	int ret;

	ret = agent_reg_validate(r, v2);
	if (ret)
		return ret;
	for (slot = 0; slot < UMAD_MAX_AGENTS && file->agents[slot]; slot++)
		;
	if (slot == UMAD_MAX_AGENTS) {
		g_message("umad%u: Max Agents (%u) reached", file->dev->index, UMAD_MAX_AGENTS);
		return -ENOMEM;
	}
	a = g_new0(struct umad_agent, 1);
	a->file = file;
	a->id = slot;
	a->qpn = (uint8_t)r->qpn;
	a->mgmt_class = r->mgmt_class;
	a->class_version = r->class_version;
	a->rmpp_version = r->rmpp_version;
	a->oui = r->oui;
	a->flags = r->flags;
	memcpy(a->method_mask, r->method_mask, 16);
	g_queue_init(&a->sends);
	ret = agent_table_add(file->dev->agents, a);
	if (ret) {
		g_free(a);
		return ret;
	}
	a->hi_tid = alloc_hi_tid(file->dev->host);
	g_hash_table_insert(file->dev->host->by_hi_tid, GUINT_TO_POINTER(a->hi_tid), a);
	file->agents[slot] = a;
	if (!v2 && !file->use_pkey_index && !file->already_used)
		g_message("umad%u: process did not enable P_Key index support", file->dev->index);
	if (v2)
		file->use_pkey_index = true;
	file->already_used = true;
	*id = slot;
	g_debug("umad%u: agent %u class 0x%02x v%u qpn %u rmpp %u hi_tid %u",
		file->dev->index, slot, a->mgmt_class, a->class_version, a->qpn,
		a->rmpp_version, a->hi_tid);
	return 0;
}

/* What both forms of ib_umad's registration request say alike (struct
 * ib_user_mad_reg_req and _reg_req2: the OUI and flags differ). */
#define REG_FIELDS(r, q) do {						\
		(r)->qpn = (q)->qpn;					\
		(r)->mgmt_class = (q)->mgmt_class;			\
		(r)->class_version = (q)->mgmt_class_version;		\
		(r)->rmpp_version = (q)->rmpp_version;			\
		_Static_assert(sizeof((q)->method_mask) == 16, "128 methods"); \
		memcpy((r)->method_mask, (q)->method_mask, 16);		\
	} while (0)

int umad_ioctl(struct umad_file *file, unsigned cmd, void *arg, size_t *out_len)
{
	struct agent_reg r = { 0 };
	uint32_t id = 0;
	int ret;

	*out_len = 0;
	switch (cmd) {
	case UMAD_IOC_REGISTER_AGENT: {
		struct umad_abi_reg_req *q = arg;

		REG_FIELDS(&r, q);
		r.oui = (uint32_t)q->oui[0] << 16 | (uint32_t)q->oui[1] << 8 | q->oui[2];
		ret = register_agent(file, &r, false, &id);
		if (!ret) {
			q->id = id;	/* the kernel writes back only the id */
			*out_len = sizeof(*q);
		}
		return ret;
	}
	case UMAD_IOC_REGISTER_AGENT2: {
		struct umad_abi_reg_req2 *q = arg;

		REG_FIELDS(&r, q);
		r.oui = q->oui;
		r.flags = q->flags;
		ret = register_agent(file, &r, true, &id);
		if (!ret) {
			q->id = id;
			*out_len = sizeof(*q);
		} else if (q->flags & ~UMAD_REG_FLAGS_CAP) {
			/* Unknown flags: the supported ones are written back. */
			q->flags = UMAD_REG_FLAGS_CAP;
			*out_len = sizeof(*q);
		}
		return ret;
	}
	case UMAD_IOC_UNREGISTER_AGENT:
		memcpy(&id, arg, sizeof(id));
		if (id >= UMAD_MAX_AGENTS || !file->agents[id])
			return -EINVAL;
		agent_destroy(file, id);
		return 0;
	case UMAD_IOC_ENABLE_PKEY:
		if (file->already_used)
			return -EINVAL;
		file->use_pkey_index = true;
		return 0;
	default:
		return -ENOTTY;
	}
}

/* The ETIMEDOUT report: the user's header and the 24-byte MAD header. */
static void send_timed_out(struct umad_send *s)
{
	struct umad_file *file = s->agent->file;
	struct queued_packet *up = packet_new(sizeof(struct umad_hdr));

	up->hdr = s->hdr;
	up->hdr.id = s->agent->id;
	up->hdr.status = ETIMEDOUT;
	up->timeout = true;
	memcpy(up->data, s->pkt.mad, up->len);
	send_free(s);
	(void)queue_packet(file, up);	/* completions are always queued */
}

static void send_timer(struct timer *t, void *ctx)
{
	struct umad_send *s = ctx;
	struct umad_dev *d = s->agent->file->dev;

	(void)t;
	if (!s->retries_left) {
		send_timed_out(s);
		return;
	}
	/* Resend with the same TID (docs/umad.md §4.5); the timer runs again first so a
	 * response delivered during fabric_send() finds the send armed. */
	s->retries_left--;
	timerq_arm(host_tq(d->host->hw), &s->timer, (uint64_t)s->hdr.timeout_ms * 1000);
	fabric_send(host_fabric(d->host->hw), d->port, &s->pkt);
}

static bool is_duplicate(struct umad_file *file, uint64_t tid, uint8_t mgmt_class)
{
	unsigned i;

	for (i = 0; i < UMAD_MAX_AGENTS; i++) {
		struct umad_agent *a = file->agents[i];
		GList *l;

		if (!a)
			continue;
		for (l = a->sends.head; l; l = l->next) {
			struct umad_send *s = l->data;

			if (s->tid == tid && mad_class(s->pkt.mad) == mgmt_class)
				return true;
		}
	}
	return false;
}

/* The kernel puts the agent's hi_tid in the upper TID bits of requests. */
static void set_hi_tid(struct mad_pkt *pkt, uint32_t hi_tid)
{
	uint64_t tid = (uint64_t)hi_tid << 32 | (mad_tid(pkt->mad) & 0xffffffffu);

	mad_set_tid(pkt->mad, tid);
	if (pkt->rmpp) {
		/* The whole message carries the same header. */
		gsize len;
		uint8_t *m = g_bytes_unref_to_data(pkt->rmpp, &len);

		mad_set_tid(m, tid);
		pkt->rmpp = g_bytes_new_take(m, len);
	}
}

/* Source checks of a DR SMP (handle_outgoing_dr_smp); false = EINVAL. */
static bool dr_send_valid(struct umad_file *file, const uint8_t *mad)
{
	struct port *p = file->dev->port;
	MAD_BUF(copy);
	unsigned out;

	if (dr_hop_cnt(mad) >= UMAD_SMP_MAX_HOPS)
		return false;
	if (!dr_d_bit(mad) && dr_slid(mad) != LID_PERMISSIVE)
		return true;	/* LID-routed first part: no source check */
	memcpy(copy, mad, MAD_SIZE);
	if (dr_d_bit(mad))
		return smi_send_returning(copy, node_is_switch(p->node), p->num,
					  p->node->nports, &out) != SMI_DISCARD;
	return smi_send_request(copy, node_is_switch(p->node), p->num,
				p->node->nports, &out) != SMI_DISCARD;
}

/* The per-MAD trace line (docs/architecture.md "Layers"): what, to where, how long. */
static void trace_send(struct umad_dev *d, struct umad_agent *a,
		       const struct mad_pkt *pkt, const struct umad_abi_hdr *hdr)
{
	GString *to = g_string_new(NULL);
	unsigned h;

	if (mad_class(pkt->mad) == UMAD_CLASS_SUBN_DIRECTED_ROUTE) {
		g_string_append(to, "DR path 0");
		for (h = 1; h <= dr_hop_cnt(pkt->mad) && h < UMAD_SMP_MAX_HOPS; h++)
			g_string_append_printf(to, ",%u", dr_initial_path((uint8_t *)pkt->mad)[h]);
	} else {
		g_string_append_printf(to, "dlid 0x%x qp %u", pkt->dlid, pkt->dqp);
	}
	g_debug("umad%u: send agent %u class 0x%02x method 0x%02x attr 0x%04x mod 0x%x tid 0x%016" G_GINT64_MODIFIER "x %s timeout %u retries %u",
		d->index, a->id, mad_class(pkt->mad), mad_method(pkt->mad),
		mad_attr_id(pkt->mad), mad_attr_mod(pkt->mad), mad_tid(pkt->mad),
		to->str, hdr->timeout_ms, hdr->retries);
	g_string_free(to, TRUE);
}

int umad_check_write_size(const struct umad_file *file, size_t count)
{
	if (count <= UMAD_MAX_WRITE)
		return 0;
	g_message("umad%u: a write of %zu bytes is over the limit of %u (ENOMEM)",
		  file->dev->index, count, UMAD_MAX_WRITE);
	return -ENOMEM;
}

ssize_t umad_write(struct umad_file *file, const void *buf, size_t count)
{
	unsigned hsz = umad_hdr_size(file);
	struct umad_abi_hdr hdr = { 0 };
	struct umad_dev *d = file->dev;
	struct port *p = d->port, *ip = port_mgmt(p);
	struct umad_agent *a;
	struct umad_send *s;
	struct mad_pkt pkt = { 0 };
	const uint8_t *mad;
	size_t data_len, hdr_len;
	GBytes *rmpp = NULL;
	bool response, rmpp_class;

	if (count < hsz + RMPP_HDR_END)
		return -EINVAL;
	if (umad_check_write_size(file, count) < 0)
		return -ENOMEM;
	memcpy(&hdr, buf, hsz);
	if (hdr.id >= UMAD_MAX_AGENTS)
		return -EINVAL;
	a = file->agents[hdr.id];
	if (!a)
		return -EIO;	/* modern kernels (6.1): EIO */
	mad = (const uint8_t *)buf + hsz;
	data_len = count - hsz;
	hdr_len = rmpp_class_hdr_len(mad_class(mad));
	if (data_len < hdr_len)
		return -EINVAL;
	rmpp_class = mgmt_class_is_rmpp(mad_class(mad)) && kernel_rmpp(a);
	/* ib_create_send_mad() sizing rules (docs/umad.md §4.4 step 6). */
	/* An RMPP-active send: the kernel writes the RMPP header (docs/umad.md §6.4). */
	if (rmpp_class && rmpp_is_active(mad))
		rmpp = rmpp_message(mad, data_len, hdr_len);
	else if (data_len > MAD_SIZE)
		return -EINVAL;
	if (mad_class(mad) == UMAD_CLASS_SUBN_DIRECTED_ROUTE && !dr_send_valid(file, mad))
		return -EINVAL;

	if (rmpp) {
		memcpy(pkt.mad, g_bytes_get_data(rmpp, NULL), MIN(data_len, MAD_SIZE));
		pkt.rmpp = rmpp;
	} else {
		memcpy(pkt.mad, mad, data_len);	/* short writes are zero-padded */
		if (rmpp_class)
			rmpp_clear_hdr(pkt.mad);	/* the header goes out zeroed */
	}
	response = mad_is_response(pkt.mad);
	if (!response)
		set_hi_tid(&pkt, a->hi_tid);
	if (!response && is_duplicate(file, mad_tid(pkt.mad), mad_class(pkt.mad))) {
		mad_pkt_release(&pkt);
		return -EINVAL;
	}

	pkt.dlid = be16toh(hdr.lid);
	pkt.dqp = be32toh(hdr.qpn);
	pkt.qkey = be32toh(hdr.qkey);
	pkt.sl = hdr.sl;
	pkt.slid = pkt.dlid == LID_PERMISSIVE ? LID_PERMISSIVE :
		   (uint16_t)(ip->lid | (hdr.path_bits & ((1u << ip->lmc) - 1)));
	pkt.pkey = p->pkeys[file->use_pkey_index && hdr.pkey_index < p->npkeys ?
			    hdr.pkey_index : 0];
	pkt.grh = hdr.grh_present;
	if (pkt.grh) {
		/* The source GID is the port's GID 0: prefix and port GUID. */
		uint64_t pfx = htobe64(ip->gid_prefix), guid = htobe64(p->guid);

		memcpy(pkt.dgid, hdr.gid, 16);
		memcpy(pkt.sgid, &pfx, 8);
		memcpy(pkt.sgid + 8, &guid, 8);
	}
	pkt.sqp = mad_is_smp(pkt.mad) ? 0 : 1;

	if (log_tracing())
		trace_send(d, a, &pkt, &hdr);

	if (!response && hdr.timeout_ms) {
		s = g_new0(struct umad_send, 1);
		s->agent = a;
		s->hdr = hdr;
		mad_pkt_copy(&s->pkt, &pkt);
		s->tid = mad_tid(pkt.mad);
		s->retries_left = hdr.retries;
		timer_init(&s->timer, send_timer, s);
		g_queue_push_tail(&a->sends, s);
		timerq_arm(host_tq(d->host->hw), &s->timer, (uint64_t)hdr.timeout_ms * 1000);
	}
	if (file->accepted)	/* the write has succeeded: its caller may go on */
		file->accepted(file->accepted_ctx);
	fabric_send(host_fabric(d->host->hw), p, &pkt);
	mad_pkt_release(&pkt);
	return (ssize_t)count;
}

ssize_t umad_read(struct umad_file *file, void *buf, size_t count)
{
	unsigned hsz = umad_hdr_size(file);
	struct queued_packet *up;
	size_t need;

	if (count < hsz)
		return -EINVAL;
	up = g_queue_peek_head(&file->recv);
	if (!up)
		return -EAGAIN;
	need = hsz + up->len;
	if (!up->timeout)
		up->hdr.length = (uint32_t)need;
	if (count < need) {
		/* The packet stays at the head (docs/umad.md §4.8). */
		if (up->len <= MAD_SIZE || count < hsz + MAD_SIZE)
			return -EINVAL;
		/* A long RMPP message: header and first segment, then ENOSPC;
		 * hdr.length tells the caller what it needs. */
		memcpy(buf, &up->hdr, hsz);
		memcpy((uint8_t *)buf + hsz, up->data, MAD_SIZE);
		return -ENOSPC;
	}
	g_queue_pop_head(&file->recv);
	file->recv_bytes -= up->len;
	if (!file->recv.length)
		file->said_full = false;
	memcpy(buf, &up->hdr, hsz);
	memcpy((uint8_t *)buf + hsz, up->data, up->len);
	g_free(up);
	return (ssize_t)need;
}
