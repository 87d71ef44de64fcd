/* SPDX-License-Identifier: MIT */
/*
 * The rdma_cm device's files (the kernel's drivers/infiniband/core/ucma.c):
 * ids by handle, the commands of <rdma/rdma_user_cm.h> through one table,
 * and each file's event queue. What a command does to a connection is
 * kernel/cma.c's (docs/rdmacm.md).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <infiniband/verbs.h>

#include "abi/ucma_wire.h"
#include "kernel/cma_priv.h"
#include "lib/log.h"

struct ucma_file {
	struct ucma *u;
	uint64_t token;
	GHashTable *ids;	/* handle -> struct cma_id *, owned */
	GQueue events;		/* struct cma_event * */
	bool said_full;
	void (*wakeup)(void *);
	void *wakeup_ctx;
};

struct cma_event {
	struct cma_id *id;
	struct cma_mc *mc;	/* a multicast join's event; else NULL */
	struct rdma_ucm_event_resp resp;
};

static enum upper_verdict ucma_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	return cma_deliver(ctx, port, pkt);
}

static void ucma_changed(void *ctx, struct port *port, unsigned what)
{
	cma_mc_port_changed(ctx, port, what);
}

static const struct host_client ucma_client = { .deliver = ucma_deliver, .changed = ucma_changed };

struct ucma *ucma_new(struct host *h)
{
	struct ucma *u = g_new0(struct ucma, 1);

	u->hw = h;
	u->files = g_hash_table_new(g_int64_hash, g_int64_equal);
	cma_init(u);
	host_register_client(h, &ucma_client, u);
	return u;
}

void ucma_free(struct ucma *u)
{
	if (!u)
		return;
	host_unregister_client(u->hw, &ucma_client, u);
	cma_fini(u);
	g_hash_table_destroy(u->files);
	g_free(u);
}

/* ---- ids ------------------------------------------------------------ */

static void free_id(void *data)
{
	struct cma_id *id = data;

	cma_destroy(id);
	g_free(id);
}

static const struct cma_handler ucma_handler;

static struct cma_id *alloc_id(struct ucma_file *f)
{
	struct cma_id *id;

	if (g_hash_table_size(f->ids) >= UCMA_IDS_MAX)
		return NULL;
	id = g_new0(struct cma_id, 1);
	id->handler = &ucma_handler;
	id->file = f;
	id->u = f->u;
	/* 2^32 handles: a file that makes one a microsecond wraps in an
	 * hour, and then skips the ones still held here. */
	do
		id->id = f->u->next_id++;
	while (g_hash_table_contains(f->ids, GUINT_TO_POINTER(id->id)));
	g_hash_table_insert(f->ids, GUINT_TO_POINTER(id->id), id);
	return id;
}

/* Events of @id that are still queued go with it (ucma_cleanup_ctx_events),
 * or only those of its multicast join @mc (ucma_cleanup_mc_events). */
static void drop_events(struct cma_id *id, const struct cma_mc *mc)
{
	GList *l = id->file->events.head;

	while (l) {
		GList *next = l->next;
		struct cma_event *e = l->data;

		if (e->id == id && (!mc || e->mc == mc)) {
			g_queue_delete_link(&id->file->events, l);
			g_free(e);
		}
		l = next;
	}
}

static void destroy_id(struct cma_id *id);

/* A connection request's id whose event was never read goes with its
 * listener, as the kernel's ucma_cleanup_ctx_events destroys them. */
static void drop_requests_of(struct cma_id *listener)
{
	GList *l = listener->file->events.head;

	while (l) {
		GList *next = l->next;
		struct cma_event *e = l->data;

		if (e->resp.event == UCMA_EV_CONNECT_REQUEST && e->id->listener == listener)
			destroy_id(e->id);
		l = next;
	}
}

/* A multicast join goes: its events with it. */
static void free_mc(struct cma_mc *mc)
{
	drop_events(mc->id, mc);
	cma_mc_leave(mc);
	g_hash_table_remove(mc->id->u->mcs, GUINT_TO_POINTER(mc->handle));
	mc->id->mcs = g_list_remove(mc->id->mcs, mc);
	g_free(mc);
}

