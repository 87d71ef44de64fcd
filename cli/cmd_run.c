/* SPDX-License-Identifier: MIT */
/*
 * Namespace mode:
 *
 *   ibemu run [--topology FILE] [--attach NODE]... [--configured] [--seed N]
 *             [--name NAME] [--scenario FILE] [--no-fast-path] [--remote-group G]
 *             [--ipoib] [--hosts HOSTS] [-v] [--] [COMMAND...]
 *   ibemu run --remote WHERE --attach NODE... [-v] [--] [COMMAND...]
 *
 * The fabric, the umad devices and the mock sysfs exist for COMMAND and its
 * children (a private mount namespace, ns/nsmode.h; a PID namespace of its
 * own, ns/nsinit.h), and ibemu exits with COMMAND's status. Dynamically
 * linked programs reach the umad files over the fast path (cli/fastenv.h).
 * With --remote the fabric is another emulator's, and this run is one
 * more host of it (socket/remote.h, docs/many-hosts.md). With --ipoib the
 * run has a network of its own with an interface per HCA port
 * (ns/ipoib.h). With --hosts it is a virtual cluster: hosts with
 * their own names, HCAs and networks (ns/vhosts.h).
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
#include "cli/emulator.h"
#include "cli/fastenv.h"
#include "dev/fusefs.h"
#include "dev/sysfs.h"
#include "ns/ipoib.h"
#include "ns/netwatch.h"
#include "ns/nsinit.h"
#include "ns/nsmode.h"
#include "ns/vhosts.h"
#include "socket/attach.h"
#include "socket/fastpath.h"
#include "socket/remote.h"

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

/* One run: its options, and what it set up, torn down by run_free(). */
struct run {
	struct emu_opts o;
	gchar **cmd, **envp;
	gboolean no_fast, ipoib;
	gchar *remote_where, *remote_group, *hosts_spec;
	struct vhosts *vh;	/* --hosts */
	struct netwatch *nw;	/* the run's network's addresses (RoCE GIDs) */
	GOptionEntry *entries;
	GOptionContext *ctx;
	char *default_name;
	struct emu e;		/* the owner's (not with --remote) */
	struct remote *rem;	/* --remote's */
	struct vfs *vfs;
	struct fusefs *fs;
	struct fastpath *fast;
	struct attach_owner *att;
	char *fast_sock;
	struct run_state rs;
};

/* The options: 0, or the exit status (2) after saying what is wrong. */
static int run_parse(struct run *r, int argc, char **argv)
{
	GOptionEntry rest[] = {
		{ "remote", 0, 0, G_OPTION_ARG_STRING, &r->remote_where,
		  "Be a host of another emulator's fabric: its name here, unix:PATH of its fast socket, or ssh://[USER@]HOST[:PORT]/NAME; --attach names this host's HCAs", "WHERE" },
		{ "remote-group", 0, 0, G_OPTION_ARG_STRING, &r->remote_group,
		  "Let group G attach hosts through the fast socket (bind-mounted into a container, say): mode 0660, group G", "G" },
		{ "no-fast-path", 0, 0, G_OPTION_ARG_NONE, &r->no_fast,
		  "Do not preload the fast path's library: every program uses the FUSE files (also IBEMU_FAST_PATH=0)", NULL },
		{ "ipoib", 0, 0, G_OPTION_ARG_NONE, &r->ipoib,
		  "A network of the run's own: lo and an interface ib0, ib1, ... per HCA port with the port's address (nothing else reachable); the default, kept for scripts that say it", NULL },
		{ "host-network", 0, 0, G_OPTION_ARG_NONE, &r->o.host_network,
		  "Keep this machine's network inside the run; the ports' addresses are then loopback ones (127.PORT.N/256.N%256), which never leave the machine", NULL },
		{ "hosts", 0, 0, G_OPTION_ARG_STRING, &r->hosts_spec,
		  "A virtual cluster: each [NAME=]NODE[+NODE...] a host with its own hostname, HCAs, sysfs and network; CMD runs on the first, `ibemu exec --host NAME` and `ssh NAME` on any", "HOSTS" },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &r->cmd, NULL, "[--] [CMD [ARG...]]" },
		{ NULL }
	};
	GError *err = NULL;

	r->entries = emu_option_entries(&r->o);
	r->ctx = g_option_context_new("- run a command on an emulated fabric");
	r->default_name = g_strdup_printf("run-%d", getpid());
	g_set_prgname("ibemu run");
	g_option_context_add_main_entries(r->ctx, r->entries, NULL);
	g_option_context_add_main_entries(r->ctx, rest, NULL);
	g_option_context_set_strict_posix(r->ctx, TRUE);
	if (!g_option_context_parse(r->ctx, &argc, &argv, &err)) {
		fprintf(stderr, "ibemu run: %s\n", err->message);
		g_error_free(err);
		return 2;
	}
	if (r->cmd && r->cmd[0] && !strcmp(r->cmd[0], "--"))
		memmove(r->cmd, r->cmd + 1, g_strv_length(r->cmd) * sizeof(*r->cmd));
	/* The fabric, its options and the control socket are the other
	 * emulator's. */
	if (r->remote_where && (!emu_remote_opts_ok(&r->o) || r->o.name || r->remote_group ||
				r->ipoib || r->hosts_spec)) {
		fprintf(stderr, "ibemu run: --remote takes only --attach, -v, --no-fast-path, "
			"--host-network and a command (the fabric is the other emulator's)\n");
		return 2;
	}
	if (r->o.host_network && (r->ipoib || r->hosts_spec)) {
		fprintf(stderr, "ibemu run: --host-network keeps this machine's network: not with %s\n",
			r->ipoib ? "--ipoib (a network of the run's own)" :
				   "--hosts (each host has a network of its own)");
		return 2;
	}
	/* A network of the run's own unless asked: no packet a program sends
	 * to a port's address leaves through the machine's interfaces. */
	if (!r->o.host_network && !r->hosts_spec)
		r->ipoib = TRUE;
	if (r->hosts_spec) {
		if (r->o.attach) {
			fprintf(stderr, "ibemu run: --hosts names every host's CAs: no --attach with it\n");
			return 2;
		}
		if (!(r->vh = vhosts_parse(r->hosts_spec, &err))) {
			fprintf(stderr, "ibemu run: %s\n", err->message);
			g_error_free(err);
			return 2;
		}
		/* The first host is the run's own. */
		r->o.attach = g_strdupv(vhosts_first_nodes(r->vh));
	}
	return 0;
}

