/* SPDX-License-Identifier: MIT */
/*
 * The ibemu libibverbs provider (docs/verbs.md): every emulated CA is a
 * device whose attributes and async events come from the ibemu daemon's
 * files in the device's sysfs directory (abi/verbs_wire.h).
 *
 * The data path: the provider is the HCA's transport layer (QPs, RC
 * reliability, memory keys) and the daemon the wire. All data-path state
 * of a context is under its one lock; a reader thread takes the packets
 * the daemon delivers and a timer thread retransmits (thread.c).
 */
#ifndef IBEMU_VERBS_PROVIDER_H
#define IBEMU_VERBS_PROVIDER_H

#include <pthread.h>

#include "abi/verbs_inbox.h"
#include "abi/verbs_wire.h"
#include "verbs/abi.h"

/* Limits the device reports (abi/verbs_wire.h) that the provider keeps. */
#define IBEMU_MAX_SGE		VERBS_MAX_SGE
#define IBEMU_MAX_WR		VERBS_MAX_QP_WR
#define IBEMU_MAX_CQE		VERBS_MAX_CQE
#define IBEMU_MAX_INLINE	512
#define IBEMU_MIN_INLINE	64	/* every QP's, whatever it asked */
#define IBEMU_MAX_RD_ATOM	VERBS_MAX_RD_ATOM
/* UD receive buffers start with room for a GRH (IBA 11.4.1.2). */
#define IBEMU_GRH_BYTES		40
/* Ports a device may have whose link layer is kept (query.c). */
#define IBEMU_MAX_PORTS		16
/* GIDs a port has (GUIDCap; ibemu_port's gid_tbl_len). */
#define IBEMU_GID_TBL_LEN	8

/* As many completion events as a reader's look defers (cq.c); past
 * them they go at once. */
#define IBEMU_EVENTS_DUE	16
/* Receiving contexts whose eventfd a context holds at once (direct.c):
 * one per context it talks to the short way; past them it takes over one
 * no QP writes to, or the daemon's way. */
#define IBEMU_PEERS_MAX		32

struct ibemu_device {
	struct verbs_device vdev;	/* first: libibverbs frees through it */
};

struct ibemu_qp;
struct ibemu_mr;
struct ibemu_pd;
struct ibemu_chan;

