/* SPDX-License-Identifier: MIT */
/*
 * verbs_mw DEV: memory windows on port 1 of DEV, between RC QPs that
 * loop back through the port (tests/e2e/verbs.sh). A requester writes,
 * reads and SENDs with Invalidate through windows its responder bound:
 * type 1 (ibv_bind_mw) and type 2 (a BIND_MW WR; SEND with Invalidate,
 * LOCAL_INV). Prints "WHAT: STATUS" for each completion or call.
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
	return 0;
}
