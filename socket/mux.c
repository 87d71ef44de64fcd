/* SPDX-License-Identifier: MIT */
/* The fast path's channels over one byte stream; see mux.h and
 * lib/mux_wire.h. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "abi/fast_wire.h"
#include "abi/fd_pass.h"
#include "lib/mux_wire.h"
#include "socket/mux.h"

/* The largest datagram a Unix socket carries by default is its send
 * buffer (about 208 KiB, abi/fast_wire.h): one of ours fits in this. */
#define DGRAM_MAX	(256u << 10)
#define CHANS_MAX	4096		/* channels open at once */
#define TX_MAX		(8u << 20)	/* frames not written yet: read no channel */
#define READS_PER_ROUND	16		/* datagrams of one channel, then the next */

/* A datagram for a channel's socket, waiting for room there. */
struct msg {
	size_t cost;		/* its frame's bytes, to acknowledge */
	int fd;			/* passed beside it, or -1 */
	size_t len;
	uint8_t bytes[];
};

struct chan {
	uint32_t id;
	int fd;
	ino_t far_ino;		/* our socketpair's end we passed on, or 0 */
	size_t unacked;		/* sent, not yet delivered on the other side */
	size_t delivered;	/* delivered here, not yet acknowledged */
	GQueue pending;		/* struct msg *, oldest first */
	bool closing;		/* closed there: ours goes once pending has */
};

struct mux {
	int in, out;
	uint32_t next_id;	/* the next channel we name */
	GHashTable *chans;	/* id -> struct chan * */
	GByteArray *rx;		/* read from the stream: not yet a whole frame */
	GByteArray *tx;		/* frames to write; tx_done of them written */
	size_t tx_done;
	bool hello;		/* the other side's has come */
	bool draining;		/* in drain_hangups() */
};

static uint8_t dgram[DGRAM_MAX];

static void msg_free(struct msg *m)
{
	if (m->fd >= 0)
		close(m->fd);
	g_free(m);
}

static void chan_free(struct chan *c)
{
	close(c->fd);
	g_queue_clear_full(&c->pending, (GDestroyNotify)msg_free);
	g_free(c);
}

static size_t frame_cost(size_t len, size_t extra)
{
	return sizeof(struct mux_hdr) + len + extra;
}

/* Queue a frame for the stream; its bytes, the credit it costs. */
static size_t put_frame(struct mux *m, uint8_t kind, uint8_t fdk, uint32_t chan, uint32_t aux,
			const void *bytes, size_t len, const void *extra, size_t extra_len)
{
	struct mux_hdr h = {
		.chan = htole32(chan), .len = htole32((uint32_t)len), .aux = htole32(aux),
		.kind = kind, .fd = fdk,
	};

	g_byte_array_append(m->tx, (const uint8_t *)&h, sizeof(h));
	if (len)
		g_byte_array_append(m->tx, bytes, (guint)len);
	if (extra_len)
		g_byte_array_append(m->tx, extra, (guint)extra_len);
	return frame_cost(len, extra_len);
}

static struct chan *chan_new(struct mux *m, uint32_t id, int fd, ino_t far_ino)
{
	struct chan *c = g_new0(struct chan, 1);

	c->id = id;
	c->fd = fd;
	c->far_ino = far_ino;
	g_queue_init(&c->pending);
	g_hash_table_insert(m->chans, GUINT_TO_POINTER(id), c);
	return c;
}

/* Forget @c (its socket closed); @tell: say so to the other side. */
static void chan_drop(struct mux *m, struct chan *c, bool tell)
{
	if (tell)
		put_frame(m, MUX_CLOSE, MUX_FD_NONE, c->id, 0, NULL, 0, NULL, 0);
	g_hash_table_remove(m->chans, GUINT_TO_POINTER(c->id));	/* frees */
}

/* ---- from the stream to a channel's socket ----------------------------- */

/* Move @c's waiting datagrams into its socket, as room allows. */
static void deliver(struct mux *m, struct chan *c)
{
	struct msg *d;

	while ((d = g_queue_peek_head(&c->pending))) {
		struct iovec iov = { d->bytes, d->len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		union fd_cmsg u;

		fd_pass_put(&mh, &u, d->fd);
		if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			chan_drop(m, c, !c->closing);	/* no reader left */
			return;
		}
		c->delivered += d->cost;
		msg_free(g_queue_pop_head(&c->pending));
	}
	if (c->delivered >= MUX_WINDOW / 4) {
		put_frame(m, MUX_ACK, MUX_FD_NONE, c->id, (uint32_t)c->delivered, NULL, 0, NULL, 0);
		c->delivered = 0;
	}
	if (c->closing)
		chan_drop(m, c, false);
}

