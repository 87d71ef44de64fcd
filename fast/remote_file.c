/* SPDX-License-Identifier: MIT */
/* What the mirror's forwarded files share; see remote_priv.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include "fast/remote_priv.h"
#include "lib/fast_wire.h"

/* Taken ahead of the reader: beyond this the data socket is left alone,
 * its sender (the emulator) stops, and the emulator's own limit on the
 * file's queue applies, as to any slow reader. */
#define QUEUE_MAX_BYTES	(8u << 20)

static gboolean on_data(gint fd, GIOCondition cond, gpointer data);

static void watch_data(struct remote_file *f)
{
	if (!f->watch && !f->gone)
		f->watch = g_unix_fd_add(f->data, G_IO_IN | G_IO_HUP | G_IO_ERR, on_data, f);
}

/* Datagrams came (or the end): take them, as room allows, and say so. */
static gboolean on_data(gint fd, GIOCondition cond, gpointer data)
{
	struct remote_file *f = data;
	bool any = false;

	(void)fd;
	(void)cond;
	while ((!f->q.length || f->q_bytes < QUEUE_MAX_BYTES) && f->take(f))
		any = true;
	if (any || f->gone)
		f->wake(f->wake_ctx);
	if (f->gone || f->q_bytes >= QUEUE_MAX_BYTES) {
		f->watch = 0;	/* again once read below the limit */
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

void remote_file_set_wakeup(struct remote_file *f, void (*fn)(void *), void *ctx)
{
	f->wake = fn;
	f->wake_ctx = ctx;
	watch_data(f);
}

bool remote_file_readable(const struct remote_file *f)
{
	return f->q.length || f->gone;
}

void remote_file_read_done(struct remote_file *f, size_t n)
{
	f->q_bytes -= n;
	if (f->q_bytes < QUEUE_MAX_BYTES)
		watch_data(f);
}

int remote_file_open(struct remote_dev *d, struct remote_file *f, int flags, remote_take_fn take)
{
	int ch, data = -1;
	int64_t ret;

	if ((ch = remote_adopted_channel(d->r)) < 0)
		return -EIO;
	ret = remote_ask(ch, FAST_OPEN, 0, (uint64_t)flags, d->name, strlen(d->name), -1, NULL,
			 NULL, &data, REMOTE_ANSWER_TIMEOUT_MS);
	if (ret < 0 || data < 0) {
		close(ch);
		if (data >= 0)
			close(data);
		return ret == -ENOENT ? -ENODEV : -EIO;
	}
	fcntl(data, F_SETFL, O_NONBLOCK);
	memset(f, 0, sizeof(*f));
	f->chan = ch;
	f->data = data;
	f->take = take;
	g_queue_init(&f->q);
	f->files = &d->files;
	f->link.data = f;
	g_queue_push_tail_link(&d->files, &f->link);
	return 0;
}

void remote_file_close(struct remote_file *f, GDestroyNotify free_item)
{
	if (f->watch)
		g_source_remove(f->watch);
	f->watch = 0;
	if (f->files)
		g_queue_unlink(f->files, &f->link);
	close(f->data);	/* the emulator's last close of its file */
	close(f->chan);
	g_queue_clear_full(&f->q, free_item);
}

int64_t remote_file_ask(struct remote_file *f, uint32_t op, uint32_t flags, uint64_t arg,
			const void *in, size_t n, int fd, char **out, size_t *out_len)
{
	int64_t ret = remote_ask(f->chan, op, flags, arg, in, n, fd, out, out_len, NULL,
				 REMOTE_ANSWER_TIMEOUT_MS);

	return ret == -ETIMEDOUT ? -EIO : ret;
}

struct remote_dev *remote_dev_new(struct remote *r, const struct kfile_ops *ops,
				  const char *name)
{
	struct remote_dev *d = g_new0(struct remote_dev, 1);

	d->node = (struct kfile_node){ ops, d };
	d->r = r;
	d->name = g_strdup(name);
	g_queue_init(&d->files);
	g_queue_init(&d->asks);
	return d;
}

void remote_dev_gone(struct remote_dev *d)
{
	GList *l, *next;

	for (l = d->files.head; l; l = next) {
		struct remote_file *f = l->data;

		next = l->next;	/* a woken reader's reply cannot close it */
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
		((struct remote_file *)l->data)->files = NULL;
	remote_issm_orphan(d);
	g_free(d->name);
	g_free(d);
}
