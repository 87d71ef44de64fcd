/* SPDX-License-Identifier: MIT */
/*
 * The calls this library puts in front of libc's: opens of the emulated
 * umad files (/dev/infiniband/umadN), and read, write, ioctl, close, dup,
 * fstat and poll of the fds they gave. Any other fd or path goes straight to
 * libc, and so does everything when $IBEMU_FAST is unset or
 * $IBEMU_FAST_PATH is 0 (docs/fast-path.md). Failures of the fast path's
 * own making (no socket, an emulator that will not open) fall back to the
 * FUSE file, which the emulator serves as well.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "preload/fast.h"

#define EXPORT __attribute__((visibility("default")))
#define UMAD_PREFIX	"/dev/infiniband/umad"

static int enabled = -1;	/* -1: not decided yet */
static pid_t owner;		/* the process the table is of */

/* libc's own, looked up once (a constructor may run after other
 * libraries' constructors have called us already). */
#define REAL(name) ((__typeof__(real_##name))fast_resolve((void **)&real_##name, #name))

void *fast_resolve(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real___open_2)(const char *, int);
static int (*real___open64_2)(const char *, int);
static int (*real___openat_2)(int, const char *, int);
static int (*real___openat64_2)(int, const char *, int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real___read_chk)(int, void *, size_t, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_close_fn)(int);
static int (*real_close_range)(unsigned, unsigned, int);
static void (*real_closefrom)(int);
static int (*real_ioctl_fn)(int, unsigned long, ...);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static int (*real_fstat_fn)(int, struct stat *);
static int (*real_fstat64)(int, struct stat64 *);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real___poll_chk)(struct pollfd *, nfds_t, int, size_t);

int real_close(int fd)
{
	return ((__typeof__(real_close_fn))fast_resolve((void **)&real_close_fn, "close"))(fd);
}

int real_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ((__typeof__(real_ioctl_fn))fast_resolve((void **)&real_ioctl_fn, "ioctl"))(fd, cmd, arg);
}

int real_fstat(int fd, struct stat *st)
{
	return ((__typeof__(real_fstat_fn))fast_resolve((void **)&real_fstat_fn, "fstat"))(fd, st);
}

int real_dup_cloexec(int fd)
{
	return REAL(fcntl)(fd, F_DUPFD_CLOEXEC, 0);
}

int real_getfl(int fd)
{
	return REAL(fcntl)(fd, F_GETFL);
}

int real_setfl(int fd, int flags)
{
	return REAL(fcntl)(fd, F_SETFL, flags);
}

static long fail(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ---- setting up --------------------------------------------------------- */

static void reset_locks(struct fast_obj *o)
{
	pthread_mutex_init(&o->chan_lock, NULL);
	pthread_mutex_init(&o->read_lock, NULL);
}

/* A forked child: its own channels from now on (made when first needed),
 * and the locks a parent's thread may have held at the fork, free. */
static void after_fork_child(void)
{
	owner = getpid();
	fast_gen++;
	obj_foreach(reset_locks);
}

/*
 * A child of vfork() (or of clone with CLONE_VM) runs in its parent's
 * memory, with a copy of its fds: what it closes or dups is its own, and
 * must not change the parent's table (no fork handler tells us of it).
 */
static int borrowed_memory(void)
{
	return getpid() != owner;
}

/*
 * Data sockets this program was given across exec (an fd left open by
 * its parent) are ours too: every unnamed Unix SOCK_SEQPACKET socket is
 * asked about; the emulator knows its own by inode.
 */
static void adopt_inherited(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name), type = 0, domain = 0;
		socklen_t len = sizeof(int);
		struct sockaddr_un sa;
		socklen_t sa_len = sizeof(sa);
		struct stat st;

		if (e->d_name[0] == '.' || fd == dirfd(d) || real_fstat(fd, &st) < 0 ||
		    !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX ||
		    getsockname(fd, (struct sockaddr *)&sa, &sa_len) < 0 ||
		    sa_len != sizeof(sa_family_t))	/* named: not a socketpair's end */
			continue;
		fast_adopt(fd);
	}
	if (d)
		closedir(d);
}

