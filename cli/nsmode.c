/* SPDX-License-Identifier: MIT */
/*
 * Namespace mode mounts. /dev becomes a tmpfs of symlinks into a recursive
 * bind of the old /dev (an overlay on /dev is refused in a user namespace);
 * /sys/class becomes a read-only overlay of a stub (the two class dirs) over
 * the real /sys/class. Nothing is created outside the namespace except a
 * staging directory in /tmp that is removed again before the command runs.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuse/fusefs.h"
#include "cli/nsmode.h"

static int fail(GError **err, const char *what, int e)
{
	g_set_error(err, IBEMU_ERROR, e, "%s: %s", what, g_strerror(e));
	return -1;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	e = errno;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -e;
}

int ns_enter(GError **err)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64];
	int r;

	if (geteuid() == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			return fail(err, "cannot create a mount namespace", errno);
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return fail(err, "cannot create a user namespace (run as root, or allow unprivileged user namespaces)", errno);
		/* Be root inside, mapped to ourselves outside. */
		if ((r = write_file("/proc/self/setgroups", "deny")) < 0 && r != -ENOENT)
			return fail(err, "cannot write /proc/self/setgroups", -r);
		snprintf(map, sizeof(map), "0 %u 1", uid);
		if ((r = write_file("/proc/self/uid_map", map)) < 0)
			return fail(err, "cannot write uid_map", -r);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		if ((r = write_file("/proc/self/gid_map", map)) < 0)
			return fail(err, "cannot write gid_map", -r);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(err, "cannot make mounts private", errno);
	return 0;
}

/* A tmpfs of symlinks to every entry of the old /dev, plus infiniband/. */
static int build_dev(const char *stage, const char *fsdir, GError **err)
{
	char *newdev = g_build_filename(stage, "dev", NULL);
	char *host = g_build_filename(newdev, ".host", NULL);
	char *ib = g_build_filename(newdev, "infiniband", NULL);
	char *src = g_build_filename(fsdir, "dev", NULL);
	DIR *d = NULL;
	struct dirent *de;
	int ret = -1;

	if (mkdir(newdev, 0755) < 0 && errno != EEXIST) {
		fail(err, "mkdir staging dev", errno);
		goto out;
	}
	if (mount("tmpfs", newdev, "tmpfs", MS_NOSUID, "mode=0755") < 0) {
		fail(err, "cannot mount a tmpfs for /dev", errno);
		goto out;
	}
	d = opendir("/dev");
	if (!d) {
		fail(err, "cannot list /dev", errno);
		goto out;
	}
	while ((de = readdir(d))) {
		char *link, *target;
		char path[4096], buf[4096];
		ssize_t n;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "infiniband"))
			continue;
		link = g_build_filename(newdev, de->d_name, NULL);
		target = g_strdup_printf("/dev/.host/%s", de->d_name);
		/* Keep symlinks such as /dev/fd as they are. */
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		n = readlink(path, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			g_free(target);
			target = g_strdup(buf);
		}
		if (symlink(target, link) < 0)
			g_warning("cannot link %s: %s", link, g_strerror(errno));
		g_free(link);
		g_free(target);
	}
	if (mkdir(host, 0755) < 0 || mkdir(ib, 0755) < 0) {
		fail(err, "mkdir in new /dev", errno);
		goto out;
	}
	if (mount("/dev", host, NULL, MS_BIND | MS_REC, NULL) < 0) {
		fail(err, "cannot bind the old /dev", errno);
		goto out;
	}
	if (mount(src, ib, NULL, MS_BIND, NULL) < 0) {
		fail(err, "cannot bind /dev/infiniband", errno);
		goto out;
	}
	if (mount(newdev, "/dev", NULL, MS_MOVE, NULL) < 0) {
		fail(err, "cannot move the new /dev in place", errno);
		goto out;
	}
	ret = 0;
out:
	if (d)
		closedir(d);
	g_free(newdev);
	g_free(host);
	g_free(ib);
	g_free(src);
	return ret;
}

static int build_sys_class(const char *stage, const char *fsdir, GError **err)
{
	static const char *const dirs[] = { "infiniband", "infiniband_mad" };
	char *stub = g_build_filename(stage, "stub", NULL);
	char *opts = g_strdup_printf("lowerdir=%s:/sys/class", stub);
	int ret = -1;
	unsigned i;

	if (mkdir(stub, 0755) < 0) {
		fail(err, "mkdir stub", errno);
		goto out;
	}
	for (i = 0; i < G_N_ELEMENTS(dirs); i++) {
		char *p = g_build_filename(stub, dirs[i], NULL);

		mkdir(p, 0755);
		g_free(p);
	}
	/* A lower-only overlay is read-only: /sys/class/net etc. stay visible. */
	if (mount("ibemu", "/sys/class", "overlay", MS_RDONLY, opts) < 0) {
		fail(err, "cannot overlay /sys/class", errno);
		goto out;
	}
	for (i = 0; i < G_N_ELEMENTS(dirs); i++) {
		char *src = g_build_filename(fsdir, dirs[i], NULL);
		char *dst = g_build_filename("/sys/class", dirs[i], NULL);
		int r = mount(src, dst, NULL, MS_BIND, NULL);
		int e = errno;

		g_free(src);
		g_free(dst);
		if (r < 0) {
			fail(err, "cannot bind the mock sysfs", e);
			goto out;
		}
	}
	ret = 0;
out:
	g_free(stub);
	g_free(opts);
	return ret;
}

struct setup {
	const char *stage, *fsdir;
	bool with_dev;
	GError *err;
	gint done;
	int ret;
};

static gpointer setup_thread(gpointer data)
{
	struct setup *s = data;

	s->ret = (s->with_dev && build_dev(s->stage, s->fsdir, &s->err) < 0) ||
		 build_sys_class(s->stage, s->fsdir, &s->err) < 0 ? -1 : 0;
	g_atomic_int_set(&s->done, 1);
	g_main_context_wakeup(NULL);
	return NULL;
}

int ns_mount(struct fusefs *fs, bool with_dev, GError **err)
{
	char stage[] = "/tmp/ibemu.XXXXXX";
	struct setup s = { .stage = stage, .with_dev = with_dev };
	char *fsdir = NULL;
	GThread *t;
	int ret = -1;

	if (!mkdtemp(stage))
		return fail(err, "cannot create a staging directory in /tmp", errno);
	if (mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) {
		fail(err, "cannot mount the staging tmpfs", errno);
		rmdir(stage);
		return -1;
	}
	fsdir = g_build_filename(stage, "fs", NULL);
	if (mkdir(fsdir, 0755) < 0) {
		fail(err, "mkdir staging fs", errno);
		goto out;
	}
	if (fusefs_mount(fs, fsdir, err) < 0)
		goto out;
	/*
	 * Binding paths inside our own FUSE mount makes the kernel ask us
	 * (INIT, LOOKUP): do the binds on a thread while this one serves.
	 */
	s.fsdir = fsdir;
	t = g_thread_new("ibemu-mounts", setup_thread, &s);
	while (!g_atomic_int_get(&s.done))
		g_main_context_iteration(NULL, TRUE);
	g_thread_join(t);
	if (s.ret < 0) {
		g_propagate_error(err, s.err);
		goto out;
	}
	ret = 0;
out:
	/* The bind mounts keep what they need; the stage itself goes. */
	umount2(stage, MNT_DETACH);
	rmdir(stage);
	g_free(fsdir);
	return ret;
}
