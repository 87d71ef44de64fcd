/* SPDX-License-Identifier: MIT */
/*
 * verbs_mcast DEV: what ibv_attach_mcast and ibv_detach_mcast take and
 * refuse (the kernel's rules: ib_uverbs_attach_mcast, ib_attach_mcast),
 * and the device's multicast limits, one past each. Prints "WHAT: ok" or
 * "WHAT: ERRNO TEXT", and "KIND: N made, next ERRNO TEXT" for a limit
 * (tests/e2e/multicast.sh); then a UD QP's own multicast looped back
 * to it, and not with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB ("self loopback
 * (blocked|not blocked): sender N, other N").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define MLID	0xc000

static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp *make_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp) {
		fprintf(stderr, "verbs_mcast: ibv_create_qp: %s\n", strerror(errno));
		exit(1);
	}
	return qp;
}

/* A multicast GID, ff12:401b::N. */
static union ibv_gid mgid(unsigned n)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xff;
	g.raw[1] = 0x12;
	g.raw[2] = 0x40;
	g.raw[3] = 0x1b;
	g.raw[12] = (uint8_t)(n >> 24);
	g.raw[13] = (uint8_t)(n >> 16);
	g.raw[14] = (uint8_t)(n >> 8);
	g.raw[15] = (uint8_t)n;
	return g;
}

#define LOOP_MLID	0xc001
#define QKEY		0x1234

static char buf[8192];
static struct ibv_mr *mr;

/* A UD QP on port 1, in RTS, attached to group 1 at LOOP_MLID, with two
 * receive WRs; its create flags @flags. */
static struct ibv_qp *loop_qp(struct ibv_context *ctx, uint32_t flags, unsigned slot)
{
	struct ibv_qp_init_attr_ex a = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, .pd = pd,
		.create_flags = flags };
	struct ibv_qp_attr x = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &a);
	union ibv_gid g = mgid(1);
	unsigned i;

	if (!qp || ibv_modify_qp(qp, &x, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY))
		exit(1);
	x.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(qp, &x, IBV_QP_STATE);
	x.qp_state = IBV_QPS_RTS;
	ibv_modify_qp(qp, &x, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (ibv_attach_mcast(qp, &g, LOOP_MLID))
		exit(1);
	for (i = 0; i < 2; i++) {
		struct ibv_sge sg = { (uintptr_t)buf + 4096 * slot + 2048 * i, 2048, mr->lkey };
		struct ibv_recv_wr w = { .sg_list = &sg, .num_sge = 1 }, *bad;

		ibv_post_recv(qp, &w, &bad);
	}
	return qp;
}

/* One multicast SEND from a QP made with @flags, another QP of the port
 * attached too: who received it. */
