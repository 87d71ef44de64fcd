/* SPDX-License-Identifier: MIT */
/*
 * A host: the CAs (or a switch's port 0) attached to it, and the one owner
 * of what happens at their ports. The fabric calls a port's upper layer
 * (struct port_upper) for a MAD that firmware did not take, a data packet,
 * and a change of the port; the host hands each to its clients, as the
 * kernel's ib_core hands device events to the clients registered with
 * ib_register_client: the MAD layer (kernel/umad.c) and the verbs devices
 * (kernel/uverbs.c) alike.
 */
#ifndef IBEMU_KERNEL_HOST_H
#define IBEMU_KERNEL_HOST_H

#include "fabric/fabric.h"
#include "lib/timerq.h"

struct host;

/* What a client hears; any may be NULL. A MAD and a data packet go to the
 * clients in the order they registered until one claims it (not
 * UPPER_UNCLAIMED); a change goes to every client. */
struct host_client {
	enum upper_verdict (*deliver)(void *ctx, struct port *port, const struct mad_pkt *pkt);
	enum upper_verdict (*data)(void *ctx, struct port *port, const struct mad_pkt *pkt);
	void (*changed)(void *ctx, struct port *port, unsigned what);
};

struct host *host_new(struct fabric *f, struct timerq *tq);
/* Let go of the ports: what arrives for them then is dropped (a remote
 * host that left, docs/many-hosts.md). Clients unregister first. */
void host_free(struct host *h);
/*
 * Make @n one of this host's CAs ("ibemu<k>"): its ports, or port 0 of a
 * switch, are the host's from now on. Returns the number of ports added.
 * Attach before the clients are made: they take the ports there are.
 */
unsigned host_attach(struct host *h, struct node *n);
struct fabric *host_fabric(const struct host *h);
struct timerq *host_tq(const struct host *h);
/* The CAs, in attach order, with their names. A name's storage lives as
 * long as the host and holds the CA's name as it is now. */
unsigned host_ncas(const struct host *h);
struct node *host_ca(const struct host *h, unsigned k, const char **name);

#define HOST_CA_NAME_MAX 64	/* IB_DEVICE_NAME_MAX, its NUL included */
/* The name CA number @k has until renamed: "ibemu<k>". */
void host_ca_default_name(unsigned k, char name[HOST_CA_NAME_MAX]);
/* The number of @h's CA named @name, or -1. */
int host_ca_by_name(const struct host *h, const char *name);
/*
 * Rename CA @k to @name, as the kernel's ib_device_rename: 0 (the same
 * name too), -EEXIST when another CA of @h has it, -EINVAL for a name a
 * sysfs directory cannot have (empty, ".", "..", a '/', 64 bytes or more).
 * Whoever shows the name reads it anew; sysfs's tree is its caller's.
 */
int host_rename_ca(struct host *h, unsigned k, const char *name);
/* CA @k was named by `rdma link add` (kernel/rdma_link.h). */
bool host_ca_linked(const struct host *h, unsigned k);
void host_set_ca_linked(struct host *h, unsigned k, bool linked);
/* The ports, in attach order, with their CA's name. */
unsigned host_nports(const struct host *h);
struct port *host_port(const struct host *h, unsigned i, const char **ca_name);
/* The name of CA port @p's IPoIB interface where the run gives the host
 * a network (ns/ipoib.h): ib0, ib1, ... in the order above, switches
 * passed over, as the ib_ipoib driver names them (eth0... for RoCE
 * ports, whose interfaces are Ethernet ones); in @buf (IFNAMSIZ).
 * False: @p is not a CA port of @h. */
bool host_netdev_name(const struct host *h, const struct port *p, char *buf, size_t n);
/* The same in two steps: its number among the host's CA ports, and the
 * name of number @k for port @p (ib<k>, or eth<k> for a RoCE port). */
bool host_netdev_index(const struct host *h, const struct port *p, unsigned *k);
void host_netdev_format(const struct port *p, unsigned k, char *buf, size_t n);

void host_register_client(struct host *h, const struct host_client *c, void *ctx);
void host_unregister_client(struct host *h, const struct host_client *c, void *ctx);
/* The ctx client @c registered with at the host that has port @p, or
 * NULL (no host has it, or @c is not its client). */
void *host_client_at(const struct port *p, const struct host_client *c);

#endif
