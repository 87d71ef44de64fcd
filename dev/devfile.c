/* SPDX-License-Identifier: MIT */
/*
 * Every device file of both front-ends (devfile.h), over its kind's table
 * (kernel/kfile.h): what FUSE and CUSE add to the table is written here
 * once, whatever the kind: parked reads and opens, interrupts, poll
 * handles, and calls larger than one request, which come in pieces.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "dev/devfile.h"
#include "dev/usercall.h"
#include "lib/log.h"

/* Per open file: fi->fh points here (docs/architecture.md "Lifetime"). */
struct dfile {
	struct devfiles *df;
	const struct kfile_ops *ops;
	void *file;		/* the table's open file */
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
	GHashTable *xfers;	/* tid -> struct xfer *, calls in pieces */
};

/* A request held for a later reply: a blocking read, or an open or a
 * write the table answers later (KFILE_LATER). */
struct parked {
	struct kfile_wait w;	/* an open's or a write's */
	fuse_req_t req;
	size_t size;		/* read: the first piece's size */
	size_t count;		/* read: the call's (usercall.h) */
	GQueue *owner;		/* read: its open file's queue */
	struct vnode *v;	/* open: the file, to cancel it */
	uint64_t unique;	/* open: the request's id (devfile.h) */
	struct dfile *f;	/* write: its open file, to cancel it */
	bool interrupted;
	struct devfiles *df;	/* NULL: a write left when the front-end went */
};

struct devfiles {
	guint idle;		/* pending flush of interrupted requests */
	GQueue opens;		/* struct parked *, opens answered later */
	GQueue all_reads;	/* every parked read, for interrupts */
	GQueue writes;		/* struct parked *, writes answered later */
	devfile_reply_open_fn reply_open;	/* NULL: fuse_reply_open */
	void *reply_open_data;
};

static struct dfile *dfile_of(const struct fuse_file_info *fi)
{
	return (struct dfile *)(uintptr_t)fi->fh;
}

static pid_t req_tid(fuse_req_t req)
{
	return fuse_req_ctx(req)->pid;
}

/* ---- parked requests and interrupts ------------------------------- */

enum parked_kind { PARKED_READ, PARKED_OPEN, PARKED_WRITE };

/* Answer EINTR to the interrupted requests parked on @q. */
static void flush_queue(GQueue *q, enum parked_kind kind)
{
	GList *l, *next;

	for (l = q->head; l; l = next) {
		struct parked *p = l->data;

		next = l->next;
		if (!p->interrupted)
			continue;
		g_queue_delete_link(q, l);
		if (kind == PARKED_READ)
			g_queue_remove(p->owner, p);
		else if (kind == PARKED_OPEN)
			p->v->ops->cancel(p->v->ctx, &p->w);
		else
			p->f->ops->cancel_write(p->f->file, &p->w);
		fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
}

static gboolean flush_interrupted(gpointer data)
{
	struct devfiles *df = data;

	df->idle = 0;
	flush_queue(&df->all_reads, PARKED_READ);
	flush_queue(&df->opens, PARKED_OPEN);
	flush_queue(&df->writes, PARKED_WRITE);
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

/* Hold @p's request for a later reply: false if it was interrupted
 * already (the caller answers it). */
static bool park(struct parked *p)
{
	fuse_req_interrupt_func(p->req, on_interrupt, p);
	return !p->interrupted;
}

static void unpark_read(struct parked *p)
{
	g_queue_remove(p->owner, p);
	g_queue_remove(&p->df->all_reads, p);
}

/* ---- calls in pieces ------------------------------------------------- */

/*
 * FUSE and CUSE hand a read(2) or write(2) larger than one request to us in
 * pieces at offsets 0, n1, n1+n2, ... of the call (usercall.h); the
 * kernel's files move one message per call. A request this large may be
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
 * A read that fails and leaves bytes in the caller's buffer (ib_umad's
 * ENOSPC, docs/umad.md §4.8): a FUSE error reply carries no data, so write
 * them there ourselves.
 */
static void give_error_data(fuse_req_t req, size_t count, const void *data, size_t len)
{
	struct user_call c;
	int ret = user_call_get(req_tid(req), false, &c);

	if (!ret && c.count != count)
		ret = -ESRCH;	/* not the read we are answering */
	if (!ret)
		ret = user_call_write(req_tid(req), &c, data, len);
	if (ret < 0)
		g_warning("cannot give thread %d the header of a long read (%s): it fails without it",
			  req_tid(req), g_strerror(-ret));
	user_call_clear(&c);
}

/* A later piece of a call whose first piece was answered: its state. */
static struct xfer *next_piece(fuse_req_t req, struct dfile *f, off_t off, bool write)
{
	struct xfer *x = g_hash_table_lookup(f->xfers, GINT_TO_POINTER(req_tid(req)));

	if (!x || (x->data == NULL) != write || x->next_off != (size_t)off) {
		g_warning("%s: a piece at offset %lld of a %s(2) of thread %d that is not under way",
			  f->ops->name, (long long)off, write ? "write" : "read", req_tid(req));
		fuse_reply_err(req, EIO);
		return NULL;
	}
	return x;
}

/* ---- read ------------------------------------------------------------- */

/*
 * Answer the first piece (@size bytes) of a read of @count bytes; false
 * (and no answer) when nothing is queued and @wait says the read waits.
 */
static bool reply_read(fuse_req_t req, struct dfile *f, size_t size, size_t count, bool wait)
{
	size_t blen = f->ops->read_len ? MIN(count, f->ops->read_len(f->file)) : count;
	uint8_t *buf = g_try_malloc(blen ? blen : 1);
	size_t filled = 0;
	ssize_t n;
	struct xfer *x;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return true;
	}
	n = f->ops->read(f->file, buf, count, &filled);
	if (n == -EAGAIN && wait) {
		g_free(buf);
		return false;
	}
	if (n < 0 && filled)
		give_error_data(req, count, buf, MIN(filled, blen));
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
		g_hash_table_replace(f->xfers, GINT_TO_POINTER(req_tid(req)), x);
		fuse_reply_buf(req, (char *)buf, size);
		return true;
	}
	g_free(buf);
	return true;
}

