/* SPDX-License-Identifier: MIT */
/*
 * verbs_mw DEV: memory windows on port 1 of DEV, between RC QPs that
 * loop back through the port (tests/e2e/verbs.sh). A requester writes,
 * reads and SENDs with Invalidate through windows its responder bound:
 * type 1 (ibv_bind_mw) and type 2 (a BIND_MW WR; SEND with Invalidate,
 * LOCAL_INV); then as rdma-core's own tests bind them (rights with
 * LOCAL_WRITE among them, ibv_wr_bind_mw, an R_Key of another index,
 * a zero-based window, dealloc while bound). Prints "WHAT: STATUS" for
 * each completion or call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_loop.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq, *rcq;	/* rcq: the responders' receives */
static uint16_t lid;
static char mem[4096];
static struct ibv_mr *mr, *plain;

/* A requester and a responder QP, connected through the port. */
struct pair {
	struct ibv_qp *req, *rsp;
};

static struct pair pair(void)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct pair p = { ibv_create_qp(pd, &a), ibv_create_qp(pd, &a) };

	if (!p.req || !p.rsp)
		exit(1);
	loop_connect(p.req, lid, p.rsp->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	loop_connect(p.rsp, lid, p.req->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	return p;
}

/* The same with the responder made by ibv_create_qp_ex, which binds and
 * invalidates through the ibv_wr_* calls. */
static struct pair pair_ex(void)
{
	struct ibv_qp_init_attr_ex a = { .send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV };
	struct ibv_qp_init_attr r = { .send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = a.cap };
	struct pair p = { ibv_create_qp(pd, &r), ibv_create_qp_ex(ctx, &a) };

	if (!p.req || !p.rsp)
		exit(1);
	loop_connect(p.req, lid, p.rsp->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	loop_connect(p.rsp, lid, p.req->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	return p;
}

static struct ibv_wc wait_wc(void)
{
	return loop_wait(cq);
}

/* Post @wr on @qp and print the status of its completion as WHAT. */
static void run(const char *what, struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int r;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if ((r = ibv_post_send(qp, wr, &bad))) {
		printf("%s: post %s\n", what, strerror(r));
		return;
	}
	printf("%s: %s\n", what, ibv_wc_status_str(wait_wc().status));
}

static struct ibv_send_wr rdma(enum ibv_wr_opcode op, uint32_t rkey, uint64_t off, uint32_t len)
{
	static struct ibv_sge sg;

	sg = (struct ibv_sge){ (uintptr_t)mem + 2048, len, plain->lkey };
	return (struct ibv_send_wr){ .opcode = op, .num_sge = 1, .sg_list = &sg,
		.wr.rdma = { (uintptr_t)mem + off, rkey } };
}

static struct ibv_mw_bind_info window(uint64_t off, uint64_t len, int access)
{
	return (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)mem + off, .length = len,
					  .mw_access_flags = access };
}

/* A read of @len bytes at the peer's address @va under @rkey. */
static struct ibv_send_wr read_at(uint32_t rkey, uint64_t va, uint32_t len)
{
	struct ibv_send_wr wr = rdma(IBV_WR_RDMA_READ, rkey, 0, len);

	wr.wr.rdma.remote_addr = va;
	return wr;
}

/* A type 2 bind of @mw (key byte of @rkey) on @qp as a WR. */
static void bind2(const char *what, struct ibv_qp *qp, struct ibv_mw *mw, uint32_t rkey,
		  struct ibv_mw_bind_info info)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW, .bind_mw = { mw, rkey, info } };

	run(what, qp, &wr);
}

/* The flows of rdma-core's tests/test_mr.py (MWTest): the window's
 * rights REMOTE_WRITE | LOCAL_WRITE, the QPs' LOCAL_WRITE | REMOTE_WRITE. */
