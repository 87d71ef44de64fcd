/* SPDX-License-Identifier: MIT */
/*
 * NETLINK_RDMA sockets for the programs of a run (docs/netlink.md). The
 * machine's kernel has no RDMA netlink family (no ib_core; the run's
 * seccomp filter refuses the socket before it could load one), so
 * socket(AF_NETLINK, *, NETLINK_RDMA) gives a datagram socket of
 * AF_UNIX, bound to an abstract name, that this library answers into:
 * a request sent on it is answered (nldev.c) before the send returns, by
 * datagrams sent to that name, which the program reads, polls and
 * epolls natively. bind, getsockname and the SOL_NETLINK options say
 * what a netlink socket says; reads give the kernel's address (portid 0).
 *
 * An fd is ours while it names the socket we made (its inode): a close we
 * did not see (closefrom, a raw system call) cannot leave us answering on
 * a socket of the program's that took the number.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "preload/fast.h"
#include "preload/netlink.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA	20
#endif
#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

#define EXPORT __attribute__((visibility("default")))
/* NETLINK_RDMA sockets open at once in a process; one more is refused
 * with ENOBUFS. libibverbs and librdmacm hold one for a moment each. */
#define NL_SOCKS_MAX	16
/* A request is at most this big (the kernel's limit is the socket's
 * send buffer; RDMA requests are a few attributes). */
#define NL_REQUEST_MAX	65536
/* Datagrams queued on a socket at once: below the receive queue's
 * length limit (net.unix.max_dgram_qlen, 10 by default); the rest of an
 * answer follows as the program reads, as a kernel's dump does. */
#define NL_QUEUED_MAX	8

struct nl_sock {
	bool used;
	int fd;
	ino_t ino;		/* the socket the fd must still name */
	uint32_t portid;	/* 0 until bound */
	uint32_t groups;
	struct sockaddr_un addr;	/* its abstract name, for the answers */
	socklen_t addrlen;
	struct nl_out pending;	/* answers not yet sent */
	unsigned sent;		/* datagrams of pending sent */
};

static struct nl_sock socks[NL_SOCKS_MAX];
static int nsocks;		/* entries in use: 0 makes every wrapper one load */
/* Recursive: an answer that asks the emulator (nldev.c's changes) sends on
 * a socket of its own through our wrappers, which look it up here. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint32_t next_portid;	/* autobind's, after the process's pid */

static int (*real_socket)(int, int, int);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_getsockname)(int, struct sockaddr *, socklen_t *);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_recv)(int, void *, size_t, int);

#define REAL(name) ((__typeof__(real_##name))fast_resolve((void **)&real_##name, #name))

/* ---- the answer's buffer ------------------------------------------------ */

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 8;
	void *q;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return p;
	if (!(q = realloc(p, c * elem)))
		return NULL;
	*cap = c;
	return q;
}

/* Room for @len more bytes; false (and o->failed) if there is none. */
static bool room(struct nl_out *o, size_t len)
{
	uint8_t *b;

	if (o->failed)
		return false;
	if (o->len + len > NL_ANSWER_MAX || !(b = grow(o->buf, &o->cap, o->len + len, 1))) {
		o->failed = 1;
		return false;
	}
	o->buf = b;
	memset(o->buf + o->len, 0, len);
	return true;
}

/* End the datagram being filled at o->len. */
static void dgram_end(struct nl_out *o)
{
	size_t ncap = o->ncap, *e;

	if (o->failed || (o->n && o->ends[o->n - 1] == o->len))
		return;
	if (!(e = grow(o->ends, &ncap, o->n + 1, sizeof(*e)))) {
		o->failed = 1;
		return;
	}
	o->ends = e;
	o->ncap = (unsigned)ncap;
	o->ends[o->n++] = o->len;
}

static size_t dgram_start(const struct nl_out *o)
{
	return o->n ? o->ends[o->n - 1] : 0;
}

void nl_begin(struct nl_out *o, uint16_t type, uint16_t flags, uint32_t seq, uint32_t portid)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq,
			      .nlmsg_pid = portid };

	/* A device's or a port's message is a few hundred bytes: a new
	 * datagram when this one could not take another. */
	if (o->len - dgram_start(o) > NL_DGRAM_MAX / 2)
		dgram_end(o);
	o->msg = o->len;
	if (room(o, NLMSG_HDRLEN)) {
		memcpy(o->buf + o->len, &h, sizeof(h));
		o->len += NLMSG_HDRLEN;
	}
}

