/* SPDX-License-Identifier: MIT */
/*
 * A program that closes every fd it did not open itself, the provider's
 * too (as a daemonizing program does with close_range), then goes on
 * using its device: tests/e2e/verbs.sh checks that the provider says so
 * in one line, not one per batch of packets, and that ibv_close_device
 * returns. Sends UD packets to its own QP: 20 batches before, 20 after.
 *
 *   verbs_closefds DEVICE
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "verbs_closefds: %s\n", what);
	exit(2);
}

static void sends(struct ibv_qp *qp, struct ibv_ah *ah, struct ibv_mr *mr, char *buf, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sg = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .wr.ud = { .ah = ah, .remote_qpn = qp->qp_num,
						     .remote_qkey = 0x11111111 } },
				   *bad;

		/* Unsignaled: the send queue is not waited on. */
		if (ibv_post_send(qp, &wr, &bad))
			break;
	}
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL), **d;
	static char buf[4096];
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;

	if (argc != 2 || !list)
		die("usage: verbs_closefds DEVICE");
	for (d = list; *d && !ctx; d++)
		if (!strcmp(ibv_get_device_name(*d), argv[1]))
			ctx = ibv_open_device(*d);
	if (!ctx || ibv_query_port(ctx, 1, &pa) || !(pd = ibv_alloc_pd(ctx)) ||
	    !(mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)) ||
	    !(cq = ibv_create_cq(ctx, 64, NULL, NULL, 0)))
		die("cannot open the device");
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD, .sq_sig_all = 0,
		.cap = { .max_send_wr = 4096, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } });
	if (!qp)
		die("cannot make a UD QP");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("RTS");
	if (!(ah = ibv_create_ah(pd, &(struct ibv_ah_attr){ .dlid = pa.lid, .port_num = 1 })))
		die("cannot make an AH");
	for (int b = 0; b < 20; b++)
		sends(qp, ah, mr, buf, 10);
	fprintf(stderr, "verbs_closefds: closing every fd from 3 up\n");
	if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	for (int b = 0; b < 20; b++)
		sends(qp, ah, mr, buf, 10);
	ibv_close_device(ctx);	/* what it leaves is lost with the fds */
	printf("closefds: ibv_close_device returned\n");
	return 0;
}