struct ibemu_context {
	struct verbs_context vctx;	/* first: see alloc_context */
	uint32_t next_pd_handle;
	struct ibemu_pd *pds;		/* list, under lock (pd.c) */
	/* An imported context (import.c): the context whose PDs and
	 * regions it sees, or NULL; under lock, and cleared under it when
	 * that one goes. The process's contexts (reg_next) and what its
	 * command file is (fstat's) and says it is (the device's number). */
	struct ibemu_context *share;
	struct ibemu_context *reg_next;
	dev_t cmd_dev, cdev;
	ino_t cmd_ino;
	pthread_mutex_t lock;		/* the data path's state below */
	struct ibemu_qp *qps;		/* list */
	struct ibemu_mr *mrs;		/* list */
	uint32_t next_key;
	uint8_t nports;			/* 0 until first asked (qp.c) */
	uint8_t link[IBEMU_MAX_PORTS];	/* each port's link layer, 0 until asked */
	/* What this context holds of each, under lock (VERBS_MAX_*). */
	unsigned n_pd, n_mr, n_cq, n_ah, n_srq, n_mw;
	size_t dm_bytes;		/* device memory allocated (dm.c) */
	struct ibemu_mw *mws;		/* list, under lock (mw.c) */
	/* XRC SRQs by number (xrc.c), under lock. */
	struct ibemu_srq *xsrqs;
	uint32_t next_srqn;
	/* Packets waiting for one VERBS_IOC_SEND to the daemon (thread.c);
	 * tx_held: the daemon holds this context back (a receiver is full),
	 * since held_since_us; tx_lost: answers lost meanwhile. */
	struct verbs_ioc_send *out;	/* data: out_max bytes */
	size_t out_len, out_max;
	/* The readers' buffers, made by ibemu_threads_start's caller
	 * (thread.c says why). */
	char *rx_buf, *fast_rx_buf;
	bool tx_held;
	uint64_t held_since_us;
	uint64_t tx_lost;
	bool said_refused;	/* "refused" said once: a program that closed our fds */
	/* One packet's payload as it is gathered from memory (post.c, rc.c). */
	char payload[VERBS_PKT_MAX_PAYLOAD];
	/* Completion channels this process has (cq.c), under chan_lock:
	 * the reader thread makes them without the data path's lock. */
	pthread_mutex_t chan_lock;
	struct ibemu_chan *chans;
	/* The fast path's channel and data socket, or -1 (fastchan.c);
	 * fast_lock holds a request to its answer. */
	int fast_chan, fast_data;
	pthread_mutex_t fast_lock;
	/* Its receive ring (abi/verbs_ring.h), or NULL; polls: empty CQ
	 * polls so far, which the fast reader watches (thread.c). */
	struct verbs_ring *ring;
	unsigned long polls;
	/* The direct path (ring.c, abi/verbs_inbox.h): this context's
	 * binding page (NULL until a sender was bound to it) and its
	 * eventfd; its slots' sub-rings, each mapped at a fixed place of
	 * @rx_area (anonymous zeros while none: a look at it unlocked is
	 * safe), with the binding it was mapped for and how far it was
	 * taken; the eventfds of others it writes into. Under lock. */
	struct verbs_inbox *inbox;
	int inbox_bell;
	uint8_t *rx_area;
	struct ibemu_rx_sub {
		uint32_t gen;		/* 0: none mapped */
		uint64_t tail;
	} rx[VERBS_INBOX_SUBS];
	struct ibemu_peer {
		uint64_t id;		/* the daemon's; 0: a free slot */
		int bell;
	} peers[IBEMU_PEERS_MAX];
	/* Threads (thread.c); fast_reader reads fast_data. */
	pthread_t reader, timer, fast_reader;
	bool threads;
	/* Completion events the reader sends once it let the lock go (a
	 * program woken by one would wait for the lock at once), under lock. */
	bool defer_events;
	unsigned n_due;
	struct ibemu_event_due {
		int fd;
		uint64_t handle;
	} due[IBEMU_EVENTS_DUE];
	pthread_cond_t timer_cond;	/* with lock: a deadline changed */
	uint64_t timer_until_us;	/* when the timer wakes; 0: not before told */
	bool stopping;
};

/* The ibv_context libibverbs hands us is the last member of vctx. */
static inline struct ibemu_context *to_ctx(struct ibv_context *c)
{
	return (struct ibemu_context *)((char *)c - offsetof(struct ibemu_context, vctx.context));
}

/* The most a FAST_WRITE of packet records carries (a request's payload
 * is at most FAST_INLINE_MAX: fastchan.c asserts it). */
#define FAST_SEND_MAX	(4 * VERBS_IOC_SEND_MAX)

/* Everything the provider says goes through here, as rdma-core's
 * providers' through verbs_err: "libibemu: " and the line on stderr;
 * IBEMU_VERBS_LOG=0 silences it (README, "Running commands"). */
void ibemu_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fastchan.c: the data path over $IBEMU_FAST. Open: 0, or -1 when the
 * context keeps to its FUSE file; ibemu_fast_ioc is ibemu_ioc's there
 * (VERBS_IOC_SEND and the QP ioctls). */
int ibemu_fast_open(struct ibemu_context *ctx, const char *dev_path);
void ibemu_fast_close(struct ibemu_context *ctx);
int ibemu_fast_ioc(struct ibemu_context *ctx, unsigned long cmd, void *arg);
/* One request and its answer on the channel (a FAST_* op): its return, or
 * -errno; @out gets at most @out_max bytes of the answer, *@fd a passed
 * fd (or -1) when @fd is not NULL. */
int64_t ibemu_fast_ask(struct ibemu_context *ctx, uint32_t op, uint64_t arg, const void *in,
		       size_t n, void *out, size_t out_max, int *fd);

/* ring.c: the receive side. Take the records the ring holds, and the
 * inbox's first (under ctx->lock): false when none; whether either holds
 * records (a few loads); the fast reader is about to sleep (@on: the
 * daemon and senders are to wake it) or woke (no lock); map the binding
 * page and the sub-rings the daemon bound (VERBS_REC_INBOX, under lock),
 * taking what a new one holds at once; let them go. */
