/* SPDX-License-Identifier: MIT */
/* The fast path's channel server and its request table; see fastpath_priv.h,
 * fastpath.h and abi/fast_wire.h. */
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

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "abi/verbs_inbox.h"
#include "ctl/ctl.h"
#include "dev/serve.h"
#include "dev/vfs.h"
#include "kernel/uverbs.h"
#include "lib/listener.h"
#include "lib/log.h"
#include "lib/watch.h"
#include "socket/fastpath_priv.h"
#include "socket/fastpath_verbs.h"
#include "socket/fastslot.h"

static void chan_free(struct fast_chan *ch)
{
	if (ch->watch)
		g_source_remove(ch->watch);
	fastslot_free(ch->slot);
	if (ch->fd >= 0)
		close(ch->fd);
	if (ch->hosting)
		ch->fp->host_end(ch->fp->host_ctx, ch->hosting);
	if (ch->file) {
		ch->file->chans--;
		fp_file_maybe_free(ch->file);
	}
	g_free(ch);
}

/* ---- requests, on the channel ------------------------------------------ */

void fp_reply(struct fast_chan *ch, int64_t ret, const void *out, uint32_t out_len,
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

/* A channel serves one thing: a file (its slot too), or a host. */
bool fp_chan_taken(const struct fast_chan *ch)
{
	return ch->file || ch->hosting;
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
	fp_do_open(c->ch, (const char *)c->msg, c->n, (int)c->rq.arg);
}

static void op_attach(const struct fast_call *c)
{
	fp_do_attach(c->ch, c->fd);
}

static void op_host(const struct fast_call *c)
{
	fp_do_host(c->ch, (const char *)c->msg, c->n);
}

static void op_adopt(const struct fast_call *c)
{
	struct fast_chan *ch = c->ch;

	if (!ch->hosting)
		fp_reply(ch, -EBADF, NULL, 0, -1);
	else if (c->fd < 0)
		fp_reply(ch, -EINVAL, NULL, 0, -1);
	else
		fp_reply(ch, ch->fp->host_adopt(ch->fp->host_ctx, ch->hosting, c->fd), NULL, 0, -1);
}

static void op_ping(const struct fast_call *c)
{
	struct fast_chan *ch = c->ch;

	if (ch->hosting && c->rq.arg)
		ch->fp->host_rtt(ch->fp->host_ctx, ch->hosting, c->rq.arg);
	fp_reply(ch, 0, NULL, 0, -1);
}

static void op_sysfs(const struct fast_call *c)
{
	fp_do_sysfs(c->ch, c->rq.op, c->rq.arg, (const char *)c->msg, c->n);
}

static void op_rdma_link(const struct fast_call *c)
{
	fp_do_rdma_link(c->ch, c->rq.arg, (const char *)c->msg, c->n);
}

static void op_ctl(const struct fast_call *c)
{
	fp_do_ctl(c->ch);
}

static void op_push(const struct fast_call *c)
{
	struct fast_file *ff = c->ch->file;

	if (ff && ff->file && ff->data >= 0)
		fp_let_go(ff);
	fp_reply(c->ch, 0, NULL, 0, -1);
}

static void op_sync(const struct fast_call *c)
{
	struct fast_file *ff = c->ch->file;

	if (ff && ff->file && ff->data >= 0 && fp_data_closed(ff))
		fp_file_release(ff);	/* the channel still names it: not freed */
	fp_reply(c->ch, 0, NULL, 0, -1);
}

static void op_write(const struct fast_call *c)
{
	fp_do_write(c->ch, &c->rq, c->msg, c->n, c->fd);
}

static void op_ioctl(const struct fast_call *c)
{
	fp_do_ioctl(c->ch, &c->rq, c->msg, c->n);
}

static void op_slot(const struct fast_call *c)
{
	fp_do_slot(c->ch);
}

static void op_vring(const struct fast_call *c)
{
	struct fast_verbs *fv = fast_verbs_of(c->ch->file);
	int ring_fd = -1;
	/* Memory of this machine's: not for another host's channel. */
	int ret = !fv ? -EINVAL : c->ch->adopted ? -EOPNOTSUPP :
		  (c->rq.arg & ~1ull) != VERBS_RING_ASK(0) ? -EPROTONOSUPPORT :
		  fast_verbs_ring(fv, c->rq.arg & 1, &ring_fd);

	fp_reply(c->ch, ret, NULL, 0, ring_fd);
	if (ring_fd >= 0)
		close(ring_fd);
}

static void op_vdirect(const struct fast_call *c)
{
	struct fast_verbs *fv = fast_verbs_of(c->ch->file);
	uint8_t out[sizeof(struct verbs_direct_grant)];
	uint32_t out_len = 0;
	int fd = -1;
	/* Memory of this machine's, as the ring. */
	int64_t ret = !fv ? -EINVAL : c->ch->adopted ? -EOPNOTSUPP :
		      c->rq.op == FAST_VDIRECT ?
		      uverbs_direct_grant(c->ch->file->file, c->msg, c->n, out, &out_len, &fd) :
		      uverbs_direct_fd(c->ch->file->file, c->rq.arg, c->msg, c->n, &fd);

	fp_reply(c->ch, ret, out, out_len, fd);	/* the fd stays the direct path's */
}

/*
 * What each request needs (abi/fast_wire.h): a guest (a member of the
 * --remote-group group, fastpath_open_to_group) may only attach hosts; a
 * file op needs the channel's open file (EBADF without). An op the table
 * does not have is a file op nobody serves: EOPNOTSUPP.
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
	[FAST_VRING] = { .file_op = true, .fn = op_vring },
	[FAST_VDIRECT] = { .file_op = true, .fn = op_vdirect },
	[FAST_VINBOX] = { .file_op = true, .fn = op_vdirect },
	[FAST_RDMA_LINK] = { .fn = op_rdma_link },
};

void fp_do_request(struct fast_chan *ch, const uint8_t *msg, size_t n, int memfd)
{
	static const struct fast_op_def unknown = { .file_op = true };
	struct fast_call c = { .ch = ch, .fd = memfd };
	const struct fast_op_def *op;

	if (n < sizeof(c.rq)) {
		ch->tag = 0;
		fp_reply(ch, -EINVAL, NULL, 0, -1);
		return;
	}
	memcpy(&c.rq, msg, sizeof(c.rq));
	c.msg = msg + sizeof(c.rq);
	c.n = n - sizeof(c.rq);
	ch->tag = c.rq.tag;
	if (c.rq.version != FAST_VERSION) {
		fp_reply(ch, -EPROTO, NULL, 0, -1);
		return;
	}
	if (c.rq.op == FAST_RING)	/* never answered: on_chan looks at the slots */
		return;
	op = c.rq.op < G_N_ELEMENTS(fast_ops) && fast_ops[c.rq.op].fn ? &fast_ops[c.rq.op] : &unknown;
	if (ch->guest && !op->guest_ok) {
		fp_reply(ch, -EACCES, NULL, 0, -1);
		return;
	}
	if (op->file_op && (!ch->file || !ch->file->file || ch->file->opening)) {
		fp_reply(ch, -EBADF, NULL, 0, -1);
		return;
	}
	if (!op->fn) {
		fp_reply(ch, -EOPNOTSUPP, NULL, 0, -1);
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
		fp_reply(ch, out_of_fds() ? -EMFILE : -EMSGSIZE, NULL, 0, -1);
	else if (msg.msg_flags & MSG_TRUNC)
		fp_reply(ch, -EMSGSIZE, NULL, 0, -1);
	else
		fp_do_request(ch, buf, (size_t)n, fd);
	if (fd >= 0)
		close(fd);
	return ch->fd >= 0;
}

/*
 * A client's next request follows its answer within microseconds (write,
 * then the next write after a read that costs no trip here): look for it
 * a short while before going back to the loop, as serve.c does for FUSE.
 * Only for a file whose table says so (kfile_ops.quick_calls: umad): a
 * verbs context's next packet mostly waits for the peer's answer, which
 * needs the CPU a look would hold (a look of 50 µs made
 * ibv_ud_pingpong 2.6 times slower on two CPUs; one that yields between
 * looks, twice slower). What is there already is served in the same batch.
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
			fp_spin_slots(ch->fp);
			return G_SOURCE_CONTINUE;
		}
	} while (++batch < FAST_BATCH &&
		 serve_next_soon(fd, ch->file && ch->file->ops->quick_calls ? FAST_SPIN_US : 0));
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
	ch->watch = watch_fd(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_chan, ch);
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

	ch->guest = !ctl_peer_trusted(ch->uid, ch->fp->shared);
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
	fp->shared = true;
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
	fp->files = g_ptr_array_new_with_free_func((GDestroyNotify)fp_file_free);
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
	g_ptr_array_free(fp->chans, TRUE);	/* may forget files */
	g_ptr_array_free(fp->files, TRUE);
	g_free(fp->path);
	g_free(fp);
}
