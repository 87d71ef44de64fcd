/* SPDX-License-Identifier: MIT */
/*
 * umad_block: the FUSE pitfalls of docs/fuse-cuse.md, shown on a real fd.
 *
 *   umad_block stream  A thread blocks in read() (O_NONBLOCK cleared); the
 *                      main thread then write()s on the same fd. Without
 *                      FOPEN_STREAM the write waits for the read (f_pos_lock).
 *                      Prints write_ms=N and the status of what the read got.
 *   umad_block kill    A child blocks in read(); it is SIGKILLed and must be
 *                      reaped at once (FUSE_INTERRUPT handled). Prints reaped.
 *
 * Waits are on conditions (/proc/.../syscall shows the read) with deadlines.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

static int fd, agent;
static volatile pid_t reader_tid;	/* written by the reader thread */
static uint8_t rbuf[64 + 256];
static ssize_t rlen;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is task @tid blocked in read(2)? /proc/TID/syscall starts with "0 ",
 * or, on the fast path (docs/fast-path.md), with recvfrom's number: its
 * read waits in a recv on the data socket. */
static int in_read(pid_t pid, pid_t tid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "0 ", 2) || atoi(buf) == SYS_recvfrom;
}

static int wait_in_read(pid_t pid, pid_t tid)
{
	double end = now_ms() + 5000;
	struct timespec ts = { 0, 1000000 };

	while (!in_read(pid, tid))
		if (now_ms() > end || nanosleep(&ts, NULL) < 0)
			return -1;
	return 0;
}

static void open_blocking(void)
{
	fd = umad_open_port(NULL, 0);
	agent = fd < 0 ? -1 : umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL);
	if (fd < 0 || agent < 0) {
		fprintf(stderr, "cannot open/register\n");
		exit(1);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

static void *reader(void *arg)
{
	(void)arg;
	__atomic_store_n(&reader_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	rlen = read(fd, rbuf, sizeof(rbuf));
	return NULL;
}

/* A DR NodeInfo to a switch port with no cable (path 0,1,3): no answer. */
static void send_dead_end(int timeout_ms)
{
	uint8_t buf[64 + 256] = { 0 };
	uint8_t *mad = buf + umad_size();

	mad[0] = 1;
	mad[1] = IB_SMI_DIRECT_CLASS;
	mad[2] = 1;
	mad[3] = IB_MAD_METHOD_GET;
	mad[7] = 2;
	mad[15] = 7;
	mad[17] = IB_ATTR_NODE_INFO;
	memset(mad + 32, 0xff, 4);
	mad[129] = 1;
	mad[130] = 3;
	umad_set_addr(buf, 0xffff, 0, 0, 0);
	if (umad_send(fd, agent, buf, 256, timeout_ms, 0) < 0)
		perror("umad_send");
}

static int stream(void)
{
	pthread_t t;
	double t0;

	open_blocking();
	pthread_create(&t, NULL, reader, NULL);
	while (!__atomic_load_n(&reader_tid, __ATOMIC_SEQ_CST))
		sched_yield();
	if (wait_in_read(getpid(), reader_tid) < 0) {
		fprintf(stderr, "reader never blocked in read\n");
		return 1;
	}
	t0 = now_ms();
	send_dead_end(300);
	printf("write_ms=%.0f\n", now_ms() - t0);
	pthread_join(t, NULL);
	printf("read_len=%zd status=%u\n", rlen, ((struct ib_user_mad *)rbuf)->status);
	return 0;
}

static int kill_blocked(void)
{
	pid_t child = fork();
	int status;
	double t0;

	if (child == 0) {
		open_blocking();
		read(fd, rbuf, sizeof(rbuf));
		_exit(0);
	}
	if (wait_in_read(child, child) < 0) {
		fprintf(stderr, "child never blocked in read\n");
		kill(child, SIGKILL);
		return 1;
	}
	t0 = now_ms();
	kill(child, SIGKILL);
	alarm(5);	/* a child stuck in D state would hang waitpid */
	waitpid(child, &status, 0);
	printf("reaped killed=%d ms=%.0f\n", WIFSIGNALED(status), now_ms() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "stream"))
		return stream();
	if (argc == 2 && !strcmp(argv[1], "kill"))
		return kill_blocked();
	fprintf(stderr, "usage: %s stream|kill\n", argv[0]);
	return 2;
}
