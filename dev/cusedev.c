/* SPDX-License-Identifier: MIT */
/*
 * CUSE adapter (cusedev.h). Thin: each op finds its device's vnode in the
 * session's userdata and hands the request to devfile.c. Ioctls stay
 * restricted (no CUSE_UNRESTRICTED_IOCTL): every umad ioctl encodes its
 * argument size, so the kernel copies it in and out for us, as for the
 * FUSE files. The command arrives as a signed int.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuse_lowlevel.h>
#include <glib-unix.h>

#include "dev/cusedev.h"
#include "dev/devfile.h"
#include "dev/serve.h"
#include "lib/log.h"

struct cusedev {
	struct cusedevs *cd;
	struct vnode *v;
	char *path;		/* /dev/infiniband/umad0 */
	struct fuse_session *se;
	struct fuse_buf buf;
	int fd;
	guint watch;
};

struct cusedevs {
	struct devfiles *df;
	GPtrArray *devs;	/* struct cusedev * */
};

static struct cusedev *req_dev(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void cop_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusedev *d = req_dev(req);

	devfile_open(d->cd->df, req, d->v, fi, 0);
}

static void cop_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct cusedev *d = req_dev(req);

	devfile_read(d->cd->df, req, d->v, size, off, fi);
}

static void cop_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	devfile_write(req, req_dev(req)->v, buf, size, off, fi);
}

static void cop_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
		      unsigned int flags, const void *in_buf, size_t in_bufsz,
		      size_t out_bufsz)
{
	(void)arg;
	(void)flags;
	devfile_ioctl(req, req_dev(req)->v, (unsigned int)cmd, fi, in_buf, in_bufsz, out_bufsz);
}

static void cop_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	devfile_poll(req, req_dev(req)->v, fi, ph);
}

static void cop_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct cusedev *d = req_dev(req);

	devfile_release(d->cd->df, req, d->v, fi);
}

static const struct cuse_lowlevel_ops cops = {
	.open = cop_open,
	.read = cop_read,
	.write = cop_write,
	.ioctl = cop_ioctl,
	.poll = cop_poll,
	.release = cop_release,
};

static gboolean on_cuse_fd(gint fd, GIOCondition cond, gpointer data)
{
	struct cusedev *d = data;

	(void)cond;
	if (serve_requests(d->se, &d->buf, fd, NULL))
		return G_SOURCE_CONTINUE;
	g_warning("%s: the kernel closed its CUSE connection", d->path);
	d->watch = 0;
	return G_SOURCE_REMOVE;
}

static void cusedev_free(struct cusedev *d)
{
	if (d->watch)
		g_source_remove(d->watch);
	if (d->se)
		fuse_session_destroy(d->se);	/* closes fd: the device goes */
	else if (d->fd >= 0)
		close(d->fd);
	free(d->buf.mem);
	g_free(d->path);
	g_free(d);
}

static int cusedev_add(struct cusedevs *cd, struct vnode *v, GError **err)
{
	char *argv[] = { (char *)"ibemu", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	char *devname = g_strdup_printf("DEVNAME=infiniband/%s", v->name);
	const char *info[] = { devname };
	struct cuse_info ci = { .dev_info_argc = 1, .dev_info_argv = info };
	struct cusedev *d = g_new0(struct cusedev, 1);

	d->cd = cd;
	d->v = v;
	d->path = g_strdup_printf("/dev/infiniband/%s", v->name);
	g_ptr_array_add(cd->devs, d);
	d->fd = open("/dev/cuse", O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot open /dev/cuse: %s", g_strerror(errno));
		g_free(devname);
		return -1;
	}
	/* Major 0: the kernel picks a free one, as for ib_umad's region. */
	d->se = cuse_lowlevel_new(&args, &ci, &cops, d);
	fuse_opt_free_args(&args);	/* left allocated by its option parsing */
	g_free(devname);
	if (!d->se || serve_attach(d->se, d->fd) < 0) {
		g_set_error(err, IBEMU_ERROR, EIO, "cannot start the CUSE session of %s", d->path);
		return -1;
	}
	d->watch = serve_watch(d->fd, on_cuse_fd, d);
	return 0;
}

struct cusedevs *cusedevs_new(void)
{
	struct cusedevs *cd = g_new0(struct cusedevs, 1);

	cd->df = devfiles_new();
	cd->devs = g_ptr_array_new_with_free_func((GDestroyNotify)cusedev_free);
	return cd;
}

int cusedevs_add_dir(struct cusedevs *cd, struct vnode *dir, GError **err)
{
	unsigned i;

	for (i = 0; i < dir->children->len; i++) {
		struct vnode *v = g_ptr_array_index(dir->children, i);

		if (v->kind == VN_FILE && v->ops->chardev && cusedev_add(cd, v, err) < 0)
			return -1;
	}
	return 0;
}

static bool all_present(struct cusedevs *cd, const char **missing)
{
	unsigned i;

	for (i = 0; i < cd->devs->len; i++) {
		struct cusedev *d = g_ptr_array_index(cd->devs, i);
		struct stat st;

		if (stat(d->path, &st) < 0 || !S_ISCHR(st.st_mode)) {
			*missing = d->path;
			return false;
		}
	}
	return true;
}

static gboolean wake(gpointer data)
{
	(void)data;
	return G_SOURCE_CONTINUE;
}

int cusedevs_wait(struct cusedevs *cd, unsigned timeout_ms, int mode, gid_t gid,
		  GError **err)
{
	int64_t deadline = g_get_monotonic_time() + (int64_t)timeout_ms * 1000;
	const char *missing = NULL;
	guint tick = g_timeout_add(5, wake, NULL);	/* devtmpfs gives no event */
	unsigned i;

	while (!all_present(cd, &missing) && g_get_monotonic_time() < deadline)
		g_main_context_iteration(NULL, TRUE);
	g_source_remove(tick);
	if (!all_present(cd, &missing)) {
		g_set_error(err, IBEMU_ERROR, ETIMEDOUT,
			    "%s did not appear within %u ms of registering it with CUSE (is devtmpfs mounted on /dev?)",
			    missing, timeout_ms);
		return -1;
	}
	for (i = 0; i < cd->devs->len; i++) {
		struct cusedev *d = g_ptr_array_index(cd->devs, i);

		/* uverbs devices are everyone's, as rdma-core's udev rules
		 * make them: opening one grants nothing by itself. */
		if (d->v->ops->everyone) {
			if (chmod(d->path, 0666) < 0) {
				g_set_error(err, IBEMU_ERROR, errno, "cannot set the mode of %s: %s",
					    d->path, g_strerror(errno));
				return -1;
			}
			continue;
		}
		if ((mode >= 0 && chmod(d->path, (mode_t)mode) < 0) ||
		    (gid != (gid_t)-1 && chown(d->path, 0, gid) < 0)) {
			g_set_error(err, IBEMU_ERROR, errno, "cannot set the owner or mode of %s: %s",
				    d->path, g_strerror(errno));
			return -1;
		}
	}
	return 0;
}

char *cusedevs_names(const struct cusedevs *cd)
{
	GString *s = g_string_new(NULL);
	unsigned i;

	for (i = 0; i < cd->devs->len; i++) {
		const struct cusedev *d = g_ptr_array_index(cd->devs, i);

		g_string_append_printf(s, "%s%s", i ? " " : "", d->v->name);
	}
	return g_string_free(s, FALSE);
}

void cusedevs_free(struct cusedevs *cd)
{
	if (!cd)
		return;
	g_ptr_array_free(cd->devs, TRUE);
	devfiles_free(cd->df);
	g_free(cd);
}