bool ibemu_ring_take(struct ibemu_context *ctx);
bool ibemu_records_pending(const struct ibemu_context *ctx);
void ibemu_rx_sleeping(struct ibemu_context *ctx, bool on);
void ibemu_inbox_map(struct ibemu_context *ctx);
void ibemu_inbox_unmap(struct ibemu_context *ctx);
/* direct.c: the direct path's sending side. A QP's grant let go (under
 * lock); let every grant and bell go. */
bool ibemu_direct_off(void);	/* IBEMU_DIRECT=0 */
void ibemu_direct_drop(struct ibemu_qp *qp);
void ibemu_direct_close(struct ibemu_context *ctx);
/* One packet from the daemon or an inbox to its QP (thread.c), under lock. */
void ibemu_on_packet(struct ibemu_context *ctx, const struct verbs_wire_pkt *p,
		     const char *payload);
/* Records from the daemon, @n bytes of them (thread.c), under ctx->lock. */
void ibemu_on_records(struct ibemu_context *ctx, const char *buf, ssize_t n);

/* Read the daemon file @name of @c's device into @buf (NUL-terminated):
 * 0, or an errno (ENOENT when it does not exist). */
int ibemu_read_file(struct ibv_context *c, const char *name, char *buf, size_t len);

/* query.c */
int ibemu_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int ibemu_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *port_attr);

/* pd.c */
struct ibv_pd *ibemu_alloc_pd(struct ibv_context *context);
int ibemu_dealloc_pd(struct ibv_pd *pd);
/* pd.c: thread and parent domains. The protection domain @pd stands for
 * in every check (itself, or a parent domain's PD); whether @pd is a
 * parent domain. */
struct ibv_td *ibemu_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int ibemu_dealloc_td(struct ibv_td *td);
struct ibv_pd *ibemu_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr);
struct ibv_pd *ibemu_limited_alloc_parent_domain(struct ibv_context *context,
						 struct ibv_parent_domain_init_attr *attr);
struct ibv_pd *ibemu_pd_prot(struct ibv_pd *pd);
/* An object on @pd made (@delta 1) or gone (-1): a PD in use cannot go. */
void ibemu_pd_hold(struct ibv_pd *pd, int delta);
bool ibemu_is_parent_domain(struct ibv_pd *pd);
/* A queue of @n entries of @size bytes (zeroed) for an object made on
 * @pd (NULL: none), from its parent domain's allocator when it has one,
 * with the resource type a program's allocator is told: this provider's
 * driver id is RDMA_DRIVER_UNKNOWN (0), the numbers mlx5dv's. Freed by
 * ibemu_queue_free with the same @pd. */
#define IBEMU_RES_TYPE_QP	1
#define IBEMU_RES_TYPE_SRQ	4
#define IBEMU_RES_TYPE_CQ	5
void *ibemu_queue_alloc(struct ibv_pd *pd, size_t n, size_t size, uint64_t type);
void ibemu_queue_free(struct ibv_pd *pd, void *q, uint64_t type);

/* ---- memory (mr.c) ------------------------------------------------------ */

struct ibemu_mr {
	struct verbs_mr vmr;
	struct ibemu_mr *next;
	char *host;		/* where iova is in this process */
	uint64_t iova;		/* what keys' addresses count from */
	uint64_t pinned;	/* pages it counts against RLIMIT_MEMLOCK */
	struct ibemu_dm *dm;	/* device memory it is on (dm.c), or NULL */
	bool imported;		/* ibv_import_mr's: keys only, in no list */
};
/* A new key's index (the high 24 bits; the low 8 are the caller's). */
uint32_t ibemu_new_key(struct ibemu_context *ctx);

/* pin.c: the kernel's checks of a region to pin (ib_umem_get): 0 and the
 * pages it counts in *@pages; EFAULT for a page not mapped (or not
 * writable, for a region that may be written); ENOMEM past
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK. ibemu_unpin gives them back. */
int ibemu_pin(void *addr, size_t length, int access, uint64_t *pages);
void ibemu_unpin(uint64_t pages);
/* The DMA of a registered region: copies that drop what would fault
 * (a page its owner unmapped after registering): pin.c. */
void ibemu_dma_write(void *dst, const void *src, size_t len);
/* Whether every page of [@p, @p + @len) is mapped (an ODP region's
 * access: pin.c). */
bool ibemu_dma_range_mapped(const void *p, size_t len);
/* Whether every page of it is mapped writable (an ODP region's write:
 * /proc/self/maps, a read of it each time). */
