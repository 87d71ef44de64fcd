/* SPDX-License-Identifier: MIT */
/*
 * FUSE adapter. Interface: FUSE low-level ops for VN_DIR (lookup, getattr,
 * readdir), VN_ATTR (open/read: text made per read), VN_UMAD (open, read,
 * write, ioctl, poll, release over emulator/umad.h) and VN_ISSM (open and
 * release only: read and write give EINVAL, as the kernel's issm fops).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <glib-unix.h>

#include "cuse/fusefs.h"

#define TTL 86400.0	/* the tree never changes shape while we run */

struct parked {
	fuse_req_t req;
	size_t size;		/* read size, for parked reads */
	struct ufile *uf;	/* parked read */
	struct umad_dev *dev;	/* parked issm open */
	bool interrupted;
	struct fusefs *fs;
};

/* Per open umad file: fi->fh points here (STYLE.md "Memory and lifetime"). */
struct ufile {
	struct fusefs *fs;
	struct umad_file *file;
	struct fuse_pollhandle *ph;
	GQueue reads;		/* struct parked *, blocking reads */
};

struct fusefs {
	struct vfs *vfs;
	struct umad_host *host;
	struct fuse_session *se;
	struct fuse_buf buf;
	int fd;
	guint watch;
	guint idle;		/* pending flush of interrupted requests */
	GHashTable *stream_opens;	/* unique ids of device FUSE_OPENs */
	GQueue issm_waiters;	/* struct parked * */
	GQueue all_reads;	/* every parked read, for interrupts */
};

static struct fusefs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fill_attr(const struct vnode *v, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = v->ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	switch (v->kind) {
	case VN_DIR:
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		break;
	case VN_ATTR:
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;	/* as sysfs reports */
		break;
	default:
		/* Namespace mode: the mount is private, so open to its users. */
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
		break;
	}
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* The FOPEN_STREAM hook must see every request and reply. */
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct vnode *v = vfs_child(vfs_get(req_fs(req)->vfs, parent), name);
	struct fuse_entry_param e = { 0 };

	if (!v) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = v->ino;
	e.attr_timeout = e.entry_timeout = TTL;
	fill_attr(v, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);
	struct stat st;

	(void)fi;
	if (!v) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(v, &st);
	fuse_reply_attr(req, &st, TTL);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct vnode *dir = vfs_get(req_fs(req)->vfs, ino);
	char *buf = g_malloc(size);
	size_t used = 0;
	off_t i;

	(void)fi;
	if (!dir || dir->kind != VN_DIR) {
		g_free(buf);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	for (i = off; i < (off_t)dir->children->len + 2; i++) {
		const struct vnode *c = i == 0 ? dir : i == 1 ? dir->parent :
			g_ptr_array_index(dir->children, i - 2);
		const char *name = i == 0 ? "." : i == 1 ? ".." : c->name;
		struct stat st;
		size_t len;

		fill_attr(c, &st);
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	g_free(buf);
}

/* ---- parked requests and interrupts ------------------------------- */

/* Answer EINTR to the interrupted requests parked on @q. */
static void flush_queue(struct fusefs *fs, GQueue *q, bool reads)
{
	GList *l, *next;

	for (l = q->head; l; l = next) {
		struct parked *p = l->data;

		next = l->next;
		if (!p->interrupted)
			continue;
		g_queue_delete_link(q, l);
		if (reads)
			g_queue_remove(&p->uf->reads, p);
		fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
}

static gboolean flush_interrupted(gpointer data)
{
	struct fusefs *fs = data;

	fs->idle = 0;
	flush_queue(fs, &fs->all_reads, true);
	flush_queue(fs, &fs->issm_waiters, false);
	return G_SOURCE_REMOVE;
}

/*
 * libfuse may call this with the request locked, from inside
 * fuse_req_interrupt_func(): never reply here, reply from an idle callback.
 */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct parked *p = data;

	(void)req;
	p->interrupted = true;
	if (!p->fs->idle)
		p->fs->idle = g_idle_add(flush_interrupted, p->fs);
}

/*
 * Hold @req for a later reply. NULL if it was interrupted already: then it
 * has been answered EINTR here, outside the interrupt callback.
 */
static struct parked *park(fuse_req_t req, struct fusefs *fs)
{
	struct parked *p = g_new0(struct parked, 1);

	p->req = req;
	p->fs = fs;
	fuse_req_interrupt_func(req, on_interrupt, p);
	if (p->interrupted) {
		fuse_reply_err(req, EINTR);
		g_free(p);
		return NULL;
	}
	return p;
}

/* ---- umad files ------------------------------------------------------- */

/*
 * The kernel's read() fails with ENOSPC *and* leaves the header (with the
 * length needed) and the first segment in the caller's buffer (§4.8); a
 * FUSE error reply carries no data. So: find the buffer of the blocked
 * read(2) in /proc/<tid>/syscall and write it there (ARCHITECTURE.md).
 * Needs ptrace rights over the reader: namespace mode's clients are our
 * descendants.
 */
static bool poke_reader(fuse_req_t req, size_t size, const void *data, size_t len)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char path[64], line[256] = "";
	unsigned long nr, fd, addr, count;
	struct iovec local = { (void *)data, len }, remote;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", ctx->pid);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	if (sscanf(line, "%lu 0x%lx 0x%lx 0x%lx", &nr, &fd, &addr, &count) != 4 ||
	    nr != 0 /* read */ || count != size) {
		g_warning("cannot give thread %d the header of a long read (%s): it sees ENOSPC without it",
			  ctx->pid, line[0] ? "not in read(2)" : g_strerror(errno));
		return false;
	}
	remote.iov_base = (void *)addr;
	remote.iov_len = len;
	if (process_vm_writev(ctx->pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		g_warning("cannot write the header of a long read into thread %d: %s",
			  ctx->pid, g_strerror(errno));
		return false;
	}
	return true;
}

static void reply_read(fuse_req_t req, struct ufile *uf, size_t size)
{
	uint8_t *buf = g_malloc(size);
	ssize_t n = umad_read(uf->file, buf, size);

	if (n == -ENOSPC)
		poke_reader(req, size, buf, umad_hdr_size(uf->file) + 256);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (char *)buf, (size_t)n);
	g_free(buf);
}

