/* SPDX-License-Identifier: MIT */
/*
 * Namespace mode:
 *
 *   ibemu run [--topology FILE] [--attach NODE]... [--configured] [--seed N]
 *             [--name NAME] [--scenario FILE] [--no-fast-path] [--remote-group G]
 *             [-v] [--] [COMMAND...]
 *   ibemu run --remote WHERE --attach NODE... [-v] [--] [COMMAND...]
 *
 * The fabric, the umad devices and the mock sysfs exist for COMMAND and its
 * children (a private mount namespace, cli/nsmode.h; a PID namespace of its
 * own, cli/nsinit.h), and ibemu exits with COMMAND's status. Dynamically
 * linked programs reach the umad files over the fast path (cli/fastenv.h).
 * With --remote the fabric is another emulator's, and this run is one
 * more host of it (cli/remote.h, docs/many-hosts.md).
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cli/cli.h"
#include "cli/emu.h"
#include "cli/fastenv.h"
#include "cli/nsinit.h"
#include "cli/nsmode.h"
#include "cli/remote.h"
#include "cuse/attach.h"
#include "cuse/fastpath.h"
#include "cuse/fusefs.h"
#include "cuse/sysfs.h"

struct run_state {
	GMainLoop *loop;
	GPid child;
	int status;
};

static void on_child_exit(GPid pid, gint status, gpointer data)
{
	struct run_state *rs = data;

	(void)pid;
	rs->status = status;
	g_main_loop_quit(rs->loop);
}

/* The emulator we are a host of has gone: our programs' calls fail with
 * EIO from now on; end the command, as the run ends with its fabric. */
static gboolean on_remote_gone(gint fd, GIOCondition cond, gpointer data)
{
	struct run_state *rs = data;
	char *why = remote_gone_why(fd, cond);

	fprintf(stderr, "ibemu: the emulator this host is attached to has gone (%s); ending\n", why);
	g_free(why);
	kill(rs->child, SIGTERM);
	return G_SOURCE_REMOVE;
}

static gboolean forward_signal(gpointer data)
{
	struct run_state *rs = data;

	/* The init passes it on to the command; we end when it does. */
	kill(rs->child, SIGTERM);
	return G_SOURCE_CONTINUE;
}