/* --remote: attach to the other emulator (socket/remote.h). */
static int run_remote(struct run *r)
{
	GError *err = NULL;

	log_init(getenv("IBEMU_DEBUG") ? 2 : r->o.verbose ? 1 : 0);
	if (!(r->rem = remote_attach(r->remote_where, r->o.attach, &err))) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	r->envp = g_get_environ();
	return 0;
}

/* The owner: the fabric, its control socket and fast socket. */
static int run_owner(struct run *r)
{
	GError *err = NULL;
	char *ctl_dir;
	int ret;

	if ((ret = emu_setup(&r->e, &r->o, r->default_name)) != 0)
		return ret;
	r->e.env.mode = "namespace";
	/* Starting: the control socket answers from here on (the FUSE
	 * mounts serve it on the loop), and `pid init` must say the init is
	 * on its way, not that there is none (`ibemu start`'s 0): `ibemu
	 * exec` then joined the emulator's own namespaces, the machine's
	 * network among them. */
	r->e.env.init_pid = -1;
	r->envp = g_environ_setenv(g_get_environ(), "IBEMU_CTL", r->e.ctl_sock, TRUE);
	/* A run inside this one keeps its sockets beside ours: inside a
	 * user namespace the default directory is root's (ctl/sockname.h). */
	ctl_dir = g_path_get_dirname(r->e.ctl_sock);
	r->envp = g_environ_setenv(r->envp, "IBEMU_CTL_DIR", ctl_dir, TRUE);
	g_free(ctl_dir);
	/* The fast path beside the FUSE files (docs/fast-path.md), where
	 * other hosts attach too (docs/many-hosts.md): made before the user
	 * namespace, where a normal user's groups are still theirs to give
	 * it (--remote-group). */
	r->fast_sock = emu_fast_path(r->e.ctl_sock);
	if (!(r->fast = fastpath_new(r->e.host, r->fast_sock, &err))) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	if (r->remote_group && fastpath_open_to_group(r->fast, r->remote_group, &err) < 0) {
		fprintf(stderr, "ibemu: --remote-group %s: %s\n", r->remote_group, err->message);
		g_error_free(err);
		return 1;
	}
	fastpath_set_ctl(r->fast, r->e.ctl, false);	/* guests get EACCES anyway */
	r->att = attach_owner_new(&r->e.env, r->fast, r->e.ctl);
	return 0;
}

/* The namespaces, the FUSE mount in them, and the command's environment. */
static int run_mount(struct run *r)
{
	GError *err = NULL;

	if (ns_enter(&err) < 0)
		goto fail;
	if (r->rem) {
		r->fs = fusefs_new(remote_vfs(r->rem));
	} else {
		r->vfs = vfs_new();
		/* device/net/: the interfaces ns/ipoib.c makes, the first
		 * host's of --hosts too (the others have their own trees,
		 * socket/attach.c). */
		sysfs_build_host(r->vfs, r->e.host, r->e.uverbs, r->e.ucma, r->ipoib || r->vh);
		r->fs = fusefs_new(r->vfs);
		/* The verbs files by their paths too: the provider's data
		 * path (verbs/fastchan.c). */
		fastpath_set_vfs(r->fast, r->vfs);
	}
	if (ns_mount(r->fs, true, &err) < 0)
		goto fail;
	if (!r->rem) {
		if (r->vh && vhosts_setup(r->vh, r->att, r->e.hw, r->e.ipoib, r->fast_sock,
				      &r->e.env, &err) < 0)
			goto fail;
		if (r->vh)
			r->envp = vhosts_path(r->envp);
		r->envp = fastenv_apply(r->envp, r->vh ? VHOSTS_FAST : r->fast_sock, !r->no_fast);
		return 0;
	}
	if (remote_listen(r->rem, REMOTE_FAST_SOCK, &err) < 0)
		goto fail;
	r->envp = fastenv_apply(r->envp, REMOTE_FAST_SOCK, TRUE);
	/* `ibemu ctl` here steers the owner's fabric (FAST_CTL over the same
	 * socket: ctl/ctl_client.c). */
	r->envp = g_environ_setenv(r->envp, "IBEMU_CTL", REMOTE_FAST_SOCK, TRUE);
	return 0;
fail:
	fprintf(stderr, "ibemu: %s\n", err->message);
	g_error_free(err);
	return 1;
}

