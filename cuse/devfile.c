/* SPDX-License-Identifier: MIT */
/*
 * The umad and issm file operations of both front-ends (devfile.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cuse/devfile.h"
#include "lib/log.h"

struct parked {
	fuse_req_t req;
	size_t size;		/* read size, for parked reads */
	struct ufile *uf;	/* parked read */
	struct umad_dev *dev;	/* parked issm open */
	bool interrupted;
	struct devfiles *df;
};

/* Per open umad file: fi->fh points here (STYLE.md "Memory and lifetime"). */
struct ufile {
	struct devfiles *df;
	struct umad_file *file;
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
};

struct devfiles {
	guint idle;		/* pending flush of interrupted requests */
	GQueue issm_waiters;	/* struct parked * */
	GQueue all_reads;	/* every parked read, for interrupts */
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
			g_queue_remove(&p->uf->reads, p);
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

/*
 * Hold @req for a later reply. NULL if it was interrupted already: then it
 * has been answered EINTR here, outside the interrupt callback.
 */
static struct parked *park(fuse_req_t req, struct devfiles *df)
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

/* ---- umad files ------------------------------------------------------- */

/*
 * The kernel's read() fails with ENOSPC *and* leaves the header (with the
 * length needed) and the first segment in the caller's buffer (§4.8); a
 * FUSE error reply carries no data. So: find the buffer of the blocked
 * read(2) in /proc/<tid>/syscall and write it there (ARCHITECTURE.md).
 * Needs ptrace rights over the reader: namespace mode's clients are our
 * descendants; CUSE mode's daemon runs as root (CAP_SYS_PTRACE).
 */
/* The reader's syscall line: "0 0xFD 0xBUF 0xCOUNT ..." once it sleeps in
 * read(2); "running" while it has not yet got there. */
static bool reader_syscall(pid_t tid, char *line, size_t len)
{
	char path[64];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	if (!(f = fopen(path, "r")))
		return false;
	ok = fgets(line, (int)len, f) != NULL;
	fclose(f);
	return ok;
}

static bool poke_reader(fuse_req_t req, size_t size, const void *data, size_t len)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char line[256] = "";
	unsigned long nr, fd, addr, count;
	struct iovec local = { (void *)data, len }, remote;
	unsigned tries;

	/*
	 * The request can reach us before the reader has gone to sleep (it
	 * was preempted on its way: one CPU, or a loaded machine); give it a
	 * few milliseconds to get there.
	 */
	for (tries = 0; tries < 400; tries++) {
		if (!reader_syscall(ctx->pid, line, sizeof(line)) ||
		    strncmp(line, "running", 7))
			break;
		if (tries)
			g_usleep(25);
		else
			sched_yield();
	}
	if (sscanf(line, "%lu 0x%lx 0x%lx 0x%lx", &nr, &fd, &addr, &count) != 4 ||
	    nr != 0 /* read */ || count != size) {
		g_warning("cannot give thread %d the header of a long read (%s): it sees ENOSPC without it",
			  ctx->pid, line[0] ? g_strchomp(line) : g_strerror(errno));
		return false;
	}
	remote.iov_base = (void *)addr;
	remote.iov_len = len;
	if (process_vm_writev(ctx->pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		g_warning("cannot write the header of a long read into thread %d: %s",
			  ctx->pid, g_strerror(errno));
		return false;
	}
	return true;
}

static void reply_read(fuse_req_t req, struct ufile *uf, size_t size)
{
	uint8_t *buf = g_malloc(size);
	ssize_t n = umad_read(uf->file, buf, size);

	if (n == -ENOSPC)
		poke_reader(req, size, buf, umad_hdr_size(uf->file) + 256);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (char *)buf, (size_t)n);
	g_free(buf);
}

