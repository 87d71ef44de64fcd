/* SPDX-License-Identifier: MIT */
/*
 * What ipoib_link.c (the interface, datagram mode) and ipoib_cm.c
 * (connected mode) share: an interface, its neighbours, the edge to the
 * TAP device. docs/ipoib.md says how it fits.
 */
#ifndef IBEMU_KERNEL_IPOIB_PRIV_H
#define IBEMU_KERNEL_IPOIB_PRIV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "abi/verbs_wire.h"
#include "fabric/fabric.h"
#include "fabric/port.h"
#include "kernel/ipoib_link.h"
#include "lib/timerq.h"

#define ETH_HDR			14
#define IPOIB_HDR		4	/* RFC 4391 §6: EtherType, reserved */
/* Bit 7 of a hardware address's first byte: the interface takes
 * connected mode's connections (RFC 4755 §4.1; ipoib_cm_dev_init sets
 * it on every interface whose HCA has an SRQ, as ours do). */
#define IPOIB_FLAGS_RC		0x80
/* Connected mode's MTU: 64 KiB less 16 (ipoib's IPOIB_CM_MTU, what
 * 16 pages of SRQ buffer hold with the IPoIB header), and the largest
 * message, the header with it. */
#define IPOIB_CM_MTU		65520
#define IPOIB_CM_BUF		(IPOIB_CM_MTU + IPOIB_HDR)

/* The groups an interface joins: IPv4's broadcast group, and IPv6's
 * all-nodes group, where all IPv6 multicast goes (docs/ipoib.md). */
enum { GROUP_BCAST, GROUP_ALL_NODES, GROUPS };

struct group {
	uint8_t mgid[16];
	uint16_t mlid;		/* 0 until joined */
	uint32_t tid;		/* the join asked; 0: none */
};

struct cm_conn;

struct neigh {
	uint64_t key;		/* its MAC, as a number */
	uint8_t hw[IPOIB_HWADDR_LEN];
	struct port *to;	/* its GID's port (NULL: nobody's), whose LID
				 * is the path's DLID at each send */
	struct cm_conn *cm;	/* connected mode: our connection to it */
};

struct link {
	struct ipoib_links *all;
	struct port *port;
	/* A child interface's P_Key (ibN.8001, create_child), full member;
	 * 0: the parent's, the port's first (ib_query_pkey index 0). */
	uint16_t pkey;
	struct link *parent;	/* a child's */
	struct uverbs_ctx *ctx;
	uint32_t qpn, qkey;
	int fd;
	char name[16];		/* the interface's (IFNAMSIZ) */
	guint watch, idle;
	bool gone;		/* the TAP went: not watched again */
	uint8_t mac[6];		/* the TAP's */
	uint8_t *frame;		/* a frame read from the TAP: ETH_HDR +
				 * IPOIB_CM_MTU and some */
	struct group g[GROUPS];
	struct timer join_timer;
	GHashTable *neigh;	/* &key -> struct neigh, owned */
	bool neigh_full_said;
	uint64_t tx, rx, dropped;
	/* Connected mode (ipoib_cm.c): the mode asked (`mode`), the
	 * connections by our QPN and by our communication ID. */
	bool connected;
	unsigned mtu;		/* the interface's, as we set it */
	GHashTable *conn_by_qpn;	/* GUINT(qpn) -> struct cm_conn, owned */
	GHashTable *conn_by_id;		/* GUINT(comm ID) -> struct cm_conn */
	uint8_t *seg;		/* a message's packet records, on first use */
	/* ... held there (its bytes) while the receiver is full, the TAP
	 * not read meanwhile, until a credit or the timer */
	size_t held;
	struct cm_conn *held_conn;
	uint32_t held_npk;
	struct timer hold_timer;
	uint32_t psn_seed;
	bool conns_full_said;
};

struct ipoib_links {
	struct host *h;
	struct uverbs *uv;
	GPtrArray *links;	/* struct link *, owned */
	uint32_t next_tid;
	uint32_t next_comm_id;
	/* The interfaces are the host's network's to change or make. */
	const struct ipoib_host_ops *ops;
	int pid;
};

/* The interface's P_Key, and its index in the port's table (-1: not
 * there, as when the SM has not given it: nothing is sent). */
static inline uint16_t ipoib_pkey(const struct link *k)
{
	return k->pkey ? k->pkey : port_first_pkey(k->port) | 0x8000;
}

static inline int ipoib_pkey_index(const struct link *k)
{
	return port_pkey_find(k->port, ipoib_pkey(k));
}

/* ipoib_link.c */
void ipoib_own_hw(const struct link *k, uint8_t hw[IPOIB_HWADDR_LEN]);
uint32_t ipoib_hw_qpn(const uint8_t hw[IPOIB_HWADDR_LEN]);
void ipoib_hw_set_qpn(uint8_t hw[IPOIB_HWADDR_LEN], uint32_t qpn);
uint16_t ipoib_path_lid(const struct neigh *n);
/* An IPoIB packet @p of @len bytes (the 4-byte header first) that came
 * from the IPoIB address @hw (only its QPN, LID, GID matter), unicast
 * or not: to the host, as an Ethernet frame. With @headroom the frame is
 * made in place, the Ethernet header over the 10 bytes before @p, which
 * the caller keeps free for it; without, in a copy (a datagram's). */
void ipoib_ip_in(struct link *k, uint8_t *p, size_t len, bool headroom, bool mcast,
		 const uint8_t hw[IPOIB_HWADDR_LEN]);

/* A frame or packet @k could not send or deliver: counted, and why said
 * at debug level (IBEMU_DEBUG=1). */
void ipoib_drop(struct link *k, const char *why);
/* Stop or go on taking frames from the TAP. */
void ipoib_link_pause(struct link *k, bool pause);

/* ipoib_cm.c */
void ipoib_cm_init(struct link *k);
void ipoib_cm_fini(struct link *k);
/* Send IPoIB packet @p (@len bytes, header first) to @n over our
 * connection to it, made first if need be. */
void ipoib_cm_xmit(struct link *k, struct neigh *n, const uint8_t *p, size_t len);
/* A packet for one of @k's connected-mode QPs: true if it was one. */
bool ipoib_cm_pkt_in(struct link *k, const struct verbs_wire_pkt *w, const uint8_t *p);
/* The receiver a held message waits for has room (VERBS_REC_CREDIT). */
void ipoib_cm_credit(struct link *k);
/* A CM MAD that reached @port: UPPER_TAKEN if it was for an IPoIB
 * connection or listener of @l. */
enum upper_verdict ipoib_cm_mad(struct ipoib_links *l, struct port *port,
				const struct mad_pkt *pkt);
/* Our connections go (the mode changed, a path did: ipoib_flush_paths);
 * theirs to us stay. */
void ipoib_cm_flush(struct link *k);
void ipoib_cm_status(const struct link *k, GString *s);

#endif