/* Every join of @id goes (cma_leave_mc_groups). */
static void free_mcs(struct cma_id *id)
{
	while (id->mcs)
		free_mc(id->mcs->data);
}

static void destroy_id(struct cma_id *id)
{
	GHashTableIter it;
	void *v;

	if (id->state == CMA_LISTEN) {
		drop_requests_of(id);
		g_hash_table_iter_init(&it, id->file->ids);
		while (g_hash_table_iter_next(&it, NULL, &v))
			if (((struct cma_id *)v)->listener == id)
				((struct cma_id *)v)->listener = NULL;
	}
	drop_events(id, NULL);
	g_hash_table_remove(id->file->ids, GUINT_TO_POINTER(id->id));
}

static struct cma_id *new_conn_id(struct cma_id *listener)
{
	struct cma_id *id = alloc_id(listener->file);

	if (!id)
		return NULL;
	id->ps = listener->ps;
	id->qp_type = listener->qp_type;
	id->listener = listener;
	return id;
}

/* ---- events --------------------------------------------------------- */

/* The event is whole before it is queued: the wake-up may hand it to a
 * waiting reader at once. */
static bool queue_event(struct cma_id *id, struct cma_mc *mc, uint32_t event, int status,
			const struct rdma_ucm_event_resp *param)
{
	struct ucma_file *f = id->file;
	struct cma_event *e;

	if (f->events.length >= UCMA_EVENTS_MAX) {
		if (!f->said_full)
			g_warning("rdma_cm: a file holds %u unread events: new ones are dropped",
				  UCMA_EVENTS_MAX);
		f->said_full = true;
		return false;
	}
	e = g_new0(struct cma_event, 1);
	if (param)
		e->resp = *param;
	e->id = id;
	e->mc = mc;
	e->resp.event = event;
	e->resp.status = (uint32_t)status;
	e->resp.id = id->id;
	/* A request names the listener's uid: the new id has none yet. A
	 * multicast event names its join (ucma_event_handler). */
	e->resp.uid = event == UCMA_EV_CONNECT_REQUEST && id->listener ?
		      id->listener->uid : id->uid;
	if (mc) {
		e->resp.id = mc->handle;
		e->resp.uid = mc->uid;
	}
	g_queue_push_tail(&f->events, e);
	if (f->wakeup)
		f->wakeup(f->wakeup_ctx);
	return true;
}

/* How the connection manager reaches us (kernel/cma_priv.h), as the
 * kernel's ucma_event_handler. */
static const struct cma_handler ucma_handler = {
	.event = queue_event,
	.new_conn_id = new_conn_id,
	.drop_id = destroy_id,
	.free_mcs = free_mcs,
};

void ucma_foreach_listener(struct ucma *u, ucma_listener_fn fn, void *ctx)
{
	GList *l;

	for (l = g_list_last(u->listeners); l; l = l->prev) {
		const struct cma_id *o = l->data;
		char addr[INET6_ADDRSTRLEN] = "?";

		if (o->src.ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)&o->src)->sin_addr, addr,
				  sizeof(addr));
		else if (o->src.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&o->src)->sin6_addr, addr,
				  sizeof(addr));
		else if (o->src.ss_family == AF_IB)
			g_strlcpy(addr, "ib", sizeof(addr));
		fn(ctx, addr, sa_port(&o->src), o->ps == RDMA_PS_TCP ? "tcp" :
			o->ps == RDMA_PS_UDP ? "udp" : o->ps == RDMA_PS_IB ? "ib" : "ipoib");
	}
}

bool ucma_readable(const struct ucma_file *f)
{
	return f->events.length > 0;
}

ssize_t ucma_read_event(struct ucma_file *f, void *buf, size_t count)
{
	struct cma_event *e;

	if (count < sizeof(e->resp))
		return -EINVAL;
	e = g_queue_pop_head(&f->events);
	if (!e)
		return -EAGAIN;
	memcpy(buf, &e->resp, sizeof(e->resp));
	/* A request counts as the listener's (ucma_connect_event_handler),
	 * a multicast event as its join's. */
	if (e->mc)
		e->mc->events_reported++;
	else if (e->resp.event == UCMA_EV_CONNECT_REQUEST && e->id->listener)
		e->id->listener->events_reported++;
	else
		e->id->events_reported++;
	g_free(e);
	f->said_full = false;
	return sizeof(e->resp);
}

