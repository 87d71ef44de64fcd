/* SPDX-License-Identifier: MIT */
/* The fast path's server side; see fastpath.h and lib/fast_wire.h. */
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
#include "fast/fastpath.h"
#include "fast/fastpath_verbs.h"
#include "fast/fastslot.h"
#include "lib/fast_wire.h"
#include "lib/fd_pass.h"
#include "lib/listener.h"
#include "lib/log.h"

#define IOCTL_ARG_MAX	64	/* the largest umad ioctl argument, as devfile.c */
/*
 * How far ahead of its reader a file's packets may go into the data
 * socket. The socket's own buffer bounds the datagrams, not the memfds
 * that long messages travel in (64 KiB to UMAD_MAX_WRITE each): past this
 * many bytes sent since the socket was last seen empty, a FAST_F_HELD
 * mark goes in and nothing more until the reader, having read up to the
 * mark, asks with FAST_PUSH; what waits stays in the umad queue. Both
 * count against its limit (umad_set_outside), so a file holds at most
 * UMAD_RECV_BYTES_MAX unread bytes by either path (README "Limits").
 */
#define SOCK_AHEAD_BYTES	(16u << 20)

struct fastpath {
	struct umad_host *host;
	char *path;
	int fd;
	struct listener listener;
	GPtrArray *chans;	/* struct fast_chan *, connected */
	GPtrArray *files;	/* struct fast_file *, open or still named by a channel */
	struct vfs *vfs;	/* for FAST_SYSFS_*; NULL: not offered */
	fast_host_begin_fn host_begin;	/* for FAST_HOST; NULL: not offered */
	fast_host_end_fn host_end;
	fast_host_adopt_fn host_adopt;
	fast_host_rtt_fn host_rtt;
	void *host_ctx;
	struct ctl_server *ctl;	/* for FAST_CTL; NULL: not offered */
	bool ctl_refused;	/* a guest host's channels: EACCES */
};

/*
 * An open file: the umad core's file and its data socket. Channels name
 * it (the opener's, and one per process that attached later: a forked
 * child's, an exec'd program's); it is released when the data socket's
 * last holder closes it and forgotten once no channel names it either.
 */
struct fast_file {
	struct fastpath *fp;
	struct umad_file *uf;	/* NULL after release */
	int data;		/* our end of the data socket; -1 after release */
	ino_t data_ino;		/* the client's end, to know it when passed back */
	int flags;		/* the open's */
	char name[32];		/* "umad0" */
	int pid;		/* the opener's, for `ctl status` */
	unsigned chans;		/* channels naming it */
	struct fast_chan *writing;	/* the channel whose write is in umad_write */
	size_t write_count;
	guint data_watch, out_watch;
	/* A packet the data socket had no room for yet (then no other is
	 * taken from the file's queue, so the order holds). */
	struct fast_pkt pend;
	uint8_t *pend_bytes;
	int pend_memfd;
	size_t sock_bytes;	/* sent since the socket was last seen empty */
	bool held;		/* the FAST_F_HELD mark is in the socket */
};

/* One connection: a client's request channel, for one file once opened
 * or attached. */
struct fast_chan {
	struct fastpath *fp;
	int fd;			/* -1 once handed to the control server */
	guint watch;
	int pid;		/* the connecting process, as we see it */
	unsigned uid;
	bool guest;		/* not ours or root's: may only attach a host */
	bool adopted;		/* from another host: no slot (not our memory) */
	struct fastslot *slot;	/* FAST_SLOT's, or NULL */
	bool in_slot;		/* the request being served came by the slot */
	struct fast_file *file;
	void *hosting;		/* FAST_HOST's attachment, while this lives */
	struct umad_dev *issm;	/* FAST_OPEN of issmN: held while this lives */
	struct umad_dev *issm_wait;	/* ... or waited for, unanswered */
	struct fast_verbs *verbs;	/* FAST_OPEN of a verbs file: while this lives */
	uint32_t tag;		/* the request being served's, for its answer */
	uint32_t issm_tag;	/* the waiting issm open's */
};

