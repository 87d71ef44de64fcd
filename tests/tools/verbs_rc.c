/* SPDX-License-Identifier: MIT */
/*
 * Two emulated CAs in one process, a QP on each, connected through the
 * fabric: what the ibverbs-utils pingpongs do not show.
 *
 *   verbs_rc A B ops
 *       RC SEND, SEND with immediate, inline SEND, RDMA WRITE, WRITE with
 *       immediate, RDMA READ (a message over several MTUs each), checking
 *       every byte and completion field; compare-and-swap (equal and
 *       not) and fetch-and-add, checking the word at B and the value
 *       back; then a bad rkey
 *       (IBV_WC_REM_ACCESS_ERR), a SEND without a receive WR and rnr_retry
 *       1 (IBV_WC_RNR_RETRY_EXC_ERR); "NAME ok" or "NAME: what is wrong"
 *   verbs_rc A B stream N SIZE TIMEOUT
 *       N RC SENDs of SIZE bytes, one at a time, retry_cnt 7 and the
 *       given timeout, every byte checked in order: "stream N ok"
 *   verbs_rc A B channels N
 *       a stream of N messages in one thread while another makes and
 *       destroys N completion channels on B: "channels: N made during
 *       the stream" and "stream N ok"
 *   verbs_rc A B retry TIMEOUT RETRY
 *       one RC SEND; prints its status and how long it took in ms
 *   verbs_rc A B ops-ex
 *       the same as ops through the extended API: QPs made by
 *       ibv_create_qp_ex with send_ops_flags, posting with ibv_wr_*, CQs
 *       made by ibv_create_cq_ex, read with ibv_start_poll and
 *       ibv_wc_read_*; then what it must refuse ("NAME ok" each)
 *   verbs_rc A B uc
 *       UC QPs: a SEND and a WRITE with immediate arrive; a SEND with no
 *       receive WR completes at the sender and is dropped at the
 *       receiver, whose next receive WR takes the next message; an RDMA
 *       READ is refused at post (EINVAL); the RC attributes are refused
 *       at modify (EINVAL): "NAME ok" each
 *   verbs_rc A B segv [handler|bare]
 *       a message through (the provider's copies run under its fault
 *       guard), then a fault of the program's own: it must end as
 *       without the provider ("bare": the same fault before any device
 *       is open: killed by SIGSEGV, or by a sanitizer), or, with "handler"
 *       (installed before the devices open), in that handler, which
 *       says "own handler: SIGSEGV" and exits 3
 *   verbs_rc A B recv-errors
 *       a SEND into a receive WR the responder cannot fill: its region
 *       moved to another PD, or to other memory (the WR naming the old
 *       range), or a SEND longer than it; "NAME: sender STATUS, receiver
 *       STATUS" each, on QPs made anew for each
 *   verbs_rc A B odp
 *       on-demand paging: B registers its whole address space (implicit
 *       ODP), then maps memory; A writes there and reads it back through
 *       that one rkey; ibv_advise_mr prefetches it, and refuses a region
 *       that is not ODP; a write to memory unmapped since fails (remote
 *       access error): "NAME ok" each
 *   verbs_rc A B dm
 *       device memory: B allocates some (past max_dm_size: ENOMEM),
 *       registers it zero-based (not zero-based: EINVAL), A writes and
 *       reads it by RDMA, B sees it with ibv_memcpy_from_dm; freeing it
 *       under a region: EBUSY: "NAME ok" each
 *   verbs_rc A B parent-domain
 *       QPs and a CQ made on parent domains (a thread domain, the
 *       program's allocators: called for each queue, given back each),
 *       a region of the plain PD serving them, a SEND and a WRITE; the
 *       domains in use cannot go (EBUSY): "NAME ok" each
 *   verbs_rc A B ud N PKEY_INDEX
 *       N UD SENDs of 256 bytes from A with the P_Key at PKEY_INDEX,
 *       then waits for the receives at B for a second:
 *       "ud sent N received M"
 *
 * A and B are device names; each uses its port 1, whose LID must be set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>

#include <infiniband/verbs.h>

#define BUF	(64 * 1024)
#define QKEY	0x11111111

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;	/* ops-ex: the same CQ */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;	/* ops-ex: the same QP */
	struct ibv_mr *mr;
	char *buf;
	uint16_t lid;
	uint64_t ts, wallclock;	/* ops-ex: the last completion's times */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	fprintf(stderr, "verbs_rc: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ops-ex: post and poll through the extended API. */
static bool use_ex;

static void open_end(struct end *e, const char *name, enum ibv_qp_type type)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			e->ctx = ibv_open_device(list[i]);
	if (!e->ctx)
		die(name);
	ibv_free_device_list(list);
	if (ibv_query_port(e->ctx, 1, &pa) || !pa.lid)
		die("port 1 has no LID");
	e->lid = pa.lid;
	e->pd = ibv_alloc_pd(e->ctx);
	if (use_ex) {
		e->cqx = ibv_create_cq_ex(e->ctx, &(struct ibv_cq_init_attr_ex){
			.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS |
					       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK });
		e->cq = e->cqx ? ibv_cq_ex_to_cq(e->cqx) : NULL;
	} else {
		e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	}
	e->buf = calloc(1, BUF);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->pd || !e->cq || !e->mr)
		die("pd, cq or mr");
	if (use_ex) {
		e->qp = ibv_create_qp_ex(e->ctx, &(struct ibv_qp_init_attr_ex){
			.send_cq = e->cq, .recv_cq = e->cq, .qp_type = type,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
				 .max_recv_sge = 2, .max_inline_data = 64 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = e->pd,
			.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
					  IBV_QP_EX_WITH_RDMA_WRITE |
					  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
					  IBV_QP_EX_WITH_RDMA_READ |
					  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD });
		e->qpx = e->qp ? ibv_qp_to_qp_ex(e->qp) : NULL;
		if (e->qp && !e->qpx)
			die("ibv_qp_to_qp_ex");
	} else {
		e->qp = ibv_create_qp(e->pd, &(struct ibv_qp_init_attr){
			.send_cq = e->cq, .recv_cq = e->cq, .qp_type = type,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
				 .max_recv_sge = 2, .max_inline_data = 64 } });
	}
	if (!e->qp)
		die("create_qp");
}

