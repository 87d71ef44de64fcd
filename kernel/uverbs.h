/* SPDX-License-Identifier: MIT */
/*
 * The verbs side of the host's CAs (docs/verbs.md): what ib_uverbs and an
 * HCA driver tell libibverbs. Every attached CA is a verbs device
 * uverbs<k>; its device and port attributes are read live from the node
 * and its ports as the SMA holds them (no SMP is sent, so fault rules
 * cannot touch them); its async event files get the port events the
 * kernel raises when the SM or the control plane changes a port.
 *
 * The text of the attribute files and the event records are
 * abi/verbs_wire.h's; the device files (dev/, socket/) serve them as files.
 */
#ifndef IBEMU_KERNEL_UVERBS_H
#define IBEMU_KERNEL_UVERBS_H

#include <stdbool.h>
#include <sys/types.h>

#include "kernel/host.h"

/* Events an open event file holds unread; past it new ones are dropped
 * (and said once): a process that never reads cannot grow us. */
#define UVERBS_EVENTS_MAX	4096

struct uverbs;
struct uverbs_dev;
struct uverbs_events;

/* The verbs devices of @h's CAs (switches have none); a client of @h for
 * its ports' changes and data packets (kernel/host.h). */
struct uverbs *uverbs_new(struct host *h);
void uverbs_free(struct uverbs *uv);
unsigned uverbs_ndevs(const struct uverbs *uv);
struct uverbs_dev *uverbs_dev(struct uverbs *uv, unsigned index);
unsigned uverbs_dev_index(const struct uverbs_dev *d);	/* N in uverbsN */
const char *uverbs_dev_ca_name(const struct uverbs_dev *d);
struct node *uverbs_dev_node(const struct uverbs_dev *d);
/* Its command file's lower half: { uverbs_ctx_fops, @d } (kernel/kfile.h),
 * what sysfs names under uverbs_cmd_fops. */
struct kfile_node *uverbs_dev_ctx_node(struct uverbs_dev *d);

/* The attribute files' text (g_malloc'd). */
char *uverbs_device_text(const struct uverbs_dev *d);
/* NULL when the CA has no port @num. */
char *uverbs_port_text(const struct uverbs_dev *d, unsigned num);

/* One open of the device's event file: the events from now on. */
struct uverbs_events *uverbs_events_open(struct uverbs_dev *d);
void uverbs_events_close(struct uverbs_events *ev);
/* Called whenever an event is queued (to wake readers, poll). */
void uverbs_events_set_wakeup(struct uverbs_events *ev, void (*fn)(void *), void *ctx);
bool uverbs_events_readable(const struct uverbs_events *ev);
/* One event record into @buf: its size, -EAGAIN when none is queued,
 * -EINVAL when @count cannot hold one (ib_uverbs_event_read). */
ssize_t uverbs_events_read(struct uverbs_events *ev, void *buf, size_t count);

/*
 * One open of the device's command file: a verbs context's way to the
 * fabric (docs/verbs.md "Data path", abi/verbs_wire.h). It owns the QP
 * numbers it created and a queue of records for the provider to read;
 * closing it frees both, so a crashed process's QPs vanish with it.
 */
struct uverbs_ctx;
struct verbs_wire_pkt;
struct fabric;
struct port;

struct uverbs_ctx *uverbs_ctx_open(struct uverbs_dev *d);
void uverbs_ctx_close(struct uverbs_ctx *c);
/* Called whenever a record is queued (to wake readers, poll). */
void uverbs_ctx_set_wakeup(struct uverbs_ctx *c, void (*fn)(void *), void *ctx);
bool uverbs_ctx_readable(const struct uverbs_ctx *c);
/* The bytes every context on @f holds unread (at most 256 MiB:
 * uverbs_data.c), for `ctl status --json`. */
size_t uverbs_rx_bytes_all(struct fabric *f);
/* Packets dropped for want of room (bounds, stuck receivers), and the
 * contexts held back now by a full receiver (flow control). */
uint64_t uverbs_dropped_all(struct fabric *f);
unsigned uverbs_held_back(struct fabric *f);
/* Send the packet records in @buf: @count, or -EINVAL (nothing sent) when
 * one is malformed or names a QP, port or P_Key index it may not. */
ssize_t uverbs_ctx_write(struct uverbs_ctx *c, const void *buf, size_t count);
/* As many whole records as fit in @buf: their size; -EAGAIN when none is
 * queued, -EINVAL when @count cannot hold the next. */
ssize_t uverbs_ctx_read(struct uverbs_ctx *c, void *buf, size_t count);
/* Queue a record of the front-end's own (an upcall, a wake-up). */
void uverbs_ctx_queue(struct uverbs_ctx *c, const void *rec, size_t len);
/* VERBS_IOC_QP_*: 0 or -errno; @arg is the command's struct, in and out. */
int uverbs_ctx_ioctl(struct uverbs_ctx *c, unsigned cmd, void *arg);
struct fabric *uverbs_ctx_fabric(const struct uverbs_ctx *c);

/*
 * The direct path (uverbs_direct.c, abi/verbs_inbox.h, docs/verbs.md
 * "The direct path"). A context's transport says whether it takes
 * senders' packets in an inbox of its own, and when it has handed over
 * everything it was given (@drained; NULL: it takes none, and its inbox
 * goes).
 */
void uverbs_ctx_set_direct(struct uverbs_ctx *c, bool (*drained)(void *arg), void *arg);
/* FAST_VDIRECT: a grant for @c's packets like the header in @payload: a
 * struct verbs_direct_grant in @out (*@out_len bytes) and its sub-ring's
 * memfd in *@fd; -EAGAIN when they go through the engine now. */
int64_t uverbs_direct_grant(struct uverbs_ctx *c, const void *payload, size_t n, void *out,
			    uint32_t *out_len, int *fd);
/* FAST_VINBOX: the fd @which (VERBS_INBOX_*) that a struct
 * verbs_inbox_ask in @payload names, in *@fd. Either fd stays the direct
 * path's (the caller passes it, not closes). */
int uverbs_direct_fd(struct uverbs_ctx *c, uint64_t which, const void *payload, size_t n,
		     int *fd);

#endif
