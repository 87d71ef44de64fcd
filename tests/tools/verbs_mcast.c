/* SPDX-License-Identifier: MIT */
/*
 * verbs_mcast DEV: what ibv_attach_mcast and ibv_detach_mcast take and
 * refuse (the kernel's rules: ib_uverbs_attach_mcast, ib_attach_mcast),
 * and the device's multicast limits, one past each. Prints "WHAT: ok" or
 * "WHAT: ERRNO TEXT", and "KIND: N made, next ERRNO TEXT" for a limit
 * (tests/e2e/multicast.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
