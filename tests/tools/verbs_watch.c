/* SPDX-License-Identifier: MIT */
/*
 * verbs_watch: what a verbs program sees of an emulated CA, through
 * libibverbs only (tests/e2e/verbs-*.sh).
 *
 *   verbs_watch events DEV COUNT TIMEOUT_S
 *       print "ready", then "port N EVENT" for each async event, until
 *       COUNT events (exit 0) or TIMEOUT_S seconds (exit 1)
 *   verbs_watch tables DEV PORT
 *       print "pkey I 0xKEY" and "gid I GID" for the port's whole tables
 *   verbs_watch refused DEV
 *       calls the provider must refuse, and some it must take: print
 *       "VERB: ok" or "VERB: ERRNO TEXT"
 *   verbs_watch limits DEV
 *       for QPs, PDs, MRs, CQs, AHs, SRQs and MWs: make as many as
 *       ibv_query_device says, then one more; print "KIND: N made, next
 *       ERRNO TEXT" (and that one more can be made once one is freed)
 *   verbs_watch pin DEV MIB
 *       ibv_reg_mr on memory the kernel would refuse to pin and on MIB
 *       MiB of it: "WHAT: ok" or "WHAT: ERRNO TEXT"
 *   verbs_watch sink DEV N QKEY
 *       N contexts, a UD QP each with QKEY: print "sink QPN" for each,
 *       then stop (SIGSTOP), reading nothing
 *   verbs_watch flood DEV DLID QKEY COUNT QPN...
 *       COUNT UD SENDs of an MTU each, round robin to the QPNs at DLID:
 *       "flood COUNT sent"
 *   verbs_watch catch DEV QKEY NQP EXPECT
 *       NQP UD QPs of 4096 receive WRs each: print "catch QPN...", stop
 *       (SIGSTOP); once continued, "caught N" (EXPECT, or what came
 *       before a second passed without any)
 *   verbs_watch idle-poll DEV N
 *       poll an empty CQ N times; print "polled N, found F" (what an
 *       empty poll costs is for strace to count)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		fprintf(stderr, "verbs_watch: cannot open %s: %s\n", name, strerror(errno));
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int events(struct ibv_context *ctx, int count, int timeout_s)
{
	long long deadline = now_ms() + timeout_s * 1000LL;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int seen = 0;

	printf("ready\n");
	fflush(stdout);
	while (seen < count) {
		struct ibv_async_event ev;
		long long left = deadline - now_ms();

		/* poll first: the event file must say when it is readable. */
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			printf("timeout after %d events\n", seen);
			return 1;
		}
		if (ibv_get_async_event(ctx, &ev) < 0) {
			printf("ibv_get_async_event: %s\n", strerror(errno));
			return 1;
		}
		printf("port %d %s\n", ev.element.port_num, ibv_event_type_str(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
		seen++;
	}
	return 0;
}

static int tables(struct ibv_context *ctx, int port)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, (uint8_t)port, &pa)) {
		fprintf(stderr, "verbs_watch: ibv_query_port: failed\n");
		return 1;
	}
	for (i = 0; i < pa.pkey_tbl_len; i++) {
		__be16 pkey;

		if (ibv_query_pkey(ctx, (uint8_t)port, i, &pkey)) {
			fprintf(stderr, "verbs_watch: ibv_query_pkey %d: %s\n", i, strerror(errno));
			return 1;
		}
		printf("pkey %d 0x%04x\n", i, ntohs(pkey));
	}
	for (i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid gid;
		char text[INET6_ADDRSTRLEN];

		if (ibv_query_gid(ctx, (uint8_t)port, i, &gid)) {
			fprintf(stderr, "verbs_watch: ibv_query_gid %d: %s\n", i, strerror(errno));
			return 1;
		}
		printf("gid %d %s\n", i, inet_ntop(AF_INET6, gid.raw, text, sizeof(text)));
	}
	return 0;
}

static void say(const char *verb, bool failed)
{
	printf("%s: %s\n", verb, failed ? strerror(errno) : "ok");
}

/* ibv_ calls that return an errno rather than setting it. */
static void say_ret(const char *verb, int ret)
{
	errno = ret;
	say(verb, ret != 0);
}

