/* SPDX-License-Identifier: MIT */
/*
 * ibemu: the command line.
 *
 *   ibemu run [--topology FILE] [--attach NODE]... [--configured] [--seed N]
 *             [--name NAME] [--scenario FILE] [-v] [--] [COMMAND...]
 *   ibemu ctl [--name NAME | --socket PATH] COMMAND...
 *   ibemu exec [--name NAME] [--] COMMAND... | ibemu shell [--name NAME]
 *   ibemu topo check FILE | topo gen fattree RADIX
 *
 * `run` is namespace mode: the fabric, the umad devices and the mock sysfs
 * exist for COMMAND and its children, and ibemu exits with its status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "cuse/commands.h"
#include "cuse/emu.h"
#include "cuse/fusefs.h"
#include "emulator/ctl.h"
#include "emulator/scenario.h"
#include "cuse/nsinit.h"
#include "cuse/nsmode.h"
#include "cuse/sysfs.h"
#include "emulator/umad.h"
#include "fabric/configure.h"
#include "lib/log.h"
#include "lib/timerq.h"
#include "topologies/topo.h"

static int usage(FILE *out)
{
	fprintf(out,
		"Usage: ibemu COMMAND [OPTION...]\n"
		"\n"
		"An InfiniBand fabric and umad device emulator.\n"
		"\n"
		"Commands:\n"
		"  run [OPTION...] [--] [CMD [ARG...]]  run CMD (default: $SHELL) with\n"
		"                                      emulated /dev/infiniband and sysfs\n"
		"  start [OPTION...]                   CUSE mode: /dev/infiniband/umadN for the\n"
		"                                      whole host, until ibemu stop (root)\n"
		"  stop [--name N]                     stop what ibemu start started\n"
		"  ctl [--name N] COMMAND...           steer a running emulator (ibemu ctl help)\n"
		"  list                                the running emulators\n"
		"  exec [--name N] [--] CMD...         run CMD in a running emulator's namespace\n"
		"  shell [--name N]                    a shell in a running emulator's namespace\n"
		"  topo check FILE                     validate a topology file\n"
		"  topo gen fattree RADIX [HOSTS]      print a two-level fat tree (and more)\n"
		"  topo dot FILE                       the fabric as a Graphviz graph\n"
		"  --version                           print the version\n"
		"\n"
		"Run `ibemu run --help` for the options of run.\n");
	return out == stderr ? 2 : 0;
}

static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	}
	return false;
}

static bool parse_uints(char **argv, unsigned n, unsigned *v)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		char *end;

		v[i] = (unsigned)strtoul(argv[i], &end, 10);
		if (!*argv[i] || *end)
			return false;
	}
	return true;
}

/* ibemu topo gen KIND ARGS...: write a generated topology to stdout. */
static int topo_gen(int argc, char **argv)
{
	unsigned v[4] = { 0, 0, 1, 1 }, f[3] = { 0, 0, 0 };	/* f: 0 HOSTS = the default */
	int r = -1;

	if (!strcmp(argv[0], "fattree") && (argc == 2 || argc == 3) &&
	    parse_uints(argv + 1, (unsigned)argc - 1, f) && (argc == 2 || f[1]))
		r = topo_gen_fattree2(stdout, f[0], f[1]);
	else if (!strcmp(argv[0], "fattree3") && (argc == 3 || argc == 4) &&
		 parse_uints(argv + 1, (unsigned)argc - 1, f) && (argc == 3 || f[2]))
		r = topo_gen_fattree3(stdout, f[0], f[1], f[2]);
	else if ((!strcmp(argv[0], "torus") || !strcmp(argv[0], "mesh")) &&
		 (argc == 3 || argc == 4) && parse_uints(argv + 1, (unsigned)argc - 1, v))
		r = topo_gen_grid(stdout, argv[0][0] == 't', v, 1);
	else if (!strcmp(argv[0], "dragonfly") && argc == 4 && parse_uints(argv + 1, 3, v))
		r = topo_gen_dragonfly(stdout, v[0], v[1], v[2]);
	if (r < 0) {
		fprintf(stderr, "Usage: ibemu topo gen fattree RADIX [HOSTS]    (two levels; RADIX even)\n"
			"       ibemu topo gen fattree3 RADIX PODS [HOSTS]  (three levels; PODS x (RADIX-HOSTS)\n"
			"                                               x RADIX/2 a multiple of RADIX)\n"
			"         HOSTS: HCAs a leaf switch, RADIX/2 by default; more oversubscribes\n"
			"       ibemu topo gen torus|mesh X Y [Z]        (one HCA a switch)\n"
			"       ibemu topo gen dragonfly ROUTERS HOSTS GLOBAL\n");
		return 2;
	}
	return 0;
}

