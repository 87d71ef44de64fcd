/* SPDX-License-Identifier: MIT */
/*
 * The verbs files of an attached host (`run --remote`, `start --remote`):
 * its `uverbsN` devices, so that libibverbs and the ibemu provider here
 * see the attached HCAs (docs/many-hosts.md "Verbs on an attached host").
 * devfile.c serves them as it serves an emulator's own, by this table
 * (kernel/kfile.h; a command file is uverbs_cmd_fops over it): each open of
 * a context or event file is
 * a channel of the emulator we are attached to (FAST_ADOPT) on which
 * FAST_OPEN names the file by its sysfs path (fast/fastpath_verbs.h);
 * packet records and QP ioctls are requests there, answered by its verbs
 * devices; what it queues comes on the data socket and is taken into a
 * queue here as it comes. A completion channel's upcall and a wake-up
 * stay here, in uverbs_cmd_fops: only a process of this host can be given
 * the channel's file descriptor (docs/verbs.md "Completion channels").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "fast/remote_priv.h"
#include "lib/fast_wire.h"
#include "lib/verbs_wire.h"

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

static int file_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
		     void **file)
{
	struct remote_dev *d = dev;
	struct vfile *f = g_new0(struct vfile, 1);
	int r = remote_file_open(d, &f->rf, O_RDWR, take);

	(void)who;
	(void)w;
	if (r < 0) {
		g_free(f);
		return r;
	}
	f->events = d->events;
	*file = f;
	return 0;
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

static unsigned file_poll(const void *file)
{
	const struct vfile *f = file;
	unsigned in = remote_file_readable(&f->rf) ? POLLIN | POLLRDNORM : 0;

	return f->events ? in : POLLOUT | POLLWRNORM | in;
}

/* uverbs_ctx_read's rules (as many whole records as fit, EINVAL when the
 * next does not), or uverbs_events_read's (one event); EIO once the
 * emulator is gone and nothing is left, as ib_uverbs' files of a removed
 * device. */
static ssize_t file_read(void *file, void *buf, size_t count, size_t *filled)
{
	struct vfile *f = file;
	size_t got = 0;
	GBytes *b;

	*filled = 0;
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

/* Packet records (uverbs_ctx_fops's write); the event file has none. */
static ssize_t file_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	struct vfile *f = file;

	(void)w;
	if (f->events)
		return -EINVAL;
	if (count > FAST_INLINE_MAX)	/* the provider sends at most 16 KiB */
		return -EINVAL;
	return (ssize_t)remote_file_ask(&f->rf, FAST_WRITE, 0, count, buf, count, -1, NULL, NULL);
}

/* The QP ioctls (verbs_ioc_is_qp): the struct there and back. */
static int file_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	struct vfile *f = file;
	char *out = NULL;
	size_t got = 0;
	int64_t ret;

	*out_len = 0;
	if (f->events || !verbs_ioc_is_qp(cmd))
		return -ENOTTY;
	ret = remote_file_ask(&f->rf, FAST_IOCTL, 0, cmd, arg, _IOC_SIZE(cmd), -1, &out, &got);
	if (ret == 0 && got == _IOC_SIZE(cmd)) {
		memcpy(arg, out, got);
		*out_len = got;
	} else if (ret == 0) {
		ret = -EIO;
	}
	g_free(out);
	return (int)ret;
}

const struct kfile_ops remote_verbs_fops = {
	.name = "uverbs_events",	/* a context's is only ever below uverbs_cmd_fops */
	.everyone = true,
	.open = file_open,
	.release = file_close,
	.read = file_read,
	.write = file_write,
	.ioctl = file_ioctl,
	.poll = file_poll,
	.set_wakeup = set_wakeup,
};
