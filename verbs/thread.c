/* SPDX-License-Identifier: MIT */
/*
 * The wire to the daemon and the two threads of a context.
 *
 * Packets go out in VERBS_IOC_SEND ioctls of whole records on the command
 * file (abi/verbs_wire.h), gathered while the context's lock is held and
 * sent before it is let go. The reader thread blocks in read() on the
 * same file and hands each packet to its QP; it also answers the daemon's
 * upcalls (cq.c). The timer thread sleeps until the nearest RC deadline.
 * Both end at ibv_close_device: VERBS_IOC_WAKE gives the reader a record
 * to wake on.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "abi/fast_wire.h"
#include "abi/verbs_ring.h"
#include "verbs/provider.h"

/* A read of at most this much: one FUSE request (its max_read is more),
 * so it never waits for a second piece. */
#define IN_MAX		(64 * 1024)

uint64_t ibemu_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int ibemu_ioc(struct ibemu_context *ctx, unsigned long cmd, void *arg)
{
	/* Packets and QPs over the fast path when the context has it; the
	 * FUSE file's own (an upcall's end, a wake-up) stay there. */
	if (ctx->fast_chan >= 0 && (cmd == VERBS_IOC_SEND || verbs_ioc_is_qp((unsigned)cmd)))
		return ibemu_fast_ioc(ctx, cmd, arg);
	return ioctl(ctx->vctx.context.cmd_fd, cmd, arg);
}

/* ---- out ---------------------------------------------------------------- */

/* How long a held-back context waits before it asks again when no
 * credit came (the receiver may have been found stuck: then the daemon
 * takes the packets and drops them for it). */
#define RETRY_HELD_US	50000

/* Packets go by ioctl, never write: abi/verbs_wire.h says why. Held back
 * (EAGAIN: a receiver is full, docs/verbs.md "Flow control"), they stay
 * until a credit comes or the timer asks again; nothing here waits. */
void ibemu_flush(struct ibemu_context *ctx)
{
	if (!ctx->out_len || ctx->tx_held)
		return;
	ctx->out->len = (uint32_t)ctx->out_len;
	if (ibemu_ioc(ctx, VERBS_IOC_SEND, ctx->out) < 0) {
		if (errno == EAGAIN) {
			ctx->tx_held = true;
			ctx->held_since_us = ibemu_now_us();
			ibemu_timer_at(ctx, ctx->held_since_us + RETRY_HELD_US);
			return;
		}
		/* A packet the daemon refuses is lost on the wire: RC
		 * resends, UD does not; a refusal is a bug here: say it,
		 * once (a program that closed our fds would be told at
		 * every batch). */
		if (!ctx->said_refused)
			ibemu_err("the ibemu daemon refused %zu bytes of packets: %s%s",
				  ctx->out_len, strerror(errno),
				  errno == EBADF ? " (the program closed the device's files)" : "");
		ctx->said_refused = true;
	}
	ctx->out_len = 0;
}

/* Held back no more (a credit, or time to ask again): what waits goes,
 * then what the send queues hold. */
static void tx_resume(struct ibemu_context *ctx)
{
	struct ibemu_qp *qp;

	ctx->tx_held = false;
	ibemu_flush(ctx);
	for (qp = ctx->qps; qp && !ctx->tx_held; qp = qp->next)
		ibemu_send_pending(qp);
}

bool ibemu_send_pkt(struct ibemu_qp *qp, const struct verbs_wire_pkt *hdr,
		    const void *payload)
{
	struct ibemu_context *ctx = qp->ctx;
	size_t len = sizeof(*hdr) + hdr->len;
	struct verbs_wire_pkt h = *hdr;
	char *at;

	if (ibemu_direct_send(qp, hdr, payload))
		return true;

	if (ctx->out_len + len > ctx->out_max)
		ibemu_flush(ctx);
	if (ctx->out_len + len > ctx->out_max) {
		/* Held back and full: a request waits in its send queue
		 * (false); an answer (an ACK, a READ response) is lost, as
		 * on a congested link, and the requester's timer asks
		 * again. */
		ctx->tx_lost++;
		return false;
	}
	/* Records follow each other unaligned: copied in, never cast. */
	at = ctx->out->data + ctx->out_len;
	h.rec.type = VERBS_REC_PKT;
	h.rec.len = (uint32_t)len;
	memcpy(at, &h, sizeof(h));
	if (hdr->len)
		memcpy(at + sizeof(h), payload, hdr->len);
	ctx->out_len += len;
	return true;
}

/* ---- the reader --------------------------------------------------------- */

