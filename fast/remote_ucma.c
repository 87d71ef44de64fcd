/* SPDX-License-Identifier: MIT */
/*
 * The rdma_cm file of an attached host (`run --remote`, `start --remote`):
 * class/infiniband_ucma/ibemu_cmd and dev/rdma_cm of its mirror, so that
 * librdmacm here reaches the connection manager of the attached HCAs,
 * which lives in the emulator we are attached to, beside their ports
 * (fast/attach.c). devfile_ucma.c serves it on this backend
 * (dev/ucma_backend.h): each open is a channel there (FAST_ADOPT) on which
 * FAST_OPEN names the file by its path (fast/fastpath_verbs.h); commands
 * and tokens are ioctl requests, events come on the data socket one a
 * datagram and are taken into a queue here as they come.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/rdma_user_cm.h>

#include "dev/ucma_backend.h"
#include "fast/remote_priv.h"
#include "lib/fast_wire.h"

struct ucma_dev_fwd {
	struct ucma_fwd fwd;	/* first: what the vnode names */
	struct remote *r;
	char *path;		/* the file's, in the emulator's sysfs */
	GQueue files;		/* struct remote_file *, open */
};

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

static void *fwd_open(void *dev)
{
	struct ucma_dev_fwd *d = dev;
	struct remote_file *f = g_new0(struct remote_file, 1);
	int r = remote_file_open(d->r, &d->files, f, d->path, O_RDWR, take);

	if (r < 0) {
		g_free(f);
		errno = -r;
		return NULL;
	}
	return f;
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

static bool fwd_readable(const void *f)
{
	return remote_file_readable(f);
}

/* ucma_read_event's rules: one event, EINVAL for a smaller buffer; EIO
 * once the emulator is gone and nothing is left. */
static ssize_t fwd_read_event(void *file, void *buf, size_t count)
{
	struct remote_file *f = file;
	void *ev;

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

static int fwd_command(void *f, struct ucma_wire_cmd *w)
{
	char *out = NULL;
	size_t got = 0;
	int64_t ret = remote_file_ask(f, FAST_IOCTL, 0, UCMA_IOC_CMD, w, sizeof(*w), -1, &out,
				      &got);

	if (ret == 0 && got == sizeof(*w))
		memcpy(w, out, got);
	else if (ret == 0)
		ret = -EIO;
	g_free(out);
	return (int)ret;
}

static int fwd_token(void *f, uint64_t *token)
{
	char *out = NULL;
	size_t got = 0;
	int64_t ret = remote_file_ask(f, FAST_IOCTL, 0, UCMA_IOC_TOKEN, NULL, 0, -1, &out, &got);

	if (ret == 0 && got == sizeof(*token))
		memcpy(token, out, got);
	else if (ret == 0)
		ret = -EIO;
	g_free(out);
	return (int)ret;
}

static const struct ucma_backend fwd_backend = {
	.open = fwd_open,
	.release = fwd_release,
	.set_wakeup = fwd_set_wakeup,
	.readable = fwd_readable,
	.read_event = fwd_read_event,
	.command = fwd_command,
	.token = fwd_token,
};

struct ucma_fwd *remote_ucma_dev_new(struct remote *r, const char *path)
{
	struct ucma_dev_fwd *d = g_new0(struct ucma_dev_fwd, 1);

	d->fwd.be = &fwd_backend;
	d->fwd.dev = d;
	d->r = r;
	d->path = g_strdup(path);
	return &d->fwd;
}

void remote_ucma_dev_gone(struct ucma_fwd *fwd)
{
	remote_files_gone(&((struct ucma_dev_fwd *)fwd)->files);
}

void remote_ucma_dev_free(void *fwd)
{
	struct ucma_dev_fwd *d = fwd;	/* fwd is the first member */

	remote_files_orphan(&d->files);
	g_free(d->path);
	g_free(d);
}