/* INIT, RTR, RTS for an RC QP to @peer. */
static void connect_rc(struct end *e, struct end *peer, int timeout, int retry, int rnr_retry)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = 0x100, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1, .ah_attr = { .dlid = peer->lid, .port_num = 1 } };
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x100, .timeout = timeout,
		.retry_cnt = retry, .rnr_retry = rnr_retry, .max_rd_atomic = 1 };
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* One completion through ibv_start_poll and the ibv_wc_read_* calls. */
static bool poll_ex(struct end *e, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = { 0 };

	if (ibv_start_poll(e->cqx, &attr))
		return false;
	wc->wr_id = e->cqx->wr_id;
	wc->status = e->cqx->status;
	wc->opcode = ibv_wc_read_opcode(e->cqx);
	wc->byte_len = ibv_wc_read_byte_len(e->cqx);
	wc->qp_num = ibv_wc_read_qp_num(e->cqx);
	wc->src_qp = ibv_wc_read_src_qp(e->cqx);
	wc->slid = ibv_wc_read_slid(e->cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(e->cqx);
	wc->imm_data = ibv_wc_read_imm_data(e->cqx);
	e->ts = ibv_wc_read_completion_ts(e->cqx);
	e->wallclock = ibv_wc_read_completion_wallclock_ns(e->cqx);
	ibv_end_poll(e->cqx);
	return true;
}

/* INIT, RTR, RTS for a UC QP to @peer: no ACK timer, retries, RNR or
 * RDMA READ resources (IBA Table 107). */
static void connect_uc(struct end *e, struct end *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("UC INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = 0x100,
		.ah_attr = { .dlid = peer->lid, .port_num = 1 } };
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		die("UC RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x100 };
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UC RTS");
}

/* The next completion on @e within @ms, or status -1. */
static struct ibv_wc next_wc(struct end *e, int ms)
{
	long long deadline = now_ms() + ms;
	struct ibv_wc wc = { .status = -1 };

	while (now_ms() < deadline)
		if (use_ex ? poll_ex(e, &wc) : ibv_poll_cq(e->cq, 1, &wc) > 0)
			return wc;
	wc.status = -1;
	return wc;
}

static void post_recv(struct end *e, size_t off, size_t len)
{
	struct ibv_sge sg = { (uintptr_t)e->buf + off, (uint32_t)len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_recv(e->qp, &wr, &bad))
		die("post_recv");
}

/* post_send's WR through ibv_wr_*: one WR between start and complete. */
static int post_send_ex(struct end *e, enum ibv_wr_opcode op, size_t off, size_t len,
			uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_qp_ex *x = e->qpx;

	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED | (flags & ~IBV_SEND_INLINE);
	switch (op) {
	case IBV_WR_SEND: ibv_wr_send(x); break;
	case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(x, htonl(0xabcd0123)); break;
	case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(x, rkey, raddr); break;
	case IBV_WR_RDMA_WRITE_WITH_IMM: ibv_wr_rdma_write_imm(x, rkey, raddr, htonl(0xabcd0123)); break;
	case IBV_WR_RDMA_READ: ibv_wr_rdma_read(x, rkey, raddr); break;
	default: ibv_wr_abort(x); return EINVAL;
	}
	if (flags & IBV_SEND_INLINE)
		ibv_wr_set_inline_data(x, e->buf + off, len);
	else
		ibv_wr_set_sge(x, e->mr->lkey, (uintptr_t)e->buf + off, (uint32_t)len);
	return ibv_wr_complete(x);
}

static int post_send(struct end *e, enum ibv_wr_opcode op, size_t off, size_t len,
		     uint64_t raddr, uint32_t rkey, unsigned flags)
{
	struct ibv_sge sg = { (uintptr_t)e->buf + off, (uint32_t)len, e->mr->lkey };

	if (use_ex)
		return post_send_ex(e, op, off, len, raddr, rkey, flags);
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags, .imm_data = htonl(0xabcd0123) }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

/* An atomic from @e's buf + 1024 (8 bytes) to @raddr at the peer. */
static int post_atomic(struct end *e, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		       uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sg = { (uintptr_t)e->buf + 1024, 8, e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 11, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED }, *bad;

	if (use_ex) {
		ibv_wr_start(e->qpx);
		e->qpx->wr_id = 11;
		e->qpx->wr_flags = IBV_SEND_SIGNALED;
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
			ibv_wr_atomic_cmp_swp(e->qpx, rkey, raddr, compare_add, swap);
		else
			ibv_wr_atomic_fetch_add(e->qpx, rkey, raddr, compare_add);
		ibv_wr_set_sge(e->qpx, sg.lkey, sg.addr, sg.length);
		return ibv_wr_complete(e->qpx);
	}
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(e->qp, &wr, &bad);
}

/* One atomic from a on the word at b's buf + 2048 holding @before: the
 * value back and the word after, checked. */
static const char *atomic_check(struct end *a, struct end *b, enum ibv_wr_opcode op,
				uint64_t before, uint64_t compare_add, uint64_t swap,
				uint64_t after)
{
	uint64_t *word = (uint64_t *)(void *)(b->buf + 2048), got;
	struct ibv_wc wc;

	*word = before;
	memset(a->buf + 1024, 0xee, 8);
	if (post_atomic(a, op, (uintptr_t)word, b->mr->rkey, compare_add, swap))
		return "post failed";
	wc = next_wc(a, 5000);
	if (wc.status != IBV_WC_SUCCESS)
		return wc.status == (enum ibv_wc_status)-1 ? "no completion" :
		       ibv_wc_status_str(wc.status);
	if (wc.wr_id != 11 || wc.byte_len != 8 ||
	    wc.opcode != (op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD))
		return "wrong completion";
	memcpy(&got, a->buf + 1024, 8);
	if (got != before)
		return "wrong original value back";
	return *word == after ? NULL : "wrong word at the responder";
}

static void fill(char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(i * 7 + seed);
}

static bool same(const char *a, const char *b, size_t len)
{
	return !memcmp(a, b, len);
}

static void say(const char *name, const char *problem)
{
	if (problem)
		printf("%s: %s\n", name, problem);
	else
		printf("%s ok\n", name);
}

/* ibv_resize_cq with completions queued: not below them, and they stay. */
static const char *resize_check(struct end *a, struct end *b)
{
	struct ibv_wc w1, w2;
	int i;

	for (i = 0; i < 2; i++) {
		post_recv(b, 0, 64);
		if (post_send(a, IBV_WR_SEND, 0, 16, 0, 0, 0))
			return "post failed";
	}
	/* Both sends acknowledged: the responder queued both receive
	 * completions at b before it acknowledged them. */
	w1 = next_wc(a, 5000);
	w2 = next_wc(a, 5000);
	if (w1.status != IBV_WC_SUCCESS || w2.status != IBV_WC_SUCCESS)
		return "sends failed";
	if (ibv_resize_cq(b->cq, 1) != EINVAL)
		return "shrunk below what it holds";
	if (ibv_resize_cq(b->cq, 256) || b->cq->cqe != 256)
		return "not grown";
	w1 = next_wc(b, 5000);
	w2 = next_wc(b, 5000);
	return w1.status == IBV_WC_SUCCESS && w2.status == IBV_WC_SUCCESS &&
	       w1.byte_len == 16 && w2.byte_len == 16 ? NULL : "completions lost in the resize";
}

/* ibv_rereg_mr to a new buffer: the same rkey writes there. */
static const char *rereg_check(struct end *a, struct end *b)
{
	char *nb = calloc(1, BUF), *old = b->buf;
	struct ibv_wc wc;
	const char *why = NULL;

	if (ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nb, BUF, 0))
		return "rereg failed";
	fill(a->buf, 1000, 77);
	if (post_send(a, IBV_WR_RDMA_WRITE, 0, 1000, (uintptr_t)nb, b->mr->rkey, 0))
		why = "post failed";
	wc = next_wc(a, 5000);
	if (!why && wc.status != IBV_WC_SUCCESS)
		why = "the write failed";
	if (!why && !same(a->buf, nb, 1000))
		why = "the data is not in the new buffer";
	if (ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, old, BUF, 0))
		why = why ? why : "rereg back failed";
	free(nb);
	return why;
}