/* The last holder closed the data socket: the kernel's release. The
 * queue goes with the file, a packet waiting for room too. */
static void file_release(struct fast_file *ff)
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

static void file_free(struct fast_file *ff)
{
	if (ff->uf)	/* opened, not released yet */
		file_release(ff);
	g_free(ff);
}

/* Released and named by no channel: forget it. */
static void file_maybe_free(struct fast_file *ff)
{
	if (!ff->uf && !ff->chans)
		g_ptr_array_remove_fast(ff->fp->files, ff);	/* frees */
}

static void chan_free(struct fast_chan *ch)
{
	if (ch->watch)
		g_source_remove(ch->watch);
	fastslot_free(ch->slot);
	if (ch->fd >= 0)
		close(ch->fd);
	ch->issm_wait = NULL;	/* still in fp->chans while freed */
	if (ch->issm)	/* the last close of the issm file */
		umad_issm_close(g_steal_pointer(&ch->issm));	/* wakes a waiter */
	fast_verbs_free(ch->verbs);	/* the verbs file's last close */
	if (ch->hosting)
		ch->fp->host_end(ch->fp->host_ctx, ch->hosting);
	if (ch->file) {
		ch->file->chans--;
		file_maybe_free(ch->file);
	}
	g_free(ch);
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
static void let_go(struct fast_file *ff)
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
	file_release(ff);
	file_maybe_free(ff);
	return G_SOURCE_REMOVE;
}

static bool data_closed(const struct fast_file *ff)
{
	struct pollfd p = { .fd = ff->data, .events = POLLIN };

	return ff->data < 0 || (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP));
}

/* ---- requests, on the channel ------------------------------------------ */

static void reply(struct fast_chan *ch, int64_t ret, const void *out, uint32_t out_len,
		  int fd)
{
	struct fast_reply r = { .ret = ret, .out_len = out_len, .tag = ch->tag };
	struct iovec iov[2] = {
		{ .iov_base = &r, .iov_len = sizeof(r) },
		{ .iov_base = (void *)out, .iov_len = out_len },
	};
	union fd_cmsg u;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = out_len ? 2 : 1 };

	if (ch->in_slot) {	/* asked in the slot: answered there (no fd) */
		ch->in_slot = false;
		fastslot_answer(ch->slot, ret, out, out_len);
		return;
	}
	fd_pass_put(&msg, &u, fd);
	/* The client waits for this answer: a full channel is its fault. */
	if (sendmsg(ch->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		g_debug("fast path: answer not sent: %s", g_strerror(errno));
}

/* A channel serves one thing: a file (its slot too), issm, a verbs file,
 * or a host. */
static bool chan_taken(const struct fast_chan *ch)
{
	return ch->file || ch->issm || ch->issm_wait || ch->verbs || ch->hosting;
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
		reply(ff->writing, (int64_t)ff->write_count, NULL, 0, -1);
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
		reply(ch, 0, NULL, 0, -1);
	} else if (flags & O_NONBLOCK) {
		reply(ch, -EAGAIN, NULL, 0, -1);
	} else {
		ch->issm_wait = d;
		ch->issm_tag = ch->tag;	/* answered later, maybe after others */
	}
}

/* @d's issm was let go (umad_host_watch_issm): the first channel that
 * waits for it takes it, unless another front-end's waiter did first. */
static void on_issm_freed(void *ctx, struct umad_dev *d)
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
			reply(ch, 0, NULL, 0, -1);
		}
		return;
	}
}

