/* SPDX-License-Identifier: MIT */
/*
 * verbs_xrc DEV: XRC's rules and a loopback exchange on port 1 of DEV
 * (tests/e2e/perftest.sh): what ibv_open_xrcd, ibv_create_srq_ex,
 * ibv_get_srq_num, ibv_create_qp_ex and ibv_close_xrcd take and refuse,
 * then an initiator SENDing to its target twice, naming a wrong SRQ and
 * the right one. Prints "WHAT: ok" or "WHAT: ERRNO TEXT", and the
 * completions' statuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_loop.h"

static void say(const char *what, int r)
{
	printf("%s: %s\n", what, r ? strerror(r) : "ok");
}

static int err_of(const void *made)
{
	return made ? 0 : errno;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = loop_open(argc == 2 ? argv[1] : NULL);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD };
	struct ibv_port_attr pa;
	struct ibv_xrcd *xrcd;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq, *basic;
	struct ibv_qp *ini, *tgt;
	struct ibv_mr *mr;
	uint32_t srqn = 0, n;
	static char buf[2][64];

	if (!ctx || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "usage: verbs_xrc DEV (an ibemu device)\n");
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);

	xa.fd = -1;
	say("open_xrcd without oflags", err_of(ibv_open_xrcd(ctx, &xa)));
	xa.comp_mask |= IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.oflags = O_CREAT;
	xrcd = ibv_open_xrcd(ctx, &xa);
	say("open_xrcd", err_of(xrcd));

	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd,
	};
	say("xrc srq without a cq", err_of(ibv_create_srq_ex(ctx, &sa)));
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = rcq;
	srq = ibv_create_srq_ex(ctx, &sa);
	say("xrc srq", err_of(srq));
	basic = ibv_create_srq(pd, &(struct ibv_srq_init_attr){ .attr = { .max_wr = 1, .max_sge = 1 } });
	say("srq number of a basic srq", ibv_get_srq_num(basic, &n));
	say("srq number", ibv_get_srq_num(srq, &srqn));

	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_RECV };
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = pd;
	say("xrc target without a domain", err_of(ibv_create_qp_ex(ctx, &qa)));
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = xrcd;
	tgt = ibv_create_qp_ex(ctx, &qa);
	say("xrc target", err_of(tgt));
	qa = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_XRC_SEND, .send_cq = scq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd };
	ini = ibv_create_qp_ex(ctx, &qa);
	say("xrc initiator", err_of(ini));
	if (!xrcd || !srq || !tgt || !ini)
		return 1;
	say("close_xrcd in use", ibv_close_xrcd(xrcd));

	struct ibv_recv_wr rwr = { .wr_id = 7, .num_sge = 1,
		.sg_list = &(struct ibv_sge){ (uintptr_t)buf[1], 64, mr->lkey } }, *rbad;
	say("post_recv on an initiator", ibv_post_recv(ini, &rwr, &rbad));
	/* Each has half of RC's attributes (an XRC QP is half of one). */
	loop_connect(tgt, pa.lid, ini->qp_num, LOOP_RTR_RC, 0);
	loop_connect(ini, pa.lid, tgt->qp_num, 0, LOOP_RTS_RC);
	say("post_srq_recv", ibv_post_srq_recv(srq, &rwr, &rbad));

	strcpy(buf[0], "through the xrc srq");
	struct ibv_send_wr swr = { .wr_id = 1, .opcode = IBV_WR_SEND, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.sg_list = &(struct ibv_sge){ (uintptr_t)buf[0], 20, mr->lkey } }, *sbad;
	swr.qp_type.xrc.remote_srqn = srqn;
	say("post_send", ibv_post_send(ini, &swr, &sbad));
	struct ibv_wc wc = loop_wait(scq);
	printf("send: %s\n", ibv_wc_status_str(wc.status));
	wc = loop_wait(rcq);
	printf("recv on the srq's cq: %s wr_id %llu, %u bytes, \"%s\"\n", ibv_wc_status_str(wc.status),
	       (unsigned long long)wc.wr_id, wc.byte_len, buf[1]);
	swr.qp_type.xrc.remote_srqn = srqn + 100;
	say("post_send to another srq", ibv_post_send(ini, &swr, &sbad));
	wc = loop_wait(scq);
	printf("send to another srq: %s\n", ibv_wc_status_str(wc.status));

	say("destroy initiator", ibv_destroy_qp(ini));
	say("destroy target", ibv_destroy_qp(tgt));
	say("destroy xrc srq", ibv_destroy_srq(srq));
	say("close_xrcd", ibv_close_xrcd(xrcd));
	return 0;
}
