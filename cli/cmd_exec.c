/* SPDX-License-Identifier: MIT */
/*
 * Joining a running emulator:
 *
 *   ibemu exec [--name NAME] [--host HOST] [--no-fast-path] [--] COMMAND...
 *   ibemu shell [--name NAME] [--host HOST] [--no-fast-path]
 *
 * The command runs in the run's user, mount and PID namespaces (ns/nsinit.h),
 * so it sees the same devices and sysfs and ends with the run; on the fast
 * path, as the run's own programs (cli/fastenv.h). In a run of hosts
 * (--hosts, ns/vhosts.h), on one of them: its mount, UTS and network
 * namespaces (ns/hostns.h); the first without --host. cli/cmd_ssh.c
 * joins the same way.
 */
#include "config.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

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
#include "cli/emulator.h"
#include "cli/exec_join.h"
#include "cli/fastenv.h"
#include "ctl/ctl.h"
#include "ctl/ctl_client.h"
#include "ns/netlink_trap.h"
#include "ns/vhosts.h"


/*
 * Join the namespaces of process @pid that are not ours: its user namespace
 * (namespace mode without root), its mount namespace, its PID namespace
 * (for our children: the run's init ends them with the run, nsinit.h), its
 * network namespace (`run --ipoib`, ipoib.h) and a host's hostname and
 * System V IPC (`run --hosts`, hostns.h).
 */