static int cmd_topo(int argc, char **argv)
{
	struct fabric_counts c;
	struct fabric *f;

	if (wants_help(argc, argv)) {
		printf("Usage: ibemu topo check FILE           validate; print node, link, port counts\n"
		       "       ibemu topo dot FILE             the fabric as a Graphviz graph\n"
		       "       ibemu topo gen fattree RADIX [HOSTS]  a two-level fat tree of RADIX-port\n"
		       "                      switches, HOSTS HCAs a leaf (RADIX/2; more oversubscribes)\n"
		       "       ibemu topo gen fattree3 RADIX PODS [HOSTS] | torus X Y [Z] | mesh X Y [Z] |\n"
		       "                      dragonfly ROUTERS HOSTS GLOBAL\n"
		       "FILE is in the ibnetdiscover or ibsim net format (man 5 ibemu-topology).\n");
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "gen"))
		return topo_gen(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "dot")) {
		GString *out = g_string_new(NULL);

		if (!(f = emu_load_fabric(argv[2])))
			return 1;
		topo_dot(f, out, false);
		fputs(out->str, stdout);
		g_string_free(out, TRUE);
		fabric_free(f);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "check")) {
		fprintf(stderr, "Usage: ibemu topo check FILE\n"
			"       ibemu topo dot FILE            (Graphviz; render with dot -Tpng)\n"
			"       ibemu topo gen fattree RADIX   (two-level fat tree)\n");
		return 2;
	}
	f = emu_load_fabric(argv[2]);
	if (!f)
		return 1;
	fabric_count(f, &c);
	printf("%s: %u nodes (%u switches, %u CAs, %u routers), %u links, %u ports\n",
	       argv[2], c.nodes, c.switches, c.cas, c.routers, c.links, c.ports);
	fabric_free(f);
	return 0;
}

/* ibemu list: the emulators of this user that answer. */
static int cmd_list(int argc, char **argv)
{
	char *info_argv[] = { (char *)"info", NULL };
	GPtrArray *live;
	unsigned i;

	if (argc > 1) {
		printf("Usage: ibemu list\n"
		       "The running emulators of this user: name, pid, mode, topology, attached nodes.\n");
		return wants_help(argc, argv) ? 0 : 2;
	}
	live = emu_list();
	printf("%-20s %-8s %-10s %-30s %s\n", "NAME", "PID", "MODE", "TOPOLOGY", "ATTACHED");
	for (i = 0; i < live->len; i++) {
		char *ans = ctl_ask(g_ptr_array_index(live, i), 1, info_argv, NULL);
		char **f = ans ? g_strsplit(g_strchomp(ans), "\t", 5) : NULL;

		if (f && g_strv_length(f) == 5)
			printf("%-20s %-8s %-10s %-30s %s\n", f[0], f[1], f[2], f[3], f[4]);
		g_strfreev(f);
		g_free(ans);
	}
	g_ptr_array_free(live, TRUE);
	return 0;
}

static int cmd_ctl(int argc, char **argv)
{
	const char *socket_path = NULL, *name = NULL;
	unsigned timeout_s = CTL_TIMEOUT_S;
	char *path, *end;
	int i = 1, ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: ibemu ctl [--name NAME | --socket PATH] [--timeout S] COMMAND [ARG...] [--json]\n"
		       "Steer a running emulator; `ibemu ctl help` lists its commands.\n"
		       "Inside ibemu run/exec/shell no --name is needed ($IBEMU_CTL).\n"
		       "An answer that does not come within S seconds (default %u) is an error.\n",
		       CTL_TIMEOUT_S);
		return 0;
	}
	while (i + 1 < argc && (!strcmp(argv[i], "--name") || !strcmp(argv[i], "--socket") ||
				!strcmp(argv[i], "--timeout"))) {
		if (!strcmp(argv[i], "--name")) {
			name = argv[i + 1];
		} else if (!strcmp(argv[i], "--socket")) {
			socket_path = argv[i + 1];
		} else {
			unsigned long t = strtoul(argv[i + 1], &end, 10);

			if (*end || !*argv[i + 1] || t < 1 || t > 86400) {
				fprintf(stderr, "ibemu ctl: --timeout takes seconds, 1 to 86400\n");
				return 2;
			}
			timeout_s = (unsigned)t;
		}
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "Usage: ibemu ctl [--name NAME | --socket PATH] [--timeout S] COMMAND... (ibemu ctl help)\n");
		return 2;
	}
	path = emu_find_ctl(socket_path, name);
	if (!path)
		return 1;
	ret = ctl_client(path, argc - i, argv + i, timeout_s);
	g_free(path);
	return ret;
}

/*
 * Join the namespaces of process @pid that are not ours: its user namespace
 * (namespace mode without root), its mount namespace, and its PID namespace
 * (for our children: the run's init ends them with the run, nsinit.h).
 */