/* A region b registered, then unmapped: as on an HCA, whose pages stay
 * pinned, a's WRITE, READ and atomic on it complete and b lives on. */
static const char *unmapped_check(struct end *a, struct end *b)
{
	char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr = m == MAP_FAILED ? NULL :
		ibv_reg_mr(b->pd, m, 65536, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	struct ibv_wc wc;
	const char *why = NULL;

	if (!mr)
		return "no region";
	munmap(m, 65536);
	if (post_send(a, IBV_WR_RDMA_WRITE, 0, 5000, (uintptr_t)m, mr->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS)
		why = "the write did not complete";
	memset(a->buf + BUF / 2, 0x55, 100);
	if (!why && (post_send(a, IBV_WR_RDMA_READ, BUF / 2, 100, (uintptr_t)m, mr->rkey, 0) ||
		     next_wc(a, 5000).status != IBV_WC_SUCCESS))
		why = "the read did not complete";
	if (!why && a->buf[BUF / 2] != 0)
		why = "the read did not bring zeros";
	if (!why && post_atomic(a, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)m, mr->rkey, 1, 0))
		why = "the atomic was refused";
	if (!why) {
		wc = next_wc(a, 5000);
		if (wc.status != IBV_WC_SUCCESS)
			why = "the atomic did not complete";
	}
	ibv_dereg_mr(mr);
	return why;
}

/* One operation from a to b, its completions checked. */
static const char *op_check(struct end *a, struct end *b, enum ibv_wr_opcode op, size_t len,
			    unsigned flags)
{
	bool recv = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		    op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct ibv_wc wc;

	memset(b->buf, 0, BUF);
	memset(a->buf + BUF / 2, 0, BUF / 2);
	fill(a->buf, len, (unsigned)op);
	fill(b->buf + 4096, len, (unsigned)op + 1);
	if (recv)
		post_recv(b, 0, BUF / 2);
	if (op == IBV_WR_RDMA_READ) {
		if (post_send(a, op, BUF / 2, len, (uintptr_t)b->buf + 4096, b->mr->rkey, flags))
			return "post_send failed";
	} else if (post_send(a, op, 0, len, op == IBV_WR_RDMA_WRITE ||
			     op == IBV_WR_RDMA_WRITE_WITH_IMM ? (uintptr_t)b->buf : 0,
			     b->mr->rkey, flags)) {
		return "post_send failed";
	}
	wc = next_wc(a, 5000);
	if (wc.status != IBV_WC_SUCCESS)
		return wc.status == (enum ibv_wc_status)-1 ? "no send completion" :
		       ibv_wc_status_str(wc.status);
	if (wc.wr_id != 9 || wc.opcode != (op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
					   op == IBV_WR_RDMA_WRITE ||
					   op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RDMA_WRITE :
					   IBV_WC_SEND))
		return "wrong send completion";
	if (op == IBV_WR_RDMA_READ)
		return same(a->buf + BUF / 2, b->buf + 4096, len) && wc.byte_len == len ?
		       NULL : "read data differ";
	if (recv) {
		wc = next_wc(b, 5000);
		if (wc.status != IBV_WC_SUCCESS)
			return "no receive completion";
		if (wc.wr_id != 7 || wc.byte_len != len || wc.qp_num != b->qp->qp_num ||
		    wc.src_qp != a->qp->qp_num || wc.slid != a->lid)
			return "wrong receive completion fields";
		if (wc.opcode != (op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
				  IBV_WC_RECV))
			return "wrong receive opcode";
		if (imm != !!(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    (imm && wc.imm_data != htonl(0xabcd0123)))
			return "wrong immediate";
	}
	return same(a->buf, b->buf, len) ? NULL : "data differ";
}

static int ops(struct end *a, struct end *b)
{
	struct ibv_wc wc;

	if (!use_ex) {	/* ops-ex connected them for its edges first */
		connect_rc(a, b, 14, 7, 7);
		connect_rc(b, a, 14, 7, 7);
	}
	say("send", op_check(a, b, IBV_WR_SEND, 5000, 0));
	say("send_imm", op_check(a, b, IBV_WR_SEND_WITH_IMM, 3000, 0));
	say("send_inline", op_check(a, b, IBV_WR_SEND, 60, IBV_SEND_INLINE));
	say("send_empty", op_check(a, b, IBV_WR_SEND, 0, 0));
	say("write", op_check(a, b, IBV_WR_RDMA_WRITE, 9000, 0));
	say("write_imm", op_check(a, b, IBV_WR_RDMA_WRITE_WITH_IMM, 2500, 0));
	say("read", op_check(a, b, IBV_WR_RDMA_READ, 7000, 0));
	say("cmp_swap_equal", atomic_check(a, b, IBV_WR_ATOMIC_CMP_AND_SWP, 0x1122334455667788ull,
					   0x1122334455667788ull, 42, 42));
	say("cmp_swap_unequal", atomic_check(a, b, IBV_WR_ATOMIC_CMP_AND_SWP, 7, 8, 42, 7));
	say("fetch_add", atomic_check(a, b, IBV_WR_ATOMIC_FETCH_AND_ADD, 0xffffffffull, 1, 0,
				      0x100000000ull));
	say("resize_cq", resize_check(a, b));
	say("rereg_mr", rereg_check(a, b));
	say("unmapped", unmapped_check(a, b));
	/* A key B never gave: the responder NAKs, both QPs end. */
	post_send(a, IBV_WR_RDMA_WRITE, 0, 100, (uintptr_t)b->buf, b->mr->rkey + 0x100, 0);
	wc = next_wc(a, 5000);
	say("bad_rkey", wc.status == IBV_WC_REM_ACCESS_ERR ? NULL :
	    wc.status == (enum ibv_wc_status)-1 ? "no completion" : ibv_wc_status_str(wc.status));
	post_send(a, IBV_WR_SEND, 0, 10, 0, 0, 0);
	wc = next_wc(a, 5000);
	say("after_error", wc.status == IBV_WC_WR_FLUSH_ERR ? NULL : "not flushed");
	return 0;
}

/* @e's QP made anew (the last one ended in error). */
static void renew_qp(struct end *e)
{
	ibv_destroy_qp(e->qp);
	e->qp = ibv_create_qp(e->pd, &(struct ibv_qp_init_attr){
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 } });
	if (!e->qp)
		die("create_qp");
}

enum recv_fault { MOVED_PD, MOVED_MEMORY, TOO_SHORT };

/* A SEND from a into b's receive WR of 100 bytes, spoilt as @how says
 * (IBA 9.9.3.1: the responder's error, its NAK, both QPs' end). */
static void recv_error(struct end *a, struct end *b, const char *name, enum recv_fault how)
{
	struct ibv_pd *other = ibv_alloc_pd(b->ctx);
	char *nb = calloc(1, BUF);
	struct ibv_wc sw, rw;
	int r = 0;

	renew_qp(a);
	renew_qp(b);
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	post_recv(b, 0, 100);
	if (how == MOVED_PD)
		r = ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_PD, other, NULL, 0, 0);
	else if (how == MOVED_MEMORY)
		r = ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nb, BUF, 0);
	if (r || post_send(a, IBV_WR_SEND, 0, how == TOO_SHORT ? 200 : 50, 0, 0, 0))
		die(name);
	sw = next_wc(a, 5000);
	rw = next_wc(b, 5000);
	printf("%s: sender %s, receiver %s\n", name,
	       sw.status == (enum ibv_wc_status)-1 ? "none" : ibv_wc_status_str(sw.status),
	       rw.status == (enum ibv_wc_status)-1 ? "none" : ibv_wc_status_str(rw.status));
	if (how == MOVED_PD)
		r = ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_PD, b->pd, NULL, 0, 0);
	else if (how == MOVED_MEMORY)
		r = ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b->buf, BUF, 0);
	if (r)
		die("rereg back");
	ibv_dealloc_pd(other);
	free(nb);
}