/* A packet was queued: answer blocked reads, then notify pollers. */
static void ufile_wakeup(void *ctx)
{
	struct ufile *uf = ctx;
	struct parked *p;

	while (umad_readable(uf->file) && (p = g_queue_pop_head(&uf->reads))) {
		g_queue_remove(&uf->fs->all_reads, p);
		if (!p->interrupted)
			reply_read(p->req, uf, p->size);
		else
			fuse_reply_err(p->req, EINTR);
		g_free(p);
	}
	if (uf->ph && umad_readable(uf->file)) {
		fuse_lowlevel_notify_poll(uf->ph);
		fuse_pollhandle_destroy(uf->ph);
		uf->ph = NULL;
	}
}

static void open_umad(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi)
{
	struct ufile *uf = g_new0(struct ufile, 1);

	uf->fs = req_fs(req);
	uf->file = umad_open(v->ctx);
	g_queue_init(&uf->reads);
	umad_set_wakeup(uf->file, ufile_wakeup, uf);
	fi->fh = (uint64_t)(uintptr_t)uf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void open_issm(fuse_req_t req, struct vnode *v, struct fuse_file_info *fi)
{
	struct fusefs *fs = req_fs(req);
	struct parked *p;

	fi->direct_io = 1;
	fi->nonseekable = 1;
	fi->fh = 0;
	if (umad_issm_open(v->ctx) == 0) {
		fuse_reply_open(req, fi);
		return;
	}
	if (fi->flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	/* Block until the holder closes (down_interruptible, §7). */
	p = park(req, fs);
	if (!p)
		return;
	p->dev = v->ctx;
	p->size = (size_t)fi->flags;
	g_queue_push_tail(&fs->issm_waiters, p);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);

	if (!v) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	switch (v->kind) {
	case VN_DIR:
		fuse_reply_err(req, EISDIR);
		return;
	case VN_ATTR:
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->direct_io = 1;
		fuse_reply_open(req, fi);
		return;
	case VN_UMAD:
		open_umad(req, v, fi);
		return;
	case VN_ISSM:
		open_issm(req, v, fi);
		return;
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fusefs *fs = req_fs(req);
	struct vnode *v = vfs_get(fs->vfs, ino);
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;
	struct parked *p;

	if (!v) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (v->kind == VN_ATTR) {
		char *text = v->show(v);
		size_t len = strlen(text);

		if ((size_t)off >= len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, text + off, MIN(size, len - (size_t)off));
		g_free(text);
		return;
	}
	if (v->kind != VN_UMAD) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (umad_readable(uf->file) || size < umad_hdr_size(uf->file) ||
	    (fi->flags & O_NONBLOCK)) {
		reply_read(req, uf, size);
		return;
	}
	/* A blocking read waits here until a packet or an interrupt. */
	p = park(req, fs);
	if (!p)
		return;
	p->uf = uf;
	p->size = size;
	g_queue_push_tail(&uf->reads, p);
	g_queue_push_tail(&fs->all_reads, p);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);
	ssize_t n;

	(void)off;
	if (!v || v->kind != VN_UMAD) {
		fuse_reply_err(req, v && v->kind == VN_ISSM ? EINVAL : EACCES);
		return;
	}
	n = umad_write(((struct ufile *)(uintptr_t)fi->fh)->file, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);
	uint8_t buf[64] = { 0 };
	size_t out_len = 0;
	int ret;

	(void)arg;
	(void)flags;
	if (!v || v->kind != VN_UMAD) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	/* Restricted ioctls: the kernel sized in/out from the command. */
	if (in_bufsz > sizeof(buf) || out_bufsz > sizeof(buf)) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (in_bufsz)
		memcpy(buf, in_buf, in_bufsz);
	ret = umad_ioctl(((struct ufile *)(uintptr_t)fi->fh)->file, cmd, buf, &out_len);
	out_len = MIN(out_len, out_bufsz);
	if (ret < 0 && !out_len)
		fuse_reply_err(req, -ret);
	else
		/* An error with data (REGISTER_AGENT2 flags) works too. */
		fuse_reply_ioctl(req, ret, out_len ? buf : NULL, out_len);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;
	unsigned revents = POLLOUT | POLLWRNORM;

	if (!v || v->kind != VN_UMAD) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLOUT);
		return;
	}
	if (umad_readable(uf->file))
		revents |= POLLIN | POLLRDNORM;
	/* Keep the handle only when we will have something to say. */
	if (ph && !(revents & POLLIN)) {
		if (uf->ph)
			fuse_pollhandle_destroy(uf->ph);
		uf->ph = ph;
	} else if (ph) {
		fuse_pollhandle_destroy(ph);
	}
	fuse_reply_poll(req, revents);
}

