/* SPDX-License-Identifier: MIT */
/*
 * The umad and issm files' operations (kernel/kfile.h), as user_mad.c's
 * umad_fops and umad_sm_fops: over kernel/umad.h, for every transport.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "fabric/packet.h"
#include "kernel/kfile.h"
#include "kernel/umad.h"

_Static_assert(UMAD_MAX_WRITE <= KFILE_WRITE_MAX, "a umad write fits a forwarded one");

static int umad_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
			 void **file)
{
	struct umad_file *f = umad_open(dev);

	(void)w;
	umad_set_client(f, who->pid, who->via);
	*file = f;
	return 0;
}

static void umad_fop_release(void *file)
{
	umad_release(file);
}

/* ib_umad_read: on ENOSPC the header (with the length needed) and the
 * first segment are in the caller's buffer (docs/umad.md §4.8). */
static ssize_t umad_fop_read(void *file, void *buf, size_t count, size_t *filled)
{
	ssize_t n = umad_read(file, buf, count);

	*filled = n == -ENOSPC ? umad_hdr_size(file) + MAD_SIZE : 0;
	return n;
}

static size_t umad_fop_read_len(const void *file)
{
	size_t least = umad_hdr_size(file) + MAD_SIZE;

	return MAX(umad_next_len(file), least);
}

static ssize_t umad_fop_write(void *file, const void *buf, size_t count, struct kfile_wait *w)
{
	(void)w;
	return umad_write(file, buf, count);
}

static int umad_fop_check_write_size(void *file, size_t count)
{
	return umad_check_write_size(file, count);
}

static int umad_fop_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	return umad_ioctl(file, cmd, arg, out_len);
}

static unsigned umad_fop_poll(const void *file)
{
	return POLLOUT | POLLWRNORM | (umad_readable(file) ? POLLIN | POLLRDNORM : 0);
}

static void umad_fop_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	umad_set_wakeup(file, fn, ctx);
}

static void umad_fop_set_client(void *file, int pid, const char *via)
{
	umad_set_client(file, pid, via);
}

static void umad_fop_set_accepted(void *file, void (*fn)(void *), void *ctx)
{
	umad_set_accepted(file, fn, ctx);
}

static void umad_fop_set_outside(void *file, size_t bytes)
{
	umad_set_outside(file, bytes);
}

static unsigned umad_fop_split_hdr(const void *file)
{
	return umad_hdr_size(file);
}

const struct kfile_ops umad_fops = {
	.name = "umad",
	.code = 'u',
	.chardev = true,
	.quick_calls = true,
	.open = umad_fop_open,
	.release = umad_fop_release,
	.read = umad_fop_read,
	.read_len = umad_fop_read_len,
	.write = umad_fop_write,
	.check_write_size = umad_fop_check_write_size,
	.ioctl = umad_fop_ioctl,
	.poll = umad_fop_poll,
	.set_wakeup = umad_fop_set_wakeup,
	.set_client = umad_fop_set_client,
	.set_accepted = umad_fop_set_accepted,
	.set_outside = umad_fop_set_outside,
	.split_hdr = umad_fop_split_hdr,
};

/* ib_umad_sm_open: one holder sets IsSM; O_NONBLOCK says EAGAIN while it
 * is held, else the open sleeps until the holder lets go (docs/umad.md §7).
 * The open file is the device itself. */
static int issm_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
			 void **file)
{
	*file = dev;
	if (umad_issm_open(dev) == 0)
		return 0;
	if (who->flags & O_NONBLOCK)
		return -EAGAIN;
	umad_issm_wait(dev, w);
	return KFILE_LATER;
}

static void issm_fop_cancel(void *dev, struct kfile_wait *w)
{
	umad_issm_unwait(dev, w);
}

static void issm_fop_release(void *file)
{
	umad_issm_close(file);	/* the next waiter takes it */
}

/* No read, write, ioctl or poll: the VFS's answers (umad_sm_fops). */
const struct kfile_ops issm_fops = {
	.name = "issm",
	.code = 'i',
	.chardev = true,
	.open = issm_fop_open,
	.cancel = issm_fop_cancel,
	.release = issm_fop_release,
};