void ibemu_on_packet(struct ibemu_context *ctx, const struct verbs_wire_pkt *p,
		     const char *payload)
{
	struct ibemu_qp *qp = ibemu_qp_find(ctx, p->dqpn);

	if (!qp)
		return;		/* destroyed since the daemon queued it */
	if (qp->qp.qp_type == IBV_QPT_UD)
		ibemu_ud_receive(qp, p, payload);
	else
		ibemu_rc_receive(qp, p, payload);
}

static void on_upcall(struct ibemu_context *ctx, const struct verbs_wire_upcall *up)
{
	struct verbs_ioc_upcall_done done = { .id = up->id };

	done.error = ibemu_chan_make(ctx, up);
	if (ibemu_ioc(ctx, VERBS_IOC_UPCALL_DONE, &done) < 0)
		ibemu_err("cannot end upcall %u: %s", up->id, strerror(errno));
}

/* @n bytes of whole records from the daemon, under ctx->lock; a record
 * of a type not known here (a ring's PAD) is passed over. */
void ibemu_on_records(struct ibemu_context *ctx, const char *buf, ssize_t n)
{
	bool credit = false;
	ssize_t off;

	for (off = 0; off + (ssize_t)sizeof(struct verbs_wire_rec) <= n; ) {
		struct verbs_wire_rec rec;

		memcpy(&rec, buf + off, sizeof(rec));
		if (rec.len < sizeof(rec) || rec.len > (size_t)(n - off))
			break;
		if (rec.type == VERBS_REC_PKT && rec.len >= sizeof(struct verbs_wire_pkt)) {
			struct verbs_wire_pkt p;

			memcpy(&p, buf + off, sizeof(p));
			if (p.len <= rec.len - sizeof(p))
				ibemu_on_packet(ctx, &p, buf + off + sizeof(p));
		} else if (rec.type == VERBS_REC_CREDIT) {
			credit = true;
		} else if (rec.type == VERBS_REC_INBOX) {
			ibemu_inbox_map(ctx);
		} else if (rec.type == VERBS_REC_UPCALL &&
			   rec.len >= sizeof(struct verbs_wire_upcall)) {
			struct verbs_wire_upcall up;

			memcpy(&up, buf + off, sizeof(up));
			/* Not under the lock: the writer waiting for this
			 * may hold the file's lock others wait for. */
			ibemu_flush(ctx);
			pthread_mutex_unlock(&ctx->lock);
			on_upcall(ctx, &up);
			pthread_mutex_lock(&ctx->lock);
		}
		off += rec.len;
	}
	if (credit)
		tx_resume(ctx);
	ibemu_flush(ctx);
}

/* A blocking call that ibemu_threads_stop may cancel: the threads are
 * cancelled there only while in one (a program that closed our fds
 * leaves them waiting on files no wake-up reaches), never while they hold
 * a lock. */
#define CANCELLABLE(call) ({ \
	int old_; \
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old_); \
	__typeof__(call) r_ = (call); \
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old_); \
	r_; })

/* The FUSE file's reader; the fast path's (fast_reader) when the
 * context has one: then only upcalls come here. */
static void *reader(void *arg)
{
	struct ibemu_context *ctx = arg;
	char *buf = ctx->rx_buf;
	int fd = ctx->vctx.context.cmd_fd;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		ssize_t n = CANCELLABLE(read(fd, buf, IN_MAX));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The daemon is gone: the device with it. */
			if (!ctx->stopping)
				ibemu_err("the ibemu daemon's file failed: %s",
					  n < 0 ? strerror(errno) : "end of file");
			break;
		}
		pthread_mutex_lock(&ctx->lock);
		ibemu_on_records(ctx, buf, n);
		pthread_mutex_unlock(&ctx->lock);
		if (ctx->stopping)
			break;
	}
	return NULL;
}

/*
 * While the program polls its CQs, it takes what the ring brings itself
 * (cq.c): the fast reader then looks only every POLLER_LOOK_MS, and asks
 * the daemon for no wake-up, whose byte would wake it for nothing. Once
 * the program stops polling (it waits on a completion channel, or does
 * something else), the reader sets the ring's sleeping flag and waits for
 * the daemon's byte. docs/verbs.md "Data path" says who looks when.
 */
#define POLLER_LOOK_MS	1
/*
 * A reader that took records for a program that does not poll looks on
 * for this long before it sleeps: the answer to what it delivered (a
 * ping-pong's next message, an RC ACK) then costs the program's wake-up
 * only, not the reader's too. qperf's rc_lat, which waits on a channel,
 * went from 20 to 9 us a half round trip (tcp_lat: 10), ud_lat from 20
 * to 6 (docs/performance.md); an idle context spends nothing.
 */