/* Both QPs back through Reset to RTS, after an error. */
static void reset_pair(struct end *a, struct end *b)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(a->qp, &reset, IBV_QP_STATE) || ibv_modify_qp(b->qp, &reset, IBV_QP_STATE))
		die("RESET");
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
}

/* Implicit ODP: one rkey for all of B's memory, mapped after it too. */
static int odp(struct end *a, struct end *b)
{
	struct ibv_mr *all = ibv_reg_mr(b->pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ);
	char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_sge sg = { (uintptr_t)m + 4096, 8192, 0 };
	const char *why = NULL;

	say("odp_implicit_reg", all ? NULL : strerror(errno));
	if (!all || m == MAP_FAILED)
		return 1;
	sg.lkey = all->lkey;
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	fill(a->buf, 5000, 31);
	if (post_send(a, IBV_WR_RDMA_WRITE, 0, 5000, (uintptr_t)m + 12345, all->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS)
		why = "the write through the implicit region failed";
	else if (!same(a->buf, m + 12345, 5000))
		why = "the data is not in memory mapped after the registration";
	say("odp_write_to_new_memory", why);
	memset(a->buf + BUF / 2, 0, 5000);
	why = NULL;
	if (post_send(a, IBV_WR_RDMA_READ, BUF / 2, 5000, (uintptr_t)m + 12345, all->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS)
		why = "the read failed";
	else if (!same(a->buf + BUF / 2, m + 12345, 5000))
		why = "the read brought other bytes";
	say("odp_read_back", why);
	say("odp_prefetch", ibv_advise_mr(b->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					  IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1) ?
	    "ibv_advise_mr refused an ODP range" : NULL);
	sg = (struct ibv_sge){ (uintptr_t)b->buf, 64, b->mr->lkey };
	say("odp_prefetch_pinned", ibv_advise_mr(b->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg, 1) ==
	    EINVAL ? NULL : "ibv_advise_mr took a region that is not ODP");
	/* Memory unmapped since: the HCA's page fault fails the write. */
	munmap(m, 1 << 20);
	say("odp_unmapped", post_send(a, IBV_WR_RDMA_WRITE, 0, 100, (uintptr_t)m + 12345,
				      all->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_REM_ACCESS_ERR ?
	    "a write to memory no longer mapped was not a remote access error" : NULL);
	/* A page mapped read-only: the write faults as well. */
	reset_pair(a, b);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	say("odp_read_only", post_send(a, IBV_WR_RDMA_WRITE, 0, 100, (uintptr_t)m + 16,
				       all->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_REM_ACCESS_ERR ?
	    "a write to a read-only page was not a remote access error" : NULL);
	munmap(m, 4096);
	ibv_dereg_mr(all);
	return 0;
}

/* Device memory, reached by RDMA through a zero-based region. */
static int dm(struct end *a, struct end *b)
{
	struct ibv_device_attr_ex dx;
	struct ibv_alloc_dm_attr big = { 0 }, some = { .length = 8192 };
	struct ibv_dm *d;
	struct ibv_mr *mr;
	char back[4096];
	int r;

	if (ibv_query_device_ex(b->ctx, NULL, &dx) || !dx.max_dm_size) {
		say("dm_size", "no max_dm_size");
		return 1;
	}
	big.length = dx.max_dm_size + 1;
	errno = 0;
	say("dm_too_big", !ibv_alloc_dm(b->ctx, &big) && errno == ENOMEM ? NULL :
	    "more than max_dm_size was not ENOMEM");
	if (!(d = ibv_alloc_dm(b->ctx, &some))) {
		say("dm_alloc", strerror(errno));
		return 1;
	}
	errno = 0;
	say("dm_not_zero_based", !ibv_reg_dm_mr(b->pd, d, 0, 4096, IBV_ACCESS_LOCAL_WRITE) &&
	    errno == EINVAL ? NULL : "a region not zero-based was not EINVAL");
	mr = ibv_reg_dm_mr(b->pd, d, 4096, 4096, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		say("dm_reg", strerror(errno));
		return 1;
	}
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	fill(a->buf, 3000, 47);
	say("dm_write", post_send(a, IBV_WR_RDMA_WRITE, 0, 3000, 100, mr->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS ? "the RDMA WRITE failed" :
	    ibv_memcpy_from_dm(back, d, 4096 + 100, 3000) || !same(back, a->buf, 3000) ?
	    "ibv_memcpy_from_dm does not show it" : NULL);
	memset(back, 0x5a, sizeof(back));
	ibv_memcpy_to_dm(d, 4096, back, sizeof(back));
	say("dm_read", post_send(a, IBV_WR_RDMA_READ, BUF / 2, 4096, 0, mr->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS ? "the RDMA READ failed" :
	    !same(a->buf + BUF / 2, back, 4096) ? "it read other bytes" : NULL);
	say("dm_copy_bounds", ibv_memcpy_to_dm(d, 8000, back, 200) ? NULL :
	    "a copy past the end was taken");
	r = ibv_free_dm(d);
	say("dm_busy", r == EBUSY ? NULL : "freed under a region");
	ibv_dereg_mr(mr);
	say("dm_free", ibv_free_dm(d) ? "not freed" : NULL);
	return 0;
}

/* The program's allocators of a parent domain: what they were asked. */
struct allocs {
	unsigned alloc, freed, defaults, cq;
};
static bool allocs_wrong_context;	/* a call without the pd_context given */

static void *pd_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		      uint64_t type)
{
	struct allocs *n = pd_context;
	void *p = NULL;

	(void)pd;
	if (!n) {
		allocs_wrong_context = true;
		return IBV_ALLOCATOR_USE_DEFAULT;
	}
	if ((type & 0xffffffff) == 5)
		n->cq++;
	if (n->alloc % 2) {	/* every other one: the provider's own */
		n->alloc++;
		n->defaults++;
		return IBV_ALLOCATOR_USE_DEFAULT;
	}
	n->alloc++;
	return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) ?
	       NULL : p;
}

static void pd_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	struct allocs *n = pd_context;

	(void)pd;
	(void)type;
	if (!n) {
		allocs_wrong_context = true;
		return;
	}
	n->freed++;
	free(ptr);
}

/* @e's QP made anew on @pd, its CQ @cq. */
static void qp_on(struct end *e, struct ibv_pd *pd, struct ibv_cq *cq)
{
	ibv_destroy_qp(e->qp);
	e->qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2 } });
	if (!e->qp)
		die("create_qp on a parent domain");
}

