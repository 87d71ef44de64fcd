/* SPDX-License-Identifier: MIT */
/*
 * The verbs files and the rdma_cm file of an attached host over the fast
 * path (docs/many-hosts.md "Verbs on an attached host"): a channel on
 * which FAST_OPEN names a VN_VCMD, VN_VEVENTS or VN_UCMA file of the
 * host's mock sysfs by its path serves that file for as long as the
 * channel lives. What the file queues (a context's packet records, an
 * event queue's events, rdma_cm events) goes out on the data socket passed
 * in the open's answer: a context's as datagrams of whole records
 * (uverbs_ctx_read's, at most FAST_INLINE_MAX bytes), events one a
 * datagram. Writes and ioctls come as requests on the channel: the
 * rdma_cm file's UCMA_IOC_CMD and UCMA_IOC_TOKEN (lib/ucma_wire.h) with
 * their structs there and back.
 */
#ifndef IBEMU_FAST_FASTPATH_VERBS_H
#define IBEMU_FAST_FASTPATH_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/vfs.h"
#include "lib/fast_wire.h"

struct fast_verbs;

/* Open @v (VN_VCMD, VN_VEVENTS or VN_UCMA): the file, and in *@client_fd the
 * client's end of its data socket (the caller passes and closes it);
 * NULL with -errno in *@client_fd. */
struct fast_verbs *fast_verbs_open(struct vnode *v, int *client_fd);
/* Serve FAST_WRITE (packet records) or FAST_IOCTL (VERBS_IOC_QP_*, or the
 * rdma_cm file's, whose struct comes back in @out, *@out_len bytes of at
 * most FAST_VERBS_OUT_MAX): what the request returns. */
#define FAST_VERBS_OUT_MAX	1072	/* struct ucma_wire_cmd's room */
int64_t fast_verbs_request(struct fast_verbs *fv, const struct fast_req *rq,
			   const uint8_t *payload, size_t n, void *out, uint32_t *out_len);
/* FAST_VRING: a command file's ring (lib/verbs_ring.h), its memfd in
 * *@memfd (the caller passes and closes it); @direct: the file takes the
 * direct path's packets too (fastpath_direct.c). 0 or -errno. */
int fast_verbs_ring(struct fast_verbs *fv, bool direct, int *memfd);
/* FAST_VDIRECT and FAST_VINBOX (fastpath_direct.c, lib/verbs_inbox.h): a
 * grant for packets like the header in @payload, a struct
 * verbs_direct_grant in @out and its sub-ring's memfd in *@fd; the fd
 * @which (VERBS_INBOX_*) that a struct verbs_inbox_ask in @payload names,
 * in *@fd. Either fd stays the direct path's (the caller passes it, not
 * closes). */
int64_t fast_direct_grant(struct fast_verbs *fv, const uint8_t *payload, size_t n, void *out,
			  uint32_t *out_len, int *fd);
int fast_direct_inbox_fd(struct fast_verbs *fv, uint64_t which, const uint8_t *payload, size_t n,
			 int *fd);
/* The channel closed: the file's last close. */
void fast_verbs_free(struct fast_verbs *fv);

#endif