#define READER_LOOK_US	50

/* Wait at most @ms (-1: for ever) for the data socket: a wake-up byte,
 * or records sent on it before the ring (or without one). False when
 * the daemon is gone. */
static bool wait_socket(struct ibemu_context *ctx, char *buf, int ms)
{
	struct verbs_inbox *ib = __atomic_load_n(&ctx->inbox, __ATOMIC_ACQUIRE);
	struct pollfd p[2] = { { .fd = ctx->fast_data, .events = POLLIN },
			       { .fd = ib ? ctx->inbox_bell : -1, .events = POLLIN } };
	uint64_t rung;
	ssize_t n;

	if (CANCELLABLE(poll(p, 2, ms)) <= 0)
		return true;	/* timed out, or a signal */
	/* A sender's bell (direct.c): the inbox has records. */
	if (p[1].revents)	/* (or read by another look first) */
		(void)!read(ctx->inbox_bell, &rung, sizeof(rung));
	while ((n = recv(ctx->fast_data, buf, IN_MAX, MSG_DONTWAIT)) > 0) {
		struct fast_pkt h;

		if ((size_t)n < sizeof(h))
			continue;	/* a wake-up */
		/* Records, after their header (abi/fast_wire.h): a context's
		 * reads are inline and never held (SOCK_AHEAD_BYTES is far
		 * past the socket's own room). */
		memcpy(&h, buf, sizeof(h));
		if (h.flags || h.len != (size_t)n - sizeof(h))
			continue;
		pthread_mutex_lock(&ctx->lock);
		ibemu_on_records(ctx, buf + sizeof(h), (ssize_t)h.len);
		pthread_mutex_unlock(&ctx->lock);
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (!ctx->stopping)
			ibemu_err("the ibemu daemon's fast socket failed: %s",
				  n < 0 ? strerror(errno) : "end of file");
		return false;
	}
	return true;
}

/* The fast path's reader: the ring, or the data socket's datagrams. */
static void fast_read(struct ibemu_context *ctx, char *buf)
{
	unsigned long polls = 0;
	uint64_t took_us = 0;
	bool took;

	while (!ctx->stopping) {
		if (!ctx->ring) {
			if (!wait_socket(ctx, buf, -1))
				break;
			continue;
		}
		pthread_mutex_lock(&ctx->lock);
		ctx->defer_events = true;
		took = ibemu_ring_take(ctx);
		ibemu_unlock_events(ctx);
		if (took) {
			took_us = ibemu_now_us();
			continue;
		}
		if (__atomic_load_n(&ctx->polls, __ATOMIC_RELAXED) != polls) {
			polls = __atomic_load_n(&ctx->polls, __ATOMIC_RELAXED);
			if (!wait_socket(ctx, buf, POLLER_LOOK_MS))
				break;
			continue;
		}
		if (ibemu_now_us() - took_us < READER_LOOK_US) {
			sched_yield();	/* the woken program may need this CPU */
			continue;
		}
		/* Sleep: say so, then look once more (the daemon may have
		 * written before it saw the flag). */
		ibemu_rx_sleeping(ctx, true);	/* the daemon and senders wake it */
		if (!ibemu_records_pending(ctx) && !wait_socket(ctx, buf, -1))
			break;
		ibemu_rx_sleeping(ctx, false);
	}
}

static void *fast_reader(void *arg)
{
	struct ibemu_context *ctx = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	fast_read(ctx, ctx->fast_rx_buf);
	return NULL;
}

/* ---- the timer ---------------------------------------------------------- */

/*
 * A deadline at @when_us (0: none) was set: the timer thread hears of it
 * only when it sleeps past it. A wake-up a message (each send arms the
 * retransmission deadline, each ACK moves it) cost a ping-pong a thread
 * switch a packet on two CPUs; a later deadline is found when the timer
 * wakes at the earlier one.
 */
void ibemu_timer_at(struct ibemu_context *ctx, uint64_t when_us)
{
	if (when_us && (!ctx->timer_until_us || when_us < ctx->timer_until_us))
		pthread_cond_signal(&ctx->timer_cond);
}