void ucma_set_wakeup(struct ucma_file *f, void (*fn)(void *), void *ctx)
{
	f->wakeup = fn;
	f->wakeup_ctx = ctx;
}

/* ---- the file ------------------------------------------------------- */

/*
 * A file's token: what MIGRATE_ID names it by, where the kernel takes an
 * fd of the caller's (ucma_migrate_id's fdget). Only a holder of the file
 * learns it (UCMA_IOC_TOKEN on it), and 64 random bits cannot be guessed:
 * knowing it is holding the file. Unique, never 0.
 */
static uint64_t new_token(const struct ucma *u)
{
	uint64_t t = 0;

	while (!t || g_hash_table_contains(u->files, &t))
		if (getrandom(&t, sizeof(t), 0) != sizeof(t) && errno != EINTR)
			g_error("rdma_cm: no random numbers for a file's token: %s",
				g_strerror(errno));
	return t;
}

struct ucma_file *ucma_open(struct ucma *u)
{
	struct ucma_file *f = g_new0(struct ucma_file, 1);

	f->u = u;
	f->token = new_token(u);
	g_hash_table_insert(u->files, &f->token, f);
	f->ids = g_hash_table_new_full(NULL, NULL, NULL, free_id);
	g_queue_init(&f->events);
	return f;
}

void ucma_release(struct ucma_file *f)
{
	GHashTableIter it;
	void *v;

	/* Every id goes (each tells its peer); none outlives another here. */
	g_hash_table_iter_init(&it, f->ids);
	while (g_hash_table_iter_next(&it, NULL, &v))
		((struct cma_id *)v)->listener = NULL;
	g_queue_clear_full(&f->events, g_free);
	g_hash_table_destroy(f->ids);
	g_hash_table_remove(f->u->files, &f->token);
	g_free(f);
}

/* ---- commands ------------------------------------------------------- */

struct cmd_ctx {
	struct ucma_file *f;
	uint64_t from_token;	/* MIGRATE_ID's other file */
	const uint8_t *optval;	/* SET_OPTION's value, or NULL */
	size_t optlen;
	const uint8_t *in;	/* the body */
	size_t in_len;		/* as the header says, checked against what came */
	size_t out_len;		/* room at the response pointer */
	struct ucma_answer *a;
};

/* The kernel's ucma_get_ctx(): an id of this file, or NULL (-ENOENT). */
static struct cma_id *get_id(struct cmd_ctx *c, uint32_t handle)
{
	return g_hash_table_lookup(c->f->ids, GUINT_TO_POINTER(handle));
}

/* copy_to_user(response, @data, min(out, @len)). */
static void respond(struct cmd_ctx *c, uint64_t addr, const void *data, size_t len)
{
	size_t n = MIN(MIN(len, c->out_len), sizeof(c->a->resp));

	c->a->resp_addr = addr;
	c->a->resp_len = n;
	memcpy(c->a->resp, data, n);
}

#define BODY(c, type, var)	type var; memcpy(&var, (c)->in, sizeof(var))

static int cmd_create_id(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_create_id, cmd);
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct cma_id *id;

	/* ucma_get_qp_type(): the port space names the QP type. */
	switch (cmd.ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		if (cmd.ps == RDMA_PS_IB && cmd.qp_type == IBV_QPT_UD)
			break;
		if (cmd.qp_type != IBV_QPT_RC && cmd.qp_type != IBV_QPT_UC &&
		    cmd.qp_type != IBV_QPT_XRC_SEND && cmd.qp_type != IBV_QPT_XRC_RECV)
			return -EINVAL;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		if (cmd.qp_type != IBV_QPT_UD)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!(id = alloc_id(c->f)))
		return -ENOMEM;
	id->uid = cmd.uid;
	id->ps = cmd.ps;
	id->qp_type = cmd.qp_type;
	resp.id = id->id;
	respond(c, cmd.response, &resp, sizeof(resp));
	return 0;
}

static int cmd_destroy_id(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_destroy_id, cmd);
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	resp.events_reported = id->events_reported;
	destroy_id(id);
	respond(c, cmd.response, &resp, sizeof(resp));
	return 0;
}

