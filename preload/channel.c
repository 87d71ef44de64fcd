/* SPDX-License-Identifier: MIT */
/*
 * The request channel (docs/fast-path.md): a SOCK_SEQPACKET connection to
 * the emulator's fast socket, one per open file and process. FAST_OPEN
 * makes one for a new file, FAST_ATTACH for a file this process got by
 * fork or exec; each request is one datagram and one answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "preload/fast.h"	/* first: real_close, for abi/fd_pass.h */

unsigned fast_gen;

/* A new connection to the emulator's fast socket, or -1. */
static int connect_emulator(void)
{
	const char *path = getenv("IBEMU_FAST");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		real_close(s);
		return -1;
	}
	return s;
}

/* recvmsg, looking for a while first (wait.c); EINTR waits on. */
static ssize_t recv_answer(int chan, struct msghdr *m, int flags)
{
	ssize_t n;

	if (fast_may_spin()) {
		long long end = fast_now_ns() + FAST_SPIN_NS;

		do {
			n = recvmsg(chan, m, flags | MSG_DONTWAIT);
			if (n >= 0 || errno != EAGAIN)
				return n;
		} while (fast_now_ns() < end);
		fast_spin_missed();
	}
	while ((n = recvmsg(chan, m, flags)) < 0 && errno == EINTR)
		;
	return n;
}

/*
 * Send one request on @chan (with @pass_fd beside it if >= 0) and read its
 * answer: ret, up to @out_max bytes to @out, an fd passed back to *@got.
 * -EIO when the emulator is gone, as the kernel fails calls on a removed
 * device.
 */
