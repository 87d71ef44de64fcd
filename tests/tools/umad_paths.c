/* SPDX-License-Identifier: MIT */
/*
 * umad_paths CASE: a umad client made of plain syscalls (open, write,
 * poll, read, ioctl, dup, fork, exec), for tests/e2e/fast-preload.sh to
 * run with and without the fast path's library (docs/fast-path.md). Each
 * case prints what it saw, one line per check, and exits 1 on anything
 * the kernel would not do. "path" lines say which way a file went: "fast"
 * when the fd is a socket (the library's), "fuse" for the emulator's file.
 *
 *   path          open umad0, one SMP round trip, print the path
 *   fork          a round trip in the parent, in a forked child on the
 *                 inherited fd, and in the parent again
 *   exec          an fd without O_CLOEXEC used by the program exec'd next
 *                 (use-fd FD AGENT), one with O_CLOEXEC gone there
 *   exec-fuse     exec with IBEMU_FAST_PATH=0: the new program opens umad0
 *                 through FUSE while this one's fd is the fast path's
 *   eintr         a blocked read ended by a signal (EINTR) and, with
 *                 SA_RESTART, restarted until the answer comes
 *   dup           dup2, F_DUPFD_CLOEXEC and closing the original
 *   close         a registration freed by close at once (re-registered)
 *   threads       four threads writing and reading one fd
 *   nonblock      O_NONBLOCK: EAGAIN, poll, epoll
 *   poll          poll on the fd, run with IBEMU_FAST_POLL_LOOK_US long
 *                 (the library's poll looks that long before it sleeps):
 *                 signals while it looks end it (EINTR), its timeout
 *                 counts the look, an answer and a pipe beside it are seen
 *   short         reads too short for the packet: EINVAL, packet kept
 *   calls         the calls a kernel answers before or without ib_umad
 *                 (a zero-byte write, an unknown ioctl with a NULL
 *                 argument, lseek, ftruncate, both mmaps): one line each,
 *                 "ok" or the errno's name, whatever the path gives
 *   close-read    a thread blocked in read while another closes the fd:
 *                 the read gets the MAD sent after the close (the kernel's
 *                 read holds the file); needs LIDs (--configured)
 *   behind        fds closed behind the library's back (syscall(SYS_close),
 *                 fclose(fdopen()), a loop closing every fd): the next
 *                 files given those numbers get their own bytes
 *   vfork         a vfork child closes its copy of the fd: the parent's
 *                 still works
 */
#define _GNU_SOURCE	/* strerrorname_np */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_mad.h>

#define HDR	64
#define MAD	256
#define DEV	"/dev/infiniband/umad0"

static const char *self;

static void die(const char *what)
{
	fprintf(stderr, "umad_paths: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int open_umad(int flags)
{
	int fd = open(DEV, O_RDWR | flags);

	if (fd < 0)
		die("open " DEV);
	if (ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL) < 0)
		die("ENABLE_PKEY");
	return fd;
}

/* An agent for directed-route SMPs; its id. */
static uint32_t smp_agent(int fd)
{
	struct ib_user_mad_reg_req reg = { .mgmt_class = 0x81, .mgmt_class_version = 1 };

	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &reg) < 0)
		die("REGISTER_AGENT");
	return reg.id;
}

static const char *path_of(int fd)
{
	char link[64], target[256];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		die("readlink");
	target[n] = 0;
	return strncmp(target, "socket:", 7) ? "fuse" : "fast";
}

/* DR SubnGet(NodeInfo) to the local port. */
static void send_smp(int fd, uint32_t agent, uint64_t tid)
{
	uint8_t req[HDR + MAD] = { 0 };
	struct ib_user_mad_hdr *h = (struct ib_user_mad_hdr *)req;
	uint8_t *mad = req + HDR;
	uint64_t t = htobe64(tid);

	h->id = agent;
	h->timeout_ms = 1000;
	h->lid = htobe16(0xffff);
	mad[0] = 1;
	mad[1] = 0x81;
	mad[2] = 1;
	mad[3] = 0x01;
	mad[17] = 0x11;
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;
	memcpy(mad + 8, &t, 8);
	if (write(fd, req, sizeof(req)) != (ssize_t)sizeof(req))
		die("write");
}