static int cmd_bind_ip(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_bind_ip, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	return cma_bind(id, (const struct sockaddr *)&cmd.addr, sizeof(cmd.addr));
}

static int cmd_bind(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_bind, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (cmd.reserved || cmd.addr_size == 0 || cmd.addr_size > sizeof(cmd.addr))
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return cma_bind(id, (const struct sockaddr *)&cmd.addr, cmd.addr_size);
}

static int cmd_resolve_ip(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_resolve_ip, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	return cma_resolve_addr(id, (const struct sockaddr *)&cmd.src_addr, sizeof(cmd.src_addr),
				(const struct sockaddr *)&cmd.dst_addr, sizeof(cmd.dst_addr),
				cmd.timeout_ms);
}

static int cmd_resolve_addr(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_resolve_addr, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (cmd.reserved || (cmd.src_size && cmd.src_size > sizeof(cmd.src_addr)) ||
	    !cmd.dst_size || cmd.dst_size > sizeof(cmd.dst_addr))
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return cma_resolve_addr(id, (const struct sockaddr *)&cmd.src_addr, cmd.src_size,
				(const struct sockaddr *)&cmd.dst_addr, cmd.dst_size,
				cmd.timeout_ms);
}

static int cmd_resolve_route(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_resolve_route, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	return cma_resolve_route(id, cmd.timeout_ms);
}

static size_t sockaddr_size(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

/* The path as the kernel's ib_sa_pack_path() writes a PathRecord. */
static void pack_path(const struct cma_id *id, struct ibv_path_record *pr)
{
	const struct cma_path *p = &id->path;

	memset(pr, 0, sizeof(*pr));
	memcpy(&pr->dgid, p->dgid, 16);
	memcpy(&pr->sgid, p->sgid, 16);
	pr->dlid = htobe16(p->dlid);
	pr->slid = htobe16(p->slid);
	pr->flowlabel_hoplimit = htobe32(0);
	pr->tclass = id->tos;
	pr->reversible_numpath = 0x80 | 1;
	pr->pkey = htobe16(p->pkey);
	pr->qosclass_sl = htobe16(p->sl & 0xf);
	pr->mtu = 0x80 | p->mtu;	/* selector 2: exactly */
	pr->rate = 0x80 | p->rate;
	pr->packetlifetime = 0x80 | p->packet_life;
}

static void user_path(const struct cma_id *id, struct ib_user_path_rec *r)
{
	const struct cma_path *p = &id->path;

	memset(r, 0, sizeof(*r));
	memcpy(r->dgid, p->dgid, 16);
	memcpy(r->sgid, p->sgid, 16);
	r->dlid = htobe16(p->dlid);
	r->slid = htobe16(p->slid);
	r->reversible = 1;
	r->mtu = p->mtu;
	r->pkey = htobe16(p->pkey);
	r->hop_limit = 0;
	r->traffic_class = id->tos;
	r->numb_path = 1;
	r->sl = p->sl;
	r->mtu_selector = 2;
	r->rate_selector = 2;
	r->rate = p->rate;
	r->packet_life_time_selector = 2;
	r->packet_life_time = p->packet_life;
}

static void put_ib_addr(struct sockaddr_storage *ss, const uint8_t gid[16], uint16_t pkey)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;

	memset(ss, 0, sizeof(*ss));
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(pkey);
	memcpy(&sib->sib_addr, gid, 16);
}