bool ibemu_dma_range_writable(const void *p, size_t len);
void ibemu_dma_read(void *dst, const void *src, size_t len);
/* Whether the page of @p is mapped (an atomic's word). */
bool ibemu_dma_mapped(const void *p, size_t len);

struct ibv_mr *ibemu_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int ibemu_dereg_mr(struct verbs_mr *vmr);
/* ibemu_reg_mr's region, pinned (checked and counted) or not. */
struct ibv_mr *ibemu_reg_region(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t hca_va, int access, bool pin);
/* dm.c: device memory, IBEMU_DM_SIZE_MAX a context (max_dm_size). A
 * region on it goes (under lock): ibemu_dm_unref. */
#define IBEMU_DM_SIZE_MAX	(256u * 1024)
struct ibemu_dm;
struct ibv_dm *ibemu_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int ibemu_free_dm(struct ibv_dm *dm);
struct ibv_mr *ibemu_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off,
			       size_t length, unsigned int access);
struct ibv_mr *ibemu_limited_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t off,
				       size_t length, unsigned int access);
void ibemu_dm_unref(struct ibemu_dm *dm);
int ibemu_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		    struct ibv_sge *sg_list, uint32_t num_sges);
/* ibv_rereg_mr: a new translation, PD or access for the same keys. */
int ibemu_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		   int access);
/* The region @key names in @pd, if [va, va + len) is in it with @access:
 * then *@host is where va is in this process. Under ctx->lock. */
bool ibemu_mr_check(struct ibemu_context *ctx, struct ibv_pd *pd, uint32_t key, bool remote,
		    uint64_t va, uint64_t len, int access, char **host);
/* Scatter-gather lists: check them (an IBV_WC_* status, 0 = fine), then
 * copy between them and a flat buffer at byte @off of the list. */
int ibemu_sge_check(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, int access, uint64_t *total);
void ibemu_sge_copy(struct ibemu_context *ctx, struct ibv_pd *pd, const struct ibv_sge *sg,
		    int n, uint64_t off, void *buf, size_t len, bool to_sge);

/* ---- completion queues and channels (cq.c) ------------------------------ */

struct ibemu_cq {
	union {
		struct ibv_cq cq;
		struct verbs_cq vcq;	/* made by ibv_create_cq_ex (cq_ex.c) */
	};
	struct ibv_wc cur;	/* cq_ex: the completion start/next_poll took */
	uint64_t cur_ts;	/* and its timestamp */
	struct ibv_wc *ring;	/* ibemu_queue_alloc's, of @pd */
	struct ibv_pd *pd;	/* the parent domain it was made on, or NULL */
	/* Each entry's completion time (ibemu_clock_ns), beside the ring
	 * where the CQ was made with a timestamp flag (cq_ex.c); NULL: no. */
	uint64_t *ts;
	unsigned size, head;
	unsigned count;		/* under the context's lock; read alone
				 * (atomically) by an empty poll */
	unsigned empty_polls;	/* polls that found none in a row (the
				 * poller's own: ibemu_poll_cq) */
	bool armed, solicited_only, overrun;
	int chan_fd;		/* our end of the channel's socket, or -1 */
};

static inline struct ibemu_cq *to_cq(struct ibv_cq *cq)
{
	return (struct ibemu_cq *)cq;
}

struct ibv_cq *ibemu_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector);
int ibemu_destroy_cq(struct ibv_cq *cq);
/* ibemu_create_cq's CQ, its ring from @pd's allocators (a parent domain:
 * ibv_create_cq_ex's IBV_CQ_INIT_ATTR_MASK_PD), or NULL. */
struct ibv_cq *ibemu_cq_new(struct ibv_context *context, int cqe,
			    struct ibv_comp_channel *channel, int comp_vector, struct ibv_pd *pd);
int ibemu_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int ibemu_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* ibv_resize_cq: room for @cqe, what is queued kept; EINVAL below it. */
int ibemu_resize_cq(struct ibv_cq *cq, int cqe);
/* ibv_create_cq_ex (cq_ex.c): the same CQ, polled also by start_poll. */
struct ibv_cq_ex *ibemu_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
/* Take the oldest completion into @wc, its time into cq->cur_ts: false
 * when none (cq.c). */