int fast_is_enabled(void)
{
	const char *off = getenv("IBEMU_FAST_PATH");

	if (enabled < 0)
		enabled = getenv("IBEMU_FAST") && !(off && !strcmp(off, "0"));
	return enabled;
}

__attribute__((constructor)) static void fast_init(void)
{
	if (!fast_is_enabled())
		return;
	owner = getpid();
	pthread_atfork(NULL, NULL, after_fork_child);
	adopt_inherited();
}

/* ---- open --------------------------------------------------------------- */

/* "umadN" when @path names an emulated umad file, else NULL. Relative
 * paths and symlinks take the FUSE way: libibumad names them so. */
static const char *umad_name(const char *path)
{
	const char *p, *q;

	if (!path || !fast_is_enabled() || strncmp(path, UMAD_PREFIX, strlen(UMAD_PREFIX)))
		return NULL;
	p = q = path + strlen(UMAD_PREFIX);
	while (*q >= '0' && *q <= '9')
		q++;
	if (q == p || *q || (*p == '0' && q > p + 1))
		return NULL;	/* "umad", "umad0x", "umad01" */
	return path + strlen("/dev/infiniband/");
}

/* The fast path's fd for @path, or -2: not ours, open it as usual. */
static int try_open(int dirfd, const char *path, int flags)
{
	const char *dev = umad_name(path);	/* absolute: @dirfd does not count */
	int fd;

	(void)dirfd;
	if (!dev || (flags & (O_DIRECTORY | O_PATH | O_CREAT | O_TMPFILE)))
		return -2;
	fd = fast_open(dev, flags);
	return fd >= 0 ? fd : -2;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name) \
EXPORT int name(const char *path, int flags, ...) \
{ \
	va_list ap; \
	mode_t mode; \
	int fd = try_open(AT_FDCWD, path, flags); \
 \
	if (fd != -2) \
		return fd; \
	va_start(ap, flags); \
	mode = mode_arg(flags, ap); \
	va_end(ap); \
	return REAL(name)(path, flags, mode); \
}

#define OPENAT_WRAPPER(name) \
EXPORT int name(int dirfd, const char *path, int flags, ...) \
{ \
	va_list ap; \
	mode_t mode; \
	int fd = try_open(dirfd, path, flags); \
 \
	if (fd != -2) \
		return fd; \
	va_start(ap, flags); \
	mode = mode_arg(flags, ap); \
	va_end(ap); \
	return REAL(name)(dirfd, path, flags, mode); \
}

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

/* _FORTIFY_SOURCE's checked calls, which no header declares: the opens
 * (no mode: they refuse O_CREAT) and the read. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen);

EXPORT int __open_2(const char *path, int flags)
{
	int fd = try_open(AT_FDCWD, path, flags);

	return fd != -2 ? fd : REAL(__open_2)(path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
	int fd = try_open(AT_FDCWD, path, flags);

	return fd != -2 ? fd : REAL(__open64_2)(path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int fd = try_open(dirfd, path, flags);

	return fd != -2 ? fd : REAL(__openat_2)(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd = try_open(dirfd, path, flags);

	return fd != -2 ? fd : REAL(__openat64_2)(dirfd, path, flags);
}

/* ---- poll: looks a while first on a data socket (wait.c) ---------------- */

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	int r = fast_poll(fds, n, timeout);

	return r != -2 ? r : REAL(poll)(fds, n, timeout);
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	int r;

	if (fdslen / sizeof(*fds) < n)	/* libc's reports the overflow */
		return REAL(__poll_chk)(fds, n, timeout, fdslen);
	r = fast_poll(fds, n, timeout);
	return r != -2 ? r : REAL(__poll_chk)(fds, n, timeout, fdslen);
}

/* ---- read, write, ioctl ------------------------------------------------- */