static int cmd_query(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_query, cmd);
	struct cma_id *id = get_id(c, cmd.id);
	uint8_t sgid[16] = { 0 };

	if (!id)
		return -ENOENT;
	if (id->port)
		cma_port_gid(id->port, sgid);
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
	case RDMA_USER_CM_QUERY_GID: {
		struct rdma_ucm_query_addr_resp r = { 0 };

		if (id->port) {
			r.node_guid = htobe64(id->port->node->guid);
			r.port_num = id->port->num;
			r.pkey = htobe16(id->has_path ? id->path.pkey : id->port->pkeys[0]);
			r.ibdev_index = 0xffffffffu;
		}
		if (cmd.option == RDMA_USER_CM_QUERY_ADDR) {
			r.src_size = (uint16_t)sockaddr_size(&id->src);
			r.dst_size = (uint16_t)sockaddr_size(&id->dst);
			memcpy(&r.src_addr, &id->src, sizeof(r.src_addr));
			memcpy(&r.dst_addr, &id->dst, sizeof(r.dst_addr));
		} else {
			uint8_t dgid[16] = { 0 };

			if (id->has_path)
				memcpy(dgid, id->path.dgid, 16);
			else if (id->remote)
				cma_port_gid(id->remote, dgid);
			put_ib_addr((struct sockaddr_storage *)&r.src_addr, sgid, be16toh(r.pkey));
			put_ib_addr((struct sockaddr_storage *)&r.dst_addr, dgid, be16toh(r.pkey));
			r.src_size = r.dst_size = sizeof(struct sockaddr_ib);
		}
		respond(c, cmd.response, &r, sizeof(r));
		return 0;
	}
	case RDMA_USER_CM_QUERY_PATH: {
		uint8_t buf[sizeof(struct rdma_ucm_query_path_resp) + sizeof(struct ib_path_rec_data)];
		struct rdma_ucm_query_path_resp *r = (void *)buf;

		memset(buf, 0, sizeof(buf));
		if (id->has_path) {
			/* ib_path: GMP, primary, bidirectional (ucma_query_path). */
			r->num_paths = 1;
			r->path_data[0].flags = 1 | 2 | 8 | 32;
			pack_path(id, (struct ibv_path_record *)r->path_data[0].path_rec);
		}
		respond(c, cmd.response, buf, sizeof(*r) + r->num_paths * sizeof(r->path_data[0]));
		return 0;
	}
	default:
		return -ENOSYS;
	}
}

static int cmd_query_route(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_query, cmd);
	struct cma_id *id = get_id(c, cmd.id);
	struct rdma_ucm_query_route_resp r = { 0 };

	if (!id)
		return -ENOENT;
	memcpy(&r.src_addr, &id->src, MIN(sizeof(r.src_addr), sizeof(id->src)));
	memcpy(&r.dst_addr, &id->dst, MIN(sizeof(r.dst_addr), sizeof(id->dst)));
	if (id->port) {
		r.node_guid = htobe64(id->port->node->guid);
		r.port_num = id->port->num;
		r.ibdev_index = 0xffffffffu;
		if (id->has_path) {
			r.num_paths = 1;
			user_path(id, &r.ib_route[0]);
		} else {
			/* The GIDs and P_Key alone (ucma_copy_ib_route). */
			cma_port_gid(id->port, r.ib_route[0].sgid);
			if (id->remote)
				cma_port_gid(id->remote, r.ib_route[0].dgid);
			r.ib_route[0].pkey = htobe16(id->port->pkeys[0]);
		}
	}
	respond(c, cmd.response, &r, sizeof(r));
	return 0;
}

static int cmd_connect(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_connect, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!cmd.conn_param.valid)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	return cma_connect(id, &cmd.conn_param);
}

static int cmd_listen(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_listen, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	/* ucma_listen(): a backlog out of range is the largest. */
	return cma_listen(id, cmd.backlog && cmd.backlog <= UCMA_BACKLOG_MAX ?
			      cmd.backlog : UCMA_BACKLOG_MAX);
}

static int cmd_accept(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_accept, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	if (cmd.conn_param.valid) {
		id->uid = cmd.uid;
		return cma_accept(id, &cmd.conn_param, true);
	}
	/* Without parameters: the active side's RTU (librdmacm's
	 * ucma_process_conn_resp), or an accept with none. */
	return cma_accept(id, NULL, false);
}

static int cmd_reject(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_reject, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	return cma_reject(id, cmd.private_data, cmd.private_data_len, cmd.reason);
}

static int cmd_disconnect(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_disconnect, cmd);
	struct cma_id *id = get_id(c, cmd.id);

	if (!id)
		return -ENOENT;
	return cma_disconnect(id);
}

static int cmd_init_qp_attr(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_init_qp_attr, cmd);
	struct cma_id *id = get_id(c, cmd.id);
	struct ib_uverbs_qp_attr a = { 0 };
	int r;

	if (!id)
		return -ENOENT;
	a.qp_state = cmd.qp_state;
	if ((r = cma_init_qp_attr(id, cmd.qp_state, &a)) < 0)
		return r;
	respond(c, cmd.response, &a, sizeof(a));
	return 0;
}

