/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm in namespace mode (docs/rdmacm.md "Namespace mode",
 * abi/ucma_wire.h). librdmacm has no provider interface: it opens
 * /dev/infiniband/rdma_cm, checks that it is a character device and
 * writes its commands there, and the kernel answers by writing into the
 * caller's memory. Namespace mode has no character device of ours, so
 * when this provider is loaded into a process that has librdmacm
 * (librdmacm loads the providers in ucma_init, before it opens the
 * device) it puts itself in front of librdmacm's own calls to open,
 * fstat, write and close: their entries in librdmacm's GOT, nobody
 * else's. The fd librdmacm gets is the daemon's command file, so poll
 * and epoll on it work natively; a command becomes one UCMA_IOC_CMD and
 * its answer is written where the kernel would write it.
 *
 * Nothing is done when the daemon serves no such file (CUSE mode, where
 * the device is real) or librdmacm is not in the process.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/param.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "abi/ucma_wire.h"
#include "verbs/got.h"
#include "verbs/provider.h"

/* The rdma_cm fds librdmacm holds (one an event channel, and a
 * synchronous id has a channel of its own): which file each is, so that a
 * number closed behind our back and reused is not taken for one. Grows
 * as needed; the process's fd limit bounds it. */
struct ucma_fd {
	int fd;			/* -1: free */
	dev_t dev;
	ino_t ino;
	uint64_t token;		/* the daemon's name for the open (MIGRATE_ID) */
};
static struct ucma_fd *fds;
static unsigned nfds;
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;
static char cmd_path[4096];

static void fds_add(int fd)
{
	struct stat st;
	uint64_t token = 0;
	unsigned i;

	if (fstat(fd, &st) < 0)
		return;
	ioctl(fd, UCMA_IOC_TOKEN, &token);
	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds && fds[i].fd >= 0; i++)
		;
	if (i == nfds) {
		unsigned n = nfds ? nfds * 2 : 16, k;
		struct ucma_fd *more = realloc(fds, n * sizeof(*fds));

		if (!more) {	/* the fd stays a plain file: its commands fail */
			pthread_mutex_unlock(&fds_lock);
			return;
		}
		for (k = nfds; k < n; k++)
			more[k].fd = -1;
		fds = more;
		nfds = n;
	}
	fds[i] = (struct ucma_fd){ fd, st.st_dev, st.st_ino, token };
	pthread_mutex_unlock(&fds_lock);
}

/* The token of @fd if it is one of ours, else 0. */
static uint64_t fds_token(int fd)
{
	uint64_t token = 0;
	unsigned i;

	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd)
			token = fds[i].token;
	pthread_mutex_unlock(&fds_lock);
	return token;
}

static bool fds_has(int fd, bool forget)
{
	struct stat st;
	bool found = false;
	unsigned i;

	if (fd < 0)
		return false;
	pthread_mutex_lock(&fds_lock);
	for (i = 0; i < nfds; i++)
		if (fds[i].fd == fd) {
			found = fstat(fd, &st) == 0 && st.st_dev == fds[i].dev &&
				st.st_ino == fds[i].ino;
			if (forget || !found)
				fds[i].fd = -1;
			break;
		}
	pthread_mutex_unlock(&fds_lock);
	return found;
}

/* Copy to the caller's memory as copy_to_user does: EFAULT, not a crash,
 * for an address that is not writable. */
static int put_user(uint64_t addr, const void *src, size_t len)
{
	struct iovec local = { (void *)src, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	if (!len)
		return 0;
	if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* A sandbox that forbids the call: copy as librdmacm trusts it. */
	if (errno == ENOSYS || errno == EPERM) {
		memcpy((void *)(uintptr_t)addr, src, len);
		return 0;
	}
	return -1;
}

static int hook_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!path || strcmp(path, UCMA_DEV_PATH) != 0)
		return open(path, flags, mode);
	fd = open(cmd_path, O_RDWR | (flags & (O_CLOEXEC | O_NONBLOCK)));
	if (fd >= 0)
		fds_add(fd);
	return fd;
}

/* What util/open_cdev.c checks: a character device, as the one bound at
 * /dev/infiniband/rdma_cm says. */
static void fake_stat(int fd, struct stat *st)
{
	struct stat dev;

	fstat(fd, st);
	st->st_mode = S_IFCHR | (st->st_mode & 07777);
	st->st_rdev = stat(UCMA_DEV_PATH, &dev) == 0 && S_ISCHR(dev.st_mode) ?
			      dev.st_rdev : makedev(10, 58);
}