static void ordinary(void)
{
	const int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mw *t1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1), *t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind b = { .wr_id = 2, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = window(0, 128, rw) };
	struct ibv_qp_ex *x;
	struct ibv_send_wr wr;
	struct pair p;
	uint32_t index;

	if (!t1 || !t2)
		exit(1);
	/* Type 1: bound, written, unbound by a bind of length 0. */
	p = pair();
	printf("ordinary type 1 bind: %s\n", strerror(ibv_bind_mw(p.rsp, t1, &b)));
	printf("ordinary type 1 bind completion: %s\n", ibv_wc_status_str(wait_wc().status));
	wr = rdma(IBV_WR_RDMA_WRITE, t1->rkey, 0, 8);
	run("ordinary write through type 1", p.req, &wr);
	b.bind_info = window(0, 0, 0);
	printf("ordinary type 1 unbind: %s\n", strerror(ibv_bind_mw(p.rsp, t1, &b)));
	printf("ordinary type 1 unbind completion: %s\n", ibv_wc_status_str(wait_wc().status));
	wr = rdma(IBV_WR_RDMA_WRITE, t1->rkey, 0, 8);
	run("ordinary write after the unbind", p.req, &wr);

	/* Type 2 by the extended API: bound, written, LOCAL_INV. */
	p = pair_ex();
	x = ibv_qp_to_qp_ex(p.rsp);
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, t2, ibv_inc_rkey(t2->rkey), &(struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)mem, .length = 128, .mw_access_flags = rw });
	printf("ordinary wr_bind_mw: %s\n", strerror(ibv_wr_complete(x)));
	printf("ordinary wr_bind_mw completion: %s\n", ibv_wc_status_str(wait_wc().status));
	wr = rdma(IBV_WR_RDMA_WRITE, t2->rkey, 0, 8);
	run("ordinary write through type 2", p.req, &wr);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, t2->rkey);
	printf("ordinary wr_local_inv: %s\n", strerror(ibv_wr_complete(x)));
	printf("ordinary wr_local_inv completion: %s\n", ibv_wc_status_str(wait_wc().status));
	wr = rdma(IBV_WR_RDMA_WRITE, t2->rkey, 0, 8);
	run("ordinary write after wr_local_inv", p.req, &wr);

	/* A bind WR's R_Key of another index: its key byte is taken, the
	 * window keeps its index (as rxe and mlx5). */
	p = pair();
	index = t2->rkey & ~0xffu;
	bind2("bind type 2, an R_Key of another index", p.rsp, t2, (mr->rkey & ~0xffu) | 0x5a,
	      window(0, 128, rw));
	printf("the window's R_Key: %s\n", t2->rkey == (index | 0x5a) ? "its index, the WR's key byte" :
	       "other");
	wr = rdma(IBV_WR_RDMA_WRITE, t2->rkey, 0, 8);
	run("write through it", p.req, &wr);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = t2->rkey };
	run("its local invalidate", p.rsp, &wr);

	/* Zero-based type 2: the peer names the window from 0 (a window of
	 * its own: the error at the end leaves it bound to a QP in error). */
	ibv_dealloc_mw(t2);
	if (!(t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2)))
		exit(1);
	p = pair();
	strcpy(mem + 512, "zero based");
	bind2("bind type 2 zero-based", p.rsp, t2, ibv_inc_rkey(t2->rkey),
	      window(512, 64, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED));
	memset(mem + 2048, 0, 16);
	wr = read_at(t2->rkey, 0, 11);
	run("read at 0 of the zero-based window", p.req, &wr);
	printf("what it read: \"%s\"\n", mem + 2048);
	wr = read_at(t2->rkey, 60, 8);
	run("read past its end", p.req, &wr);
	ibv_dealloc_mw(t2);
	if (!(t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2)))
		exit(1);

	/* What a bind may not do: a zero-based type 1, a type 2 of length
	 * 0, a type 2 that is bound. */
	p = pair();
	b.bind_info = window(0, 64, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
	ibv_bind_mw(p.rsp, t1, &b);
	printf("zero-based type 1: %s\n", ibv_wc_status_str(wait_wc().status));
	p = pair();
	bind2("type 2 of length 0", p.rsp, t2, ibv_inc_rkey(t2->rkey), window(0, 0, rw));
	p = pair();
	bind2("type 2 bound", p.rsp, t2, ibv_inc_rkey(t2->rkey), window(0, 64, rw));
	bind2("type 2 bound again", p.rsp, t2, ibv_inc_rkey(t2->rkey), window(0, 64, rw));

	/* Dealloc while bound: its R_Key gives nothing any more. */
	ibv_dealloc_mw(t2);
	if (!(t2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2)))
		exit(1);
	p = pair();
	bind2("bind type 2 before dealloc", p.rsp, t2, ibv_inc_rkey(t2->rkey), window(0, 64, rw));
	index = t2->rkey;
	wr = rdma(IBV_WR_RDMA_WRITE, index, 0, 8);
	run("write before the dealloc", p.req, &wr);
	printf("dealloc a bound type 2: %s\n", strerror(ibv_dealloc_mw(t2)));
	wr = rdma(IBV_WR_RDMA_WRITE, index, 0, 8);
	run("write after the dealloc", p.req, &wr);
	ibv_dealloc_mw(t1);
}

