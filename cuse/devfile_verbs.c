/* SPDX-License-Identifier: MIT */
/*
 * The verbs files of both front-ends (docs/verbs.md "Daemon files"):
 *
 * VN_VCMD, the command file: /dev/infiniband/uverbsN in CUSE mode, and
 * the sysfs file the provider puts over its command fd in both modes. No
 * uverbs command is implemented yet: a write of one fails as the kernel's
 * ib_uverbs_write() fails a command the device does not support.
 *
 * VN_VEVENTS, the async event file (ib_uverbs' async event file): one
 * event record a read, blocking reads parked until an event comes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "cuse/devfile_priv.h"
#include "emulator/uverbs.h"
#include "lib/verbs_wire.h"

/* ---- the command file ------------------------------------------------ */

static void open_vcmd(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	fi->fh = 0;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

/* struct ib_uverbs_cmd_hdr: command, in_words, out_words. */
#define UVERBS_CMD_HDR_SIZE	8

static void write_vcmd(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	/* ib_uverbs_write(): a short header is EINVAL, a command without a
	 * handler EOPNOTSUPP (uapi_get_method). */
	fuse_reply_err(req, size < UVERBS_CMD_HDR_SIZE ? EINVAL : EOPNOTSUPP);
}

static void release_vcmd(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

/* ib_uverbs_fops has no read; its ioctl (RDMA_VERBS_IOCTL) is not served:
 * ENOTTY makes libibverbs use write() and sysfs. */
const struct devfile_ops devfile_vcmd_ops = {
	open_vcmd, devfile_no_read, write_vcmd, devfile_no_ioctl, devfile_no_poll,
	release_vcmd,
};

/* ---- the async event file -------------------------------------------- */

struct efile {
	struct devfiles *df;
	struct uverbs_events *ev;
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
};

static struct efile *efile_of(const struct fuse_file_info *fi)
{
	return (struct efile *)(uintptr_t)fi->fh;
}

static void reply_event(fuse_req_t req, struct efile *ef, size_t size)
{
	struct verbs_wire_event rec;
	ssize_t n = uverbs_events_read(ef->ev, &rec, size);

	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)&rec, (size_t)n);
}

/* An event was queued: answer blocked reads, then notify pollers. */
static void efile_wakeup(void *ctx)
{
	struct efile *ef = ctx;
	struct parked *p;

	while (uverbs_events_readable(ef->ev) && (p = g_queue_peek_head(&ef->reads))) {
		devfile_unpark_read(p);
		if (!p->interrupted)
			reply_event(p->req, ef, p->size);
		else
			fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (uverbs_events_readable(ef->ev))
		devfile_poll_notify(&ef->ph);
}

static void open_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct efile *ef = g_new0(struct efile, 1);

	ef->df = df;
	ef->ev = uverbs_events_open(v->ctx);
	g_queue_init(&ef->reads);
	uverbs_events_set_wakeup(ef->ev, efile_wakeup, ef);
	fi->fh = (uint64_t)(uintptr_t)ef;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void read_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 size_t size, off_t off, struct fuse_file_info *fi)
{
	struct efile *ef = efile_of(fi);
	struct parked *p;

	/* ib_uverbs_event_read(): EINVAL for a short buffer, then one event,
	 * EAGAIN when none and O_NONBLOCK, else wait. */
	if (size < sizeof(struct verbs_wire_event) || uverbs_events_readable(ef->ev) ||
	    (fi->flags & O_NONBLOCK)) {
		reply_event(req, ef, size);
		return;
	}
	p = devfile_park(req, df);
	if (!p)
		return;
	p->size = size;
	devfile_park_read(p, &ef->reads);
}

static void poll_vevents(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
			 struct fuse_pollhandle *ph)
{
	struct efile *ef = efile_of(fi);
	unsigned revents = uverbs_events_readable(ef->ev) ? POLLIN | POLLRDNORM : 0;

	devfile_poll_reply(req, ph, &ef->ph, revents);
}

static void release_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			    struct fuse_file_info *fi)
{
	struct efile *ef = efile_of(fi);

	devfile_closing(&ef->reads, ef->ph);
	uverbs_events_close(ef->ev);
	g_free(ef);
	fuse_reply_err(req, 0);
}

/* ib_uverbs_async_event_fops: no write, no ioctl. */
const struct devfile_ops devfile_vevents_ops = {
	open_vevents, read_vevents, devfile_no_write, devfile_no_ioctl, poll_vevents,
	release_vevents,
};
