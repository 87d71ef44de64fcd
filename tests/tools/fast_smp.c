/* SPDX-License-Identifier: MIT */
/*
 * fast_smp fast|fuse SECONDS: a directed-route SubnGet(NodeInfo) to the
 * local port, over and over for SECONDS, through the fast path's socket
 * ($IBEMU_FAST, abi/fast_wire.h) or through /dev/infiniband/umad0 with
 * plain syscalls (write, poll, read): the same client on both transports,
 * so the rates compare. Prints the first answer's node type and GUID,
 * then "TRANSPORT: N round trips, R/s". Exit 1 on any wrong answer.
 */
#define _GNU_SOURCE	/* memfd_create, in abi/fd_pass.h */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <endian.h>
#include <rdma/ib_user_mad.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"

#define MAD_SIZE 256

static int chan = -1;	/* fast: the request channel */
static int fd = -1;	/* fast: the data socket; fuse: the file */
static int fast;

static void die(const char *what)
{
	fprintf(stderr, "fast_smp: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One request on the channel and its answer; -errno or the result. */
static long request(uint32_t op, uint64_t arg, const void *in, size_t in_len, void *out,
		    size_t out_max, int *got_fd)
{
	struct fast_req rq = { .version = FAST_VERSION, .op = op, .arg = arg };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)in, in_len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = in_len ? 2 : 1 };
	struct fast_reply rp;
	uint8_t buf[sizeof(rp) + 64];
	union fd_cmsg u;
	struct iovec riov = { buf, sizeof(buf) };
	struct msghdr rmsg = { .msg_iov = &riov, .msg_iovlen = 1 };
	ssize_t n;
	int fd_in;

	fd_pass_room(&rmsg, &u);
	if (sendmsg(chan, &msg, MSG_NOSIGNAL) < 0)
		die("send a request");
	n = recvmsg(chan, &rmsg, MSG_CMSG_CLOEXEC);
	if (n < (ssize_t)sizeof(rp))
		die("read an answer");
	memcpy(&rp, buf, sizeof(rp));
	if (out && rp.out_len)
		memcpy(out, buf + sizeof(rp), rp.out_len < out_max ? rp.out_len : out_max);
	if ((fd_in = fd_pass_take(&rmsg)) >= 0) {
		if (got_fd)
			*got_fd = fd_in;
		else
			close(fd_in);
	}
	return (long)rp.ret;
}

static void open_umad0(void)
{
	const char *path = getenv("IBEMU_FAST");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long r;

	if (!fast) {
		if ((fd = open("/dev/infiniband/umad0", O_RDWR)) < 0)
			die("open /dev/infiniband/umad0");
		return;
	}
	if (!path)
		errno = ENOENT, die("IBEMU_FAST is not set");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	chan = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (chan < 0 || connect(chan, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die(path);
	if ((r = request(FAST_OPEN, O_RDWR, "umad0", 5, NULL, 0, &fd)) < 0 || fd < 0)
		errno = (int)-r, die("FAST_OPEN umad0");
}

static long do_ioctl(unsigned long cmd, void *arg, size_t in, size_t out)
{
	if (!fast)
		return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
	return request(FAST_IOCTL, cmd, arg, in, arg, out, NULL);
}

static long do_write(const void *buf, size_t len)
{
	if (!fast)
		return write(fd, buf, len) < 0 ? -errno : (long)len;
	return request(FAST_WRITE, len, buf, len, NULL, 0, NULL);
}

static long do_read(void *buf, size_t len)
{
	struct fast_pkt h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { buf, len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	if (!fast)
		return (n = read(fd, buf, len)) < 0 ? -errno : n;
	n = recvmsg(fd, &msg, 0);
	return n < (ssize_t)sizeof(h) ? -EIO : (long)h.len;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct ib_user_mad_reg_req reg = { .mgmt_class = 0x81, .mgmt_class_version = 1 };
	uint8_t req[64 + MAD_SIZE], resp[64 + MAD_SIZE];
	struct ib_user_mad_hdr *h = (struct ib_user_mad_hdr *)req;
	uint8_t *mad = req + 64;
	double seconds = argc > 2 ? atof(argv[2]) : 1, start;
	unsigned long count = 0;
	long r;

	if (argc < 2 || (strcmp(argv[1], "fast") && strcmp(argv[1], "fuse"))) {
		fprintf(stderr, "usage: fast_smp fast|fuse [SECONDS]\n");
		return 2;
	}
	fast = !strcmp(argv[1], "fast");
	open_umad0();
	if ((r = do_ioctl(IB_USER_MAD_ENABLE_PKEY, NULL, 0, 0)) < 0)
		errno = (int)-r, die("ENABLE_PKEY");
	if ((r = do_ioctl(IB_USER_MAD_REGISTER_AGENT, &reg, sizeof(reg), sizeof(reg))) < 0)
		errno = (int)-r, die("REGISTER_AGENT");

	memset(req, 0, sizeof(req));
	h->id = reg.id;
	h->timeout_ms = 1000;
	h->lid = htobe16(0xffff);	/* directed route from here */
	mad[0] = 1;			/* base version */
	mad[1] = 0x81;			/* directed-route SMP */
	mad[2] = 1;
	mad[3] = 0x01;			/* Get */
	mad[17] = 0x11;			/* NodeInfo */
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;	/* DrSLID, DrDLID */
	start = now_s();
	do {
		uint64_t tid = htobe64(++count);
		struct pollfd p = { .fd = fd, .events = POLLIN };

		memcpy(mad + 8, &tid, 8);
		if ((r = do_write(req, sizeof(req))) != (long)sizeof(req))
			errno = r < 0 ? (int)-r : EIO, die("write");
		if (poll(&p, 1, 5000) != 1)
			errno = ETIMEDOUT, die("poll");
		if ((r = do_read(resp, sizeof(resp))) != (long)sizeof(resp))
			errno = r < 0 ? (int)-r : EIO, die("read");
		/* The upper half of the TID is the kernel's (the agent's). */
		if (resp[64 + 3] != 0x81 || memcmp(resp + 64 + 12, mad + 12, 4) ||
		    ((struct ib_user_mad_hdr *)resp)->status) {
			fprintf(stderr, "fast_smp: wrong answer (method 0x%02x, status %u)\n",
				resp[64 + 3], ((struct ib_user_mad_hdr *)resp)->status);
			return 1;
		}
		if (count == 1) {
			uint64_t guid;

			memcpy(&guid, resp + 64 + 64 + 12, 8);	/* NodeInfo:NodeGUID */
			printf("node type %u, node GUID 0x%016llx\n", resp[64 + 64 + 2],
			       (unsigned long long)be64toh(guid));
		}
	} while (now_s() - start < seconds);
	printf("%s: %lu round trips, %.0f/s\n", argv[1], count, count / (now_s() - start));
	return 0;
}
