/* SPDX-License-Identifier: MIT */
/*
 * What the verbs test tools that loop QPs back through port 1 of one
 * device share (verbs_xrc.c, verbs_mw.c): opening it, taking a QP to RTS
 * towards another QP at the port's own LID, waiting for a completion.
 */
#ifndef IBEMU_TESTS_VERBS_LOOP_H
#define IBEMU_TESTS_VERBS_LOOP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

/* The device called @name, or NULL. */
static inline struct ibv_context *loop_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; name && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	return ctx;
}

/* @qp through Init and RTR to RTS, connected to @dqpn at @lid; @rtr and
 * @rts: the attributes those transitions take beyond the ones every
 * connected QP needs (RC's responder and requester ones). */
static inline void loop_connect(struct ibv_qp *qp, uint16_t lid, uint32_t dqpn, int rtr, int rts)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		exit(1);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .dlid = lid, .port_num = 1 } };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | rtr))
		exit(1);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 1 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | rts))
		exit(1);
}
#define LOOP_RTR_RC	(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define LOOP_RTS_RC	(IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

/* The next completion of @cq; the tool ends (1) when none comes. */
static inline struct ibv_wc loop_wait(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	long n;

	for (n = 0; n < 400000000; n++)
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
	fprintf(stderr, "no completion\n");
	exit(1);
}

#endif
