/* SPDX-License-Identifier: MIT */
/* A run's private /run, /var/log and /var/cache; see nsprivate.h. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "ns/nsprivate.h"

/*
 * Where a run's writes stay its own. Of /run only new entries at its top
 * are: a socket cannot be reached through an overlay (connect() gives
 * ECONNREFUSED: its inode is the overlay's), so the machine's directories
 * and sockets there (dbus, systemd-resolved's, our control sockets) are
 * bound back over it, and writes into them are the machine's. ibacm's
 * /run/ibacm*.sock and pid files (/var/run is /run) are new entries.
 */
static const struct {
	const char *dir;
	bool keep_dirs;	/* bind the machine's directories and sockets back */
} private_dirs[] = {
	{ "/run", true },
	{ "/var/log", false },
	{ "/var/cache", false },
};

#define PATH_MAX_HERE	512
#define SUBMOUNTS_MAX	128

struct overlay {
	char target[PATH_MAX_HERE];
	char upper[PATH_MAX_HERE], work[PATH_MAX_HERE];
	char opts[3 * PATH_MAX_HERE];
};

/* A mount below an overlaid directory, or a directory or socket of the
 * machine's that is bound back over it. */
struct submount {
	char path[PATH_MAX_HERE];	/* where it is */
	char stash[PATH_MAX_HERE];	/* where it waits while the overlay goes on */
	unsigned overlay;		/* which overlay it is below */
};

struct ns_private {
	char scratch[PATH_MAX_HERE];
	struct overlay ov[G_N_ELEMENTS(private_dirs)];
	unsigned n_ov;
	struct submount sub[SUBMOUNTS_MAX];
	unsigned n_sub;
};

/* mountinfo's escapes (\040 for a space and the like), undone in place. */
static void unescape(char *s)
{
	char *o = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = 0;
}

/* Every mount point strictly below @dir, from /proc/self/mountinfo: they
 * are hidden by the overlay unless moved onto it. */
static GPtrArray *mounts_below(const char *dir)
{
	GPtrArray *below = g_ptr_array_new_with_free_func(g_free);
	char *text = NULL, **lines;
	size_t n = strlen(dir);
	unsigned i;

	if (!g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL))
		return below;
	lines = g_strsplit(text, "\n", -1);
	for (i = 0; lines[i]; i++) {
		char **f = g_strsplit(lines[i], " ", 6);

		if (g_strv_length(f) >= 5) {
			unescape(f[4]);
			if (!strncmp(f[4], dir, n) && f[4][n] == '/')
				g_ptr_array_add(below, g_strdup(f[4]));
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	g_free(text);
	return below;
}

/* @dir's entries that are directories or sockets, as paths. */
static void dirs_and_sockets(const char *dir, GPtrArray *into)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, name, NULL);
		struct stat st;

		if (lstat(path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode)))
			g_ptr_array_add(into, path);
		else
			g_free(path);
	}
	if (d)
		g_dir_close(d);
}

/* @path is below another of @all (it moves with that one). */
static bool nested(const char *path, GPtrArray *all)
{
	unsigned i;

	for (i = 0; i < all->len; i++) {
		const char *o = g_ptr_array_index(all, i);
		size_t n = strlen(o);

		if (strcmp(o, path) && !strncmp(path, o, n) && path[n] == '/')
			return true;
	}
	return false;
}

static void name_layers(struct ns_private *p, const char *scratch);

struct ns_private *ns_private_plan(const char *scratch)
{
	struct ns_private *p = g_new0(struct ns_private, 1);
	unsigned i, k;