static int join_namespaces(int pid)
{
	static const struct { const char *name; int type; } ns[] = {
		{ "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS }, { "pid", CLONE_NEWPID },
		{ "net", CLONE_NEWNET }, { "uts", CLONE_NEWUTS }, { "ipc", CLONE_NEWIPC },
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

/* Ask @path, again while the run's init makes its namespaces (a run just
 * started: at most 10 s). */
static char *ask_ready(const char *path, int argc, char **argv, GError **err)
{
	char *text;
	int tries;

	for (tries = 0; !(text = ctl_ask(path, argc, argv, err)) && tries < 200; tries++) {
		if (!strstr((*err)->message, CTL_INIT_STARTING))
			break;
		g_clear_error(err);
		g_usleep(50 * 1000);
	}
	return text;
}

/*
 * Where to join: a host of the run (@host, or the first when the run has
 * hosts and @host is NULL), or the run's init. *@pid as this process
 * sees it; *@on_host whether it is a host's. 0, or -1 having said why.
 */
static int find_target(const char *path, const struct exec_join *j, bool inside, int *pid,
		       bool *on_host)
{
	const char *host = j->host;
	char *hosts_argv[] = { (char *)"hosts", (char *)host, NULL };
	char *pid_argv[] = { (char *)"pid", (char *)"init", NULL };
	GError *err = NULL;
	char *text, **f;

	*on_host = false;
	text = ask_ready(path, host ? 2 : 1, hosts_argv, &err);
	if (!text && !host && strstr(err->message, CTL_NO_HOSTS)) {
		g_clear_error(&err);
		/* Only `ibemu start` has no init: its own pid then. Any
		 * other failure is said, never taken for that (the
		 * emulator's own namespaces are not the run's: a slow run
		 * once gave the host's interfaces to `ibemu exec ... ip
		 * addr`). */
		text = ask_ready(path, 2, pid_argv, &err);
		if (!text && strstr(err->message, CTL_NO_COMMAND)) {
			g_clear_error(&err);
			text = ctl_ask(path, 1, pid_argv, &err);
		}
		if (text) {
			*pid = atoi(text);
			g_free(text);
			return 0;
		}
	}
	if (!text) {
		if (j->as_ssh && host)
			fprintf(stderr, "ssh: Could not resolve hostname %s: %s\n", host,
				strstr(err->message, CTL_NO_SUCH_HOST) ? CTL_NO_SUCH_HOST :
				err->message);
		else
			fprintf(stderr, "ibemu: %s\n", err->message);
		g_error_free(err);
		return -1;
	}
	/* name, pid, pid in the run, fast socket, nodes (ctl_hosts) */
	f = g_strsplit(text, "\t", 5);
	g_free(text);
	if (g_strv_length(f) < 5) {
		fprintf(stderr, "ibemu: the emulator's answer to `hosts` is not understood\n");
		g_strfreev(f);
		return -1;
	}
	/* From inside the run the pids of its PID namespace are ours. */
	*pid = atoi(inside ? f[2] : f[1]);
	*on_host = true;
	g_strfreev(f);
	return 0;
}

/*
 * In a build with the sanitizers: LeakSanitizer's check at exit stops our
 * threads from a task it clones, which after setns() to the run's PID
 * namespace would be born there, where our pids do not exist, and it
 * spins for ever. So check now, in our own namespaces; the check at exit
 * is then skipped (sanitizer/lsan_interface.h).
 */
static void leak_check_now(void)
{
#ifdef __SANITIZE_ADDRESS__
	__lsan_do_leak_check();
#endif
}

int exec_join(const struct exec_join *j)
{
	char *path, *fast, **envp;
	int pid = 0, status, null;
	bool inside, on_host;
	pid_t child;

	if (!(path = emu_find_ctl(NULL, j->name)))
		return j->fail_status;
	/* From inside that run (its $IBEMU_CTL) we are in its user and PID
	 * namespaces already, and its init's pid is not ours to see. */
	inside = !g_strcmp0(g_getenv("IBEMU_CTL"), path);
	if (find_target(path, j, inside, &pid, &on_host) < 0) {
		g_free(path);
		return j->fail_status;
	}
	leak_check_now();
	cli_export_self();	/* before /proc/self/exe is the run's view */
	fastenv_library();
	if ((!inside || on_host) && join_namespaces(pid) < 0) {
		g_free(path);
		return j->fail_status;
	}
	envp = j->envp ? g_strdupv(j->envp) : g_get_environ();
	envp = g_environ_setenv(envp, "IBEMU_CTL", path, TRUE);
	/* A host's: the run's ssh first on PATH, and its socket where every
	 * host's programs look for theirs (vhosts.h). */
	if (on_host)
		envp = vhosts_path(envp);
	fast = on_host ? g_strdup(VHOSTS_FAST) : emu_fast_path(path);
	if (g_file_test(fast, G_FILE_TEST_EXISTS))	/* `ibemu run`'s; not CUSE mode's */
		envp = fastenv_apply(envp, fast, !j->no_fast);
	g_free(fast);
	cli_path_of(envp);
	if (!j->cwd || chdir(j->cwd) < 0)
		(void)chdir("/");
	/* Only a child enters the PID namespace: run CMD there, wait. */
	child = fork();
	if (child == 0) {
		if (j->null_stdin && (null = open("/dev/null", O_RDONLY)) >= 0)
			dup2(null, STDIN_FILENO);
		if (netlink_trap_install() < 0)
			fprintf(stderr, "ibemu: warning: no netlink trap: a kernel with ib_core may hide the emulated verbs devices\n");
		execvpe(j->cmd[0], j->cmd, envp);
		fprintf(stderr, "ibemu: cannot run %s: %s\n", j->cmd[0], g_strerror(errno));
		_exit(127);
	}
	g_strfreev(envp);
	g_free(path);
	if (child < 0) {
		fprintf(stderr, "ibemu: cannot start %s in the run: %s\n", j->cmd[0],
			g_strerror(errno));
		return j->fail_status;
	}
	/* The terminal's signals reach CMD itself; the run's end ends it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ibemu exec [--name N] [--host H] [--] CMD...; ibemu shell [--name N] [--host H] */
static int exec_in(int argc, char **argv, bool shell)
{
	struct exec_join j = { .fail_status = 1 };
	char *sh[] = { getenv("SHELL") ? getenv("SHELL") : (char *)"/bin/sh", NULL };
	char *cwd = g_get_current_dir();
	int i = 1, ret;

	if (cli_wants_help(argc, argv)) {
		printf("Usage: ibemu exec [--name NAME] [--host HOST] [--no-fast-path] [--] COMMAND [ARG...]\n"
		       "       ibemu shell [--name NAME] [--host HOST] [--no-fast-path]\n"
		       "Run a command (or $SHELL) in a running emulator's namespaces, with its\n"
		       "devices, sysfs and fabric; ibemu ctl works there without --name.\n"
		       "--host HOST: on that host of a run of hosts (ibemu run --hosts); the first\n"
		       "one without it.\n"
		       "--no-fast-path (or IBEMU_FAST_PATH=0): programs use the FUSE files only.\n");
		g_free(cwd);
		return 0;
	}
	for (;;) {
		if (i + 1 < argc && !strcmp(argv[i], "--name")) {
			j.name = argv[i + 1];
			i += 2;
		} else if (i + 1 < argc && !strcmp(argv[i], "--host")) {
			j.host = argv[i + 1];
			i += 2;
		} else if (i < argc && !strcmp(argv[i], "--no-fast-path")) {
			j.no_fast = true;
			i++;
		} else {
			break;
		}
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	j.cmd = shell ? sh : argv + i;
	if (!j.cmd[0]) {
		fprintf(stderr, "Usage: ibemu exec [--name NAME] [--host HOST] [--] COMMAND...\n");
		g_free(cwd);
		return 2;
	}
	j.cwd = cwd;
	ret = exec_join(&j);
	g_free(cwd);
	return ret;
}

int cmd_exec(int argc, char **argv)
{
	return exec_in(argc, argv, false);
}

int cmd_shell(int argc, char **argv)
{
	return exec_in(argc, argv, true);
}
