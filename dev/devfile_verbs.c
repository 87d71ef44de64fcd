/* SPDX-License-Identifier: MIT */
/*
 * The verbs files of both front-ends (docs/verbs.md "Daemon files"):
 *
 * VN_VCMD, the command file: /dev/infiniband/uverbsN in CUSE mode, and
 * the sysfs file the provider puts over its command fd in both modes: one
 * open is one verbs context's way to the fabric (lib/verbs_wire.h). Of the
 * uverbs commands only CREATE_COMP_CHANNEL is served; a write of another
 * fails as the kernel's ib_uverbs_write() fails a command the device does
 * not support.
 *
 * VN_VEVENTS, the async event file (ib_uverbs' async event file): one
 * event record a read, blocking reads parked until an event comes.
 *
 * Both over this emulator's verbs devices, or as VN_VCMD_FWD and
 * VN_VEVENTS_FWD over another's (dev/verbs_backend.h): a completion
 * channel's upcall is ours either way, as only a process here can be given
 * its file descriptor.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "dev/devfile_priv.h"
#include "dev/verbs_backend.h"
#include "kernel/uverbs.h"
#include "lib/verbs_wire.h"

/* The backend and device a vnode names. */
static const struct verbs_backend *backend_of(const struct vnode *v, void **dev)
{
	const struct verbs_fwd *fwd =
		v->kind == VN_VCMD_FWD || v->kind == VN_VEVENTS_FWD ? v->ctx : NULL;

	*dev = fwd ? fwd->dev : v->ctx;
	return fwd ? fwd->be : &verbs_backend_local;
}

/* ---- the command file ------------------------------------------------ */

/*
 * One open: a verbs context (kernel/uverbs.h). Reads block like the
 * event file's; a CREATE_COMP_CHANNEL write is held until the provider,
 * asked by an upcall record, has made the channel in the writer's process
 * and says so with VERBS_IOC_UPCALL_DONE (docs/verbs.md "Completion
 * channels"): only that process can make a file descriptor there.
 */
struct cfile {
	struct devfiles *df;
	const struct verbs_backend *be;
	void *ctx;		/* the backend's context */
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
	GHashTable *upcalls;	/* id -> struct held_write *, owned */
	uint32_t next_id;
};

struct held_write {
	fuse_req_t req;
	size_t size;
};

/* Upcalls one context may have unanswered: a provider that never answers
 * holds this many writers, no more. */
#define UPCALLS_MAX	64

static struct cfile *cfile_of(const struct fuse_file_info *fi)
{
	return (struct cfile *)(uintptr_t)fi->fh;
}

static void reply_recs(fuse_req_t req, struct cfile *cf, size_t size)
{
	char *buf = g_malloc(size);
	ssize_t n = cf->be->ctx_read(cf->ctx, buf, size);

	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	g_free(buf);
}

static bool cfile_readable(void *ctx)
{
	struct cfile *cf = ctx;

	return cf->be->ctx_readable(cf->ctx);
}

static void cfile_reply_parked(void *ctx, const struct parked *p)
{
	reply_recs(p->req, ctx, p->size);
}

/* A record was queued: answer blocked reads, then notify pollers. */
static void cfile_wakeup(void *ctx)
{
	struct cfile *cf = ctx;

	devfile_wake_reads(&cf->reads, &cf->ph, cfile_readable, cfile_reply_parked, cf);
}

static void answer_held(void *data)
{
	struct held_write *h = data;

	fuse_reply_err(h->req, EIO);
	g_free(h);
}

static void open_vcmd(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	struct cfile *cf;
	void *dev;
	const struct verbs_backend *be = backend_of(v, &dev);
	void *ctx = be->ctx_open(dev);

	if (!ctx) {
		fuse_reply_err(req, errno);
		return;
	}
	cf = g_new0(struct cfile, 1);
	cf->df = df;
	cf->be = be;
	cf->ctx = ctx;
	g_queue_init(&cf->reads);
	cf->upcalls = g_hash_table_new_full(NULL, NULL, NULL, answer_held);
	be->ctx_set_wakeup(cf->ctx, cfile_wakeup, cf);
	fi->fh = (uint64_t)(uintptr_t)cf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	devfile_reply_open(df, req, fi);
}

/* struct ib_uverbs_cmd_hdr: command, in_words, out_words. */
#define UVERBS_CMD_HDR_SIZE	8
/* ...and struct ib_uverbs_create_comp_channel: the response pointer. */
#define UVERBS_CREATE_COMP_CHANNEL_SIZE	16