static long exchange(int chan, uint32_t op, uint64_t arg, const void *in, size_t in_len,
		     int pass_fd, void *out, size_t out_max, int *got, int recv_flags)
{
	struct fast_req rq = { .version = FAST_VERSION, .op = op, .arg = arg };
	struct iovec iov[2] = { { &rq, sizeof(rq) }, { (void *)in, in_len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = in_len ? 2 : 1 };
	union fd_cmsg u, ru;
	struct fast_reply rp;
	struct iovec riov[2] = { { &rp, sizeof(rp) }, { out, out_max } };
	struct msghdr rmsg = { .msg_iov = riov, .msg_iovlen = out_max ? 2 : 1 };
	ssize_t n;
	int fd;

	fd_pass_put(&msg, &u, pass_fd);
	fd_pass_room(&rmsg, &ru);
	if (pass_fd >= 0 && op == FAST_WRITE)
		rq.flags = FAST_F_MEMFD;
	while ((n = sendmsg(chan, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -EIO;
	/* The request is made: an interrupted wait for its answer waits on. */
	n = recv_answer(chan, &rmsg, recv_flags);
	if (n > 0 && (fd = fd_pass_take(&rmsg)) >= 0) {
		if (got && *got < 0)
			*got = fd;
		else
			real_close(fd);
	}
	if (n < (ssize_t)sizeof(rp))
		return -EIO;
	if (out && rp.out_len > out_max)
		return -EIO;	/* truncated: not an answer we can give */
	return (long)rp.ret;
}

long fast_ask(uint32_t op, uint64_t arg, const void *in, size_t in_len)
{
	int s = connect_emulator();
	long r;

	if (s < 0)
		return -EOPNOTSUPP;
	r = exchange(s, op, arg, in, in_len, -1, NULL, 0, NULL, 0);
	real_close(s);
	return r;
}

/* Forget @o's slot (a new channel gets its own). */
static void drop_slot(struct fast_obj *o)
{
	slot_unmap(o->slot);
	o->slot = NULL;
	o->slot_seq = 0;
	o->slot_refused = 0;
}

/* @o's channel is gone from under us: closed behind our back, its number
 * maybe another file's now. Forget it without closing that number. */
static void lose_channel(struct fast_obj *o)
{
	fdtab_clear_chan_if(o->chan, o);
	o->chan = -1;
	drop_slot(o);
}

/* Make @s, connected, @o's channel. */
static void set_channel(struct fast_obj *o, int s)
{
	o->chan = s;
	o->gen = fast_gen;
	fast_ident_of(s, &o->chan_id);
	fdtab_set_chan(s, o);
}

/*
 * A channel of this process for @o, attaching @data_fd; 0 or -errno. A
 * channel with a slot is checked where it is used (slot_call rings it);
 * one without, here, before every request.
 */
static int ensure_channel(struct fast_obj *o, int data_fd)
{
	char name[32] = "";
	long r;
	int s;

	if (o->chan >= 0 && o->gen == fast_gen) {
		if (o->slot || fast_ident_is(o->chan, &o->chan_id))
			return 0;
		lose_channel(o);
	}
	if (o->chan >= 0) {	/* the parent's, inherited: ours to drop */
		if (fdtab_clear_chan_if(o->chan, o) && fast_ident_is(o->chan, &o->chan_id))
			real_close(o->chan);
		o->chan = -1;
	}
	drop_slot(o);
	if ((s = connect_emulator()) < 0)
		return -EIO;
	r = exchange(s, FAST_ATTACH, 0, NULL, 0, data_fd, name, sizeof(name) - 1, NULL, 0);
	if (r < 0) {
		real_close(s);
		return r == -EBADF ? -EIO : (int)r;
	}
	set_channel(o, s);
	return 0;
}

/*
 * Whether @o's channel has a slot, asking for one the first time (the
 * emulator refuses where the channel crosses machines; IBEMU_FAST_SLOT=0
 * does not ask, to compare).
 */
static int have_slot(struct fast_obj *o)
{
	const char *env;
	int memfd = -1;

	if (o->slot || o->slot_refused)
		return o->slot != NULL;
	o->slot_refused = 1;
	if ((env = getenv("IBEMU_FAST_SLOT")) && !strcmp(env, "0"))
		return 0;
	if (exchange(o->chan, FAST_SLOT, 0, NULL, 0, -1, NULL, 0, &memfd, MSG_CMSG_CLOEXEC) == 0 &&
	    memfd >= 0 && (o->slot = slot_map(memfd)))
		o->slot_refused = 0;
	if (memfd >= 0)
		real_close(memfd);
	return o->slot != NULL;
}

long fast_request(struct fast_obj *o, int data_fd, uint32_t op, uint64_t arg, const void *in,
		  size_t in_len, void *out, size_t out_max)
{
	int memfd = -1;
	long r;

	if (in_len > FAST_INLINE_MAX) {
		if ((memfd = fd_pass_memfd("ibemu-write", in, in_len, real_close)) < 0)
			return -ENOMEM;
		in_len = 0;
	}
	pthread_mutex_lock(&o->chan_lock);
	r = ensure_channel(o, data_fd);
	/* Writes and ioctls that need no fd fit the slot. */
	if (!r && memfd < 0 && (op == FAST_WRITE || op == FAST_IOCTL) &&
	    in_len <= FAST_SLOT_IN_MAX && have_slot(o)) {
		r = slot_call(o->slot, &o->slot_seq, o->chan, &o->chan_id, op, arg, in, in_len,
			      out, out_max);
		if (r == -ESTALE) {	/* it may have been seen: not made again */
			lose_channel(o);
			r = -EIO;
		}
	} else if (!r) {
		if (o->slot && !fast_ident_is(o->chan, &o->chan_id)) {
			lose_channel(o);
			r = ensure_channel(o, data_fd);
		}
		if (!r)
			r = exchange(o->chan, op, arg, in, in_len, memfd, out, out_max, NULL, 0);
	}
	pthread_mutex_unlock(&o->chan_lock);
	if (memfd >= 0)
		real_close(memfd);
	return r;
}

int fast_open(const char *dev, int flags)
{
	int s = connect_emulator(), fd = -1;
	struct fast_obj *o;
	long r;

	if (s < 0)
		return -1;
	r = exchange(s, FAST_OPEN, (uint64_t)flags, dev, strlen(dev), -1, NULL, 0, &fd,
		     (flags & O_CLOEXEC) ? MSG_CMSG_CLOEXEC : 0);
	if (r < 0 || fd < 0 || !(o = obj_new(flags, dev, fd))) {
		if (fd >= 0)
			real_close(fd);
		real_close(s);
		return -1;
	}
	if (flags & O_NONBLOCK)
		real_setfl(fd, O_NONBLOCK);
	set_channel(o, s);
	fdtab_set_data(fd, o);
	return fd;
}

int fast_adopt(int fd)
{
	int s = connect_emulator();
	char name[32] = "";
	struct fast_obj *o;
	long r;

	if (s < 0)
		return -1;
	r = exchange(s, FAST_ATTACH, 0, NULL, 0, fd, name, sizeof(name) - 1, NULL, 0);
	if (r < 0 || !(o = obj_new((int)r, name, fd))) {
		real_close(s);
		return -1;
	}
	set_channel(o, s);
	fdtab_set_data(fd, o);
	return 0;
}

void fast_last_close(struct fast_obj *o)
{
	/* A channel closed behind our back is not ours to use or close. */
	if (o->chan >= 0 && fast_ident_is(o->chan, &o->chan_id)) {
		/* Only our own channel can ask; a child that never used the
		 * file leaves the parent's copy be (docs/fast-path.md). */
		if (o->gen == fast_gen)
			exchange(o->chan, FAST_SYNC, 0, NULL, 0, -1, NULL, 0, NULL, 0);
		if (fdtab_clear_chan_if(o->chan, o))
			real_close(o->chan);
	}
	slot_unmap(o->slot);
	obj_free(o);
}