/* Parent and thread domains, as rdma-core's tests/test_parent_domain.py
 * makes them: the allocators the program gives make the queues. */
static int parent_domain(struct end *a, struct end *b)
{
	struct allocs n = { 0 };
	struct ibv_td *td = ibv_alloc_td(b->ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_parent_domain_init_attr pa = {
		.pd = b->pd, .td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pd_alloc, .free = pd_free, .pd_context = &n };
	struct ibv_pd *pb = td ? ibv_alloc_parent_domain(b->ctx, &pa) : NULL, *pa_dom;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq_a = a->cq, *cq_b;
	struct ibv_wc wc;

	say("pd_alloc", pb ? NULL : strerror(errno));
	if (!pb)
		return 1;
	/* A PD with a region, a window or an AH on it cannot go (EBUSY, as
	 * the kernel's use count), and can once they are gone. */
	{
		struct ibv_pd *pd = ibv_alloc_pd(b->ctx);
		struct ibv_mr *mr = pd ? ibv_reg_mr(pd, b->buf, 64, IBV_ACCESS_LOCAL_WRITE) : NULL;
		struct ibv_mw *mw = pd ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
		struct ibv_ah *ah = pd ? ibv_create_ah(pd, &(struct ibv_ah_attr){
			.dlid = a->lid, .port_num = 1 }) : NULL;
		int busy = mr && mw && ah ? ibv_dealloc_pd(pd) : 0;

		ibv_dereg_mr(mr);
		ibv_dealloc_mw(mw);
		ibv_destroy_ah(ah);
		say("pd_busy_objects", busy == EBUSY && !ibv_dealloc_pd(pd) ? NULL :
		    "a PD with objects on it went, or one without did not");
	}
	pa = (struct ibv_parent_domain_init_attr){ .pd = a->pd };
	pa_dom = ibv_alloc_parent_domain(a->ctx, &pa);	/* no allocators, no TD */
	cqx = ibv_create_cq_ex(b->ctx, &(struct ibv_cq_init_attr_ex){
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = pb });
	say("pd_cq", cqx && n.cq == 1 ? NULL : "a CQ on the parent domain, its ring not allocated there");
	if (!cqx || !pa_dom)
		return 1;
	cq_b = ibv_cq_ex_to_cq(cqx);
	errno = 0;
	say("pd_cq_plain_pd", !ibv_create_cq_ex(b->ctx, &(struct ibv_cq_init_attr_ex){
		.cqe = 4, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = b->pd }) && errno == EINVAL ?
	    NULL : "a CQ on a plain PD through MASK_PD was not EINVAL");
	qp_on(a, pa_dom, cq_a);
	qp_on(b, pb, cq_b);
	say("pd_qp_allocs", n.alloc >= 3 ? NULL : "the QP's queues were not allocated there");
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	/* b's region is of its plain PD; its QP is on the parent domain. */
	b->cq = cq_b;
	post_recv(b, 0, 100);
	fill(a->buf, 100, 5);
	say("pd_send", post_send(a, IBV_WR_SEND, 0, 100, 0, 0, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS ||
	    (wc = next_wc(b, 5000)).status != IBV_WC_SUCCESS || wc.byte_len != 100 ||
	    !same(a->buf, b->buf, 100) ? "a SEND between QPs on parent domains failed" : NULL);
	fill(a->buf, 4000, 9);
	say("pd_write", post_send(a, IBV_WR_RDMA_WRITE, 0, 4000, (uintptr_t)b->buf + 8192,
				  b->mr->rkey, 0) ||
	    next_wc(a, 5000).status != IBV_WC_SUCCESS || !same(a->buf, b->buf + 8192, 4000) ?
	    "an RDMA WRITE into the plain PD's region failed" : NULL);
	say("pd_busy", ibv_dealloc_pd(b->pd) == EBUSY && ibv_dealloc_td(td) == EBUSY &&
	    ibv_dealloc_pd(pb) == EBUSY ? NULL : "a domain in use was let go");
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
	ibv_destroy_cq(cq_b);
	say("pd_freed", n.freed == n.alloc - n.defaults && !allocs_wrong_context ? NULL :
	    "the allocator's queues were not all given back to it");
	say("pd_dealloc", ibv_dealloc_pd(pb) || ibv_dealloc_td(td) ? "not let go" : NULL);
	return 0;
}

/* A QP put in Reset after an error leaves no completion of its first
 * life in its CQ (the flush of a receive WR not polled), as libmlx5
 * cleans them: the next SEND's receive is the next completion. */
static const char *reset_cleans(struct end *a, struct end *b)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	renew_qp(a);
	renew_qp(b);
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	post_recv(b, 0, 100);
	post_recv(b, 100, 100);
	if (post_send(a, IBV_WR_SEND, 0, 200, 0, 0, 0) ||
	    next_wc(a, 5000).status != IBV_WC_REM_INV_REQ_ERR ||
	    next_wc(b, 5000).status != IBV_WC_LOC_LEN_ERR)
		return "the error before did not come";
	/* b's second receive WR is flushed, not polled. */
	if (ibv_modify_qp(a->qp, &reset, IBV_QP_STATE) || ibv_modify_qp(b->qp, &reset, IBV_QP_STATE))
		return "no reset";
	connect_rc(a, b, 14, 7, 7);
	connect_rc(b, a, 14, 7, 7);
	post_recv(b, 0, 100);
	if (post_send(a, IBV_WR_SEND, 0, 50, 0, 0, 0) || next_wc(a, 5000).status != IBV_WC_SUCCESS)
		return "the SEND after the reset failed";
	wc = next_wc(b, 5000);
	return wc.status == IBV_WC_SUCCESS && wc.byte_len == 50 ? NULL :
	       wc.status == IBV_WC_WR_FLUSH_ERR ? "the flush of the QP's first life came first" :
						  "no receive completion";
}

static int recv_errors(struct end *a, struct end *b)
{
	recv_error(a, b, "region moved to another PD", MOVED_PD);
	recv_error(a, b, "region moved to other memory", MOVED_MEMORY);
	recv_error(a, b, "a SEND longer than the receive WR", TOO_SHORT);
	say("reset_cleans_cq", reset_cleans(a, b));
	return 0;
}

static uint64_t ns_now(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A SEND's completion times (a CQ made with both timestamp flags): its
 * cycles, at hca_core_clock, between ibv_query_rt_values_ex's raw clock
 * read before and after; its wall-clock ns between the system's. */
static const char *completion_time(struct end *a, struct end *b)
{
	struct ibv_device_attr_ex dx;
	struct ibv_values_ex v0 = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK }, v1 = v0;
	uint64_t wall0, wall1, c0, c1;
	struct ibv_wc wc;

	if (ibv_query_device_ex(a->ctx, NULL, &dx) || !dx.completion_timestamp_mask ||
	    dx.hca_core_clock != 1000000)
		return "no completion clock in ibv_query_device_ex";
	post_recv(b, 0, 64);
	wall0 = ns_now(CLOCK_REALTIME);
	if (ibv_query_rt_values_ex(a->ctx, &v0) || v0.comp_mask != IBV_VALUES_MASK_RAW_CLOCK)
		return "ibv_query_rt_values_ex failed";
	if (post_send(a, IBV_WR_SEND, 0, 16, 0, 0, 0))
		return "post failed";
	wc = next_wc(a, 5000);
	if (wc.status != IBV_WC_SUCCESS || next_wc(b, 5000).status != IBV_WC_SUCCESS)
		return "the SEND failed";
	ibv_query_rt_values_ex(a->ctx, &v1);
	wall1 = ns_now(CLOCK_REALTIME);
	c0 = (uint64_t)v0.raw_clock.tv_sec * 1000000000u + (uint64_t)v0.raw_clock.tv_nsec;
	c1 = (uint64_t)v1.raw_clock.tv_sec * 1000000000u + (uint64_t)v1.raw_clock.tv_nsec;
	if (a->ts < c0 || a->ts > c1)
		return "the completion's cycles are not between the raw clock's before and after";
	/* (1 ms either side: the two clocks read a moment apart) */
	if (a->wallclock + 1000000 < wall0 || a->wallclock > wall1 + 1000000)
		return "the completion's wall clock is not between the system's before and after";
	return NULL;
}

/* What the extended API must refuse or undo, and a batch of two. */
static int ex_edges(struct end *a, struct end *b)
{
	struct ibv_qp_ex *x = a->qpx;
	struct ibv_sge three[3] = { 0 };
	struct ibv_wc wc;
	int r;

	errno = 0;
	say("cq_ex_flow_tag", !ibv_create_cq_ex(a->ctx, &(struct ibv_cq_init_attr_ex){
		.cqe = 4, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG }) &&
	    errno == EOPNOTSUPP ? NULL : "a flow tag was not refused EOPNOTSUPP");
	errno = 0;
	say("qp_ex_atomics", !ibv_create_qp_ex(a->ctx, &(struct ibv_qp_init_attr_ex){
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = a->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO }) &&
	    errno == EOPNOTSUPP ? NULL : "TSO on an RC QP was not refused EOPNOTSUPP");
	/* A CQ of a channel made by ibv_create_cq_ex holds the channel once:
	 * gone, the channel goes (not EBUSY). */
	{
		struct ibv_comp_channel *ch = ibv_create_comp_channel(a->ctx);
		struct ibv_cq_ex *cq = ch ? ibv_create_cq_ex(a->ctx, &(struct ibv_cq_init_attr_ex){
			.cqe = 4, .channel = ch, .wc_flags = IBV_WC_STANDARD_FLAGS }) : NULL;
		int busy = ch ? ibv_destroy_comp_channel(ch) : 0;

		say("cq_ex_channel", ch && cq && busy == EBUSY &&
		    !ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) && !ibv_destroy_comp_channel(ch) ?
		    NULL : "the channel's references are wrong");
	}
	/* Three SGEs on a QP of two: the batch fails, nothing goes. */
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 3, three);
	r = ibv_wr_complete(x);
	say("too_many_sges", r == EINVAL ? NULL : "wr_complete did not say EINVAL");
	/* Aborted: nothing goes. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	ibv_wr_abort(x);
	wc = next_wc(a, 300);
	say("abort", wc.status == (enum ibv_wc_status)-1 ? NULL : "an aborted WR completed");
	/* Two WRs in one batch: two completions, in order. */
	post_recv(b, 0, 64);
	post_recv(b, 64, 64);
	ibv_wr_start(x);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 16);
	x->wr_id = 22;
	ibv_wr_send_imm(x, htonl(5));
	ibv_wr_set_inline_data_list(x, 2, (struct ibv_data_buf[]){ { a->buf, 3 }, { a->buf + 8, 5 } });
	r = ibv_wr_complete(x);
	{
		struct ibv_wc w1 = next_wc(a, 5000), w2 = next_wc(a, 5000);
		struct ibv_wc r1 = next_wc(b, 5000), r2 = next_wc(b, 5000);

		say("batch_of_two", r == 0 && w1.wr_id == 21 && w2.wr_id == 22 &&
		    w1.status == IBV_WC_SUCCESS && w2.status == IBV_WC_SUCCESS &&
		    r1.byte_len == 16 && r2.byte_len == 8 && (r2.wc_flags & IBV_WC_WITH_IMM) &&
		    r2.imm_data == htonl(5) ? NULL : "wrong completions");
	}
	say("completion_time", completion_time(a, b));
	return 0;
}

