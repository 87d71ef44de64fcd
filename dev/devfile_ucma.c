/* SPDX-License-Identifier: MIT */
/*
 * VN_UCMA: the rdma_cm command file of namespace mode (lib/ucma_wire.h,
 * docs/rdmacm.md): one open is one open of the rdma_cm device
 * (kernel/ucma.h). UCMA_IOC_CMD carries a command and brings back what
 * the kernel would copy to the caller; a read takes one event, blocking
 * while none is queued; poll says POLLIN while one is.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "dev/devfile_priv.h"
#include "kernel/ucma.h"
#include "lib/ucma_wire.h"

struct ufile {
	struct devfiles *df;
	struct ucma_file *f;
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
};

static struct ufile *ufile_of(const struct fuse_file_info *fi)
{
	return (struct ufile *)(uintptr_t)fi->fh;
}

static void reply_event(fuse_req_t req, struct ufile *uf, size_t size)
{
	uint8_t buf[sizeof(struct ucma_wire_cmd)];
	ssize_t n;

	if (size > sizeof(buf))
		size = sizeof(buf);
	n = ucma_read_event(uf->f, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
}

static bool ufile_readable(void *ctx)
{
	return ucma_readable(((struct ufile *)ctx)->f);
}

static void ufile_reply_parked(void *ctx, const struct parked *p)
{
	reply_event(p->req, ctx, p->size);
}

static void ufile_wakeup(void *ctx)
{
	struct ufile *uf = ctx;

	devfile_wake_reads(&uf->reads, &uf->ph, ufile_readable, ufile_reply_parked, uf);
}

static void open_ucma(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	struct ufile *uf = g_new0(struct ufile, 1);

	uf->df = df;
	uf->f = ucma_open(v->ctx);
	g_queue_init(&uf->reads);
	ucma_set_wakeup(uf->f, ufile_wakeup, uf);
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

	if (ucma_readable(uf->f) || (fi->flags & O_NONBLOCK)) {
		reply_event(req, uf, size);
		return;
	}
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
	struct ucma_answer a;

	if (cmd == UCMA_IOC_TOKEN) {
		uint64_t token = ucma_file_token(uf->f);

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
	w->len = MIN(w->len, sizeof(w->buf));
	w->optlen = MIN(w->optlen, sizeof(w->buf) - w->len);
	ucma_command_opt(uf->f, w->buf, w->len, w->optlen ? w->buf + w->len : NULL, w->optlen,
			 w->from_token, &a);
	w->ret = (int32_t)a.ret;
	w->resp_addr = a.resp_addr;
	w->resp_len = (uint32_t)a.resp_len;
	memcpy(w->buf, a.resp, a.resp_len);
	fuse_reply_ioctl(req, 0, w, MIN(out_bufsz, sizeof(*w)));
	g_free(w);
}

static void poll_ucma(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct ufile *uf = ufile_of(fi);
	unsigned revents = POLLOUT | POLLWRNORM;

	if (ucma_readable(uf->f))
		revents |= POLLIN | POLLRDNORM;
	devfile_poll_reply(req, ph, &uf->ph, revents);
}

static void release_ucma(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);

	devfile_closing(&uf->reads, uf->ph);
	ucma_release(uf->f);
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
