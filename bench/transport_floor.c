/* SPDX-License-Identifier: MIT */
/*
 * transport_floor: what a MAD round trip costs with no emulator behind it.
 * The client does what libibumad's umad_send + umad_recv(fd, .., timeout)
 * do, write(320 bytes), poll(POLLIN), read(320 bytes), against
 *
 *   fuse    a file served through FUSE by a server that answers each
 *           request at once (three FUSE requests per round trip, as for
 *           ibemu's umad files; libfuse's low-level API, one thread
 *           blocked in read(2) on /dev/fuse);
 *   ioctl   the same file, one FUSE request per round trip (an unknown
 *           ioctl, answered ENOTTY): the cost of one bare request;
 *   socket  a SOCK_SEQPACKET socketpair to a server process that echoes
 *           (one datagram each way, what ibsim's transport costs).
 *
 * CLIENTS processes run at once against one server; it prints their summed
 * round trips per second and the first client's median latency, in the
 * same format as smp_ping. Needs root (a private mount namespace).
 *
 * SERVER_THREADS (default 1) threads serve the FUSE file, each answering
 * the requests it reads under one lock (what a multi-threaded ibemu would
 * have to do); with SPIN_US each looks for the next request that long
 * before it sleeps, as ibemu's server does (50 µs).
 *
 *   transport_floor fuse|ioctl|socket SECONDS [CLIENTS [SERVER_THREADS [SPIN_US]]]
 */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "latency.h"

#define MSG 320			/* umad header (64) + one MAD (256) */
#define MAXLAT 4000000

/* ---- the FUSE server: one file "f", one pending message per open ---- */

struct open_file {
	int pending;
	struct fuse_pollhandle *ph;
};

static void f_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { .ino = 2, .attr.st_ino = 2,
				      .attr.st_mode = S_IFREG | 0666, .attr.st_nlink = 1 };

	if (parent != 1 || strcmp(name, "f"))
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_entry(req, &e);
}

static void f_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st = { .st_ino = ino, .st_nlink = 1,
			   .st_mode = ino == 1 ? S_IFDIR | 0755 : S_IFREG | 0666 };

	(void)fi;
	fuse_reply_attr(req, &st, 0);
}

static void f_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->fh = (uintptr_t)calloc(1, sizeof(struct open_file));
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void f_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void f_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	struct open_file *of = (void *)(uintptr_t)fi->fh;

	(void)ino; (void)buf; (void)off;
	of->pending = 1;
	fuse_reply_write(req, size);
	if (of->ph) {
		fuse_lowlevel_notify_poll(of->ph);
		fuse_pollhandle_destroy(of->ph);
		of->ph = NULL;
	}
}

static void f_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	static char msg[MSG];
	struct open_file *of = (void *)(uintptr_t)fi->fh;

	(void)ino; (void)off;
	if (!of->pending) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	of->pending = 0;
	fuse_reply_buf(req, msg, size < MSG ? size : MSG);
}

static void f_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph)
{
	struct open_file *of = (void *)(uintptr_t)fi->fh;

	(void)ino;
	if (of->pending || !ph) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLOUT | (of->pending ? POLLIN : 0));
		return;
	}
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	of->ph = ph;
	fuse_reply_poll(req, POLLOUT);
}

static void f_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		    struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		    size_t in_bufsz, size_t out_bufsz)
{
	(void)ino; (void)cmd; (void)arg; (void)fi; (void)flags;
	(void)in_buf; (void)in_bufsz; (void)out_bufsz;
	fuse_reply_err(req, ENOTTY);
}

static const struct fuse_lowlevel_ops f_ops = {
	.lookup = f_lookup, .getattr = f_getattr, .open = f_open,
	.release = f_release, .read = f_read, .write = f_write,
	.poll = f_poll, .ioctl = f_ioctl,
};

static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;

static int spin_us;	/* SPIN_US: look for the next request this long */

/*
 * Before sleeping in read(2), look for the next request for up to spin_us,
 * as ibemu's server does (dev/fusefs.c): on a VM whose idle vCPUs halt,
 * a sleeping server costs a wake-up per request.
 */
static void spin(int fd)
{
	uint64_t until = now_ns() + (uint64_t)spin_us * 1000;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (spin_us && poll(&p, 1, 0) == 0 && now_ns() < until)
		;
}

/* One server thread: read a request, answer it under the lock (what a
 * multi-threaded ibemu would need: its fabric model has no locks). */
static void *serve(void *se)
{
	struct fuse_buf buf = { 0 };

	while (spin(fuse_session_fd(se)), fuse_session_receive_buf(se, &buf) > 0) {
		pthread_mutex_lock(&big_lock);
		fuse_session_process_buf(se, &buf);
		pthread_mutex_unlock(&big_lock);
	}
	return NULL;
}

/* Mount the file system on @dir and serve it from a child process with
 * @threads threads. */
