/* SPDX-License-Identifier: MIT */
/*
 * The umad files of an attached host (`run --remote`) for the programs the
 * fast path's library is not in: static ones, Go, Python opening the
 * files itself, anything run with IBEMU_FAST_PATH=0. devfile.c serves them
 * from our FUSE mount as it serves an emulator's own files, by this table
 * (kernel/kfile.h): each open is a file of the emulator we
 * are attached to, opened over its fast path (an adopted channel and
 * FAST_OPEN, docs/fast-path.md); writes and ioctls are requests on that
 * channel, answered by its umad core; packets are taken from the data
 * socket into a queue here as they come, and read from it by the rules of
 * umad_read (docs/umad.md §4.8). docs/many-hosts.md.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fast/remote_priv.h"
#include "kernel/umad.h"
#include "lib/fast_wire.h"
#include "lib/fd_pass.h"

#define HDR_OLD		56	/* struct ib_user_mad_hdr_old */
#define HDR_PKEY	64	/* struct ib_user_mad_hdr, after ENABLE_PKEY */
#define UMAD_MAGIC	0x1b	/* IB_IOCTL_MAGIC */
#define ENABLE_PKEY	0x1b03	/* _IO(IB_IOCTL_MAGIC, 3) */
#define IOCTL_ARG_MAX	64

struct pkt {
	struct fast_pkt h;
	uint8_t bytes[];	/* h.len: what a read returns */
};

struct fwd_file {
	struct remote_file rf;	/* first: the channel, data socket, its queue
				 * (struct pkt *), waking */
	unsigned hdr_size;	/* when no packet says */
};

/* The next packet off the data socket; NULL when none (or the end). */
static struct pkt *take_pkt(struct remote_file *f)
{
	struct fast_pkt h;
	union fd_cmsg u;
	struct pkt *p;
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n = recv(f->data, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	int memfd;

	if (n != (ssize_t)sizeof(h)) {
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
		    (n > 0 && n < (ssize_t)sizeof(h)))
			f->gone = true;
		return NULL;
	}
	if (h.flags & FAST_F_HELD) {	/* the emulator waits for us to ask */
		if (recv(f->data, &h, sizeof(h), MSG_DONTWAIT) != (ssize_t)sizeof(h) ||
		    remote_file_ask(f, FAST_PUSH, 0, 0, NULL, 0, -1, NULL, NULL) < 0) {
			f->gone = true;
			return NULL;
		}
		return take_pkt(f);
	}
	if (!(p = g_try_malloc(sizeof(*p) + h.len))) {
		f->gone = true;	/* nothing sensible to do but fail the reads */
		return NULL;
	}
	iov[0] = (struct iovec){ &p->h, sizeof(p->h) };
	iov[1] = (struct iovec){ p->bytes, (h.flags & FAST_F_MEMFD) ? 0 : h.len };
	if (h.flags & FAST_F_MEMFD)
		fd_pass_room(&msg, &u);
	n = recvmsg(f->data, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	memfd = n >= 0 && (h.flags & FAST_F_MEMFD) ? fd_pass_take(&msg) : -1;
	if (n >= (ssize_t)sizeof(h) && (h.flags & FAST_F_MEMFD) &&
	    (memfd < 0 || pread(memfd, p->bytes, h.len, 0) != (ssize_t)h.len))
		n = -1;
	if (memfd >= 0)
		close(memfd);
	if (n < (ssize_t)sizeof(h)) {
		g_free(p);
		f->gone = true;
		return NULL;
	}
	return p;
}

/* remote_take_fn: a packet into the queue. */
static bool take(struct remote_file *f)
{
	struct pkt *p = take_pkt(f);

	if (!p)
		return false;
	g_queue_push_tail(&f->q, p);
	f->q_bytes += p->h.len;
	return true;
}

static int fwd_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w, void **file)
{
	struct fwd_file *f = g_new0(struct fwd_file, 1);
	int r = remote_file_open(dev, &f->rf, O_RDWR, take);

	(void)who;
	(void)w;
	if (r < 0) {
		g_free(f);
		return r;
	}
	f->hdr_size = HDR_OLD;
	*file = f;
	return 0;
}

