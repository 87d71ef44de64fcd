/* SPDX-License-Identifier: MIT */
/*
 * The issm files of an attached host (`run --remote`): an SM run here
 * (opensm opens issmN O_NONBLOCK when it starts) sets IsSM on its port in
 * the emulator we are attached to, as on a real host. Each open is a
 * channel of that emulator's (FAST_ADOPT) on which FAST_OPEN names the
 * issm file; the emulator holds the port's issm while the channel lives
 * and answers a blocking open only once the holder lets go, so the answer
 * is awaited on our event loop, never in a blocking call
 * (dev/umad_backend.h struct issm_fwd; docs/many-hosts.md).
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

struct issm_dev_fwd {
	struct issm_fwd fwd;	/* first: what the vnode names */
	struct remote *r;
	char name[32];		/* the emulator's, "issm0" */
};

/* An open: asked, then held. */
struct issm_ask {
	int chan;
	guint watch;
	void (*done)(void *ctx, void *holding, int err);
	void *ctx;
};

static void ask_free(struct issm_ask *a)
{
	if (a->watch)
		g_source_remove(a->watch);
	close(a->chan);	/* the emulator lets go, or stops waiting */
	g_free(a);
}

static gboolean on_answer(gint fd, GIOCondition cond, gpointer data)
{
	struct issm_ask *a = data;
	struct fast_reply rep;
	ssize_t n = recv(fd, &rep, sizeof(rep), MSG_DONTWAIT);

	(void)cond;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	a->watch = 0;
	if (n != (ssize_t)sizeof(rep) || rep.ret > 0)	/* gone, or not its words */
		rep.ret = -EIO;
	if (rep.ret < 0) {
		a->done(a->ctx, NULL, (int)rep.ret);
		ask_free(a);
	} else {
		a->done(a->ctx, a, 0);	/* held until release() */
	}
	return G_SOURCE_REMOVE;
}

static void *issm_open(struct issm_fwd *f, int flags,
		       void (*done)(void *ctx, void *holding, int err), void *ctx)
{
	struct issm_dev_fwd *d = (struct issm_dev_fwd *)f;
	struct issm_ask *a;
	int ch = remote_adopted_channel(d->r);

	if (ch < 0) {
		errno = -ch;
		return NULL;
	}
	if (remote_send(ch, FAST_OPEN, 0, (uint64_t)flags, d->name, strlen(d->name), -1) < 0) {
		errno = EIO;	/* the emulator is gone */
		close(ch);
		return NULL;
	}
	a = g_new0(struct issm_ask, 1);
	a->chan = ch;
	a->done = done;
	a->ctx = ctx;
	a->watch = g_unix_fd_add(ch, G_IO_IN | G_IO_HUP | G_IO_ERR, on_answer, a);
	return a;
}

static void issm_cancel(void *pending)
{
	ask_free(pending);
}

static void issm_release(void *holding)
{
	ask_free(holding);
}

struct issm_fwd *remote_issm_dev_new(struct remote *r, const char *name)
{
	struct issm_dev_fwd *d = g_new0(struct issm_dev_fwd, 1);

	d->fwd.open = issm_open;
	d->fwd.cancel = issm_cancel;
	d->fwd.release = issm_release;
	d->r = r;
	g_strlcpy(d->name, name, sizeof(d->name));
	return &d->fwd;
}

void remote_issm_dev_free(void *fwd)
{
	g_free(fwd);
}