static void wake_issm_waiter(struct fusefs *fs, struct umad_dev *d)
{
	GList *l;

	for (l = fs->issm_waiters.head; l; l = l->next) {
		struct parked *p = l->data;
		struct fuse_file_info fi = { .direct_io = 1, .nonseekable = 1 };

		if (p->dev != d || p->interrupted)
			continue;
		g_queue_delete_link(&fs->issm_waiters, l);
		if (umad_issm_open(d) == 0)
			fuse_reply_open(p->req, &fi);
		else
			fuse_reply_err(p->req, EAGAIN);
		g_free(p);
		return;
	}
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefs *fs = req_fs(req);
	struct vnode *v = vfs_get(fs->vfs, ino);
	struct ufile *uf = (struct ufile *)(uintptr_t)fi->fh;

	if (v && v->kind == VN_UMAD && uf) {
		struct parked *p;

		/* The kernel holds the file during a read, so none is parked
		 * unless it was interrupted and not yet answered. */
		while ((p = g_queue_pop_head(&uf->reads))) {
			g_queue_remove(&fs->all_reads, p);
			fuse_reply_err(p->req, EINTR);
			g_free(p);
		}
		if (uf->ph)
			fuse_pollhandle_destroy(uf->ph);
		umad_release(uf->file);
		g_free(uf);
	} else if (v && v->kind == VN_ISSM) {
		umad_issm_close(v->ctx);
		wake_issm_waiter(fs, v->ctx);
	}
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.ioctl = op_ioctl,
	.poll = op_poll,
	.release = op_release,
};

/* ---- FOPEN_STREAM injection (fuse-notes.md, pitfall 7) --------------- */

static bool is_device(struct fusefs *fs, uint64_t ino)
{
	struct vnode *v = vfs_get(fs->vfs, ino);

	return v && (v->kind == VN_UMAD || v->kind == VN_ISSM);
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	struct fusefs *fs = userdata;
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;

	if (n >= (ssize_t)sizeof(*in) && in->opcode == FUSE_OPEN &&
	    is_device(fs, in->nodeid))
		g_hash_table_add(fs->stream_opens, g_memdup2(&in->unique, sizeof(in->unique)));
	return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fusefs *fs = userdata;
	struct fuse_out_header *out = iov[0].iov_base;

	/*
	 * libfuse 3.14 has no way to set FOPEN_STREAM; without it reads and
	 * writes on a shared struct file serialize on f_pos_lock.
	 */
	if (iov[0].iov_len >= sizeof(*out) &&
	    g_hash_table_remove(fs->stream_opens, &out->unique) &&
	    out->error == 0 && count >= 2 &&
	    iov[1].iov_len >= sizeof(struct fuse_open_out)) {
		((struct fuse_open_out *)iov[1].iov_base)->open_flags |= FOPEN_STREAM;
		g_debug("open of a device file: FOPEN_STREAM set");
	}
	return writev(fd, iov, count);
}

