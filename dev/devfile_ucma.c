/* SPDX-License-Identifier: MIT */
/*
 * VN_UCMA: the rdma_cm command file of namespace mode (lib/ucma_wire.h,
 * docs/rdmacm.md): one open is one open of the rdma_cm device
 * (kernel/ucma.h). UCMA_IOC_CMD carries a command and brings back what
 * the kernel would copy to the caller; a read takes one event, blocking
 * while none is queued; poll says POLLIN while one is. VN_UCMA_FWD: the
 * same file of an attached host, over the emulator it is attached to
 * (dev/ucma_backend.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "dev/devfile_priv.h"
#include "dev/ucma_backend.h"
#include "kernel/ucma.h"

struct ufile {
	struct devfiles *df;
	const struct ucma_backend *be;
	void *f;
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
};

static struct ufile *ufile_of(const struct fuse_file_info *fi)
{
	return (struct ufile *)(uintptr_t)fi->fh;
}

/* Answer @req with one event, or the error of reading one; false (and no
 * answer) when none is queued and @wait says the read waits for one. */
static bool take_event(fuse_req_t req, struct ufile *uf, size_t size, bool wait)
{
	uint8_t buf[sizeof(struct ucma_wire_cmd)];
	ssize_t n = uf->be->read_event(uf->f, buf, MIN(size, sizeof(buf)));

	if (n == -EAGAIN && wait)
		return false;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
	return true;
}

static bool ufile_readable(void *ctx)
{
	struct ufile *uf = ctx;

	return uf->be->readable(uf->f);
}

static void ufile_reply_parked(void *ctx, const struct parked *p)
{
	take_event(p->req, ctx, p->size, false);
}

static void ufile_wakeup(void *ctx)
{
	struct ufile *uf = ctx;

	devfile_wake_reads(&uf->reads, &uf->ph, ufile_readable, ufile_reply_parked, uf);
}

static void open_ucma(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	const struct ucma_fwd *fwd = v->kind == VN_UCMA_FWD ? v->ctx : NULL;
	struct ufile *uf = g_new0(struct ufile, 1);

	uf->df = df;
	uf->be = fwd ? fwd->be : &ucma_backend_local;
	uf->f = uf->be->open(fwd ? fwd->dev : v->ctx);
	if (!uf->f) {
		int e = errno;

		g_free(uf);
		fuse_reply_err(req, e ? e : EIO);
		return;
	}
	g_queue_init(&uf->reads);
	uf->be->set_wakeup(uf->f, ufile_wakeup, uf);
	fi->fh = (uint64_t)(uintptr_t)uf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	devfile_reply_open(df, req, fi);
}

static void read_ucma(struct devfiles *df, fuse_req_t req, struct vnode *v, size_t size,
		      off_t off, struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);
	struct parked *p;

	/* Nothing queued: a blocking read waits (an attached host's file
	 * whose emulator has gone says EIO at once). */
	if (take_event(req, uf, size, !(fi->flags & O_NONBLOCK)))
		return;
	p = devfile_park(req, df);
	if (!p)
		return;
	p->size = size;
	devfile_park_read(p, &uf->reads);
}

static void ioctl_ucma(fuse_req_t req, struct vnode *v, unsigned int cmd,
		       struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		       size_t out_bufsz)
{
	struct ufile *uf = ufile_of(fi);
	struct ucma_wire_cmd *w;
	uint64_t token;
	int r;

	if (cmd == UCMA_IOC_TOKEN) {
		if ((r = uf->be->token(uf->f, &token)) < 0)
			fuse_reply_err(req, -r);
		else
			fuse_reply_ioctl(req, 0, &token, MIN(out_bufsz, sizeof(token)));
		return;
	}
	if (cmd != UCMA_IOC_CMD) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz < sizeof(*w)) {
		fuse_reply_err(req, EFAULT);
		return;
	}
	w = g_memdup2(in_buf, sizeof(*w));
	if ((r = uf->be->command(uf->f, w)) < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_ioctl(req, 0, w, MIN(out_bufsz, sizeof(*w)));
	g_free(w);
}

static void poll_ucma(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct ufile *uf = ufile_of(fi);
	unsigned revents = POLLOUT | POLLWRNORM;

	if (uf->be->readable(uf->f))
		revents |= POLLIN | POLLRDNORM;
	devfile_poll_reply(req, ph, &uf->ph, revents);
}

static void release_ucma(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);

	devfile_closing(&uf->reads, uf->ph);
	uf->be->release(uf->f);
	g_free(uf);
	fuse_reply_err(req, 0);
}

const struct devfile_ops devfile_ucma_ops = {
	.open = open_ucma,
	.read = read_ucma,
	.write = devfile_no_write,
	.ioctl = ioctl_ucma,
	.poll = poll_ucma,
	.release = release_ucma,
};

/* ---- this emulator's connection manager ------------------------------- */

static void *local_open(void *dev)
{
	return ucma_open(dev);
}

static void local_release(void *f)
{
	ucma_release(f);
}

static void local_set_wakeup(void *f, void (*fn)(void *), void *ctx)
{
	ucma_set_wakeup(f, fn, ctx);
}

static bool local_readable(const void *f)
{
	return ucma_readable(f);
}

static ssize_t local_read_event(void *f, void *buf, size_t count)
{
	return ucma_read_event(f, buf, count);
}

static int local_command(void *f, struct ucma_wire_cmd *w)
{
	ucma_wire_serve(f, w);
	return 0;
}

static int local_token(void *f, uint64_t *token)
{
	*token = ucma_file_token(f);
	return 0;
}

const struct ucma_backend ucma_backend_local = {
	.open = local_open,
	.release = local_release,
	.set_wakeup = local_set_wakeup,
	.readable = local_readable,
	.read_event = local_read_event,
	.command = local_command,
	.token = local_token,
};