/* ucma_set_option(): the value must be the option's size (EINVAL), and
 * come with the command (EFAULT: the front-end could not read it). */
static int cmd_set_option(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_set_option, cmd);
	struct cma_id *id = get_id(c, cmd.id);
	int v;

	if (!id)
		return -ENOENT;
	if (!c->optval || c->optlen != cmd.optlen)
		return -EFAULT;
	switch (cmd.level) {
	case RDMA_OPTION_ID:
		switch (cmd.optname) {
		case RDMA_OPTION_ID_TOS:
			if (cmd.optlen != 1)
				return -EINVAL;
			id->tos = c->optval[0];
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
		case RDMA_OPTION_ID_AFONLY:
			if (cmd.optlen != sizeof(int))
				return -EINVAL;
			/* rdma_set_reuseaddr/afonly: before bind only. */
			if (id->state != CMA_IDLE)
				return -EINVAL;
			memcpy(&v, c->optval, sizeof(v));
			if (cmd.optname == RDMA_OPTION_ID_REUSEADDR)
				id->reuseaddr = v != 0;
			else
				id->afonly = v != 0;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (cmd.optlen != 1)
				return -EINVAL;
			id->ack_timeout = MIN(c->optval[0], 31);
			return 0;
		}
		return -ENOSYS;
	case RDMA_OPTION_IB:
		if (cmd.optname != RDMA_OPTION_IB_PATH)
			return -ENOSYS;
		if (!cmd.optlen || cmd.optlen % sizeof(struct ib_path_rec_data))
			return -EINVAL;
		return cma_set_ib_path(id, (const struct ib_path_rec_data *)c->optval,
				       cmd.optlen / sizeof(struct ib_path_rec_data));
	default:
		return -ENOSYS;
	}
}

static int cmd_notify(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_notify, cmd);

	return get_id(c, cmd.id) ? 0 : -ENOENT;
}

/* ucma_migrate_id(): the id, and its unread events, move to this file. */
static int cmd_migrate_id(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_migrate_id, cmd);
	struct rdma_ucm_migrate_resp resp = { 0 };
	struct ucma_file *from = g_hash_table_lookup(c->f->u->files, &c->from_token);
	struct cma_id *id;
	GList *l;

	if (!from)
		return -EINVAL;	/* not an rdma_cm file */
	id = g_hash_table_lookup(from->ids, GUINT_TO_POINTER(cmd.id));
	if (!id)
		return -ENOENT;
	if (from != c->f) {
		if (g_hash_table_size(c->f->ids) >= UCMA_IDS_MAX)
			return -ENOMEM;
		g_hash_table_steal(from->ids, GUINT_TO_POINTER(id->id));
		g_hash_table_insert(c->f->ids, GUINT_TO_POINTER(id->id), id);
		id->file = c->f;
		for (l = from->events.head; l;) {
			GList *next = l->next;

			if (((struct cma_event *)l->data)->id == id) {
				g_queue_push_tail(&c->f->events, l->data);
				g_queue_delete_link(&from->events, l);
			}
			l = next;
		}
		if (c->f->events.length && c->f->wakeup)
			c->f->wakeup(c->f->wakeup_ctx);
	}
	resp.events_reported = id->events_reported;
	respond(c, cmd.response, &resp, sizeof(resp));
	return 0;
}

/*
 * ucma_process_join(): the address must be as long as its family's
 * (EINVAL), the flags a full or a send-only full member; the join gets a
 * handle of its own, which LEAVE_MCAST and its events name.
 */
