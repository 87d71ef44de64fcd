/* SPDX-License-Identifier: MIT */
/*
 * The fast path's messages (docs/fast-path.md): a umad file opened over a
 * SOCK_SEQPACKET socket instead of FUSE. The client connects to the
 * emulator's fast socket ($IBEMU_FAST) and sends FAST_OPEN; that
 * connection is then the file's request channel (writes and ioctls, each
 * answered by one struct fast_reply), and the reply to the open carries,
 * by SCM_RIGHTS, the file's data socket: one datagram per packet a read()
 * would return, so "readable" means "a MAD is queued" for poll, select and
 * epoll, and a read costs no trip to the emulator. The emulator's umad core
 * decides every errno, TID, timeout and length; a client only carries
 * bytes, and applies the one rule of a too-short read (below).
 *
 * All fields are in the host's byte order: both ends are on one machine.
 */
#ifndef IBEMU_ABI_FAST_WIRE_H
#define IBEMU_ABI_FAST_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define FAST_VERSION	1
/* Payloads up to this travel in the datagram; longer ones (a big RMPP
 * message) in a memfd passed beside it (FAST_F_MEMFD), as one datagram
 * of a Unix socket is bounded by its send buffer (about 208 KiB). */
#define FAST_INLINE_MAX	65536

enum fast_op {
	FAST_OPEN = 1,	/* payload: the device's name ("umad0"); arg: open flags.
			 * "issm0": held while the channel lives, no data
			 * socket; a blocking open is answered when free */
	FAST_WRITE = 2,	/* payload: the bytes of one write(2); arg: their count */
	FAST_IOCTL = 3,	/* arg: the command; payload: its _IOC_SIZE input bytes */
	FAST_SYNC = 4,	/* after the client closed its data socket: answered
			 * once the emulator has released the file if that was
			 * the last reference (close(2) returns after release) */
	FAST_ATTACH = 5,	/* an open file's data socket passed beside: this
				 * channel serves that file too (a forked or exec'd
				 * process's own channel); the answer: the open's
				 * flags, and the device's name as out bytes */
	/* Many hosts (docs/many-hosts.md). */
	FAST_HOST = 6,	/* payload: the attaching host's label, then the
			 * nodes to attach, each NUL-terminated; the answer:
			 * 0, or -errno and one line saying why as out bytes.
			 * The attachment lasts while this channel is open. */
	FAST_SYSFS_LIST = 7,	/* out: the host's mock sysfs, one line per
				 * entry: "d PATH", "f PATH" (an attribute),
				 * "u PATH" (a umad file), "i PATH" (issm);
				 * with arg FAST_LIST_VERBS also "c PATH" (a
				 * verbs command file) and "e PATH" (a verbs
				 * event file), with FAST_LIST_UCMA "m PATH"
				 * (the rdma_cm file) and its class; FAST_OPEN
				 * opens those by PATH */
	FAST_SYSFS_READ = 8,	/* payload: an attribute's PATH; out: its text;
				 * ret: its length, or -errno as the read */
	FAST_ADOPT = 9,	/* on FAST_HOST's channel: a connected socket passed
			 * beside becomes a channel to the attached host's
			 * files (its own host's client connected it, to a
			 * socket only that host can reach: docs/many-hosts.md) */
	FAST_PING = 10,	/* on FAST_HOST's channel: answered at once; arg: the
			 * round trip the host measured with the last one, in
			 * ns (0: none yet), for `ctl status` */
	/* Shared memory (docs/fast-path.md, "The slot"). */
	FAST_SLOT = 11,	/* on a file's channel: the answer passes a memfd of
			 * FAST_SLOT_BYTES holding a struct fast_slot that both
			 * ends map; writes and ioctls may then go there.
			 * EOPNOTSUPP on a channel adopted from another host
			 * (its memory is not this machine's) */
	FAST_RING = 12,	/* the slot holds a request and the emulator was not
			 * looking: never answered on the channel (the answer
			 * comes in the slot) */
	/* The control plane (docs/many-hosts.md, "ibemu ctl on B"). */
	FAST_CTL = 13,	/* on a channel with no file: answered 0, after which
			 * the channel is a control connection (ctl/ctl.c's
			 * protocol, each datagram at most FAST_INLINE_MAX
			 * bytes); -EACCES for a peer that may attach hosts
			 * only, -EOPNOTSUPP where no control socket is */
	FAST_PUSH = 14,	/* on a file's channel, after its reader took a
			 * FAST_F_HELD mark off the data socket: answered 0
			 * once what waited has gone in (as room allows) */
	FAST_VRING = 15,	/* on a verbs command file's channel (arg:
				 * VERBS_RING_ASK, the ring's version and bit 0:
				 * the file takes the direct path's packets in
				 * an inbox, abi/verbs_inbox.h): the answer
				 * passes a memfd of VERBS_RING_BYTES, a struct
				 * verbs_ring (abi/verbs_ring.h) both ends map;
				 * what is queued for the file goes there from
				 * then on. EOPNOTSUPP on an adopted channel,
				 * EPROTONOSUPPORT for another version */
	FAST_VDIRECT = 16,	/* on a verbs command file's channel: payload a
				 * struct verbs_wire_pkt, the header of packets
				 * the file would send; out: a struct
				 * verbs_direct_grant, and the answer passes
				 * the memfd of the sub-ring to write them in
				 * (abi/verbs_inbox.h). EAGAIN: not now (they
				 * go to the emulator) */
	FAST_VINBOX = 17,	/* payload: a struct verbs_inbox_ask; arg: which
				 * fd the answer passes, VERBS_INBOX_* (the
				 * file's own binding page, an eventfd, one of
				 * its own sub-rings) */
	/* The RDMA netlink family's changes (docs/netlink.md). */
	FAST_RDMA_LINK = 18,	/* on a channel with no file; arg: FAST_LINK_*;
				 * payload: its NUL-terminated strings. Answered
				 * 0 or -errno as the kernel's nldev; EPERM for
				 * a process without CAP_NET_ADMIN, EOPNOTSUPP
				 * where the host's tree is not the emulator's */
};