/* The answer to an SMP: its TID's low half, or exit. */
static uint32_t recv_smp(int fd)
{
	uint8_t resp[HDR + MAD];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint32_t low;

	if (poll(&p, 1, 5000) != 1)
		errno = ETIMEDOUT, die("poll");
	if (read(fd, resp, sizeof(resp)) != (ssize_t)sizeof(resp))
		die("read");
	if (resp[HDR + 3] != 0x81 || ((struct ib_user_mad_hdr *)resp)->status) {
		fprintf(stderr, "umad_paths: not a NodeInfo answer\n");
		exit(1);
	}
	memcpy(&low, resp + HDR + 12, 4);
	return be32toh(low);
}

static void round_trip(int fd, uint32_t agent, uint32_t tid)
{
	send_smp(fd, agent, tid);
	if (recv_smp(fd) != tid) {
		fprintf(stderr, "umad_paths: the answer to another request\n");
		exit(1);
	}
}

static int case_path(void)
{
	int fd = open_umad(0);

	round_trip(fd, smp_agent(fd), 1);
	printf("path: %s\n", path_of(fd));
	return 0;
}

static int case_fork(void)
{
	int fd = open_umad(0), status;
	uint32_t agent = smp_agent(fd);
	pid_t child;

	round_trip(fd, agent, 1);
	child = fork();
	if (child == 0) {
		round_trip(fd, agent, 2);
		printf("fork: child round trip on the inherited fd (%s)\n", path_of(fd));
		fflush(stdout);
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || status)
		die("the child");
	round_trip(fd, agent, 3);
	printf("fork: parent round trip after the child (%s)\n", path_of(fd));
	return 0;
}

static int case_exec(void)
{
	int fd = open_umad(0), gone = open_umad(O_CLOEXEC);
	char a[16], b[16], c[16];
	uint32_t agent = smp_agent(fd);

	round_trip(fd, agent, 1);
	snprintf(a, sizeof(a), "%d", fd);
	snprintf(b, sizeof(b), "%u", agent);
	snprintf(c, sizeof(c), "%d", gone);
	execl(self, self, "use-fd", a, b, c, (char *)NULL);
	die("exec");
	return 1;
}

static int case_use_fd(char **argv)
{
	int fd = atoi(argv[0]), gone = atoi(argv[2]);

	round_trip(fd, (uint32_t)atoi(argv[1]), 2);
	printf("exec: round trip on the inherited fd (%s)\n", path_of(fd));
	if (fcntl(gone, F_GETFD) < 0 && errno == EBADF)
		printf("exec: the O_CLOEXEC fd was closed\n");
	return 0;
}

static int case_exec_fuse(void)
{
	int fd = open_umad(O_CLOEXEC);

	round_trip(fd, smp_agent(fd), 1);
	printf("exec-fuse: before exec (%s)\n", path_of(fd));
	fflush(stdout);
	setenv("IBEMU_FAST_PATH", "0", 1);
	execl(self, self, "path", (char *)NULL);
	die("exec");
	return 1;
}

static volatile sig_atomic_t signalled;

static void on_alarm(int sig)
{
	(void)sig;
	signalled = 1;
}

static void alarm_in(long ms, int restart)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = restart ? SA_RESTART : 0 };
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

struct later {
	int fd;
	uint32_t agent;
};

/* Send the SMP once the signal has come and gone. */
static void *send_later(void *arg)
{
	struct later *l = arg;

	while (!signalled)
		usleep(1000);	/* polling a flag, not timing: the order is checked */
	send_smp(l->fd, l->agent, 7);
	return NULL;
}

static int case_eintr(void)
{
	int fd = open_umad(0);
	uint8_t buf[HDR + MAD];
	struct later l = { fd, smp_agent(fd) };
	pthread_t t;
	sigset_t block;
	ssize_t n;

	alarm_in(100, 0);
	n = read(fd, buf, sizeof(buf));
	if (n < 0 && errno == EINTR && signalled)
		printf("eintr: a blocked read ended by a signal: EINTR\n");
	signalled = 0;
	/* The sender thread must not take the signal itself. */
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	pthread_create(&t, NULL, send_later, &l);
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);
	alarm_in(100, 1);
	n = read(fd, buf, sizeof(buf));
	pthread_join(t, NULL);
	if (n == (ssize_t)sizeof(buf) && signalled && buf[HDR + 3] == 0x81)
		printf("eintr: with SA_RESTART the read went on to the answer\n");
	return 0;
}