/* Each call on a file of ours holds a reference while it runs (obj.c). */
static long done(struct fast_obj *o, long r)
{
	obj_put(o);
	return fail(r);
}

EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	struct fast_obj *o = obj_get(fd);

	return o ? done(o, fast_read(o, fd, buf, count)) : REAL(read)(fd, buf, count);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	struct fast_obj *o = count > buflen ? NULL : obj_get(fd);

	if (!o)	/* libc's reports the overflow */
		return REAL(__read_chk)(fd, buf, count, buflen);
	return done(o, fast_read(o, fd, buf, count));
}

EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	struct fast_obj *o = obj_get(fd);

	return o ? done(o, fast_write(o, fd, buf, count)) : REAL(write)(fd, buf, count);
}

/* The bytes of @iov, @n pieces, and their count; NULL if none or too many. */
static void *gather(const struct iovec *iov, int n, size_t *total)
{
	char *buf, *p;
	int i;

	for (*total = 0, i = 0; i < n; i++)
		*total += iov[i].iov_len;
	buf = p = malloc(*total ? *total : 1);
	for (i = 0; buf && i < n; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	return buf;
}

/*
 * writev and readv move one message, as the FUSE files do (FUSE gathers
 * a writev into one write request; docs/fast-path.md says how the kernel
 * differs).
 */
static ssize_t fast_writev(struct fast_obj *o, int fd, const struct iovec *iov, int n)
{
	size_t total;
	void *buf;
	ssize_t r;

	if (n < 0 || n > IOV_MAX)
		return -EINVAL;
	if (!(buf = gather(iov, n, &total)))
		return -ENOMEM;
	r = fast_write(o, fd, buf, total);
	free(buf);
	return r;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct fast_obj *o = obj_get(fd);

	return o ? done(o, fast_writev(o, fd, iov, n)) : REAL(writev)(fd, iov, n);
}

static ssize_t fast_readv(struct fast_obj *o, int fd, const struct iovec *iov, int n)
{
	size_t total, done_bytes = 0;
	char *buf;
	ssize_t r;
	int i;

	if (n < 0 || n > IOV_MAX)
		return -EINVAL;
	for (total = 0, i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!(buf = calloc(1, total ? total : 1)))
		return -ENOMEM;
	r = fast_read(o, fd, buf, total);
	/* ENOSPC copies the header and the first MAD too (zeros after). */
	for (i = 0; (r > 0 || r == -ENOSPC) && i < n; i++) {
		size_t len = iov[i].iov_len;

		if (r > 0 && len > (size_t)r - done_bytes)
			len = (size_t)r - done_bytes;
		memcpy(iov[i].iov_base, buf + done_bytes, len);
		done_bytes += len;
	}
	free(buf);
	return r;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct fast_obj *o = obj_get(fd);

	return o ? done(o, fast_readv(o, fd, iov, n)) : REAL(readv)(fd, iov, n);
}

EXPORT int ioctl(int fd, unsigned long cmd, ...)
{
	struct fast_obj *o;
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!(o = obj_get(fd)))
		return real_ioctl(fd, cmd, arg);
	return (int)done(o, fast_ioctl(o, fd, cmd, arg));
}

/* ---- close and dup ------------------------------------------------------ */

/*
 * @fd, which named @o or was @c's channel, is closed. The last reference
 * to a file lets the emulator release it (before this returns when no
 * call is in progress on it, as the kernel's close). A channel of ours
 * the program closed (a loop closing every fd, say) is made again when
 * needed.
 */
static void closed(struct fast_obj *o, struct fast_obj *c)
{
	if (c)
		c->chan = -1;
	obj_put(o);
}

/* @fd was closed behind the table (close_range, dup2 onto it): forget it. */
static void forget(int fd)
{
	struct fast_obj *o, *c;

	fdtab_take(fd, &o, &c);
	closed(o, c);
}

