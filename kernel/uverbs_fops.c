/* SPDX-License-Identifier: MIT */
/*
 * The verbs files' operations (kernel/kfile.h, docs/verbs.md "Daemon
 * files"), in two halves as the work divides:
 *
 * uverbs_ctx_fops, a verbs context: packet records written and read
 * (abi/verbs_wire.h), the QP ioctls. What every transport carries to
 * the emulator that owns the ports: the fast path serves it, and an
 * attached host forwards it (socket/remote_file.c).
 *
 * uverbs_cmd_fops, the command file a process opens (uverbsN in CUSE
 * mode, the provider's sysfs file): a context below (any struct
 * kfile_node: this emulator's, or a forwarded one), and above it what
 * only the host of the process can do: CREATE_COMP_CHANNEL, held until
 * the provider, asked by an upcall record, has made the channel in the
 * writer's process and says so with VERBS_IOC_UPCALL_DONE (docs/verbs.md
 * "Completion channels"); VERBS_IOC_SEND, records in an ioctl; and
 * VERBS_IOC_WAKE. Of the uverbs commands only CREATE_COMP_CHANNEL is
 * served: another fails as ib_uverbs_write() fails a command the device
 * does not support.
 *
 * uverbs_events_fops, the async event file (ib_uverbs_async_event_fops):
 * one event a read; no write, no ioctl.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "abi/verbs_wire.h"
#include "kernel/kfile.h"
#include "kernel/uverbs.h"

/* ---- a context ---------------------------------------------------------- */

static int ctx_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
			void **file)
{
	(void)who;
	(void)w;
	*file = uverbs_ctx_open(dev);
	return 0;
}

static void ctx_fop_release(void *file)
{
	uverbs_ctx_close(file);	/* its QP numbers go with it */
}

static ssize_t ctx_fop_read(void *file, void *buf, size_t count, size_t *filled)
{
	*filled = 0;
	return uverbs_ctx_read(file, buf, count);
}

/* Packet records only: a uverbs command is the host's (uverbs_cmd_fops). */
static ssize_t ctx_fop_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	uint32_t type;

	(void)w;
	if (count < sizeof(struct verbs_wire_rec))
		return -EINVAL;
	memcpy(&type, buf, sizeof(type));
	if ((type & 0xffff0000u) != VERBS_REC_MAGIC)
		return -EOPNOTSUPP;
	return uverbs_ctx_write(file, buf, count);
}

/* The QP ioctls; RDMA_VERBS_IOCTL is not served: ENOTTY makes libibverbs
 * use write() and sysfs. */
static int ctx_fop_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	int r;

	*out_len = 0;
	if (!verbs_ioc_is_qp(cmd))
		return -ENOTTY;
	if ((r = uverbs_ctx_ioctl(file, cmd, arg)) == 0)
		*out_len = _IOC_SIZE(cmd);
	return r;
}

static unsigned ctx_fop_poll(const void *file)
{
	return POLLOUT | POLLWRNORM | (uverbs_ctx_readable(file) ? POLLIN | POLLRDNORM : 0);
}

static void ctx_fop_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	uverbs_ctx_set_wakeup(file, fn, ctx);
}

const struct kfile_ops uverbs_ctx_fops = {
	.name = "uverbs_ctx",
	.everyone = true,
	.open = ctx_fop_open,
	.release = ctx_fop_release,
	.read = ctx_fop_read,
	.write = ctx_fop_write,
	.ioctl = ctx_fop_ioctl,
	.poll = ctx_fop_poll,
	.set_wakeup = ctx_fop_set_wakeup,
};

/* ---- the command file --------------------------------------------------- */

/* Upcalls one context may have unanswered: a provider that never answers
 * holds this many writers, no more. */
#define UPCALLS_MAX	64

/* struct ib_uverbs_cmd_hdr: command, in_words, out_words. */
#define UVERBS_CMD_HDR_SIZE	8
/* ...and struct ib_uverbs_create_comp_channel: the response pointer. */
#define UVERBS_CREATE_COMP_CHANNEL_SIZE	16

struct cmd_file {
	const struct kfile_ops *lower;
	void *lower_dev;
	void *ctx;		/* the lower half's open file */
	struct kfile_wait wait;	/* its open, while the lower half answers later */
	struct kfile_wait *opener;	/* ... and ours */
	GQueue own;		/* GBytes *: upcall and wake records, read first */
	GHashTable *held;	/* id -> struct held *: writes waiting for their upcall */
	uint32_t next_id;
	void (*wake)(void *);
	void *wake_ctx;
};

struct held {
	struct kfile_wait *w;
	size_t size;
};

static void held_fail(void *data)
{
	struct held *h = data;

	h->w->done(h->w, -EIO, NULL);
	g_free(h);
}

