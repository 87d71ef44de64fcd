/* SPDX-License-Identifier: MIT */
/*
 * Namespace mode mounts. /dev becomes a tmpfs of symlinks into a recursive
 * bind of the old /dev (an overlay on /dev is refused in a user namespace),
 * with the host's /dev/full bound over each /dev/infiniband/uverbsN
 * and over /dev/infiniband/rdma_cm (docs/rdmacm.md);
 * /sys/class becomes a read-only overlay of a stub (the four class dirs)
 * over the real /sys/class, and /etc/libibverbs.d one of a stub that names
 * the ibemu provider (docs/verbs.md "Discovery"). Nothing is created
 * outside the namespace except a staging directory in /tmp that is removed
 * again before the command runs.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/fusefs.h"
#include "lib/shipped.h"
#include "ns/nsmode.h"

#define VERBS_CONF_DIR	"/etc/libibverbs.d"

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

/* A sysctl's value, or -1 when the file is not there. */
static long sysctl_value(const char *path)
{
	char *text = NULL;
	long v = -1;

	if (g_file_get_contents(path, &text, NULL, NULL))
		v = strtol(text, NULL, 10);
	g_free(text);
	return v;
}

/*
 * Why a user's namespace could not be made, when the system says so, as
 * one sentence saying what to do: Ubuntu 23.10 and later confine
 * unprivileged user namespaces by AppArmor (unshare works, then writing
 * uid_map is EPERM); a limit of 0 or Debian's old switch turns them off.
 */