void nl_put(struct nl_out *o, uint16_t attr, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = attr };

	if (len > 0xffff - NLA_HDRLEN || !room(o, NLA_HDRLEN + NLA_ALIGN(len)))
		return;
	memcpy(o->buf + o->len, &a, sizeof(a));
	memcpy(o->buf + o->len + NLA_HDRLEN, data, len);
	o->len += NLA_HDRLEN + NLA_ALIGN(len);
}

void nl_put_u8(struct nl_out *o, uint16_t attr, uint8_t v) { nl_put(o, attr, &v, 1); }
void nl_put_u32(struct nl_out *o, uint16_t attr, uint32_t v) { nl_put(o, attr, &v, 4); }
/* The kernel pads a u64 to 8 bytes only where unaligned access costs
 * (nla_put_u64_64bit); readers copy it out either way. */
void nl_put_u64(struct nl_out *o, uint16_t attr, uint64_t v) { nl_put(o, attr, &v, 8); }
void nl_put_str(struct nl_out *o, uint16_t attr, const char *s) { nl_put(o, attr, s, strlen(s) + 1); }

void nl_end(struct nl_out *o)
{
	uint32_t len = (uint32_t)(o->len - o->msg);

	if (!o->failed)
		memcpy(o->buf + o->msg + offsetof(struct nlmsghdr, nlmsg_len), &len, sizeof(len));
}

void nl_error(struct nl_out *o, const struct nlmsghdr *req, uint32_t portid, int err)
{
	struct nlmsgerr e = { .error = err, .msg = *req };

	e.msg.nlmsg_len = NLMSG_HDRLEN;
	nl_begin(o, NLMSG_ERROR, NLM_F_CAPPED, req->nlmsg_seq, portid);
	if (room(o, NLMSG_ALIGN(sizeof(e)))) {
		memcpy(o->buf + o->len, &e, sizeof(e));
		o->len += NLMSG_ALIGN(sizeof(e));
	}
	nl_end(o);
	dgram_end(o);	/* the end of an answer */
}

void nl_done(struct nl_out *o, const struct nlmsghdr *req, uint32_t portid)
{
	int32_t zero = 0;

	nl_begin(o, NLMSG_DONE, NLM_F_MULTI, req->nlmsg_seq, portid);
	if (room(o, NLMSG_ALIGN(sizeof(zero)))) {
		memcpy(o->buf + o->len, &zero, sizeof(zero));
		o->len += NLMSG_ALIGN(sizeof(zero));
	}
	nl_end(o);
	dgram_end(o);
}

void nl_out_free(struct nl_out *o)
{
	free(o->buf);
	free(o->ends);
	memset(o, 0, sizeof(*o));
}

/* ---- the sockets -------------------------------------------------------- */

static struct nl_sock *entry_of(int fd)
{
	unsigned i;

	for (i = 0; i < NL_SOCKS_MAX; i++)
		if (socks[i].used && socks[i].fd == fd)
			return &socks[i];
	return NULL;
}

static void entry_free(struct nl_sock *s)
{
	nl_out_free(&s->pending);
	memset(s, 0, sizeof(*s));
	__atomic_sub_fetch(&nsocks, 1, __ATOMIC_RELEASE);
}

/* Our socket @fd names, with the lock held; NULL (unlocked) if none. */
static struct nl_sock *nl_get(int fd)
{
	struct nl_sock *s;
	struct stat st;

	if (!__atomic_load_n(&nsocks, __ATOMIC_ACQUIRE) || fd < 0)
		return NULL;
	pthread_mutex_lock(&lock);
	if ((s = entry_of(fd)) && (real_fstat(fd, &st) < 0 || st.st_ino != s->ino)) {
		entry_free(s);	/* closed behind our back */
		s = NULL;
	}
	if (!s)
		pthread_mutex_unlock(&lock);
	return s;
}

/* @fd is being closed: a socket of ours forgets it at once, so that the
 * process's other calls go back to one load (libibverbs and librdmacm
 * close theirs at start). */
bool nl_any(void)
{
	return __atomic_load_n(&nsocks, __ATOMIC_ACQUIRE) != 0;
}

void nl_closed(int fd)
{
	struct nl_sock *s;

	pthread_mutex_lock(&lock);
	if ((s = entry_of(fd)))
		entry_free(s);
	pthread_mutex_unlock(&lock);
}

static void nl_put_sock(struct nl_sock *s)
{
	(void)s;
	pthread_mutex_unlock(&lock);
}