bool ibemu_cq_take(struct ibemu_cq *cq, struct ibv_wc *wc);
/* The device's free-running clock: CLOCK_MONOTONIC in ns, which
 * hca_core_clock (1 GHz) says are its cycles (cq_ex.c). */
#define IBEMU_CORE_CLOCK_KHZ	1000000
uint64_t ibemu_clock_ns(void);
int ibemu_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);
/* The completions of QP @qpn taken out (under ctx->lock), the others
 * kept in order (a QP put in Reset). */
void ibemu_cq_clean(struct ibemu_cq *cq, uint32_t qpn);
/* Add a completion (under ctx->lock); @solicited: the SE bit came. */
void ibemu_cq_add(struct ibemu_cq *cq, const struct ibv_wc *wc, bool solicited);
/* Unlock ctx->lock, then send the events deferred meanwhile (a reader
 * that set defer_events under it). */
void ibemu_unlock_events(struct ibemu_context *ctx);
/* Make a completion channel for the upcall @up (reader thread). */
int ibemu_chan_make(struct ibemu_context *ctx, const struct verbs_wire_upcall *up);
void ibemu_chans_free(struct ibemu_context *ctx);

/* ---- queues (qp.c, srq.c, post.c) -------------------------------------- */

/* A receive work request, as posted. */
struct ibemu_rwqe {
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge sg[IBEMU_MAX_SGE];
};

/* Posted receive WRs in order: a QP's receive queue or an SRQ (srq.c). */
struct ibemu_rq {
	struct ibemu_rwqe *ring;	/* NULL: a QP with an SRQ has none */
	unsigned size, head, count;	/* size: one more than it holds */
};

/* A ring for @max_wr WRs: 0, or ENOMEM. */
int ibemu_rq_init(struct ibemu_rq *rq, unsigned max_wr, struct ibv_pd *pd, uint64_t type);
/* Append @wr: 0, EINVAL past @max_sge SGEs, ENOMEM when full. */
int ibemu_rq_push(struct ibemu_rq *rq, const struct ibv_recv_wr *wr, unsigned max_sge);
/* Take the oldest into @out: false when empty. */
bool ibemu_rq_pop(struct ibemu_rq *rq, struct ibemu_rwqe *out);

struct ibemu_srq {
	struct ibv_srq srq;
	struct ibemu_rq rq;
	unsigned limit;		/* SRQ_LIMIT_REACHED below this; 0 = off */
	/* An XRC SRQ (xrc.c): its domain, the CQ its receives complete
	 * on, the number XRC requests name it by; in ctx->xsrqs. */
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srqn;
	struct ibemu_srq *next;
};

/* A send work request as posted, and its progress on an RC QP. */
struct ibemu_swqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned send_flags;
	uint32_t imm;
	int num_sge;
	struct ibv_sge sg[IBEMU_MAX_SGE];
	char *inline_data;	/* IBV_SEND_INLINE: a copy, owned */
	uint64_t len;
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t swap_add, compare;	/* an atomic's operands, as AtomicETH's */
	uint32_t remote_srqn;	/* XRC: the target's SRQ (XRCETH) */
	/* Memory windows (mw.c): a bind's window, and its new R_Key in
	 * rkey; LOCAL_INV's and SEND_WITH_INV's R_Key is in rkey too. */
	struct ibv_mw *mw;
	struct ibv_mw_bind_info bind;
	/* UD */
	struct ibv_ah_attr ah;
	uint32_t remote_qpn, remote_qkey;
	/* RC */
	uint32_t psn, npkts;	/* the PSNs it takes: psn .. psn + npkts - 1 */
	uint32_t read_next;	/* RDMA READ: the next response PSN expected */
	int local_status;	/* a local WR's (mw.c), done when it went */
	uint32_t sent_pkts;	/* of its packets on the wire (flow control) */
	uint32_t acked_pkts;	/* of a SEND's or WRITE's, acknowledged (rc.c) */
};

struct ibemu_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

/* A WR built by the ibv_wr_* calls (qp_ex.c), posted at wr_complete. */
struct ibemu_wr_ex {
	struct ibv_send_wr wr;
	struct ibv_sge sg[IBEMU_MAX_SGE];
	void *inline_buf;	/* wr_set_inline_data*'s copy, or NULL */
};

/* A QP's grant for the direct path (direct.c): for packets whose header
 * is like @key, into @sub (its own mapping of its sub-ring) of @peer's
 * inbox; none while @sub is NULL, and none asked for before @retry_us. */