static int refused(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_port_attr pa;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	char buf[64];

	pd = ibv_alloc_pd(ctx);
	say("alloc_pd", !pd);
	errno = 0;
	say("create_cq 0", !ibv_create_cq(ctx, 0, NULL, NULL, 0));
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	say("create_cq", !cq);
	errno = 0;
	say("create_comp_channel", !ibv_create_comp_channel(ctx));
	if (!pd || !cq)
		return 1;
	errno = 0;
	say("reg_mr remote write only",
	    !ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE));
	errno = 0;
	say("reg_mr", !ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	errno = 0;
	say("create_ah dlid 0", !ibv_create_ah(pd, &(struct ibv_ah_attr){ .port_num = 1 }));
	qia.send_cq = qia.recv_cq = cq;
	qia.qp_type = IBV_QPT_RAW_PACKET;
	errno = 0;
	say("create_qp raw packet", !ibv_create_qp(pd, &qia));
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_sge = 99;
	errno = 0;
	say("create_qp 99 SGEs", !ibv_create_qp(pd, &qia));
	qia.cap.max_send_sge = 1;
	qp = ibv_create_qp(pd, &qia);
	say("create_qp", !qp);
	if (!qp)
		return 1;
	say_ret("post_send in Reset", ibv_post_send(qp, &swr, &bad));
	say_ret("modify_qp Reset to RTR",
		ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR }, IBV_QP_STATE));
	say_ret("modify_qp Init without a port",
		ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT },
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS));
	say_ret("modify_qp Init port 9",
		ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 9 },
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	say_ret("destroy_cq in use", ibv_destroy_cq(cq));
	say_ret("destroy_qp", ibv_destroy_qp(qp));
	say_ret("destroy_cq", ibv_destroy_cq(cq));
	say_ret("query_port 99", ibv_query_port(ctx, 99, &pa));
	return 0;
}

/* One kind of object, made up to its limit and one past it. */
struct kind {
	const char *name;
	void *(*make)(struct ibv_context *ctx, void *shared);
	int (*free_one)(void *obj);
	size_t max_at;		/* where its limit is in ibv_device_attr (an int) */
	int taken;		/* made already: the shared PD and CQ */
};
#define LIMIT(f)	offsetof(struct ibv_device_attr, f)

struct shared {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *page;
	uint16_t lid;
};

static void *make_pd(struct ibv_context *c, void *s) { (void)s; return ibv_alloc_pd(c); }
static int free_pd(void *o) { return ibv_dealloc_pd(o); }
static void *make_mr(struct ibv_context *c, void *s)
{
	(void)c;
	return ibv_reg_mr(((struct shared *)s)->pd, ((struct shared *)s)->page, 4096,
			  IBV_ACCESS_LOCAL_WRITE);
}
static int free_mr(void *o) { return ibv_dereg_mr(o); }
static void *make_cq(struct ibv_context *c, void *s) { (void)s; return ibv_create_cq(c, 1, NULL, NULL, 0); }
static int free_cq(void *o) { return ibv_destroy_cq(o); }
static void *make_ah(struct ibv_context *c, void *s)
{
	(void)c;
	return ibv_create_ah(((struct shared *)s)->pd, &(struct ibv_ah_attr){
		.dlid = ((struct shared *)s)->lid, .port_num = 1 });
}
static int free_ah(void *o) { return ibv_destroy_ah(o); }
static void *make_srq(struct ibv_context *c, void *s)
{
	(void)c;
	return ibv_create_srq(((struct shared *)s)->pd, &(struct ibv_srq_init_attr){
		.attr = { .max_wr = 1, .max_sge = 1 } });
}
static int free_srq(void *o) { return ibv_destroy_srq(o); }
static void *make_qp(struct ibv_context *c, void *s)
{
	struct shared *sh = s;

	(void)c;
	return ibv_create_qp(sh->pd, &(struct ibv_qp_init_attr){
		.send_cq = sh->cq, .recv_cq = sh->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } });
}
static int free_qp(void *o) { return ibv_destroy_qp(o); }
static void *make_mw(struct ibv_context *c, void *s)
{
	(void)c;
	return ibv_alloc_mw(((struct shared *)s)->pd, IBV_MW_TYPE_2);
}
static int free_mw(void *o) { return ibv_dealloc_mw(o); }

