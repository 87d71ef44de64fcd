/* SPDX-License-Identifier: MIT */
/*
 * The device files of an attached host (`run --remote`, `start --remote`,
 * docs/many-hosts.md), whatever their kind: one table (kernel/kfile.h)
 * that forwards each call to the emulator we are attached to, where the
 * file's own table answers it (socket/fastpath_file.c). devfile.c serves
 * them from our FUSE mount (or CUSE devices) as it serves an emulator's
 * own; a verbs command file is uverbs_cmd_fops over this table, so that
 * a completion channel's upcall stays here (only a process of this host
 * can be given its fd).
 *
 * An open is a channel of the emulator's (FAST_ADOPT) on which FAST_OPEN
 * names the file, answered on our event loop, never in a blocking call:
 * an issm open waits there until the holder lets go. Writes and ioctls
 * are requests on that channel. What the file queues comes on the data
 * socket as struct fast_pkt (abi/fast_wire.h), taken into a queue here as
 * it comes and read from it by fast_pkt_read's rules, the file's own: one
 * read of the emulator's each.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "lib/watch.h"
#include "socket/remote_priv.h"

/* Taken ahead of the reader: beyond this the data socket is left alone,
 * its sender (the emulator) stops, and the emulator's own limit on the
 * file's queue applies, as to any slow reader. */
#define QUEUE_MAX_BYTES	(8u << 20)

/* What one read there returned, and now one read here returns. */
struct item {
	struct fast_pkt h;
	uint8_t bytes[];	/* h.len */
};

struct remote_file {
	GList link;		/* in its device's open files */
	struct remote_dev *d;	/* NULL once the device is freed (at exit) */
	int chan, data;		/* data -1: a file with nothing to read (issm) */
	guint watch;		/* the open's answer, then data while taken */
	struct kfile_wait *w;	/* while the open is asked */
	bool gone;		/* the emulator hung up: reads end in EIO */
	GQueue q;		/* struct item *, taken, not read yet */
	size_t q_bytes;
	void (*wake)(void *);
	void *wake_ctx;
};

static void unlist(struct remote_file *f)
{
	if (f->d)
		g_queue_unlink(&f->d->files, &f->link);
	f->d = NULL;
}

static void file_free(struct remote_file *f)
{
	if (f->watch)
		g_source_remove(f->watch);
	unlist(f);
	if (f->data >= 0)
		close(f->data);	/* the emulator's last close of its file */
	close(f->chan);
	g_queue_clear_full(&f->q, g_free);
	g_free(f);
}

/* ---- what comes on the data socket --------------------------------------- */