/*
 * A libibumad round trip is three requests in a row (write, poll, read).
 * After answering one, look for the next for a short while before going
 * back to sleep in the main loop: the client's next request then finds us
 * awake instead of waiting for a wake-up (docs/performance.md).
 */
#define FUSE_SPIN_US 50
#define FUSE_BATCH 64	/* then back to the loop: timers, ctl, other fds */

static gboolean on_fuse_fd(gint fd, GIOCondition cond, gpointer data)
{
	struct fusefs *fs = data;
	int64_t idle_until;
	unsigned batch = 0;
	int n;

	(void)cond;
	do {
		n = fuse_session_receive_buf(fs->se, &fs->buf);
		if (n == -EINTR || n == -EAGAIN)
			return G_SOURCE_CONTINUE;
		if (n <= 0) {
			g_message("FUSE connection closed (%s)", n ? g_strerror(-n) : "unmounted");
			fs->watch = 0;
			return G_SOURCE_REMOVE;
		}
		fuse_session_process_buf(fs->se, &fs->buf);
		/* Timers and other sources must not starve: spin only briefly. */
		if (++batch >= FUSE_BATCH)
			return G_SOURCE_CONTINUE;
		idle_until = g_get_monotonic_time() + FUSE_SPIN_US;
		for (;;) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, 0) > 0)
				break;
			if (g_get_monotonic_time() >= idle_until)
				return G_SOURCE_CONTINUE;
		}
	} while (1);
}


struct fusefs *fusefs_new(struct vfs *vfs, struct umad_host *host)
{
	struct fusefs *fs = g_new0(struct fusefs, 1);

	fs->vfs = vfs;
	fs->host = host;
	fs->fd = -1;
	fs->stream_opens = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_queue_init(&fs->issm_waiters);
	g_queue_init(&fs->all_reads);
	return fs;
}

int fusefs_mount(struct fusefs *fs, const char *dir, GError **err)
{
	static const struct fuse_custom_io io = { .read = io_read, .writev = io_writev };
	char *argv[] = { (char *)"ibemu", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	char opts[128];

	fs->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fs->fd < 0) {
		g_set_error(err, IBEMU_ERROR, errno,
			    "cannot open /dev/fuse: %s (it needs to be readable and writable by this user)",
			    g_strerror(errno));
		return -1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other",
		 fs->fd, getuid(), getgid());
	if (mount("ibemu", dir, "fuse.ibemu", MS_NOSUID | MS_NODEV, opts) < 0) {
		g_set_error(err, IBEMU_ERROR, errno,
			    "cannot mount FUSE on %s: %s", dir, g_strerror(errno));
		return -1;
	}
	fs->se = fuse_session_new(&args, &ops, sizeof(ops), fs);
	if (!fs->se || fuse_session_custom_io(fs->se, &io, fs->fd) < 0) {
		g_set_error(err, IBEMU_ERROR, EIO, "cannot start the FUSE session");
		return -1;
	}
	/* The session now owns fd (closed by fuse_session_destroy). */
	fs->watch = g_unix_fd_add(fs->fd, G_IO_IN, on_fuse_fd, fs);
	/*
	 * GLib "blocks" a non-recursive source while dispatching it by taking
	 * its fd out of the poll set and back, and each change wakes the
	 * context: two eventfd writes and a read per FUSE request. Our
	 * handlers never run the loop, so skip that.
	 */
	g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, fs->watch), TRUE);
	return 0;
}

void fusefs_free(struct fusefs *fs)
{
	if (!fs)
		return;
	if (fs->watch)
		g_source_remove(fs->watch);
	if (fs->idle)
		g_source_remove(fs->idle);
	if (fs->se)
		fuse_session_destroy(fs->se);
	else if (fs->fd >= 0)
		close(fs->fd);
	g_queue_clear_full(&fs->all_reads, g_free);
	g_queue_clear_full(&fs->issm_waiters, g_free);
	g_hash_table_destroy(fs->stream_opens);
	free(fs->buf.mem);
	g_free(fs);
}
