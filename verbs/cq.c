/* SPDX-License-Identifier: MIT */
/*
 * Completion queues and completion channels.
 *
 * A channel is what ibv_create_comp_channel() gets from the kernel: a new
 * file descriptor in the caller's process from which ibv_get_cq_event()
 * reads 8-byte records naming the CQ (struct ib_uverbs_comp_event_desc).
 * libibverbs writes that command to the command fd itself, bypassing the
 * provider; the daemon holds the write and asks our reader thread (an
 * upcall, docs/verbs.md "Completion channels"), which makes a socket pair
 * here, writes the descriptor number where the command says, and lets the
 * daemon answer the write.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/verbs_ring.h"
#include "verbs/provider.h"

/* Empty polls in a row between two sched_yield()s (ibemu_poll_cq): a few
 * microseconds of spinning, a share small enough not to show in a loop
 * that polls us beside other work. */
#define EMPTY_POLLS_YIELD	1024

/* ---- channels ----------------------------------------------------------- */

struct ibemu_chan {
	struct ibemu_chan *next;
	int app_fd;		/* the number the process has */
	int our_fd;		/* our end */
};

int ibemu_chan_make(struct ibemu_context *ctx, const struct verbs_wire_upcall *up)
{
	struct ibemu_chan *ch, **pp;
	uint32_t fd32;
	int sv[2];

	if (up->command != VERBS_CMD_CREATE_COMP_CHANNEL)
		return EOPNOTSUPP;
	/* Close-on-exec, as the kernel's (get_unused_fd_flags(O_CLOEXEC)). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		close(sv[0]);
		close(sv[1]);
		return ENOMEM;
	}
	ch->app_fd = sv[0];
	ch->our_fd = sv[1];
	pthread_mutex_lock(&ctx->chan_lock);
	/* A number the process closed and got again is a new channel. */
	for (pp = &ctx->chans; *pp; pp = &(*pp)->next)
		if ((*pp)->app_fd == ch->app_fd) {
			struct ibemu_chan *old = *pp;

			*pp = old->next;
			close(old->our_fd);
			free(old);
			break;
		}
	ch->next = ctx->chans;
	ctx->chans = ch;
	pthread_mutex_unlock(&ctx->chan_lock);
	/* struct ib_uverbs_create_comp_channel_resp, in the writer's memory:
	 * this process's, since the upcall went to the file it wrote. */
	fd32 = (uint32_t)ch->app_fd;
	memcpy((void *)(uintptr_t)up->response, &fd32, sizeof(fd32));
	return 0;
}

void ibemu_chans_free(struct ibemu_context *ctx)
{
	struct ibemu_chan *ch;

	pthread_mutex_lock(&ctx->chan_lock);
	while ((ch = ctx->chans)) {
		ctx->chans = ch->next;
		close(ch->our_fd);
		free(ch);
	}
	pthread_mutex_unlock(&ctx->chan_lock);
}

/* Our end of @channel, duplicated for a CQ; -1 if it is not ours. */
static int chan_fd_for(struct ibemu_context *ctx, struct ibv_comp_channel *channel)
{
	struct ibemu_chan *ch;
	int fd = -1;

	pthread_mutex_lock(&ctx->chan_lock);
	for (ch = ctx->chans; ch; ch = ch->next)
		if (ch->app_fd == channel->fd) {
			fd = fcntl(ch->our_fd, F_DUPFD_CLOEXEC, 0);
			break;
		}
	pthread_mutex_unlock(&ctx->chan_lock);
	return fd;
}

/* ---- CQs ---------------------------------------------------------------- */

struct ibv_cq *ibemu_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector)
{
	return ibemu_cq_new(context, cqe, channel, comp_vector, NULL);
}

struct ibv_cq *ibemu_cq_new(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector, struct ibv_pd *pd)
{
	struct ibemu_cq *cq;

