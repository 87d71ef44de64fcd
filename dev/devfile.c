/* SPDX-License-Identifier: MIT */
/*
 * The umad and issm file operations of both front-ends (devfile.h); the
 * verbs files' are devfile_verbs.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dev/devfile.h"
#include "dev/devfile_priv.h"
#include "dev/umad_backend.h"
#include "dev/usercall.h"
#include "lib/log.h"

/* Per open umad file: fi->fh points here (docs/architecture.md "Lifetime"). */
struct ufile {
	struct devfiles *df;
	const struct umad_backend *be;
	void *file;		/* the backend's open file */
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
	GHashTable *xfers;	/* tid -> struct xfer *, calls in pieces */
};

/* ---- parked requests and interrupts ------------------------------- */

/* Answer EINTR to the interrupted requests parked on @q. */
static void flush_queue(struct devfiles *df, GQueue *q, bool reads)
{
	GList *l, *next;

	for (l = q->head; l; l = next) {
		struct parked *p = l->data;

		next = l->next;
		if (!p->interrupted)
			continue;
		g_queue_delete_link(q, l);
		if (reads)
			g_queue_remove(p->owner, p);
		if (p->pending)	/* a forwarded issm open: not waited for */
			p->fwd->cancel(p->pending);
		fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
}

static gboolean flush_interrupted(gpointer data)
{
	struct devfiles *df = data;

	df->idle = 0;
	flush_queue(df, &df->all_reads, true);
	flush_queue(df, &df->issm_waiters, false);
	return G_SOURCE_REMOVE;
}

/*
 * libfuse may call this with the request locked, from inside
 * fuse_req_interrupt_func(): never reply here, reply from an idle callback.
 */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct parked *p = data;

	(void)req;
	p->interrupted = true;
	if (!p->df->idle)
		p->df->idle = g_idle_add(flush_interrupted, p->df);
}

struct parked *devfile_park(fuse_req_t req, struct devfiles *df)
{
	struct parked *p = g_new0(struct parked, 1);

	p->req = req;
	p->df = df;
	fuse_req_interrupt_func(req, on_interrupt, p);
	if (p->interrupted) {
		fuse_reply_err(req, EINTR);
		g_free(p);
		return NULL;
	}
	return p;
}

void devfile_park_read(struct parked *p, GQueue *owner)
{
	p->owner = owner;
	g_queue_push_tail(owner, p);
	g_queue_push_tail(&p->df->all_reads, p);
}

void devfile_unpark_read(struct parked *p)
{
	g_queue_remove(p->owner, p);
	g_queue_remove(&p->df->all_reads, p);
}

/* ---- poll handles and closing, for every file with parked reads ----- */

void devfile_poll_reply(fuse_req_t req, struct fuse_pollhandle *ph,
			struct fuse_pollhandle **held, unsigned revents)
{
	/* Keep the handle only when we will have something to say. */
	if (ph && !(revents & POLLIN)) {
		if (*held)
			fuse_pollhandle_destroy(*held);
		*held = ph;
	} else if (ph) {
		fuse_pollhandle_destroy(ph);
	}
	fuse_reply_poll(req, revents);
}

void devfile_poll_notify(struct fuse_pollhandle **held)
{
	if (!*held)
		return;
	fuse_lowlevel_notify_poll(*held);
	fuse_pollhandle_destroy(*held);
	*held = NULL;
}

