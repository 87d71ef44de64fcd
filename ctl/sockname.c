/* SPDX-License-Identifier: MIT */
/* Where emulators' sockets live; see sockname.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "ctl/sockname.h"
#include "lib/log.h"

char *emu_ctl_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *run = getenv("IBEMU_CTL_DIR");

	if (run && *run == '/')	/* inside a run: its directory (cmd_run.c) */
		return g_strdup(run);

	if (xdg && *xdg == '/')
		return g_build_filename(xdg, "ibemu", NULL);
	return getuid() == 0 ? g_strdup("/run/ibemu") :
	       g_strdup_printf("/tmp/ibemu-%u", getuid());
}

/* Names become file names: a short, safe set, no dot first. */
bool emu_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > EMU_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

char *emu_ctl_path(const char *name, GError **err)
{
	char *dir, *file, *path;

	if (!emu_name_ok(name)) {
		g_set_error(err, IBEMU_ERROR, EINVAL,
			    "bad emulator name \"%s\": 1 to %u of A-Z a-z 0-9 . _ -, not starting with . or -",
			    name, EMU_NAME_MAX);
		return NULL;
	}
	dir = emu_ctl_dir();
	file = g_strdup_printf("%s.sock", name);
	path = g_build_filename(dir, file, NULL);
	g_free(dir);
	g_free(file);
	return path;
}

char *emu_fast_path(const char *ctl_sock)
{
	size_t n = strlen(ctl_sock);

	if (n > 5 && !strcmp(ctl_sock + n - 5, ".sock"))
		n -= 5;
	return g_strdup_printf("%.*s.fast", (int)n, ctl_sock);
}

char *emu_name_of(const char *ctl_sock)
{
	char *b = g_path_get_basename(ctl_sock);

	if (g_str_has_suffix(b, ".sock"))
		b[strlen(b) - 5] = 0;
	return b;
}

/*
 * Our socket directory, made 0700 if missing. One that someone else made
 * (another user can create /tmp/ibemu-UID first and swap our sockets), or
 * that is not a directory, is refused, never used; our own is made 0700
 * if it was open to others (an older ibemu made /run/ibemu 0755).
 */
int emu_ctl_dir_prepare(GError **err)
{
	char *dir = emu_ctl_dir(), *parent = g_path_get_dirname(dir);
	struct stat st;
	int ret = -1;

	if (g_mkdir_with_parents(parent, 0700) < 0 || (mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot create %s: %s", dir, g_strerror(errno));
		goto out;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    ((st.st_mode & 077) && chmod(dir, 0700) < 0)) {
		g_set_error(err, IBEMU_ERROR, EPERM,
			    "%s is not a directory of ours (it must be ours, and is made mode 0700): not using it",
			    dir);
		goto out;
	}
	ret = 0;
out:
	g_free(dir);
	g_free(parent);
	return ret;
}

/* The live emulators' sockets, by name; stale ones (nobody listens,
 * a crashed emulator's) are removed when they are ours. */
GPtrArray *emu_list(void)
{
	GPtrArray *live = g_ptr_array_new_with_free_func(g_free);
	char *dir = emu_ctl_dir();
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *e;

	while (d && (e = g_dir_read_name(d))) {
		char *path;

		if (!g_str_has_suffix(e, ".sock"))
			continue;
		path = g_build_filename(dir, e, NULL);
		switch (ctl_probe(path)) {
		case CTL_LIVE:
			g_ptr_array_add(live, path);
			continue;
		case CTL_STALE: {
			/* and the fast path's socket beside it */
			char *fast = emu_fast_path(path);

			ctl_unlink_if_ours(path);
			ctl_unlink_if_ours(fast);
			g_free(fast);
			break;
		}
		default:
			break;
		}
		g_free(path);
	}
	if (d)
		g_dir_close(d);
	g_free(dir);
	g_ptr_array_sort(live, (GCompareFunc)g_strcmp0);
	return live;
}
