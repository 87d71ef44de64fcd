/* SPDX-License-Identifier: MIT */
/*
 * The issm files of an attached host (`run --remote`): an SM run here
 * (opensm opens issmN O_NONBLOCK when it starts) sets IsSM on its port in
 * the emulator we are attached to, as on a real host. Each open is a
 * channel of that emulator's (FAST_ADOPT) on which FAST_OPEN names the
 * issm file; the emulator holds the port's issm while the channel lives
 * and answers a blocking open only once the holder lets go, so the answer
 * is awaited on our event loop, never in a blocking call
 * (kernel/kfile.h KFILE_LATER; docs/many-hosts.md).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "fast/remote_priv.h"
#include "lib/fast_wire.h"

/* An open: asked, then held (the open file). */
struct issm_ask {
	struct remote_dev *d;	/* NULL once the device is freed (at exit) */
	int chan;
	guint watch;
	struct kfile_wait *w;	/* while asked */
};

static void ask_free(struct issm_ask *a)
{
	if (a->watch)
		g_source_remove(a->watch);
	if (a->d)
		g_queue_remove(&a->d->asks, a);
	close(a->chan);	/* the emulator lets go, or stops waiting */
	g_free(a);
}

static gboolean on_answer(gint fd, GIOCondition cond, gpointer data)
{
	struct issm_ask *a = data;
	struct kfile_wait *w = a->w;
	struct fast_reply rep;
	ssize_t n = recv(fd, &rep, sizeof(rep), MSG_DONTWAIT);

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	a->watch = 0;
	a->w = NULL;
	if (n != (ssize_t)sizeof(rep) || rep.ret > 0)	/* gone, or not its words */
		rep.ret = -EIO;
	if (rep.ret < 0) {
		ask_free(a);
		w->done(w, rep.ret, NULL);
	} else {
		w->done(w, 0, a);	/* held until release() */
	}
	return G_SOURCE_REMOVE;
}

/* Asked on the event loop, never in a blocking call: the answer to a
 * blocking open comes only once the holder there lets go. */
static int issm_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
		     void **file)
{
	struct remote_dev *d = dev;
	struct issm_ask *a;
	int ch = remote_adopted_channel(d->r);

	(void)file;
	if (ch < 0)
		return ch;
	if (remote_send(ch, FAST_OPEN, 0, (uint64_t)who->flags, d->name, strlen(d->name), -1) < 0) {
		close(ch);
		return -EIO;	/* the emulator is gone */
	}
	a = g_new0(struct issm_ask, 1);
	a->d = d;
	a->chan = ch;
	a->w = w;
	a->watch = g_unix_fd_add(ch, G_IO_IN | G_IO_HUP | G_IO_ERR, on_answer, a);
	g_queue_push_tail(&d->asks, a);
	return KFILE_LATER;
}

static void issm_cancel(void *dev, struct kfile_wait *w)
{
	struct remote_dev *d = dev;
	GList *l;

	for (l = d->asks.head; l; l = l->next) {
		struct issm_ask *a = l->data;

		if (a->w == w) {
			ask_free(a);
			return;
		}
	}
}

void remote_issm_orphan(struct remote_dev *d)
{
	struct issm_ask *a;

	while ((a = g_queue_pop_head(&d->asks)))
		a->d = NULL;
}

static void issm_release(void *holding)
{
	ask_free(holding);
}

const struct kfile_ops remote_issm_fops = {
	.name = "issm",
	.chardev = true,
	.open = issm_open,
	.cancel = issm_cancel,
	.release = issm_release,
};