static int limits(struct ibv_context *ctx)
{
	static const struct kind kinds[] = {
		{ "qp", make_qp, free_qp, LIMIT(max_qp), 0 },
		{ "pd", make_pd, free_pd, LIMIT(max_pd), 1 },
		{ "mr", make_mr, free_mr, LIMIT(max_mr), 0 },
		{ "cq", make_cq, free_cq, LIMIT(max_cq), 1 },
		{ "ah", make_ah, free_ah, LIMIT(max_ah), 0 },
		{ "srq", make_srq, free_srq, LIMIT(max_srq), 0 },
		{ "mw", make_mw, free_mw, LIMIT(max_mw), 0 },
	};
	struct ibv_device_attr a;
	struct ibv_port_attr pa;
	struct shared sh = { 0 };
	unsigned k;

	if (ibv_query_device(ctx, &a) || ibv_query_port(ctx, 1, &pa)) {
		perror("query");
		return 1;
	}
	sh.pd = ibv_alloc_pd(ctx);
	sh.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	sh.page = aligned_alloc(4096, 4096);
	sh.lid = pa.lid ? pa.lid : 1;
	if (!sh.pd || !sh.cq || !sh.page) {
		perror("pd, cq or page");
		return 1;
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		int max = *(const int *)(const void *)((const char *)&a + kinds[k].max_at) -
			  kinds[k].taken;
		void **objs = calloc((size_t)max + 1, sizeof(*objs));
		int n = 0, err;
		bool again;

		while (n <= max && (objs[n] = kinds[k].make(ctx, &sh)))
			n++;
		err = errno;
		/* Freeing one makes room for one again. */
		again = n > 0 && !kinds[k].free_one(objs[--n]) && (objs[n] = kinds[k].make(ctx, &sh));
		if (again)
			n++;
		printf("%s: %d made of %d, next %s%s\n", kinds[k].name, n, max,
		       n > max ? "made too" : strerror(err), again ? ", again after a free" : "");
		while (n)
			kinds[k].free_one(objs[--n]);
		free(objs);
	}
	ibv_destroy_cq(sh.cq);
	ibv_dealloc_pd(sh.pd);
	free(sh.page);
	return 0;
}

static void reg_one(struct ibv_pd *pd, const char *what, void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	printf("%s: %s\n", what, mr ? "ok" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/* What ib_umem_get refuses: pages not mapped, read-only pages to be
 * written, more than RLIMIT_MEMLOCK without CAP_IPC_LOCK. */
static int pin(struct ibv_context *ctx, long mib)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t big = (size_t)mib << 20;
	char *b = malloc(big);

	if (!pd || ro == MAP_FAILED || gone == MAP_FAILED || !b) {
		perror("pin set-up");
		return 1;
	}
	munmap(gone, 8192);
	reg_one(pd, "unmapped", gone, 8192, IBV_ACCESS_LOCAL_WRITE);
	reg_one(pd, "read-only for reading", ro, 8192, IBV_ACCESS_REMOTE_READ);
	reg_one(pd, "read-only for writing", ro, 8192, IBV_ACCESS_LOCAL_WRITE);
	reg_one(pd, "big", b, big, IBV_ACCESS_LOCAL_WRITE);
	reg_one(pd, "a page of it", b, 4096, IBV_ACCESS_LOCAL_WRITE);
	free(b);
	munmap(ro, 8192);
	ibv_dealloc_pd(pd);
	return 0;
}

/* A UD QP of @ctx in RTS on port 1 with @qkey, its CQ of @cqe. */
static struct ibv_qp *ud_qp(struct ibv_context *ctx, struct ibv_pd *pd, uint32_t qkey, int cqe,
			    uint32_t recv_wr)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	if (!cq)
		return NULL;
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = recv_wr, .max_send_sge = 1,
			 .max_recv_sge = 1 } });
	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY))
		return NULL;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

/* Contexts that never read: what comes for them stays in the daemon. */
static int sink(struct ibv_device *dev, int n, uint32_t qkey)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_context *c = ibv_open_device(dev);
		struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
		struct ibv_qp *qp = pd ? ud_qp(c, pd, qkey, 4, 1) : NULL;

		if (!qp) {
			perror("sink");
			return 1;
		}
		printf("sink %u\n", qp->qp_num);
	}
	fflush(stdout);
	raise(SIGSTOP);
	return 0;
}

static int flood(struct ibv_context *ctx, uint16_t dlid, uint32_t qkey, long count,
		 char **qpns, int nqpn)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_qp *qp = pd ? ud_qp(ctx, pd, qkey, 128, 1) : NULL;
	struct ibv_ah *ah = pd ? ibv_create_ah(pd, &(struct ibv_ah_attr){
		.dlid = dlid, .port_num = 1 }) : NULL;
	struct ibv_port_attr pa;
	static char buf[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_wc wc[64];
	long sent = 0, done = 0;

	if (!qp || !ah || !mr || ibv_query_port(ctx, 1, &pa)) {
		perror("flood");
		return 1;
	}
	while (done < count) {
		while (sent < count && sent - done < 64) {
			struct ibv_sge sg = { (uintptr_t)buf, (uint32_t)(128u << pa.active_mtu),
					      mr->lkey };
			struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = (uint32_t)strtoul(qpns[sent % nqpn], NULL, 0);
			wr.wr.ud.remote_qkey = qkey;
			if (ibv_post_send(qp, &wr, &bad)) {
				perror("flood: ibv_post_send");
				return 1;
			}
			sent++;
		}
		done += ibv_poll_cq(qp->send_cq, 64, wc);
	}
	printf("flood %ld sent\n", sent);
	return 0;
}