struct ibemu_dtx {
	struct verbs_wire_pkt key;
	struct verbs_direct_grant g;
	struct ibemu_peer *peer;
	struct verbs_ring *sub;
	uint64_t retry_us, backoff_us;
};

struct ibemu_qp {
	union {
		struct ibv_qp qp;
		struct verbs_qp vqp;	/* made with send_ops_flags (qp_ex.c) */
	};
	/* The ibv_wr_* batch between wr_start and wr_complete (qp_ex.c). */
	struct ibemu_wr_ex *batch;
	unsigned batch_n, batch_cap;
	int batch_err;		/* the first error of the batch: wr_complete's */
	struct ibemu_qp *next;
	struct ibemu_context *ctx;
	/* An XRC target: its domain, and the SRQ the request it is taking
	 * named (XRCETH), whose PD and CQ its receives use. */
	struct ibv_xrcd *xrcd;
	struct ibemu_srq *xsrq;
	enum ibv_qp_state state;
	struct ibv_qp_cap cap;
	bool sq_sig_all;
	uint8_t port;
	bool roce;		/* the port's link layer Ethernet (modify_qp) */
	uint16_t pkey_index;
	uint32_t qkey;
	int access;
	/* RC path */
	struct ibv_ah_attr ah;
	enum ibv_mtu path_mtu;
	uint32_t dest_qpn;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	/* Send queue: [sq_head, sq_tail) posted, [sq_head, sq_next) sent. */
	struct ibemu_swqe *sq;
	unsigned sq_size, sq_head, sq_next, sq_count;
	uint32_t sq_psn;	/* next PSN to give */
	unsigned retry_left, rnr_left;
	uint64_t deadline_us;	/* retransmit when no progress by then; 0 none */
	uint64_t rnr_until_us;	/* waiting out an RNR NAK; 0 none */
	struct ibemu_rq rq;	/* its receive queue (when no SRQ) */
	/* Responder */
	uint32_t epsn, msn;
	bool nak_sent;		/* a sequence NAK for epsn is out */
	bool recv_open;		/* a multi-packet SEND or WRITE is in progress */
	struct ibemu_rwqe cur;	/* the receive WR it fills (SEND) */
	bool cur_has_wqe;
	uint64_t cur_off;
	uint64_t wr_va;		/* RDMA WRITE in progress: where the next goes */
	uint32_t wr_rkey, wr_len;
	uint32_t wr_total;
	/* The results of the last atomics executed, for a duplicate request
	 * to be answered with, not done again (IBA 9.4.5, 9.9.2.1). */
	struct { uint32_t psn; bool valid; uint64_t orig; } atomic_done[IBEMU_MAX_RD_ATOM];
	unsigned atomic_next;
	struct ibemu_dtx dtx;	/* the direct path */
};

/* RDMA READ and the atomics: their responses carry data, and at most
 * max_rd_atomic of them are outstanding (IBA 9.4.4, 9.4.5). */
static inline bool ibemu_wr_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
static inline bool ibemu_wr_is_rd_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || ibemu_wr_is_atomic(op);
}

static inline struct ibemu_qp *to_qp(struct ibv_qp *qp)
{
	return (struct ibemu_qp *)qp;
}

/* The PD and CQ of what a QP receives: an XRC target's are those of the
 * SRQ the request names (XRC: that SRQ's PD checks the keys). */
static inline struct ibv_pd *ibemu_rx_pd(const struct ibemu_qp *qp)
{
	return qp->xsrq ? qp->xsrq->srq.pd : qp->qp.pd;
}
static inline struct ibv_cq *ibemu_rx_cq(const struct ibemu_qp *qp)
{
	return qp->xsrq ? qp->xsrq->cq : qp->qp.recv_cq;
}
/* The requester of an RC-like connection: RC or an XRC initiator. */
static inline bool ibemu_qp_is_rc_req(const struct ibemu_qp *qp)
{
	return qp->qp.qp_type == IBV_QPT_RC || qp->qp.qp_type == IBV_QPT_XRC_SEND;
}