/* Send what of the pending answer the socket's queue takes now. */
static void flush(struct nl_sock *s)
{
	int tx;

	if (s->sent >= s->pending.n)
		return;
	tx = REAL(socket)(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tx < 0)
		return;
	while (s->sent < s->pending.n) {
		size_t from = s->sent ? s->pending.ends[s->sent - 1] : 0;
		size_t to = s->pending.ends[s->sent];

		if (REAL(sendto)(tx, s->pending.buf + from, to - from, MSG_DONTWAIT,
				 (struct sockaddr *)&s->addr, s->addrlen) < 0)
			break;	/* full (EAGAIN): the reads make room */
		s->sent++;
	}
	real_close(tx);
	if (s->sent == s->pending.n)
		nl_out_free(&s->pending);
	if (s->pending.n == 0)
		s->sent = 0;
}

static void autobind(struct nl_sock *s)
{
	if (s->portid)
		return;
	/* netlink_autobind: the process's pid first, then negative ones. */
	if (!next_portid)
		next_portid = (uint32_t)getpid();
	else if (next_portid == (uint32_t)getpid() || (int32_t)next_portid > -4096)
		next_portid = (uint32_t)-4096;
	else
		next_portid--;
	s->portid = next_portid;
}

EXPORT int socket(int domain, int type, int protocol)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sa_family_t);
	struct nl_sock *s = NULL;
	struct stat st;
	unsigned i;
	int fd, err;

	if (domain != AF_NETLINK || protocol != NETLINK_RDMA || !fast_is_enabled())
		return REAL(socket)(domain, type, protocol);
	if ((type & 0xf) != SOCK_RAW && (type & 0xf) != SOCK_DGRAM) {
		errno = ESOCKTNOSUPPORT;
		return -1;
	}
	/* An autobound abstract name (unix(7)): unique, gone with the socket. */
	fd = REAL(socket)(AF_UNIX, SOCK_DGRAM | (type & (SOCK_CLOEXEC | SOCK_NONBLOCK)), 0);
	if (fd < 0)
		return -1;
	if (REAL(bind)(fd, (struct sockaddr *)&un, len) < 0)
		goto fail;
	len = sizeof(un);
	if (REAL(getsockname)(fd, (struct sockaddr *)&un, &len) < 0 || real_fstat(fd, &st) < 0)
		goto fail;
	pthread_mutex_lock(&lock);
	for (i = 0; i < NL_SOCKS_MAX && !s; i++) {
		struct stat was;

		if (socks[i].used &&
		    (real_fstat(socks[i].fd, &was) < 0 || was.st_ino != socks[i].ino))
			entry_free(&socks[i]);	/* its fd was closed */
		if (!socks[i].used)
			s = &socks[i];
	}
	if (!s) {
		pthread_mutex_unlock(&lock);
		errno = ENOBUFS;	/* NL_SOCKS_MAX at once */
		goto fail;
	}
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->fd = fd;
	s->ino = st.st_ino;
	s->addr = un;
	s->addrlen = len;
	__atomic_add_fetch(&nsocks, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return fd;
fail:
	err = errno;
	real_close(fd);
	errno = err;
	return -1;
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_nl *nl = (const void *)addr;
	struct nl_sock *s = nl_get(fd);
	int err = 0;

	if (!s)
		return REAL(bind)(fd, addr, len);
	if (!addr || len < sizeof(*nl) || nl->nl_family != AF_NETLINK)
		err = EINVAL;
	else if (s->portid && nl->nl_pid && nl->nl_pid != s->portid)
		err = EINVAL;	/* netlink_bind: bound already, to another */
	else if (nl->nl_pid)
		s->portid = nl->nl_pid;
	else
		autobind(s);
	if (!err)
		s->groups = nl->nl_groups;
	nl_put_sock(s);
	errno = err;
	return err ? -1 : 0;
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct nl_sock *s = nl_get(fd);

	if (!s)
		return REAL(getsockname)(fd, addr, len);
	nl.nl_pid = s->portid;
	nl.nl_groups = s->groups;
	nl_put_sock(s);
	if (!addr || !len) {
		errno = EFAULT;
		return -1;
	}
	memcpy(addr, &nl, *len < sizeof(nl) ? *len : sizeof(nl));
	*len = sizeof(nl);
	return 0;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct nl_sock *s;

	if (level != SOL_NETLINK || !(s = nl_get(fd)))
		return REAL(setsockopt)(fd, level, name, val, len);
	/* NETLINK_EXT_ACK, NETLINK_CAP_ACK (errors carry the request's
	 * header only, as ours always do), memberships: taken. */
	nl_put_sock(s);
	return 0;
}

