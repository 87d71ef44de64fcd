/* SPDX-License-Identifier: MIT */
/*
 * The client's blocked read/write call, from /proc/TID/syscall
 * (usercall.h). The line is "NR 0xARG1 0xARG2 0xARG3 ... 0xSP 0xPC" while
 * the thread sleeps in a system call, "running" while it runs (it may not
 * have gone to sleep yet when its FUSE request reaches us).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include <glib.h>

#include "dev/usercall.h"

#define MAX_IOV		1024	/* UIO_MAXIOV: the kernel refuses more */

static int syscall_line(pid_t tid, char *line, size_t len)
{
	char path[64];
	FILE *f;
	unsigned tries;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	/*
	 * The request can reach us before the caller has gone to sleep (it
	 * was preempted on its way: one CPU, or a loaded machine); give it a
	 * few milliseconds to get there.
	 */
	for (tries = 0; tries < 400; tries++) {
		if (!(f = fopen(path, "r")))
			return -errno;
		if (!fgets(line, (int)len, f))
			line[0] = 0;
		fclose(f);
		if (strncmp(line, "running", 7))
			return 0;
		if (tries)
			g_usleep(25);
		else
			sched_yield();
	}
	return -EBUSY;
}

/* The iovec array of a readv/writev, read out of the caller. */
static int read_iovs(pid_t tid, unsigned long addr, unsigned long n, struct user_call *c)
{
	struct iovec local, remote = { (void *)addr, n * sizeof(struct iovec) };
	unsigned i;

	if (!n || n > MAX_IOV)
		return -EINVAL;
	c->iov = g_new(struct iovec, n);
	local.iov_base = c->iov;
	local.iov_len = remote.iov_len;
	errno = EFAULT;	/* a short copy sets none */
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)remote.iov_len)
		return -errno;
	c->niov = (unsigned)n;
	for (i = 0; i < n; i++)
		c->count += c->iov[i].iov_len;
	return 0;
}

int user_call_get(pid_t tid, bool write, struct user_call *c)
{
	char line[256];
	unsigned long nr, fd, a2, a3;
	int ret;

	memset(c, 0, sizeof(*c));
	if ((ret = syscall_line(tid, line, sizeof(line))) < 0)
		return ret;
	if (sscanf(line, "%lu 0x%lx 0x%lx 0x%lx", &nr, &fd, &a2, &a3) != 4)
		return -EBUSY;
	if (nr == (write ? SYS_write : SYS_read)) {
		c->iov = g_new(struct iovec, 1);
		c->iov[0].iov_base = (void *)a2;
		c->iov[0].iov_len = a3;
		c->niov = 1;
		c->count = a3;
		return 0;
	}
	if (nr == (write ? SYS_writev : SYS_readv)) {
		ret = read_iovs(tid, a2, a3, c);
		if (ret < 0)
			user_call_clear(c);
		return ret;
	}
	return -EBUSY;	/* another call (io_uring, aio, preadv2...) */
}

void user_call_clear(struct user_call *c)
{
	g_free(c->iov);
	memset(c, 0, sizeof(*c));
}

/* The first @len bytes of the caller's buffers as an iovec list. */
static unsigned trim(const struct user_call *c, size_t len, struct iovec *out)
{
	unsigned i, n = 0;

	for (i = 0; i < c->niov && len; i++) {
		if (!c->iov[i].iov_len)
			continue;
		out[n] = c->iov[i];
		out[n].iov_len = MIN(out[n].iov_len, len);
		len -= out[n].iov_len;
		n++;
	}
	return n;
}

static int copy(pid_t tid, const struct user_call *c, void *local_buf, size_t len,
		bool to_user)
{
	struct iovec local = { local_buf, len }, *remote;
	unsigned n;
	ssize_t done;

	if (len > c->count)
		return -EFAULT;
	remote = g_new(struct iovec, c->niov ? c->niov : 1);
	n = trim(c, len, remote);
	done = to_user ? process_vm_writev(tid, &local, 1, remote, n, 0) :
			 process_vm_readv(tid, &local, 1, remote, n, 0);
	g_free(remote);
	if (done < 0)
		return -errno;
	return done == (ssize_t)len ? 0 : -EFAULT;
}

int user_call_read(pid_t tid, const struct user_call *c, void *dst, size_t len)
{
	return copy(tid, c, dst, len, false);
}

int user_call_write(pid_t tid, const struct user_call *c, const void *src, size_t len)
{
	return copy(tid, c, (void *)src, len, true);
}
