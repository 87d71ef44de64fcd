/* SPDX-License-Identifier: MIT */
/*
 * read, write and ioctl of a fast-path umad file. A read takes the next
 * packet from the data socket, where the emulator put it whole (one
 * datagram, or a memfd for a long RMPP message); a read too short for it
 * leaves it queued and fails as ib_umad's (docs/umad.md §4.8), the one
 * rule applied here. Writes and ioctls are requests on the channel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "preload/fast.h"	/* first: real_close, for abi/fd_pass.h */

#define HDR_MIN		56	/* struct ib_user_mad_hdr_old: no header is shorter */
#define UMAD_MAGIC	0x1b	/* IB_IOCTL_MAGIC */
#define IOCTL_ARG_MAX	64	/* the largest umad ioctl argument */

/* Take the packet whose header @h was peeked: into @buf, @count bytes
 * long, or the kernel's error with the packet left queued. */
static ssize_t take(int fd, const struct fast_pkt *h, void *buf, size_t count)
{
	union fd_cmsg u;
	struct fast_pkt got;
	size_t want;
	int64_t r = fast_pkt_read(h, count, &want);
	struct iovec iov[2] = { { &got, sizeof(got) }, { buf, 0 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	int flags = MSG_DONTWAIT | MSG_CMSG_CLOEXEC, memfd;
	ssize_t n;

	if (r == -EINVAL)
		return r;
	if (r == -ENOSPC)	/* copied, but left queued */
		flags |= MSG_PEEK;
	if (h->flags & FAST_F_MEMFD)
		fd_pass_room(&msg, &u);
	else
		iov[1].iov_len = want;
	n = recvmsg(fd, &msg, flags);
	memfd = n >= 0 && (h->flags & FAST_F_MEMFD) ? fd_pass_take(&msg) : -1;
	if (n < (ssize_t)sizeof(got)) {
		if (memfd >= 0)
			real_close(memfd);
		return -EIO;
	}
	if (h->flags & FAST_F_MEMFD) {
		if (memfd < 0)
			return -EIO;
		n = pread(memfd, buf, want, 0);
		real_close(memfd);
		if (n != (ssize_t)want)
			return -EIO;
	}
	return (ssize_t)r;
}

/* The FAST_F_HELD mark was peeked: take it; -EINPROGRESS says to send
 * FAST_PUSH (abi/fast_wire.h). */
static ssize_t held(int fd)
{
	struct fast_pkt h;

	return recv(fd, &h, sizeof(h), MSG_DONTWAIT) == (ssize_t)sizeof(h) ? -EINPROGRESS : -EIO;
}

ssize_t fast_read(struct fast_obj *o, int fd, void *buf, size_t count)
{
	struct fast_pkt h;
	ssize_t n, r;
	int hold = -1, at = fd;

	if ((o->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	/* The kernel refuses a read shorter than the file's header before
	 * it waits; the header's size is known here with a packet only. */
	if (count < HDR_MIN)
		return -EINVAL;
	for (;;) {
		pthread_mutex_lock(&o->read_lock);
		n = recv(at, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(h) && (h.flags & FAST_F_HELD))
			r = held(at);
		else
			r = n == (ssize_t)sizeof(h) ? take(at, &h, buf, count) : n < 0 ? -errno : -EIO;
		pthread_mutex_unlock(&o->read_lock);
		if (r == -EINPROGRESS) {	/* the mark: ask for the rest */
			if ((r = fast_request(o, at, FAST_PUSH, 0, NULL, 0, NULL, 0)) < 0)
				break;
			continue;
		}
		if (r != -EAGAIN)
			break;
		/* About to wait: hold the socket itself, as the kernel's read
		 * holds its file, so that another thread's close of @fd
		 * neither ends the wait nor lends it the next file given
		 * that number (the MAD that comes is this read's). */
		if (hold < 0) {
			int fl = real_getfl(fd);

			if (fl >= 0 && (fl & O_NONBLOCK))
				break;	/* -EAGAIN, as the file says */
			if (fl < 0 || (hold = real_dup_cloexec(fd)) < 0 ||
			    !fast_ident_is(hold, &o->data_id)) {
				r = -EBADF;	/* closed before we held it */
				break;
			}
			at = hold;
		}
		/* Wait as the socket's own O_NONBLOCK says; a signal ends
		 * the wait as it ends ib_umad's (EINTR, or a restart). */
		n = recv(at, &h, sizeof(h), MSG_PEEK);
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;	/* 0: the emulator is gone */
			break;
		}
	}
	if (hold >= 0)
		real_close(hold);
	return r;
}

ssize_t fast_write(struct fast_obj *o, int fd, const void *buf, size_t count)
{
	if ((o->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	return fast_request(o, fd, FAST_WRITE, count, buf, count, NULL, 0);
}

int fast_ioctl(struct fast_obj *o, int fd, unsigned long cmd, void *arg)
{
	size_t in = 0, out = 0;

	/* The VFS answers these for every file, before the driver. */
	if (cmd == FIONBIO || cmd == FIOASYNC || cmd == FIOCLEX || cmd == FIONCLEX)
		return real_ioctl(fd, cmd, arg);
	/* Only umad's commands carry bytes; the emulator answers any other
	 * (ENOTTY), so no argument of a command we do not know is read. */
	if (_IOC_TYPE(cmd) == UMAD_MAGIC && _IOC_SIZE(cmd) <= IOCTL_ARG_MAX) {
		in = (_IOC_DIR(cmd) & _IOC_WRITE) ? _IOC_SIZE(cmd) : 0;
		out = (_IOC_DIR(cmd) & _IOC_READ) ? _IOC_SIZE(cmd) : 0;
		if ((in || out) && !arg)
			return -EFAULT;
	}
	return (int)fast_request(o, fd, FAST_IOCTL, (uint32_t)cmd, arg, in, out ? arg : NULL, out);
}
