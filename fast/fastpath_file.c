/* SPDX-License-Identifier: MIT */
/* The umad files the fast path serves over data sockets; see fastpath_priv.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib-unix.h>

#include "ctl/ctl.h"
#include "dev/serve.h"
#include "dev/vfs.h"
#include "fast/fastpath_priv.h"
#include "fast/fastpath_verbs.h"
#include "fast/fastslot.h"
#include "lib/fast_wire.h"
#include "lib/fd_pass.h"
#include "lib/listener.h"
#include "lib/log.h"

/* The last holder closed the data socket: the kernel's release. The
 * queue goes with the file, a packet waiting for room too. */
void fp_file_release(struct fast_file *ff)
{
	if (ff->data_watch)
		g_source_remove(ff->data_watch);
	if (ff->out_watch)
		g_source_remove(ff->out_watch);
	ff->data_watch = ff->out_watch = 0;
	umad_release(ff->uf);
	ff->uf = NULL;
	close(ff->data);
	ff->data = -1;
	if (ff->pend_memfd >= 0)
		close(ff->pend_memfd);
	ff->pend_memfd = -1;
	g_clear_pointer(&ff->pend_bytes, g_free);
}

void fp_file_free(struct fast_file *ff)
{
	if (ff->uf)	/* opened, not released yet */
		fp_file_release(ff);
	g_free(ff);
}

/* Released and named by no channel: forget it. */
void fp_file_maybe_free(struct fast_file *ff)
{
	if (!ff->uf && !ff->chans)
		g_ptr_array_remove_fast(ff->fp->files, ff);	/* frees */
}

/* ---- packets out, on the data socket ----------------------------------- */

static int send_pkt(struct fast_file *ff, const struct fast_pkt *h, const uint8_t *bytes,
		    int memfd)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)h, .iov_len = sizeof(*h) },
		{ .iov_base = (void *)bytes, .iov_len = bytes ? h->len : 0 },
	};
	union fd_cmsg u;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = bytes ? 2 : 1 };

	fd_pass_put(&msg, &u, memfd);
	return sendmsg(ff->data, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static gboolean on_data_room(gint fd, GIOCondition cond, gpointer data);
static void push_packets(struct fast_file *ff);

/* Whether @len more bytes may go into the data socket now (above). */
static bool room_ahead(struct fast_file *ff, size_t len)
{
	static const struct fast_pkt mark = { .flags = FAST_F_HELD };

	if (ff->held)
		return false;
	if (!ff->sock_bytes || ff->sock_bytes + len <= SOCK_AHEAD_BYTES)
		return true;
	if (send_pkt(ff, &mark, NULL, -1) == 0)
		ff->held = true;
	else if (!ff->out_watch)	/* no room even for the mark */
		ff->out_watch = g_unix_fd_add(ff->data, G_IO_OUT, on_data_room, ff);
	return false;
}

/* FAST_PUSH: the reader took the mark. Believed only if the socket is
 * empty (nothing the reader has not taken is counted out). */
void fp_let_go(struct fast_file *ff)
{
	int queued = 1;

	if (!ff->held || ioctl(ff->data, SIOCOUTQ, &queued) < 0 || queued)
		return;
	ff->held = false;
	ff->sock_bytes = 0;
	push_packets(ff);
}

/* The umad core counts what is in the socket and waiting for it. */
static void count_outside(struct fast_file *ff)
{
	bool pend = ff->pend_bytes || ff->pend_memfd >= 0;

	umad_set_outside(ff->uf, ff->sock_bytes + (pend ? ff->pend.len : 0));
}

/* Take the packet at the head of the umad queue as the one to send. */
static bool take_next(struct fast_file *ff)
{
	size_t len = umad_next_len(ff->uf);
	ssize_t n;

	if (!len)
		return false;
	ff->pend_bytes = g_malloc(len);
	n = umad_read(ff->uf, ff->pend_bytes, len);
	if (n < 0) {
		g_warning("fast path: a queued packet could not be taken: %s",
			  g_strerror((int)-n));
		g_clear_pointer(&ff->pend_bytes, g_free);
		return false;
	}
	ff->pend = (struct fast_pkt){ .len = (uint32_t)n,
				      .hdr_size = (uint16_t)umad_hdr_size(ff->uf) };
	if (n > FAST_INLINE_MAX) {
		ff->pend_memfd = fd_pass_memfd("ibemu-packet", ff->pend_bytes, (size_t)n, close);
		g_clear_pointer(&ff->pend_bytes, g_free);
		if (ff->pend_memfd < 0) {
			g_warning("fast path: no memfd for a %zd-byte packet: dropped", n);
			return true;	/* nothing pending: the loop takes the next */
		}
		ff->pend.flags = FAST_F_MEMFD;
	}
	return true;
}

/* Move the file's queued packets to its data socket, as room allows. */
static void push_packets(struct fast_file *ff)
{
	while (ff->uf && ff->data >= 0) {
		int r;

		if (!ff->pend_bytes && ff->pend_memfd < 0 && !take_next(ff))
			break;
		if (!ff->pend_bytes && ff->pend_memfd < 0)
			continue;	/* dropped: no memfd */
		if (!room_ahead(ff, ff->pend.len))
			break;
		r = send_pkt(ff, &ff->pend, ff->pend_bytes, ff->pend_memfd);
		if (r == -EAGAIN) {
			if (!ff->out_watch)
				ff->out_watch = g_unix_fd_add(ff->data, G_IO_OUT, on_data_room, ff);
			break;
		}
		if (r < 0)	/* no reader left: the HUP releases the file */
			g_debug("fast path: packet not sent: %s", g_strerror(-r));
		else
			ff->sock_bytes += ff->pend.len;
		g_clear_pointer(&ff->pend_bytes, g_free);
		if (ff->pend_memfd >= 0)
			close(ff->pend_memfd);
		ff->pend_memfd = -1;
	}
	if (ff->uf)
		count_outside(ff);
}

static void on_queued(void *ctx)
{
	push_packets(ctx);
}

static gboolean on_data_room(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_file *ff = data;

	(void)fd;
	(void)cond;
	ff->out_watch = 0;
	push_packets(ff);
	return G_SOURCE_REMOVE;
}

/* Nothing is read from the data socket; its end means the last close. */
static gboolean on_data_hup(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_file *ff = data;
	char junk[64];

	if (!(cond & (G_IO_HUP | G_IO_ERR)) && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) != 0)
		return G_SOURCE_CONTINUE;	/* a stray datagram: dropped */
	ff->data_watch = 0;
	fp_file_release(ff);
	fp_file_maybe_free(ff);
	return G_SOURCE_REMOVE;
}