struct ibv_qp *ibemu_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* The QP of any type: @pd NULL and @xrcd for an XRC target. */
/* @flags: VERBS_QP_* (abi/verbs_wire.h), the daemon's to know. */
struct ibv_qp *ibemu_qp_new(struct ibv_context *context, struct ibv_pd *pd,
			    struct ibv_qp_init_attr *attr, struct ibv_xrcd *xrcd, uint32_t flags);
/* ibv_create_qp_ex (qp_ex.c): with send_ops_flags, the ibv_wr_* API. */
struct ibv_qp *ibemu_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
void ibemu_qp_ex_free(struct ibemu_qp *qp);
int ibemu_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int ibemu_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int ibemu_destroy_qp(struct ibv_qp *qp);
/* mw.c: memory windows (docs/verbs.md "Memory windows") */
struct ibemu_mw;
struct ibv_mw *ibemu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int ibemu_dealloc_mw(struct ibv_mw *mw);
int ibemu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
/* A BIND_MW or LOCAL_INV WR reaching the wire (rc.c): done at once, its
 * completion's status back (0: success). */
int ibemu_mw_local(struct ibemu_qp *qp, const struct ibemu_swqe *w);
/* A remote access by @rkey through @qp to a window: its place in memory
 * in *@host, or false (rc.c: remote access error). */
bool ibemu_mw_check(struct ibemu_qp *qp, uint32_t rkey, uint64_t va, uint64_t len, int access,
		    char **host);
/* SEND with Invalidate's R_Key at the target @qp: false when it names
 * no type 2 window bound through @qp. */
bool ibemu_mw_invalidate(struct ibemu_qp *qp, uint32_t rkey);
/* A region goes: windows bound to it are unbound (mr.c). */
void ibemu_mw_forget_mr(struct ibemu_context *ctx, struct ibemu_mr *mr);
/* A QP goes: type 2 windows bound through it are unbound (qp.c). */
void ibemu_mw_forget_qp(struct ibemu_context *ctx, struct ibemu_qp *qp);
/* A local operation, done when it reaches the wire, not sent. */
static inline bool ibemu_wr_is_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

/* xrc.c: XRC domains and SRQs (docs/verbs.md "XRC") */
struct ibv_xrcd *ibemu_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int ibemu_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_srq *ibemu_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int ibemu_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* The XRC SRQ numbered @srqn (under ctx->lock), or NULL. */
struct ibemu_srq *ibemu_xsrq_find(struct ibemu_context *ctx, uint32_t srqn);
/* An XRC SRQ goes (srq.c): out of the list, and no target keeps it. */
void ibemu_xsrq_forget(struct ibemu_context *ctx, struct ibemu_srq *srq);
/* mcast.c */
int ibemu_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibemu_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
struct ibemu_qp *ibemu_qp_find(struct ibemu_context *ctx, uint32_t qpn);
/* To the error state: every WR not completed completes with
 * IBV_WC_WR_FLUSH_ERR (IBA 10.3.1, 11.4.2.2). Under ctx->lock. */
void ibemu_qp_to_error(struct ibemu_qp *qp);
struct ibv_ah *ibemu_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int ibemu_destroy_ah(struct ibv_ah *ah);

struct ibv_srq *ibemu_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int ibemu_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int ibemu_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int ibemu_destroy_srq(struct ibv_srq *srq);
int ibemu_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
/* Take the next receive WR of @qp (its SRQ's or its own): false if none. */
bool ibemu_take_rwqe(struct ibemu_qp *qp, struct ibemu_rwqe *out);

int ibemu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int ibemu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
/* A completion for @qp's WR (send or receive side), to its CQ. */
void ibemu_complete(struct ibemu_qp *qp, bool recv, const struct ibv_wc *wc, bool se);

/* ---- the transport (rc.c, ud in post.c) -------------------------------- */

/* Bytes of a packet payload at @mtu (IBV_MTU_*). */
static inline uint32_t ibemu_mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << (mtu < IBV_MTU_256 ? 1 : mtu > IBV_MTU_4096 ? 5 : mtu);
}

#define PSN_MASK	0xffffffu
/* a - b in PSN space (24 bits, IBA 9.7.1): negative when a is before b. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* Send what is posted and not yet sent, from sq_next. */
void ibemu_rc_send_pending(struct ibemu_qp *qp);
/* A packet for an RC QP (requester or responder side). */
void ibemu_rc_receive(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload);
/* The timer of @qp: retransmit or give up if its deadline passed. */
void ibemu_rc_timer(struct ibemu_qp *qp, uint64_t now_us);
void ibemu_ud_receive(struct ibemu_qp *qp, const struct verbs_wire_pkt *p, const char *payload);

