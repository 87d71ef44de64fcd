/* SPDX-License-Identifier: MIT */
/*
 * The receiving end of tests/e2e/verbs-hostile.sh: an ordinary UD
 * program. It makes a UD QP with Q_Key 0x11111111 on DEVICE port 1,
 * prints "victim lid L qpn Q", then prints one line for each completion
 * (its source QP, SLID and the payload's first bytes as text) until a
 * message "STOP" comes, and exits 0. A line is one write: the test reads
 * them as they come.
 *
 *   verbs_victim DEVICE
 */
#include <ctype.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QKEY	0x11111111u
#define BUFS	64
#define BUF	(40 + 256)	/* the GRH's room, then the message */

static void die(const char *what)
{
	fprintf(stderr, "verbs_victim: %s\n", what);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL), **d;
	static char bufs[BUFS][BUF];
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || !list)
		die("usage: verbs_victim DEVICE");
	for (d = list; *d && !ctx; d++)
		if (!strcmp(ibv_get_device_name(*d), argv[1]))
			ctx = ibv_open_device(*d);
	if (!ctx || ibv_query_port(ctx, 1, &pa) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(mr = ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE)) ||
	    !(cq = ibv_create_cq(ctx, BUFS, NULL, NULL, 0)))
		die("cannot open the device");
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = BUFS, .max_send_sge = 1,
			 .max_recv_sge = 1 } });
	if (!qp)
		die("cannot make a UD QP");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("RTS");
	for (i = 0; i < BUFS; i++) {
		struct ibv_sge sg = { (uintptr_t)bufs[i], BUF, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			die("cannot post a receive");
	}
	printf("victim lid %u qpn %u\n", pa.lid, qp->qp_num);
	for (;;) {
		struct ibv_wc wc;
		char text[33];
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("poll failed");
		if (!n)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			printf("got status %d\n", wc.status);
			continue;
		}
		for (i = 0; i < sizeof(text) - 1 && i + 40 < wc.byte_len; i++) {
			char c = bufs[wc.wr_id][40 + i];

			text[i] = isprint((unsigned char)c) ? c : '.';
		}
		text[i] = 0;
		printf("got src_qp %u slid %u text %s\n", wc.src_qp, wc.slid, text);
		if (!strcmp(text, "STOP"))
			break;
		{
			struct ibv_sge sg = { (uintptr_t)bufs[wc.wr_id], BUF, mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &sg, .num_sge = 1 },
					   *bad;

			if (ibv_post_recv(qp, &wr, &bad))
				die("cannot post a receive");
		}
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