static int join(struct cmd_ctx *c, uint32_t handle, uint64_t uid, uint64_t response,
		const struct sockaddr_storage *addr, size_t addr_size, unsigned flags)
{
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct cma_id *id = get_id(c, handle);
	struct cma_mc *mc;
	int r;

	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	if (!addr_size || addr_size != sockaddr_size(addr))
		return -EINVAL;
	if (flags != RDMA_MC_JOIN_FLAG_FULLMEMBER && flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return -EINVAL;
	if (!id)
		return -ENOENT;
	if (g_list_length(id->mcs) >= UCMA_MCS_MAX)
		return -ENOMEM;
	mc = g_new0(struct cma_mc, 1);
	mc->id = id;
	mc->uid = uid;
	memcpy(&mc->addr, addr, addr_size);
	/* JoinState: FullMember, or SendOnlyFullMember (IBA 15.2.5.17). */
	mc->join_state = flags == RDMA_MC_JOIN_FLAG_FULLMEMBER ? 1 : 8;
	do
		mc->handle = c->f->u->next_id++;
	while (g_hash_table_contains(c->f->u->mcs, GUINT_TO_POINTER(mc->handle)));
	if ((r = cma_mc_join(mc)) < 0) {
		g_free(mc);
		return r;
	}
	g_hash_table_insert(c->f->u->mcs, GUINT_TO_POINTER(mc->handle), mc);
	id->mcs = g_list_append(id->mcs, mc);
	resp.id = mc->handle;
	respond(c, response, &resp, sizeof(resp));
	return 0;
}

static int cmd_join_mcast(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_join_mcast, cmd);

	return join(c, cmd.id, cmd.uid, cmd.response, (struct sockaddr_storage *)&cmd.addr,
		    cmd.addr_size, cmd.join_flags);
}

/* The older command: an IPv4 or IPv6 address, a full member. */
static int cmd_join_ip_mcast(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_join_ip_mcast, cmd);
	struct sockaddr_storage ss = { 0 };

	memcpy(&ss, &cmd.addr, sizeof(cmd.addr));
	return join(c, cmd.id, cmd.uid, cmd.response, &ss, sockaddr_size(&ss),
		    RDMA_MC_JOIN_FLAG_FULLMEMBER);
}

/* ucma_leave_multicast(): a join of this file (another's: EINVAL). */
static int cmd_leave_mcast(struct cmd_ctx *c)
{
	BODY(c, struct rdma_ucm_destroy_id, cmd);
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct cma_mc *mc = g_hash_table_lookup(c->f->u->mcs, GUINT_TO_POINTER(cmd.id));

	if (c->out_len < sizeof(resp))
		return -ENOSPC;
	if (!mc)
		return -ENOENT;
	if (mc->id->file != c->f)
		return -EINVAL;
	resp.events_reported = mc->events_reported;
	free_mc(mc);
	respond(c, cmd.response, &resp, sizeof(resp));
	return 0;
}

static int cmd_unsupported(struct cmd_ctx *c)
{
	(void)c;
	return -ENOSYS;
}

/* ucma_cmd_table[]: the body each needs (a shorter one is EINVAL) and
 * whether it has a response pointer. */
static const struct {
	int (*fn)(struct cmd_ctx *c);
	size_t in;
} cmds[] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = { cmd_create_id, sizeof(struct rdma_ucm_create_id) },
	[RDMA_USER_CM_CMD_DESTROY_ID] = { cmd_destroy_id, sizeof(struct rdma_ucm_destroy_id) },
	[RDMA_USER_CM_CMD_BIND_IP] = { cmd_bind_ip, sizeof(struct rdma_ucm_bind_ip) },
	[RDMA_USER_CM_CMD_RESOLVE_IP] = { cmd_resolve_ip, sizeof(struct rdma_ucm_resolve_ip) },
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = { cmd_resolve_route,
					     sizeof(struct rdma_ucm_resolve_route) },
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = { cmd_query_route, sizeof(struct rdma_ucm_query) },
	[RDMA_USER_CM_CMD_CONNECT] = { cmd_connect, offsetof(struct rdma_ucm_connect, ece) },
	[RDMA_USER_CM_CMD_LISTEN] = { cmd_listen, sizeof(struct rdma_ucm_listen) },
	[RDMA_USER_CM_CMD_ACCEPT] = { cmd_accept, offsetof(struct rdma_ucm_accept, ece) },
	[RDMA_USER_CM_CMD_REJECT] = { cmd_reject, sizeof(struct rdma_ucm_reject) },
	[RDMA_USER_CM_CMD_DISCONNECT] = { cmd_disconnect, sizeof(struct rdma_ucm_disconnect) },
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = { cmd_init_qp_attr,
					    sizeof(struct rdma_ucm_init_qp_attr) },
	[RDMA_USER_CM_CMD_GET_EVENT] = { cmd_unsupported, sizeof(struct rdma_ucm_get_event) },
	[RDMA_USER_CM_CMD_GET_OPTION] = { cmd_unsupported, 0 },
	[RDMA_USER_CM_CMD_SET_OPTION] = { cmd_set_option, sizeof(struct rdma_ucm_set_option) },
	[RDMA_USER_CM_CMD_NOTIFY] = { cmd_notify, sizeof(struct rdma_ucm_notify) },
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = { cmd_join_ip_mcast,
					     sizeof(struct rdma_ucm_join_ip_mcast) },
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = { cmd_leave_mcast, sizeof(struct rdma_ucm_destroy_id) },
	[RDMA_USER_CM_CMD_MIGRATE_ID] = { cmd_migrate_id, sizeof(struct rdma_ucm_migrate_id) },
	[RDMA_USER_CM_CMD_QUERY] = { cmd_query, sizeof(struct rdma_ucm_query) },
	[RDMA_USER_CM_CMD_BIND] = { cmd_bind, sizeof(struct rdma_ucm_bind) },
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = { cmd_resolve_addr, sizeof(struct rdma_ucm_resolve_addr) },
	[RDMA_USER_CM_CMD_JOIN_MCAST] = { cmd_join_mcast, sizeof(struct rdma_ucm_join_mcast) },
};