static int hook_fstat(int fd, struct stat *st)
{
	if (!fds_has(fd, false))
		return fstat(fd, st);
	fake_stat(fd, st);
	return 0;
}

/* glibc before 2.33 had no fstat symbol: programs called __fxstat. */
extern int __fxstat(int ver, int fd, struct stat *st);

static int hook_fxstat(int ver, int fd, struct stat *st)
{
	if (!fds_has(fd, false))
		return __fxstat(ver, fd, st);
	fake_stat(fd, st);
	return 0;
}

static int hook_close(int fd)
{
	fds_has(fd, true);
	return close(fd);
}

static ssize_t get_event(int fd, const void *buf, size_t count)
{
	struct rdma_ucm_cmd_hdr hdr;
	struct rdma_ucm_get_event cmd;
	struct rdma_ucm_event_resp ev;
	ssize_t n;

	memcpy(&hdr, buf, sizeof(hdr));
	if (count < sizeof(hdr) + sizeof(cmd) || hdr.in < sizeof(cmd)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&cmd, (const char *)buf + sizeof(hdr), sizeof(cmd));
	/* ucma_get_event(): the answer must fit, less the fields newer
	 * than the caller (reserved, ece), which it then does not get. */
	if (hdr.out < sizeof(ev) - sizeof(ev.reserved) - sizeof(ev.ece)) {
		errno = ENOSPC;
		return -1;
	}
	n = read(fd, &ev, sizeof(ev));
	if (n < 0)
		return -1;
	if (put_user(cmd.response, &ev, MIN((size_t)n, hdr.out)) < 0) {
		errno = EFAULT;
		return -1;
	}
	return (ssize_t)count;
}

static ssize_t hook_write(int fd, const void *buf, size_t count)
{
	struct ucma_wire_cmd w;
	struct rdma_ucm_cmd_hdr hdr;

	if (!fds_has(fd, false))
		return write(fd, buf, count);
	if (count < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT)
		return get_event(fd, buf, count);
	memset(&w, 0, offsetof(struct ucma_wire_cmd, buf));
	w.len = (uint32_t)(count < sizeof(w.buf) ? count : sizeof(w.buf));
	memcpy(w.buf, buf, w.len);
	if (hdr.cmd == RDMA_USER_CM_CMD_SET_OPTION &&
	    count >= sizeof(hdr) + sizeof(struct rdma_ucm_set_option)) {
		struct rdma_ucm_set_option o;
		struct iovec local, remote;

		/* The value the kernel would read at optval: carried after
		 * the command, if it fits (else the daemon says EFAULT). */
		memcpy(&o, (const char *)buf + sizeof(hdr), sizeof(o));
		local = (struct iovec){ w.buf + w.len, o.optlen };
		remote = (struct iovec){ (void *)(uintptr_t)o.optval, o.optlen };
		if (o.optlen && o.optlen <= sizeof(w.buf) - w.len &&
		    process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)o.optlen)
			w.optlen = o.optlen;
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_MIGRATE_ID &&
	    count >= sizeof(hdr) + sizeof(struct rdma_ucm_migrate_id)) {
		struct rdma_ucm_migrate_id m;

		memcpy(&m, (const char *)buf + sizeof(hdr), sizeof(m));
		if (fds_has((int)m.fd, false))
			w.from_token = fds_token((int)m.fd);
	}
	if (ioctl(fd, UCMA_IOC_CMD, &w) < 0)
		return -1;
	if (w.resp_len && put_user(w.resp_addr, w.buf, w.resp_len) < 0) {
		errno = EFAULT;
		return -1;
	}
	if (w.ret < 0) {
		errno = -w.ret;
		return -1;
	}
	return w.ret;
}

/* ---- librdmacm's GOT ------------------------------------------------- */

static const struct ibemu_got_hook hooks[] = {
	{ "open", (void *)hook_open },
	{ "open64", (void *)hook_open },
	{ "fstat", (void *)hook_fstat },
	{ "fstat64", (void *)hook_fstat },
	{ "__fxstat", (void *)hook_fxstat },
	{ "__fxstat64", (void *)hook_fxstat },
	{ "write", (void *)hook_write },
	{ "close", (void *)hook_close },
};

void ibemu_rdmacm_hook(void)
{
	const char *sysfs = getenv("SYSFS_PATH");

	snprintf(cmd_path, sizeof(cmd_path), "%s/%s/%s", sysfs && *sysfs ? sysfs : "/sys",
		 UCMA_WIRE_DIR, UCMA_WIRE_CMD);
	if (access(cmd_path, F_OK) < 0)
		return;
	ibemu_got_patch("/librdmacm.so", hooks, sizeof(hooks) / sizeof(hooks[0]));
}