/* A packet was queued: answer blocked reads, then notify pollers. */
static void ufile_wakeup(void *ctx)
{
	struct ufile *uf = ctx;
	struct parked *p;

	while (umad_readable(uf->file) && (p = g_queue_pop_head(&uf->reads))) {
		g_queue_remove(&uf->df->all_reads, p);
		if (!p->interrupted)
			reply_read(p->req, uf, p->size);
		else
			fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (uf->ph && umad_readable(uf->file)) {
		fuse_lowlevel_notify_poll(uf->ph);
		fuse_pollhandle_destroy(uf->ph);
		uf->ph = NULL;
	}
}

static void open_umad(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	struct ufile *uf = g_new0(struct ufile, 1);

	uf->df = df;
	uf->file = umad_open(v->ctx);
	g_queue_init(&uf->reads);
	umad_set_wakeup(uf->file, ufile_wakeup, uf);
	fi->fh = (uint64_t)(uintptr_t)uf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void open_issm(struct devfiles *df, fuse_req_t req, struct vnode *v,
		      struct fuse_file_info *fi)
{
	struct parked *p;

	fi->direct_io = 1;
	fi->nonseekable = 1;
	fi->fh = 0;
	if (umad_issm_open(v->ctx) == 0) {
		fuse_reply_open(req, fi);
		return;
	}
	if (fi->flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	/* Block until the holder closes (down_interruptible, §7). */
	p = park(req, df);
	if (!p)
		return;
	p->dev = v->ctx;
	g_queue_push_tail(&df->issm_waiters, p);
}

void devfile_open(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  struct fuse_file_info *fi)
{
	if (v->kind == VN_UMAD)
		open_umad(df, req, v, fi);
	else if (v->kind == VN_ISSM)
		open_issm(df, req, v, fi);
	else
		fuse_reply_err(req, ENODEV);
}

void devfile_read(struct devfiles *df, fuse_req_t req, struct vnode *v,
		  size_t size, struct fuse_file_info *fi)
{
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;
	struct parked *p;

	if (v->kind != VN_UMAD) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (umad_readable(uf->file) || size < umad_hdr_size(uf->file) ||
	    (fi->flags & O_NONBLOCK)) {
		reply_read(req, uf, size);
		return;
	}
	/* A blocking read waits here until a packet or an interrupt. */
	p = park(req, df);
	if (!p)
		return;
	p->uf = uf;
	p->size = size;
	g_queue_push_tail(&uf->reads, p);
	g_queue_push_tail(&df->all_reads, p);
}

void devfile_write(fuse_req_t req, struct vnode *v, const char *buf, size_t size,
		   struct fuse_file_info *fi)
{
	ssize_t n;

	if (v->kind != VN_UMAD) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	n = umad_write(((struct ufile *)(uintptr_t)fi->fh)->file, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

void devfile_ioctl(fuse_req_t req, struct vnode *v, unsigned int cmd,
		   struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
		   size_t out_bufsz)
{
	uint8_t buf[64] = { 0 };
	size_t out_len = 0;
	int ret;

	if (v->kind != VN_UMAD || in_bufsz > sizeof(buf) || out_bufsz > sizeof(buf)) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz)
		memcpy(buf, in_buf, in_bufsz);
	ret = umad_ioctl(((struct ufile *)(uintptr_t)fi->fh)->file, cmd, buf, &out_len);
	out_len = MIN(out_len, out_bufsz);
	if (ret < 0 && !out_len)
		fuse_reply_err(req, -ret);
	else
		/* An error with data (REGISTER_AGENT2 flags) works too. */
		fuse_reply_ioctl(req, ret, out_len ? buf : NULL, out_len);
}

void devfile_poll(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi,
		  struct fuse_pollhandle *ph)
{
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;
	unsigned revents = POLLOUT | POLLWRNORM;

	if (v->kind != VN_UMAD) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLOUT);
		return;
	}
	if (umad_readable(uf->file))
		revents |= POLLIN | POLLRDNORM;
	/* Keep the handle only when we will have something to say. */
	if (ph && !(revents & POLLIN)) {
		if (uf->ph)
			fuse_pollhandle_destroy(uf->ph);
		uf->ph = ph;
	} else if (ph) {
		fuse_pollhandle_destroy(ph);
	}
	fuse_reply_poll(req, revents);
}

static void wake_issm_waiter(struct devfiles *df, struct umad_dev *d)
{
	GList *l;

	for (l = df->issm_waiters.head; l; l = l->next) {
		struct parked *p = l->data;
		struct fuse_file_info fi = { .direct_io = 1, .nonseekable = 1 };

		if (p->dev != d || p->interrupted)
			continue;
		g_queue_delete_link(&df->issm_waiters, l);
		if (umad_issm_open(d) == 0)
			fuse_reply_open(p->req, &fi);
		else
			fuse_reply_err(p->req, EAGAIN);
		g_free(p);
		return;
	}
}

void devfile_release(struct devfiles *df, fuse_req_t req, struct vnode *v,
		     struct fuse_file_info *fi)
{
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;

	if (v->kind == VN_UMAD && uf) {
		struct parked *p;

		/* The kernel holds the file during a read, so none is parked
		 * unless it was interrupted and not yet answered. */
		while ((p = g_queue_pop_head(&uf->reads))) {
			g_queue_remove(&df->all_reads, p);
			fuse_reply_err(p->req, EINTR);
			g_free(p);
		}
		if (uf->ph)
			fuse_pollhandle_destroy(uf->ph);
		umad_release(uf->file);
		g_free(uf);
	} else if (v->kind == VN_ISSM) {
		umad_issm_close(v->ctx);
		wake_issm_waiter(df, v->ctx);
	}
	fuse_reply_err(req, 0);
}

struct devfiles *devfiles_new(void)
{
	struct devfiles *df = g_new0(struct devfiles, 1);

	g_queue_init(&df->issm_waiters);
	g_queue_init(&df->all_reads);
	return df;
}

void devfiles_free(struct devfiles *df)
{
	if (!df)
		return;
	if (df->idle)
		g_source_remove(df->idle);
	g_queue_clear_full(&df->all_reads, g_free);
	g_queue_clear_full(&df->issm_waiters, g_free);
	g_free(df);
}
