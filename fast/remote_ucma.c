/* SPDX-License-Identifier: MIT */
/*
 * The rdma_cm file of an attached host (`run --remote`, `start --remote`):
 * class/infiniband_ucma/ibemu_cmd and dev/rdma_cm of its mirror, so that
 * librdmacm here reaches the connection manager of the attached HCAs,
 * which lives in the emulator we are attached to, beside their ports
 * (fast/attach.c). devfile.c serves it by this table (kernel/kfile.h):
 * each open is a channel there (FAST_ADOPT) on which
 * FAST_OPEN names the file by its path (fast/fastpath_verbs.h); commands
 * and tokens are ioctl requests, events come on the data socket one a
 * datagram and are taken into a queue here as they come.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/rdma_user_cm.h>

#include "fast/remote_priv.h"
#include "lib/fast_wire.h"
#include "lib/ucma_wire.h"

/* remote_take_fn: one event off the data socket. The emulator's own bound
 * on a file's events (UCMA_EVENTS_MAX) holds what it sends; what we hold
 * unread is held by remote_file.c's byte bound (it stops taking). */
static bool take(struct remote_file *f)
{
	struct rdma_ucm_event_resp ev;
	ssize_t n = recv(f->data, &ev, sizeof(ev), MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n != (ssize_t)sizeof(ev)) {
		f->gone = true;	/* the end, or not our words: fail the reads */
		return false;
	}
	g_queue_push_tail(&f->q, g_memdup2(&ev, sizeof(ev)));
	f->q_bytes += sizeof(ev);
	return true;
}

static int fwd_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
		    void **file)
{
	struct remote_file *f = g_new0(struct remote_file, 1);
	int r = remote_file_open(dev, f, O_RDWR, take);

	(void)who;
	(void)w;
	if (r < 0) {
		g_free(f);
		return r;
	}
	*file = f;
	return 0;
}

static void fwd_release(void *f)
{
	remote_file_close(f, g_free);
	g_free(f);
}

static void fwd_set_wakeup(void *f, void (*fn)(void *), void *ctx)
{
	remote_file_set_wakeup(f, fn, ctx);
}

static unsigned fwd_poll(const void *f)
{
	return POLLOUT | POLLWRNORM | (remote_file_readable(f) ? POLLIN | POLLRDNORM : 0);
}

/* ucma_read_event's rules: one event, EINVAL for a smaller buffer; EIO
 * once the emulator is gone and nothing is left. */
static ssize_t fwd_read(void *file, void *buf, size_t count, size_t *filled)
{
	struct remote_file *f = file;
	void *ev;

	*filled = 0;
	if (!f->q.length)
		return f->gone ? -EIO : -EAGAIN;
	if (count < sizeof(struct rdma_ucm_event_resp))
		return -EINVAL;
	ev = g_queue_pop_head(&f->q);
	memcpy(buf, ev, sizeof(struct rdma_ucm_event_resp));
	g_free(ev);
	remote_file_read_done(f, sizeof(struct rdma_ucm_event_resp));
	return sizeof(struct rdma_ucm_event_resp);
}

static size_t fwd_read_len(const void *f)
{
	(void)f;
	return sizeof(struct rdma_ucm_event_resp);
}

/* UCMA_IOC_CMD and UCMA_IOC_TOKEN: their struct there and back. */
static int fwd_ioctl(void *f, unsigned cmd, void *arg, size_t *out_len)
{
	char *out = NULL;
	size_t got = 0, in = cmd == UCMA_IOC_CMD ? sizeof(struct ucma_wire_cmd) : 0;
	int64_t ret;

	*out_len = 0;
	if (cmd != UCMA_IOC_CMD && cmd != UCMA_IOC_TOKEN)
		return -ENOTTY;
	ret = remote_file_ask(f, FAST_IOCTL, 0, cmd, arg, in, -1, &out, &got);
	if (ret == 0 && got == _IOC_SIZE(cmd)) {
		memcpy(arg, out, got);
		*out_len = got;
	} else if (ret == 0) {
		ret = -EIO;
	}
	g_free(out);
	return (int)ret;
}

const struct kfile_ops remote_ucma_fops = {
	.name = "rdma_cm",
	.everyone = true,
	.open = fwd_open,
	.release = fwd_release,
	.read = fwd_read,
	.read_len = fwd_read_len,
	.ioctl = fwd_ioctl,
	.poll = fwd_poll,
	.set_wakeup = fwd_set_wakeup,
};
