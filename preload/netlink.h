/* SPDX-License-Identifier: MIT */
/*
 * The RDMA netlink family (NETLINK_RDMA) as the preloaded library answers
 * it (docs/netlink.md): netlink.c makes the sockets (a datagram socket
 * the library answers into) and nldev.c the answers, from the run's sysfs,
 * as the kernel's drivers/infiniband/core/nldev.c gives them.
 */
#ifndef IBEMU_PRELOAD_NETLINK_H
#define IBEMU_PRELOAD_NETLINK_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

/* A datagram of the answer is at most this big: the kernel's
 * NLMSG_GOODSIZE, which every reader's buffer holds. */
#define NL_DGRAM_MAX	3776

/* The answer to one request, as datagrams (each a run of messages). */
struct nl_out {
	uint8_t *buf;		/* the datagrams, one after another */
	size_t len, cap;
	size_t *ends;		/* where each datagram ends in buf */
	unsigned n, ncap;
	size_t msg;		/* where the message being built starts */
	int failed;		/* out of memory, or past NL_ANSWER_MAX */
};

/* An answer (a dump of every device, say) is at most this big. */
#define NL_ANSWER_MAX	(1u << 20)

/* Start a message of @type in @o (in a new datagram if this one is full
 * enough); end it with nl_end. */
void nl_begin(struct nl_out *o, uint16_t type, uint16_t flags, uint32_t seq, uint32_t portid);
void nl_put(struct nl_out *o, uint16_t attr, const void *data, size_t len);
void nl_put_u8(struct nl_out *o, uint16_t attr, uint8_t v);
void nl_put_u32(struct nl_out *o, uint16_t attr, uint32_t v);
void nl_put_u64(struct nl_out *o, uint16_t attr, uint64_t v);
void nl_put_str(struct nl_out *o, uint16_t attr, const char *s);
void nl_end(struct nl_out *o);
/* NLMSG_ERROR for @req with @err (0: an ACK; else a negative errno), the
 * request's header only, as with NETLINK_CAP_ACK. */
void nl_error(struct nl_out *o, const struct nlmsghdr *req, uint32_t portid, int err);
/* NLMSG_DONE, which ends a dump. */
void nl_done(struct nl_out *o, const struct nlmsghdr *req, uint32_t portid);
void nl_out_free(struct nl_out *o);

/* nldev.c: answer the request @req (its whole length checked) from the
 * socket bound to @portid, into @o. */
void nldev_answer(const struct nlmsghdr *req, uint32_t portid, struct nl_out *o);

#endif