int main(int argc, char **argv)
{
	struct ibv_port_attr pa;
	struct ibv_mw *mw1, *mw2;
	struct ibv_send_wr wr;
	struct pair p;

	ctx = loop_open(argc == 2 ? argv[1] : NULL);
	if (!ctx || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "usage: verbs_mw DEV (an ibemu device)\n");
		return 2;
	}
	lid = pa.lid;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, 1024, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	plain = ibv_reg_mr(pd, mem + 1024, 3072, IBV_ACCESS_LOCAL_WRITE);
	errno = 0;
	printf("alloc_mw type 3: %s\n", ibv_alloc_mw(pd, 3) ? "ok" : strerror(errno));
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw1 || !mw2 || !mr || !plain)
		return 1;

	/* Type 1: bound by the responder, 64 bytes at 256, write only. */
	p = pair();
	uint32_t before = mw1->rkey;
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = window(256, 64, IBV_ACCESS_REMOTE_WRITE) };
	printf("bind_mw type 1: %s\n", strerror(ibv_bind_mw(p.rsp, mw1, &b)));
	printf("bind_mw type 1 completion: %s, rkey %s\n", ibv_wc_status_str(wait_wc().status),
	       mw1->rkey == ibv_inc_rkey(before) ? "incremented" : "not incremented");
	strcpy(mem + 2048, "through the window");
	wr = rdma(IBV_WR_RDMA_WRITE, mw1->rkey, 256, 19);
	run("write in the type 1 window", p.req, &wr);
	printf("the window's memory: \"%s\"\n", mem + 256);
	wr = rdma(IBV_WR_RDMA_READ, mw1->rkey, 256, 19);
	run("read in a write-only window", p.req, &wr);

	/* A write past the window's end. */
	p = pair();
	wr = rdma(IBV_WR_RDMA_WRITE, mw1->rkey, 300, 64);
	run("write past the type 1 window", p.req, &wr);

	/* Type 2: bound by a BIND_MW WR of the responder, used through it,
	 * invalidated by the requester's SEND with Invalidate. */
	p = pair();
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_BIND_MW,
		.bind_mw = { mw2, ibv_inc_rkey(mw2->rkey),
			     window(512, 128, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) } };
	run("bind type 2", p.rsp, &wr);
	uint32_t key2 = wr.bind_mw.rkey;
	wr = rdma(IBV_WR_RDMA_READ, key2, 512, 32);
	run("read in the type 2 window", p.req, &wr);
	struct ibv_recv_wr rwr = { .wr_id = 9, .num_sge = 1,
		.sg_list = &(struct ibv_sge){ (uintptr_t)mem + 3072, 64, plain->lkey } }, *rbad;
	ibv_post_recv(p.rsp, &rwr, &rbad);
	wr = rdma(IBV_WR_SEND_WITH_INV, 0, 0, 8);
	wr.invalidate_rkey = key2;
	run("send with invalidate", p.req, &wr);
	struct ibv_wc wc = loop_wait(rcq);
	printf("its receive: %s, %s, rkey %s\n", ibv_wc_status_str(wc.status),
	       (wc.wc_flags & IBV_WC_WITH_INV) ? "with invalidate" : "without invalidate",
	       wc.invalidated_rkey == key2 ? "named" : "not named");
	wr = rdma(IBV_WR_RDMA_READ, key2, 512, 32);
	run("read in the invalidated window", p.req, &wr);

	/* Type 2 through the QP that bound it, LOCAL_INV, then through
	 * another QP than the one that bound it. */
	p = pair();
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_BIND_MW,
		.bind_mw = { mw2, ibv_inc_rkey(key2), window(512, 128, IBV_ACCESS_REMOTE_READ) } };
	run("bind type 2 again", p.rsp, &wr);
	key2 = wr.bind_mw.rkey;
	wr = rdma(IBV_WR_RDMA_READ, key2, 512, 32);
	run("read through the QP that bound it", p.req, &wr);
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = key2 };
	run("local invalidate", p.rsp, &wr);
	wr = rdma(IBV_WR_RDMA_READ, key2, 512, 32);
	run("read after the local invalidate", p.req, &wr);
	p = pair();
	struct pair other = pair();
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_BIND_MW,
		.bind_mw = { mw2, ibv_inc_rkey(key2), window(512, 128, IBV_ACCESS_REMOTE_READ) } };
	run("bind type 2 on another pair", other.rsp, &wr);
	wr = rdma(IBV_WR_RDMA_READ, wr.bind_mw.rkey, 512, 32);
	run("read through a QP that did not bind it", p.req, &wr);

	/* A region without MW_BIND. */
	p = pair();
	b.bind_info = (struct ibv_mw_bind_info){ .mr = plain, .addr = (uintptr_t)mem + 1024,
						 .length = 64, .mw_access_flags = IBV_ACCESS_REMOTE_READ };
	printf("bind_mw on a region without MW_BIND: %s\n", strerror(ibv_bind_mw(p.rsp, mw1, &b)));
	printf("its completion: %s\n", ibv_wc_status_str(wait_wc().status));
	printf("dealloc_mw: %s\n", strerror(ibv_dealloc_mw(mw1)));
	ordinary();
	return 0;
}
