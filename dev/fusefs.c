/* SPDX-License-Identifier: MIT */
/*
 * FUSE adapter. Interface: FUSE low-level ops for VN_DIR (lookup, getattr,
 * readdir) and VN_ATTR (open/read: text made per read); the device files
 * VN_UMAD and VN_ISSM are devfile.c's, shared with CUSE mode.
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

#include "dev/devfile.h"
#include "dev/fusefs.h"
#include "dev/serve.h"

/* The tree never changes shape while we run; a renamed directory is
 * forgotten by a notice (notes_thread). */
#define TTL 86400.0
/* Notices waiting for their thread: past this a rename's is dropped with
 * a warning, and the old name may answer until TTL ends. */
#define NOTES_MAX 4096

struct fusefs {
	struct vfs *vfs;
	struct fuse_session *se;
	struct fuse_buf buf;
	int fd;
	guint watch;
	uint64_t unique;	/* of the request being dispatched (serve.h) */
	struct devfiles *df;
	GAsyncQueue *notes;	/* struct note *, for notes_thread; NULL: none yet */
};

/* A name the kernel is to forget (FUSE_NOTIFY_INVAL_ENTRY); an empty one
 * ends the thread. */
struct note {
	uint64_t parent;
	char name[];
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
		st->st_mode = S_IFREG | (v->store ? (v->show ? 0644 : 0200) : 0444);
		st->st_nlink = 1;
		st->st_size = 4096;	/* as sysfs reports */
		break;
	case VN_FILE:
		/* ib_umad makes umadN and issmN root's, 0600 (user_mad.c
		 * umad_devnode); the mount is private, its users are this
		 * user (root inside a user namespace). The verbs files are
		 * everyone's, as rdma-core's udev rules make
		 * /dev/infiniband/uverbsN. */
		st->st_mode = S_IFREG | (v->ops->everyone ? 0666 : 0600);
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

/* ---- files ------------------------------------------------------------ */

static struct vnode *file_vnode(fuse_req_t req, fuse_ino_t ino)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);

	if (!v)
		fuse_reply_err(req, ENOENT);
	return v;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *v = file_vnode(req, ino);

	if (!v)
		return;
	if (v->kind == VN_DIR) {
		fuse_reply_err(req, EISDIR);
	} else if (v->kind == VN_ATTR) {
		/* As sysfs's (KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK): an open
		 * for what the attribute has no method for is EACCES, for
		 * root too. */
		if (((fi->flags & O_ACCMODE) != O_RDONLY && !v->store) ||
		    ((fi->flags & O_ACCMODE) != O_WRONLY && !v->show)) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->direct_io = 1;
		fuse_reply_open(req, fi);
	} else {
		struct fusefs *fs = req_fs(req);

		devfile_open(fs->df, req, v, fi, fs->unique);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct vnode *v = file_vnode(req, ino);

	if (!v)
		return;
	if (v->kind == VN_ATTR) {
		char *text = NULL;
		int err = vfs_attr_read(v, &text);
		size_t len = text ? strlen(text) : 0;

		if (err)
			fuse_reply_err(req, -err);
		else if ((size_t)off >= len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, text + off, MIN(size, len - (size_t)off));
		g_free(text);
		return;
	}
	devfile_read(req_fs(req)->df, req, v, size, off, fi);
}

/* A sysfs store sees what was written as one string (kernfs_fop_write_iter
 * copies at most a page and ends it with a NUL) and takes it all or
 * fails with its errno. */
static void store_attr(fuse_req_t req, const struct vnode *v, const char *buf, size_t size)
{
	char page[4096];
	size_t n = MIN(size, sizeof(page) - 1);
	int ret;

	memcpy(page, buf, n);
	page[n] = 0;
	ret = v->store(v, page, n);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_write(req, n);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct vnode *v = file_vnode(req, ino);

	if (!v)
		return;
	if (v->kind == VN_ATTR && v->store) {
		store_attr(req, v, buf, size);
	} else if (v->kind == VN_DIR || v->kind == VN_ATTR) {
		fuse_reply_err(req, EACCES);
	} else {
		devfile_write(req, v, buf, size, off, fi);
	}
}