/* The fd a MUX_MSG frame says to pass beside its datagram; -1 for none,
 * -2 when the frame breaks the protocol. */
static int fd_for(struct mux *m, const struct mux_hdr *h, const uint8_t *extra)
{
	struct chan *c;
	struct stat st;
	int sv[2];

	switch (h->fd) {
	case MUX_FD_NONE:
		return -1;
	case MUX_FD_MEMFD:
		return fd_pass_memfd("ibemu-mux", extra, h->aux, close);
	case MUX_FD_NEW:
		/* Theirs to name: the other parity than ours, not in use. */
		if ((h->aux & 1) == (m->next_id & 1) ||
		    g_hash_table_contains(m->chans, GUINT_TO_POINTER(h->aux)))
			return -2;
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
			/* Out of fds: the channel is closed at once. */
			put_frame(m, MUX_CLOSE, MUX_FD_NONE, h->aux, 0, NULL, 0, NULL, 0);
			return -1;
		}
		fstat(sv[1], &st);
		chan_new(m, h->aux, sv[0], st.st_ino);
		return sv[1];
	case MUX_FD_CHAN:
		c = g_hash_table_lookup(m->chans, GUINT_TO_POINTER(h->aux));
		return c ? fcntl(c->fd, F_DUPFD_CLOEXEC, 0) : -1;
	}
	return -2;
}

/* One whole frame from the stream, @cost bytes long; false if it breaks
 * the protocol. */
static bool on_frame(struct mux *m, const struct mux_hdr *h, const uint8_t *bytes, size_t cost)
{
	struct chan *c = g_hash_table_lookup(m->chans, GUINT_TO_POINTER(h->chan));
	struct msg *d;
	int fd;

	if (!m->hello && h->kind != MUX_HELLO)
		return false;
	switch (h->kind) {
	case MUX_HELLO:
		if (h->aux != MUX_VERSION) {
			fprintf(stderr, "ibemu: the other end of the ssh stream speaks version %u, we %u: "
				"install one ibemu on both hosts\n", h->aux, MUX_VERSION);
			return false;
		}
		if (h->chan != MUX_BYTE_ORDER) {
			fprintf(stderr, "ibemu: the other host's byte order is not ours: cannot attach\n");
			return false;
		}
		m->hello = true;
		return true;
	case MUX_MSG:
		if ((fd = fd_for(m, h, bytes + h->len)) == -2)
			return false;
		if (!c) {	/* closed here meanwhile */
			if (fd >= 0)
				close(fd);
			return true;
		}
		d = g_malloc(sizeof(*d) + h->len);
		d->cost = cost;
		d->fd = fd;
		d->len = h->len;
		memcpy(d->bytes, bytes, h->len);
		g_queue_push_tail(&c->pending, d);
		deliver(m, c);
		return true;
	case MUX_CLOSE:
		if (c) {
			c->closing = true;
			if (g_queue_is_empty(&c->pending))
				chan_drop(m, c, false);
		}
		return true;
	case MUX_ACK:
		if (c)
			c->unacked -= MIN(c->unacked, h->aux);
		return true;
	}
	return false;
}

/* Frames read so far; false if one breaks the protocol. */
static bool take_frames(struct mux *m)
{
	size_t off = 0;
	bool ok = true;

	while (ok && m->rx->len - off >= sizeof(struct mux_hdr)) {
		struct mux_hdr h;
		size_t total;

		memcpy(&h, m->rx->data + off, sizeof(h));
		h.len = le32toh(h.len);
		h.aux = le32toh(h.aux);
		if (h.kind != MUX_HELLO)	/* its chan is in the sender's order */
			h.chan = le32toh(h.chan);
		total = frame_cost(h.len, h.fd == MUX_FD_MEMFD ? h.aux : 0);
		if (h.len > DGRAM_MAX || total > MUX_FRAME_MAX) {
			ok = false;
			break;
		}
		if (m->rx->len - off < total)
			break;
		ok = on_frame(m, &h, m->rx->data + off + sizeof(h), total);
		off += total;
	}
	g_byte_array_remove_range(m->rx, 0, (guint)off);
	return ok;
}