static const char *userns_hint(void)
{
	if (sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		return "AppArmor restricts unprivileged user namespaces here "
		       "(kernel.apparmor_restrict_unprivileged_userns = 1): run ibemu with sudo, "
		       "or allow them: sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0";
	if (sysctl_value("/proc/sys/user/max_user_namespaces") == 0)
		return "user namespaces are turned off (user.max_user_namespaces = 0): run ibemu "
		       "with sudo, or allow them: sudo sysctl user.max_user_namespaces=10000";
	if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return "unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone = 0): "
		       "run ibemu with sudo, or allow them: sudo sysctl kernel.unprivileged_userns_clone=1";
	return NULL;
}

/* A failed step of making our user namespace: the hint when there is one. */
static int fail_userns(GError **err, const char *what, int e)
{
	const char *hint = userns_hint();

	if (!hint)
		return fail(err, what, e);
	g_set_error(err, IBEMU_ERROR, e, "%s: %s (%s)", hint, what, g_strerror(e));
	return -1;
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
			return fail_userns(err, "cannot create a user namespace (run as root, or allow unprivileged user namespaces)", errno);
		/* Be root inside, mapped to ourselves outside. */
		if ((r = write_file("/proc/self/setgroups", "deny")) < 0 && r != -ENOENT)
			return fail_userns(err, "cannot write /proc/self/setgroups", -r);
		snprintf(map, sizeof(map), "0 %u 1", uid);
		if ((r = write_file("/proc/self/uid_map", map)) < 0)
			return fail_userns(err, "cannot write uid_map", -r);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		if ((r = write_file("/proc/self/gid_map", map)) < 0)
			return fail_userns(err, "cannot write gid_map", -r);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return (geteuid() == 0 && uid ? fail_userns : fail)(err, "cannot make mounts private", errno);
	return 0;
}

/*
 * libibverbs opens /dev/infiniband/uverbsN only if it is a character device
 * (util/open_cdev.c). The host's /dev/full is one that a provider can
 * open rootless and whose writes fail cleanly (/dev/null's would
 * "succeed" with no answer); the provider puts the daemon's command file
 * over it (docs/verbs.md "The command fd").
 */
static int bind_uverbs(const char *ib, GError **err)
{
	GDir *d = g_dir_open(ib, 0, NULL);
	const char *name;
	int ret = 0;

	while (d && ret == 0 && (name = g_dir_read_name(d))) {
		char *path;

		if (!g_str_has_prefix(name, "uverbs") && strcmp(name, "rdma_cm") != 0)
			continue;
		path = g_build_filename(ib, name, NULL);
		if (mount("/dev/full", path, NULL, MS_BIND, NULL) < 0)
			ret = fail(err, "cannot bind /dev/full over /dev/infiniband/uverbsN or rdma_cm", errno);
		g_free(path);
	}
	if (d)
		g_dir_close(d);
	return ret;
}

/* A tmpfs of symlinks to every entry of the old /dev, plus infiniband/. */
static int build_dev(const char *stage, const char *fsdir, GError **err)
{
	char *newdev = g_build_filename(stage, "dev", NULL);
	char *host = g_build_filename(newdev, ".host", NULL);
	char *ib = g_build_filename(newdev, "infiniband", NULL);
	char *src = g_build_filename(fsdir, "dev", NULL);
	/* Inside another run (nested), /dev is that run's: its links point
	 * into its /dev/.host, the machine's /dev, which is ours to bind and
	 * list too (binding the outer /dev would make every link a loop). */
	const char *olddev = access("/dev/.host", F_OK) == 0 ? "/dev/.host" : "/dev";
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
	d = opendir(olddev);
	if (!d) {
		fail(err, "cannot list /dev", errno);
		goto out;
	}
	while ((de = readdir(d))) {
		char *link, *target;
		char path[4096], buf[4096];
		ssize_t n;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "infiniband") || !strcmp(de->d_name, ".host"))
			continue;
		link = g_build_filename(newdev, de->d_name, NULL);
		target = g_strdup_printf("/dev/.host/%s", de->d_name);
		/* Keep symlinks such as /dev/fd as they are. */
		snprintf(path, sizeof(path), "%s/%s", olddev, de->d_name);
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
	if (mount(olddev, host, NULL, MS_BIND | MS_REC, NULL) < 0) {
		fail(err, "cannot bind the old /dev", errno);
		goto out;
	}
	if (mount(src, ib, NULL, MS_BIND, NULL) < 0) {
		fail(err, "cannot bind /dev/infiniband", errno);
		goto out;
	}
	if (bind_uverbs(ib, err) < 0)
		goto out;
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
	static const char *const dirs[] = { "infiniband", "infiniband_mad", "infiniband_verbs",
					    "infiniband_ucma" };
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
		/* An attached host's tree has no infiniband_ucma (yet). */
		int r = access(src, F_OK) < 0 ? 0 : mount(src, dst, NULL, MS_BIND, NULL);
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

/* The provider's path without "-rdmav34.so", as libibverbs wants it. */
static char *find_provider(void)
{
	char *so = shipped_find("verbs/libibemu-rdmav34.so",
				    IBEMU_PROVIDER_DIR "/libibemu-rdmav34.so");

	if (so)
		so[strlen(so) - strlen("-rdmav34.so")] = 0;
	return so;
}

const char *ns_provider(void)
{
	static char *base;
	static bool looked;

	if (!looked)
		base = find_provider();
	looked = true;
	return base;
}

/*
 * /etc/libibverbs.d as a read-only overlay of a stub holding ibemu.driver
 * over the real one, so that every program run here loads the provider
 * with no environment variable (RDMAV_DRIVERS is dropped by sudo and env
 * -i). Without it libibverbs lists the devices but opens none: say so.
 */
static void build_verbs_conf(const char *stage)
{
	const char *base = ns_provider();
	char *stub = g_build_filename(stage, "libibverbs.d", NULL);
	char *file = g_build_filename(stub, "ibemu.driver", NULL);
	char *text = g_strdup_printf("driver %s\n", base ? base : "");
	char *opts = g_strdup_printf("lowerdir=%s:" VERBS_CONF_DIR, stub);

	if (!base)
#ifdef IBEMU_IBVERBS_BUILT
		g_warning("no libibemu-rdmav34.so beside this ibemu or in %s: programs using libibverbs will not open the emulated devices",
			  IBEMU_PROVIDER_DIR);
#else
		g_debug("built with --disable-verbs: no verbs provider to name");
#endif
	else if (!g_file_test(VERBS_CONF_DIR, G_FILE_TEST_IS_DIR))
		g_debug("no %s here (libibverbs is not installed): the provider is not named",
			VERBS_CONF_DIR);
	else if (mkdir(stub, 0755) < 0 || !g_file_set_contents(file, text, -1, NULL) ||
		 mount("ibemu", VERBS_CONF_DIR, "overlay", MS_RDONLY, opts) < 0)
		g_warning("cannot name the ibemu provider in %s (%s): programs using libibverbs will not open the emulated devices",
			  VERBS_CONF_DIR, g_strerror(errno));
	g_free(stub);
	g_free(file);
	g_free(text);
	g_free(opts);
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
	if (s->ret == 0)
		build_verbs_conf(s->stage);
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
