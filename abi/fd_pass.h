/* SPDX-License-Identifier: MIT */
/*
 * One fd passed beside a Unix socket message (SCM_RIGHTS): how the fast
 * path hands over data sockets and memfds (abi/fast_wire.h). Header only,
 * for both ends: the emulator (socket/fastpath.c) and the preloaded library
 * (preload/), which includes abi/ and nothing else. Its includer defines
 * _GNU_SOURCE (config.h does), for memfd_create.
 */
#ifndef IBEMU_ABI_FD_PASS_H
#define IBEMU_ABI_FD_PASS_H

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* What closes the fds a message brought beyond the first: the preloaded
 * library defines it as its real_close (it calls only libc's own). */
#ifndef FD_PASS_CLOSE
#define FD_PASS_CLOSE close
#else
int FD_PASS_CLOSE(int fd);	/* whichever header comes first */
#endif

union fd_cmsg {
	struct cmsghdr c;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* Send @fd (if >= 0) with @msg; @u holds it until the message is sent. */
static inline void fd_pass_put(struct msghdr *msg, union fd_cmsg *u, int fd)
{
	if (fd < 0)
		return;
	memset(u, 0, sizeof(*u));
	msg->msg_control = u->buf;
	msg->msg_controllen = sizeof(u->buf);
	u->c.cmsg_level = SOL_SOCKET;
	u->c.cmsg_type = SCM_RIGHTS;
	u->c.cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(&u->c), &fd, sizeof(int));
}

/* Let @msg receive an fd, into @u. */
static inline void fd_pass_room(struct msghdr *msg, union fd_cmsg *u)
{
	msg->msg_control = u->buf;
	msg->msg_controllen = sizeof(u->buf);
}

/*
 * The fd that came with @msg, or -1; every other one is closed. The room
 * fd_pass_room() gives holds two ints (CMSG_SPACE rounds up), and the
 * kernel installs as many of a record's fds as fit, so a peer can always
 * send more than the one we asked for: each is taken and closed here, or
 * it would stay open in this process for good.
 */
static inline int fd_pass_take(struct msghdr *msg)
{
	struct cmsghdr *c;
	int fd = -1;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int got;

			memcpy(&got, (char *)CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = got;
			else
				FD_PASS_CLOSE(got);
		}
	}
	return fd;
}

/*
 * A memfd named @name holding @len bytes: a payload too long for one
 * datagram travels in one (abi/fast_wire.h FAST_F_MEMFD; lib/mux_wire.h
 * makes them again on the far side). -1 on failure, the memfd closed with
 * @close_fd (the preloaded library passes the real close).
 */
static inline int fd_pass_memfd(const char *name, const void *bytes, size_t len,
				int (*close_fd)(int))
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	size_t done = 0;

	while (fd >= 0 && done < len) {
		ssize_t n = write(fd, (const char *)bytes + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close_fd(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}

#endif
