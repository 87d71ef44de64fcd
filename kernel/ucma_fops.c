/* SPDX-License-Identifier: MIT */
/*
 * The rdma_cm file's operations (kernel/kfile.h), as ucma.c's ucma_fops:
 * one open is one open of the rdma_cm device (kernel/ucma.h).
 * UCMA_IOC_CMD carries a command and brings back what the kernel would
 * copy to the caller (abi/ucma_wire.h, docs/rdmacm.md); UCMA_IOC_TOKEN
 * names the file to MIGRATE_ID; a read takes one event; poll says POLLIN
 * while one is queued.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include <rdma/rdma_user_cm.h>

#include "kernel/kfile.h"
#include "kernel/ucma.h"

static int ucma_fop_open(void *dev, const struct kfile_opener *who, struct kfile_wait *w,
			 void **file)
{
	(void)who;
	(void)w;
	*file = ucma_open(dev);
	return 0;
}

static void ucma_fop_release(void *file)
{
	ucma_release(file);	/* its ids go, connected ones with a DREQ */
}

static ssize_t ucma_fop_read(void *file, void *buf, size_t count, size_t *filled)
{
	*filled = 0;
	return ucma_read_event(file, buf, count);
}

static size_t ucma_fop_read_len(const void *file)
{
	(void)file;
	return sizeof(struct rdma_ucm_event_resp);
}

static int ucma_fop_ioctl(void *file, unsigned cmd, void *arg, size_t *out_len)
{
	uint64_t token;

	*out_len = 0;
	switch (cmd) {
	case UCMA_IOC_TOKEN:
		token = ucma_file_token(file);
		memcpy(arg, &token, sizeof(token));
		*out_len = sizeof(token);
		return 0;
	case UCMA_IOC_CMD:
		ucma_wire_serve(file, arg);
		*out_len = sizeof(struct ucma_wire_cmd);
		return 0;
	default:
		return -ENOTTY;
	}
}

static unsigned ucma_fop_poll(const void *file)
{
	return POLLOUT | POLLWRNORM | (ucma_readable(file) ? POLLIN | POLLRDNORM : 0);
}

static void ucma_fop_set_wakeup(void *file, void (*fn)(void *), void *ctx)
{
	ucma_set_wakeup(file, fn, ctx);
}

/* No write: commands come in UCMA_IOC_CMD (abi/ucma_wire.h says why). */
const struct kfile_ops ucma_fops = {
	.name = "rdma_cm",
	.code = 'm',
	.everyone = true,
	.open = ucma_fop_open,
	.release = ucma_fop_release,
	.read = ucma_fop_read,
	.read_len = ucma_fop_read_len,
	.ioctl = ucma_fop_ioctl,
	.poll = ucma_fop_poll,
	.set_wakeup = ucma_fop_set_wakeup,
};