static void do_open(struct fast_chan *ch, const char *name, int flags)
{
	bool issm;
	struct umad_dev *d = dev_named(ch->fp, name, &issm);
	struct fast_file *ff;
	struct stat st;
	int sv[2];

	if (chan_taken(ch)) {
		reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (!d) {
		reply(ch, -ENOENT, NULL, 0, -1);
		return;
	}
	if (issm) {
		open_issm(ch, d, flags);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    fstat(sv[1], &st) < 0) {
		reply(ch, -errno, NULL, 0, -1);
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
	reply(ch, 0, NULL, 0, sv[1]);
	close(sv[1]);
	g_debug("fast path: %s opened by pid %d", name, ch->pid);
}

/* A verbs file of an attached host's, named by its path in the host's
 * sysfs ("infiniband_verbs/uverbs0/ibemu_cmd": fastpath_verbs.h). */
static void do_open_verbs(struct fast_chan *ch, const char *path, size_t n)
{
	char *p = g_strndup(path, n);
	struct vnode *v = ch->fp->vfs ? vfs_path(ch->fp->vfs->root, p) : NULL;
	int fd = -ENOENT;

	g_free(p);
	if (chan_taken(ch)) {
		reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (v)
		ch->verbs = fast_verbs_open(v, &fd);
	if (!ch->verbs) {
		reply(ch, fd, NULL, 0, -1);
		return;
	}
	reply(ch, 0, NULL, 0, fd);
	close(fd);
}

/* @fd is a client's end of a data socket (or anything else): whose? */
static void do_attach(struct fast_chan *ch, int fd)
{
	struct stat st;
	unsigned i;

	if (ch->file) {
		reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		reply(ch, -EBADF, NULL, 0, -1);
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
		reply(ch, ff->flags, ff->name, (uint32_t)strlen(ff->name), -1);
		return;
	}
	reply(ch, -EBADF, NULL, 0, -1);
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
		reply(ch, ret, NULL, 0, -1);
	ff->writing = NULL;
}

static void do_write(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		     size_t n, int memfd)
{
	struct umad_file *uf = ch->file->uf;
	uint8_t *whole = NULL;
	int r;

	if (!(rq->flags & FAST_F_MEMFD)) {
		if (rq->arg == n)
			write_and_reply(ch, payload, n);
		else
			reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	/* A long write, in a memfd: checked before it is read in. */
	if (memfd < 0 || rq->arg > SIZE_MAX) {	/* a 32-bit size_t */
		reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	if ((r = umad_check_write_size(uf, (size_t)rq->arg)) < 0) {
		reply(ch, r, NULL, 0, -1);
		return;
	}
	whole = g_try_malloc(rq->arg ? rq->arg : 1);
	if (!whole || pread(memfd, whole, rq->arg, 0) != (ssize_t)rq->arg)
		reply(ch, whole ? -EFAULT : -ENOMEM, NULL, 0, -1);
	else
		write_and_reply(ch, whole, (size_t)rq->arg);
	g_free(whole);
}

static void do_ioctl(struct fast_chan *ch, const struct fast_req *rq, const uint8_t *payload,
		     size_t n)
{
	unsigned cmd = (unsigned)rq->arg;
	size_t out_max = (_IOC_DIR(cmd) & _IOC_READ) ? _IOC_SIZE(cmd) : 0;
	uint8_t buf[IOCTL_ARG_MAX] = { 0 };
	size_t out_len = 0;
	int ret;

	if (n > sizeof(buf) || out_max > sizeof(buf)) {
		reply(ch, -ENOTTY, NULL, 0, -1);
		return;
	}
	memcpy(buf, payload, n);
	ret = umad_ioctl(ch->file->uf, cmd, buf, &out_len);
	out_len = MIN(out_len, out_max);
	reply(ch, ret, buf, (uint32_t)out_len, -1);
}

/* ---- the slot (fastslot.h) --------------------------------------------- */

static void do_slot(struct fast_chan *ch)
{
	int memfd;

	if (ch->adopted) {
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	if (ch->slot) {
		reply(ch, -EBUSY, NULL, 0, -1);
		return;
	}
	if (!(ch->slot = fastslot_new(&memfd))) {
		reply(ch, -errno, NULL, 0, -1);
		return;
	}
	umad_set_client(ch->file->uf, ch->file->pid, "fast, shared memory");
	reply(ch, 0, NULL, 0, memfd);
	close(memfd);
}

static void do_request(struct fast_chan *ch, const uint8_t *msg, size_t n, int memfd);

/* The slot's new request, if there is one, served; false if none. */
static bool serve_slot(struct fast_chan *ch)
{
	static uint8_t buf[sizeof(struct fast_req) + FAST_SLOT_IN_MAX];
	size_t n = fastslot_take(ch->slot, buf);
	struct fast_req rq;

	if (!n)
		return false;
	memcpy(&rq, buf, sizeof(rq));
	ch->in_slot = true;
	/* Only what needs no fd: writes and ioctls, inline. */
	if ((rq.op != FAST_WRITE && rq.op != FAST_IOCTL) || rq.flags)
		reply(ch, -EINVAL, NULL, 0, -1);
	else
		do_request(ch, buf, n, -1);
	return true;
}

static void set_looking(struct fastpath *fp, bool on)
{
	unsigned i;

	for (i = 0; i < fp->chans->len; i++) {
		struct fast_chan *ch = g_ptr_array_index(fp->chans, i);

		if (ch->slot)
			fastslot_set_looking(ch->slot, on);
	}
}

/* Serve every slot's request; how many there were. (Serving a write or
 * an ioctl adds or removes no channel: the index stays good.) */
static unsigned serve_slots(struct fastpath *fp)
{
	unsigned i, n = 0;

	for (i = 0; i < fp->chans->len; i++) {
		struct fast_chan *ch = g_ptr_array_index(fp->chans, i);

		if (ch->slot && serve_slot(ch))
			n++;
	}
	return n;
}

/*
 * After a request, look at the slots a while, as serve.c does at the
 * FUSE device: the next request is usually there within microseconds,
 * and seeing it costs no system call on either side. Between looks the
 * CPU goes to any other thread that can run (sched_yield): with a
 * program of several threads (opensm's receiver, dispatcher and sender)
 * on few CPUs, looking must not take the CPU of the thread that makes the
 * next request (docs/performance.md), so it can go on far longer than a
 * look that holds the CPU could. Then stop looking, and serve what came
 * meanwhile (its client saw us looking: no ring).
 */
#define SLOT_SPIN_US	1000
#define SLOT_BATCH	64	/* then back to the loop: timers, sockets, FUSE */

static void spin_slots(struct fastpath *fp)
{
	int64_t until = g_get_monotonic_time() + SLOT_SPIN_US;
	unsigned batch = 0, n;

	set_looking(fp, true);
	while (batch < SLOT_BATCH) {
		if ((n = serve_slots(fp)))
			until = g_get_monotonic_time() + SLOT_SPIN_US;
		else if (g_get_monotonic_time() >= until)
			break;
		else
			sched_yield();
		batch += n;
	}
	set_looking(fp, false);
	serve_slots(fp);
}

/* ---- many hosts (docs/many-hosts.md) ----------------------------------- */

/* @v and what is below it; the verbs files (and the class that holds
 * them) only for an asker that mirrors them (FAST_LIST_VERBS). */
static void list_tree(const struct vnode *v, const char *path, bool verbs, GString *out)
{
	static const char kind[] = { [VN_DIR] = 'd', [VN_ATTR] = 'f', [VN_UMAD] = 'u',
				     [VN_ISSM] = 'i', [VN_VCMD] = 'c', [VN_VEVENTS] = 'e' };
	unsigned i;

	if (v->kind >= G_N_ELEMENTS(kind))	/* another emulator's: not ours to list */
		return;
	if (!verbs && (v->kind == VN_VCMD || v->kind == VN_VEVENTS ||
		       !strcmp(path, "infiniband_verbs")))
		return;
	if (*path)
		g_string_append_printf(out, "%c %s\n", kind[v->kind], path);
	for (i = 0; v->kind == VN_DIR && i < v->children->len; i++) {
		const struct vnode *c = g_ptr_array_index(v->children, i);
		char *sub = *path ? g_strdup_printf("%s/%s", path, c->name) : g_strdup(c->name);

		list_tree(c, sub, verbs, out);
		g_free(sub);
	}
}

static void do_sysfs(struct fast_chan *ch, uint32_t op, uint64_t arg, const char *payload,
		     size_t n)
{
	struct vfs *vfs = ch->fp->vfs;
	char *path, *text;
	struct vnode *v;
	GString *out;

	if (!vfs) {
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	if (op == FAST_SYSFS_LIST) {
		out = g_string_new(NULL);
		list_tree(vfs->root, "", arg & FAST_LIST_VERBS, out);
		if (out->len > FAST_INLINE_MAX)	/* one datagram */
			reply(ch, -E2BIG, NULL, 0, -1);
		else
			reply(ch, 0, out->str, (uint32_t)out->len, -1);
		g_string_free(out, TRUE);
		return;
	}
	path = g_strndup(payload, n);
	v = vfs_path(vfs->root, path);
	g_free(path);
	if (!v || v->kind != VN_ATTR) {
		reply(ch, v ? -EISDIR : -ENOENT, NULL, 0, -1);
		return;
	}
	/* A show that fails is EINVAL, as a kernel show's error (vfs.h). */
	if (!(text = v->show(v))) {
		reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	n = MIN(strlen(text), (size_t)FAST_INLINE_MAX);
	reply(ch, (int64_t)n, text, (uint32_t)n, -1);
	g_free(text);
}

static void do_host(struct fast_chan *ch, const char *payload, size_t n)
{
	GString *out = g_string_new(NULL);
	int err = 0;

	if (!ch->fp->host_begin) {
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
	} else if (chan_taken(ch)) {
		reply(ch, -EBUSY, NULL, 0, -1);
	} else {
		ch->hosting = ch->fp->host_begin(ch->fp->host_ctx, ch->pid, ch->uid, payload, n,
						 out, &err);
		reply(ch, ch->hosting ? 0 : err, out->str, (uint32_t)out->len, -1);
	}
	g_string_free(out, TRUE);
}

/* The channel becomes a control connection: the control server's now. */
static void do_ctl(struct fast_chan *ch)
{
	if (!ch->fp->ctl) {
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
	} else if (ch->fp->ctl_refused) {
		reply(ch, -EACCES, NULL, 0, -1);
	} else if (chan_taken(ch)) {	/* a slot is a file's */
		reply(ch, -EBUSY, NULL, 0, -1);
	} else {
		reply(ch, 0, NULL, 0, -1);
		ctl_server_adopt(ch->fp->ctl, ch->fd);
		ch->fd = -1;	/* serve_one() says it is gone: on_chan ends it */
	}
}

/* ---- the request table -------------------------------------------------- */

/* One request as its handler sees it: the payload after the header, the
 * fd passed beside it (or -1). */
struct fast_call {
	struct fast_chan *ch;
	struct fast_req rq;
	const uint8_t *msg;
	size_t n;
	int fd;
};

static void op_open(const struct fast_call *c)
{
	char name[32];

	if (memchr(c->msg, '/', c->n)) {	/* a verbs file, by its sysfs path */
		do_open_verbs(c->ch, (const char *)c->msg, c->n);
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)MIN(c->n, sizeof(name) - 1), (const char *)c->msg);
	do_open(c->ch, name, (int)c->rq.arg);
}

static void op_attach(const struct fast_call *c)
{
	do_attach(c->ch, c->fd);
}

static void op_host(const struct fast_call *c)
{
	do_host(c->ch, (const char *)c->msg, c->n);
}

static void op_adopt(const struct fast_call *c)
{
	struct fast_chan *ch = c->ch;

	if (!ch->hosting)
		reply(ch, -EBADF, NULL, 0, -1);
	else if (c->fd < 0)
		reply(ch, -EINVAL, NULL, 0, -1);
	else
		reply(ch, ch->fp->host_adopt(ch->fp->host_ctx, ch->hosting, c->fd), NULL, 0, -1);
}

static void op_ping(const struct fast_call *c)
{
	struct fast_chan *ch = c->ch;

	if (ch->hosting && c->rq.arg)
		ch->fp->host_rtt(ch->fp->host_ctx, ch->hosting, c->rq.arg);
	reply(ch, 0, NULL, 0, -1);
}

static void op_sysfs(const struct fast_call *c)
{
	do_sysfs(c->ch, c->rq.op, c->rq.arg, (const char *)c->msg, c->n);
}

static void op_ctl(const struct fast_call *c)
{
	do_ctl(c->ch);
}

static void op_push(const struct fast_call *c)
{
	struct fast_file *ff = c->ch->file;

	if (ff && ff->uf)
		let_go(ff);
	reply(c->ch, 0, NULL, 0, -1);
}

static void op_sync(const struct fast_call *c)
{
	struct fast_file *ff = c->ch->file;

	if (ff && ff->uf && data_closed(ff))
		file_release(ff);	/* the channel still names it: not freed */
	reply(c->ch, 0, NULL, 0, -1);
}

static void op_write(const struct fast_call *c)
{
	do_write(c->ch, &c->rq, c->msg, c->n, c->fd);
}

static void op_ioctl(const struct fast_call *c)
{
	do_ioctl(c->ch, &c->rq, c->msg, c->n);
}

static void op_slot(const struct fast_call *c)
{
	do_slot(c->ch);
}

/*
 * What each request needs (lib/fast_wire.h): a guest (a member of the
 * --remote-group group, fastpath_open_to_group) may only attach hosts; a
 * file op goes to the channel's verbs file if it has one (fastpath_verbs.h),
 * else needs its open umad file (EBADF without). An op the table does not
 * have is a file op nobody serves: EOPNOTSUPP.
 */
static const struct fast_op_def {
	bool guest_ok;
	bool file_op;
	void (*fn)(const struct fast_call *c);
} fast_ops[] = {
	[FAST_OPEN] = { .fn = op_open },
	[FAST_WRITE] = { .file_op = true, .fn = op_write },
	[FAST_IOCTL] = { .file_op = true, .fn = op_ioctl },
	[FAST_SYNC] = { .fn = op_sync },
	[FAST_ATTACH] = { .fn = op_attach },
	[FAST_HOST] = { .guest_ok = true, .fn = op_host },
	[FAST_SYSFS_LIST] = { .fn = op_sysfs },
	[FAST_SYSFS_READ] = { .fn = op_sysfs },
	[FAST_ADOPT] = { .guest_ok = true, .fn = op_adopt },
	[FAST_PING] = { .guest_ok = true, .fn = op_ping },
	[FAST_SLOT] = { .file_op = true, .fn = op_slot },
	[FAST_CTL] = { .fn = op_ctl },
	[FAST_PUSH] = { .fn = op_push },
};

static void do_request(struct fast_chan *ch, const uint8_t *msg, size_t n, int memfd)
{
	static const struct fast_op_def unknown = { .file_op = true };
	struct fast_call c = { .ch = ch, .fd = memfd };
	const struct fast_op_def *op;

	if (n < sizeof(c.rq)) {
		ch->tag = 0;
		reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	memcpy(&c.rq, msg, sizeof(c.rq));
	c.msg = msg + sizeof(c.rq);
	c.n = n - sizeof(c.rq);
	ch->tag = c.rq.tag;
	if (c.rq.version != FAST_VERSION) {
		reply(ch, -EPROTO, NULL, 0, -1);
		return;
	}
	if (c.rq.op == FAST_RING)	/* never answered: on_chan looks at the slots */
		return;
	op = c.rq.op < G_N_ELEMENTS(fast_ops) && fast_ops[c.rq.op].fn ? &fast_ops[c.rq.op] : &unknown;
	if (ch->guest && !op->guest_ok) {
		reply(ch, -EACCES, NULL, 0, -1);
		return;
	}
	if (op->file_op && ch->verbs) {
		uint8_t out[FAST_VERBS_OUT_MAX];
		uint32_t out_len;
		int64_t ret = fast_verbs_request(ch->verbs, &c.rq, c.msg, c.n, out, &out_len);

		reply(ch, ret, out, out_len, -1);
		return;
	}
	if (op->file_op && (!ch->file || !ch->file->uf)) {
		reply(ch, -EBADF, NULL, 0, -1);
		return;
	}
	if (!op->fn) {
		reply(ch, -EOPNOTSUPP, NULL, 0, -1);
		return;
	}
	op->fn(&c);
}

/* Whether this process can open no more fds (a passed fd was dropped
 * for it, and the client should hear EMFILE, not EMSGSIZE). */
static bool out_of_fds(void)
{
	int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);

	if (fd >= 0)
		close(fd);
	return fd < 0 && (errno == EMFILE || errno == ENFILE);
}

/* One request from @ch: false when the channel has closed (or became a
 * control connection). */
static bool serve_one(struct fast_chan *ch)
{
	static uint8_t buf[sizeof(struct fast_req) + FAST_INLINE_MAX];
	union fd_cmsg u;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd;
	ssize_t n;

	fd_pass_room(&msg, &u);
	n = recvmsg(ch->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	/* Taken first: an empty datagram reads as 0, as the end does, and
	 * may carry fds (found by tests/fuzz/fuzz_fast.c). */
	fd = n >= 0 ? fd_pass_take(&msg) : -1;
	if (n <= 0) {	/* the client closed it (or died) */
		if (fd >= 0)
			close(fd);
		if (n < 0 || ch->hosting)
			g_message("fast path: the channel of pid %d ends: %s", ch->pid,
				  n < 0 ? g_strerror(errno) : "closed by its client");
		return false;
	}
	ch->tag = (size_t)n >= sizeof(struct fast_req) ? ((struct fast_req *)buf)->tag : 0;
	if (msg.msg_flags & MSG_CTRUNC)	/* more fds than asked, or no room for any */
		reply(ch, out_of_fds() ? -EMFILE : -EMSGSIZE, NULL, 0, -1);
	else if (msg.msg_flags & MSG_TRUNC)
		reply(ch, -EMSGSIZE, NULL, 0, -1);
	else
		do_request(ch, buf, (size_t)n, fd);
	if (fd >= 0)
		close(fd);
	return ch->fd >= 0;
}

/*
 * A client's next request follows its answer within microseconds (write,
 * then the next write after a read that costs no trip here): look for it
 * a short while before going back to the loop, as serve.c does for FUSE.
 */
#define FAST_SPIN_US	50
#define FAST_BATCH	64	/* then back to the loop: timers, other clients */

static gboolean on_chan(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_chan *ch = data;
	unsigned batch = 0;

	(void)cond;
	do {
		if (!serve_one(ch)) {
			ch->watch = 0;
			g_ptr_array_remove_fast(ch->fp->chans, ch);	/* frees */
			return G_SOURCE_REMOVE;
		}
		if (ch->slot) {	/* its next requests come there */
			spin_slots(ch->fp);
			return G_SOURCE_CONTINUE;
		}
	} while (++batch < FAST_BATCH && serve_next_soon(fd, FAST_SPIN_US));
	return G_SOURCE_CONTINUE;
}

static struct fast_chan *chan_add(struct fastpath *fp, int fd)
{
	struct fast_chan *ch;
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);

	/* The peer as it connected: for an adopted socket, its client. */
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	ch = g_new0(struct fast_chan, 1);
	ch->fp = fp;
	ch->fd = fd;
	ch->pid = cred.pid;
	ch->uid = cred.uid;
	ch->watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_chan, ch);
	g_ptr_array_add(fp->chans, ch);
	return ch;
}

unsigned fastpath_channels(const struct fastpath *fp)
{
	return fp->chans->len;
}

void fastpath_adopt(struct fastpath *fp, int fd)
{
	/* Handed over by a host we serve: trusted as it, but maybe another
	 * machine's (its memory is not ours to share). */
	chan_add(fp, fd)->adopted = true;
}

static void on_client(void *data, int c)
{
	struct fast_chan *ch = chan_add(data, c);

	ch->guest = !ctl_peer_trusted(ch->uid);
}

int fastpath_open_to_group(struct fastpath *fp, const char *group, GError **err)
{
	struct group *gr = getgrnam(group);
	char *end;
	unsigned long n = strtoul(group, &end, 10);
	gid_t gid = gr ? gr->gr_gid : (gid_t)n;

	if (!gr && (!*group || *end)) {
		g_set_error(err, IBEMU_ERROR, ENOENT, "no such group");
		return -1;
	}
	if (fp->fd < 0 || chown(fp->path, (uid_t)-1, gid) < 0 || chmod(fp->path, 0660) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot give %s to group %u: %s", fp->path,
			    (unsigned)gid, g_strerror(errno));
		return -1;
	}
	g_message("fast socket %s: group %s (gid %u) may attach hosts", fp->path, group,
		  (unsigned)gid);
	return 0;
}

struct fastpath *fastpath_new(struct umad_host *host, const char *path, GError **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fastpath *fp;
	struct stat st;
	int fd = -1;

	if (!path)
		goto made;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		g_set_error(err, IBEMU_ERROR, ENAMETOOLONG, "fast path socket path too long: %s", path);
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			g_set_error(err, IBEMU_ERROR, EEXIST,
				    "%s is there and is not a socket: not touching it", path);
			return NULL;
		}
		/* A crashed emulator's: our control socket holds the name. */
		ctl_unlink_if_ours(path);
	}
	if ((fd = ctl_listen(path, SOCK_SEQPACKET, 64, err)) < 0)
		return NULL;
made:
	fp = g_new0(struct fastpath, 1);
	fp->host = host;
	fp->path = g_strdup(path);
	fp->fd = fd;
	fp->chans = g_ptr_array_new_with_free_func((GDestroyNotify)chan_free);
	fp->files = g_ptr_array_new_with_free_func((GDestroyNotify)file_free);
	if (host)
		umad_host_watch_issm(host, on_issm_freed, fp);
	if (fd >= 0)
		listener_start(&fp->listener, fd, "fast socket", on_client, fp);
	return fp;
}

void fastpath_set_vfs(struct fastpath *fp, struct vfs *vfs)
{
	fp->vfs = vfs;
}

void fastpath_set_ctl(struct fastpath *fp, struct ctl_server *ctl, bool refused)
{
	fp->ctl = ctl;
	fp->ctl_refused = refused;
}

void fastpath_set_hosting(struct fastpath *fp, fast_host_begin_fn begin, fast_host_end_fn end,
			  fast_host_adopt_fn adopt, fast_host_rtt_fn rtt, void *ctx)
{
	fp->host_begin = begin;
	fp->host_end = end;
	fp->host_adopt = adopt;
	fp->host_rtt = rtt;
	fp->host_ctx = ctx;
}

void fastpath_free(struct fastpath *fp)
{
	if (!fp)
		return;
	if (fp->fd >= 0) {
		listener_stop(&fp->listener);
		close(fp->fd);
		unlink(fp->path);
	}
	if (fp->host)	/* before our holders let go: others' waiters wake */
		umad_host_unwatch_issm(fp->host, on_issm_freed, fp);
	g_ptr_array_free(fp->chans, TRUE);	/* may forget files */
	g_ptr_array_free(fp->files, TRUE);
	g_free(fp->path);
	g_free(fp);
}