bool fp_data_closed(const struct fast_file *ff)
{
	struct pollfd p = { .fd = ff->data, .events = POLLIN };

	return ff->data < 0 || (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
}

/* The device of file @name: "umadN" or "issmN" (*@issm says which). */
static struct umad_dev *dev_named(struct fastpath *fp, const char *name, bool *issm)
{
	char canon[32];
	unsigned i, n;

	*issm = !strncmp(name, "issm", 4);
	if (strlen(name) < 5 || sscanf(name + 4, "%u", &n) != 1)
		return NULL;
	snprintf(canon, sizeof(canon), "%s%u", *issm ? "issm" : "umad", n);
	if (strcmp(canon, name))	/* "umad01" is no device */
		return NULL;
	for (i = 0; i < umad_host_ndevs(fp->host); i++)
		if (umad_dev_index(umad_host_dev(fp->host, i)) == n)
			return umad_host_dev(fp->host, i);
	return NULL;
}

static void chan_set_file(struct fast_chan *ch, struct fast_file *ff)
{
	ch->file = ff;
	ff->chans++;
}

/* The write in progress will succeed: answer it now, before the fabric
 * carries the packet (umad_set_accepted), so the client goes on meanwhile. */
static void on_accepted(void *ctx)
{
	struct fast_file *ff = ctx;

	if (ff->writing) {
		fp_reply(ff->writing, (int64_t)ff->write_count, NULL, 0, -1);
		ff->writing = NULL;
	}
}

/*
 * An open of issmN (docs/umad.md §7) for as long as the channel lives: 0
 * (no data socket: the file has no read or write), EAGAIN with O_NONBLOCK
 * while it is held, else the answer waits until the holder lets go.
 */
static void open_issm(struct fast_chan *ch, struct umad_dev *d, int flags)
{
	if (umad_issm_open(d) == 0) {
		ch->issm = d;
		fp_reply(ch, 0, NULL, 0, -1);
	} else if (flags & O_NONBLOCK) {
		fp_reply(ch, -EAGAIN, NULL, 0, -1);
	} else {
		ch->issm_wait = d;
		ch->issm_tag = ch->tag;	/* answered later, maybe after others */
	}
}

/* @d's issm was let go (umad_host_watch_issm): the first channel that
 * waits for it takes it, unless another front-end's waiter did first. */
void fp_on_issm_freed(void *ctx, struct umad_dev *d)
{
	struct fastpath *fp = ctx;
	unsigned i;

	for (i = 0; i < fp->chans->len; i++) {
		struct fast_chan *ch = g_ptr_array_index(fp->chans, i);

		if (ch->issm_wait != d)
			continue;
		if (umad_issm_open(d) == 0) {
			ch->issm = d;
			ch->issm_wait = NULL;
			ch->tag = ch->issm_tag;
			fp_reply(ch, 0, NULL, 0, -1);
		}
		return;
	}
}

void fp_do_open(struct fast_chan *ch, const char *name, int flags)
{
	bool issm;
	struct umad_dev *d = dev_named(ch->fp, name, &issm);
	struct fast_file *ff;
	struct stat st;
	int sv[2];

	if (fp_chan_taken(ch)) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (!d) {
		fp_reply(ch, -ENOENT, NULL, 0, -1);
		return;
	}
	if (issm) {
		open_issm(ch, d, flags);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    fstat(sv[1], &st) < 0) {
		fp_reply(ch, -errno, NULL, 0, -1);
		return;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	ff = g_new0(struct fast_file, 1);
	ff->fp = ch->fp;
	ff->data = sv[0];
	ff->data_ino = st.st_ino;
	ff->flags = flags;
	ff->pid = ch->pid;
	ff->pend_memfd = -1;
	snprintf(ff->name, sizeof(ff->name), "%s", name);
	ff->uf = umad_open(d);
	umad_set_client(ff->uf, ch->pid, "fast");
	umad_set_wakeup(ff->uf, on_queued, ff);
	umad_set_accepted(ff->uf, on_accepted, ff);
	ff->data_watch = g_unix_fd_add(ff->data, G_IO_IN | G_IO_HUP | G_IO_ERR, on_data_hup, ff);
	g_ptr_array_add(ch->fp->files, ff);
	chan_set_file(ch, ff);
	fp_reply(ch, 0, NULL, 0, sv[1]);
	close(sv[1]);
	g_debug("fast path: %s opened by pid %d", name, ch->pid);
}

/* @fd is a client's end of a data socket (or anything else): whose? */
void fp_do_attach(struct fast_chan *ch, int fd)
{
	struct stat st;
	unsigned i;

	if (ch->file) {
		fp_reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fp_reply(ch, -EBADF, NULL, 0, -1);
		return;
	}
	for (i = 0; i < ch->fp->files->len; i++) {
		struct fast_file *ff = g_ptr_array_index(ch->fp->files, i);
		struct stat ours;

		/* Same inode, and our end's peer: one socket, not a lookalike. */
		if (!ff->uf || ff->data_ino != st.st_ino || fstat(ff->data, &ours) < 0 ||
		    ours.st_dev != st.st_dev)
			continue;
		chan_set_file(ch, ff);
		fp_reply(ch, ff->flags, ff->name, (uint32_t)strlen(ff->name), -1);
		return;
	}
	fp_reply(ch, -EBADF, NULL, 0, -1);
}

/* umad_write, answered early by on_accepted if it succeeds. */
static void write_and_reply(struct fast_chan *ch, const uint8_t *bytes, size_t count)
{
	struct fast_file *ff = ch->file;
	ssize_t ret;

	ff->writing = ch;
	ff->write_count = count;
	ret = umad_write(ff->uf, bytes, count);
	if (ff->writing)	/* not answered yet: an error */
		fp_reply(ch, ret, NULL, 0, -1);
	ff->writing = NULL;
}

void fp_do_write(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		     size_t n, int memfd)
{
	struct umad_file *uf = ch->file->uf;
	uint8_t *whole = NULL;
	int r;

	if (!(rq->flags & FAST_F_MEMFD)) {
		if (rq->arg == n)
			write_and_reply(ch, payload, n);
		else
			fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	/* A long write, in a memfd: checked before it is read in. */
	if (memfd < 0 || rq->arg > SIZE_MAX) {	/* a 32-bit size_t */
		fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	if ((r = umad_check_write_size(uf, (size_t)rq->arg)) < 0) {
		fp_reply(ch, r, NULL, 0, -1);
		return;
	}
	whole = g_try_malloc(rq->arg ? rq->arg : 1);
	if (!whole || pread(memfd, whole, rq->arg, 0) != (ssize_t)rq->arg)
		fp_reply(ch, whole ? -EFAULT : -ENOMEM, NULL, 0, -1);
	else
		write_and_reply(ch, whole, (size_t)rq->arg);
	g_free(whole);
}

void fp_do_ioctl(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		     size_t n)
{
	unsigned cmd = (unsigned)rq->arg;
	size_t out_max = (_IOC_DIR(cmd) & _IOC_READ) ? _IOC_SIZE(cmd) : 0;
	uint8_t buf[IOCTL_ARG_MAX] = { 0 };
	size_t out_len = 0;
	int ret;

	if (n > sizeof(buf) || out_max > sizeof(buf)) {
		fp_reply(ch, -ENOTTY, NULL, 0, -1);
		return;
	}
	memcpy(buf, payload, n);
	ret = umad_ioctl(ch->file->uf, cmd, buf, &out_len);
	out_len = MIN(out_len, out_max);
	fp_reply(ch, ret, buf, (uint32_t)out_len, -1);
}
