/* SPDX-License-Identifier: MIT */
/*
 * Joining a running emulator:
 *
 *   ibemu exec [--name NAME] [--no-fast-path] [--] COMMAND...
 *   ibemu shell [--name NAME] [--no-fast-path]
 *
 * The command runs in the run's user, mount and PID namespaces (cli/nsinit.h),
 * so it sees the same devices and sysfs and ends with the run; on the fast
 * path, as the run's own programs (cli/fastenv.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/emu.h"
#include "cli/fastenv.h"
#include "cli/netlink_trap.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"


/*
 * Join the namespaces of process @pid that are not ours: its user namespace
 * (namespace mode without root), its mount namespace, its PID namespace
 * (for our children: the run's init ends them with the run, nsinit.h), and
 * its network namespace (`run --ipoib`, ipoib.h).
 */
static int join_namespaces(int pid)
{
	static const struct { const char *name; int type; } ns[] = {
		{ "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS }, { "pid", CLONE_NEWPID },
		{ "net", CLONE_NEWNET },	/* the network of --ipoib, when it has one */
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
static int exec_in(int argc, char **argv, bool shell)
{
	const char *name = NULL;
	gboolean no_fast = FALSE;
	char **envp = NULL, *fast;
	char *path, *pid_text, *cwd = g_get_current_dir();
	char *pid_argv[] = { (char *)"pid", (char *)"init", NULL };
	char *sh[] = { getenv("SHELL") ? getenv("SHELL") : (char *)"/bin/sh", NULL };
	GError *err = NULL;
	char **cmd;
	int i = 1, status, tries;
	pid_t child;

	if (cli_wants_help(argc, argv)) {
		printf("Usage: ibemu exec [--name NAME] [--no-fast-path] [--] COMMAND [ARG...]\n"
		       "       ibemu shell [--name NAME] [--no-fast-path]\n"
		       "Run a command (or $SHELL) in a running emulator's namespaces, with its\n"
		       "devices, sysfs and fabric; ibemu ctl works there without --name.\n"
		       "--no-fast-path (or IBEMU_FAST_PATH=0): programs use the FUSE files only.\n");
		return 0;
	}
	for (;;) {
		if (i + 1 < argc && !strcmp(argv[i], "--name")) {
			name = argv[i + 1];
			i += 2;
		} else if (i < argc && !strcmp(argv[i], "--no-fast-path")) {
			no_fast = TRUE;
			i++;
		} else {
			break;
		}
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
	/* The run's init, once it has made its namespaces (a run just
	 * started: asked again for at most 10 s); `ibemu start` has none
	 * (and no namespaces). */
	for (tries = 0; !(pid_text = ctl_ask(path, 2, pid_argv, &err)) && tries < 200; tries++) {
		if (!strstr(err->message, CTL_INIT_STARTING))
			break;
		g_clear_error(&err);
		g_usleep(50 * 1000);
	}
	/* Only `ibemu start` has no init: its own pid then. Any other
	 * failure is said, never taken for that (the emulator's own
	 * namespaces are not the run's: a slow run once gave the host's
	 * interfaces to `ibemu exec ... ip addr`). */
	if (!pid_text && err && strstr(err->message, CTL_NO_COMMAND)) {
		g_clear_error(&err);
		pid_text = ctl_ask(path, 1, pid_argv, &err);
	}
	if (!pid_text) {
		fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	cli_export_self();	/* before /proc/self/exe is the run's view */
	fastenv_library();
	/* From inside that run (its $IBEMU_CTL) we are in its namespaces
	 * already, and its init's pid is not ours to see. */
	if (g_strcmp0(g_getenv("IBEMU_CTL"), path) &&
	    join_namespaces(atoi(pid_text)) < 0)
		return 1;
	g_setenv("IBEMU_CTL", path, TRUE);
	envp = g_get_environ();
	fast = emu_fast_path(path);
	if (g_file_test(fast, G_FILE_TEST_EXISTS))	/* `ibemu run`'s; not CUSE mode's */
		envp = fastenv_apply(envp, fast, !no_fast);
	g_free(fast);
	if (chdir(cwd) < 0)
		(void)chdir("/");
	/* Only a child enters the PID namespace: run CMD there, wait. */
	child = fork();
	if (child == 0) {
		if (netlink_trap_install() < 0)
			fprintf(stderr, "ibemu: warning: no netlink trap: a kernel with ib_core may hide the emulated verbs devices\n");
		execvpe(cmd[0], cmd, envp);
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
	g_strfreev(envp);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cmd_exec(int argc, char **argv)
{
	return exec_in(argc, argv, false);
}

int cmd_shell(int argc, char **argv)
{
	return exec_in(argc, argv, true);
}