uint64_t ucma_file_token(const struct ucma_file *f)
{
	return f->token;
}

void ucma_command(struct ucma_file *f, const void *buf, size_t len, struct ucma_answer *a)
{
	ucma_command_from(f, buf, len, 0, a);
}

void ucma_command_from(struct ucma_file *f, const void *buf, size_t len, uint64_t from_token,
		       struct ucma_answer *a)
{
	ucma_command_opt(f, buf, len, NULL, 0, from_token, a);
}

void ucma_command_opt(struct ucma_file *f, const void *buf, size_t len, const void *optval,
		      size_t optlen, uint64_t from_token, struct ucma_answer *a)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint8_t body[UCMA_WIRE_MAX] = { 0 };
	struct cmd_ctx c = { .f = f, .from_token = from_token, .optval = optval,
			     .optlen = optlen, .in = body, .a = a };
	int r;

	memset(a, 0, offsetof(struct ucma_answer, resp));
	/* ucma_write(): a short write or a body longer than the write is
	 * EINVAL, an unknown command ENOSYS, one without a handler ENOSYS. */
	if (len < sizeof(hdr)) {
		a->ret = -EINVAL;
		return;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.in + sizeof(hdr) > len) {
		a->ret = -EINVAL;
		return;
	}
	if (hdr.cmd >= G_N_ELEMENTS(cmds) || !cmds[hdr.cmd].fn) {
		a->ret = -ENOSYS;
		return;
	}
	if (hdr.in < cmds[hdr.cmd].in) {
		a->ret = -EINVAL;
		return;
	}
	/* Bodies past ours (newer fields) are ignored, as the kernel's
	 * copy_from_user of its own size ignores them. */
	memcpy(body, (const uint8_t *)buf + sizeof(hdr), MIN((size_t)hdr.in, sizeof(body)));
	c.in_len = hdr.in;
	c.out_len = hdr.out;
	r = cmds[hdr.cmd].fn(&c);
	a->ret = r < 0 ? r : (ssize_t)len;
	if (r < 0)
		a->resp_len = 0;
}

void ucma_wire_serve(struct ucma_file *f, struct ucma_wire_cmd *w)
{
	struct ucma_answer a;

	/* The sizes are the caller's: held to the buffer they describe. */
	w->len = MIN(w->len, sizeof(w->buf));
	w->optlen = MIN(w->optlen, sizeof(w->buf) - w->len);
	ucma_command_opt(f, w->buf, w->len, w->optlen ? w->buf + w->len : NULL, w->optlen,
			 w->from_token, &a);
	w->ret = (int32_t)a.ret;
	w->resp_addr = a.resp_addr;
	w->resp_len = (uint32_t)a.resp_len;
	memcpy(w->buf, a.resp, a.resp_len);
}