/* Answer the requests in @buf, sent on @s. */
static ssize_t take(struct nl_sock *s, const uint8_t *buf, size_t len, const void *to,
		    socklen_t tolen)
{
	const struct sockaddr_nl *nl = to;
	const struct nlmsghdr *h;
	size_t left = len;

	if (to && (tolen < sizeof(*nl) || nl->nl_family != AF_NETLINK)) {
		errno = EINVAL;
		return -1;
	}
	if (to && (nl->nl_pid || nl->nl_groups)) {
		errno = ECONNREFUSED;	/* no other RDMA netlink socket here */
		return -1;
	}
	autobind(s);
	for (h = (const void *)buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		nldev_answer(h, s->portid, &s->pending);
		dgram_end(&s->pending);	/* each answer in datagrams of its own */
	}
	if (s->pending.failed) {
		nl_out_free(&s->pending);
		s->sent = 0;
		errno = ENOBUFS;	/* past NL_ANSWER_MAX */
		return -1;
	}
	flush(s);
	return (ssize_t)len;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct nl_sock *s = nl_get(fd);
	uint8_t *buf;
	size_t len = 0, i;
	ssize_t r;

	if (!s)
		return REAL(sendmsg)(fd, msg, flags);
	for (i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	if (len > NL_REQUEST_MAX || !(buf = malloc(len ? len : 1))) {
		nl_put_sock(s);
		errno = len > NL_REQUEST_MAX ? EMSGSIZE : ENOMEM;
		return -1;
	}
	for (len = 0, i = 0; i < msg->msg_iovlen; len += msg->msg_iov[i++].iov_len)
		memcpy(buf + len, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
	r = take(s, buf, len, msg->msg_namelen ? msg->msg_name : NULL, msg->msg_namelen);
	nl_put_sock(s);
	free(buf);
	return r;
}

/* sendto and send on @s, held. */
static ssize_t sock_send(struct nl_sock *s, const void *buf, size_t len, const struct sockaddr *to,
			 socklen_t tolen)
{
	ssize_t r;

	if (len > NL_REQUEST_MAX) {
		errno = EMSGSIZE;
		r = -1;
	} else {
		r = take(s, buf, len, to, to ? tolen : 0);
	}
	nl_put_sock(s);
	return r;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
		      socklen_t tolen)
{
	struct nl_sock *s = nl_get(fd);

	return s ? sock_send(s, buf, len, to, tolen) : REAL(sendto)(fd, buf, len, flags, to, tolen);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct nl_sock *s = nl_get(fd);

	return s ? sock_send(s, buf, len, NULL, 0) : REAL(send)(fd, buf, len, flags);
}

/* Before a read of @fd: queue what room there is; true if it is ours. */
static bool before_read(int fd)
{
	struct nl_sock *s = nl_get(fd);

	if (!s)
		return false;
	flush(s);
	nl_put_sock(s);
	return true;
}

/* After a read: the kernel's address, and the next of the answer. */
static void after_read(int fd, struct sockaddr *from, socklen_t *fromlen)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct nl_sock *s;

	if (from && fromlen) {
		memcpy(from, &nl, *fromlen < sizeof(nl) ? *fromlen : sizeof(nl));
		*fromlen = sizeof(nl);
	}
	if ((s = nl_get(fd))) {
		flush(s);
		nl_put_sock(s);
	}
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	void *name;
	ssize_t r;

	if (!before_read(fd))
		return REAL(recvmsg)(fd, msg, flags);
	name = msg->msg_name;
	msg->msg_name = NULL;
	r = REAL(recvmsg)(fd, msg, flags);
	msg->msg_name = name;
	if (r >= 0)
		after_read(fd, name, &msg->msg_namelen);
	return r;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			socklen_t *fromlen)
{
	ssize_t r;

	if (!before_read(fd))
		return REAL(recvfrom)(fd, buf, len, flags, from, fromlen);
	r = REAL(recvfrom)(fd, buf, len, flags, NULL, NULL);
	if (r >= 0)
		after_read(fd, from, fromlen);
	return r;
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t r;

	if (!before_read(fd))
		return REAL(recv)(fd, buf, len, flags);
	r = REAL(recv)(fd, buf, len, flags);
	if (r >= 0)
		after_read(fd, NULL, NULL);
	return r;
}
