/* SPDX-License-Identifier: MIT */
/*
 * Any device file the fast path serves (fastpath_priv.h), over its kind's
 * table (kernel/kfile.h): opened by FAST_OPEN on a channel, its writes
 * and ioctls requests there, and what it queues taken ahead of the reader
 * onto its data socket (struct fast_pkt, abi/fast_wire.h) or, for a verbs
 * context that asked, into its ring (fastpath_verbs.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "dev/vfs.h"
#include "lib/log.h"
#include "lib/watch.h"
#include "socket/fastpath_priv.h"
#include "socket/fastpath_verbs_priv.h"

static void drop_pending(struct fast_file *ff);

/* The last holder closed the data socket (or, for a file without one,
 * its channel closed): the kernel's release. What was taken for it and
 * not sent goes with it. */
void fp_file_release(struct fast_file *ff)
{
	if (ff->data_watch)
		g_source_remove(ff->data_watch);
	if (ff->out_watch)
		g_source_remove(ff->out_watch);
	ff->data_watch = ff->out_watch = 0;
	if (ff->fp->deferred)
		g_ptr_array_remove(ff->fp->deferred, ff);
	fast_verbs_free(g_steal_pointer(&ff->verbs));	/* before its context */
	if (ff->file)
		ff->ops->release(ff->file);
	ff->file = NULL;
	if (ff->data >= 0)
		close(ff->data);
	ff->data = -1;
	if (ff->pend_memfd >= 0)
		close(ff->pend_memfd);
	ff->pend_memfd = -1;
	drop_pending(ff);
}

void fp_file_free(struct fast_file *ff)
{
	if (ff->opening)	/* an open the table still holds */
		ff->ops->cancel(ff->dev, &ff->wait);
	if (ff->file)	/* opened, not released yet */
		fp_file_release(ff);
	g_free(ff);
}

/* Released (or never opened) and named by no channel: forget it. */
void fp_file_maybe_free(struct fast_file *ff)
{
	if ((!ff->file || ff->data < 0) && !ff->chans) {
		if (ff->file)
			fp_file_release(ff);
		g_ptr_array_remove_fast(ff->fp->files, ff);	/* frees */
	}
}

/* ---- what is queued, out on the data socket ---------------------------- */