/* The next item off the data socket; NULL when none (or the end). */
static struct item *take_item(struct remote_file *f)
{
	struct fast_pkt h;
	union fd_cmsg u;
	struct item *p;
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n = recv(f->data, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	int memfd;

	if (n != (ssize_t)sizeof(h)) {
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
		    (n > 0 && n < (ssize_t)sizeof(h)))
			f->gone = true;	/* the end, or not our words: fail the reads */
		return NULL;
	}
	if (h.flags & FAST_F_HELD) {	/* the emulator waits for us to ask */
		if (recv(f->data, &h, sizeof(h), MSG_DONTWAIT) != (ssize_t)sizeof(h) ||
		    remote_ask(f->chan, FAST_PUSH, 0, 0, NULL, 0, -1, NULL, NULL, NULL,
			       REMOTE_ANSWER_TIMEOUT_MS) < 0) {
			f->gone = true;
			return NULL;
		}
		return take_item(f);
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
	if (n < (ssize_t)sizeof(h) ||
	    (!(h.flags & FAST_F_MEMFD) && (size_t)n != sizeof(h) + h.len)) {
		g_free(p);
		f->gone = true;
		return NULL;
	}
	return p;
}

static gboolean on_data(gint fd, GIOCondition cond, gpointer data);

static void watch_data(struct remote_file *f)
{
	if (!f->watch && !f->gone && f->data >= 0)
		f->watch = watch_fd(f->data, G_IO_IN | G_IO_HUP | G_IO_ERR, on_data, f);
}

/* Items came (or the end): take them, as room allows, and say so. */
static gboolean on_data(gint fd, GIOCondition cond, gpointer data)
{
	struct remote_file *f = data;
	struct item *p;
	bool any = false;

	(void)fd;
	(void)cond;
	while ((!f->q.length || f->q_bytes < QUEUE_MAX_BYTES) && (p = take_item(f))) {
		g_queue_push_tail(&f->q, p);
		f->q_bytes += p->h.len;
		any = true;
	}
	if ((any || f->gone) && f->wake)
		f->wake(f->wake_ctx);
	if (f->gone || f->q_bytes >= QUEUE_MAX_BYTES) {
		f->watch = 0;	/* again once read below the limit */
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

/* ---- the table ------------------------------------------------------------ */

/* The emulator answered the open: the file, with its data socket if it
 * has something to read. */
static gboolean on_open_answer(gint fd, GIOCondition cond, gpointer data)
{
	struct remote_file *f = data;
	struct kfile_wait *w = f->w;
	struct fast_reply rep;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	union fd_cmsg u;
	ssize_t n;

	(void)cond;
	fd_pass_room(&msg, &u);
	n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	f->data = n >= 0 ? fd_pass_take(&msg) : -1;
	f->watch = 0;
	f->w = NULL;
	if (n != (ssize_t)sizeof(rep) || rep.ret > 0)	/* gone, or not its words */
		rep.ret = -EIO;
	if (rep.ret < 0) {
		file_free(f);
		w->done(w, rep.ret == -ENOENT ? -ENODEV : rep.ret, NULL);
	} else {
		if (f->data >= 0)
			fcntl(f->data, F_SETFL, O_NONBLOCK);
		w->done(w, 0, f);
	}
	return G_SOURCE_REMOVE;
}

static int fwd_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w, void **file)
{
	struct remote_dev *d = dev;
	struct remote_file *f;
	int ch = remote_adopted_channel(d->r);

	(void)file;
	if (ch < 0)
		return -EIO;
	if (remote_send(ch, FAST_OPEN, 0, (uint64_t)who->flags, d->name, strlen(d->name), -1) < 0) {
		close(ch);
		return -EIO;	/* the emulator is gone */
	}
	f = g_new0(struct remote_file, 1);
	f->d = d;
	f->chan = ch;
	f->data = -1;
	f->w = w;
	g_queue_init(&f->q);
	f->link.data = f;
	g_queue_push_tail_link(&d->files, &f->link);
	f->watch = watch_fd(ch, G_IO_IN | G_IO_HUP | G_IO_ERR, on_open_answer, f);
	return KFILE_LATER;
}

static void fwd_cancel(void *dev, struct kfile_wait *w)
{
	struct remote_dev *d = dev;
	GList *l;

	for (l = d->files.head; l; l = l->next) {
		struct remote_file *f = l->data;

		if (f->w == w) {
			file_free(f);	/* the emulator stops waiting */
			return;
		}
	}
}

static void fwd_release(void *file)
{
	file_free(file);
}

/* fast_pkt_read's rules on the head item: EIO once the emulator is gone
 * and nothing is left, as the kernel's files of a removed device. */
static ssize_t fwd_read(void *file, void *buf, size_t count, size_t *filled)
{
	struct remote_file *f = file;
	struct item *p = g_queue_peek_head(&f->q);
	size_t copy;
	int64_t r;

	*filled = 0;
	if (f->data < 0)
		return -EINVAL;	/* a file with no read of its own */
	if (!p)
		return f->gone ? -EIO : -EAGAIN;
	r = fast_pkt_read(&p->h, count, &copy);
	memcpy(buf, p->bytes, copy);
	if (r < 0) {
		*filled = copy;
		return (ssize_t)r;	/* ENOSPC leaves it at the head */
	}
	g_queue_pop_head(&f->q);
	f->q_bytes -= p->h.len;
	g_free(p);
	if (f->q_bytes < QUEUE_MAX_BYTES)
		watch_data(f);
	return (ssize_t)r;
}

static size_t fwd_read_len(const void *file)
{
	const struct remote_file *f = file;
	const struct item *p = f->q.head ? f->q.head->data : NULL;

	return p ? p->h.len : 0;
}

/* A request and its answer; a channel that fails or times out is the
 * emulator gone, as the kernel fails calls on a removed device: EIO. */
static int64_t ask(struct remote_file *f, uint32_t op, uint32_t flags, uint64_t arg,
		   const void *in, size_t n, int fd, char **out, size_t *out_len)
{
	int64_t ret = remote_ask(f->chan, op, flags, arg, in, n, fd, out, out_len, NULL,
				 REMOTE_ANSWER_TIMEOUT_MS);

	return ret == -ETIMEDOUT ? -EIO : ret;
}

static ssize_t fwd_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	struct remote_file *f = file;
	int64_t ret;
	int memfd;

	(void)w;
	if (count <= FAST_INLINE_MAX)
		return (ssize_t)ask(f, FAST_WRITE, 0, count, buf, count, -1, NULL, NULL);
	/* A long one (an RMPP message): in a memfd beside the request. */
	if ((memfd = fd_pass_memfd("ibemu-write", buf, count, close)) < 0)
		return -ENOMEM;
	ret = ask(f, FAST_WRITE, FAST_F_MEMFD, count, NULL, 0, memfd, NULL, NULL);
	close(memfd);
	return (ssize_t)ret;
}

/* Gathering a long write here is bounded as any table's write. */
static int fwd_check_write_size(void *file, size_t count)
{
	(void)file;
	return count > KFILE_WRITE_MAX ? -ENOMEM : 0;
}

/* The argument there and back, as _IOC_SIZE sizes it. */
static int fwd_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	struct remote_file *f = file;
	size_t in = (_IOC_DIR(cmd) & _IOC_WRITE) ? _IOC_SIZE(cmd) : 0, got = 0;
	char *bytes = NULL;
	int64_t ret = ask(f, FAST_IOCTL, 0, cmd, arg, in, -1, &bytes, &got);