static int case_dup(void)
{
	int fd = open_umad(0), d, e;
	uint32_t agent = smp_agent(fd);

	if ((d = dup2(fd, 200)) != 200)
		die("dup2");
	close(fd);
	round_trip(d, agent, 1);
	if ((e = fcntl(d, F_DUPFD_CLOEXEC, 210)) < 210)
		die("F_DUPFD_CLOEXEC");
	close(d);
	round_trip(e, agent, 2);
	printf("dup: round trips on dup2's and F_DUPFD_CLOEXEC's fds after closing the others (%s)\n",
	       path_of(e));
	return 0;
}

/* A PerfMgt agent serving Get: one per port, so a second fails (EINVAL). */
static int perf_agent(int fd)
{
	struct ib_user_mad_reg_req reg = { .qpn = 1, .mgmt_class = 0x04, .mgmt_class_version = 1 };

	reg.method_mask[0] = 1u << 1;	/* Get */
	return ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &reg) < 0 ? -errno : 0;
}

static int case_close(void)
{
	int a = open_umad(0), b = open_umad(0), i;

	if (perf_agent(a) < 0)
		die("the first PerfMgt agent");
	if (perf_agent(b) == -EINVAL)
		printf("close: a second agent for the same methods: EINVAL\n");
	close(a);
	if (perf_agent(b) == 0)
		printf("close: registered at once after the first file's close\n");
	/* And many times over: each close has released before it returns. */
	for (i = 0; i < 50; i++) {
		a = open_umad(0);
		close(b);
		if (perf_agent(a) < 0) {
			printf("close: round %d: the closed file's agent was still there\n", i);
			return 1;
		}
		b = a;
	}
	printf("close: 50 more rounds\n");
	return 0;
}

struct worker {
	int fd;
	uint32_t agent, base;
	int got;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 100; i++) {
		send_smp(w->fd, w->agent, w->base + i);
		recv_smp(w->fd);	/* an answer: any thread's */
		w->got++;
	}
	return NULL;
}

static int case_threads(void)
{
	int fd = open_umad(0), i, total = 0;
	uint32_t agent = smp_agent(fd);
	struct worker w[4];
	pthread_t t[4];

	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ fd, agent, 1000 * (i + 1), 0 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		total += w[i].got;
	}
	printf("threads: %d answers for 4 threads' 400 requests\n", total);
	return 0;
}

static int case_nonblock(void)
{
	int fd = open_umad(O_NONBLOCK), ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	uint8_t buf[HDR + MAD];
	uint32_t agent = smp_agent(fd);
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

	if (read(fd, buf, sizeof(buf)) < 0 && errno == EAGAIN)
		printf("nonblock: an empty queue: EAGAIN\n");
	if (poll(&p, 1, 0) == 1 && p.revents == POLLOUT)
		printf("nonblock: poll says writable, not readable\n");
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	send_smp(fd, agent, 5);
	if (epoll_wait(ep, &out, 1, 5000) == 1 && (out.events & EPOLLIN))
		printf("nonblock: epoll saw the answer\n");
	if (recv_smp(fd) == 5)
		printf("nonblock: read it\n");
	return 0;
}

static long ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

static int case_poll(void)
{
	int fd = open_umad(0), pfd[2], i, eintr = 0;
	uint32_t agent = smp_agent(fd);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct pollfd two[2] = { { .fd = fd, .events = POLLIN }, { .events = POLLIN } };
	struct timespec t;
	long ms;

	/* poll is never restarted after a handler, SA_RESTART or not
	 * (signal(7)). Three times: a signal could also land in a look's
	 * own system call, which would end it even if signals were not
	 * kept for the looks. */
	for (i = 0; i < 3; i++) {
		signalled = 0;
		alarm_in(50, i == 2);
		if (poll(&p, 1, 1000) < 0 && errno == EINTR && signalled)
			eintr++;
	}
	if (eintr == 3)
		printf("poll: signals while it waited: EINTR, with SA_RESTART too (%s)\n",
		       path_of(fd));
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (poll(&p, 1, 200) == 0 && (ms = ms_since(&t)) >= 200 && ms < 500)
		printf("poll: nothing queued: 0 once its 200 ms are up\n");
	send_smp(fd, agent, 11);
	if (recv_smp(fd) == 11)
		printf("poll: the answer came\n");
	if (pipe(pfd) < 0 || write(pfd[1], "x", 1) != 1)
		die("pipe");
	two[1].fd = pfd[0];
	if (poll(two, 2, 1000) == 1 && two[1].revents == POLLIN && !two[0].revents)
		printf("poll: a pipe beside it was seen ready\n");
	return 0;
}