static void comp_channel_upcall(fuse_req_t req, struct cfile *cf, const char *buf, size_t size)
{
	struct verbs_wire_upcall up = { .rec = { VERBS_REC_UPCALL, sizeof(up) } };
	struct held_write *h;

	/* ib_uverbs_write(): the command's own size, or EINVAL. */
	if (size < UVERBS_CREATE_COMP_CHANNEL_SIZE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (g_hash_table_size(cf->upcalls) >= UPCALLS_MAX) {
		fuse_reply_err(req, EMFILE);
		return;
	}
	up.id = ++cf->next_id;
	up.command = VERBS_CMD_CREATE_COMP_CHANNEL;
	memcpy(&up.response, buf + UVERBS_CMD_HDR_SIZE, sizeof(up.response));
	h = g_new0(struct held_write, 1);
	h->req = req;
	h->size = size;
	g_hash_table_insert(cf->upcalls, GUINT_TO_POINTER(up.id), h);
	cf->be->ctx_queue(cf->ctx, &up, sizeof(up));
}

static void write_vcmd(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct cfile *cf = cfile_of(fi);
	uint32_t command;
	ssize_t n;

	/* ib_uverbs_write(): a short header is EINVAL, a command without a
	 * handler EOPNOTSUPP (uapi_get_method). */
	if (size < UVERBS_CMD_HDR_SIZE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&command, buf, sizeof(command));
	if ((command & 0xffff0000u) == VERBS_REC_MAGIC) {
		n = cf->be->ctx_write(cf->ctx, buf, size);
		if (n < 0)
			fuse_reply_err(req, (int)-n);
		else
			fuse_reply_write(req, (size_t)n);
	} else if (command == VERBS_CMD_CREATE_COMP_CHANNEL) {
		comp_channel_upcall(req, cf, buf, size);
	} else {
		fuse_reply_err(req, EOPNOTSUPP);
	}
}

static void read_vcmd(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct cfile *cf = cfile_of(fi);
	struct parked *p;

	if (cf->be->ctx_readable(cf->ctx) || (fi->flags & O_NONBLOCK)) {
		reply_recs(req, cf, size);
		return;
	}
	p = devfile_park(req, df);
	if (!p)
		return;
	p->size = size;
	devfile_park_read(p, &cf->reads);
}

static void ioctl_vcmd(fuse_req_t req, struct vnode *v, unsigned int cmd,
		       struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		       size_t out_bufsz)
{
	struct cfile *cf = cfile_of(fi);
	_Alignas(8) char qp[VERBS_IOC_QP_ARG_MAX];
	size_t qp_len = _IOC_SIZE(cmd);
	struct verbs_ioc_upcall_done done;
	struct held_write *h;
	int r;

	if (verbs_ioc_is_qp(cmd)) {
		if (in_bufsz < qp_len) {
			fuse_reply_err(req, EFAULT);
			return;
		}
		memcpy(qp, in_buf, qp_len);
		r = cf->be->ctx_ioctl(cf->ctx, cmd, qp);
		if (r < 0)
			fuse_reply_err(req, -r);
		else
			fuse_reply_ioctl(req, 0, qp, MIN(out_bufsz, qp_len));
		return;
	}
	switch (cmd) {
	case VERBS_IOC_UPCALL_DONE:
		if (in_bufsz < sizeof(done)) {
			fuse_reply_err(req, EFAULT);
			return;
		}
		memcpy(&done, in_buf, sizeof(done));
		h = g_hash_table_lookup(cf->upcalls, GUINT_TO_POINTER(done.id));
		if (!h) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		g_hash_table_steal(cf->upcalls, GUINT_TO_POINTER(done.id));
		if (done.error > 0)
			fuse_reply_err(h->req, done.error);
		else
			fuse_reply_write(h->req, h->size);
		g_free(h);
		fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	case VERBS_IOC_SEND: {
		const struct verbs_ioc_send *send = in_buf;
		ssize_t n;

		if (in_bufsz < sizeof(*send) || send->len > sizeof(send->data)) {
			fuse_reply_err(req, in_bufsz < sizeof(*send) ? EFAULT : EINVAL);
			return;
		}
		n = cf->be->ctx_write(cf->ctx, send->data, send->len);
		if (n < 0)
			fuse_reply_err(req, (int)-n);
		else
			fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	}
	case VERBS_IOC_WAKE: {
		struct verbs_wire_rec wake = { VERBS_REC_WAKE, sizeof(wake) };

		cf->be->ctx_queue(cf->ctx, &wake, sizeof(wake));
		fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	}
	default:
		/* RDMA_VERBS_IOCTL is not served: ENOTTY makes libibverbs use
		 * write() and sysfs. */
		fuse_reply_err(req, ENOTTY);
	}
}

static void poll_vcmd(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct cfile *cf = cfile_of(fi);
	unsigned revents = POLLOUT | POLLWRNORM;

	if (cf->be->ctx_readable(cf->ctx))
		revents |= POLLIN | POLLRDNORM;
	devfile_poll_reply(req, ph, &cf->ph, revents);
}

static void release_vcmd(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct cfile *cf = cfile_of(fi);

	devfile_closing(&cf->reads, cf->ph);
	g_hash_table_destroy(cf->upcalls);	/* held writes fail with EIO */
	cf->be->ctx_close(cf->ctx);
	g_free(cf);
	fuse_reply_err(req, 0);
}

const struct devfile_ops devfile_vcmd_ops = {
	.open = open_vcmd,
	.read = read_vcmd,
	.write = write_vcmd,
	.ioctl = ioctl_vcmd,
	.poll = poll_vcmd,
	.release = release_vcmd,
};

/* ---- the async event file -------------------------------------------- */

struct efile {
	struct devfiles *df;
	const struct verbs_backend *be;
	void *ev;		/* the backend's event queue */
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
	ssize_t n = ef->be->events_read(ef->ev, &rec, MIN(size, sizeof(rec)));

	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)&rec, (size_t)n);
}