void devfile_wake_reads(GQueue *reads, struct fuse_pollhandle **held,
			bool (*readable)(void *file),
			void (*reply)(void *file, const struct parked *p), void *file)
{
	struct parked *p;

	while (readable(file) && (p = g_queue_peek_head(reads))) {
		devfile_unpark_read(p);
		if (!p->interrupted)
			reply(file, p);
		else
			fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (readable(file))
		devfile_poll_notify(held);
}

void devfile_closing(GQueue *reads, struct fuse_pollhandle *held)
{
	struct parked *p;

	/* The kernel holds the file during a read, so none is parked
	 * unless it was interrupted and not yet answered. */
	while ((p = g_queue_peek_head(reads))) {
		devfile_unpark_read(p);
		fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (held)
		fuse_pollhandle_destroy(held);
}

/* ---- umad files ------------------------------------------------------- */

/*
 * FUSE and CUSE hand a read(2) or write(2) larger than one request to us in
 * pieces at offsets 0, n1, n1+n2, ... of the call (usercall.h); the
 * kernel's ib_umad moves one message per call. A request this large may be
 * the first piece of a longer call: the smallest piece is (max_pages - 1)
 * pages and a byte, 31 pages with CUSE's 32 (FUSE mounts have 256).
 */
#define SPLIT_MIN	(64 * 1024)

/*
 * The rest of one call that comes in pieces, per thread (a thread's pieces
 * come in order, one at a time): the message being read, or how much of a
 * write is still to be acknowledged.
 */
struct xfer {
	size_t next_off;	/* the offset the next piece comes at */
	size_t left;		/* bytes of the call still to come */
	uint8_t *data;		/* read: the message; NULL for a write */
	size_t len, pos;	/* read: its length, bytes given so far */
};

static void xfer_free(gpointer data)
{
	struct xfer *x = data;

	g_free(x->data);
	g_free(x);
}

static pid_t req_tid(fuse_req_t req)
{
	return fuse_req_ctx(req)->pid;
}

/*
 * The byte count of the call a first piece of @size bytes belongs to: @size
 * itself when it cannot be split, else the call's own count. Sets *c when
 * it had to look (the caller clears it).
 */
static size_t call_count(fuse_req_t req, size_t size, bool write, struct user_call *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	if (size < SPLIT_MIN)
		return size;
	ret = user_call_get(req_tid(req), write, c);
	if (ret < 0 || c->count < size) {
		g_warning("cannot see the whole %s(2) of thread %d (%s): taking its first %zu bytes for all of it",
			  write ? "write" : "read", req_tid(req),
			  ret < 0 ? g_strerror(-ret) : "count below the request", size);
		return size;
	}
	return c->count;
}

/*
 * The kernel's read() fails with ENOSPC *and* leaves the header (with the
 * length needed) and the first segment in the caller's buffer (docs/umad.md §4.8); a
 * FUSE error reply carries no data, so write them there ourselves.
 */
static void give_enospc_header(fuse_req_t req, size_t count, const void *data, size_t len)
{
	struct user_call c;
	int ret = user_call_get(req_tid(req), false, &c);

	if (!ret && c.count != count)
		ret = -ESRCH;	/* not the read we are answering */
	if (!ret)
		ret = user_call_write(req_tid(req), &c, data, len);
	if (ret < 0)
		g_warning("cannot give thread %d the header of a long read (%s): it sees ENOSPC without it",
			  req_tid(req), g_strerror(-ret));
	user_call_clear(&c);
}

/* Answer the first piece (@size bytes) of a read of @count bytes. */
static void reply_read(fuse_req_t req, struct ufile *uf, size_t size, size_t count)
{
	size_t hsz = uf->be->hdr_size(uf->file), need = uf->be->next_len(uf->file);
	size_t blen = MIN(count, MAX(need, hsz + MAD_SIZE));
	uint8_t *buf = g_try_malloc(blen ? blen : 1);
	ssize_t n;
	struct xfer *x;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = uf->be->read(uf->file, buf, count);
	if (n == -ENOSPC)
		give_enospc_header(req, count, buf, hsz + MAD_SIZE);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
	} else if ((size_t)n <= size) {
		fuse_reply_buf(req, (char *)buf, (size_t)n);
	} else {
		/* The kernel asks for the rest at offset @size. */
		x = g_new0(struct xfer, 1);
		x->data = buf;
		x->len = (size_t)n;
		x->pos = x->next_off = size;
		x->left = count - size;
		g_hash_table_replace(uf->xfers, GINT_TO_POINTER(req_tid(req)), x);
		fuse_reply_buf(req, (char *)buf, size);
		return;
	}
	g_free(buf);
}

/* A later piece of a call whose first piece was answered above. */
static struct xfer *next_piece(fuse_req_t req, struct ufile *uf, off_t off, bool write)
{
	struct xfer *x = g_hash_table_lookup(uf->xfers, GINT_TO_POINTER(req_tid(req)));

	if (!x || (x->data == NULL) != write || x->next_off != (size_t)off) {
		g_warning("umad: a piece at offset %lld of a %s(2) of thread %d that is not under way",
			  (long long)off, write ? "write" : "read", req_tid(req));
		fuse_reply_err(req, EIO);
		return NULL;
	}
	return x;
}

static void read_more(fuse_req_t req, struct ufile *uf, size_t size, off_t off)
{
	struct xfer *x = next_piece(req, uf, off, false);
	pid_t tid = req_tid(req);	/* a reply frees req */
	size_t n;

	if (!x)
		return;
	n = MIN(size, x->len - x->pos);
	fuse_reply_buf(req, (char *)x->data + x->pos, n);
	x->pos += n;
	x->next_off += n;
	x->left -= MIN(n, x->left);
	/* The kernel asks again only after a full piece, while the call
	 * has room: a short (or empty) piece ends it. */
	if (n < size || !x->left)
		g_hash_table_remove(uf->xfers, GINT_TO_POINTER(tid));
}

/* A packet was queued: answer blocked reads, then notify pollers. */
static bool ufile_readable(void *ctx)
{
	struct ufile *uf = ctx;

	return uf->be->readable(uf->file);
}

static void ufile_reply_parked(void *ctx, const struct parked *p)
{
	reply_read(p->req, ctx, p->size, p->count);
}

static void ufile_wakeup(void *ctx)
{
	struct ufile *uf = ctx;

	devfile_wake_reads(&uf->reads, &uf->ph, ufile_readable, ufile_reply_parked, uf);
}

/* The per-open state of a umad file (NULL for issm files). */
static struct ufile *ufile_of(const struct fuse_file_info *fi)
{
	return (struct ufile *)(uintptr_t)fi->fh;
}

static void open_umad(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	const struct umad_fwd *fwd = v->kind == VN_UMAD_FWD ? v->ctx : NULL;
	struct ufile *uf = g_new0(struct ufile, 1);

	uf->df = df;
	uf->be = fwd ? fwd->be : &umad_backend_local;
	/* Only FUSE mode hooks the open reply (fusefs.c). */
	uf->file = uf->be->open(fwd ? fwd->dev : v->ctx, req_tid(req),
				df->reply_open ? "fuse" : "cuse");
	if (!uf->file) {
		fuse_reply_err(req, errno);
		g_free(uf);
		return;
	}
	g_queue_init(&uf->reads);
	uf->xfers = g_hash_table_new_full(NULL, NULL, NULL, xfer_free);
	uf->be->set_wakeup(uf->file, ufile_wakeup, uf);
	fi->fh = (uint64_t)(uintptr_t)uf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	devfile_reply_open(df, req, fi);
}

static void open_issm(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	struct parked *p;

	fi->direct_io = 1;
	fi->nonseekable = 1;
	fi->fh = 0;
	if (umad_issm_open(v->ctx) == 0) {
		devfile_reply_open(df, req, fi);
		return;
	}
	if (fi->flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	/* Block until the holder closes (down_interruptible, docs/umad.md §7). */
	p = devfile_park(req, df);
	if (!p)
		return;
	p->dev = v->ctx;
	g_queue_push_tail(&df->issm_waiters, p);
}

static void read_umad(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);
	struct user_call c;
	struct parked *p;
	size_t count;

	if (off) {
		read_more(req, uf, size, off);
		return;
	}
	g_hash_table_remove(uf->xfers, GINT_TO_POINTER(req_tid(req)));
	count = call_count(req, size, false, &c);
	user_call_clear(&c);
	if (uf->be->readable(uf->file) || size < uf->be->hdr_size(uf->file) ||
	    (fi->flags & O_NONBLOCK)) {
		reply_read(req, uf, size, count);
		return;
	}
	/* A blocking read waits here until a packet or an interrupt. */
	p = devfile_park(req, df);
	if (!p)
		return;
	p->size = size;
	p->count = count;
	devfile_park_read(p, &uf->reads);
}

static void write_more(fuse_req_t req, struct ufile *uf, size_t size, off_t off)
{
	struct xfer *x = next_piece(req, uf, off, true);
	size_t n;

	if (!x)
		return;
	n = MIN(size, x->left);
	x->left -= n;
	x->next_off += n;
	if (!x->left)
		g_hash_table_remove(uf->xfers, GINT_TO_POINTER(req_tid(req)));
	fuse_reply_write(req, n);
}

/*
 * The first piece of a write longer than one request: the whole message is
 * read out of the caller's buffers and written now, so that an error fails
 * the call as the kernel's would; the later pieces are only acknowledged.
 */
static void write_whole(fuse_req_t req, struct ufile *uf, size_t size,
			const struct user_call *c)
{
	uint8_t *data = NULL;
	struct xfer *x;
	ssize_t n;
	int ret;

	if (uf->be->check_write_size(uf->file, c->count) < 0 ||
	    !(data = g_try_malloc(c->count))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = user_call_read(req_tid(req), c, data, c->count);
	n = ret < 0 ? ret : uf->be->write(uf->file, data, c->count);
	g_free(data);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	x = g_new0(struct xfer, 1);
	x->next_off = size;
	x->left = c->count - size;
	g_hash_table_replace(uf->xfers, GINT_TO_POINTER(req_tid(req)), x);
	fuse_reply_write(req, size);
}

static void write_umad(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);
	struct user_call c;
	ssize_t n;

	if (off) {
		write_more(req, uf, size, off);
		return;
	}
	g_hash_table_remove(uf->xfers, GINT_TO_POINTER(req_tid(req)));
	if (call_count(req, size, true, &c) > size) {
		write_whole(req, uf, size, &c);
		user_call_clear(&c);
		return;
	}
	user_call_clear(&c);
	n = uf->be->write(uf->file, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void ioctl_umad(fuse_req_t req, struct vnode *v, unsigned int cmd,
		       struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		       size_t out_bufsz)
{
	uint8_t buf[64] = { 0 };
	size_t out_len = 0;
	int ret;

	if (in_bufsz > sizeof(buf) || out_bufsz > sizeof(buf)) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz)
		memcpy(buf, in_buf, in_bufsz);
	ret = ufile_of(fi)->be->ioctl(ufile_of(fi)->file, cmd, buf, &out_len);
	out_len = MIN(out_len, out_bufsz);
	if (ret < 0 && !out_len)
		fuse_reply_err(req, -ret);
	else
		/* An error with data (REGISTER_AGENT2 flags) works too. */
		fuse_reply_ioctl(req, ret, out_len ? buf : NULL, out_len);
}

static void poll_umad(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct ufile *uf = ufile_of(fi);
	unsigned revents = POLLOUT | POLLWRNORM;

	if (uf->be->readable(uf->file))
		revents |= POLLIN | POLLRDNORM;
	devfile_poll_reply(req, ph, &uf->ph, revents);
}

/* @d's issm was let go (umad_host_watch_issm): our first waiter for it
 * takes it, unless another front-end's did first. */
static void wake_issm_waiter(void *ctx, struct umad_dev *d)
{
	struct devfiles *df = ctx;
	GList *l;

	for (l = df->issm_waiters.head; l; l = l->next) {
		struct parked *p = l->data;
		struct fuse_file_info fi = { .direct_io = 1, .nonseekable = 1 };

		if (p->dev != d || p->interrupted)
			continue;
		if (umad_issm_open(d) < 0)
			return;
		g_queue_delete_link(&df->issm_waiters, l);
		devfile_reply_open(df, p->req, &fi);
		g_free(p);
		return;
	}
}

static void release_umad(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	struct ufile *uf = ufile_of(fi);

	devfile_closing(&uf->reads, uf->ph);
	g_hash_table_destroy(uf->xfers);
	uf->be->release(uf->file);
	g_free(uf);
	fuse_reply_err(req, 0);
}

/* A file without a read, write or ioctl op fails them as the VFS does:
 * EINVAL, EINVAL, ENOTTY (issm files have only open and release, the
 * kernel's umad_sm_fops). */
void devfile_no_read(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

void devfile_no_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		      off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

void devfile_no_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		      struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		      size_t out_bufsz)
{
	fuse_reply_err(req, ENOTTY);
}

/* No poll op: the VFS's default mask (DEFAULT_POLLMASK). */
void devfile_no_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph)
{
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, POLLIN | POLLOUT);
}