static int uc(struct end *a, struct end *b)
{
	struct ibv_qp_attr bad = { .qp_state = IBV_QPS_RTS, .timeout = 14 };
	struct ibv_wc wc;

	/* An RC attribute on the way to RTS: refused; then the right ones. */
	connect_uc(b, a);
	{
		struct ibv_qp_attr i = { .qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = b->qp->qp_num, .rq_psn = 0x100,
			.ah_attr = { .dlid = b->lid, .port_num = 1 } };

		if (ibv_modify_qp(a->qp, &i, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS) ||
		    ibv_modify_qp(a->qp, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
			die("UC INIT/RTR");
		say("uc_rc_attrs", ibv_modify_qp(a->qp, &bad, IBV_QP_STATE | IBV_QP_SQ_PSN |
						 IBV_QP_TIMEOUT) == EINVAL ? NULL :
		    "a timeout was taken on a UC QP");
		bad = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0x100 };
		if (ibv_modify_qp(a->qp, &bad, IBV_QP_STATE | IBV_QP_SQ_PSN))
			die("UC RTS");
	}
	say("uc_send", op_check(a, b, IBV_WR_SEND, 5000, 0));
	say("uc_write_imm", op_check(a, b, IBV_WR_RDMA_WRITE_WITH_IMM, 2500, 0));
	say("uc_read", post_send(a, IBV_WR_RDMA_READ, 0, 8, (uintptr_t)b->buf, b->mr->rkey, 0) ==
	    EINVAL ? NULL : "an RDMA READ was taken on a UC QP");
	/* No receive WR at b: the sender is done, the message is gone. */
	post_send(a, IBV_WR_SEND, 0, 100, 0, 0, 0);
	wc = next_wc(a, 5000);
	say("uc_no_recv_sender", wc.status == IBV_WC_SUCCESS ? NULL : "no success at the sender");
	wc = next_wc(b, 300);
	say("uc_no_recv_dropped", wc.status == (enum ibv_wc_status)-1 ? NULL :
	    "a message with no receive WR completed");
	say("uc_after_drop", op_check(a, b, IBV_WR_SEND, 3000, 0));
	return 0;
}

static int rnr(struct end *a, struct end *b)
{
	struct ibv_wc wc;

	connect_rc(a, b, 14, 7, 1);
	connect_rc(b, a, 14, 7, 1);
	post_send(a, IBV_WR_SEND, 0, 10, 0, 0, 0);
	wc = next_wc(a, 5000);
	say("rnr", wc.status == IBV_WC_RNR_RETRY_EXC_ERR ? NULL :
	    wc.status == (enum ibv_wc_status)-1 ? "no completion" : ibv_wc_status_str(wc.status));
	return 0;
}

static int stream(struct end *a, struct end *b, int n, size_t size, int timeout)
{
	int i;

	connect_rc(a, b, timeout, 7, 7);
	connect_rc(b, a, timeout, 7, 7);
	for (i = 0; i < n; i++) {
		struct ibv_wc wc;

		post_recv(b, 0, size);
		fill(a->buf, size, (unsigned)i);
		if (post_send(a, IBV_WR_SEND, 0, size, 0, 0, 0))
			die("post_send");
		wc = next_wc(a, 30000);
		if (wc.status != IBV_WC_SUCCESS) {
			printf("stream: message %d: %s\n", i, (int)wc.status < 0 ? "no completion" :
			       ibv_wc_status_str(wc.status));
			return 1;
		}
		wc = next_wc(b, 30000);
		if (wc.status != IBV_WC_SUCCESS || wc.byte_len != size ||
		    !same(a->buf, b->buf, size)) {
			printf("stream: message %d arrived wrong\n", i);
			return 1;
		}
	}
	printf("stream %d ok\n", n);
	return 0;
}

static int retry(struct end *a, struct end *b, int timeout, int count)
{
	long long t0;
	struct ibv_wc wc;

	connect_rc(a, b, timeout, count, 7);
	connect_rc(b, a, timeout, count, 7);
	post_recv(b, 0, 100);
	t0 = now_ms();
	post_send(a, IBV_WR_SEND, 0, 100, 0, 0, 0);
	wc = next_wc(a, 60000);
	printf("retry: %s after %lld ms\n", (int)wc.status < 0 ? "no completion" :
	       ibv_wc_status_str(wc.status), now_ms() - t0);
	return 0;
}

struct streaming {
	struct end *a, *b;
	int n, rc;
};

static void *streamer(void *arg)
{
	struct streaming *s = arg;

	s->rc = stream(s->a, s->b, s->n, 1024, 14);
	return NULL;
}

/* Completion channels made on B while B's reader thread sends the ACKs
 * of a stream: the CREATE_COMP_CHANNEL write waits for that thread. */
static int channels(struct end *a, struct end *b, int n)
{
	struct streaming s = { a, b, n, -1 };
	pthread_t t;
	int i, made = 0;

	if (pthread_create(&t, NULL, streamer, &s))
		die("pthread_create");
	for (i = 0; i < n; i++) {
		struct ibv_comp_channel *ch = ibv_create_comp_channel(b->ctx);

		if (!ch)
			break;
		made++;
		ibv_destroy_comp_channel(ch);
	}
	pthread_join(t, NULL);
	printf("channels: %d made during the stream\n", made);
	return s.rc;
}

static void ud_ready(struct end *e, int pkey_index)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
				 .pkey_index = (uint16_t)pkey_index };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
}