static void fwd_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	remote_file_set_wakeup(file, fn, ctx);	/* rf is the first member */
}

static unsigned fwd_poll(const void *file)
{
	return POLLOUT | POLLWRNORM | (remote_file_readable(file) ? POLLIN | POLLRDNORM : 0);
}

static unsigned fwd_hdr_size(const void *file)
{
	const struct fwd_file *f = file;
	const struct pkt *p = f->rf.q.head ? f->rf.q.head->data : NULL;

	return p ? p->h.hdr_size : f->hdr_size;
}

/* What the next read writes at most: the head packet. */
static size_t fwd_read_len(const void *file)
{
	const struct fwd_file *f = file;
	const struct pkt *p = f->rf.q.head ? f->rf.q.head->data : NULL;

	return p ? p->h.len : 0;
}

/* umad_read's rules on the head packet, whose header the emulator made
 * (its length field already says what a whole read needs). */
static ssize_t fwd_read(void *file, void *buf, size_t count, size_t *filled)
{
	struct fwd_file *f = file;
	struct pkt *p = g_queue_peek_head(&f->rf.q);
	size_t copy;
	int64_t r;

	*filled = 0;
	if (count < fwd_hdr_size(f))
		return -EINVAL;
	if (!p)
		return f->rf.gone ? -EIO : -EAGAIN;
	r = fast_pkt_read(&p->h, count, &copy);
	memcpy(buf, p->bytes, copy);
	if (r < 0) {
		*filled = copy;
		return (ssize_t)r;	/* ENOSPC leaves it at the head */
	}
	g_queue_pop_head(&f->rf.q);
	remote_file_read_done(&f->rf, p->h.len);
	g_free(p);
	return (ssize_t)r;
}

static ssize_t fwd_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	struct fwd_file *f = file;
	int64_t ret;
	int memfd;

	(void)w;
	if (count <= FAST_INLINE_MAX)
		return (ssize_t)remote_file_ask(&f->rf, FAST_WRITE, 0, count, buf, count, -1, NULL, NULL);
	/* A long RMPP message: in a memfd beside the request. */
	if ((memfd = fd_pass_memfd("ibemu-write", buf, count, close)) < 0)
		return -ENOMEM;
	ret = remote_file_ask(&f->rf, FAST_WRITE, FAST_F_MEMFD, count, NULL, 0, memfd, NULL, NULL);
	close(memfd);
	return (ssize_t)ret;
}

static int fwd_check_write_size(void *file, size_t count)
{
	(void)file;
	return count > UMAD_MAX_WRITE ? -ENOMEM : 0;
}

static int fwd_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	struct fwd_file *f = file;
	size_t in = 0, out = 0, got = 0;
	char *bytes = NULL;
	int64_t ret;

	/* Only umad's commands carry bytes (as the library's fast_ioctl). */
	if (_IOC_TYPE(cmd) == UMAD_MAGIC && _IOC_SIZE(cmd) <= IOCTL_ARG_MAX) {
		in = (_IOC_DIR(cmd) & _IOC_WRITE) ? _IOC_SIZE(cmd) : 0;
		out = (_IOC_DIR(cmd) & _IOC_READ) ? _IOC_SIZE(cmd) : 0;
	}
	ret = remote_file_ask(&f->rf, FAST_IOCTL, 0, cmd, arg, in, -1, &bytes, &got);
	*out_len = MIN(got, out);
	if (*out_len)
		memcpy(arg, bytes, *out_len);
	g_free(bytes);
	if (ret == 0 && cmd == ENABLE_PKEY)
		f->hdr_size = HDR_PKEY;
	return (int)ret;
}

/* Closing the data socket releases the file at the emulator. */
static void fwd_release(void *file)
{
	struct fwd_file *f = file;

	remote_file_close(&f->rf, g_free);
	g_free(f);
}

const struct kfile_ops remote_umad_fops = {
	.name = "umad",
	.chardev = true,
	.open = fwd_open,
	.release = fwd_release,
	.read = fwd_read,
	.read_len = fwd_read_len,
	.write = fwd_write,
	.check_write_size = fwd_check_write_size,
	.ioctl = fwd_ioctl,
	.poll = fwd_poll,
	.set_wakeup = fwd_set_wakeup,
};
