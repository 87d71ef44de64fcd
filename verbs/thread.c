/* SPDX-License-Identifier: MIT */
/*
 * The wire to the daemon and the two threads of a context.
 *
 * Packets go out in VERBS_IOC_SEND ioctls of whole records on the command
 * file (lib/verbs_wire.h), gathered while the context's lock is held and
 * sent before it is let go. The reader thread blocks in read() on the
 * same file and hands each packet to its QP; it also answers the daemon's
 * upcalls (cq.c). The timer thread sleeps until the nearest RC deadline.
 * Both end at ibv_close_device: VERBS_IOC_WAKE gives the reader a record
 * to wake on.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

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
	return ioctl(ctx->vctx.context.cmd_fd, cmd, arg);
}

/* ---- out ---------------------------------------------------------------- */

/* How long a held-back context waits before it asks again when no
 * credit came (the receiver may have been found stuck: then the daemon
 * takes the packets and drops them for it). */
#define RETRY_HELD_US	50000

/* Packets go by ioctl, never write: lib/verbs_wire.h says why. Held back
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
			ibemu_kick_timer(ctx);
			return;
		}
		/* A packet the daemon refuses is lost on the wire: RC
		 * resends, UD does not; a refusal is a bug here: say it. */
		fprintf(stderr, "libibemu: the ibemu daemon refused %zu bytes of packets: %s\n",
			ctx->out_len, strerror(errno));
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

bool ibemu_send_pkt(struct ibemu_context *ctx, const struct verbs_wire_pkt *hdr,
		    const void *payload)
{
	size_t len = sizeof(*hdr) + hdr->len;
	struct verbs_wire_pkt h = *hdr;
	char *at;

	if (ctx->out_len + len > VERBS_IOC_SEND_MAX)
		ibemu_flush(ctx);
	if (ctx->out_len + len > VERBS_IOC_SEND_MAX) {
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

static void on_packet(struct ibemu_context *ctx, const struct verbs_wire_pkt *p,
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
		fprintf(stderr, "libibemu: cannot end upcall %u: %s\n", up->id, strerror(errno));
}

static void *reader(void *arg)
{
	struct ibemu_context *ctx = arg;
	char *buf = malloc(IN_MAX);
	int fd = ctx->vctx.context.cmd_fd;

	while (buf) {
		ssize_t n = read(fd, buf, IN_MAX), off;
		bool credit = false;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The daemon is gone: the device with it. */
			if (!ctx->stopping)
				fprintf(stderr, "libibemu: the ibemu daemon's file failed: %s\n",
					n < 0 ? strerror(errno) : "end of file");
			break;
		}
		pthread_mutex_lock(&ctx->lock);
		for (off = 0; off + (ssize_t)sizeof(struct verbs_wire_rec) <= n; ) {
			struct verbs_wire_rec rec;

			memcpy(&rec, buf + off, sizeof(rec));
			if (rec.len < sizeof(rec) || rec.len > (size_t)(n - off))
				break;
			if (rec.type == VERBS_REC_PKT && rec.len >= sizeof(struct verbs_wire_pkt)) {
				struct verbs_wire_pkt p;

				memcpy(&p, buf + off, sizeof(p));
				if (p.len <= rec.len - sizeof(p))
					on_packet(ctx, &p, buf + off + sizeof(p));
			} else if (rec.type == VERBS_REC_CREDIT) {
				credit = true;
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
		pthread_mutex_unlock(&ctx->lock);
		if (ctx->stopping)
			break;
	}
	free(buf);
	return NULL;
}

/* ---- the timer ---------------------------------------------------------- */

void ibemu_kick_timer(struct ibemu_context *ctx)
{
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

int ibemu_threads_start(struct ibemu_context *ctx)
{
	pthread_condattr_t ca;
	int err;

	ctx->out = malloc(sizeof(*ctx->out));
	if (!ctx->out)
		return ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctx->timer_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&ctx->reader, NULL, reader, ctx);
	if (err)
		return err;
	err = pthread_create(&ctx->timer, NULL, timer, ctx);
	if (err) {
		ctx->stopping = true;
		ibemu_ioc(ctx, VERBS_IOC_WAKE, NULL);
		pthread_join(ctx->reader, NULL);
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
	ibemu_ioc(ctx, VERBS_IOC_WAKE, NULL);
	pthread_join(ctx->reader, NULL);
	pthread_join(ctx->timer, NULL);
	ctx->threads = false;
	free(ctx->out);
	ctx->out = NULL;
}