static int ud(struct end *a, struct end *b, int n, int pkey_index)
{
	struct ibv_ah *ah = ibv_create_ah(a->pd, &(struct ibv_ah_attr){ .dlid = b->lid,
							       .port_num = 1 });
	int i, got = 0;

	if (!ah)
		die("create_ah");
	ud_ready(a, pkey_index);
	ud_ready(b, 0);
	/* The receive queue stays full: one more for each that completes. */
	for (i = 0; i < 16; i++)
		post_recv(b, 0, 256 + 40);
	for (i = 0; i < n; i++) {
		struct ibv_sge sg = { (uintptr_t)a->buf, 256, a->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(a->qp, &wr, &bad))
			die("UD post_send");
		if (next_wc(a, 5000).status != IBV_WC_SUCCESS)
			die("UD send completion");
		/* A packet that arrives does within milliseconds: a lost one
		 * is not waited for longer. */
		wc = next_wc(b, 50);
		if (wc.status == IBV_WC_SUCCESS) {
			got++;
			post_recv(b, 0, 256 + 40);
		}
	}
	while (next_wc(b, 1000).status == IBV_WC_SUCCESS)
		got++;
	printf("ud sent %d received %d\n", n, got);
	return 0;
}

static void own_handler(int sig)
{
	static const char say[] = "own handler: SIGSEGV\n";

	if (sig == SIGSEGV && write(1, say, sizeof(say) - 1) < 0)
		_exit(4);
	_exit(3);
}