static void release_issm(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	umad_issm_close(v->ctx);	/* wakes a waiter */
	fuse_reply_err(req, 0);
}

/* ---- issm files another emulator serves (umad_backend.h) ---------------- */

/* The emulator answered a parked forwarded open (not interrupted: that
 * cancels it). */
static void issm_fwd_done(void *ctx, void *holding, int err)
{
	struct parked *p = ctx;
	struct fuse_file_info fi = { .direct_io = 1, .nonseekable = 1 };

	g_queue_remove(&p->df->issm_waiters, p);
	if (err) {
		fuse_reply_err(p->req, -err);
	} else {
		fi.fh = (uint64_t)(uintptr_t)holding;
		devfile_reply_open(p->df, p->req, &fi);
	}
	g_free(p);
}

static void open_issm_fwd(struct devfiles *df, fuse_req_t req, struct vnode *v,
			  struct fuse_file_info *fi)
{
	struct issm_fwd *fwd = v->ctx;
	struct parked *p = devfile_park(req, df);

	if (!p)
		return;
	/* Parked for the answer, which may come only once the holder
	 * there lets go (a blocking open); an interrupt cancels it. */
	p->fwd = fwd;
	if (!(p->pending = fwd->open(fwd, fi->flags, issm_fwd_done, p))) {
		fuse_reply_err(req, errno);
		g_free(p);
		return;
	}
	g_queue_push_tail(&df->issm_waiters, p);
}