static void read_more(fuse_req_t req, struct dfile *f, size_t size, off_t off)
{
	struct xfer *x = next_piece(req, f, off, false);
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
		g_hash_table_remove(f->xfers, GINT_TO_POINTER(tid));
}

/*
 * The start of a read or a write of @size bytes at @off: false when it is
 * answered here: EINVAL without the op (the VFS's answer), a later piece
 * of a long call (@off, docs/fuse-cuse.md) by @more. A call from the
 * start forgets what a call before it left of a long one.
 */
static bool call_start(fuse_req_t req, const struct vnode *v, struct dfile *f, bool has_op,
		       size_t size, off_t off,
		       void (*more)(fuse_req_t, struct dfile *, size_t, off_t))
{
	if (v->kind != VN_FILE || !has_op) {
		fuse_reply_err(req, EINVAL);
		return false;
	}
	if (off) {
		more(req, f, size, off);
		return false;
	}
	g_hash_table_remove(f->xfers, GINT_TO_POINTER(req_tid(req)));
	return true;
}

void devfile_read(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  size_t size, off_t off, struct fuse_file_info *fi)
{
	struct dfile *f = dfile_of(fi);
	struct user_call c;
	struct parked *p;
	size_t count;

	if (!call_start(req, v, f, f->ops->read != NULL, size, off, read_more))
		return;
	count = call_count(req, size, false, &c);
	user_call_clear(&c);
	if (reply_read(req, f, size, count, !(fi->flags & O_NONBLOCK)))
		return;
	/* A blocking read waits here until something comes or an interrupt. */
	p = g_new0(struct parked, 1);
	p->req = req;
	p->df = df;
	p->size = size;
	p->count = count;
	if (!park(p)) {
		fuse_reply_err(req, EINTR);
		g_free(p);
		return;
	}
	p->owner = &f->reads;
	g_queue_push_tail(&f->reads, p);
	g_queue_push_tail(&df->all_reads, p);
}

/* The file became readable: wake the poller, if any, once. */
static void poll_notify(struct dfile *f)
{
	if (!f->ph)
		return;
	fuse_lowlevel_notify_poll(f->ph);
	fuse_pollhandle_destroy(f->ph);
	f->ph = NULL;
}