static int join_namespaces(int pid)
{
	static const struct { const char *name; int type; } ns[] = {
		{ "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS }, { "pid", CLONE_NEWPID },
	};
	int fds[G_N_ELEMENTS(ns)];
	struct stat mine, theirs;
	unsigned i;
	int ret = 0;

	/* All opened first: the run's mount namespace has its own /proc. */
	for (i = 0; i < G_N_ELEMENTS(ns); i++) {
		char path[64], self[64];

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns[i].name);
		snprintf(self, sizeof(self), "/proc/self/ns/%s", ns[i].name);
		fds[i] = -1;
		if (stat(path, &theirs) == 0 && stat(self, &mine) == 0 &&
		    theirs.st_ino == mine.st_ino)
			continue;	/* the same namespace */
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "ibemu: cannot open the emulator's %s namespace: %s\n",
				ns[i].name, g_strerror(errno));
			ret = -1;
		}
	}
	for (i = 0; i < G_N_ELEMENTS(ns); i++) {
		if (!ret && fds[i] >= 0 && setns(fds[i], ns[i].type) < 0) {
			fprintf(stderr, "ibemu: cannot join the emulator's %s namespace: %s\n",
				ns[i].name, g_strerror(errno));
			ret = -1;
		}
		if (fds[i] >= 0)
			close(fds[i]);
	}
	return ret;
}

/* ibemu exec [--name N] [--] CMD...; ibemu shell [--name N] */
static int cmd_exec(int argc, char **argv, bool shell)
{
	const char *name = NULL;
	char *path, *pid_text, *cwd = g_get_current_dir();
	char *pid_argv[] = { (char *)"pid", (char *)"init", NULL };
	char *sh[] = { getenv("SHELL") ? getenv("SHELL") : (char *)"/bin/sh", NULL };
	GError *err = NULL;
	char **cmd;
	int i = 1, status;
	pid_t child;

	if (wants_help(argc, argv)) {
		printf("Usage: ibemu exec [--name NAME] [--] COMMAND [ARG...]\n"
		       "       ibemu shell [--name NAME]\n"
		       "Run a command (or $SHELL) in a running emulator's namespaces, with its\n"
		       "devices, sysfs and fabric; ibemu ctl works there without --name.\n");
		return 0;
	}
	if (i + 1 < argc && !strcmp(argv[i], "--name")) {
		name = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	cmd = shell ? sh : argv + i;
	if (!cmd[0]) {
		fprintf(stderr, "Usage: ibemu exec [--name NAME] [--] COMMAND...\n");
		return 2;
	}
	path = emu_find_ctl(NULL, name);
	if (!path)
		return 1;
	/* The run's init; `ibemu start` has none (and no namespaces). */
	pid_text = ctl_ask(path, 2, pid_argv, NULL);
	if (!pid_text)
		pid_text = ctl_ask(path, 1, pid_argv, &err);
	if (!pid_text) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	if (join_namespaces(atoi(pid_text)) < 0)
		return 1;
	g_setenv("IBEMU_CTL", path, TRUE);
	if (chdir(cwd) < 0)
		(void)chdir("/");
	/* Only a child enters the PID namespace: run CMD there, wait. */
	child = fork();
	if (child == 0) {
		execvp(cmd[0], cmd);
		fprintf(stderr, "ibemu: cannot run %s: %s\n", cmd[0], g_strerror(errno));
		_exit(127);
	}
	if (child < 0) {
		fprintf(stderr, "ibemu: cannot start %s in the run: %s\n", cmd[0], g_strerror(errno));
		return 1;
	}
	/* The terminal's signals reach CMD itself; the run's end ends it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

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

static gboolean forward_signal(gpointer data)
{
	struct run_state *rs = data;

	/* The init passes it on to the command; we end when it does. */
	kill(rs->child, SIGTERM);
	return G_SOURCE_CONTINUE;
}

static int cmd_run(int argc, char **argv)
{
	struct emu_opts o = { 0 };
	gchar **cmd = NULL, **envp = NULL;
	GOptionEntry *entries = emu_option_entries(&o);
	GOptionEntry rest[] = {
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
	if ((ret = emu_setup(&e, &o, default_name)) != 0)
		goto out;
	ret = 1;
	e.env.mode = "namespace";
	envp = g_environ_setenv(g_get_environ(), "IBEMU_CTL", e.ctl_sock, TRUE);

	/* Namespaces first: a user namespace needs a single thread. */
	if (ns_enter(&err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		goto out;
	}
	vfs = vfs_new();
	sysfs_build(vfs, vfs_dir(vfs, vfs->root, "infiniband"),
		    vfs_dir(vfs, vfs->root, "infiniband_mad"),
		    vfs_dir(vfs, vfs->root, "dev"), e.host);
	fs = fusefs_new(vfs, e.host);
	if (ns_mount(fs, true, &err) < 0) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		goto out;
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
	fusefs_free(fs);
	vfs_free(vfs);
	emu_teardown(&e);
	if (rs.loop)
		g_main_loop_unref(rs.loop);
	g_option_context_free(ctx);
	g_free(entries);
	g_free(default_name);
	emu_opts_clear(&o);
	g_strfreev(envp);
	g_strfreev(cmd);
	return ret;
}

int main(int argc, char **argv)
{
	log_init(0);
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--version")) {
		printf("ibemu %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "start"))
		return cmd_start(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stop"))
		return cmd_stop(argc - 1, argv + 1);
	if (!strcmp(argv[1], "topo"))
		return cmd_topo(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ctl"))
		return cmd_ctl(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "exec") || !strcmp(argv[1], "shell"))
		return cmd_exec(argc - 1, argv + 1, !strcmp(argv[1], "shell"));
	fprintf(stderr, "ibemu: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}