/* FAST_RDMA_LINK's arg, and its strings (kernel/rdma_link.h). */
enum fast_link_op {
	FAST_LINK_RENAME = 0,	/* the device's name, its new name */
	FAST_LINK_ADD = 1,	/* the new device's name, the link type, the netdev */
	FAST_LINK_DEL = 2,	/* the device's name */
};

#define FAST_F_MEMFD	0x1	/* the payload is in the memfd passed beside */
/* On the data socket, a packet of no bytes: the emulator holds back what
 * comes next for this file (its reader is far behind, socket/fastpath.c
 * SOCK_AHEAD_BYTES) until the reader, at this mark, sends FAST_PUSH. A
 * reader takes it and asks; no read(2) returns it. */
#define FAST_F_HELD	0x2
/* FAST_SYSFS_LIST's arg: the asker mirrors verbs files (an older one
 * would refuse lines it does not know). */
#define FAST_LIST_VERBS	0x1
#define FAST_LIST_UCMA	0x2

/* A request on the channel, its payload following in the datagram. */
struct fast_req {
	uint32_t version;	/* FAST_VERSION */
	uint32_t op;		/* enum fast_op */
	uint32_t flags;		/* FAST_F_* */
	uint32_t tag;		/* echoed in the answer (0: the client does not
				 * care): one that stops waiting for an answer
				 * knows it when it comes late, and drops it */
	uint64_t arg;
};

/* The answer to each request, then out_len bytes (an ioctl's output). */
struct fast_reply {
	int64_t ret;		/* >= 0, or -errno as the syscall fails */
	uint32_t out_len;
	uint32_t tag;		/* the request's */
};

/*
 * What one read(2) with room enough returns, on the data socket of any
 * file (kernel/kfile.h): this, then those bytes (a umad file's header,
 * hdr_size bytes, and the MAD or RMPP data; a verbs context's whole
 * records; one event), or FAST_F_MEMFD and a memfd holding them. A read
 * of count < len keeps it and fails as the kernel's: EINVAL when
 * hdr_size is 0, or count < hdr_size + 256, or len <= hdr_size + 256;
 * otherwise ENOSPC with the header and the first 256 bytes copied (a umad
 * header's length field says what is needed: docs/umad.md §4.8).
 */
struct fast_pkt {
	uint32_t len;
	uint16_t hdr_size;
	uint16_t flags;		/* FAST_F_* */
};

#define FAST_MAD_BLOCK	256	/* what a read too short for a long message gets */

/*
 * That rule, for a read of @count bytes of packet @h: the bytes to copy
 * in *@copy, and h->len (the packet is taken), -ENOSPC (the first
 * hdr_size + 256 bytes are copied and the packet stays), or -EINVAL.
 */
static inline int64_t fast_pkt_read(const struct fast_pkt *h, size_t count, size_t *copy)
{
	size_t first = (size_t)h->hdr_size + FAST_MAD_BLOCK;

	*copy = 0;
	if (count < h->hdr_size || (!h->hdr_size && count < h->len))
		return -EINVAL;
	if (count >= h->len) {
		*copy = h->len;
		return h->len;
	}
	if (count < first || h->len <= first)
		return -EINVAL;
	*copy = first;
	return -ENOSPC;
}

/*
 * The slot: one request at a time of one channel, in memory both ends
 * map, so that a write costs no system call while the emulator is looking
 * (it spins on its slots for a while after each request, as on its
 * sockets). The client puts a request (op FAST_WRITE or FAST_IOCTL,
 * inline, at most FAST_SLOT_IN_MAX bytes) in req and in[], then bumps
 * req_seq; if looking is 0 it sends FAST_RING on the channel. The emulator
 * copies the request out before it checks it, answers in rep and out[],
 * and sets ans_seq to req_seq; if sleeping is 1 it wakes ans_seq (a futex
 * word) with FUTEX_WAKE. Each side writes its flag, then a full barrier,
 * then reads the other's: one of them always sees the other (no request
 * is left unseen, no sleeper unwoken).
 */
#define FAST_SLOT_BYTES	4096
#define FAST_SLOT_OUT_MAX	64	/* the largest umad ioctl output */

struct fast_slot {
	uint32_t req_seq;	/* client: bumped when a request is in place */
	uint32_t ans_seq;	/* emulator: = req_seq once answered; a futex word */
	uint32_t looking;	/* emulator: 1 while it will see a new request unrung */
	uint32_t sleeping;	/* client: 1 while it sleeps on ans_seq */
	struct fast_req req;
	uint32_t in_len;	/* bytes in in[] */
	uint32_t reserved;
	struct fast_reply rep;
	uint8_t out[FAST_SLOT_OUT_MAX];	/* rep.out_len of them */
	uint8_t in[];		/* the request's payload */
};

/* The offsets are the protocol's (tests/e2e/fast-slot.sh spells them). */
_Static_assert(sizeof(struct fast_slot) == 128, "struct fast_slot is 128 bytes, in[] at 128");

#define FAST_SLOT_IN_MAX	(FAST_SLOT_BYTES - sizeof(struct fast_slot))

#endif