/*
 * A receiver that stops (SIGSTOP) with NQP UD QPs of 4096 receive WRs
 * each posted, and once continued counts what arrives: "caught N" when
 * EXPECT came, or what had come after a second without any.
 */
static int catch_all(struct ibv_context *ctx, uint32_t qkey, int nqp, long expect)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[4096 + 40];	/* every WR's: the data is not looked at */
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp[8];
	long caught = 0, idle = 0;
	int i, k;

	if (!mr || nqp < 1 || nqp > 8)
		return 1;
	printf("catch");
	for (i = 0; i < nqp; i++) {
		if (!(qp[i] = ud_qp(ctx, pd, qkey, 4096, 4096)))
			return 1;
		for (k = 0; k < 4096; k++) {
			struct ibv_sge sg = { (uintptr_t)buf, sizeof(buf), mr->lkey };
			struct ibv_recv_wr wr = { .sg_list = &sg, .num_sge = 1 }, *bad;

			if (ibv_post_recv(qp[i], &wr, &bad))
				return 1;
		}
		printf(" %u", qp[i]->qp_num);
	}
	printf("\n");
	fflush(stdout);
	raise(SIGSTOP);
	while (caught < expect && idle < 1000) {
		struct ibv_wc wc[64];
		int n = 0;

		for (i = 0; i < nqp; i++)
			n += ibv_poll_cq(qp[i]->recv_cq, 64, wc);
		caught += n;
		if (n) {
			idle = 0;
		} else {
			idle++;
			usleep(1000);	/* a look a millisecond, for the deadline */
		}
	}
	printf("caught %ld\n", caught);
	return 0;
}

/* N polls of a CQ nothing completes on. */
static int idle_poll(struct ibv_context *ctx, long n)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_wc wc;
	long i, found = 0;

	if (!cq) {
		perror("ibv_create_cq");
		return 1;
	}
	for (i = 0; i < n; i++)
		found += ibv_poll_cq(cq, 1, &wc);
	printf("polled %ld, found %ld\n", n, found);
	ibv_destroy_cq(cq);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: verbs_watch events DEV COUNT TIMEOUT_S | tables DEV PORT | refused DEV | limits DEV | pin DEV MIB | sink DEV N QKEY | flood DEV DLID QKEY COUNT QPN... | catch DEV QKEY NQP EXPECT | idle-poll DEV N\n");
		return 2;
	}
	if (!strcmp(argv[1], "sink") && argc == 5) {
		struct ibv_device **list = ibv_get_device_list(NULL);
		int i;

		for (i = 0; list && list[i]; i++)
			if (!strcmp(ibv_get_device_name(list[i]), argv[2]))
				return sink(list[i], atoi(argv[3]), (uint32_t)strtoul(argv[4], NULL, 0));
		return 1;
	}
	ctx = open_dev(argv[2]);
	if (!ctx)
		return 1;
	if (!strcmp(argv[1], "events") && argc == 5)
		ret = events(ctx, atoi(argv[3]), atoi(argv[4]));
	else if (!strcmp(argv[1], "tables") && argc == 4)
		ret = tables(ctx, atoi(argv[3]));
	else if (!strcmp(argv[1], "refused"))
		ret = refused(ctx);
	else if (!strcmp(argv[1], "limits"))
		ret = limits(ctx);
	else if (!strcmp(argv[1], "flood") && argc >= 7)
		ret = flood(ctx, (uint16_t)atoi(argv[3]), (uint32_t)strtoul(argv[4], NULL, 0),
			    atol(argv[5]), argv + 6, argc - 6);
	else if (!strcmp(argv[1], "pin") && argc == 4)
		ret = pin(ctx, atol(argv[3]));
	else if (!strcmp(argv[1], "idle-poll") && argc == 4)
		ret = idle_poll(ctx, atol(argv[3]));
	else if (!strcmp(argv[1], "catch") && argc == 6)
		ret = catch_all(ctx, (uint32_t)strtoul(argv[3], NULL, 0), atoi(argv[4]), atol(argv[5]));
	else
		ret = 2;
	ibv_close_device(ctx);
	return ret;
}