static int case_short(void)
{
	int fd = open_umad(0);
	uint8_t buf[HDR + MAD];
	uint32_t agent = smp_agent(fd);

	if (read(fd, buf, 10) < 0 && errno == EINVAL)
		printf("short: a read shorter than any header: EINVAL\n");
	send_smp(fd, agent, 9);
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 5000) != 1)
			die("poll");
	}
	if (read(fd, buf, HDR + 100) < 0 && errno == EINVAL)
		printf("short: a read shorter than the MAD: EINVAL\n");
	if (recv_smp(fd) == 9)
		printf("short: the packet was kept for the next read\n");
	return 0;
}

static void call_result(const char *what, long rc)
{
	if (rc < 0)
		printf("calls: %s %s\n", what, strerrorname_np(errno));
	else
		printf("calls: %s ok %ld\n", what, rc);
}

static int case_calls(void)
{
	int fd = open_umad(0);
	char c = 0;
	void *p;

	/* ib_umad_write: count < hdr_size is EINVAL, 0 included */
	errno = 0;
	call_result("write0", (long)write(fd, &c, 0));
	/* an ioctl umad does not know, its number saying "4 bytes in":
	 * ib_umad_ioctl answers ENOTTY without reading the argument */
	errno = 0;
	call_result("ioctl-null", ioctl(fd, _IOW('x', 1, int), NULL));
	/* umad_fops: .llseek = no_llseek */
	errno = 0;
	call_result("lseek", (long)lseek(fd, 0, SEEK_SET));
	/* do_ftruncate: not a regular file */
	errno = 0;
	call_result("ftruncate", ftruncate(fd, 0));
	/* umad_fops has no .mmap: ENODEV for either kind */
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	call_result("mmap-shared", p == MAP_FAILED ? -1 : 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	call_result("mmap-private", p == MAP_FAILED ? -1 : 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);
	return 0;
}

/* Our port's LID, from the sysfs the emulator serves. */
static uint16_t own_lid(void)
{
	FILE *f = fopen("/sys/class/infiniband/ibemu0/ports/1/lid", "r");
	unsigned lid = 0;

	if (!f || fscanf(f, "%x", &lid) != 1 || !lid)
		die("no LID (run with --configured)");
	fclose(f);
	return (uint16_t)lid;
}

/* A vendor class 0x31 agent (OUI 00:14:05) for @methods; its id. */
static uint32_t vendor_agent(int fd, uint32_t methods)
{
	struct ib_user_mad_reg_req reg = { .qpn = 1, .mgmt_class = 0x31, .mgmt_class_version = 1,
					   .oui = { 0x00, 0x14, 0x05 } };

	reg.method_mask[0] = methods;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &reg) < 0)
		die("REGISTER_AGENT (vendor)");
	return reg.id;
}

struct blocked {
	int fd;
	pid_t tid;
	ssize_t n;
	int err;
	uint8_t buf[HDR + MAD];
};

static void *read_blocked(void *arg)
{
	struct blocked *b = arg;

	__atomic_store_n(&b->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	b->n = read(b->fd, b->buf, sizeof(b->buf));
	b->err = errno;
	return NULL;
}

/* Thread @tid is asleep (in its read), within 5 s. */
static int asleep(pid_t tid)
{
	char path[64], line[256], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");

		p = f && fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		if (f)
			fclose(f);
		if (p && p[1] == ' ' && p[2] == 'S')
			return 1;
		usleep(10000);	/* polling a state, with a deadline */
	}
	return 0;
}

