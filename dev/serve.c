/* SPDX-License-Identifier: MIT */
/* The serve loop of FUSE and CUSE sessions; see serve.h. */
#include "config.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdio.h>

#include <fuse_lowlevel.h>

#include "dev/serve.h"
#include "lib/log.h"
#include "lib/watch.h"

/*
 * A libibumad round trip is three requests in a row (write, poll, read).
 * After answering one, look for the next for a short while before going
 * back to sleep in the main loop: the client's next request then finds us
 * awake instead of waiting for a wake-up (docs/performance.md).
 */
#define FUSE_SPIN_US 50
#define FUSE_BATCH 64	/* then back to the loop: timers, ctl, other fds */

int serve_attach(struct fuse_session *se, int fd)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/fd/%d", fd);
	return fuse_session_mount(se, path);
}

/* The id of the request in @buf; 0 if it is not in memory (spliced). */
static uint64_t request_unique(const struct fuse_buf *buf, int n)
{
	const struct fuse_in_header *in = buf->mem;

	if ((buf->flags & FUSE_BUF_IS_FD) || n < (int)sizeof(*in))
		return 0;
	return in->unique;
}

bool serve_requests(struct fuse_session *se, struct fuse_buf *buf, int fd, uint64_t *unique)
{
	unsigned batch = 0;
	int n;

	do {
		n = fuse_session_receive_buf(se, buf);
		if (n == -EINTR || n == -EAGAIN)
			return true;
		if (n <= 0) {
			g_message("FUSE connection closed (%s)", n ? g_strerror(-n) : "unmounted");
			return false;
		}
		if (unique)
			*unique = request_unique(buf, n);
		fuse_session_process_buf(se, buf);
		if (unique)
			*unique = 0;
		/* Timers and other sources must not starve: spin only briefly. */
	} while (++batch < FUSE_BATCH && serve_next_soon(fd, FUSE_SPIN_US));
	return true;
}

bool serve_next_soon(int fd, int64_t us)
{
	int64_t until = g_get_monotonic_time() + us;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0)
			return true;
		if (g_get_monotonic_time() >= until)
			return false;
	}
}

guint serve_watch(int fd, GUnixFDSourceFunc fn, void *data)
{
	guint id;

	/*
	 * Non-blocking: a request that poll() saw can be gone by the read
	 * (its caller was killed before we read it: FUSE takes it back), and
	 * a blocking read would then hold the loop until the next request,
	 * with other callers' interrupted requests unanswered behind it. A
	 * run whose command's last process was so stuck never ended.
	 */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	id = watch_fd(fd, G_IO_IN, fn, data);

	/*
	 * GLib "blocks" a non-recursive source while dispatching it by taking
	 * its fd out of the poll set and back, and each change wakes the
	 * context: two eventfd writes and a read per request. Our handlers
	 * never run the loop, so skip that (docs/design-notes.md).
	 */
	g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, id), TRUE);
	return id;
}
