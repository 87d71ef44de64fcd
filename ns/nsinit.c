/* SPDX-License-Identifier: MIT */
/*
 * The run's init (nsinit.h). Between fork and exec only async-signal-safe
 * calls: the parent may have other threads.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "ns/hostns.h"
#include "ns/ipoib.h"
#include "ns/netlink_trap.h"
#include "ns/nsinit.h"
#include "ns/nsprivate.h"

/* From SIGTERM to the kernel's SIGKILL: for the rest once the command
 * has ended, and for the command itself when the run is told to end. */
#define GRACE_S		2

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void write_str(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		return;
}

/* PID 1 of the namespace. Never returns. */
static void run_init(char **argv, char **envp, int parent_alive, int ready,
		     const sigset_t *orig, const struct ns_private *priv,
		     const struct ipoib_plan *net, struct hostns_plan *hosts)
{
	sigset_t all;
	siginfo_t si;
	pid_t cmd, p;
	int status, code = 0;
	bool ending = false, told = false;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before the line above: its end of the
	 * pipe is closed then, and the read end reads EOF. */
	{
		struct pollfd pfd = { .fd = parent_alive, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0)
			_exit(137);
	}
	/*
	 * A /proc of this namespace, so that ps and /proc/PID agree with
	 * getpid() (umad_block reads /proc/PID/task/TID/syscall), in a mount
	 * namespace of the command's own: the daemon keeps the host's /proc,
	 * where the pids FUSE gives it live (usercall.c). `ibemu exec`
	 * joins this one. Its private /run, /var/log and /var/cache go there
	 * first (nsprivate.h), their layers under the new /proc.
	 */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		write_str(STDERR_FILENO, "ibemu: warning: no mount namespace for the run's /proc: ");
		write_str(STDERR_FILENO, strerror(errno));
		write_str(STDERR_FILENO, " (pids in /proc are the host's; /run, /var/log and /var/cache too)\n");
	} else {
		ns_private_apply(priv);
		/* The run's own network (ipoib.h), before /proc: its sysfs
		 * passes through the same directory. */
		if (net) {
			const char *what = "";
			int ret = ipoib_apply(net, "/proc", &what);

			if (ret < 0) {
				write_str(STDERR_FILENO, "ibemu: the run's network: cannot ");
				write_str(STDERR_FILENO, what);
				write_str(STDERR_FILENO, ": ");
				write_str(STDERR_FILENO, strerror(-ret));
				write_str(STDERR_FILENO, " (--host-network keeps this machine's)\n");
				_exit(1);
			}
		}
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
			write_str(STDERR_FILENO, "ibemu: warning: no /proc of the run's PID namespace: ");
			write_str(STDERR_FILENO, strerror(errno));
			write_str(STDERR_FILENO, " (pids in /proc are the host's)\n");
		}
		/* --hosts: their keepers, each with its namespaces (hostns.h). */
		if (hosts && hostns_start(hosts) < 0)
			_exit(1);
	}
	close(ready);	/* our namespaces are made: `ibemu exec` may join */
	signal(SIGCHLD, SIG_DFL);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	cmd = fork();
	if (cmd == 0) {
		close(parent_alive);
		sigprocmask(SIG_SETMASK, orig, NULL);
		/* Everything the run starts sees the emulated verbs devices,
		 * also on a kernel that has or can load ib_core. */
		if (netlink_trap_install() < 0)
			write_str(STDERR_FILENO, "ibemu: warning: no netlink trap: a kernel with ib_core may hide the emulated verbs devices\n");
		/* --hosts: the command runs on the first host. */
		if (hosts && (errno = -hostns_join(hosts->h[0].pid)) != 0) {
			write_str(STDERR_FILENO, "ibemu: cannot join the first host's namespaces: ");
			write_str(STDERR_FILENO, strerror(errno));
			write_str(STDERR_FILENO, "\n");
			_exit(127);
		}
		execvpe(argv[0], argv, envp);
		write_str(STDERR_FILENO, "ibemu: cannot run ");
		write_str(STDERR_FILENO, argv[0]);
		write_str(STDERR_FILENO, ": ");
		write_str(STDERR_FILENO, strerror(errno));
		write_str(STDERR_FILENO, "\n");
		_exit(127);
	}
	if (cmd < 0)
		_exit(127);
	for (;;) {
		if (sigwaitinfo(&all, &si) < 0)
			continue;
		switch (si.si_signo) {
		case SIGCHLD:
			while ((p = waitpid(-1, &status, WNOHANG)) > 0)
				if (p == cmd) {
					code = exit_code(status);
					ending = true;
					kill(-1, SIGTERM);	/* all but us */
					alarm(GRACE_S);
				}
			if (ending && p < 0 && errno == ECHILD)
				_exit(code);
			break;
		case SIGALRM:
			if (ending)
				_exit(code);	/* the kernel kills the rest */
			if (told)
				_exit(128 + SIGKILL);	/* and the command */
			break;
		case SIGTERM:
		case SIGHUP:
			/* The command decides what a signal means, within the
			 * grace: a command that ignores it must not keep the
			 * run (and `timeout ibemu run`) alive. */
			if (!ending) {
				kill(cmd, si.si_signo);
				if (!told)
					alarm(GRACE_S);
				told = true;
			}
			break;
		default:
			break;	/* SIGINT and the like reach the command from its tty */
		}
	}
}

pid_t nsinit_spawn(char **argv, char **envp, const struct ipoib_plan *net,
		   struct hostns_plan *hosts, int *ready, GError **err)
{
	struct ns_private *priv = ns_private_plan("/proc");
	int alive[2], made[2];
	sigset_t orig;
	pid_t pid;

	if (pipe2(alive, O_CLOEXEC) < 0 || pipe2(made, O_CLOEXEC) < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot start the run's init: %s",
			    g_strerror(errno));
		g_free(priv);
		return -1;
	}
	sigprocmask(SIG_SETMASK, NULL, &orig);
	/*
	 * fork() into a new PID namespace: clone with no stack of its own.
	 * (unshare(CLONE_NEWPID) would move our later threads' namespace too:
	 * pthread_create then fails with EINVAL, and an unprivileged user
	 * cannot setns back.)
	 */
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		close(alive[1]);
		close(made[0]);
		run_init(argv, envp, alive[0], made[1], &orig, priv, net, hosts);
	}
	g_free(priv);
	close(alive[0]);
	close(made[1]);
	*ready = made[0];
	if (pid < 0) {
		g_set_error(err, IBEMU_ERROR, errno, "cannot make the run's PID namespace: %s",
			    g_strerror(errno));
		close(alive[1]);
		close(made[0]);
		*ready = -1;
	}
	/* alive[1] stays open, close-on-exec, until we die. */
	return pid;
}