static void cmd_woken(void *data)
{
	struct cmd_file *cf = data;

	if (cf->wake)
		cf->wake(cf->wake_ctx);
}

static void queue_own(struct cmd_file *cf, const void *rec, size_t len)
{
	g_queue_push_tail(&cf->own, g_bytes_new(rec, len));
	cmd_woken(cf);
}

static void cmd_opened(struct cmd_file *cf, void *ctx)
{
	cf->ctx = ctx;
	cf->held = g_hash_table_new_full(NULL, NULL, NULL, held_fail);
	cf->lower->set_wakeup(ctx, cmd_woken, cf);
}

/* The lower half answered later (a forwarded context, over its channel). */
static void cmd_open_done(struct kfile_wait *w, int64_t ret, void *ctx)
{
	struct cmd_file *cf = w->layer;
	struct kfile_wait *opener = cf->opener;

	if (ret < 0) {
		g_free(cf);
		opener->done(opener, ret, NULL);
		return;
	}
	cmd_opened(cf, ctx);
	opener->done(opener, 0, cf);
}

static int cmd_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
			void **file)
{
	const struct kfile_node *lower = dev;
	struct cmd_file *cf = g_new0(struct cmd_file, 1);
	void *ctx = NULL;
	int r;

	cf->lower = lower->ops;
	cf->lower_dev = lower->dev;
	g_queue_init(&cf->own);
	cf->wait = (struct kfile_wait){ .done = cmd_open_done, .layer = cf };
	cf->opener = w;
	r = lower->ops->open(lower->dev, who, &cf->wait, &ctx);
	if (r == KFILE_LATER && w) {
		w->layer = cf;
		return r;
	}
	if (r) {
		if (r == KFILE_LATER)	/* a caller that cannot wait */
			lower->ops->cancel(lower->dev, &cf->wait);
		g_free(cf);
		return r == KFILE_LATER ? -EOPNOTSUPP : r;
	}
	cmd_opened(cf, ctx);
	*file = cf;
	return 0;
}

static void cmd_fop_cancel(void *dev, struct kfile_wait *w)
{
	struct cmd_file *cf = w->layer;

	(void)dev;
	cf->lower->cancel(cf->lower_dev, &cf->wait);
	g_free(cf);
}

static void cmd_fop_release(void *file)
{
	struct cmd_file *cf = file;

	g_hash_table_destroy(cf->held);	/* held writes fail with EIO */
	cf->lower->release(cf->ctx);
	g_queue_clear_full(&cf->own, (GDestroyNotify)g_bytes_unref);
	g_free(cf);
}

/* Our own records first, then the context's, as many whole ones as fit. */
static ssize_t cmd_fop_read(void *file, void *buf, size_t count, size_t *filled)
{
	struct cmd_file *cf = file;
	size_t got = 0, len;
	ssize_t n;
	GBytes *b;

	*filled = 0;
	while ((b = g_queue_peek_head(&cf->own)) && (len = g_bytes_get_size(b)) <= count - got) {
		memcpy((uint8_t *)buf + got, g_bytes_get_data(b, NULL), len);
		got += len;
		g_bytes_unref(g_queue_pop_head(&cf->own));
	}
	if (b && !got)
		return -EINVAL;	/* the next record does not fit */
	if (b)
		return (ssize_t)got;
	n = cf->lower->read(cf->ctx, (uint8_t *)buf + got, count - got, filled);
	if (got && n < 0)
		return (ssize_t)got;
	return n < 0 ? n : (ssize_t)got + n;
}

static ssize_t comp_channel_upcall(struct cmd_file *cf, const void *buf, size_t size,
				   struct kfile_wait *w)
{
	struct verbs_wire_upcall up = { .rec = { VERBS_REC_UPCALL, sizeof(up) } };
	struct held *h;

	/* ib_uverbs_write(): the command's own size, or EINVAL. */
	if (size < UVERBS_CREATE_COMP_CHANNEL_SIZE)
		return -EINVAL;
	if (!w)
		return -EOPNOTSUPP;	/* a transport that cannot wait */
	if (g_hash_table_size(cf->held) >= UPCALLS_MAX)
		return -EMFILE;
	up.id = ++cf->next_id;
	up.command = VERBS_CMD_CREATE_COMP_CHANNEL;
	memcpy(&up.response, (const uint8_t *)buf + UVERBS_CMD_HDR_SIZE, sizeof(up.response));
	h = g_new0(struct held, 1);
	h->w = w;
	h->size = size;
	g_hash_table_insert(cf->held, GUINT_TO_POINTER(up.id), h);
	queue_own(cf, &up, sizeof(up));
	return KFILE_LATER;
}

