/* SPDX-License-Identifier: MIT */
/*
 * CUSE mode's commands:
 *
 *   ibemu start [run's fabric options] [--foreground] [--mode MODE] [--group GROUP]
 *   ibemu start --remote WHERE --attach NODE... [--name NAME] [--foreground] ...
 *   ibemu stop [--name NAME]
 *
 * `start` registers /dev/infiniband/umadN and issmN with CUSE, places the
 * mock sysfs over /sys/class, and (unless --foreground) returns once all of
 * that is in place, leaving a daemon that serves them until `stop`,
 * SIGTERM, SIGINT or SIGHUP. Every exit path removes the mounts; the
 * devices go with the CUSE connections; a start after a crash first
 * removes what the crashed daemon left mounted.
 *
 * With --remote this host is a host of another emulator's fabric, as in
 * `run --remote` (socket/remote.h, docs/many-hosts.md): the devices and the
 * sysfs are the mirror of the attached nodes', every call forwarded; the
 * daemon's control socket hands each connection to that emulator, so
 * `ibemu ctl` here steers the fabric there; it ends when that emulator
 * goes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cli/cli.h"
#include "cli/emulator.h"
#include "ctl/ctl_client.h"
#include "dev/cusedev.h"
#include "dev/fusefs.h"
#include "dev/sysfs.h"
#include "lib/log.h"
#include "ns/hostmode.h"
#include "socket/remote.h"

#define DEVICES_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS 10000

static gboolean on_stop_signal(gpointer data)
{
	g_message("stopping on a signal");
	g_main_loop_quit(data);
	return G_SOURCE_CONTINUE;
}

/*
 * Fork; the parent waits until the child says the devices are ready (one
 * byte on @ready) and exits 0, or exits with the child's status when it
 * ends before that. The child returns the pipe's write end.
 */
static int daemonize(void)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "ibemu: cannot start the daemon: %s\n", g_strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		return p[1];
	}
	close(p[1]);
	if (read(p[0], &c, 1) == 1)
		exit(0);
	for (;;) {
		int status;

		if (waitpid(pid, &status, 0) == pid)
			exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		if (errno != EINTR)
			exit(1);
	}
}

/* The daemon's standard streams leave the terminal once it is ready. */
static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

static int parse_group(const char *text, gid_t *gid)
{
	struct group *g;
	char *end;

	*gid = (gid_t)strtoul(text, &end, 10);
	if (*text && !*end)
		return 0;
	if (!(g = getgrnam(text)))
		return -1;
	*gid = g->gr_gid;
	return 0;
}

/* A daemon of this name that still listens is running: say so. */
static bool already_running(const char *name)
{
	char *path = emu_ctl_path(name, NULL);
	/* A dead socket (or a bad name, said later) is not an error here. */
	pid_t pid = path ? ctl_listener_pid(path, NULL, NULL) : -1;

	g_free(path);
	if (pid > 0)
		fprintf(stderr, "ibemu start: %s is running already (pid %d); ibemu stop%s%s first\n",
			name, (int)pid, strcmp(name, "ibemu") ? " --name " : "",
			strcmp(name, "ibemu") ? name : "");
	return pid > 0;
}

/* What `start` takes beyond run's fabric options. */
struct start_opts {
	struct emu_opts emu;
	gboolean foreground;
	gchar *mode_str, *group_str, *log_default;
	gchar *remote;	/* --remote WHERE, or NULL */
	int mode;	/* -1: ib_umad's 0600 */
	gid_t gid;	/* -1: root's */
};

static void start_opts_clear(struct start_opts *so)
{
	if (so->emu.log_path == so->log_default)
		so->emu.log_path = NULL;
	g_free(so->log_default);
	emu_opts_clear(&so->emu);
	g_free(so->mode_str);
	g_free(so->group_str);
	g_free(so->remote);
}