	if (cqe < 1 || cqe > IBEMU_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq || !(cq->ring = ibemu_queue_alloc(pd, (size_t)cqe, sizeof(*cq->ring),
						  IBEMU_RES_TYPE_CQ))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->pd = pd;
	cq->size = (unsigned)cqe;
	cq->chan_fd = -1;
	if (channel) {
		cq->chan_fd = chan_fd_for(to_ctx(context), channel);
		if (cq->chan_fd < 0) {
			ibemu_queue_free(pd, cq->ring, IBEMU_RES_TYPE_CQ);
			free(cq);
			errno = EINVAL;
			return NULL;
		}
	}
	/* libibverbs sets the rest (verbs_init_cq); ibv_cq.cqe is ours. */
	cq->cq.cqe = cqe;
	return &cq->cq;
}

int ibemu_destroy_cq(struct ibv_cq *ibcq)
{
	struct ibemu_context *ctx = to_ctx(ibcq->context);
	struct ibemu_cq *cq = to_cq(ibcq);
	struct ibemu_qp *qp;

	pthread_mutex_lock(&ctx->lock);
	for (qp = ctx->qps; qp; qp = qp->next)
		if (qp->qp.send_cq == ibcq || qp->qp.recv_cq == ibcq) {
			pthread_mutex_unlock(&ctx->lock);
			return EBUSY;
		}
	pthread_mutex_unlock(&ctx->lock);
	if (cq->chan_fd >= 0)
		close(cq->chan_fd);
	ibemu_queue_free(cq->pd, cq->ring, IBEMU_RES_TYPE_CQ);
	free(cq->ts);
	free(cq);
	return 0;
}

int ibemu_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct ibemu_context *ctx = to_ctx(ibcq->context);
	struct ibemu_cq *cq = to_cq(ibcq);
	int n = 0;

	/*
	 * An empty CQ costs a load, as on an HCA: UCX polls every device it
	 * opened on each progress, so a lock and a system call here slowed
	 * its shared-memory ping-pong 40-fold with an ibemu HCA merely open.
	 * A program that spins on us alone gives the CPU up now and then
	 * (every EMPTY_POLLS_YIELD empty polls): our reader and the daemon
	 * need it to bring what it waits for, on a machine of few cores.
	 */
	if (!__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE) && ctx->ring) {
		/* The fast path's ring (abi/verbs_ring.h): what it holds is
		 * ours to take, here, with a load to see that it is there;
		 * the fast reader, seeing us poll, leaves it to us. */
		__atomic_store_n(&ctx->polls, ctx->polls + 1, __ATOMIC_RELAXED);
		if (ibemu_records_pending(ctx)) {
			pthread_mutex_lock(&ctx->lock);
			ibemu_ring_take(ctx);
			pthread_mutex_unlock(&ctx->lock);
		}
	}
	if (!__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE)) {
		if (++cq->empty_polls % EMPTY_POLLS_YIELD == 0)
			sched_yield();
		return 0;
	}
	cq->empty_polls = 0;
	pthread_mutex_lock(&ctx->lock);
	while (n < num_entries && cq->count) {
		if (cq->ts)
			cq->cur_ts = cq->ts[cq->head];	/* the last one's, for cq_ex */
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&ctx->lock);
	return n;
}

bool ibemu_cq_take(struct ibemu_cq *cq, struct ibv_wc *wc)
{
	struct ibv_wc one;

	return ibemu_poll_cq(&cq->cq, 1, wc ? wc : &one) == 1;
}

