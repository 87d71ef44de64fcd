/* SPDX-License-Identifier: MIT */
/*
 * The data path over the emulator's fast socket (docs/verbs.md "Data
 * path"): where the program runs with $IBEMU_FAST (ibemu run and exec,
 * a host of run --hosts, an attached host), a context opens its command
 * file there as well (FAST_OPEN by its sysfs path, abi/fast_wire.h): its
 * packet records go as FAST_WRITE requests and its QP ioctls as
 * FAST_IOCTL on that channel, and what the daemon queues for it comes as
 * records in a ring both map (abi/verbs_ring.h, read in ring.c): a
 * program that polls its CQ takes them itself, a thread of ours when it
 * does not (an attached host's channel has no ring: they come as
 * datagrams on the data socket). No FUSE request either way: a Unix
 * socket's round trip instead of the FUSE device's for what goes out, a
 * load for what comes in. The FUSE file stays the command fd, for what
 * libibverbs writes there itself (CREATE_COMP_CHANNEL) and its upcalls.
 * Without $IBEMU_FAST, with IBEMU_FAST_PATH=0, or when the socket does
 * not answer, everything goes through the FUSE file as before.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "abi/verbs_ring.h"
#include "verbs/provider.h"

_Static_assert(FAST_SEND_MAX <= FAST_INLINE_MAX, "a FAST_WRITE of packets fits a request");

/* Is the fast path there and not turned off? */
static const char *fast_socket(void)
{
	const char *path = getenv("IBEMU_FAST"), *off = getenv("IBEMU_FAST_PATH");

	if (!path || !*path || (off && !strcmp(off, "0")))
		return NULL;
	return path;
}

int64_t ibemu_fast_ask(struct ibemu_context *ctx, uint32_t op, uint64_t arg, const void *in,
		       size_t n, void *out, size_t out_max, int *fd)
{
	struct fast_req rq = { .version = FAST_VERSION, .op = op, .arg = arg };
	struct fast_reply rp;
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)in, n } };
	struct iovec riov[2] = { { &rp, sizeof(rp) }, { out, out_max } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = n ? 2 : 1 };
	struct msghdr r = { .msg_iov = riov, .msg_iovlen = out_max ? 2 : 1 };
	union fd_cmsg u;
	ssize_t got;
	int e = 0;

	pthread_mutex_lock(&ctx->fast_lock);
	while ((got = sendmsg(ctx->fast_chan, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (got >= 0) {
		if (fd)
			fd_pass_room(&r, &u);
		while ((got = recvmsg(ctx->fast_chan, &r, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
			;
	}
	e = got < 0 ? errno : EIO;
	pthread_mutex_unlock(&ctx->fast_lock);
	if (fd)
		*fd = got > 0 ? fd_pass_take(&r) : -1;
	if (got < (ssize_t)sizeof(rp))
		return -e;	/* the daemon is gone */
	return rp.ret;
}

int ibemu_fast_open(struct ibemu_context *ctx, const char *dev_path)
{
	const char *sock = fast_socket(), *dev = strrchr(dev_path, '/');
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128];
	int64_t ret;
	int data = -1;

	ctx->fast_chan = ctx->fast_data = -1;
	if (!sock || !dev || strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	/* The file as the daemon's mock sysfs names it (fastpath_verbs.h). */
	snprintf(path, sizeof(path), "infiniband_verbs%s/" VERBS_WIRE_CMD, dev);
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	ctx->fast_chan = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctx->fast_chan < 0)
		return -1;
	pthread_mutex_init(&ctx->fast_lock, NULL);
	if (connect(ctx->fast_chan, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (ret = ibemu_fast_ask(ctx, FAST_OPEN, 0, path, strlen(path), NULL, 0, &data)) < 0 || data < 0) {
		/* An emulator without it (or whose socket is gone): FUSE. */
		close(ctx->fast_chan);
		if (data >= 0)
			close(data);
		pthread_mutex_destroy(&ctx->fast_lock);
		ctx->fast_chan = -1;
		return -1;
	}
	ctx->fast_data = data;
	/* The ring; without it (an attached host's channel, adopted by
	 * another machine's emulator) records come on the data socket.
	 * Its version, and bit 0: the direct path's senders may write for
	 * this context too (direct.c), unless IBEMU_DIRECT=0 keeps it out. */
	if (ibemu_fast_ask(ctx, FAST_VRING, VERBS_RING_ASK(!ibemu_direct_off()), NULL, 0, NULL, 0,
			   &data) == 0 &&
	    data >= 0) {
		void *m = mmap(NULL, VERBS_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, data, 0);

		if (m != MAP_FAILED)
			ctx->ring = m;
	}
	if (data >= 0 && data != ctx->fast_data)
		close(data);
	return 0;
}

void ibemu_fast_close(struct ibemu_context *ctx)
{
	if (ctx->fast_chan < 0)
		return;
	/* The daemon's file goes with the channel: its QP numbers too. */
	ibemu_direct_close(ctx);
	if (ctx->ring)
		munmap(ctx->ring, VERBS_RING_BYTES);
	ctx->ring = NULL;
	close(ctx->fast_chan);
	close(ctx->fast_data);
	pthread_mutex_destroy(&ctx->fast_lock);
	ctx->fast_chan = ctx->fast_data = -1;
}

int ibemu_fast_ioc(struct ibemu_context *ctx, unsigned long cmd, void *arg)
{
	int64_t ret;

	if (cmd == VERBS_IOC_SEND) {
		const struct verbs_ioc_send *s = arg;

		ret = ibemu_fast_ask(ctx, FAST_WRITE, s->len, s->data, s->len, NULL, 0, NULL);
	} else {
		/* A QP's: its struct there and back (fast_verbs_request). */
		ret = ibemu_fast_ask(ctx, FAST_IOCTL, cmd, arg, _IOC_SIZE(cmd), arg, _IOC_SIZE(cmd), NULL);
	}
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
}