static pid_t fuse_server(const char *dir, int threads)
{
	char *argv[] = { "transport_floor", NULL }, opts[128], fdpath[32];
	struct fuse_args args = FUSE_ARGS_INIT(1, argv);
	struct fuse_session *se;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	pid_t pid;

	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (fd < 0 || mount("floor", dir, "fuse.floor", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("transport_floor: FUSE mount");
		exit(1);
	}
	if ((pid = fork()) == 0) {
		pthread_t t;

		/* The session takes fd as ibemu's do (dev/serve.c serve_attach). */
		snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
		se = fuse_session_new(&args, &f_ops, sizeof(f_ops), NULL);
		if (!se || fuse_session_mount(se, fdpath) < 0)
			_exit(1);
		while (--threads > 0)
			pthread_create(&t, NULL, serve, se);
		serve(se);
		_exit(0);
	}
	close(fd);
	return pid;
}

/* ---- the socket server: echo every datagram on any of @n sockets ---- */

static pid_t socket_server(int *fds, int n)
{
	pid_t pid = fork();
	struct pollfd *p;
	char msg[MSG];
	int i;

	if (pid)
		return pid;
	p = calloc((size_t)n, sizeof(*p));
	for (i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	while (poll(p, (nfds_t)n, -1) > 0)
		for (i = 0; i < n; i++) {
			ssize_t len;

			if (!p[i].revents)
				continue;
			if ((len = read(p[i].fd, msg, sizeof(msg))) <= 0)
				_exit(0);
			if (write(p[i].fd, msg, (size_t)len) != len)
				_exit(1);
		}
	_exit(0);
}

/* ---- the client ------------------------------------------------------ */

static void client(int fd, const char *mode, double seconds, int report_latency, int out)
{
	uint64_t *lat = malloc(sizeof(*lat) * MAXLAT), start = now_ns(), n = 0;
	uint64_t end = start + (uint64_t)(seconds * 1e9);
	char msg[MSG] = { 0 }, line[160];
	int one = !strcmp(mode, "ioctl");

	while (now_ns() < end && n < MAXLAT) {
		uint64_t t0 = now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (one) {
			if (ioctl(fd, 0x1b7f, 0) != -1 || errno != ENOTTY)
				goto fail;
		} else if (write(fd, msg, MSG) != MSG || poll(&p, 1, 1000) != 1 ||
			   read(fd, msg, MSG) != MSG) {
			goto fail;
		}
		lat[n++] = now_ns() - t0;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	snprintf(line, sizeof(line), "%llu %.6f %.1f %.1f\n", (unsigned long long)n,
		 (now_ns() - start) / 1e9, report_latency ? lat[n / 2] / 1e3 : 0.0,
		 report_latency ? lat[n * 99 / 100] / 1e3 : 0.0);
	if (write(out, line, strlen(line)) < 0)
		_exit(1);
	_exit(0);
fail:
	fprintf(stderr, "transport_floor: round trip %llu failed: %s\n",
		(unsigned long long)n, strerror(errno));
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fuse";
	double seconds = argc > 2 ? atof(argv[2]) : 2, rate = 0, p50 = 0, p99 = 0;
	int clients = argc > 3 ? atoi(argv[3]) : 1, threads = argc > 4 ? atoi(argv[4]) : 1, i, res[2], *fds, status, failed = 0;
	char dir[] = "/tmp/transport-floor.XXXXXX", path[64];
	pid_t server;
	FILE *in;

	spin_us = argc > 5 ? atoi(argv[5]) : 0;
	if (clients < 1 || threads < 1 || spin_us < 0 || (strcmp(mode, "fuse") && strcmp(mode, "ioctl") && strcmp(mode, "socket"))) {
		fprintf(stderr, "usage: transport_floor fuse|ioctl|socket SECONDS [CLIENTS [SERVER_THREADS [SPIN_US]]]\n");
		return 2;
	}
	fds = calloc((size_t)clients * 2, sizeof(*fds));
	if (!strcmp(mode, "socket")) {
		for (i = 0; i < clients; i++)
			if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, &fds[2 * i]) < 0)
				return 1;
		int *ends = calloc((size_t)clients, sizeof(*ends));

		for (i = 0; i < clients; i++)
			ends[i] = fds[2 * i + 1];
		server = socket_server(ends, clients);
	} else {
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    !mkdtemp(dir)) {
			perror("transport_floor: private mount namespace (needs root)");
			return 1;
		}
		server = fuse_server(dir, threads);
		snprintf(path, sizeof(path), "%s/f", dir);
	}
	if (pipe(res) < 0)
		return 1;
	for (i = 0; i < clients; i++) {
		if (fork() == 0) {
			int fd = !strcmp(mode, "socket") ? fds[2 * i]
				 : open(path, O_RDWR | O_NONBLOCK);

			if (fd < 0) {
				perror("transport_floor: open");
				_exit(1);
			}
			client(fd, mode, seconds, i == 0, res[1]);
		}
	}
	close(res[1]);
	in = fdopen(res[0], "r");
	for (i = 0; i < clients; i++) {
		unsigned long long n;
		double secs, a, b;

		if (fscanf(in, "%llu %lf %lf %lf", &n, &secs, &a, &b) != 4)
			break;
		rate += n / secs;
		if (a > 0)
			p50 = a, p99 = b;
	}
	kill(server, SIGTERM);
	for (pid_t pid; (pid = wait(&status)) > 0;)
		if (pid != server)
			failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	if (strcmp(mode, "socket")) {
		umount2(dir, MNT_DETACH);
		rmdir(dir);
	}
	if (i < clients || failed)
		return 1;
	printf("%s, %d client%s: %.0f/s, p50 %.1f us, p99 %.1f us\n", mode, clients,
	       clients > 1 ? "s" : "", rate, p50, p99);
	return 0;
}
