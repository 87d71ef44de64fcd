/* SPDX-License-Identifier: MIT */
/*
 * The verbs files of an attached host (`run --remote`, `start --remote`):
 * its `uverbsN` devices, so that libibverbs and the ibemu provider here
 * see the attached HCAs (docs/many-hosts.md "Verbs on an attached host").
 * devfile_verbs.c serves them as it serves an emulator's own, on this
 * backend (dev/verbs_backend.h): each open of a command or event file is
 * a channel of the emulator we are attached to (FAST_ADOPT) on which
 * FAST_OPEN names the file by its sysfs path (fast/fastpath_verbs.h);
 * packet records and QP ioctls are requests there, answered by its verbs
 * devices; what it queues comes on the data socket and is taken into a
 * queue here as it comes. A completion channel's upcall and a wake-up
 * stay here: only a process of this host can be given the channel's file
 * descriptor (docs/verbs.md "Completion channels").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include "dev/verbs_backend.h"
#include "fast/remote_priv.h"
#include "lib/fast_wire.h"
#include "lib/verbs_wire.h"

struct verbs_dev_fwd {
	struct verbs_fwd fwd;	/* first: what the vnode names */
	struct remote *r;
	char *path;		/* the file's, in the emulator's sysfs */
	GQueue files;		/* struct remote_file * of struct vfile, open */
};

/* An open command file (a context) or event file. */
struct vfile {
	struct remote_file rf;	/* first: the channel, data socket, its queue
				 * (GBytes *: whole records, or events), waking */
	bool events;
};

static void push(struct remote_file *f, const void *bytes, size_t len)
{
	g_queue_push_tail(&f->q, g_bytes_new(bytes, len));
	f->q_bytes += len;
}

/* One datagram into the queue: whole records (struct verbs_wire_rec
 * first, each its len long), or one event; false if it is neither. */
static bool split(struct vfile *f, const uint8_t *buf, size_t n)
{
	struct verbs_wire_rec rec;
	size_t off;

	if (f->events) {
		if (n != sizeof(struct verbs_wire_event))
			return false;
		push(&f->rf, buf, n);
		return true;
	}
	for (off = 0; off < n; off += rec.len) {
		if (n - off < sizeof(rec))
			return false;
		memcpy(&rec, buf + off, sizeof(rec));
		if (rec.len < sizeof(rec) || rec.len > n - off)
			return false;
		push(&f->rf, buf + off, rec.len);
	}
	return true;
}

/* remote_take_fn: a datagram's records (or event) into the queue. The
 * emulator's own bound on a context's queue (VERBS_RX_MAX: packets
 * dropped, as an HCA without buffers drops them) holds what we leave. */
static bool take(struct remote_file *rf)
{
	static uint8_t buf[FAST_INLINE_MAX];
	ssize_t n = recv(rf->data, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0 || n > (ssize_t)sizeof(buf) || !split((struct vfile *)rf, buf, (size_t)n)) {
		rf->gone = true;	/* the end, or not our words: fail the reads */
		return false;
	}
	return true;
}

static void *file_open(void *dev, bool events)
{
	struct verbs_dev_fwd *d = dev;
	struct vfile *f = g_new0(struct vfile, 1);
	int r = remote_file_open(d->r, &d->files, &f->rf, d->path, O_RDWR, take);

	if (r < 0) {
		g_free(f);
		errno = -r;
		return NULL;
	}
	f->events = events;
	return f;
}

static void file_close(void *file)
{
	struct vfile *f = file;

	remote_file_close(&f->rf, (GDestroyNotify)g_bytes_unref);
	g_free(f);
}

static void set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	remote_file_set_wakeup(file, fn, ctx);	/* rf is the first member */
}

static bool readable(const void *file)
{
	return remote_file_readable(file);
}

/* uverbs_ctx_read's rules (as many whole records as fit, EINVAL when the
 * next does not), or uverbs_events_read's (one event); EIO once the
 * emulator is gone and nothing is left, as ib_uverbs' files of a removed
 * device. */
static ssize_t file_read(void *file, void *buf, size_t count)
{
	struct vfile *f = file;
	size_t got = 0;
	GBytes *b;

	if (!f->rf.q.length)
		return f->rf.gone ? -EIO : -EAGAIN;
	while ((b = g_queue_peek_head(&f->rf.q)) && g_bytes_get_size(b) <= count - got) {
		memcpy((uint8_t *)buf + got, g_bytes_get_data(b, NULL), g_bytes_get_size(b));
		got += g_bytes_get_size(b);
		g_bytes_unref(g_queue_pop_head(&f->rf.q));
		if (f->events)
			break;
	}
	remote_file_read_done(&f->rf, got);
	return got ? (ssize_t)got : -EINVAL;
}

static void *ctx_open(void *dev) { return file_open(dev, false); }

static ssize_t ctx_write(void *file, const void *buf, size_t count)
{
	struct vfile *f = file;

	if (count > FAST_INLINE_MAX)	/* the provider sends at most 16 KiB */
		return -EINVAL;
	return (ssize_t)remote_file_ask(&f->rf, FAST_WRITE, 0, count, buf, count, -1, NULL, NULL);
}

/* A record of the front-end's own: an upcall, a wake-up. */
static void ctx_queue(void *file, const void *rec, size_t len)
{
	struct vfile *f = file;

	push(&f->rf, rec, len);
	if (f->rf.wake)
		f->rf.wake(f->rf.wake_ctx);
}

/* The QP ioctls (verbs_ioc_is_qp): the struct there and back. */
static int ctx_ioctl(void *file, unsigned cmd, void *arg)
{
	struct vfile *f = file;
	char *out = NULL;
	size_t got = 0;
	int64_t ret = remote_file_ask(&f->rf, FAST_IOCTL, 0, cmd, arg, _IOC_SIZE(cmd), -1, &out,
				      &got);

	if (ret == 0 && got == _IOC_SIZE(cmd))
		memcpy(arg, out, got);
	else if (ret == 0)
		ret = -EIO;
	g_free(out);
	return (int)ret;
}

static void *events_open(void *dev) { return file_open(dev, true); }

static const struct verbs_backend fwd_backend = {
	.ctx_open = ctx_open,
	.ctx_close = file_close,
	.ctx_set_wakeup = set_wakeup,
	.ctx_readable = readable,
	.ctx_write = ctx_write,
	.ctx_read = file_read,
	.ctx_queue = ctx_queue,
	.ctx_ioctl = ctx_ioctl,
	.events_open = events_open,
	.events_close = file_close,
	.events_set_wakeup = set_wakeup,
	.events_readable = readable,
	.events_read = file_read,
};

struct verbs_fwd *remote_verbs_dev_new(struct remote *r, const char *path)
{
	struct verbs_dev_fwd *d = g_new0(struct verbs_dev_fwd, 1);

	d->fwd.be = &fwd_backend;
	d->fwd.dev = d;
	d->r = r;
	d->path = g_strdup(path);
	return &d->fwd;
}

void remote_verbs_dev_gone(struct verbs_fwd *fwd)
{
	remote_files_gone(&((struct verbs_dev_fwd *)fwd)->files);
}

void remote_verbs_dev_free(void *fwd)
{
	struct verbs_dev_fwd *d = fwd;	/* fwd is the first member */

	remote_files_orphan(&d->files);
	g_free(d->path);
	g_free(d);
}