/*
 * ftruncate() on a device: the kernel refuses it before any driver with
 * EINVAL (do_ftruncate: not a regular file). Here the file is a FUSE
 * regular file, so the request comes: answer as the kernel. Anything
 * else stays ENOSYS (the tree is fixed).
 */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);

	(void)fi;
	if (v && v->kind == VN_ATTR && v->store && to_set == FUSE_SET_ATTR_SIZE) {
		/* `echo x > attr` truncates first; sysfs lets it. */
		fill_attr(v, attr);
		fuse_reply_attr(req, attr, TTL);
	} else if (v && v->kind != VN_DIR && v->kind != VN_ATTR && (to_set & FUSE_SET_ATTR_SIZE))
		fuse_reply_err(req, EINVAL);
	else
		fuse_reply_err(req, ENOSYS);
}

static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct vnode *v = file_vnode(req, ino);

	(void)arg;
	(void)flags;
	if (!v)
		return;
	if (v->kind == VN_DIR || v->kind == VN_ATTR)
		fuse_reply_err(req, ENOTTY);
	else
		devfile_ioctl(req, v, cmd, fi, in_buf, in_bufsz, out_bufsz);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct vnode *v = file_vnode(req, ino);

	if (!v) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		return;
	}
	devfile_poll(req, v, fi, ph);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct vnode *v = vfs_get(req_fs(req)->vfs, ino);

	if (v && v->kind != VN_DIR && v->kind != VN_ATTR)
		devfile_release(req_fs(req)->df, req, v, fi);
	else
		fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.ioctl = op_ioctl,
	.poll = op_poll,
	.release = op_release,
};

/* ---- FOPEN_STREAM (docs/fuse-cuse.md, point 7) ------------------------- */

/*
 * Answer a device open with FOPEN_STREAM, which no libfuse can set (its
 * fuse_file_info has no bit for it): without it the kernel serializes
 * reads and writes of one shared struct file on f_pos_lock, and a thread
 * blocked in read(2) would hold up another's write(2), unlike ib_umad's
 * stream files. We write the reply ourselves, then let libfuse free the
 * request, by the id it came with: now, or later for an open the file's
 * table answers later (an attached host's, an issm's).
 */
static void reply_device_open(void *data, fuse_req_t req, const struct fuse_file_info *fi,
			      uint64_t unique)
{
	struct fusefs *fs = data;
	struct fuse_open_out arg = { .fh = fi->fh, .open_flags = FOPEN_STREAM };
	struct fuse_out_header out = { .len = sizeof(out) + sizeof(arg) };
	struct iovec iov[2] = {
		{ .iov_base = &out, .iov_len = sizeof(out) },
		{ .iov_base = &arg, .iov_len = sizeof(arg) },
	};

	if (!unique) {
		fuse_reply_open(req, fi);
		return;
	}
	out.unique = unique;
	if (fi->direct_io)
		arg.open_flags |= FOPEN_DIRECT_IO;
	if (fi->nonseekable)
		arg.open_flags |= FOPEN_NONSEEKABLE;
	/* ENOENT: the opener was interrupted meanwhile, as libfuse ignores. */
	if (writev(fs->fd, iov, 2) < 0 && errno != ENOENT)
		g_warning("cannot answer a FUSE open: %s", g_strerror(errno));
	fuse_reply_none(req);
}

static gboolean on_fuse_fd(gint fd, GIOCondition cond, gpointer data)
{
	struct fusefs *fs = data;

	(void)cond;
	if (serve_requests(fs->se, &fs->buf, fd, &fs->unique))
		return G_SOURCE_CONTINUE;
	fs->watch = 0;
	return G_SOURCE_REMOVE;
}

/*
 * The notices, each written on the thread's own copy of the session's fd.
 * Not from the loop that answers lookups: the kernel takes the
 * directory's lock for a notice, and a lookup there waiting for our
 * answer holds it (libfuse's fuse_lowlevel_notify_inval_entry warns of
 * the same). The kernel may say ENOENT (nothing cached): nothing to do.
 */
struct notes {
	GAsyncQueue *q;
	int fd;
};