static int segv(struct end *a, struct end *b)
{
	int *volatile bad = (int *)(uintptr_t)8;

	if (stream(a, b, 1, 8192, 14))
		return 1;
	*bad = 1;	/* the program's own fault */
	printf("segv: the fault went unseen\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct end a = { 0 }, b = { 0 };
	const char *mode = argc > 3 ? argv[3] : "";
	bool is_ud = !strcmp(mode, "ud"), is_uc = !strcmp(mode, "uc");

	use_ex = !strcmp(mode, "ops-ex");

	if (argc < 4) {
		fprintf(stderr, "usage: verbs_rc A B ops|ops-ex|uc|rnr|recv-errors|odp|dm|parent-domain|segv [handler|bare]|stream N SIZE TIMEOUT|channels N|retry TIMEOUT RETRY|ud N PKEY_INDEX\n");
		return 2;
	}
	if (!strcmp(mode, "segv") && argc == 5 && !strcmp(argv[4], "handler"))
		signal(SIGSEGV, own_handler);
	if (!strcmp(mode, "segv") && argc == 5 && !strcmp(argv[4], "bare")) {
		int *volatile bad = (int *)(uintptr_t)8;

		*bad = 1;	/* the same fault with no device open: how it ends */
	}
	open_end(&a, argv[1], is_ud ? IBV_QPT_UD : is_uc ? IBV_QPT_UC : IBV_QPT_RC);
	open_end(&b, argv[2], is_ud ? IBV_QPT_UD : is_uc ? IBV_QPT_UC : IBV_QPT_RC);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "ops"))
		return ops(&a, &b);
	if (use_ex) {
		connect_rc(&a, &b, 14, 7, 7);
		connect_rc(&b, &a, 14, 7, 7);
		ex_edges(&a, &b);
		return ops(&a, &b);
	}
	if (!strcmp(mode, "rnr"))
		return rnr(&a, &b);
	if (!strcmp(mode, "recv-errors"))
		return recv_errors(&a, &b);
	if (!strcmp(mode, "odp"))
		return odp(&a, &b);
	if (!strcmp(mode, "dm"))
		return dm(&a, &b);
	if (!strcmp(mode, "parent-domain"))
		return parent_domain(&a, &b);
	if (is_uc)
		return uc(&a, &b);
	if (!strcmp(mode, "stream") && argc == 7)
		return stream(&a, &b, atoi(argv[4]), (size_t)atoi(argv[5]), atoi(argv[6]));
	if (!strcmp(mode, "segv"))
		return segv(&a, &b);
	if (!strcmp(mode, "channels") && argc == 5)
		return channels(&a, &b, atoi(argv[4]));
	if (!strcmp(mode, "retry") && argc == 6)
		return retry(&a, &b, atoi(argv[4]), atoi(argv[5]));
	if (is_ud && argc == 6)
		return ud(&a, &b, atoi(argv[4]), atoi(argv[5]));
	fprintf(stderr, "verbs_rc: bad mode or arguments\n");
	return 2;
}