	*out_len = MIN(got, _IOC_SIZE(cmd));
	if (*out_len)
		memcpy(arg, bytes, *out_len);
	g_free(bytes);
	return (int)ret;
}

static unsigned fwd_poll_in(const void *file)
{
	const struct remote_file *f = file;

	if (f->data < 0)
		return POLLIN | POLLOUT;	/* no poll of its own */
	return f->q.length || f->gone ? POLLIN | POLLRDNORM : 0;
}

static unsigned fwd_poll(const void *file)
{
	return fwd_poll_in(file) | POLLOUT | POLLWRNORM;
}

static void fwd_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	struct remote_file *f = file;

	f->wake = fn;
	f->wake_ctx = ctx;
	watch_data(f);
}

#define FORWARDED .forwards = true, .open = fwd_open, .cancel = fwd_cancel, .release = fwd_release, \
	.read = fwd_read, .read_len = fwd_read_len, .write = fwd_write, \
	.check_write_size = fwd_check_write_size, .ioctl = fwd_ioctl, \
	.set_wakeup = fwd_set_wakeup

const struct kfile_ops remote_fops = { .name = "uverbs_ctx", .poll = fwd_poll, FORWARDED };

const struct kfile_ops *remote_fops_of(GHashTable *forwarders, const struct kfile_ops *kind)
{
	struct kfile_ops *o = g_hash_table_lookup(forwarders, kind);

	if (!o) {
		o = g_new(struct kfile_ops, 1);
		*o = (struct kfile_ops){ .name = kind->name, .chardev = kind->chardev,
					 .everyone = kind->everyone,
					 .poll = kind->write ? fwd_poll : fwd_poll_in, FORWARDED };
		g_hash_table_insert(forwarders, (gpointer)kind, o);
	}
	return o;
}

/* ---- the devices ----------------------------------------------------------- */

struct remote_dev *remote_dev_new(struct remote *r, const char *name)
{
	struct remote_dev *d = g_new0(struct remote_dev, 1);

	d->node = (struct kfile_node){ &remote_fops, d };
	d->r = r;
	d->name = g_strdup(name);
	g_queue_init(&d->files);
	return d;
}

void remote_dev_gone(struct remote_dev *d)
{
	GList *l, *next;

	for (l = d->files.head; l; l = next) {
		struct remote_file *f = l->data;

		next = l->next;	/* a woken reader's reply cannot close it */
		if (f->w)
			continue;	/* its answer's HUP ends the open */
		if (f->watch)
			g_source_remove(f->watch);
		f->watch = 0;
		f->gone = true;	/* what is queued is still read first */
		if (f->wake)
			f->wake(f->wake_ctx);
	}
}

void remote_dev_free(void *data)
{
	struct remote_dev *d = data;
	GList *l;

	/* Files the front-end still holds outlive their device (at exit only). */
	for (l = d->files.head; l; l = l->next)
		((struct remote_file *)l->data)->d = NULL;
	g_free(d->name);
	g_free(d);
}