static ssize_t cmd_fop_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	struct cmd_file *cf = file;
	uint32_t command;

	/* ib_uverbs_write(): a short header is EINVAL, a command without a
	 * handler EOPNOTSUPP (uapi_get_method). */
	if (count < UVERBS_CMD_HDR_SIZE)
		return -EINVAL;
	memcpy(&command, buf, sizeof(command));
	if ((command & 0xffff0000u) == VERBS_REC_MAGIC)
		return cf->lower->write(cf->ctx, buf, count, NULL);
	if (command == VERBS_CMD_CREATE_COMP_CHANNEL)
		return comp_channel_upcall(cf, buf, count, w);
	return -EOPNOTSUPP;
}

static int upcall_done(struct cmd_file *cf, const struct verbs_ioc_upcall_done *done)
{
	struct held *h = g_hash_table_lookup(cf->held, GUINT_TO_POINTER(done->id));

	if (!h)
		return -EINVAL;
	g_hash_table_steal(cf->held, GUINT_TO_POINTER(done->id));
	h->w->done(h->w, done->error > 0 ? -(int64_t)done->error : (int64_t)h->size, NULL);
	g_free(h);
	return 0;
}

/* The writer was interrupted: its upcall's answer finds nothing, as the
 * provider's for a channel it no longer wants should (EINVAL). */
static void cmd_fop_cancel_write(void *file, struct kfile_wait *w)
{
	struct cmd_file *cf = file;
	GHashTableIter it;
	struct held *h;

	g_hash_table_iter_init(&it, cf->held);
	while (g_hash_table_iter_next(&it, NULL, (void **)&h)) {
		if (h->w == w) {
			g_hash_table_iter_steal(&it);
			g_free(h);
			return;
		}
	}
}

static int cmd_fop_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	struct cmd_file *cf = file;
	const struct verbs_ioc_send *send = arg;
	struct verbs_wire_rec wake = { VERBS_REC_WAKE, sizeof(wake) };
	ssize_t n;

	*out_len = 0;
	switch (cmd) {
	case VERBS_IOC_UPCALL_DONE:
		return upcall_done(cf, arg);
	case VERBS_IOC_SEND:
		if (send->len > sizeof(send->data))
			return -EINVAL;
		n = cf->lower->write(cf->ctx, send->data, send->len, NULL);
		return n < 0 ? (int)n : 0;
	case VERBS_IOC_WAKE:
		queue_own(cf, &wake, sizeof(wake));
		return 0;
	default:
		return cf->lower->ioctl(cf->ctx, cmd, arg, out_len);
	}
}

static unsigned cmd_fop_poll(const void *file)
{
	const struct cmd_file *cf = file;
	bool in = cf->own.length || kfile_readable(cf->lower, cf->ctx);

	return POLLOUT | POLLWRNORM | (in ? POLLIN | POLLRDNORM : 0);
}

static void cmd_fop_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	struct cmd_file *cf = file;

	cf->wake = fn;
	cf->wake_ctx = ctx;
}

const struct kfile_ops uverbs_cmd_fops = {
	.name = "uverbs",
	.code = 'c',
	.chardev = true,
	.everyone = true,
	.stacked = true,
	.open = cmd_fop_open,
	.cancel = cmd_fop_cancel,
	.release = cmd_fop_release,
	.read = cmd_fop_read,
	.write = cmd_fop_write,
	.cancel_write = cmd_fop_cancel_write,
	.ioctl = cmd_fop_ioctl,
	.poll = cmd_fop_poll,
	.set_wakeup = cmd_fop_set_wakeup,
};

/* ---- the async event file ---------------------------------------------- */

static int ev_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
		       void **file)
{
	(void)who;
	(void)w;
	*file = uverbs_events_open(dev);
	return 0;
}

static void ev_fop_release(void *file)
{
	uverbs_events_close(file);
}

/* ib_uverbs_event_read(): EINVAL for a short buffer, then one event. */
static ssize_t ev_fop_read(void *file, void *buf, size_t count, size_t *filled)
{
	*filled = 0;
	return uverbs_events_read(file, buf, count);
}

static size_t ev_fop_read_len(const void *file)
{
	(void)file;
	return sizeof(struct verbs_wire_event);
}

static unsigned ev_fop_poll(const void *file)
{
	return uverbs_events_readable(file) ? POLLIN | POLLRDNORM : 0;
}

static void ev_fop_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	uverbs_events_set_wakeup(file, fn, ctx);
}

const struct kfile_ops uverbs_events_fops = {
	.name = "uverbs_events",
	.code = 'e',
	.everyone = true,
	.open = ev_fop_open,
	.release = ev_fop_release,
	.read = ev_fop_read,
	.read_len = ev_fop_read_len,
	.poll = ev_fop_poll,
	.set_wakeup = ev_fop_set_wakeup,
};