static int send_pkt(struct fast_file *ff, const struct fast_pkt *h, const uint8_t *bytes,
		    int memfd)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)h, .iov_len = sizeof(*h) },
		{ .iov_base = (void *)bytes, .iov_len = bytes ? h->len : 0 },
	};
	union fd_cmsg u;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = bytes ? 2 : 1 };

	fd_pass_put(&msg, &u, memfd);
	return sendmsg(ff->data, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static gboolean on_data_room(gint fd, GIOCondition cond, gpointer data);

/* Whether @len more bytes may go into the data socket now (above). */
static bool room_ahead(struct fast_file *ff, size_t len)
{
	static const struct fast_pkt mark = { .flags = FAST_F_HELD };

	if (ff->held)
		return false;
	if (!ff->sock_bytes || ff->sock_bytes + len <= SOCK_AHEAD_BYTES)
		return true;
	if (send_pkt(ff, &mark, NULL, -1) == 0)
		ff->held = true;
	else if (!ff->out_watch)	/* no room even for the mark */
		ff->out_watch = watch_fd(ff->data, G_IO_OUT, on_data_room, ff);
	return false;
}

/* FAST_PUSH: the reader took the mark. Believed only if the socket is
 * empty (nothing the reader has not taken is counted out). */
void fp_let_go(struct fast_file *ff)
{
	int queued = 1;

	if (!ff->held || ioctl(ff->data, SIOCOUTQ, &queued) < 0 || queued)
		return;
	ff->held = false;
	ff->sock_bytes = 0;
	fp_push(ff);
}

/* The table counts what is in the socket and waiting for it. */
static void count_outside(struct fast_file *ff)
{
	bool pend = ff->pend_bytes || ff->pend_memfd >= 0;

	if (ff->ops->set_outside)
		ff->ops->set_outside(ff->file, ff->sock_bytes + (pend ? ff->pend.len - ff->pend_off : 0));
}

static bool pending(const struct fast_file *ff)
{
	return ff->pend_bytes || ff->pend_memfd >= 0;
}

static void drop_pending(struct fast_file *ff)
{
	if (ff->pend_bytes != ff->fp->buf)
		g_free(ff->pend_bytes);
	ff->pend_bytes = NULL;
	if (ff->pend_memfd >= 0)
		close(ff->pend_memfd);
	ff->pend_memfd = -1;
	ff->pend_off = 0;
}

/*
 * Read the next item (what one read with room enough returns) as the one
 * to send: false when nothing is queued. An inline one is read into the
 * server's buffer (kept only if it has to wait); one too large to go
 * inline goes in a memfd (a ring takes only inline ones: a context's
 * reads are).
 */
static bool take_next(struct fast_file *ff)
{
	size_t len = ff->ops->read_len ? ff->ops->read_len(ff->file) : FAST_INLINE_MAX, filled;
	uint8_t *buf = len <= FAST_INLINE_MAX ? ff->fp->buf : g_try_malloc(len);
	ssize_t n;

	if (!buf)
		return false;
	n = ff->ops->read(ff->file, buf, len, &filled);
	if (n <= 0) {	/* -EAGAIN: nothing queued */
		if (n < 0 && n != -EAGAIN)
			g_warning("fast path: %s: what is queued could not be taken: %s", ff->name,
				  g_strerror((int)-n));
		if (buf != ff->fp->buf)
			g_free(buf);
		return false;
	}
	ff->pend_bytes = buf;
	ff->pend_off = 0;
	ff->pend = (struct fast_pkt){ .len = (uint32_t)n,
				      .hdr_size = ff->ops->split_hdr ?
						  (uint16_t)ff->ops->split_hdr(ff->file) : 0 };
	if (n > FAST_INLINE_MAX && !(ff->verbs && ff->verbs->ring)) {
		ff->pend_memfd = fd_pass_memfd("ibemu-packet", buf, (size_t)n, close);
		g_free(buf);	/* never the server's: longer than it */
		ff->pend_bytes = NULL;
		if (ff->pend_memfd < 0) {
			g_warning("fast path: no memfd for a %zd-byte packet: dropped", n);
			return true;	/* nothing pending: the loop takes the next */
		}
		ff->pend.flags = FAST_F_MEMFD;
	}
	return true;
}

/* Send the pending item: false when it has to wait (for room, or the
 * reader's FAST_PUSH); it is gone either way otherwise. */
static bool send_pending(struct fast_file *ff)
{
	int r;

	if (ff->verbs && ff->verbs->ring)
		return fast_verbs_put(ff->verbs, ff->pend_bytes, ff->pend.len, &ff->pend_off);
	if (!room_ahead(ff, ff->pend.len))
		return false;
	r = send_pkt(ff, &ff->pend, ff->pend_bytes, ff->pend_memfd);
	if (r == -EAGAIN) {
		if (!ff->out_watch)
			ff->out_watch = watch_fd(ff->data, G_IO_OUT, on_data_room, ff);
		return false;
	}
	if (r < 0)	/* no reader left: the HUP releases the file */
		g_debug("fast path: %s: not sent: %s", ff->name, g_strerror(-r));
	else
		ff->sock_bytes += ff->pend.len;
	return true;
}

/*
 * Move what the file queues out, as room allows. Taking it may queue for
 * other files and call their push from inside this one (reading a verbs
 * context gives its held-back senders their credit): those wait in
 * fp->deferred until this one is done.
 */
void fp_push(struct fast_file *ff)
{
	struct fastpath *fp = ff->fp;

	if (fp->pushing) {
		if (!fp->deferred)
			fp->deferred = g_ptr_array_new();
		if (!g_ptr_array_find(fp->deferred, ff, NULL))
			g_ptr_array_add(fp->deferred, ff);
		return;
	}
	fp->pushing = true;
	while (ff->file && ff->data >= 0) {
		if (!pending(ff) && !take_next(ff))
			break;
		if (!pending(ff))
			continue;	/* dropped: no memfd */
		if (!send_pending(ff)) {
			if (ff->pend_bytes == fp->buf)	/* kept until there is room */
				ff->pend_bytes = g_memdup2(fp->buf, ff->pend.len);
			break;
		}
		drop_pending(ff);
	}
	if (ff->file)
		count_outside(ff);
	fp->pushing = false;
	/* Nothing is freed while a push runs: those waiting are alive. */
	while (fp->deferred && fp->deferred->len)
		fp_push(g_ptr_array_steal_index(fp->deferred, 0));
}

static void on_queued(void *ctx)
{
	fp_push(ctx);
}

static gboolean on_data_room(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_file *ff = data;

	(void)fd;
	(void)cond;
	ff->out_watch = 0;
	fp_push(ff);
	return G_SOURCE_REMOVE;
}

/* The data socket's end means the last close. A byte on it is a ring's
 * reader making room (fastpath_verbs.c); anything else is dropped. */
static gboolean on_data_hup(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_file *ff = data;
	char junk[64];
	bool any = false;

	if (!(cond & (G_IO_HUP | G_IO_ERR))) {
		ssize_t n;

		while ((n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
			any = true;
		if (n < 0 || any) {
			if (any && ff->verbs && ff->verbs->ring)
				fp_push(ff);
			return G_SOURCE_CONTINUE;
		}
	}
	ff->data_watch = 0;
	fp_file_release(ff);
	fp_file_maybe_free(ff);
	return G_SOURCE_REMOVE;
}

bool fp_data_closed(const struct fast_file *ff)
{
	struct pollfd p = { .fd = ff->data, .events = POLLIN };

	return ff->data < 0 || (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
}

/* ---- open ----------------------------------------------------------------- */

/* The write in progress will succeed: answer it now, before the fabric
 * carries the packet, so the client goes on meanwhile. */
static void on_accepted(void *ctx)
{
	struct fast_file *ff = ctx;

	if (ff->writing) {
		fp_reply(ff->writing, (int64_t)ff->write_count, NULL, 0, -1);
		ff->writing = NULL;
	}
}

/*
 * The file is open: a file that has something to read gets a data socket,
 * whose client end goes with the answer; one that has not (issm) lives as
 * long as its channel.
 */
static void opened(struct fast_chan *ch, struct fast_file *ff, void *file)
{
	const struct kfile_ops *ops = ff->ops;
	struct stat st;
	int sv[2];

	ff->file = file;
	if (!ops->read) {
		fp_reply(ch, 0, NULL, 0, -1);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    fstat(sv[1], &st) < 0) {
		fp_reply(ch, -errno, NULL, 0, -1);
		return;	/* released with the channel */
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	ff->data = sv[0];
	ff->data_ino = st.st_ino;
	if (ops->set_wakeup)
		ops->set_wakeup(file, on_queued, ff);
	if (ops->set_accepted)
		ops->set_accepted(file, on_accepted, ff);
	ff->data_watch = watch_fd(ff->data, G_IO_IN | G_IO_HUP | G_IO_ERR, on_data_hup, ff);
	fp_reply(ch, 0, NULL, 0, sv[1]);
	close(sv[1]);
	g_debug("fast path: %s opened by pid %d", ff->name, ch->pid);
}

/* The table answered an open it held (an issm's holder let go). */
static void open_done(struct kfile_wait *w, int64_t ret, void *file)
{
	struct fast_file *ff = (struct fast_file *)((char *)w - offsetof(struct fast_file, wait));
	struct fast_chan *ch = ff->opening;

	ff->opening = NULL;
	ch->tag = ff->open_tag;	/* answered later, maybe after others */
	if (ret < 0)
		fp_reply(ch, ret, NULL, 0, -1);
	else
		opened(ch, ff, file);
}

/* The file FAST_OPEN names: a device ("umad0", in the tree's dev/) or a
 * file by its path in the host's sysfs ("infiniband_verbs/uverbs0/...").
 * A layer a process's own host keeps (kfile_ops.stacked) is not served:
 * the file below it is. */
static const struct kfile_node *file_named(struct fastpath *fp, const char *name,
					   struct kfile_node *n)
{
	char *path = strchr(name, '/') ? g_strdup(name) : g_strconcat("dev/", name, NULL);
	struct vnode *v = fp->vfs ? vfs_path(fp->vfs->root, path) : NULL;

	g_free(path);
	if (!v || v->kind != VN_FILE)
		return NULL;
	*n = (struct kfile_node){ v->ops, v->ctx };
	if (n->ops->stacked)
		*n = *(const struct kfile_node *)v->ctx;
	return n;
}

void fp_do_open(struct fast_chan *ch, const char *name, size_t len, int flags)
{
	struct kfile_opener who = { .pid = ch->pid, .flags = flags, .via = "fast" };
	struct kfile_node node;
	struct fast_file *ff;
	char *nm = g_strndup(name, len);
	void *file = NULL;
	int r;

	if (fp_chan_taken(ch)) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
	} else if (strlen(nm) >= sizeof(ff->name) || !file_named(ch->fp, nm, &node)) {
		fp_reply(ch, -ENOENT, NULL, 0, -1);
	} else {
		ff = g_new0(struct fast_file, 1);
		ff->fp = ch->fp;
		ff->ops = node.ops;
		ff->dev = node.dev;
		ff->data = ff->pend_memfd = -1;
		ff->flags = flags;
		ff->pid = ch->pid;
		g_strlcpy(ff->name, nm, sizeof(ff->name));
		ff->wait.done = open_done;
		g_ptr_array_add(ch->fp->files, ff);
		ch->file = ff;
		ff->chans++;
		r = ff->ops->open(ff->dev, &who, &ff->wait, &file);
		if (r == KFILE_LATER) {
			ff->opening = ch;
			ff->open_tag = ch->tag;
		} else if (r < 0) {
			fp_reply(ch, r, NULL, 0, -1);
		} else {
			opened(ch, ff, file);
		}
	}
	g_free(nm);
}

/* @fd is a client's end of a data socket (or anything else): whose? */
void fp_do_attach(struct fast_chan *ch, int fd)
{
	struct stat st;
	unsigned i;

	if (fp_chan_taken(ch)) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fp_reply(ch, -EBADF, NULL, 0, -1);
		return;
	}
	for (i = 0; i < ch->fp->files->len; i++) {
		struct fast_file *ff = g_ptr_array_index(ch->fp->files, i);
		struct stat ours;

		/* Same inode, and our end's peer: one socket, not a lookalike. */
		if (!ff->file || ff->data < 0 || ff->data_ino != st.st_ino ||
		    fstat(ff->data, &ours) < 0 || ours.st_dev != st.st_dev)
			continue;
		ch->file = ff;
		ff->chans++;
		fp_reply(ch, ff->flags, ff->name, (uint32_t)strlen(ff->name), -1);
		return;
	}
	fp_reply(ch, -EBADF, NULL, 0, -1);
}

/* ---- write and ioctl ----------------------------------------------------- */

/* The table's write, answered early by on_accepted if it succeeds. No
 * write is held here (a table that would hold one says EOPNOTSUPP). */
static void write_and_reply(struct fast_chan *ch, const uint8_t *bytes, size_t count)
{
	struct fast_file *ff = ch->file;
	ssize_t ret;

	ff->writing = ch;
	ff->write_count = count;
	ret = ff->ops->write(ff->file, bytes, count, NULL);
	if (ff->writing)	/* not answered yet */
		fp_reply(ch, ret, NULL, 0, -1);
	ff->writing = NULL;
}

void fp_do_write(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		 size_t n, int memfd)
{
	const struct kfile_ops *ops = ch->file->ops;
	uint8_t *whole = NULL;
	int r;

	if (!ops->write) {
		fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	if (!(rq->flags & FAST_F_MEMFD)) {
		if (rq->arg == n)
			write_and_reply(ch, payload, n);
		else
			fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	/* A long write, in a memfd: checked before it is read in; only a
	 * table that says how long a write it takes gets one. */
	if (memfd < 0 || rq->arg > SIZE_MAX || !ops->check_write_size) {
		fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	if ((r = ops->check_write_size(ch->file->file, (size_t)rq->arg)) < 0) {
		fp_reply(ch, r, NULL, 0, -1);
		return;
	}
	whole = g_try_malloc(rq->arg ? rq->arg : 1);
	if (!whole || pread(memfd, whole, rq->arg, 0) != (ssize_t)rq->arg)
		fp_reply(ch, whole ? -EFAULT : -ENOMEM, NULL, 0, -1);
	else
		write_and_reply(ch, whole, (size_t)rq->arg);
	g_free(whole);
}

/* The argument as _IOC_SIZE sizes it: in as the client sent it (the rest
 * zeros: the table checks what it reads), out as the command says. */
void fp_do_ioctl(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		 size_t n)
{
	const struct kfile_ops *ops = ch->file->ops;
	unsigned cmd = (unsigned)rq->arg;
	size_t size = _IOC_SIZE(cmd), out_len = 0;
	size_t out_max = (_IOC_DIR(cmd) & _IOC_READ) ? size : 0;
	uint8_t *buf;
	int ret;

	if (!ops->ioctl || n > KFILE_IOCTL_MAX) {
		fp_reply(ch, -ENOTTY, NULL, 0, -1);
		return;
	}
	buf = g_malloc0(MAX(MAX(size, n), 1));
	memcpy(buf, payload, n);
	ret = ops->ioctl(ch->file->file, cmd, buf, &out_len);
	out_len = MIN(out_len, out_max);
	fp_reply(ch, ret, buf, (uint32_t)out_len, -1);
	g_free(buf);
}
