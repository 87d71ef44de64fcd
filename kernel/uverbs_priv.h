/* SPDX-License-Identifier: MIT */
/*
 * What the verbs devices' two halves share: uverbs.c (attributes, async
 * events) and uverbs_data.c (contexts, QP numbers, the data path).
 */
#ifndef IBEMU_KERNEL_UVERBS_PRIV_H
#define IBEMU_KERNEL_UVERBS_PRIV_H

#include "kernel/kfile.h"
#include "kernel/uverbs.h"
#include "lib/verbs_wire.h"

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
	unsigned mcast;		/* multicast groups it is attached to */
	struct uverbs_ctx *owner;
};

struct uverbs {
	struct host *hw;	/* whose client it is (kernel/host.h) */
	GPtrArray *devs;	/* struct uverbs_dev * */
	GHashTable *by_node;	/* struct node * -> struct uverbs_dev * */
};

struct uverbs_dev *uverbs_dev_of_node(struct uverbs *uv, const struct node *n);
/* The device of port @p's CA at the host that has it, whichever host
 * that is, or NULL (the direct path's). */
struct uverbs_dev *uverbs_dev_at(const struct port *p);

/* uverbs_data.c */
void uverbs_qps_init(struct uverbs_dev *d);
void uverbs_qps_clear(struct uverbs_dev *d);
/* A data packet reached a CA port of the host's (its client hook). */
enum upper_verdict uverbs_on_data(void *ctx, struct port *in, const struct mad_pkt *p);
/* Give @p, arrived at @in, to QP @q (as QP @q's packet: its BTH
 * DestQP is rewritten for a multicast copy), Q_Key checked. */
enum upper_verdict uverbs_qp_deliver(struct uverbs_qp *q, struct port *in,
				     const struct mad_pkt *p);

/* uverbs_mcast.c: multicast attachments (lib/verbs_wire.h
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

#endif
