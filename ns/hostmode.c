/* SPDX-License-Identifier: MIT */
/*
 * CUSE mode's host plumbing (hostmode.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "lib/log.h"
#include "ns/hostmode.h"
#include "ns/nsmode.h"

/* Entries of @dir whose name starts with @prefix, space separated. */
static char *entries(const char *dir, const char *prefix)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	GString *s = g_string_new(NULL);
	const char *e;

	while (d && (e = g_dir_read_name(d)))
		if (g_str_has_prefix(e, prefix))
			g_string_append_printf(s, "%s%s", s->len ? " " : "", e);
	if (d)
		g_dir_close(d);
	return g_string_free(s, FALSE);
}

int host_preflight(GError **err)
{
	char *real;

	if (geteuid() != 0) {
		g_set_error(err, IBEMU_ERROR, EPERM,
			    "CUSE mode needs root (it creates character devices and mounts over /sys/class); "
			    "without root, use namespace mode: ibemu run");
		return -1;
	}
	if (access("/dev/cuse", R_OK | W_OK) < 0) {
		g_set_error(err, IBEMU_ERROR, ENOENT,
			    "/dev/cuse: %s: load the module (modprobe cuse), or use namespace mode "
			    "(ibemu run), which needs no CUSE", g_strerror(errno));
		return -1;
	}
	real = entries("/sys/class/infiniband", "");
	if (!*real) {
		g_free(real);
		real = entries("/dev/infiniband", "umad");
	}
	if (*real) {
		g_set_error(err, IBEMU_ERROR, EEXIST,
			    "this host has InfiniBand devices already (%s): CUSE mode would hide or clash "
			    "with them; use namespace mode (ibemu run), which leaves them alone", real);
		g_free(real);
		return -1;
	}
	g_free(real);
	if (g_file_test("/sys/module/ib_core", G_FILE_TEST_IS_DIR)) {
		g_set_error(err, IBEMU_ERROR, EEXIST,
			    "ib_core is loaded: libibverbs would ask its netlink and never see the emulated "
			    "devices; unload it (modprobe -r ib_core, after the modules using it) or use "
			    "namespace mode (ibemu run), whose netlink trap works with it loaded");
		return -1;
	}
	return 0;
}

/*
 * While we run, ib_core must not load: the first RDMA netlink socket any
 * process opens would autoload it (net-pf-16-proto-20) and from then on
 * libibverbs lists its (no) devices instead of ours. modprobe's blacklist
 * ignores a module's aliases, which is exactly that path (docs/verbs.md
 * "Discovery"); an explicit `modprobe ib_core` still works.
 */
#define BLACKLIST_DIR	"/run/modprobe.d"
#define BLACKLIST_FILE	BLACKLIST_DIR "/ibemu.conf"

static int blacklist_ib_core(GError **err)
{
	char *text = g_strdup_printf("# ibemu start (pid %d): keep ib_core from autoloading, so that\n"
				     "# libibverbs scans sysfs and finds the emulated devices.\n"
				     "blacklist ib_core\n", getpid());
	GError *e = NULL;
	int ret = 0;

	if (g_mkdir_with_parents(BLACKLIST_DIR, 0755) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot make %s: %s", BLACKLIST_DIR,
			    g_strerror(errno));
		ret = -1;
	} else if (!g_file_set_contents(BLACKLIST_FILE, text, -1, &e)) {
		g_propagate_error(err, e);	/* it names the file */
		ret = -1;
	}
	g_free(text);
	return ret;
}

/* Is this line of /proc/self/mountinfo one of ours? */
static char *our_mount(const char *line)
{
	char mnt[4096], fstype[256], source[256];
	const char *sep = strstr(line, " - ");

	if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
	    sscanf(sep + 3, "%255s %255s", fstype, source) != 2)
		return NULL;
	if (((!strcmp(mnt, "/sys/class") || !strcmp(mnt, "/etc/libibverbs.d")) &&
	     !strcmp(fstype, "overlay") && !strcmp(source, "ibemu")) ||
	    (g_str_has_prefix(mnt, "/sys/class/") && !strcmp(fstype, "fuse.ibemu")))
		return g_strdup(mnt);
	return NULL;
}

unsigned host_unmount(void)
{
	char *text = NULL, **lines, **l;
	GPtrArray *ours = g_ptr_array_new_with_free_func(g_free);
	unsigned n = 0;
	guint i;

	if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (l = lines; *l; l++) {
		char *m = our_mount(*l);

		if (m)
			g_ptr_array_add(ours, m);
	}
	/* Listed parents first: take the binds off before the overlay. */
	for (i = ours->len; i-- > 0;) {
		const char *m = g_ptr_array_index(ours, i);

		if (umount2(m, MNT_DETACH) == 0)
			n++;
		else
			g_warning("cannot unmount %s: %s", m, g_strerror(errno));
	}
	g_ptr_array_free(ours, TRUE);
	g_strfreev(lines);
	g_free(text);
	unlink(BLACKLIST_FILE);
	return n;
}

int host_mount(struct fusefs *fs, GError **err)
{
	if (blacklist_ib_core(err) < 0)
		return -1;
	return ns_mount(fs, false, err);
}
