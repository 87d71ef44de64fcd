/* SPDX-License-Identifier: MIT */
/* A host and its clients; see host.h. */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fabric/port.h"
#include "kernel/host.h"

struct client {
	const struct host_client *c;
	void *ctx;
};

struct host_port {
	struct port *port;
	const char *ca_name;	/* the CA's, in cas_names */
};

struct host {
	struct fabric *fabric;
	struct timerq *tq;
	GPtrArray *cas;		/* struct node * in attach order */
	GPtrArray *ca_names;	/* char[HOST_CA_NAME_MAX]: "ibemu<k>", or what
				 * host_rename_ca made it, in place: who keeps
				 * the pointer sees the new name */
	GArray *ca_linked;	/* bool: named by `rdma link add` (rdma_link.c) */
	GArray *ports;		/* struct host_port */
	GArray *clients;	/* struct client, in registration order */
};

/* A MAD (or, @data, a data packet) to the clients in turn until one
 * claims it. */
static enum upper_verdict offer(struct host *h, struct port *port, const struct mad_pkt *pkt,
				bool data)
{
	unsigned i;

	for (i = 0; i < h->clients->len; i++) {
		const struct client *cl = &g_array_index(h->clients, struct client, i);
		enum upper_verdict (*fn)(void *, struct port *, const struct mad_pkt *) =
			data ? cl->c->data : cl->c->deliver;
		enum upper_verdict v;

		if (fn && (v = fn(cl->ctx, port, pkt)) != UPPER_UNCLAIMED)
			return v;
	}
	return UPPER_UNCLAIMED;
}

static enum upper_verdict on_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	return offer(ctx, port, pkt, false);
}

static enum upper_verdict on_data(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	return offer(ctx, port, pkt, true);
}

static void on_changed(void *ctx, struct port *port, unsigned what)
{
	struct host *h = ctx;
	unsigned i;

	for (i = 0; i < h->clients->len; i++) {
		const struct client *cl = &g_array_index(h->clients, struct client, i);

		if (cl->c->changed)
			cl->c->changed(cl->ctx, port, what);
	}
}

struct host *host_new(struct fabric *f, struct timerq *tq)
{
	struct host *h = g_new0(struct host, 1);

	h->fabric = f;
	h->tq = tq;
	h->cas = g_ptr_array_new();
	h->ca_names = g_ptr_array_new_with_free_func(g_free);
	h->ca_linked = g_array_new(FALSE, TRUE, sizeof(bool));
	h->ports = g_array_new(FALSE, FALSE, sizeof(struct host_port));
	h->clients = g_array_new(FALSE, FALSE, sizeof(struct client));
	return h;
}

void host_free(struct host *h)
{
	static const struct port_upper none;
	unsigned i;

	if (!h)
		return;
	for (i = 0; i < h->ports->len; i++) {
		struct port *p = g_array_index(h->ports, struct host_port, i).port;

		if (p->upper.ctx == h)
			port_attach(p, &none);
	}
	g_ptr_array_free(h->cas, TRUE);
	g_ptr_array_free(h->ca_names, TRUE);
	g_array_free(h->ca_linked, TRUE);
	g_array_free(h->ports, TRUE);
	g_array_free(h->clients, TRUE);
	g_free(h);
}

unsigned host_attach(struct host *h, struct node *n)
{
	static const struct port_upper up_fns = { .deliver = on_deliver, .changed = on_changed,
						  .data = on_data };
	struct port_upper up = up_fns;
	unsigned first = node_is_switch(n) ? 0 : 1;
	unsigned last = node_is_switch(n) ? 0 : n->nports;
	char *name = g_malloc0(HOST_CA_NAME_MAX);
	bool linked = false;
	unsigned i;

	host_ca_default_name(h->cas->len, name);
	g_ptr_array_add(h->cas, n);
	g_ptr_array_add(h->ca_names, name);
	g_array_append_val(h->ca_linked, linked);
	up.ctx = h;
	for (i = first; i <= last; i++) {
		struct host_port hp = { .port = &n->ports[i], .ca_name = name };

		g_array_append_val(h->ports, hp);
		port_attach(hp.port, &up);
	}
	return last - first + 1;
}