static int case_close_read(void)
{
	struct blocked b = { .fd = open_umad(0) };
	uint8_t req[HDR + MAD] = { 0 };
	struct ib_user_mad_hdr *h = (struct ib_user_mad_hdr *)req;
	pthread_t t;
	int fd2;

	vendor_agent(b.fd, 1u << 1);	/* serves Get */
	pthread_create(&t, NULL, read_blocked, &b);
	while (!__atomic_load_n(&b.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	if (!asleep(b.tid))
		die("the reader never slept");
	if (close(b.fd) < 0)
		die("close");
	fd2 = open_umad(0);
	h->id = vendor_agent(fd2, 0);
	h->qpn = htobe32(1);
	h->qkey = htobe32(0x80010000);
	h->lid = htobe16(own_lid());
	h->timeout_ms = 100;
	req[HDR] = 1;		/* base version */
	req[HDR + 1] = 0x31;	/* vendor class */
	req[HDR + 2] = 1;
	req[HDR + 3] = 0x01;	/* Get */
	req[HDR + 38] = 0x14, req[HDR + 39] = 0x05;	/* OUI 00:14:05, after a reserved byte */
	if (write(fd2, req, sizeof(req)) != (ssize_t)sizeof(req))
		die("write the Get");
	pthread_join(t, NULL);
	if (b.n == (ssize_t)sizeof(b.buf) && b.buf[HDR + 1] == 0x31 && b.buf[HDR + 3] == 0x01)
		printf("close-read: the read blocked before close got the Get sent after it\n");
	else
		printf("close-read: the blocked read returned %zd (%s)\n", b.n,
		       b.n < 0 ? strerror(b.err) : "not the Get");
	close(fd2);
	return 0;
}

/* A new file at the lowest free number: it must be @want. */
static int file_at(const char *dir, int want)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/behind-%d", dir, want);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) != want) {
		fprintf(stderr, "umad_paths: %s opened as %d, not %d\n", path, fd, want);
		exit(1);
	}
	return fd;
}

/* 320 bytes written to @fd (a file now): all reach it? */
static void write_file(int fd, const char *how)
{
	uint8_t bytes[HDR + MAD];
	struct stat st;
	ssize_t n;

	memset(bytes, 'x', sizeof(bytes));
	n = write(fd, bytes, sizeof(bytes));
	if (fstat(fd, &st) < 0)
		die("fstat");
	printf("behind: %s: write %zd, the file holds %lld bytes, it is %s\n", how, n,
	       (long long)st.st_size, S_ISREG(st.st_mode) ? "a regular file" : "not a file");
	close(fd);
}

static int case_behind(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd = open_umad(0), i;
	FILE *f;

	syscall(SYS_close, fd);
	write_file(file_at(dir, fd), "after syscall(SYS_close)");
	fd = open_umad(0);
	if (!(f = fdopen(fd, "r+")))
		die("fdopen");
	fclose(f);
	write_file(file_at(dir, fd), "after fclose(fdopen())");
	/* Every fd, the library's channels too, then files at each number. */
	fd = open_umad(0);
	smp_agent(fd);
	for (i = 3; i < 64; i++)
		syscall(SYS_close, i);
	for (i = 3; i < 8; i++)
		file_at(dir, i);
	for (i = 3; i < 8; i++)
		write_file(i, "after closing every fd");
	fd = open_umad(0);
	round_trip(fd, smp_agent(fd), 9);
	printf("behind: a new open works after that (%s)\n", path_of(fd));
	return 0;
}

static int case_vfork(void)
{
	int fd = open_umad(0), status;
	uint32_t agent = smp_agent(fd);
	pid_t pid;

	round_trip(fd, agent, 1);
	pid = vfork();
	if (pid == 0) {
		close(fd);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		die("vfork");
	round_trip(fd, agent, 2);
	printf("vfork: the parent's fd works after the child closed its copy (%s)\n", path_of(fd));
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "path", case_path }, { "fork", case_fork }, { "exec", case_exec },
	{ "exec-fuse", case_exec_fuse }, { "eintr", case_eintr }, { "dup", case_dup },
	{ "close", case_close }, { "threads", case_threads }, { "nonblock", case_nonblock },
	{ "poll", case_poll },
	{ "short", case_short }, { "calls", case_calls }, { "close-read", case_close_read },
	{ "behind", case_behind }, { "vfork", case_vfork },
};

int main(int argc, char **argv)
{
	unsigned i;

	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 4 && !strcmp(argv[1], "use-fd"))
		return case_use_fd(argv + 2);
	for (i = 0; argc > 1 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			return cases[i].fn();
	fprintf(stderr, "usage: umad_paths path|fork|exec|exec-fuse|eintr|dup|close|threads|nonblock|poll|short|calls|close-read|behind|vfork\n");
	return 2;
}