static bool efile_readable(void *ctx)
{
	struct efile *ef = ctx;

	return ef->be->events_readable(ef->ev);
}

static void efile_reply_parked(void *ctx, const struct parked *p)
{
	reply_event(p->req, ctx, p->size);
}

/* An event was queued: answer blocked reads, then notify pollers. */
static void efile_wakeup(void *ctx)
{
	struct efile *ef = ctx;

	devfile_wake_reads(&ef->reads, &ef->ph, efile_readable, efile_reply_parked, ef);
}

static void open_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct efile *ef;
	void *dev;
	const struct verbs_backend *be = backend_of(v, &dev);
	void *ev = be->events_open(dev);

	if (!ev) {
		fuse_reply_err(req, errno);
		return;
	}
	ef = g_new0(struct efile, 1);
	ef->df = df;
	ef->be = be;
	ef->ev = ev;
	g_queue_init(&ef->reads);
	be->events_set_wakeup(ef->ev, efile_wakeup, ef);
	fi->fh = (uint64_t)(uintptr_t)ef;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	devfile_reply_open(df, req, fi);
}

static void read_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 size_t size, off_t off, struct fuse_file_info *fi)
{
	struct efile *ef = efile_of(fi);
	struct parked *p;

	/* ib_uverbs_event_read(): EINVAL for a short buffer, then one event,
	 * EAGAIN when none and O_NONBLOCK, else wait. */
	if (size < sizeof(struct verbs_wire_event) || ef->be->events_readable(ef->ev) ||
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
	unsigned revents = ef->be->events_readable(ef->ev) ? POLLIN | POLLRDNORM : 0;

	devfile_poll_reply(req, ph, &ef->ph, revents);
}

static void release_vevents(struct devfiles *df, fuse_req_t req, struct vnode *v,
			    struct fuse_file_info *fi)
{
	struct efile *ef = efile_of(fi);

	devfile_closing(&ef->reads, ef->ph);
	ef->be->events_close(ef->ev);
	g_free(ef);
	fuse_reply_err(req, 0);
}

/* ib_uverbs_async_event_fops: no write, no ioctl. */
const struct devfile_ops devfile_vevents_ops = {
	.open = open_vevents,
	.read = read_vevents,
	.write = devfile_no_write,
	.ioctl = devfile_no_ioctl,
	.poll = poll_vevents,
	.release = release_vevents,
};

/* ---- this emulator's verbs devices as a backend (verbs_backend.h) ------- */

static void *local_ctx_open(void *dev) { return uverbs_ctx_open(dev); }
static void local_ctx_close(void *c) { uverbs_ctx_close(c); }
static void local_ctx_set_wakeup(void *c, void (*fn)(void *), void *ctx)
{
	uverbs_ctx_set_wakeup(c, fn, ctx);
}
static bool local_ctx_readable(const void *c) { return uverbs_ctx_readable(c); }
static ssize_t local_ctx_write(void *c, const void *buf, size_t count)
{
	return uverbs_ctx_write(c, buf, count);
}
static ssize_t local_ctx_read(void *c, void *buf, size_t count)
{
	return uverbs_ctx_read(c, buf, count);
}
static void local_ctx_queue(void *c, const void *rec, size_t len) { uverbs_ctx_queue(c, rec, len); }
static int local_ctx_ioctl(void *c, unsigned cmd, void *arg) { return uverbs_ctx_ioctl(c, cmd, arg); }
static void *local_events_open(void *dev) { return uverbs_events_open(dev); }
static void local_events_close(void *ev) { uverbs_events_close(ev); }
static void local_events_set_wakeup(void *ev, void (*fn)(void *), void *ctx)
{
	uverbs_events_set_wakeup(ev, fn, ctx);
}
static bool local_events_readable(const void *ev) { return uverbs_events_readable(ev); }
static ssize_t local_events_read(void *ev, void *buf, size_t count)
{
	return uverbs_events_read(ev, buf, count);
}

const struct verbs_backend verbs_backend_local = {
	.ctx_open = local_ctx_open,
	.ctx_close = local_ctx_close,
	.ctx_set_wakeup = local_ctx_set_wakeup,
	.ctx_readable = local_ctx_readable,
	.ctx_write = local_ctx_write,
	.ctx_read = local_ctx_read,
	.ctx_queue = local_ctx_queue,
	.ctx_ioctl = local_ctx_ioctl,
	.events_open = local_events_open,
	.events_close = local_events_close,
	.events_set_wakeup = local_events_set_wakeup,
	.events_readable = local_events_readable,
	.events_read = local_events_read,
};
