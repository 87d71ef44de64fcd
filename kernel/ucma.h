/* SPDX-License-Identifier: MIT */
/*
 * The kernel's rdma_cm (drivers/infiniband/core/cma.c, ucma.c, cm.c) as a
 * process sees it through /dev/infiniband/rdma_cm (docs/rdmacm.md): ids,
 * IP addresses mapped to the host's CA ports, routes, connections set up
 * and torn down by real CM MADs (class 0x07) through the fabric, and the
 * events that librdmacm reads.
 *
 * A front-end (any transport, through ucma_fops: kernel/kfile.h) opens a
 * file per open of the device, hands it each command as librdmacm wrote
 * it and gets the bytes the kernel would have copied to the caller (and
 * where), and reads events from it.
 *
 * Lifetime: the host owns its ucma; a file owns its ids and their events;
 * ucma_release() destroys them as the kernel's close does (peers of
 * connected ids are sent a DREQ).
 */
#ifndef IBEMU_KERNEL_UCMA_H
#define IBEMU_KERNEL_UCMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/ucma_wire.h"
#include "kernel/host.h"

/* RDMA_USER_CM_ABI_VERSION, what class/misc/rdma_cm/abi_version says. */
#define UCMA_ABI_VERSION	4
/* Ids one file may hold; past it CREATE_ID fails ENOMEM. */
#define UCMA_IDS_MAX		4096
/* Events one file may hold unread; past it new ones are dropped (and the
 * connection they announce rejected or torn down), said once. */
#define UCMA_EVENTS_MAX		4096
/* Multicast joins one id may hold; past it JOIN_MCAST fails ENOMEM. */
#define UCMA_MCS_MAX		64
/* The largest backlog LISTEN takes (the kernel's is the int given). */
#define UCMA_BACKLOG_MAX	1024

struct ucma;
struct ucma_file;

/* The connection manager of @h's CA ports; a client of @h for class 0x07
 * MADs and its own SA answers (kernel/host.h). Make it before the MAD
 * layer, as ib_cm's agents are the kernel's own. */
struct ucma *ucma_new(struct host *h);
void ucma_free(struct ucma *u);

/* Each listening id: its address ("0.0.0.0", "10.1.0.3", "::", ...), its
 * port and its port space ("tcp", "udp", "ib", "ipoib"), for `ctl status`. */
typedef void (*ucma_listener_fn)(void *ctx, const char *addr, unsigned port, const char *ps);
void ucma_foreach_listener(struct ucma *u, ucma_listener_fn fn, void *ctx);

struct ucma_file *ucma_open(struct ucma *u);
void ucma_release(struct ucma_file *f);
/* Called whenever an event is queued (to wake readers, poll). */
void ucma_set_wakeup(struct ucma_file *f, void (*fn)(void *), void *ctx);
bool ucma_readable(const struct ucma_file *f);

/* What a command answers: what write() returns (the count, or -errno),
 * and the bytes the kernel copies to @resp_addr in the caller. */
struct ucma_answer {
	ssize_t ret;
	uint64_t resp_addr;
	size_t resp_len;
	uint8_t resp[UCMA_WIRE_MAX];
};
/* One write of librdmacm's: struct rdma_ucm_cmd_hdr and its body. GET_EVENT
 * is not served here (the front-end reads an event, below): EINVAL. */
void ucma_command(struct ucma_file *f, const void *buf, size_t len, struct ucma_answer *a);
/* What names @f to MIGRATE_ID: the front-end puts the token of the file
 * the caller's fd names in @from_token of ucma_command_from(). */
uint64_t ucma_file_token(const struct ucma_file *f);
void ucma_command_from(struct ucma_file *f, const void *buf, size_t len, uint64_t from_token,
		       struct ucma_answer *a);
/* SET_OPTION with its value (@optval, @optlen bytes: what the kernel
 * reads at the command's optval pointer). */
void ucma_command_opt(struct ucma_file *f, const void *buf, size_t len, const void *optval,
		      size_t optlen, uint64_t from_token, struct ucma_answer *a);
/* UCMA_IOC_CMD's work (abi/ucma_wire.h): the command in @w (its sizes
 * held to its buffer) run by ucma_command_opt(), its answer put in @w. */
void ucma_wire_serve(struct ucma_file *f, struct ucma_wire_cmd *w);
/* One struct rdma_ucm_event_resp into @buf (which holds at least its
 * size): the size, or -EAGAIN when none is queued. */
ssize_t ucma_read_event(struct ucma_file *f, void *buf, size_t count);

#endif