/* ---- from a channel's socket to the stream ----------------------------- */

static struct chan *chan_by_far_ino(struct mux *m, ino_t ino)
{
	GHashTableIter it;
	struct chan *c;

	g_hash_table_iter_init(&it, m->chans);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&c))
		if (c->far_ino == ino)
			return c;
	return NULL;
}

/* How to carry @fd, passed beside a datagram: sets the frame's fd kind and
 * aux, and *@extra to a memfd's bytes (g_free); @fd is taken. */
static void carry_fd(struct mux *m, int fd, uint8_t *fdk, uint32_t *aux, uint8_t **extra)
{
	struct chan *c;
	struct stat st;

	*fdk = MUX_FD_NONE;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	if (S_ISSOCK(st.st_mode) && (c = chan_by_far_ino(m, st.st_ino))) {
		*fdk = MUX_FD_CHAN;	/* a data socket passed back (FAST_ATTACH) */
		*aux = c->id;
		close(fd);
	} else if (S_ISSOCK(st.st_mode) && g_hash_table_size(m->chans) < CHANS_MAX) {
		*fdk = MUX_FD_NEW;
		*aux = m->next_id;
		m->next_id += 2;
		chan_new(m, *aux, fd, 0);
	} else if (S_ISREG(st.st_mode) && st.st_size < MUX_FRAME_MAX - DGRAM_MAX) {
		/* A memfd: a long payload (abi/fast_wire.h FAST_F_MEMFD). */
		*extra = g_malloc((size_t)st.st_size + 1);
		if (pread(fd, *extra, (size_t)st.st_size, 0) == st.st_size) {
			*fdk = MUX_FD_MEMFD;
			*aux = (uint32_t)st.st_size;
		}
		close(fd);
	} else {
		close(fd);	/* nothing we carry: the datagram goes alone */
	}
}

static void drain_hangups(struct mux *m, const struct chan *busy);

/* One datagram from @c's socket to the stream: 1, or 0 when there was
 * none, or -1 when the socket has closed (and @c is gone). */
static int read_chan(struct mux *m, struct chan *c)
{
	struct iovec iov = { dgram, sizeof(dgram) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union fd_cmsg u;
	struct fast_req rq;
	const uint8_t *bytes = dgram;
	uint8_t fdk, *extra = NULL, *copy = NULL;
	uint32_t aux = 0;
	ssize_t n;
	int fd;

	fd_pass_room(&mh, &u);
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	fd = n >= 0 ? fd_pass_take(&mh) : -1;
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (fd >= 0)
			close(fd);
		chan_drop(m, c, true);
		return -1;
	}
	if (fd >= 0)
		carry_fd(m, fd, &fdk, &aux, &extra);
	else
		fdk = MUX_FD_NONE;
	/* A last close (fast_wire.h FAST_SYNC) is answered once the file is
	 * released, which its data socket's close tells: that goes first. */
	memcpy(&rq, dgram, MIN((size_t)n, sizeof(rq)));
	if ((size_t)n >= sizeof(rq) && rq.version == FAST_VERSION && rq.op == FAST_SYNC) {
		bytes = copy = g_memdup2(dgram, (gsize)n);	/* dgram is reused there */
		drain_hangups(m, c);
	}
	c->unacked += put_frame(m, MUX_MSG, fdk, c->id, aux, bytes, (size_t)n, extra,
				fdk == MUX_FD_MEMFD ? aux : 0);
	g_free(extra);
	g_free(copy);
	return 1;
}

/* Every channel whose socket has hung up, but @busy (being read): its
 * last datagrams and its close onto the stream, now. */
static void drain_hangups(struct mux *m, const struct chan *busy)
{
	GList *ids, *l;

	if (m->draining)
		return;
	m->draining = true;
	ids = g_hash_table_get_keys(m->chans);
	for (l = ids; l; l = l->next) {
		struct chan *c = g_hash_table_lookup(m->chans, l->data);
		struct pollfd p;

		if (!c || c == busy || c->closing)
			continue;
		p = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP))
			while (read_chan(m, c) > 0)
				;
	}
	g_list_free(ids);
	m->draining = false;
}

/* ---- the loop ----------------------------------------------------------- */