/* Something was queued: answer blocked reads in order, then the poller. */
static void on_queued(void *ctx)
{
	struct dfile *f = ctx;
	struct parked *p;

	while (kfile_readable(f->ops, f->file) && (p = g_queue_peek_head(&f->reads))) {
		unpark_read(p);
		if (!p->interrupted)
			reply_read(p->req, f, p->size, p->count, false);
		else
			fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (kfile_readable(f->ops, f->file))
		poll_notify(f);
}

/* ---- open and release --------------------------------------------------- */

static void reply_opened(struct devfiles *df, fuse_req_t req, struct fuse_file_info *fi,
			 uint64_t unique, const struct kfile_ops *ops, void *file)
{
	struct dfile *f = g_new0(struct dfile, 1);

	f->df = df;
	f->ops = ops;
	f->file = file;
	g_queue_init(&f->reads);
	f->xfers = g_hash_table_new_full(NULL, NULL, NULL, xfer_free);
	if (ops->set_wakeup)
		ops->set_wakeup(file, on_queued, f);
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	if (df->reply_open)
		df->reply_open(df->reply_open_data, req, fi, unique);
	else
		fuse_reply_open(req, fi);
}

/* The table answered an open it had held (an issm's holder let go). */
static void open_done(struct kfile_wait *w, int64_t ret, void *file)
{
	struct parked *p = (struct parked *)w;
	struct fuse_file_info fi = { 0 };

	g_queue_remove(&p->df->opens, p);
	if (ret < 0)
		fuse_reply_err(p->req, (int)-ret);
	else
		reply_opened(p->df, p->req, &fi, p->unique, p->v->ops, file);
	g_free(p);
}

void devfile_open(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  struct fuse_file_info *fi, uint64_t unique)
{
	struct kfile_opener who = { .pid = req_tid(req), .flags = fi->flags,
				    /* Only FUSE mode hooks the open reply (fusefs.c). */
				    .via = df->reply_open ? "fuse" : "cuse" };
	struct parked *p = g_new0(struct parked, 1);
	void *file = NULL;
	int r;

	if (v->kind != VN_FILE) {
		fuse_reply_err(req, ENODEV);	/* a front-end's mistake */
		g_free(p);
		return;
	}
	p->w.done = open_done;
	p->req = req;
	p->df = df;
	p->v = v;
	p->unique = unique;
	r = v->ops->open(v->ctx, &who, &p->w, &file);
	if (r == KFILE_LATER) {
		/* Parked for the answer; an interrupt cancels it. */
		g_queue_push_tail(&df->opens, p);
		park(p);	/* if interrupted already: answered by the idle flush */
		return;
	}
	g_free(p);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_opened(df, req, fi, unique, v->ops, file);
}

void devfile_release(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     struct fuse_file_info *fi)
{
	struct dfile *f = dfile_of(fi);
	struct parked *p;

	(void)df;
	if (v->kind != VN_FILE || !f) {
		fuse_reply_err(req, 0);
		return;
	}
	/* The kernel holds the file during a read, so none is parked
	 * unless it was interrupted and not yet answered. */
	while ((p = g_queue_peek_head(&f->reads))) {
		unpark_read(p);
		fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (f->ph)
		fuse_pollhandle_destroy(f->ph);
	g_hash_table_destroy(f->xfers);
	f->ops->release(f->file);
	g_free(f);
	fuse_reply_err(req, 0);
}

/* ---- write, ioctl, poll ------------------------------------------------- */

static void write_more(fuse_req_t req, struct dfile *f, size_t size, off_t off)
{
	struct xfer *x = next_piece(req, f, off, true);
	size_t n;

	if (!x)
		return;
	n = MIN(size, x->left);
	x->left -= n;
	x->next_off += n;
	if (!x->left)
		g_hash_table_remove(f->xfers, GINT_TO_POINTER(req_tid(req)));
	fuse_reply_write(req, n);
}

/*
 * The first piece of a write longer than one request: the whole message is
 * read out of the caller's buffers and written now, so that an error fails
 * the call as the kernel's would; the later pieces are only acknowledged.
 */
static void write_whole(fuse_req_t req, struct dfile *f, size_t size, const struct user_call *c)
{
	uint8_t *data = NULL;
	struct xfer *x;
	ssize_t n;
	int ret;

	if ((f->ops->check_write_size && f->ops->check_write_size(f->file, c->count) < 0) ||
	    !(data = g_try_malloc(c->count))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = user_call_read(req_tid(req), c, data, c->count);
	n = ret < 0 ? ret : f->ops->write(f->file, data, c->count, NULL);
	g_free(data);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	x = g_new0(struct xfer, 1);
	x->next_off = size;
	x->left = c->count - size;
	g_hash_table_replace(f->xfers, GINT_TO_POINTER(req_tid(req)), x);
	fuse_reply_write(req, size);
}

static void write_done(struct kfile_wait *w, int64_t ret, void *file)
{
	struct parked *p = (struct parked *)w;

	(void)file;
	if (p->df)
		g_queue_remove(&p->df->writes, p);
	if (ret < 0)
		fuse_reply_err(p->req, (int)-ret);
	else
		fuse_reply_write(p->req, (size_t)ret);
	g_free(p);
}

void devfile_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		   off_t off, struct fuse_file_info *fi)
{
	struct dfile *f = dfile_of(fi);
	struct parked *p;
	struct user_call c;
	ssize_t n;

	if (!call_start(req, v, f, f->ops->write != NULL, size, off, write_more))
		return;
	if (call_count(req, size, true, &c) > size) {
		write_whole(req, f, size, &c);
		user_call_clear(&c);
		return;
	}
	user_call_clear(&c);
	p = g_new0(struct parked, 1);
	p->w.done = write_done;
	p->req = req;
	p->df = f->df;
	p->f = f;
	n = f->ops->write(f->file, buf, size, f->ops->cancel_write ? &p->w : NULL);
	if (n == KFILE_LATER) {
		/*
		 * The table holds p until it answers; an interrupt cancels it.
		 * A FUSE request the daemon has taken is waited for even by a
		 * dying process (request_wait_answer()): without this a
		 * process killed in the write could never exit.
		 */
		g_queue_push_tail(&f->df->writes, p);
		park(p);	/* if interrupted already: answered by the idle flush */
		return;
	}
	g_free(p);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

void devfile_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		   struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		   size_t out_bufsz)
{
	struct dfile *f = dfile_of(fi);
	size_t len = MAX(MAX(in_bufsz, out_bufsz), _IOC_SIZE(cmd)), out_len = 0;
	uint8_t *buf;
	int ret;

	if (v->kind != VN_FILE || !f->ops->ioctl || len > KFILE_IOCTL_MAX) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	buf = g_malloc0(MAX(len, 1));
	if (in_bufsz)
		memcpy(buf, in_buf, in_bufsz);
	ret = f->ops->ioctl(f->file, cmd, buf, &out_len);
	out_len = MIN(out_len, out_bufsz);
	if (ret < 0 && !out_len)
		fuse_reply_err(req, -ret);
	else
		/* An error with data (REGISTER_AGENT2 flags) works too. */
		fuse_reply_ioctl(req, ret, out_len ? buf : NULL, out_len);
	g_free(buf);
}

void devfile_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		  struct fuse_pollhandle *ph)
{
	struct dfile *f = v->kind == VN_FILE ? dfile_of(fi) : NULL;
	/* No poll op (or not a device file): the VFS's DEFAULT_POLLMASK. */
	unsigned revents = f && f->ops->poll ? f->ops->poll(f->file) : POLLIN | POLLOUT;

	/* Keep the handle only when we will have something to say. */
	if (ph && !(revents & POLLIN) && f && f->ops->set_wakeup) {
		if (f->ph)
			fuse_pollhandle_destroy(f->ph);
		f->ph = ph;
	} else if (ph) {
		fuse_pollhandle_destroy(ph);
	}
	fuse_reply_poll(req, revents);
}

/* ---- the front-end's ----------------------------------------------------- */

void devfiles_set_reply_open(struct devfiles *df, devfile_reply_open_fn fn, void *data)
{
	df->reply_open = fn;
	df->reply_open_data = data;
}

struct devfiles *devfiles_new(void)
{
	struct devfiles *df = g_new0(struct devfiles, 1);

	g_queue_init(&df->opens);
	g_queue_init(&df->all_reads);
	g_queue_init(&df->writes);
	return df;
}

void devfiles_free(struct devfiles *df)
{
	struct parked *p;

	if (!df)
		return;
	if (df->idle)
		g_source_remove(df->idle);
	while ((p = g_queue_pop_head(&df->opens))) {
		p->v->ops->cancel(p->v->ctx, &p->w);
		g_free(p);
	}
	g_queue_clear_full(&df->all_reads, g_free);
	/* Their tables still hold them and may answer them as they go. */
	while ((p = g_queue_pop_head(&df->writes)))
		p->df = NULL;
	g_free(df);
}