/* Parse and check the options: 0, or the exit status to end with. */
static int start_parse(int argc, char **argv, struct start_opts *so)
{
	GOptionEntry *entries = emu_option_entries(&so->emu);
	GOptionEntry more[] = {
		{ "foreground", 'f', 0, G_OPTION_ARG_NONE, &so->foreground,
		  "Stay in the foreground, logging to standard error", NULL },
		{ "mode", 'm', 0, G_OPTION_ARG_STRING, &so->mode_str,
		  "Mode of the device nodes, in octal (default: 0600, as ib_umad's)", "MODE" },
		{ "group", 'g', 0, G_OPTION_ARG_STRING, &so->group_str,
		  "Group of the device nodes (default: root)", "GROUP" },
		{ "remote", 0, 0, G_OPTION_ARG_STRING, &so->remote,
		  "Be a host of another emulator's fabric: its name here, unix:PATH of its fast socket, or ssh://[USER@]HOST[:PORT]/NAME; --attach names this host's HCAs", "WHERE" },
		{ NULL }
	};
	GOptionContext *ctx = g_option_context_new("- serve CUSE umad devices to the whole host");
	GError *err = NULL;
	int ret = 2;

	so->mode = -1;
	so->gid = (gid_t)-1;
	g_set_prgname("ibemu start");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_main_entries(ctx, more, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc > 1) {
		fprintf(stderr, "ibemu start: %s\n", err ? err->message : "unexpected arguments");
		goto out;
	}
	if (so->remote && !emu_remote_opts_ok(&so->emu)) {
		fprintf(stderr, "ibemu start: --remote takes only --attach, --name, --log, -v and the "
			"device options (the fabric is the other emulator's)\n");
		goto out;
	}
	if (so->mode_str) {
		char *end;

		so->mode = (int)strtol(so->mode_str, &end, 8);
		if (!*so->mode_str || *end || so->mode < 0 || so->mode > 07777) {
			fprintf(stderr, "ibemu start: --mode wants an octal mode such as 0660\n");
			goto out;
		}
	}
	if (so->group_str && parse_group(so->group_str, &so->gid) < 0) {
		fprintf(stderr, "ibemu start: --group %s: no such group\n", so->group_str);
		goto out;
	}
	if (!so->emu.log_path && !so->foreground) {
		char *dir = emu_ctl_dir();

		so->emu.log_path = so->log_default =
			g_strdup_printf("%s/%s.log", dir, so->emu.name ? so->emu.name : "ibemu");
		g_free(dir);
	}
	ret = 0;
out:
	if (err)
		g_error_free(err);
	g_option_context_free(ctx);
	g_free(entries);
	return ret;
}

/* Can this host take our devices now? Says why not. */
static bool start_allowed(const struct start_opts *so)
{
	GError *err = NULL;
	unsigned stale;

	/* Inside `ibemu run` the mounts we would clear are that run's. */
	if (getenv("IBEMU_CTL")) {
		fprintf(stderr, "ibemu start: this is inside an emulator's namespace (IBEMU_CTL is set); "
			"start CUSE mode from the host\n");
		return false;
	}
	if (already_running(so->emu.name ? so->emu.name : "ibemu"))
		return false;
	if ((stale = host_unmount()))
		fprintf(stderr, "ibemu: removed %u mount(s) an ibemu that is gone left over /sys/class\n", stale);
	if (host_preflight(&err) < 0) {
		fprintf(stderr, "ibemu start: %s\n", err->message);
		g_error_free(err);
		return false;
	}
	return true;
}

/* What the daemon serves, torn down in reverse by devices_free(). */
struct devices {
	struct vfs *vfs;	/* ours, or NULL: the remote's mirror */
	struct fusefs *fs;
	struct cusedevs *cd;
	char *names;	/* "umad0,issm0,..." */
};

/* The emulator's own sysfs and device files, in d->vfs. */
static struct vfs *devices_build(struct devices *d, struct emu *e)
{
	d->vfs = vfs_new();
	sysfs_build_host(d->vfs, e->host, e->uverbs, e->ucma, false);	/* the host's network */
	return d->vfs;
}

/* The CUSE devices of @vfs's dev/ (@host's files, or NULL: a remote's)
 * and its sysfs over /sys/class; errors are printed. */
static int devices_serve(struct devices *d, struct vfs *vfs, struct umad_host *host,
			 const struct start_opts *so)
{
	struct vnode *devdir = vfs_child(vfs->root, "dev");
	GError *err = NULL;

	d->fs = fusefs_new(vfs);
	d->cd = cusedevs_new();
	if ((devdir && cusedevs_add_dir(d->cd, devdir, &err) < 0) ||
	    cusedevs_wait(d->cd, DEVICES_TIMEOUT_MS, so->mode, so->gid, &err) < 0 ||
	    host_mount(d->fs, &err) < 0) {
		fprintf(stderr, "ibemu start: %s\n", err->message);
		g_error_free(err);
		return -1;
	}
	d->names = cusedevs_names(d->cd);
	return 0;
}

static void devices_free(struct devices *d)
{
	/* Mounts first: they point into our FUSE connection. */
	if (d->fs)
		host_unmount();
	cusedevs_free(d->cd);
	fusefs_free(d->fs);
	vfs_free(d->vfs);
	g_free(d->names);
}

/* The daemon's main loop and the emulator it is a host of, if any. */
struct start_state {
	GMainLoop *loop;
	struct remote *rem;
	int ret;
};

/* The emulator this host is attached to has gone: its blocked readers
 * get EIO, then we end (the devices with us), failed, as a service whose
 * fabric went away (systemd may restart it). */
static gboolean on_remote_gone(gint fd, GIOCondition cond, gpointer data)
{
	struct start_state *st = data;
	char *why = remote_gone_why(fd, cond);

	g_warning("the emulator this host is attached to has gone (%s); stopping", why);
	g_free(why);
	remote_gone(st->rem);
	st->ret = 1;
	g_main_loop_quit(st->loop);
	return G_SOURCE_REMOVE;
}

/* --remote: attach, and listen where our control socket would be. */
static struct vfs *attach_remote(struct start_state *st, const struct start_opts *so)
{
	char *ctl = emu_ctl_path(so->emu.name ? so->emu.name : "ibemu", NULL);
	GError *err = NULL;