int ibemu_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct ibemu_context *ctx = to_ctx(ibcq->context);
	struct ibemu_cq *cq = to_cq(ibcq);
	struct ibv_wc *ring;
	uint64_t *ts = NULL;
	unsigned i;

	if (cqe < 1 || cqe > IBEMU_MAX_CQE)
		return EINVAL;
	if (!(ring = ibemu_queue_alloc(cq->pd, (size_t)cqe, sizeof(*ring), IBEMU_RES_TYPE_CQ)) ||
	    (cq->ts && !(ts = calloc((size_t)cqe, sizeof(*ts))))) {
		ibemu_queue_free(cq->pd, ring, IBEMU_RES_TYPE_CQ);
		return ENOMEM;
	}
	pthread_mutex_lock(&ctx->lock);
	if ((unsigned)cqe < cq->count) {
		/* What it holds must fit, as a driver's resize keeps every
		 * completion (mlx5_resize_cq: EINVAL below the outstanding). */
		pthread_mutex_unlock(&ctx->lock);
		ibemu_queue_free(cq->pd, ring, IBEMU_RES_TYPE_CQ);
		free(ts);
		return EINVAL;
	}
	for (i = 0; i < cq->count; i++) {
		ring[i] = cq->ring[(cq->head + i) % cq->size];
		if (ts)
			ts[i] = cq->ts[(cq->head + i) % cq->size];
	}
	ibemu_queue_free(cq->pd, cq->ring, IBEMU_RES_TYPE_CQ);
	free(cq->ts);
	cq->ring = ring;
	cq->ts = ts;
	cq->head = 0;
	cq->size = (unsigned)cqe;
	cq->cq.cqe = cqe;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int ibemu_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct ibemu_context *ctx = to_ctx(ibcq->context);
	struct ibemu_cq *cq = to_cq(ibcq);

	pthread_mutex_lock(&ctx->lock);
	cq->armed = true;
	cq->solicited_only = solicited_only != 0;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* The event of an armed CQ: one record on the channel, then disarmed
 * until the next ibv_req_notify_cq (IBA 11.4.2.4). */
static void notify(struct ibemu_cq *cq)
{
	struct ibemu_context *ctx = to_ctx(cq->cq.context);
	uint64_t handle = (uint64_t)(uintptr_t)&cq->cq;

	cq->armed = false;
	if (cq->chan_fd < 0)
		return;
	/* The reader sends it once it has let the lock go (thread.c). */
	if (ctx->defer_events && ctx->n_due < IBEMU_EVENTS_DUE) {
		ctx->due[ctx->n_due].fd = cq->chan_fd;
		ctx->due[ctx->n_due++].handle = handle;
		return;
	}
	(void)!send(cq->chan_fd, &handle, sizeof(handle), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ibemu_unlock_events(struct ibemu_context *ctx)
{
	struct ibemu_event_due due[IBEMU_EVENTS_DUE];
	unsigned i, n = ctx->n_due;

	memcpy(due, ctx->due, sizeof(due[0]) * n);
	ctx->n_due = 0;
	ctx->defer_events = false;
	pthread_mutex_unlock(&ctx->lock);
	for (i = 0; i < n; i++)
		(void)!send(due[i].fd, &due[i].handle, sizeof(due[i].handle),
			    MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ibemu_cq_clean(struct ibemu_cq *cq, uint32_t qpn)
{
	unsigned i, kept = 0;

	for (i = 0; i < cq->count; i++) {
		unsigned from = (cq->head + i) % cq->size, to = (cq->head + kept) % cq->size;

		if (cq->ring[from].qp_num == qpn)
			continue;
		cq->ring[to] = cq->ring[from];
		if (cq->ts)
			cq->ts[to] = cq->ts[from];
		kept++;
	}
	__atomic_store_n(&cq->count, kept, __ATOMIC_RELEASE);
}

void ibemu_cq_add(struct ibemu_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	if (cq->count == cq->size) {
		/* An overrun: the CQ is in error (IBA 11.4.2.1); say it once. */
		if (!cq->overrun)
			ibemu_err("CQ %p overrun (%u entries): completions lost", (void *)cq,
				  cq->size);
		cq->overrun = true;
		return;
	}
	cq->ring[(cq->head + cq->count) % cq->size] = *wc;
	if (cq->ts)	/* when the HCA would have written the CQE */
		cq->ts[(cq->head + cq->count) % cq->size] = ibemu_clock_ns();
	/* Seen by an empty poll without the lock: the entry before it. */
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELEASE);
	if (cq->armed && (!cq->solicited_only || solicited || wc->status != IBV_WC_SUCCESS))
		notify(cq);
}