/* ---- the wire and the threads (thread.c) -------------------------------- */

uint64_t ibemu_now_us(void);
/* Send what @qp's send queue holds that may go (post.c: UD; rc.c). */
void ibemu_send_pending(struct ibemu_qp *qp);
/* Send a packet of @qp's: into the receiver's inbox when @qp has a
 * grant (direct.c), else queued for the daemon (flushed by ibemu_flush). */
bool ibemu_send_pkt(struct ibemu_qp *qp, const struct verbs_wire_pkt *hdr,
		    const void *payload);
/* direct.c: true when the packet went into the receiver's inbox. */
bool ibemu_direct_send(struct ibemu_qp *qp, const struct verbs_wire_pkt *hdr,
		       const void *payload);
void ibemu_flush(struct ibemu_context *ctx);
/* A deadline at @when_us was set: the timer thread hears of it if need be. */
void ibemu_timer_at(struct ibemu_context *ctx, uint64_t when_us);
int ibemu_threads_start(struct ibemu_context *ctx);
void ibemu_threads_stop(struct ibemu_context *ctx);
/* The daemon's QP numbers (VERBS_IOC_QP_*). */
int ibemu_ioc(struct ibemu_context *ctx, unsigned long cmd, void *arg);

/* A completion's SLID for packet @p to @qp: RoCE has no LIDs (the
 * fabric's own, which carry its packets, are not the program's). */
static inline uint16_t ibemu_wc_slid(const struct ibemu_qp *qp, const struct verbs_wire_pkt *p)
{
	return qp->roce ? 0 : p->slid;
}

/* query.c: whether @port is a RoCE port (Ethernet link layer: its
 * addresses are GRHs, it has no LIDs; docs/roce.md). */
bool ibemu_port_roce(struct ibemu_context *ctx, uint8_t port);

/* import.c (docs/verbs.md "Importing objects"): the process's contexts
 * as libibverbs' fstat and async-fd ioctl see them, import_context, and
 * the context whose objects @ctx uses, itself or the one it imported
 * (with its lock held). */
void ibemu_import_hook(void);
void ibemu_import_register(struct ibemu_context *ctx);
void ibemu_import_unregister(struct ibemu_context *ctx);
struct verbs_context *ibemu_import_context(struct ibv_device *ibdev, int cmd_fd);
struct ibemu_context *ibemu_root(struct ibemu_context *ctx);
/* Both locks, @ctx's then its root's (a root takes no other's): the root. */
struct ibemu_context *ibemu_root_lock(struct ibemu_context *ctx);
void ibemu_root_unlock(struct ibemu_context *ctx, struct ibemu_context *root);
/* provider.c: a context of @ibdev on @cmd_fd (alloc_context's). */
struct verbs_context *ibemu_context_new(struct ibv_device *ibdev, int cmd_fd);
/* pd.c, mr.c: what ibv_import_pd and _mr give, and take back. */
struct ibv_pd *ibemu_import_pd(struct ibv_context *context, uint32_t pd_handle);
void ibemu_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *ibemu_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void ibemu_unimport_mr(struct ibv_mr *mr);

/* interpose_rdmacm.c: put librdmacm's device calls onto the daemon's rdma_cm file
 * (namespace mode), if both are there. */
void ibemu_rdmacm_hook(void);

/* ---- limits (limits.c): the ops that count what a context holds ------- */

struct ibv_pd *ibemu_limited_alloc_pd(struct ibv_context *context);
int ibemu_limited_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ibemu_limited_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				    uint64_t hca_va, int access);
int ibemu_limited_dereg_mr(struct verbs_mr *vmr);
struct ibv_cq *ibemu_limited_create_cq(struct ibv_context *context, int cqe,
				       struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *ibemu_limited_create_cq_ex(struct ibv_context *context,
					     struct ibv_cq_init_attr_ex *attr);
int ibemu_limited_destroy_cq(struct ibv_cq *cq);
struct ibv_ah *ibemu_limited_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int ibemu_limited_destroy_ah(struct ibv_ah *ah);
struct ibv_srq *ibemu_limited_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int ibemu_limited_destroy_srq(struct ibv_srq *srq);

#endif
