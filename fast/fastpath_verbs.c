/* SPDX-License-Identifier: MIT */
/* The verbs files over the fast path; see fastpath_verbs.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "fast/fastpath_verbs.h"
#include "fast/fastpath_verbs_priv.h"
#include "fast/fastslot.h"
#include "kernel/ucma.h"
#include "kernel/uverbs.h"
#include "lib/log.h"
#include "lib/verbs_ring.h"
#include "lib/verbs_wire.h"

static gboolean on_room(gint fd, GIOCondition cond, gpointer data);

/*
 * Files whose push() was asked for while another ran: reading a context's
 * queue gives its held-back senders their credit (kernel/uverbs_data.c),
 * which queues a record for them and calls their push() from inside the
 * first one's read, into the one buffer. They wait here until it is done.
 * (A sender's push run there overwrote the receiver's datagram: one in
 * each flow-controlled flood was lost.)
 */
static GPtrArray *deferred;
static bool pushing;

/*
 * Ring mode: the records of @b (@len bytes) from *@off on go into the
 * ring (lib/verbs_ring.h), as many as fit; *@off moves past them. False
 * when one did not fit: want_room is set and the provider's byte on the
 * data socket will bring us back.
 */
static bool to_ring(struct fast_verbs *fv, const uint8_t *b, size_t len, size_t *off)
{
	struct verbs_ring *r = fv->ring;
	bool ok = true;

	while (*off + sizeof(struct verbs_wire_rec) <= len) {
		struct verbs_wire_rec rec;
		uint32_t skip;

		memcpy(&rec, b + *off, sizeof(rec));
		if (rec.len < sizeof(rec) || rec.len > len - *off)
			break;	/* uverbs_ctx_read's records are whole: not here */
		skip = verbs_ring_skip(fv->head, rec.len, VERBS_RING_DATA);
		if (fv->head + skip + rec.len - verbs_ring_load(&r->tail) > VERBS_RING_DATA) {
			/* Full: ask for a byte when there is room, then look
			 * once more (it may have come between). */
			__atomic_store_n(&r->want_room, 1, __ATOMIC_SEQ_CST);
			if (fv->head + skip + rec.len - verbs_ring_load(&r->tail) > VERBS_RING_DATA) {
				ok = false;
				break;
			}
			__atomic_store_n(&r->want_room, 0, __ATOMIC_SEQ_CST);
		}
		verbs_ring_pad(r->data, VERBS_RING_DATA, fv->head, skip);
		fv->head += skip;
		memcpy(&r->data[fv->head % VERBS_RING_DATA], b + *off, rec.len);
		fv->head += rec.len;
		*off += rec.len;
		verbs_ring_store(&r->head, fv->head);
	}
	/* The provider's reader waits on the socket: wake it. */
	if (__atomic_exchange_n(&r->sleeping, 0, __ATOMIC_SEQ_CST))
		(void)send(fv->data, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return ok;
}

/* Move what is queued to the data socket, as room allows. */
static void push(void *data)
{
	static uint8_t buf[FAST_INLINE_MAX];
	struct fast_verbs *fv = data;

	if (pushing) {
		if (!deferred)
			deferred = g_ptr_array_new();
		if (!g_ptr_array_find(deferred, fv, NULL))
			g_ptr_array_add(deferred, fv);
		return;
	}
	pushing = true;
	for (;;) {
		if (!fv->pend) {
			ssize_t n = fv->ctx ? uverbs_ctx_read(fv->ctx, buf, sizeof(buf)) :
				    fv->ev ? uverbs_events_read(fv->ev, buf, sizeof(struct verbs_wire_event)) :
				    ucma_read_event(fv->cm, buf, sizeof(buf));
			size_t off = 0;

			if (n <= 0)	/* -EAGAIN: nothing queued */
				break;
			/* Into the ring straight from here; only what does
			 * not fit waits in pend. */
			if (fv->ring && to_ring(fv, buf, (size_t)n, &off))
				continue;
			fv->pend = g_memdup2(buf + off, (gsize)((size_t)n - off));
			fv->pend_len = (size_t)n - off;
			fv->pend_off = 0;
			if (fv->ring)
				break;	/* the provider's byte brings us back */
		}
		if (fv->ring) {
			if (!to_ring(fv, fv->pend, fv->pend_len, &fv->pend_off))
				break;	/* the provider's byte brings us back */
		} else if (send(fv->data, fv->pend, fv->pend_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
			   errno == EAGAIN) {
			if (!fv->out_watch)
				fv->out_watch = g_unix_fd_add(fv->data, G_IO_OUT, on_room, fv);
			break;
		}
		/* Sent, or the host closed its end (its channel's close
		 * follows): either way it is gone from here. */
		g_clear_pointer(&fv->pend, g_free);
	}
	pushing = false;
	/* Nothing is freed while a push runs: those waiting are alive. */
	while (deferred && deferred->len)
		push(g_ptr_array_steal_index(deferred, 0));
}

static gboolean on_room(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_verbs *fv = data;

	(void)fd;
	(void)cond;
	fv->out_watch = 0;
	push(fv);
	return G_SOURCE_REMOVE;
}

/* Ring mode: the provider made room (a byte on the data socket). */
static gboolean on_wake(gint fd, GIOCondition cond, gpointer data)
{
	struct fast_verbs *fv = data;
	char b[64];

	if (cond & (G_IO_HUP | G_IO_ERR)) {	/* its channel's close follows */
		fv->in_watch = 0;
		return G_SOURCE_REMOVE;
	}
	/* The provider took want_room back before it sent the byte. */
	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
	push(fv);
	return G_SOURCE_CONTINUE;
}

/*
 * Rings at most, 128 MiB of them: beyond the 256 MiB that contexts may
 * hold queued (kernel/uverbs_data.c), this is what their packets may
 * take in the emulator. A context past it is served as an attached
 * host's is, on its data socket (README "Limits").
 */
#define RINGS_MAX	256
static unsigned rings;

int fast_verbs_ring(struct fast_verbs *fv, bool direct, int *memfd)
{
	void *m;

	*memfd = -1;
	if (!fv->ctx)
		return -EINVAL;
	if (fv->ring)
		return -EBUSY;
	if (rings >= RINGS_MAX)
		return -ENOSPC;
	/* Sealed, as the umad slot. What the client writes in it (tail,
	 * flags, records) can cost only its own packets: every offset here
	 * is from head, which is ours. */
	if (!(m = fast_shared_map("ibemu-verbs-ring", VERBS_RING_BYTES, memfd)))
		return -errno;
	fv->ring = m;
	fv->direct_ok = direct;
	rings++;
	/* What was sent on the socket before stays there, read first: the
	 * provider reads the socket until it has the answer to this. */
	fv->in_watch = g_unix_fd_add(fv->data, G_IO_IN | G_IO_HUP | G_IO_ERR, on_wake, fv);
	return 0;
}

struct fast_verbs *fast_verbs_open(struct vnode *v, int *client_fd)
{
	struct fast_verbs *fv;
	int sv[2];

	const struct kfile_node *lower = v->ops == &uverbs_cmd_fops ? v->ctx : NULL;

	/* This emulator's files only: a context, events, rdma_cm. */
	if (v->kind != VN_FILE || (lower && lower->ops != &uverbs_ctx_fops) ||
	    (!lower && v->ops != &uverbs_events_fops && v->ops != &ucma_fops)) {
		*client_fd = -ENOENT;
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		*client_fd = -errno;
		return NULL;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fv = g_new0(struct fast_verbs, 1);
	fv->data = sv[0];
	if (lower) {
		fv->ctx = uverbs_ctx_open(lower->dev);
		uverbs_ctx_set_wakeup(fv->ctx, push, fv);
		uverbs_ctx_set_owner(fv->ctx, fv);	/* the direct path's */
	} else if (v->ops == &ucma_fops) {
		fv->cm = ucma_open(v->ctx);
		ucma_set_wakeup(fv->cm, push, fv);
	} else {
		fv->ev = uverbs_events_open(v->ctx);
		uverbs_events_set_wakeup(fv->ev, push, fv);
	}
	*client_fd = sv[1];
	return fv;
}

/* devfile_verbs.c's ioctl_vcmd, for what is not the attached host's own
 * (a completion channel's upcall and a wake-up are: they never come). */
static int64_t do_ioctl(struct fast_verbs *fv, unsigned cmd, const uint8_t *payload, size_t n,
			void *out, uint32_t *out_len)
{
	_Alignas(8) char qp[VERBS_IOC_QP_ARG_MAX];
	size_t len = _IOC_SIZE(cmd);
	int r;

	if (!verbs_ioc_is_qp(cmd))
		return -ENOTTY;
	if (n < len)
		return -EFAULT;
	memcpy(qp, payload, len);
	if ((r = uverbs_ctx_ioctl(fv->ctx, cmd, qp)) < 0)
		return r;
	_Static_assert(VERBS_IOC_QP_ARG_MAX <= FAST_VERBS_OUT_MAX, "the QP ioctls' structs fit");
	memcpy(out, qp, len);
	*out_len = (uint32_t)len;
	return 0;
}

/* The rdma_cm file's ioctls (lib/ucma_wire.h), as dev/devfile_ucma.c's. */
static int64_t do_ucma(struct fast_verbs *fv, const struct fast_req *rq, const uint8_t *payload,
		       size_t n, void *out, uint32_t *out_len)
{
	static struct ucma_wire_cmd w;	/* 1 KiB: off the stack */
	uint64_t token;

	_Static_assert(sizeof(w) <= FAST_VERBS_OUT_MAX, "the rdma_cm ioctl's struct fits");
	if (rq->op != FAST_IOCTL)
		return -EOPNOTSUPP;	/* a read is an event: the data socket's */
	if (rq->arg == UCMA_IOC_TOKEN) {
		token = ucma_file_token(fv->cm);
		memcpy(out, &token, sizeof(token));
		*out_len = sizeof(token);
		return 0;
	}
	if (rq->arg != UCMA_IOC_CMD)
		return -ENOTTY;
	if (n < sizeof(w))
		return -EFAULT;
	memcpy(&w, payload, sizeof(w));
	ucma_wire_serve(fv->cm, &w);
	memcpy(out, &w, sizeof(w));
	*out_len = sizeof(w);
	return 0;
}

int64_t fast_verbs_request(struct fast_verbs *fv, const struct fast_req *rq,
			   const uint8_t *payload, size_t n, void *out, uint32_t *out_len)
{
	uint32_t type;

	*out_len = 0;
	if (fv->cm)
		return do_ucma(fv, rq, payload, n, out, out_len);
	if (!fv->ctx)	/* the event file: reads only (ib_uverbs_async_event_fops) */
		return -EINVAL;
	switch (rq->op) {
	case FAST_WRITE:
		/* Packet records only: a uverbs command is the host's. */
		if (rq->flags || rq->arg != n || n < sizeof(struct verbs_wire_rec))
			return -EINVAL;
		memcpy(&type, payload, sizeof(type));
		if ((type & 0xffff0000u) != VERBS_REC_MAGIC)
			return -EOPNOTSUPP;
		return uverbs_ctx_write(fv->ctx, payload, n);
	case FAST_IOCTL:
		return do_ioctl(fv, (unsigned)rq->arg, payload, n, out, out_len);
	default:
		return -EOPNOTSUPP;
	}
}

void fast_verbs_free(struct fast_verbs *fv)
{
	if (!fv)
		return;
	if (deferred)
		g_ptr_array_remove(deferred, fv);
	fast_direct_forget(fv);	/* before its context: nothing refers to it */
	if (fv->in_watch)
		g_source_remove(fv->in_watch);
	if (fv->ring) {
		munmap(fv->ring, VERBS_RING_BYTES);
		rings--;
	}
	if (fv->out_watch)
		g_source_remove(fv->out_watch);
	if (fv->ctx)
		uverbs_ctx_close(fv->ctx);	/* its QP numbers go with it */
	if (fv->ev)
		uverbs_events_close(fv->ev);
	if (fv->cm)
		ucma_release(fv->cm);	/* its ids go, connected ones with a DREQ */
	close(fv->data);
	g_free(fv->pend);
	g_free(fv);
}