int cmd_run(int argc, char **argv)
{
	struct emu_opts o = { 0 };
	gchar **cmd = NULL, **envp = NULL;
	GOptionEntry *entries = emu_option_entries(&o);
	gboolean no_fast = FALSE;
	gchar *remote_where = NULL, *remote_group = NULL;
	GOptionEntry rest[] = {
		{ "remote", 0, 0, G_OPTION_ARG_STRING, &remote_where,
		  "Be a host of another emulator's fabric: its name here, unix:PATH of its fast socket, or ssh://[USER@]HOST[:PORT]/NAME; --attach names this host's HCAs", "WHERE" },
		{ "remote-group", 0, 0, G_OPTION_ARG_STRING, &remote_group,
		  "Let group G attach hosts through the fast socket (bind-mounted into a container, say): mode 0660, group G", "G" },
		{ "no-fast-path", 0, 0, G_OPTION_ARG_NONE, &no_fast,
		  "Do not preload the fast path's library: every program uses the FUSE files (also IBEMU_FAST_PATH=0)", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &cmd, NULL, "[--] [CMD [ARG...]]" },
		{ NULL }
	};
	GOptionContext *ctx = g_option_context_new("- run a command on an emulated fabric");
	char *default_name = g_strdup_printf("run-%d", getpid());
	char *default_cmd[] = { getenv("SHELL") ? getenv("SHELL") : (char *)"/bin/sh", NULL };
	struct run_state rs = { 0 };
	struct emu e = { 0 };
	struct vfs *vfs = NULL;
	struct fusefs *fs = NULL;
	struct fastpath *fast = NULL;
	struct attach_owner *att = NULL;
	struct remote *rem = NULL;
	char *fast_sock = NULL, *ctl_dir;
	GError *err = NULL;
	int ret = 1;

	g_set_prgname("ibemu run");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_main_entries(ctx, rest, NULL);
	g_option_context_set_strict_posix(ctx, TRUE);
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		fprintf(stderr, "ibemu run: %s\n", err->message);
		ret = 2;
		goto out;
	}
	if (cmd && cmd[0] && !strcmp(cmd[0], "--"))
		memmove(cmd, cmd + 1, g_strv_length(cmd) * sizeof(*cmd));
	cli_export_self();	/* before the environment is copied */
	if (remote_where) {
		/* The fabric, its options and the control socket are the
		 * other emulator's. */
		if (o.topology || o.configured || o.seed_str || o.scenario_file || o.name ||
		    o.capture_path || remote_group) {
			fprintf(stderr, "ibemu run: --remote takes only --attach, -v, --no-fast-path "
				"and a command (the fabric is the other emulator's)\n");
			ret = 2;
			goto out;
		}
		log_init(getenv("IBEMU_DEBUG") ? 2 : o.verbose ? 1 : 0);
		if (!(rem = remote_attach(remote_where, o.attach, &err))) {
			fprintf(stderr, "ibemu: %s\n", err->message);
			goto out;
		}
		envp = g_get_environ();
	} else {
		if ((ret = emu_setup(&e, &o, default_name)) != 0)
			goto out;
		e.env.mode = "namespace";
		envp = g_environ_setenv(g_get_environ(), "IBEMU_CTL", e.ctl_sock, TRUE);
		/* A run inside this one keeps its sockets beside ours: inside a
		 * user namespace the default directory is root's (emu.h). */
		ctl_dir = g_path_get_dirname(e.ctl_sock);
		envp = g_environ_setenv(envp, "IBEMU_CTL_DIR", ctl_dir, TRUE);
		g_free(ctl_dir);
	}
	ret = 1;

	/* The provider's path while /proc/self/exe still reads right
	 * (nsmode.h); then the namespaces: a user namespace needs a single
	 * thread. */
	ns_provider();
	fastenv_library();
	/* The fast path beside the FUSE files (docs/fast-path.md), where
	 * other hosts attach too (docs/many-hosts.md): made before the user
	 * namespace, where a normal user's groups are still theirs to give
	 * it (--remote-group). */
	if (!rem) {
		fast_sock = emu_fast_path(e.ctl_sock);
		if (!(fast = fastpath_new(e.host, fast_sock, &err))) {
			fprintf(stderr, "ibemu: %s\n", err->message);
			goto out;
		}
		if (remote_group && fastpath_open_to_group(fast, remote_group, &err) < 0) {
			fprintf(stderr, "ibemu: --remote-group %s: %s\n", remote_group, err->message);
			goto out;
		}
		fastpath_set_ctl(fast, e.ctl, false);	/* guests get EACCES anyway */
		att = attach_owner_new(&e.env, fast, e.ctl);
	}
	if (ns_enter(&err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		goto out;
	}
	if (rem) {
		fs = fusefs_new(remote_vfs(rem), NULL);
	} else {
		vfs = vfs_new();
		sysfs_build(vfs, vfs_dir(vfs, vfs->root, "infiniband"),
			    vfs_dir(vfs, vfs->root, "infiniband_mad"),
			    vfs_dir(vfs, vfs->root, "dev"), e.host);
		sysfs_build_verbs(vfs, vfs_dir(vfs, vfs->root, "infiniband_verbs"),
				  vfs_child(vfs->root, "dev"), e.uverbs);
		fs = fusefs_new(vfs, e.host);
	}
	if (ns_mount(fs, true, &err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		goto out;
	}
	if (rem) {
		if (remote_listen(rem, REMOTE_FAST_SOCK, &err) < 0) {
			fprintf(stderr, "ibemu: %s\n", err->message);
			goto out;
		}
		envp = fastenv_apply(envp, REMOTE_FAST_SOCK, TRUE);
		/* `ibemu ctl` here steers the owner's fabric (FAST_CTL over
		 * the same socket: cli/ctl_client.c). */
		envp = g_environ_setenv(envp, "IBEMU_CTL", REMOTE_FAST_SOCK, TRUE);
	} else {
		envp = fastenv_apply(envp, fast_sock, !no_fast);
	}

	emu_start_scenario(&e);
	rs.loop = g_main_loop_new(NULL, FALSE);
	rs.child = nsinit_spawn(cmd && cmd[0] ? cmd : default_cmd, envp, &err);
	if (rs.child < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		ret = 127;
		goto out;
	}
	e.env.init_pid = rs.child;
	g_child_watch_add(rs.child, on_child_exit, &rs);
	if (rem)
		g_unix_fd_add(remote_lifeline(rem), G_IO_HUP | G_IO_ERR | G_IO_NVAL, on_remote_gone,
			      &rs);
	g_unix_signal_add(SIGTERM, forward_signal, &rs);
	g_unix_signal_add(SIGHUP, forward_signal, &rs);
	/* Ctrl-C reaches the command through the terminal; we outlive it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	g_main_loop_run(rs.loop);
	if (WIFEXITED(rs.status))
		ret = WEXITSTATUS(rs.status);
	else if (WIFSIGNALED(rs.status))
		ret = 128 + WTERMSIG(rs.status);
out:
	if (err)
		g_error_free(err);
	fastpath_free(fast);	/* before its hosts: their channels end them */
	attach_owner_free(att);
	g_free(fast_sock);
	fusefs_free(fs);
	vfs_free(vfs);
	remote_free(rem);
	if (!remote_where)
		emu_teardown(&e);
	if (rs.loop)
		g_main_loop_unref(rs.loop);
	g_option_context_free(ctx);
	g_free(entries);
	g_free(default_name);
	emu_opts_clear(&o);
	g_strfreev(envp);
	g_strfreev(cmd);
	g_free(remote_where);
	g_free(remote_group);
	return ret;
}