	for (i = 0; i < G_N_ELEMENTS(private_dirs); i++) {
		const char *dir = private_dirs[i].dir;
		struct overlay *o = &p->ov[p->n_ov];
		GPtrArray *below;

		if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
			continue;
		g_snprintf(o->target, sizeof(o->target), "%s", dir);
		below = mounts_below(dir);
		if (private_dirs[i].keep_dirs)
			dirs_and_sockets(dir, below);
		for (k = 0; k < below->len && p->n_sub < SUBMOUNTS_MAX; k++) {
			const char *m = g_ptr_array_index(below, k);
			struct submount *s = &p->sub[p->n_sub];

			if (nested(m, below) || strlen(m) >= sizeof(s->path))
				continue;
			g_snprintf(s->path, sizeof(s->path), "%s", m);
			s->overlay = p->n_ov;
			p->n_sub++;
		}
		g_ptr_array_free(below, TRUE);
		p->n_ov++;
	}
	name_layers(p, scratch);
	return p;
}

/* The scratch's paths, now that it is known. */
static void name_layers(struct ns_private *p, const char *scratch)
{
	unsigned i;

	g_snprintf(p->scratch, sizeof(p->scratch), "%s", scratch);
	for (i = 0; i < p->n_ov; i++) {
		struct overlay *o = &p->ov[i];

		g_snprintf(o->upper, sizeof(o->upper), "%s/u%u", scratch, i);
		g_snprintf(o->work, sizeof(o->work), "%s/w%u", scratch, i);
		g_snprintf(o->opts, sizeof(o->opts), "lowerdir=%s,upperdir=%s,workdir=%s", o->target,
			   o->upper, o->work);
	}
	for (i = 0; i < p->n_sub; i++)
		g_snprintf(p->sub[i].stash, sizeof(p->sub[i].stash), "%s/s%u", scratch, i);
}

static void say(const char *dir, int err)
{
	const char *a = "ibemu: warning: ", *b = " stays the machine's in this run: ";
	const char *why = strerror(err);

	/* overlayfs "failed to clone lowerpath": a directory with mounts
	 * below it (/run's), which a user namespace holds locked. Say what
	 * that means and what to do, not "Invalid argument". */
	if (err == EINVAL)
		why = "the kernel lays no overlay on a directory with mounts below it in a user "
		      "namespace: writes there (ibacm's socket, pid files) fail with EACCES; "
		      "run ibemu as root (sudo) for a private one";

	if (write(STDERR_FILENO, a, strlen(a)) < 0 || write(STDERR_FILENO, dir, strlen(dir)) < 0 ||
	    write(STDERR_FILENO, b, strlen(b)) < 0 || write(STDERR_FILENO, why, strlen(why)) < 0 ||
	    write(STDERR_FILENO, "\n", 1) < 0)
		return;
}

void ns_private_apply(const struct ns_private *p)
{
	unsigned i, k;

	if (!p || !p->n_ov)
		return;
	if (mount("tmpfs", p->scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) {
		say(p->ov[0].target, errno);
		return;
	}
	for (i = 0; i < p->n_ov; i++) {
		const struct overlay *o = &p->ov[i];
		bool stashed = true;
		int e = 0;

		for (k = 0; k < p->n_sub; k++)
			if (p->sub[k].overlay == i &&
			    (mkdir(p->sub[k].stash, 0700) < 0 ||
			     mount(p->sub[k].path, p->sub[k].stash, NULL, MS_BIND | MS_REC, NULL) < 0))
				stashed = false;
		if (!stashed || mkdir(o->upper, 0755) < 0 || mkdir(o->work, 0700) < 0 ||
		    mount("overlay", o->target, "overlay", 0, o->opts) < 0)
			e = errno ? errno : EINVAL;
		/* Back where they were: on the overlay, or (it failed) on the
		 * directory itself, where their copies are mounted still. */
		for (k = 0; k < p->n_sub; k++) {
			if (p->sub[k].overlay != i)
				continue;
			if (!e)
				mount(p->sub[k].stash, p->sub[k].path, NULL, MS_MOVE, NULL);
			umount2(p->sub[k].stash, MNT_DETACH);
		}
		if (e)
			say(o->target, e);
	}
}