static gpointer notes_thread(gpointer data)
{
	struct notes *t = data;
	struct note *n;

	while ((n = g_async_queue_pop(t->q)) && n->name[0]) {
		struct fuse_out_header oh = { .error = FUSE_NOTIFY_INVAL_ENTRY };
		struct fuse_notify_inval_entry_out out = { .parent = n->parent,
							   .namelen = (uint32_t)strlen(n->name) };
		struct iovec iov[3] = { { &oh, sizeof(oh) }, { &out, sizeof(out) },
					{ n->name, out.namelen + 1 } };

		oh.len = (uint32_t)(sizeof(oh) + sizeof(out) + out.namelen + 1);
		if (writev(t->fd, iov, 3) < 0 && errno != ENOENT)
			g_debug("fuse: a renamed entry not forgotten: %s", g_strerror(errno));
		g_free(n);
	}
	g_free(n);
	close(t->fd);
	g_async_queue_unref(t->q);
	g_free(t);
	return NULL;
}

static void note(struct fusefs *fs, uint64_t parent, const char *name)
{
	size_t len = strlen(name) + 1;
	struct note *n = g_malloc(sizeof(*n) + len);

	n->parent = parent;
	memcpy(n->name, name, len);
	g_async_queue_push(fs->notes, n);
}

static void on_renamed(void *ctx, const struct vnode *dir, const char *was, const char *now)
{
	struct fusefs *fs = ctx;
	struct notes *t;
	int fd;

	if (fs->fd < 0 || !fs->se)
		return;		/* not mounted: nothing cached */
	if (!fs->notes) {
		if ((fd = fcntl(fs->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			g_warning("fuse: no notices of renamed devices: %s", g_strerror(errno));
			return;
		}
		/* The thread owns its fd and a reference to the queue: it
		 * may outlive us, blocked until the kernel takes a notice. */
		fs->notes = g_async_queue_new();
		t = g_new(struct notes, 1);
		t->q = g_async_queue_ref(fs->notes);
		t->fd = fd;
		g_thread_unref(g_thread_new("ibemu-fuse-notes", notes_thread, t));
	}
	if (g_async_queue_length(fs->notes) >= NOTES_MAX) {
		g_warning("fuse: %d notices of renamed devices wait: %s and %s not forgotten",
			  NOTES_MAX, was, now);
		return;
	}
	note(fs, dir->ino, was);
	note(fs, dir->ino, now);
}

struct fusefs *fusefs_new(struct vfs *vfs)
{
	struct fusefs *fs = g_new0(struct fusefs, 1);

	fs->vfs = vfs;
	fs->fd = -1;
	fs->df = devfiles_new();
	vfs->renamed = on_renamed;
	vfs->renamed_ctx = fs;
	devfiles_set_reply_open(fs->df, reply_device_open, fs);
	return fs;
}

int fusefs_mount(struct fusefs *fs, const char *dir, GError **err)
{
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
	/* default_permissions: the kernel checks the modes above, so that
	 * another user in the run is refused umadN as by ib_umad's 0600. */
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other,default_permissions",
		 fs->fd, getuid(), getgid());
	if (mount("ibemu", dir, "fuse.ibemu", MS_NOSUID | MS_NODEV, opts) < 0) {
		g_set_error(err, IBEMU_ERROR, errno,
			    "cannot mount FUSE on %s: %s", dir, g_strerror(errno));
		return -1;
	}
	fs->se = fuse_session_new(&args, &ops, sizeof(ops), fs);
	/* Its option parsing leaves args allocated (fuse_opt_parse). */
	fuse_opt_free_args(&args);
	if (!fs->se || serve_attach(fs->se, fs->fd) < 0) {
		g_set_error(err, IBEMU_ERROR, EIO, "cannot start the FUSE session");
		return -1;
	}
	/* The session now owns fd (closed by fuse_session_destroy). */
	fs->watch = serve_watch(fs->fd, on_fuse_fd, fs);
	return 0;
}

void fusefs_free(struct fusefs *fs)
{
	if (!fs)
		return;
	if (fs->vfs->renamed_ctx == fs)
		fs->vfs->renamed = NULL;
	if (fs->notes) {	/* the thread ends after what it has */
		note(fs, 0, "");
		g_async_queue_unref(fs->notes);
	}
	if (fs->watch)
		g_source_remove(fs->watch);
	if (fs->se)
		fuse_session_destroy(fs->se);
	else if (fs->fd >= 0)
		close(fs->fd);
	devfiles_free(fs->df);
	free(fs->buf.mem);
	g_free(fs);
}