static void *timer(void *arg)
{
	struct ibemu_context *ctx = arg;

	pthread_mutex_lock(&ctx->lock);
	while (!ctx->stopping) {
		uint64_t now = ibemu_now_us(), next = 0;
		struct ibemu_qp *qp;

		if (ctx->tx_held && now - ctx->held_since_us >= RETRY_HELD_US)
			tx_resume(ctx);
		if (ctx->tx_held)
			next = ctx->held_since_us + RETRY_HELD_US;
		for (qp = ctx->qps; qp; qp = qp->next) {
			if (!ibemu_qp_is_rc_req(qp))
				continue;
			ibemu_rc_timer(qp, now);
			if (qp->deadline_us && (!next || qp->deadline_us < next))
				next = qp->deadline_us;
			if (qp->rnr_until_us && (!next || qp->rnr_until_us < next))
				next = qp->rnr_until_us;
		}
		ibemu_flush(ctx);
		ctx->timer_until_us = next;
		if (!next) {
			pthread_cond_wait(&ctx->timer_cond, &ctx->lock);
		} else if (next > now) {
			struct timespec ts;

			ts.tv_sec = (time_t)(next / 1000000);
			ts.tv_nsec = (long)(next % 1000000) * 1000;
			pthread_cond_timedwait(&ctx->timer_cond, &ctx->lock, &ts);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

static void free_buffers(struct ibemu_context *ctx)
{
	free(ctx->out);
	free(ctx->rx_buf);
	free(ctx->fast_rx_buf);
	ctx->out = NULL;
	ctx->rx_buf = ctx->fast_rx_buf = NULL;
}

int ibemu_threads_start(struct ibemu_context *ctx)
{
	pthread_condattr_t ca;
	int err;

	/* A FAST_WRITE takes four times what an ioctl's struct holds:
	 * a quarter of the round trips for a stream (fastchan.c). */
	ctx->out_max = ctx->fast_chan >= 0 ? FAST_SEND_MAX : VERBS_IOC_SEND_MAX;
	ctx->out = malloc(offsetof(struct verbs_ioc_send, data) + ctx->out_max);
	/* The readers' buffers, made here and not by them: a thread's first
	 * malloc makes its arena (an mmap, then a munmap of the excess),
	 * and the program may be rewriting libc's munmap right then (Open
	 * MPI's memory hooks patch it as its openib BTL starts, just after
	 * opening the device), which a thread inside it does not survive. */
	ctx->rx_buf = malloc(IN_MAX);
	ctx->fast_rx_buf = ctx->fast_data >= 0 ? malloc(IN_MAX) : NULL;
	if (!ctx->out || !ctx->rx_buf || (ctx->fast_data >= 0 && !ctx->fast_rx_buf)) {
		free_buffers(ctx);
		return ENOMEM;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctx->timer_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&ctx->reader, NULL, reader, ctx);
	if (err) {
		free_buffers(ctx);
		return err;
	}
	err = pthread_create(&ctx->timer, NULL, timer, ctx);
	if (!err && ctx->fast_data >= 0 &&
	    (err = pthread_create(&ctx->fast_reader, NULL, fast_reader, ctx))) {
		pthread_mutex_lock(&ctx->lock);
		ctx->stopping = true;
		pthread_cond_signal(&ctx->timer_cond);
		pthread_mutex_unlock(&ctx->lock);
		pthread_join(ctx->timer, NULL);
	}
	if (err) {
		ctx->stopping = true;
		ibemu_ioc(ctx, VERBS_IOC_WAKE, NULL);
		pthread_join(ctx->reader, NULL);
		free_buffers(ctx);
		return err;
	}
	ctx->threads = true;
	return 0;
}

void ibemu_threads_stop(struct ibemu_context *ctx)
{
	if (!ctx->threads)
		return;
	pthread_mutex_lock(&ctx->lock);
	ctx->stopping = true;
	pthread_cond_signal(&ctx->timer_cond);
	pthread_mutex_unlock(&ctx->lock);
	/* The reader's read() ends at the wake-up record, the fast reader's
	 * poll() at the shutdown. Where the program closed our fds (or put
	 * others in their place) neither reaches them: they are cancelled,
	 * which they allow only there. */
	if (ibemu_ioc(ctx, VERBS_IOC_WAKE, NULL) < 0)
		pthread_cancel(ctx->reader);
	if (ctx->fast_data >= 0 && shutdown(ctx->fast_data, SHUT_RDWR) < 0)
		pthread_cancel(ctx->fast_reader);
	pthread_join(ctx->reader, NULL);
	pthread_join(ctx->timer, NULL);
	if (ctx->fast_data >= 0)
		pthread_join(ctx->fast_reader, NULL);
	ctx->threads = false;
	free_buffers(ctx);
}
