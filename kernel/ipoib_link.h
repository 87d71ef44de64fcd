/* SPDX-License-Identifier: MIT */
/*
 * IPoIB on the wire (docs/ipoib.md): what the kernel's ib_ipoib driver
 * does for a port's ibN interface, in datagram mode (RFC 4391) and
 * connected mode (RFC 4755, ipoib_cm.c). The
 * interface is a TAP device of the host's network (ns/ipoib.c makes it,
 * the emulator holds its fd); its Ethernet frames become IPoIB packets of
 * a UD QP of the port, sent through the fabric like any verbs packet, so
 * link state, routes, P_Keys, fault rules, counters and captures apply.
 *
 * What the TAP cannot be: a link/infiniband device with 20-byte hardware
 * addresses (only ib_ipoib makes one). So the edge translates: on the
 * wire, ARP is IPoIB's (hardware type 32, the 20-byte QPN + GID
 * address) and IP rides behind the 4-byte IPoIB header; towards the
 * host's kernel each IPoIB address stands for a MAC made from it (a
 * hash: locally administered, unicast), so `ip neigh` shows MACs while
 * `ibemu ctl status` shows the IPoIB addresses behind them.
 *
 * IPv6's neighbour discovery options are translated the same way.
 *
 * The broadcast group (ff12:401b:<P_Key>::ffff:ffff) and IPv6's all-nodes
 * group (ff12:601b:<P_Key>::1) are joined at the SA, opensm's or the
 * emulator's, as the kernel joins them, and again when the port's LID or
 * SM changes; until a group is joined nothing is sent to it.
 */
#ifndef IBEMU_KERNEL_IPOIB_LINK_H
#define IBEMU_KERNEL_IPOIB_LINK_H

#include <glib.h>
#include <stdint.h>

#include "kernel/host.h"
#include "kernel/uverbs.h"

/* The broadcast group's Q_Key when the SA gives none (opensm's
 * OSM_IPOIB_BROADCAST_MGRP_QKEY) and IPoIB's datagram MTU. */
#define IPOIB_QKEY		0x0b1b
#define IPOIB_UD_MTU		2044
#define IPOIB_HWADDR_LEN	20

struct ipoib_links;

/* One host's IPoIB: a client of @h for the SA's answers and port
 * changes, made before the MAD layer (which drops answers it did not
 * ask for), as ib_sa's agent is the kernel's. */
struct ipoib_links *ipoib_links_new(struct host *h);
/* The host's verbs devices, made after the MAD layer: the QPs' */
void ipoib_links_set_verbs(struct ipoib_links *l, struct uverbs *uv);
void ipoib_links_free(struct ipoib_links *l);
/* Port @p of the host carries the interface whose TAP fd is @fd (taken:
 * closed with the links): 0, or -errno (no verbs device for @p). */
int ipoib_link_add(struct ipoib_links *l, struct port *p, int fd);
/* What `ctl status` says of them: a line per interface and neighbour
 * (g_malloc'd, "" when none). */
char *ipoib_links_status(const struct ipoib_links *l);

/* What the host's network (its keeper's @pid) does for the interfaces:
 * set interface @name's MTU (0 or -errno); make interface @name, a TAP
 * device, up, of MTU @mtu, gone when its fd closes (the fd, or -errno). */
struct ipoib_host_ops {
	int (*set_mtu)(int pid, const char *name, unsigned mtu);
	int (*add_if)(int pid, const char *name, unsigned mtu);
};
void ipoib_links_set_host(struct ipoib_links *l, int pid, const struct ipoib_host_ops *ops);
/* The `mode` of port @p's interface (/sys/class/net/ibN/mode): what a
 * read gives ("datagram\n" or "connected\n", g_malloc'd; NULL: the port
 * carries no IPoIB), and a write (0, -EINVAL for neither mode,
 * -EOPNOTSUPP where nothing carries it), as ib_ipoib's. */
char *ipoib_port_mode(const struct port *p);
int ipoib_port_set_mode(const struct port *p, const char *buf);
/* Its create_child and delete_child (ipoib_vlan_add, _delete): a P_Key
 * as sscanf's %i reads it; a child interface <parent>.<%04x P_Key> made
 * or let go. 0, or -EINVAL (not a P_Key), -ENOTUNIQ (made already),
 * -ENODEV (no such child), -EMLINK (IPOIB_CHILDREN_MAX), -EOPNOTSUPP
 * (nothing carries the port's IPoIB), or the host's error. */
#define IPOIB_CHILDREN_MAX	64
int ipoib_port_create_child(const struct port *p, const char *buf);
int ipoib_port_delete_child(const struct port *p, const char *buf);

/* The MAC that stands for the IPoIB hardware address @hw. */
void ipoib_mac_of(const uint8_t hw[IPOIB_HWADDR_LEN], uint8_t mac[6]);

#endif