EXPORT int close(int fd)
{
	struct fast_obj *o, *c;
	int r;

	if (nl_any() && !borrowed_memory())
		nl_closed(fd);
	if ((!fdtab_data(fd) && !fdtab_chan(fd)) || borrowed_memory())
		return real_close(fd);
	/* Out of the table first: once closed, the number can be reused. */
	fdtab_take(fd, &o, &c);
	r = real_close(fd);
	closed(o, c);
	return r;
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	int r = REAL(close_range)(first, last, flags);

	/* CLOSE_RANGE_CLOEXEC (4) only marks them. */
	if (r == 0 && !(flags & 4) && !borrowed_memory())
		fdtab_foreach(first, last, forget);
	return r;
}

EXPORT void closefrom(int lowfd)
{
	REAL(closefrom)(lowfd);
	if (lowfd >= 0 && !borrowed_memory())
		fdtab_foreach((unsigned)lowfd, ~0u, forget);
}

/* @newfd (>= 0: the call succeeded) now shares @o's file, as a dup's
 * does, with the reference obj_get took for it; @o may be NULL (not a
 * file of ours: @newfd names nothing of ours either). */
static int dup_result(struct fast_obj *o, int newfd)
{
	struct fast_obj *was, *c;

	if (newfd < 0) {
		obj_put(o);
		return newfd;
	}
	was = fdtab_replace_data(newfd, o, &c);
	closed(was, c);	/* the number was closed, by the dup or before */
	return newfd;
}

/* The file @fd names, for a dup of it; NULL in a vfork child. */
static struct fast_obj *dup_source(int fd)
{
	return fdtab_data(fd) && !borrowed_memory() ? obj_get(fd) : NULL;
}

EXPORT int dup(int fd)
{
	struct fast_obj *o = dup_source(fd);

	return dup_result(o, REAL(dup)(fd));
}

static int dup_onto(struct fast_obj *o, int oldfd, int newfd, int r)
{
	if (r < 0 || oldfd == newfd || (!o && ((!fdtab_data(newfd) && !fdtab_chan(newfd)) ||
					       borrowed_memory()))) {
		obj_put(o);
		return r;
	}
	return dup_result(o, newfd);
}

EXPORT int dup2(int oldfd, int newfd)
{
	struct fast_obj *o = dup_source(oldfd);

	return dup_onto(o, oldfd, newfd, REAL(dup2)(oldfd, newfd));
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	struct fast_obj *o = dup_source(oldfd);

	return dup_onto(o, oldfd, newfd, REAL(dup3)(oldfd, newfd, flags));
}

static int fcntl_common(int (*fn)(int, int, ...), int fd, int cmd, va_list ap)
{
	void *arg = va_arg(ap, void *);
	struct fast_obj *o;

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return fn(fd, cmd, arg);
	o = dup_source(fd);
	return dup_result(o, fn(fd, cmd, arg));
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_common(REAL(fcntl), fd, cmd, ap);
	va_end(ap);
	return r;
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	int r;

	va_start(ap, cmd);
	r = fcntl_common(REAL(fcntl64), fd, cmd, ap);
	va_end(ap);
	return r;
}

/* ---- fstat -------------------------------------------------------------- */

/* fstat answers what the FUSE file says (in namespace mode a regular
 * file, README: the same as without the library): its path in @path. */
static const char *fuse_path(const struct fast_obj *o, char *path, size_t size)
{
	snprintf(path, size, "/dev/infiniband/%s", o->dev);
	return path;
}

EXPORT int fstat(int fd, struct stat *st)
{
	struct fast_obj *o = obj_get(fd);
	char path[64];
	int r;

	if (!o)
		return real_fstat(fd, st);
	r = stat(fuse_path(o, path, sizeof(path)), st);
	obj_put(o);
	return r;
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	struct fast_obj *o = obj_get(fd);
	char path[64];
	int r;

	if (!o)
		return REAL(fstat64)(fd, st);
	r = stat64(fuse_path(o, path, sizeof(path)), st);
	obj_put(o);
	return r;
}