static bool can_read(const struct mux *m, const struct chan *c)
{
	return !c->closing && c->unacked < MUX_WINDOW && m->tx->len - m->tx_done < TX_MAX;
}

/* Write what the stream takes now; false if it is broken. */
static bool flush(struct mux *m)
{
	while (m->tx_done < m->tx->len) {
		ssize_t n = write(m->out, m->tx->data + m->tx_done, m->tx->len - m->tx_done);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		m->tx_done += (size_t)n;
	}
	g_byte_array_set_size(m->tx, 0);
	m->tx_done = 0;
	return true;
}

static int loop(struct mux *m)
{
	GArray *pfds = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
	GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	uint8_t buf[65536];
	int ret = 0;

	for (;;) {
		GHashTableIter it;
		struct chan *c;
		struct pollfd p;
		unsigned i;

		if (!flush(m)) {
			ret = -EPIPE;
			break;
		}
		if (!g_hash_table_contains(m->chans, GUINT_TO_POINTER(0)) && !m->tx->len)
			break;	/* channel 0 closed, and said */
		g_array_set_size(pfds, 0);
		g_array_set_size(ids, 0);
		p = (struct pollfd){ .fd = m->in, .events = POLLIN };
		g_array_append_val(pfds, p);
		p = (struct pollfd){ .fd = m->tx->len ? m->out : -1, .events = POLLOUT };
		g_array_append_val(pfds, p);
		g_hash_table_iter_init(&it, m->chans);
		while (g_hash_table_iter_next(&it, NULL, (gpointer *)&c)) {
			p = (struct pollfd){ .fd = c->fd };
			if (can_read(m, c))
				p.events |= POLLIN;
			if (!g_queue_is_empty(&c->pending))
				p.events |= POLLOUT;
			if (!p.events)
				p.fd = -1;	/* a hangup waits too: data first */
			g_array_append_val(pfds, p);
			g_array_append_val(ids, c->id);
		}
		if (poll((struct pollfd *)pfds->data, pfds->len, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (g_array_index(pfds, struct pollfd, 0).revents) {
			ssize_t n = read(m->in, buf, sizeof(buf));

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				ret = -EPIPE;	/* the other side, or ssh, is gone */
				break;
			}
			if (n > 0) {
				g_byte_array_append(m->rx, buf, (guint)n);
				if (!take_frames(m)) {
					fprintf(stderr, "ibemu: a frame on the ssh stream breaks its protocol "
						"(lib/mux_wire.h): ending\n");
					ret = -EPROTO;
					break;
				}
			}
		}
		for (i = 0; i < ids->len; i++) {
			short ev = g_array_index(pfds, struct pollfd, i + 2).revents;
			unsigned k;

			c = g_hash_table_lookup(m->chans,
						GUINT_TO_POINTER(g_array_index(ids, uint32_t, i)));
			if (!ev || !c)
				continue;
			if (!g_queue_is_empty(&c->pending) && (ev & (POLLOUT | POLLHUP | POLLERR))) {
				deliver(m, c);
				/* gone, or delivered all of a closing one */
				if (!g_hash_table_contains(m->chans, GUINT_TO_POINTER(g_array_index(ids, uint32_t, i))))
					continue;
			}
			for (k = 0; k < READS_PER_ROUND && can_read(m, c); k++)
				if (read_chan(m, c) <= 0)
					break;
		}
	}
	g_array_free(pfds, TRUE);
	g_array_free(ids, TRUE);
	return ret;
}

int mux_run(int in, int out, int first, bool owner)
{
	struct mux m = {
		.in = in,
		.out = out,
		.next_id = owner ? 1 : 2,
		.chans = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)chan_free),
		.rx = g_byte_array_new(),
		.tx = g_byte_array_new(),
	};
	int ret;

	fcntl(in, F_SETFL, fcntl(in, F_GETFL) | O_NONBLOCK);
	fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK);
	chan_new(&m, 0, first, 0);
	/* chan: MUX_BYTE_ORDER as this host stores it (lib/mux_wire.h). */
	put_frame(&m, MUX_HELLO, MUX_FD_NONE, le32toh(MUX_BYTE_ORDER), MUX_VERSION, NULL, 0, NULL, 0);
	ret = loop(&m);
	g_hash_table_destroy(m.chans);	/* closes every channel's socket */
	g_byte_array_free(m.rx, TRUE);
	g_byte_array_free(m.tx, TRUE);
	return ret;
}
