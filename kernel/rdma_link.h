/* SPDX-License-Identifier: MIT */
/*
 * What `rdma link add NAME type rxe netdev IF`, `rdma link delete NAME` and
 * `rdma dev set NAME name NEW` do to a host's CAs (docs/roce.md, "rdma
 * link"): RDMA_NLDEV_CMD_NEWLINK, DELLINK and SET's rename as the kernel's
 * nldev.c, device.c and rdma_rxe answer them, with their errnos. A RoCE
 * port's CA is there from the start; `link add` on its interface gives it
 * the name the script asked for, so that a Soft-RoCE script runs as it is,
 * and `link delete` gives it its own name back.
 */
#ifndef IBEMU_KERNEL_RDMA_LINK_H
#define IBEMU_KERNEL_RDMA_LINK_H

#include "kernel/host.h"

/* A rename done: CA @k was @was and is now @now (the host's storage). */
struct rdma_link_renamed {
	int k;			/* -1: nothing was renamed */
	char was[HOST_CA_NAME_MAX];
	const char *now;
};

/* SET with DEV_NAME: the CA named @name renamed @now. */
int rdma_link_rename(struct host *h, const char *name, const char *now,
		     struct rdma_link_renamed *r);
/* NEWLINK: type @type on the interface named @netdev, to be called @name. */
int rdma_link_add(struct host *h, const char *name, const char *type, const char *netdev,
		  struct rdma_link_renamed *r);
/* DELLINK of the CA named @name. */
int rdma_link_del(struct host *h, const char *name, struct rdma_link_renamed *r);

#endif
