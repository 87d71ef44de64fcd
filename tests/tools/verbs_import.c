/* SPDX-License-Identifier: MIT */
/*
 * verbs_import DEV: a context imported on a duplicate of another's
 * command fd (ibv_import_device), with that context's PD and region
 * imported by handle (ibv_import_pd, ibv_import_mr), as rdma-core's
 * test_shared_pd does; an RC QP of the imported context, on the
 * imported PD, takes an RDMA WRITE into the imported region and SENDs
 * from it, to and from a QP of a third context, looped through port 1.
 * Then what import refuses, and a PD in use through its import (EBUSY).
 * Prints "WHAT: RESULT" a line (tests/e2e/verbs.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs_loop.h"

static const char *err(int e)
{
	return e ? strerror(e) : "ok";
}

static struct ibv_qp *rc_qp(struct ibv_context *c, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	(void)c;
	if (!qp) {
		perror("ibv_create_qp");
		exit(1);
	}
	return qp;
}

int main(int argc, char **argv)
{
	static char mem[4096], peer_mem[4096];
	struct ibv_context *a, *b, *c;
	struct ibv_pd *pd, *ipd, *cpd;
	struct ibv_mr *mr, *imr, *cmr;
	struct ibv_cq *bcq, *ccq;
	struct ibv_qp *bqp, *cqp;
	struct ibv_port_attr port;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_wc wc;
	int fd;

	if (argc != 2 || !(a = loop_open(argv[1])) || !(c = loop_open(argv[1]))) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	if (ibv_query_port(a, 1, &port))
		return 1;
	pd = ibv_alloc_pd(a);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!pd || !mr)
		return 1;

	/* The import, on a duplicate of a's command fd. */
	fd = dup(a->cmd_fd);
	b = ibv_import_device(fd);
	printf("import device: %s\n", err(b ? 0 : errno));
	if (!b)
		return 1;
	ipd = ibv_import_pd(b, pd->handle);
	printf("import pd: %s\n", err(ipd ? 0 : errno));
	if (!ipd)
		return 1;
	printf("import pd: handle %s\n", ipd->handle == pd->handle ? "same" : "another");
	imr = ibv_import_mr(ipd, mr->handle);
	printf("import mr: %s\n", err(imr ? 0 : errno));
	if (!imr)
		return 1;
	printf("import mr: keys %s\n", imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
					       imr->length == mr->length ? "same" : "another");
	printf("import pd of no handle: %s\n", err(ibv_import_pd(b, pd->handle + 1000) ? 0 : errno));
	printf("import mr of no handle: %s\n", err(ibv_import_mr(ipd, 0xdead00) ? 0 : errno));

	/* A QP of b on the imported PD, and one of c, connected. */
	bcq = ibv_create_cq(b, 8, NULL, NULL, 0);
	cpd = ibv_alloc_pd(c);
	ccq = ibv_create_cq(c, 8, NULL, NULL, 0);
	cmr = ibv_reg_mr(cpd, peer_mem, sizeof(peer_mem), IBV_ACCESS_LOCAL_WRITE);
	if (!bcq || !cpd || !ccq || !cmr)
		return 1;
	bqp = rc_qp(b, ipd, bcq);
	cqp = rc_qp(c, cpd, ccq);
	loop_connect(bqp, port.lid, cqp->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);
	loop_connect(cqp, port.lid, bqp->qp_num, LOOP_RTR_RC, LOOP_RTS_RC);

	/* c writes into the region through the imported R_Key. */
	strcpy(peer_mem, "written through the import");
	sge = (struct ibv_sge){ .addr = (uintptr_t)peer_mem, .length = 64, .lkey = cmr->lkey };
	wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)mem, .rkey = imr->rkey } };
	if (ibv_post_send(cqp, &wr, &bad))
		return 1;
	wc = loop_wait(ccq);
	printf("rdma write to the imported region: %s, %s\n", ibv_wc_status_str(wc.status),
	       strcmp(mem, "written through the import") ? "not there" : "there");

	/* b sends from the region by the imported L_Key. */
	memset(peer_mem, 0, sizeof(peer_mem));
	sge = (struct ibv_sge){ .addr = (uintptr_t)peer_mem, .length = 64, .lkey = cmr->lkey };
	rwr = (struct ibv_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	if (ibv_post_recv(cqp, &rwr, &rbad))
		return 1;
	strcpy(mem, "sent from the import");
	{
		struct ibv_sge s = { .addr = (uintptr_t)mem, .length = 64, .lkey = imr->lkey };

		wr = (struct ibv_send_wr){ .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED };
		if (ibv_post_send(bqp, &wr, &bad))
			return 1;
		wc = loop_wait(bcq);
	}
	printf("send from the imported region: %s", ibv_wc_status_str(wc.status));
	wc = loop_wait(ccq);
	printf(", received %s, %s\n", ibv_wc_status_str(wc.status),
	       strcmp(peer_mem, "sent from the import") ? "not the data" : "the data");

	/* The PD has a QP through its import: it stays. */
	printf("dealloc pd in use through its import: %s\n", err(ibv_dealloc_pd(pd)));
	ibv_destroy_qp(bqp);
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	ibv_destroy_cq(bcq);
	printf("close imported: %s\n", err(ibv_close_device(b)));
	printf("dereg mr: %s\n", err(ibv_dereg_mr(mr)));
	printf("dealloc pd: %s\n", err(ibv_dealloc_pd(pd)));

	/* Not a context of this process's: a file that is no device, and
	 * one that is (the node's own: another process's context there). */
	fd = open("/dev/null", O_RDWR);
	printf("import of /dev/null: %s\n", err(ibv_import_device(fd) ? 0 : errno));
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	printf("import of a file: %s\n", err(ibv_import_device(fd) ? 0 : errno));
	close(fd);
	fd = open("/dev/infiniband/uverbs0", O_RDWR);
	printf("import of the device node: %s\n", err(ibv_import_device(fd) ? 0 : errno));
	close(fd);
	ibv_destroy_qp(cqp);
	ibv_destroy_cq(ccq);
	ibv_dereg_mr(cmr);
	ibv_dealloc_pd(cpd);
	ibv_close_device(c);
	ibv_close_device(a);
	return 0;
}
