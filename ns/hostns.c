/* SPDX-License-Identifier: MIT */
/*
 * The hosts' keepers (hostns.h). Between fork and exec of a process whose
 * parent may have had threads: system calls and stack buffers only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns/hostns.h"
#include "ns/ipoib.h"

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void fail(const char *host, const char *what, int e)
{
	say("ibemu: --hosts: ");
	if (host) {
		say(host);
		say(": ");
	}
	say("cannot ");
	say(what);
	say(": ");
	say(strerror(e));
	say("\n");
}

/* Close every fd from 3 up but @a and @b. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0U, 0);
}

/* The host's devices and sysfs in place of the run's: binds in its own
 * mount namespace, then no host's tree reachable from it. */
static int host_mounts(const struct hostns_plan *p, const struct hostns_host *h,
		       const char **what)
{
	unsigned i;

	*what = "bind its devices and sysfs";
	for (i = 0; i < h->nbind; i++)
		if (mount(h->bind[i][0], h->bind[i][1], NULL, MS_BIND, NULL) < 0)
			return -errno;
	/* libibverbs and librdmacm open these only as character devices
	 * (nsmode.c): the host's /dev/full, as in the run's own view. */
	*what = "bind /dev/full over its uverbs and rdma_cm files";
	for (i = 0; i < h->ncdevs; i++)
		if (mount("/dev/full", h->cdevs[i], NULL, MS_BIND, NULL) < 0)
			return -errno;
	for (i = 0; i < p->n; i++)
		if (p->h[i].tree[0])
			umount2(p->h[i].tree, MNT_DETACH);
	return 0;
}

/* Host @k's keeper: makes its namespaces, says so, and waits to be ended
 * (SIGTERM, from the init at the run's end). Never returns. */
static void keeper(const struct hostns_plan *p, unsigned k, int bridge, int ready)
{
	const struct hostns_host *h = &p->h[k];
	struct hostns_reg reg = { .index = k, .ns_pid = getpid() };
	const char *what = "make its mount, UTS and IPC namespaces";
	sigset_t none;
	int ret = 0, null;

	close_others(p->reg_fd, ready);
	/* Ctrl-C and the terminal's hang-up are the command's to take. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Its own System V IPC too, as another machine's: UCX takes
	 * processes of one boot and IPC namespace for one host, and would
	 * put them on shared memory (uct_iface_local_is_reachable). */
	if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) < 0)
		ret = -errno;
	if (!ret) {
		what = "set its hostname";
		if (sethostname(h->name, strlen(h->name)) < 0)
			ret = -errno;
	}
	if (!ret)
		ret = host_mounts(p, h, &what);
	if (!ret)
		ret = ipoib_apply_host(h->net, bridge, p->scratch, &what);
	if (!ret && send(p->reg_fd, &reg, sizeof(reg), 0) < 0) {
		what = "say it is ready";
		ret = -errno;
	}
	if (ret < 0) {
		fail(h->name, what, -ret);
		_exit(1);
	}
	if (write(ready, "1", 1) < 0)
		_exit(1);
	close(ready);
	close(p->reg_fd);
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	for (;;)
		pause();
}

int hostns_start(struct hostns_plan *p)
{
	const char *what = "";
	int bridge, ret, fds[2];
	unsigned k;
	char c;

	if (p->hosts_file[0] && mount(p->hosts_file, "/etc/hosts", NULL, MS_BIND, NULL) < 0) {
		fail(NULL, "bind the run's /etc/hosts", errno);
		return -1;
	}
	if ((ret = ipoib_fabric(&bridge, &what)) < 0) {
		fail(NULL, what, -ret);
		return -1;
	}
	for (k = 0; k < p->n; k++) {
		if (pipe2(fds, O_CLOEXEC) < 0) {
			fail(NULL, "start a host's keeper", errno);
			return -1;
		}
		p->h[k].pid = fork();
		if (p->h[k].pid == 0) {
			close(fds[0]);
			keeper(p, k, bridge, fds[1]);
		}
		close(fds[1]);
		/* One byte when it is ready; end of file when it died (it
		 * said why). */
		while ((ret = (int)read(fds[0], &c, 1)) < 0 && errno == EINTR)
			;
		close(fds[0]);
		if (p->h[k].pid < 0 || ret != 1) {
			if (p->h[k].pid < 0)
				fail(p->h[k].name, "start its keeper", errno);
			return -1;
		}
	}
	for (k = 0; k < p->n; k++)
		if (p->h[k].tree[0])
			umount2(p->h[k].tree, MNT_DETACH);
	return 0;
}

/* "/proc/<pid>/ns/<name>" into @buf, without stdio. */
static void ns_path(char *buf, pid_t pid, const char *name)
{
	char digits[16];
	int n = 0;

	do {
		digits[n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid);
	memcpy(buf, "/proc/", 6);
	buf += 6;
	while (n)
		*buf++ = digits[--n];
	memcpy(buf, "/ns/", 4);
	memcpy(buf + 4, name, strlen(name) + 1);
}

int hostns_join(pid_t pid)
{
	static const struct { const char *name; int type; } ns[] = {
		{ "mnt", CLONE_NEWNS }, { "uts", CLONE_NEWUTS }, { "ipc", CLONE_NEWIPC },
		{ "net", CLONE_NEWNET },
	};
	int fds[sizeof(ns) / sizeof(ns[0])];
	char path[64], cwd[4096];
	unsigned i;
	int ret = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		ns_path(path, pid, ns[i].name);
		if ((fds[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0 && !ret)
			ret = -errno;
	}
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (!ret && setns(fds[i], ns[i].type) < 0)
			ret = -errno;
		if (fds[i] >= 0)
			close(fds[i]);
	}
	/* A new mount namespace puts us at its root. */
	if (!ret && (!cwd[0] || chdir(cwd) < 0) && chdir("/") < 0)
		ret = -errno;
	return ret;
}