static void release_issm_fwd(struct devfiles *df, fuse_req_t req, struct vnode *v,
			     struct fuse_file_info *fi)
{
	struct issm_fwd *fwd = v->ctx;

	fwd->release((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* ---- the umad core as a backend (umad_backend.h) ---------------------- */

static void *local_open(void *dev, int pid, const char *path)
{
	struct umad_file *f = umad_open(dev);

	umad_set_client(f, pid, path);
	return f;
}

static void local_set_wakeup(void *f, void (*fn)(void *), void *ctx)
{
	umad_set_wakeup(f, fn, ctx);
}

static bool local_readable(const void *f)
{
	return umad_readable(f);
}

static size_t local_next_len(const void *f)
{
	return umad_next_len(f);
}

static unsigned local_hdr_size(const void *f)
{
	return umad_hdr_size(f);
}

static ssize_t local_read(void *f, void *buf, size_t count)
{
	return umad_read(f, buf, count);
}

static ssize_t local_write(void *f, const void *buf, size_t count)
{
	return umad_write(f, buf, count);
}

static int local_check_write_size(void *f, size_t count)
{
	return umad_check_write_size(f, count);
}

static int local_ioctl(void *f, unsigned cmd, void *arg, size_t *out_len)
{
	return umad_ioctl(f, cmd, arg, out_len);
}

static void local_release(void *f)
{
	umad_release(f);
}

const struct umad_backend umad_backend_local = {
	.open = local_open,
	.set_wakeup = local_set_wakeup,
	.readable = local_readable,
	.next_len = local_next_len,
	.hdr_size = local_hdr_size,
	.read = local_read,
	.write = local_write,
	.check_write_size = local_check_write_size,
	.ioctl = local_ioctl,
	.release = local_release,
};

/* The operations of each kind of device file, as the kernel's
 * file_operations of user_mad.c (umad_fops, umad_sm_fops). */
static const struct devfile_ops umad_ops = {
	.open = open_umad,
	.read = read_umad,
	.write = write_umad,
	.ioctl = ioctl_umad,
	.poll = poll_umad,
	.release = release_umad,
}, issm_ops = {
	.open = open_issm,
	.read = devfile_no_read,
	.write = devfile_no_write,
	.ioctl = devfile_no_ioctl,
	.poll = devfile_no_poll,
	.release = release_issm,
}, issm_fwd_ops = {
	.open = open_issm_fwd,
	.read = devfile_no_read,
	.write = devfile_no_write,
	.ioctl = devfile_no_ioctl,
	.poll = devfile_no_poll,
	.release = release_issm_fwd,
};

/* Any other vnode reaching here (a front-end's mistake) gets ENODEV. */
static void open_none(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	fuse_reply_err(req, ENODEV);
}

static void release_none(struct devfiles *df, fuse_req_t req, struct vnode *v,
			 struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static const struct devfile_ops none_ops = {
	.open = open_none,
	.read = devfile_no_read,
	.write = devfile_no_write,
	.ioctl = devfile_no_ioctl,
	.poll = devfile_no_poll,
	.release = release_none,
};

static const struct devfile_ops *ops_of(const struct vnode *v)
{
	if (!v->ctx)
		return &none_ops;
	switch (v->kind) {
	case VN_UMAD:
	case VN_UMAD_FWD:
		return &umad_ops;
	case VN_ISSM:
		return &issm_ops;
	case VN_ISSM_FWD:
		return &issm_fwd_ops;
	case VN_VCMD:
	case VN_VCMD_FWD:
		return &devfile_vcmd_ops;
	case VN_VEVENTS:
	case VN_VEVENTS_FWD:
		return &devfile_vevents_ops;
	case VN_UCMA:
	case VN_UCMA_FWD:
		return &devfile_ucma_ops;
	default:
		return &none_ops;
	}
}

void devfile_open(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  struct fuse_file_info *fi)
{
	ops_of(v)->open(df, req, v, fi);
}

void devfile_read(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  size_t size, off_t off, struct fuse_file_info *fi)
{
	ops_of(v)->read(df, req, v, size, off, fi);
}

void devfile_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		   off_t off, struct fuse_file_info *fi)
{
	ops_of(v)->write(req, v, buf, size, off, fi);
}

void devfile_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		   struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		   size_t out_bufsz)
{
	ops_of(v)->ioctl(req, v, cmd, fi, in_buf, in_bufsz, out_bufsz);
}

void devfile_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		  struct fuse_pollhandle *ph)
{
	ops_of(v)->poll(req, v, fi, ph);
}

void devfile_release(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     struct fuse_file_info *fi)
{
	ops_of(v)->release(df, req, v, fi);
}

void devfile_reply_open(struct devfiles *df, fuse_req_t req, const struct fuse_file_info *fi)
{
	if (df->reply_open)
		df->reply_open(df->reply_open_data, req, fi);
	else
		fuse_reply_open(req, fi);
}

void devfiles_set_reply_open(struct devfiles *df, devfile_reply_open_fn fn, void *data)
{
	df->reply_open = fn;
	df->reply_open_data = data;
}

struct devfiles *devfiles_new(struct umad_host *host)
{
	struct devfiles *df = g_new0(struct devfiles, 1);

	g_queue_init(&df->issm_waiters);
	g_queue_init(&df->all_reads);
	if ((df->host = host))
		umad_host_watch_issm(host, wake_issm_waiter, df);
	return df;
}

void devfiles_free(struct devfiles *df)
{
	if (!df)
		return;
	if (df->idle)
		g_source_remove(df->idle);
	if (df->host)
		umad_host_unwatch_issm(df->host, wake_issm_waiter, df);
	g_queue_clear_full(&df->all_reads, g_free);
	g_queue_clear_full(&df->issm_waiters, g_free);
	g_free(df);
}