bool host_netdev_index(const struct host *h, const struct port *p, unsigned *k)
{
	unsigned i;

	*k = 0;
	for (i = 0; i < h->ports->len; i++) {
		const struct port *q = g_array_index(h->ports, struct host_port, i).port;

		/* Numbered by kind, as the kernel names them: ib0, ib1 and
		 * eth0 beside (docs/roce.md). */
		if (node_is_switch(q->node) || port_is_roce(q) != port_is_roce(p))
			continue;
		if (q == p)
			return true;
		(*k)++;
	}
	return false;
}

/* A RoCE port's interface is an Ethernet one (docs/roce.md). */
void host_netdev_format(const struct port *p, unsigned k, char *buf, size_t n)
{
	snprintf(buf, n, "%s%u", port_is_roce(p) ? "eth" : "ib", k);
}

bool host_netdev_name(const struct host *h, const struct port *p, char *buf, size_t n)
{
	unsigned k;

	if (!host_netdev_index(h, p, &k))
		return false;
	host_netdev_format(p, k, buf, n);
	return true;
}

struct fabric *host_fabric(const struct host *h) { return h->fabric; }
struct timerq *host_tq(const struct host *h) { return h->tq; }
unsigned host_ncas(const struct host *h) { return h->cas->len; }
unsigned host_nports(const struct host *h) { return h->ports->len; }

struct node *host_ca(const struct host *h, unsigned k, const char **name)
{
	if (name)
		*name = g_ptr_array_index(h->ca_names, k);
	return g_ptr_array_index(h->cas, k);
}

void host_ca_default_name(unsigned k, char name[HOST_CA_NAME_MAX])
{
	snprintf(name, HOST_CA_NAME_MAX, "ibemu%u", k);
}

int host_ca_by_name(const struct host *h, const char *name)
{
	unsigned k;

	for (k = 0; k < h->ca_names->len; k++)
		if (!strcmp(g_ptr_array_index(h->ca_names, k), name))
			return (int)k;
	return -1;
}

int host_rename_ca(struct host *h, unsigned k, const char *name)
{
	int other = host_ca_by_name(h, name);

	if (other == (int)k)
		return 0;
	if (other >= 0)
		return -EEXIST;
	/* sysfs holds it as a directory's name (docs/netlink.md). */
	if (!*name || strlen(name) >= HOST_CA_NAME_MAX || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	strcpy(g_ptr_array_index(h->ca_names, k), name);
	return 0;
}

bool host_ca_linked(const struct host *h, unsigned k)
{
	return g_array_index(h->ca_linked, bool, k);
}

void host_set_ca_linked(struct host *h, unsigned k, bool linked)
{
	g_array_index(h->ca_linked, bool, k) = linked;
}

struct port *host_port(const struct host *h, unsigned i, const char **ca_name)
{
	const struct host_port *hp = &g_array_index(h->ports, struct host_port, i);

	if (ca_name)
		*ca_name = hp->ca_name;
	return hp->port;
}

void host_register_client(struct host *h, const struct host_client *c, void *ctx)
{
	struct client cl = { c, ctx };

	g_array_append_val(h->clients, cl);
}

void *host_client_at(const struct port *p, const struct host_client *c)
{
	const struct host *h;
	unsigned i;

	if (p->upper.deliver != on_deliver)
		return NULL;	/* not a host's port */
	h = p->upper.ctx;
	for (i = 0; i < h->clients->len; i++) {
		const struct client *cl = &g_array_index(h->clients, struct client, i);

		if (cl->c == c)
			return cl->ctx;
	}
	return NULL;
}

void host_unregister_client(struct host *h, const struct host_client *c, void *ctx)
{
	unsigned i;

	for (i = 0; i < h->clients->len; i++) {
		const struct client *cl = &g_array_index(h->clients, struct client, i);

		if (cl->c == c && cl->ctx == ctx) {
			g_array_remove_index(h->clients, i);
			return;
		}
	}
}
