/* SPDX-License-Identifier: MIT */
/*
 * What the verbs devices' parts share: uverbs.c (attributes, async
 * events), uverbs_data.c (contexts, QP numbers, the data path),
 * uverbs_mcast.c (multicast) and uverbs_direct.c (the direct path).
 */
#ifndef IBEMU_KERNEL_UVERBS_PRIV_H
#define IBEMU_KERNEL_UVERBS_PRIV_H

#include "abi/verbs_wire.h"
#include "kernel/kfile.h"
#include "kernel/uverbs.h"

struct uverbs_dev {
	struct uverbs *uv;
	unsigned index;
	const char *ca_name;	/* the umad host's */
	struct node *node;
	uint8_t *last_state;	/* [port]: PortState last reported */
	GList *files;		/* struct uverbs_events * */
	GHashTable *qps;	/* QPN -> struct uverbs_qp *, owned */
	uint32_t next_qpn;
	GPtrArray *mcast;	/* struct uverbs_mcast *: attachments, owned */
	GHashTable *mcast_groups;	/* GBytes MGID -> unsigned attachments */
	struct kfile_node ctx_node;	/* its contexts: uverbs_ctx_fops */
};

/* The verbs QP types the data path carries (enum ibv_qp_type). */
enum { QPT_RC = 2, QPT_UC = 3, QPT_UD = 4, QPT_XRC_SEND = 9, QPT_XRC_RECV = 10 };

struct uverbs_qp {
	uint32_t qpn, type, qkey;
	uint8_t port;		/* 0 until the QP is bound to one */
	bool block_self_mcast;	/* VERBS_QP_BLOCK_SELF_MCAST */
	unsigned mcast;		/* multicast groups it is attached to */
	struct uverbs_ctx *owner;
};

struct uverbs {
	struct host *hw;	/* whose client it is (kernel/host.h) */
	GPtrArray *devs;	/* struct uverbs_dev * */
	GHashTable *by_node;	/* struct node * -> struct uverbs_dev * */
};

/*
 * The verbs layer's state on one fabric (struct fabric's verbs, made on
 * first need), as a kernel keeps a subsystem's per network namespace:
 * what all its contexts hold, and the direct path's inboxes. Nothing of
 * the model lives outside it (tests/unit/test_direct.c runs two).
 */
struct uverbs_net {
	struct fabric *f;
	GList *contexts;		/* every open context */
	struct uverbs_ctx *writer;	/* whose packets are being delivered */
	size_t rx_bytes;		/* what every context holds unread */
	uint64_t dropped;		/* packets dropped for want of room */
	int64_t said_at_us;		/* when that was last said; 0: never */
	/* uverbs_direct.c's */
	GHashTable *inboxes;		/* id -> struct direct_inbox * */
	uint64_t next_inbox;
	uint32_t next_gen;
	unsigned subs_bound;		/* slots with a sub-ring, all inboxes */
};

struct uverbs_net *uverbs_net_of(struct fabric *f);

struct uverbs_ctx {
	struct uverbs_dev *dev;
	struct uverbs_net *net;
	GQueue rx;		/* GBytes *: whole records */
	size_t rx_bytes;	/* their bytes, counted in the net's too */
	GList *qps;		/* struct uverbs_qp * it owns */
	void (*wakeup)(void *);
	void *wakeup_ctx;
	struct uverbs_ctx *blocked_on;	/* the full receiver it waits for */
	int64_t drained_us;	/* when it last read, or its queue began (from empty) */
	int64_t hoq_us;		/* HOQLife in front of it (last arrival); -1: for ever */
	/* The direct path (uverbs_direct.c): whether its transport has
	 * handed over all it was given (NULL: it takes no direct path),
	 * and its inbox. */
	bool (*drained)(void *arg);
	void *drained_arg;
	struct direct_inbox *inbox;
};

struct uverbs_dev *uverbs_dev_of_node(struct uverbs *uv, const struct node *n);
/* The device of port @p's CA at the host that has it, whichever host
 * that is, or NULL (the direct path's). */
struct uverbs_dev *uverbs_dev_at(const struct port *p);

/* uverbs_data.c */
/* QP @qpn of @c's; QP @qpn of @d if it takes what arrives at port @in;
 * the P_Key index at @p that accepted @pkey. */
struct uverbs_qp *uverbs_owned_qp(struct uverbs_ctx *c, uint32_t qpn);
struct uverbs_qp *uverbs_qp_at(struct uverbs_dev *d, const struct port *in, uint32_t qpn);
uint16_t uverbs_pkey_index_of(const struct port *p, uint16_t pkey);
void uverbs_qps_init(struct uverbs_dev *d);
void uverbs_qps_clear(struct uverbs_dev *d);
/* A data packet reached a CA port of the host's (its client hook). */
enum upper_verdict uverbs_on_data(void *ctx, struct port *in, const struct mad_pkt *p);
/* Give @p, arrived at @in, to QP @q (as QP @q's packet: its BTH
 * DestQP is rewritten for a multicast copy), Q_Key checked. */
enum upper_verdict uverbs_qp_deliver(struct uverbs_qp *q, struct port *in,
				     const struct mad_pkt *p);

/* uverbs_mcast.c: multicast attachments (abi/verbs_wire.h
 * VERBS_IOC_MCAST_*) and the copies of a multicast packet. */
void uverbs_mcast_init(struct uverbs_dev *d);
void uverbs_mcast_clear(struct uverbs_dev *d);
int uverbs_mcast_attach(struct uverbs_dev *d, struct uverbs_qp *q,
			const struct verbs_ioc_mcast *a);
int uverbs_mcast_detach(struct uverbs_dev *d, struct uverbs_qp *q,
			const struct verbs_ioc_mcast *a);
/* Every attachment of @q goes (its context closed). */
void uverbs_mcast_detach_all(struct uverbs_dev *d, struct uverbs_qp *q);
enum upper_verdict uverbs_mcast_deliver(struct uverbs_dev *d, struct port *in,
					const struct mad_pkt *p);
/* uverbs_direct.c: @c goes, or its transport's direct path does: the
 * grants to and from it end, its inbox goes. */
void uverbs_direct_forget(struct uverbs_ctx *c);
/* The net goes with its fabric (every context closed). Its hooks on the
 * fabric (struct fabric_verbs_ops): every grant taken back; what went
 * the direct way brought onto the PMA counters. */
void uverbs_direct_net_free(struct uverbs_net *net);
void uverbs_direct_revoke(void *net);
void uverbs_direct_sync(void *net);

#endif
