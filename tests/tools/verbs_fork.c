/* SPDX-License-Identifier: MIT */
/*
 * verbs_fork DEV init|noinit: fork() in a verbs program (tests/e2e/
 * verbs.sh). With "init", ibv_fork_init() first: a region registered
 * after it is not in a child (MADV_DONTFORK: the child's touch is
 * SIGSEGV, as on a kernel where fork needs it). Either way a child that
 * exits, closing its copies of the device's files, takes nothing from
 * the parent, whose RDMA WRITE through the port after the fork lands;
 * and a child opens the device and uses a context of its own (exit 9).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs_loop.h"

/* A child's own context: opened, a PD, a CQ and a loop-back SEND. */
static int own_context(const char *dev)
{
	struct ibv_context *ctx = loop_open(dev);
	struct ibv_port_attr pa;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *a = pd ? ibv_create_qp(pd, &qa) : NULL, *b = pd ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;

	if (!a || !b || ibv_query_port(ctx, 1, &pa))
		return 1;
	loop_connect(a, pa.lid, b->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	loop_connect(b, pa.lid, a->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	if (ibv_post_recv(b, &rwr, &rbad) || ibv_post_send(a, &wr, &bad))
		return 1;
	return loop_wait(cq).status == IBV_WC_SUCCESS && loop_wait(cq).status == IBV_WC_SUCCESS ?
	       9 : 1;
}

/* How a child that does @what (0 nothing, 1 touch @p, 2 open @dev) ended. */
static const char *child(volatile char *p, int what_to_do, const char *dev)
{
	static char what[64];
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		/* The default action, not a sanitizer's handler, which
		 * would turn the SIGSEGV into an exit. */
		signal(SIGSEGV, SIG_DFL);
		if (what_to_do == 1)
			p[0] = 'c';
		if (what_to_do == 2)
			_exit(own_context(dev));
		_exit(7);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return "fork failed";
	if (WIFSIGNALED(st))
		snprintf(what, sizeof(what), "killed by %s", strsignal(WTERMSIG(st)));
	else
		snprintf(what, sizeof(what), "exited %d", WEXITSTATUS(st));
	return what;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	static char mem[8192] __attribute__((aligned(4096)));
	int init = argc == 3 && !strcmp(argv[2], "init");
	struct ibv_qp *a, *b;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;

	if (init)
		printf("fork_init: %s\n", strerror(ibv_fork_init()));
	ctx = loop_open(argc == 3 ? argv[1] : NULL);
	if (!ctx || ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "usage: verbs_fork DEV init|noinit (an ibemu device)\n");
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	a = ibv_create_qp(pd, &qa);
	b = ibv_create_qp(pd, &qa);
	if (!pd || !cq || !mr || !a || !b)
		return 1;
	loop_connect(a, pa.lid, b->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	loop_connect(b, pa.lid, a->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);

	printf("a child that exits: %s\n", child(mem, 0, NULL));
	printf("a child that touches the region: %s\n", child(mem + 4096, 1, NULL));
	printf("a child with a context of its own: %s\n", child(mem, 2, argv[1]));

	strcpy(mem, "after the fork");
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.num_sge = 1, .sg_list = &(struct ibv_sge){ (uintptr_t)mem, 15, mr->lkey },
		.wr.rdma = { (uintptr_t)mem + 4096, mr->rkey } }, *bad;
	if (ibv_post_send(a, &wr, &bad))
		return 1;
	printf("the parent's write: %s, \"%s\"\n", ibv_wc_status_str(loop_wait(cq).status),
	       mem + 4096);
	return 0;
}