/* The init has made its namespaces (or died): `ibemu exec` may join. */
static gboolean on_init_ready(gint fd, GIOCondition cond, gpointer data)
{
	struct run *r = data;

	(void)cond;
	if (r->vh)	/* its keepers said who they are before it said ready */
		vhosts_ready(r->vh);
	r->e.env.init_pid = r->rs.child;
	/* The run's own network (one host): RoCE GIDs follow `ip addr`. */
	if (r->ipoib && !r->vh && !r->rem && !r->nw)
		r->nw = netwatch_new(r->rs.child, r->e.hw);
	close(fd);
	return G_SOURCE_REMOVE;
}

/* The command under its init, until it ends: its exit status. */
static int run_command(struct run *r)
{
	char *default_cmd[] = { getenv("SHELL") ? getenv("SHELL") : (char *)"/bin/sh", NULL };
	struct run_state *rs = &r->rs;
	struct ipoib_plan *net = NULL;
	GError *err = NULL;
	int ready;

	emu_start_scenario(&r->e);
	rs->loop = g_main_loop_new(NULL, FALSE);
	if (r->ipoib && !r->vh)	/* --hosts: each host has its network */
		net = ipoib_plan(r->rem ? NULL : r->e.hw);
	cli_path_of(r->envp);	/* --hosts puts the run's ssh first */
	rs->child = nsinit_spawn(r->cmd && r->cmd[0] ? r->cmd : default_cmd, r->envp,
				 net, r->vh ? vhosts_plan(r->vh) : NULL, &ready, &err);
	ipoib_plan_free(net);
	if (r->vh)
		vhosts_spawned(r->vh);
	if (rs->child < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 127;
	}
	g_unix_fd_add(ready, G_IO_IN | G_IO_HUP | G_IO_ERR, on_init_ready, r);
	g_child_watch_add(rs->child, on_child_exit, rs);
	if (r->rem)
		g_unix_fd_add(remote_lifeline(r->rem), G_IO_HUP | G_IO_ERR | G_IO_NVAL,
			      on_remote_gone, rs);
	g_unix_signal_add(SIGTERM, forward_signal, rs);
	g_unix_signal_add(SIGHUP, forward_signal, rs);
	/* Ctrl-C reaches the command through the terminal; we outlive it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	g_main_loop_run(rs->loop);
	if (WIFEXITED(rs->status))
		return WEXITSTATUS(rs->status);
	return WIFSIGNALED(rs->status) ? 128 + WTERMSIG(rs->status) : 1;
}

static void run_free(struct run *r)
{
	netwatch_free(r->nw);
	fastpath_free(r->fast);	/* before its hosts: their channels end them */
	vhosts_free(r->vh);	/* the run's hosts' trees, before their devices */
	attach_owner_free(r->att);
	g_free(r->fast_sock);
	fusefs_free(r->fs);
	vfs_free(r->vfs);
	remote_free(r->rem);
	if (!r->remote_where)
		emu_teardown(&r->e);
	if (r->rs.loop)
		g_main_loop_unref(r->rs.loop);
	if (r->ctx)
		g_option_context_free(r->ctx);
	g_free(r->entries);
	g_free(r->default_name);
	emu_opts_clear(&r->o);
	g_strfreev(r->envp);
	g_strfreev(r->cmd);
	g_free(r->remote_where);
	g_free(r->remote_group);
	g_free(r->hosts_spec);
}

int cmd_run(int argc, char **argv)
{
	struct run r = { 0 };
	int ret;

	if ((ret = run_parse(&r, argc, argv)) == 0) {
		cli_export_self();	/* before the environment is copied */
		ret = r.remote_where ? run_remote(&r) : run_owner(&r);
	}
	if (ret == 0) {
		/* The provider's path while /proc/self/exe still reads right
		 * (nsmode.h); then the namespaces: a user namespace needs a
		 * single thread. */
		ns_provider();
		fastenv_library();
		ret = run_mount(&r);
	}
	if (ret == 0)
		ret = run_command(&r);
	run_free(&r);
	return ret;
}
