/* SPDX-License-Identifier: MIT */
/*
 * What the verbs devices' two halves share: uverbs.c (attributes, async
 * events) and uverbs_data.c (contexts, QP numbers, the data path).
 */
#ifndef IBEMU_KERNEL_UVERBS_PRIV_H
#define IBEMU_KERNEL_UVERBS_PRIV_H

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
};

struct uverbs {
	struct host *hw;	/* whose client it is (kernel/host.h) */
	GPtrArray *devs;	/* struct uverbs_dev * */
	GHashTable *by_node;	/* struct node * -> struct uverbs_dev * */
};

struct uverbs_dev *uverbs_dev_of_node(struct uverbs *uv, const struct node *n);

/* uverbs_data.c */
void uverbs_qps_init(struct uverbs_dev *d);
void uverbs_qps_clear(struct uverbs_dev *d);
/* A data packet reached a CA port of the host's (its client hook). */
enum upper_verdict uverbs_on_data(void *ctx, struct port *in, const struct mad_pkt *p);

#endif