static void self_loopback(struct ibv_context *ctx, uint32_t flags)
{
	struct ibv_qp *sender = loop_qp(ctx, flags, 0), *other = loop_qp(ctx, 0, 1);
	struct ibv_ah_attr aa = { .dlid = LOOP_MLID, .port_num = 1, .is_global = 1,
		.grh = { .dgid = mgid(1), .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge sg = { (uintptr_t)buf + 8000, 10, mr->lkey };
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
		.wr.ud = { ah, 0xffffff, QKEY } }, *bad;
	struct timespec t0, t;
	unsigned self = 0, others = 0;
	struct ibv_wc wc;

	if (!ah || ibv_post_send(sender, &w, &bad))
		exit(1);
	/* Until each QP that should have a copy has it (10 s at most); a
	 * blocked sender's would have come with the other's (one delivery,
	 * one context's ring), which the drain after takes. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; (!others || (!flags && !self)) && t.tv_sec - t0.tv_sec < 10;
	     clock_gettime(CLOCK_MONOTONIC, &t))
		while (ibv_poll_cq(cq, 1, &wc) == 1)
			if (wc.opcode == IBV_WC_RECV && wc.qp_num == sender->qp_num)
				self++;
			else if (wc.opcode == IBV_WC_RECV && wc.qp_num == other->qp_num)
				others++;
	while (ibv_poll_cq(cq, 1, &wc) == 1)
		if (wc.opcode == IBV_WC_RECV && wc.qp_num == sender->qp_num)
			self++;
	printf("self loopback (%s): sender %u, other %u\n", flags ? "blocked" : "not blocked",
	       self, others);
	/* Gone again: the limits below count from none. */
	ibv_detach_mcast(sender, &aa.grh.dgid, LOOP_MLID);
	ibv_detach_mcast(other, &aa.grh.dgid, LOOP_MLID);
	ibv_destroy_qp(sender);
	ibv_destroy_qp(other);
	ibv_destroy_ah(ah);
}

static void say(const char *what, int r)
{
	printf("%s: %s\n", what, r ? strerror(r) : "ok");
}

static void limit(const char *kind, unsigned made, int next)
{
	printf("%s: %u made, next %s\n", kind, made, strerror(next));
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_qp *ud, *rc, **qps;
	union ibv_gid g = mgid(1), uni = mgid(1);
	unsigned i, j, n, made;
	int r = 0;

	for (i = 0; argc == 2 && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &da)) {
		fprintf(stderr, "usage: verbs_mcast DEV (an ibemu device)\n");
		return 2;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ud = make_qp(IBV_QPT_UD);
	rc = make_qp(IBV_QPT_RC);
	uni.raw[0] = 0xfe;

	say("rc qp", ibv_attach_mcast(rc, &g, MLID));
	say("unicast gid", ibv_attach_mcast(ud, &uni, MLID));
	say("unicast lid", ibv_attach_mcast(ud, &g, 0x1));
	say("permissive lid", ibv_attach_mcast(ud, &g, 0xffff));
	say("attach", ibv_attach_mcast(ud, &g, MLID));
	say("attach again", ibv_attach_mcast(ud, &g, MLID));
	say("destroy attached", ibv_destroy_qp(ud));
	say("detach", ibv_detach_mcast(ud, &g, MLID));
	say("detach again", ibv_detach_mcast(ud, &g, MLID));
	say("destroy detached", ibv_destroy_qp(ud));

	/* The sender's own multicast, looped back or blocked; the flag on
	 * a QP of another type is refused. */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!mr || !cq)
		return 1;
	self_loopback(ctx, 0);
	self_loopback(ctx, IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	errno = 0;
	say("block self loopback on an RC QP", ibv_create_qp_ex(ctx, &(struct ibv_qp_init_attr_ex){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS, .pd = pd,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB }) ? 0 : errno);

	/* QPs in one group: max_mcast_qp_attach, then one more. */
	n = (unsigned)da.max_mcast_qp_attach + 1;
	qps = calloc(n, sizeof(*qps));
	for (i = 0; i < n; i++)
		qps[i] = make_qp(IBV_QPT_UD);
	for (i = 0; i < n && !(r = ibv_attach_mcast(qps[i], &g, MLID)); i++)
		;
	limit("qps in a group", i, r);
	for (j = 0; j < i; j++)
		ibv_detach_mcast(qps[j], &g, MLID);
	/* Groups: max_mcast_grp, one QP in each, then one more group. */
	for (i = 0; i <= (unsigned)da.max_mcast_grp; i++) {
		g = mgid(i);
		if ((r = ibv_attach_mcast(qps[0], &g, MLID)))
			break;
	}
	limit("groups", i, r);
	/* Attachments in all: more QPs in those groups, to the total. */
	n = i;
	made = n;
	for (j = 1, r = 0; !r; j++)
		for (i = 0; i < n && !r; i++) {
			g = mgid(i);
			if (!(r = ibv_attach_mcast(qps[j], &g, MLID)))
				made++;
		}
	limit("attachments", made, r);
	return 0;
}