	if (!(st->rem = remote_attach(so->remote, so->emu.attach, &err)) ||
	    remote_listen(st->rem, ctl, &err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		g_free(ctl);
		return NULL;
	}
	g_free(ctl);
	g_unix_fd_add(remote_lifeline(st->rem), G_IO_HUP | G_IO_ERR | G_IO_NVAL, on_remote_gone, st);
	return remote_vfs(st->rem);
}

int cmd_start(int argc, char **argv)
{
	struct start_opts so = { 0 };
	struct start_state st = { 0 };
	struct devices d = { 0 };
	struct emu e = { 0 };
	struct vfs *vfs;
	int ready = -1, ret;
	sigset_t stops;

	/*
	 * Hold the stop signals until their handlers are in place, from the
	 * first thing on: a SIGINT during set-up must stop us once we can
	 * clean up, not be lost. A background job of a script has SIGINT
	 * ignored until GLib's handler replaces that, and Linux discards an
	 * ignored signal unless it is blocked (sig_ignored()); blocked, it
	 * stays pending.
	 */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	if ((ret = start_parse(argc, argv, &so)) != 0)
		goto out;
	ret = 1;
	if (!start_allowed(&so))
		goto out;
	if (!so.foreground)
		ready = daemonize();
	st.loop = g_main_loop_new(NULL, FALSE);
	if (so.remote) {
		if ((ret = emu_setup_log(&so.emu)) != 0)
			goto out;
		ret = 1;
		if (!(vfs = attach_remote(&st, &so)))
			goto out;
	} else {
		/* The whole machine's devices, on its network: the ports'
		 * addresses are loopback ones, never routed off it. */
		so.emu.host_network = TRUE;
		if ((ret = emu_setup(&e, &so.emu, "ibemu")) != 0)
			goto out;
		e.env.mode = "cuse";
		vfs = devices_build(&d, &e);
	}
	ret = 1;
	if (devices_serve(&d, vfs, e.host, &so) < 0 || st.ret)	/* gone meanwhile: said */
		goto out;
	g_message("serving /dev/infiniband/{%s} and /sys/class/infiniband{,_mad} (pid %d)%s%s",
		  d.names, getpid(), so.remote ? ", a host of " : "", so.remote ? so.remote : "");
	emu_start_scenario(&e);
	g_unix_signal_add(SIGTERM, on_stop_signal, st.loop);
	g_unix_signal_add(SIGINT, on_stop_signal, st.loop);
	g_unix_signal_add(SIGHUP, on_stop_signal, st.loop);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (ready >= 0) {
		printf("ibemu: started (pid %d): /dev/infiniband/{%s}; log %s; stop with ibemu stop\n",
		       getpid(), d.names, so.emu.log_path);
		fflush(stdout);
		detach_stdio();
		if (write(ready, "", 1) != 1)
			g_warning("cannot tell the starting command we are ready");
		close(ready);
	}
	g_main_loop_run(st.loop);
	ret = st.ret;
out:
	devices_free(&d);
	remote_free(st.rem);	/* after the devices that forward to it */
	emu_teardown(&e);
	if (st.loop)
		g_main_loop_unref(st.loop);
	start_opts_clear(&so);
	return ret;
}

int cmd_stop(int argc, char **argv)
{
	const char *name = NULL;
	GError *err = NULL;
	char *path;
	int64_t deadline;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--name"))
		name = argv[2];
	else if (argc != 1) {
		printf("Usage: ibemu stop [--name NAME]\n"
		       "Stop the emulator `ibemu start` left running (the only one, or NAME).\n");
		return argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? 0 : 2;
	}
	if (!(path = emu_find_ctl(NULL, name))) {
		if (host_unmount())	/* a crashed daemon's, maybe */
			fprintf(stderr, "ibemu stop: removed the mounts it left\n");
		return 1;
	}
	/* The daemon made its socket: the listener's pid is its, also when
	 * it is a host of another emulator (whose `ctl pid` that would be). */
	pid = ctl_listener_pid(path, NULL, &err);
	g_free(path);
	if (pid < 0) {
		fprintf(stderr, "ibemu stop: %s%s\n", err->message,
			host_unmount() ? "; removed the mounts it left" : "");
		g_clear_error(&err);
		return 1;
	}
	if (kill(pid, SIGTERM) < 0) {
		fprintf(stderr, "ibemu stop: cannot signal %d: %s\n", pid, g_strerror(errno));
		return 1;
	}
	/* Teardown, not synchronisation: wait for it to be gone, bounded. */
	deadline = g_get_monotonic_time() + STOP_TIMEOUT_MS * 1000;
	while (kill(pid, 0) == 0 && g_get_monotonic_time() < deadline)
		g_usleep(10000);
	if (kill(pid, 0) == 0) {
		fprintf(stderr, "ibemu stop: %d did not end within %d s; killing it\n", pid,
			STOP_TIMEOUT_MS / 1000);
		kill(pid, SIGKILL);
		host_unmount();
		return 1;
	}
	printf("ibemu: stopped %d\n", pid);
	return 0;
}
