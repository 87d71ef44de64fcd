/* SPDX-License-Identifier: MIT */
/*
 * The connection manager (kernel/ucma.c, kernel/cma.c; docs/rdmacm.md)
 * between host1 (10.1.0.3) and host2 (10.1.0.4) of the configured default
 * fabric, both attached to one host, driven by a hand-turned clock: the
 * CM MADs' field table against the kernel's layouts, the commands' errors,
 * a connection made and ended, its QP attributes, the retransmissions
 * and the UNREACHABLE after them, a closed file's peer disconnected,
 * MIGRATE_ID, and multicast joins against a fake SA.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>

#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>
#include <infiniband/verbs.h>

#include "fabric/configure.h"
#include "fabric/port.h"
#include "kernel/cm_wire.h"
#include "kernel/cma_priv.h"
#include "kernel/ucma.h"
#include "testfab.h"

struct env {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct host *hw;
	struct ucma *u;
	struct ucma_file *srv, *cli;
	unsigned cm_mads;	/* class 0x07 MADs that crossed a cable */
};

static void count_cm(void *ctx, const struct port *out, const struct mad_pkt *p, bool first)
{
	(void)out;
	if (first && !p->data && mad_class(p->mad) == CM_CLASS)
		((struct env *)ctx)->cm_mads++;
}

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	/* As --configured: the SM LID is host1's, where no SA agent is. */
	e->f = configured_default(&e->clock, &e->tq);
	e->f->tap = (struct fabric_tap){ count_cm, e };
	e->hw = host_new(e->f, e->tq);
	host_attach(e->hw, fabric_find(e->f, "host1"));
	host_attach(e->hw, fabric_find(e->f, "host2"));
	e->u = ucma_new(e->hw);
	e->srv = ucma_open(e->u);
	e->cli = ucma_open(e->u);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->srv)
		ucma_release(e->srv);
	if (e->cli)
		ucma_release(e->cli);
	ucma_free(e->u);
	host_free(e->hw);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e);
	return 0;
}

/* One command: its return, and the response in @resp (if any). */
static ssize_t cmd(struct ucma_file *f, uint32_t op, const void *body, size_t len,
		   void *resp, size_t resp_len)
{
	uint8_t buf[UCMA_WIRE_MAX];
	struct rdma_ucm_cmd_hdr h = { op, (uint16_t)len, (uint16_t)resp_len };
	struct ucma_answer a;

	memcpy(buf, &h, sizeof(h));
	if (len)	/* body may be NULL for a header-only command */
		memcpy(buf + sizeof(h), body, len);
	ucma_command(f, buf, sizeof(h) + len, &a);
	if (resp && a.resp_len)
		memcpy(resp, a.resp, MIN(a.resp_len, resp_len));
	return a.ret;
}

static uint32_t create_id(struct ucma_file *f, uint16_t ps, uint8_t qpt, uint64_t uid)
{
	struct rdma_ucm_create_id c = { .uid = uid, .response = 1, .ps = ps, .qp_type = qpt };
	struct rdma_ucm_create_id_resp r = { 0 };

	assert_int_equal(cmd(f, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), &r, sizeof(r)),
			 sizeof(struct rdma_ucm_cmd_hdr) + sizeof(c));
	return r.id;
}

static struct sockaddr_in in4(const char *a, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

static ssize_t bind4(struct ucma_file *f, uint32_t id, const char *a, uint16_t port)
{
	struct rdma_ucm_bind b = { .id = id, .addr_size = sizeof(struct sockaddr_in) };
	struct sockaddr_in s = in4(a, port);

	memcpy(&b.addr, &s, sizeof(s));
	return cmd(f, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), NULL, 0);
}

static ssize_t resolve4(struct ucma_file *f, uint32_t id, const char *src, const char *dst,
			uint16_t port)
{
	struct rdma_ucm_resolve_addr r = { .id = id, .timeout_ms = 2000 };
	struct sockaddr_in s = in4(src ? src : "0.0.0.0", 0), d = in4(dst, port);

	r.src_size = src ? sizeof(s) : 0;
	r.dst_size = sizeof(d);
	if (src)
		memcpy(&r.src_addr, &s, sizeof(s));
	memcpy(&r.dst_addr, &d, sizeof(d));
	return cmd(f, RDMA_USER_CM_CMD_RESOLVE_ADDR, &r, sizeof(r), NULL, 0);
}

/* The next event, which must be @want; returns it. */
static struct rdma_ucm_event_resp next_event(struct ucma_file *f, uint32_t want)
{
	struct rdma_ucm_event_resp ev;

	assert_int_equal(ucma_read_event(f, &ev, sizeof(ev)), sizeof(ev));
	assert_int_equal(ev.event, want);
	return ev;
}

static void no_event(struct ucma_file *f)
{
	struct rdma_ucm_event_resp ev;

	assert_int_equal(ucma_read_event(f, &ev, sizeof(ev)), -EAGAIN);
}

static void advance(struct env *e, uint64_t us)
{
	e->clock.now_us += us;
	timerq_run(e->tq);
}

static struct ib_uverbs_qp_attr qp_attr(struct ucma_file *f, uint32_t id, unsigned state,
					ssize_t *ret)
{
	struct rdma_ucm_init_qp_attr c = { .response = 1, .id = id, .qp_state = state };
	struct ib_uverbs_qp_attr a = { 0 };

	*ret = cmd(f, RDMA_USER_CM_CMD_INIT_QP_ATTR, &c, sizeof(c), &a, sizeof(a));
	return a;
}

/* The REQ's fields land where IBA Table 106 (the kernel's
 * ibta_vol1_c12.h) has them; a field written leaves its neighbours. */
static void test_field_table(void **state)
{
	MAD_BUF(m) = { 0 };

	(void)state;
	cm_put(m, CM_REQ_LOCAL_QPN, 0x123456);
	cm_put(m, CM_REQ_RESP_RES, 0x07);
	assert_memory_equal(m + 56, "\x12\x34\x56\x07", 4);
	cm_put(m, CM_REQ_REMOTE_CM_TIMEOUT, 20);
	cm_put(m, CM_REQ_TRANSPORT, 1);
	cm_put(m, CM_REQ_FLOW_CONTROL, 1);
	assert_int_equal(m[67], 20 << 3 | 1 << 1 | 1);
	cm_put(m, CM_REQ_PKEY, 0xffff);
	cm_put(m, CM_REQ_MTU, 5);
	cm_put(m, CM_REQ_RNR_RETRY, 7);
	assert_memory_equal(m + 72, "\xff\xff\x57", 3);
	cm_put(m, CM_REQ_MAX_CM_RETRIES, 15);
	cm_put(m, CM_REQ_SRQ, 1);
	assert_int_equal(m[75], 0xf8);
	cm_put(m, CM_REQ_SERVICE_ID, 0x0000000001060000ull | 7471);
	assert_int_equal(cm_get(m, CM_REQ_SERVICE_ID), 0x106000000ull >> 8 | 7471);
	assert_memory_equal(m + 32, "\0\0\0\0\x01\x06\x1d\x2f", 8);
	cm_put(m, CM_REQ_PRIMARY_RATE, 7);
	assert_int_equal(m[24 + 91], 7);
	cm_put(m, CM_REQ_PRIMARY_ACK_TIMEOUT, 19);
	assert_int_equal(m[24 + 95], 19 << 3);
	assert_int_equal(cm_get(m, CM_REQ_LOCAL_QPN), 0x123456);
	assert_int_equal(cm_get(m, CM_REQ_RNR_RETRY), 7);
	assert_int_equal(cm_get(m, CM_REQ_MTU), 5);
}

/* ucma_write()'s and cma.c's errors. */
static void test_errors(void **state)
{
	struct env *e = *state;
	uint8_t two[4] = { 0 };
	struct ucma_answer a;
	struct rdma_ucm_destroy_id d = { .response = 1, .id = 999 };
	struct rdma_ucm_create_id bad = { .ps = RDMA_PS_UDP, .qp_type = IBV_QPT_RC };
	struct rdma_ucm_listen l;
	struct rdma_ucm_resolve_route rr;
	uint32_t id, id2;
	ssize_t r;
	unsigned i;

	ucma_command(e->cli, two, sizeof(two), &a);
	assert_int_equal(a.ret, -EINVAL);	/* shorter than the header */
	assert_int_equal(cmd(e->cli, 99, NULL, 0, NULL, 0), -ENOSYS);
	assert_int_equal(cmd(e->cli, RDMA_USER_CM_CMD_DESTROY_ID, &d, 4, NULL, 0), -EINVAL);
	assert_int_equal(cmd(e->cli, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), NULL, 0), -ENOENT);
	assert_int_equal(cmd(e->cli, RDMA_USER_CM_CMD_CREATE_ID, &bad, sizeof(bad), NULL, 0),
			 -EINVAL);
	id = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 1);
	/* host3's address is not this host's. */
	assert_int_equal(bind4(e->cli, id, "10.1.0.5", 0), -EADDRNOTAVAIL);
	/* lo's: a netdev with no RDMA port (cma_validate_port). */
	assert_int_equal(bind4(e->cli, id, "127.0.0.1", 0), -ENODEV);
	assert_true(bind4(e->cli, id, "10.1.0.4", 7000) > 0);
	assert_int_equal(bind4(e->cli, id, "10.1.0.4", 7001), -EINVAL);	/* bound */
	rr = (struct rdma_ucm_resolve_route){ .id = id, .timeout_ms = 100 };
	assert_int_equal(cmd(e->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0),
			 -EINVAL);	/* no address resolved */
	qp_attr(e->cli, id, IBV_QPS_RTR, &r);
	assert_int_equal(r, -EINVAL);	/* no connection */
	l = (struct rdma_ucm_listen){ .id = id, .backlog = 4 };
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), NULL, 0) > 0);
	id2 = create_id(e->srv, RDMA_PS_TCP, IBV_QPT_RC, 2);
	assert_true(bind4(e->srv, id2, "0.0.0.0", 7000) > 0);
	l.id = id2;
	assert_int_equal(cmd(e->srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), NULL, 0),
			 -EADDRINUSE);
	/* An address nobody has: ADDR_ERROR once the timeout has passed. */
	id2 = create_id(e->srv, RDMA_PS_TCP, IBV_QPT_RC, 3);
	assert_true(resolve4(e->srv, id2, NULL, "10.1.9.9", 1) > 0);
	no_event(e->srv);
	advance(e, 1999000);
	no_event(e->srv);
	advance(e, 1000);
	assert_int_equal((int)next_event(e->srv, UCMA_EV_ADDR_ERROR).status, -ETIMEDOUT);
	/* The file's id bound. */
	for (i = 2; i < UCMA_IDS_MAX; i++)
		create_id(e->srv, RDMA_PS_TCP, IBV_QPT_RC, i);
	bad = (struct rdma_ucm_create_id){ .response = 1, .ps = RDMA_PS_TCP,
					   .qp_type = IBV_QPT_RC };
	assert_int_equal(cmd(e->srv, RDMA_USER_CM_CMD_CREATE_ID, &bad, sizeof(bad), NULL, 0),
			 -ENOMEM);
}

/* Server listening on 10.1.0.3:7471, client resolved and routed from
 * 10.1.0.4: the ids. */
static void prepare(struct env *e, uint32_t *lid, uint32_t *cid)
{
	struct rdma_ucm_listen l;
	struct rdma_ucm_resolve_route rr;

	*lid = create_id(e->srv, RDMA_PS_TCP, IBV_QPT_RC, 0x5000);
	assert_true(bind4(e->srv, *lid, "10.1.0.3", 7471) > 0);
	l = (struct rdma_ucm_listen){ .id = *lid, .backlog = 1 };
	assert_true(cmd(e->srv, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), NULL, 0) > 0);
	*cid = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 0xc000);
	assert_true(resolve4(e->cli, *cid, "10.1.0.4", "10.1.0.3", 7471) > 0);
	next_event(e->cli, UCMA_EV_ADDR_RESOLVED);
	rr = (struct rdma_ucm_resolve_route){ .id = *cid, .timeout_ms = 100 };
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0) > 0);
	next_event(e->cli, UCMA_EV_ROUTE_RESOLVED);
}

static ssize_t connect_id(struct ucma_file *f, uint32_t id, uint32_t qpn)
{
	struct rdma_ucm_connect c = { .id = id };

	c.conn_param = (struct rdma_ucm_conn_param){ .qp_num = qpn, .responder_resources = 4,
						     .initiator_depth = 2, .retry_count = 7,
						     .rnr_retry_count = 7, .valid = 1,
						     .private_data_len = 3 };
	memcpy(c.conn_param.private_data, "abc", 3);
	return cmd(f, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), NULL, 0);
}

static ssize_t accept_id(struct ucma_file *f, uint32_t id, uint32_t qpn, uint64_t uid)
{
	struct rdma_ucm_accept a = { .uid = uid, .id = id };

	if (qpn)
		a.conn_param = (struct rdma_ucm_conn_param){ .qp_num = qpn,
							     .responder_resources = 2,
							     .initiator_depth = 4, .rnr_retry_count = 7,
							     .valid = 1 };
	return cmd(f, RDMA_USER_CM_CMD_ACCEPT, &a, sizeof(a), NULL, 0);
}

/* A connection made, its QPs' attributes, and ended; seven CM MADs. */
static void test_connect_disconnect(void **state)
{
	struct env *e = *state;
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_disconnect d;
	struct ib_uverbs_qp_attr ca, sa;
	uint32_t lid, cid, sid;
	ssize_t r;

	prepare(e, &lid, &cid);
	assert_true(connect_id(e->cli, cid, 0x55) > 0);
	ev = next_event(e->srv, UCMA_EV_CONNECT_REQUEST);
	assert_int_equal(ev.uid, 0x5000);	/* the listener's */
	assert_int_equal(ev.param.conn.qp_num, 0x55);
	assert_int_equal(ev.param.conn.responder_resources, 2);	/* the peer's depth */
	assert_int_equal(ev.param.conn.initiator_depth, 4);
	assert_int_equal(ev.param.conn.private_data_len, 56);
	assert_memory_equal(ev.param.conn.private_data, "abc", 3);
	sid = ev.id;
	sa = qp_attr(e->srv, sid, IBV_QPS_RTS, &r);
	assert_true(r > 0);
	assert_true(accept_id(e->srv, sid, 0x66, 0x5001) > 0);
	ev = next_event(e->cli, UCMA_EV_CONNECT_RESPONSE);
	assert_int_equal(ev.param.conn.qp_num, 0x66);
	assert_int_equal(ev.uid, 0xc000);
	/* The active side's RTR: the passive side's QPN and send PSN. */
	ca = qp_attr(e->cli, cid, IBV_QPS_RTR, &r);
	assert_true(r > 0);
	assert_int_equal(ca.dest_qp_num, 0x66);
	assert_int_equal(ca.rq_psn, sa.sq_psn);
	assert_int_equal(ca.ah_attr.dlid, fabric_find(e->f, "host1")->ports[1].lid);
	assert_int_equal(ca.path_mtu, 5);
	assert_int_equal(ca.max_dest_rd_atomic, 4);	/* min(4, the REP's depth 4) */
	ca = qp_attr(e->cli, cid, IBV_QPS_RTS, &r);
	assert_int_equal(ca.timeout, 19);	/* packet lifetime 18, + 1 */
	sa = qp_attr(e->srv, sid, IBV_QPS_RTR, &r);
	assert_int_equal(sa.dest_qp_num, 0x55);
	assert_int_equal(sa.rq_psn, ca.sq_psn);
	sa = qp_attr(e->srv, sid, IBV_QPS_INIT, &r);
	assert_int_equal(sa.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC);
	no_event(e->srv);
	assert_true(accept_id(e->cli, cid, 0, 0) > 0);	/* the RTU */
	ev = next_event(e->srv, UCMA_EV_ESTABLISHED);
	assert_int_equal(ev.uid, 0x5001);
	assert_int_equal(e->cm_mads, 3);
	d.id = cid;
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), NULL, 0) > 0);
	next_event(e->srv, UCMA_EV_DISCONNECTED);
	next_event(e->cli, UCMA_EV_DISCONNECTED);
	assert_int_equal(e->cm_mads, 5);
	/* ib_cm's timewait: 2^(18 + 1 - 8) ms, the path's av.timeout. */
	advance(e, 2047999);
	no_event(e->srv);
	no_event(e->cli);
	advance(e, 1000);
	next_event(e->srv, UCMA_EV_TIMEWAIT_EXIT);
	next_event(e->cli, UCMA_EV_TIMEWAIT_EXIT);
	assert_int_equal(e->cm_mads, 5);	/* nothing was retransmitted */
}

/* A REQ nobody answers (host1's cable cut after the route was made) is
 * sent 16 times, each ib_cm's timeout apart, then UNREACHABLE. */
static void test_unreachable(void **state)
{
	struct env *e = *state;
	/* 2 x 2^(18-8) ms + 2^(20-8) ms */
	const uint64_t timeout_us = (2 * 1024 + 4096) * 1000ull;
	uint32_t lid, cid;
	unsigned i;

	prepare(e, &lid, &cid);
	port_cable_set(&fabric_find(e->f, "host1")->ports[1], false);
	assert_true(connect_id(e->cli, cid, 0x55) > 0);
	assert_int_equal(e->cm_mads, 1);
	for (i = 0; i < 15; i++) {
		advance(e, timeout_us - 1);
		no_event(e->cli);
		advance(e, 1);
		assert_int_equal(e->cm_mads, 2 + i);
	}
	advance(e, timeout_us - 1);
	no_event(e->cli);
	advance(e, 1);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_UNREACHABLE).status, -ETIMEDOUT);
	assert_int_equal(e->cm_mads, 16);
}

/* prepare(), and the client's REQ given to the server: its new id. */
static uint32_t requested(struct env *e, uint32_t *lid, uint32_t *cid)
{
	prepare(e, lid, cid);
	assert_true(connect_id(e->cli, *cid, 0x55) > 0);
	return next_event(e->srv, UCMA_EV_CONNECT_REQUEST).id;
}

/* The REP lost: the REQ's retransmission brings it again. */
static void test_lost_rep(void **state)
{
	struct env *e = *state;
	uint32_t lid, cid, sid = requested(e, &lid, &cid);

	port_cable_set(&fabric_find(e->f, "host1")->ports[1], false);
	assert_true(accept_id(e->srv, sid, 0x66, 0x5001) > 0);
	no_event(e->cli);
	port_cable_set(&fabric_find(e->f, "host1")->ports[1], true);
	assert_true(fabric_configure(e->f, &fabric_find(e->f, "host1")->ports[1]) > 0);
	advance(e, 6144000);	/* both resend: the REP reaches the client */
	next_event(e->cli, UCMA_EV_CONNECT_RESPONSE);
	no_event(e->srv);	/* the duplicate REQ made no second request */
}

/* A closed file's connected ids disconnect their peers. */
static void test_release_disconnects(void **state)
{
	struct env *e = *state;
	uint32_t lid, cid, sid = requested(e, &lid, &cid);

	assert_true(accept_id(e->srv, sid, 0x66, 0x5001) > 0);
	next_event(e->cli, UCMA_EV_CONNECT_RESPONSE);
	assert_true(accept_id(e->cli, cid, 0, 0) > 0);
	next_event(e->srv, UCMA_EV_ESTABLISHED);
	ucma_release(e->cli);
	e->cli = NULL;
	next_event(e->srv, UCMA_EV_DISCONNECTED);
}

/* A second listener's backlog: one request unaccepted fills a backlog
 * of 1, the next REQ is rejected with reason 28. */
static void test_backlog(void **state)
{
	struct env *e = *state;
	uint32_t lid, cid, cid2;
	struct rdma_ucm_resolve_route rr;

	prepare(e, &lid, &cid);
	assert_true(connect_id(e->cli, cid, 0x55) > 0);
	next_event(e->srv, UCMA_EV_CONNECT_REQUEST);
	cid2 = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 0xc001);
	assert_true(resolve4(e->cli, cid2, "10.1.0.4", "10.1.0.3", 7471) > 0);
	next_event(e->cli, UCMA_EV_ADDR_RESOLVED);
	rr = (struct rdma_ucm_resolve_route){ .id = cid2, .timeout_ms = 100 };
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0) > 0);
	next_event(e->cli, UCMA_EV_ROUTE_RESOLVED);
	assert_true(connect_id(e->cli, cid2, 0x56) > 0);
	assert_int_equal(next_event(e->cli, UCMA_EV_REJECTED).status, CM_REJ_CONSUMER_DEFINED);
	no_event(e->srv);
}

/* MIGRATE_ID: the id and its unread event move to the other file. */
static void test_migrate(void **state)
{
	struct env *e = *state;
	struct rdma_ucm_migrate_id m;
	struct rdma_ucm_migrate_resp r = { 7 };
	uint8_t buf[sizeof(struct rdma_ucm_cmd_hdr) + sizeof(m)];
	struct rdma_ucm_cmd_hdr h = { RDMA_USER_CM_CMD_MIGRATE_ID, sizeof(m), sizeof(r) };
	struct ucma_answer a;
	uint32_t id = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 0x77);
	uint64_t guess;

	assert_true(resolve4(e->cli, id, "10.1.0.4", "10.1.0.3", 1) > 0);
	m = (struct rdma_ucm_migrate_id){ .response = 1, .id = id, .fd = 3 };
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &m, sizeof(m));
	ucma_command_from(e->srv, buf, sizeof(buf), 12345, &a);
	assert_int_equal(a.ret, -EINVAL);	/* no such file */
	/* Issue #47: a token is not guessed from one's own (the kernel
	 * takes the fd itself): neighbours and near values name nothing. */
	for (guess = ucma_file_token(e->srv) - 64; guess != ucma_file_token(e->srv) + 64; guess++) {
		if (guess == ucma_file_token(e->srv))
			continue;
		ucma_command_from(e->srv, buf, sizeof(buf), guess, &a);
		assert_int_equal(a.ret, -EINVAL);
	}
	ucma_command_from(e->srv, buf, sizeof(buf), ucma_file_token(e->cli), &a);
	assert_int_equal(a.ret, sizeof(buf));
	memcpy(&r, a.resp, sizeof(r));
	assert_int_equal(r.events_reported, 0);
	no_event(e->cli);
	assert_int_equal(next_event(e->srv, UCMA_EV_ADDR_RESOLVED).uid, 0x77);
}

/* A fake SA's answer to @req, and its way back to the asker. */
static struct mad_pkt sa_answer(const struct mad_pkt *req, uint16_t status)
{
	struct mad_pkt r = *req;

	mad_getresp(r.mad, req->mad, status);
	return r;
}

static void sa_send_back(struct env *e, struct port *port, struct mad_pkt *r,
			 const struct mad_pkt *req)
{
	r->slid = port->lid;
	r->dlid = req->slid;
	fabric_send(e->f, port, r);
}

/* An SA at host1's port (the SM LID): what it answers to PathRecord
 * Gets, and how many it saw. */
struct fake_sa {
	struct env *e;
	unsigned gets;
	uint16_t status;
	bool silent;
};

static enum upper_verdict sa_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct fake_sa *sa = ctx;
	struct ibv_path_record pr;
	struct mad_pkt r;

	if (mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM || mad_method(pkt->mad) != UMAD_METHOD_GET)
		return UPPER_UNCLAIMED;
	sa->gets++;
	if (sa->silent)
		return UPPER_TAKEN;
	r = sa_answer(pkt, sa->status);
	memcpy(&pr, r.mad + 56, sizeof(pr));
	pr.slid = htobe16(fabric_find(sa->e->f, "host2")->ports[1].lid);
	pr.dlid = htobe16(port->lid);
	pr.qosclass_sl = htobe16(3);
	pr.mtu = 0x80 | 3;
	pr.packetlifetime = 0x80 | 14;
	memcpy(r.mad + 56, &pr, sizeof(pr));
	sa_send_back(sa->e, port, &r, pkt);
	return UPPER_TAKEN;
}

static const struct host_client sa_client = { .deliver = sa_deliver };

static uint32_t routed(struct env *e, struct fake_sa *sa, int want_event)
{
	struct rdma_ucm_resolve_route rr;
	uint32_t id = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 0xc000);

	host_register_client(e->hw, &sa_client, sa);
	assert_true(resolve4(e->cli, id, "10.1.0.4", "10.1.0.3", 7471) > 0);
	next_event(e->cli, UCMA_EV_ADDR_RESOLVED);
	rr = (struct rdma_ucm_resolve_route){ .id = id, .timeout_ms = 500 };
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), NULL, 0) > 0);
	if (want_event >= 0)
		next_event(e->cli, (uint32_t)want_event);
	return id;
}

/* An SA answers: its PathRecord is the route (SL, MTU, lifetime). */
static void test_sa_route(void **state)
{
	struct env *e = *state;
	struct fake_sa sa = { .e = e };
	struct rdma_ucm_query q = { .response = 1 };
	struct rdma_ucm_query_route_resp r = { 0 };

	q.id = routed(e, &sa, UCMA_EV_ROUTE_RESOLVED);
	assert_int_equal(sa.gets, 1);
	assert_true(cmd(e->cli, RDMA_USER_CM_CMD_QUERY_ROUTE, &q, sizeof(q), &r, sizeof(r)) > 0);
	assert_int_equal(r.num_paths, 1);
	assert_int_equal(r.ib_route[0].sl, 3);
	assert_int_equal(r.ib_route[0].mtu, 3);
	assert_int_equal(r.ib_route[0].packet_life_time, 14);
	assert_int_equal(be16toh(r.ib_route[0].dlid), fabric_find(e->f, "host1")->ports[1].lid);
	host_unregister_client(e->hw, &sa_client, &sa);
}

/* An SA status: ROUTE_ERROR -EINVAL; no answer at all: -ETIMEDOUT once
 * the timeout has passed, not before. */
static void test_sa_errors(void **state)
{
	struct env *e = *state;
	struct fake_sa sa = { .e = e, .status = 0x0300 };	/* no records */

	routed(e, &sa, -1);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_ROUTE_ERROR).status, -EINVAL);
	host_unregister_client(e->hw, &sa_client, &sa);
	sa = (struct fake_sa){ .e = e, .silent = true };
	routed(e, &sa, -1);
	assert_int_equal(sa.gets, 1);
	advance(e, 499000);
	no_event(e->cli);
	advance(e, 1000);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_ROUTE_ERROR).status, -ETIMEDOUT);
	host_unregister_client(e->hw, &sa_client, &sa);
}

static ssize_t set_option(struct ucma_file *f, uint32_t id, uint32_t level, uint32_t name,
			  const void *val, size_t len, size_t carried)
{
	struct rdma_ucm_set_option o = { .optval = 1, .id = id, .level = level, .optname = name,
					 .optlen = (uint32_t)len };
	uint8_t buf[sizeof(struct rdma_ucm_cmd_hdr) + sizeof(o)];
	struct rdma_ucm_cmd_hdr h = { RDMA_USER_CM_CMD_SET_OPTION, sizeof(o), 0 };
	struct ucma_answer a;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &o, sizeof(o));
	ucma_command_opt(f, buf, sizeof(buf), carried ? val : NULL, carried, 0, &a);
	return a.ret;
}

/* SET_OPTION: sizes as ucma_set_option_id's; ACK_TIMEOUT is the QP's;
 * IB_PATH (ibacm's route) gives ROUTE_RESOLVED with that path. */
static void test_set_option(void **state)
{
	struct env *e = *state;
	uint8_t tos = 32, ack = 14;
	int one = 1;
	struct ib_path_rec_data pd = { .flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY };
	struct ibv_path_record *pr = (void *)pd.path_rec;
	uint32_t lid, cid, id = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 9);
	ssize_t r;

	assert_true(set_option(e->cli, id, 0, RDMA_OPTION_ID_TOS, &tos, 1, 1) > 0);
	assert_int_equal(set_option(e->cli, id, 0, RDMA_OPTION_ID_TOS, &one, 4, 4), -EINVAL);
	assert_int_equal(set_option(e->cli, id, 0, RDMA_OPTION_ID_TOS, &tos, 1, 0), -EFAULT);
	assert_true(set_option(e->cli, id, 0, RDMA_OPTION_ID_REUSEADDR, &one, 4, 4) > 0);
	assert_int_equal(set_option(e->cli, id, 0, 99, &one, 4, 4), -ENOSYS);
	assert_true(resolve4(e->cli, id, "10.1.0.4", "10.1.0.3", 1) > 0);
	next_event(e->cli, UCMA_EV_ADDR_RESOLVED);
	assert_int_equal(set_option(e->cli, id, 0, RDMA_OPTION_ID_REUSEADDR, &one, 4, 4),
			 -EINVAL);	/* bound already */
	pr->dlid = htobe16(fabric_find(e->f, "host1")->ports[1].lid);
	pr->slid = htobe16(fabric_find(e->f, "host2")->ports[1].lid);
	pr->qosclass_sl = htobe16(5);
	pr->mtu = 4;
	pr->pkey = htobe16(0xffff);
	assert_int_equal(set_option(e->cli, id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, 10, 10),
			 -EINVAL);	/* not a whole path */
	assert_true(set_option(e->cli, id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, sizeof(pd),
			       sizeof(pd)) > 0);
	next_event(e->cli, UCMA_EV_ROUTE_RESOLVED);
	/* ACK_TIMEOUT: the RTS timeout, in place of the path's. */
	prepare(e, &lid, &cid);
	assert_true(set_option(e->cli, cid, 0, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, 1, 1) > 0);
	assert_true(connect_id(e->cli, cid, 0x55) > 0);
	assert_true(accept_id(e->srv, next_event(e->srv, UCMA_EV_CONNECT_REQUEST).id, 0x66, 1) > 0);
	next_event(e->cli, UCMA_EV_CONNECT_RESPONSE);
	assert_int_equal(qp_attr(e->cli, cid, IBV_QPS_RTS, &r).timeout, 14);
}

/* An SA at host1's port for MCMemberRecord: the last Set's record, the
 * Sets and Deletes it saw; it answers a Set with the record, MLID 0xc005
 * and SL 2 filled in (and the Q_Key given, or @qkey), or @status. */
struct fake_mc_sa {
	struct env *e;
	unsigned sets, deletes;
	uint8_t rec[IB_SA_DATA_SIZE];
	uint16_t status;
	uint32_t qkey;
	bool silent;
};

static enum upper_verdict mc_sa_deliver(void *ctx, struct port *port, const struct mad_pkt *pkt)
{
	struct fake_mc_sa *sa = ctx;
	struct mad_pkt r;

	if (mad_class(pkt->mad) != UMAD_CLASS_SUBN_ADM ||
	    mad_attr_id(pkt->mad) != UMAD_SA_ATTR_MCMEMBER_REC)
		return UPPER_UNCLAIMED;
	if (mad_method(pkt->mad) == UMAD_SA_METHOD_DELETE) {
		sa->deletes++;
		return UPPER_TAKEN;
	}
	sa->sets++;
	memcpy(sa->rec, pkt->mad + 56, sizeof(sa->rec));
	if (sa->silent)
		return UPPER_TAKEN;
	r = sa_answer(pkt, sa->status);
	mad_set_field(r.mad + 56, 0, IB_SA_MCM_MLID_F, 0xc005);
	mad_set_field(r.mad + 56, 0, IB_SA_MCM_SL_F, 2);
	if (sa->qkey)
		mad_set_field(r.mad + 56, 0, IB_SA_MCM_QKEY_F, sa->qkey);
	sa_send_back(sa->e, port, &r, pkt);
	return UPPER_TAKEN;
}

static const struct host_client mc_sa_client = { .deliver = mc_sa_deliver };

/* JOIN_MCAST of @addr for @id: the command's return; the join's handle
 * in *@handle. */
static ssize_t join(struct ucma_file *f, uint32_t id, const void *addr, uint16_t size,
		    uint16_t flags, uint32_t *handle)
{
	struct rdma_ucm_join_mcast j = { .response = 1, .uid = 0x3c, .id = id, .addr_size = size,
					 .join_flags = flags };
	struct rdma_ucm_create_id_resp r = { 0 };
	ssize_t ret;

	memcpy(&j.addr, addr, size);
	ret = cmd(f, RDMA_USER_CM_CMD_JOIN_MCAST, &j, sizeof(j), &r, sizeof(r));
	*handle = r.id;
	return ret;
}

static ssize_t leave(struct ucma_file *f, uint32_t handle, uint32_t *reported)
{
	struct rdma_ucm_destroy_id l = { .response = 1, .id = handle };
	struct rdma_ucm_destroy_id_resp r = { 0 };
	ssize_t ret = cmd(f, RDMA_USER_CM_CMD_LEAVE_MCAST, &l, sizeof(l), &r, sizeof(r));

	*reported = r.events_reported;
	return ret;
}

/* A join: the RDMA CM's MGID for 224.1.2.3 (ff12:4001:PKEY::IP's low 28
 * bits), a full member with RDMA_UDP_QKEY; the event names the join and
 * carries the group's address handle; a leave deletes the membership; a
 * client reregister of the port ends a join. */
static void test_mcast_join(void **state)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
					  0x00, 0x01, 0x02, 0x03 };
	struct env *e = *state;
	struct fake_mc_sa sa = { .e = e };
	struct sockaddr_in g = in4("224.1.2.3", 0);
	struct rdma_ucm_event_resp ev;
	uint32_t id, h, n;
	uint8_t got[16];

	host_register_client(e->hw, &mc_sa_client, &sa);
	id = create_id(e->cli, RDMA_PS_UDP, IBV_QPT_UD, 0x11);
	assert_true(bind4(e->cli, id, "10.1.0.4", 0) > 0);
	assert_true(join(e->cli, id, &g, sizeof(g), RDMA_MC_JOIN_FLAG_FULLMEMBER, &h) > 0);
	assert_int_not_equal(h, id);
	assert_int_equal(sa.sets, 1);
	mad_get_array(sa.rec, 0, IB_SA_MCM_MGID_F, got);
	assert_memory_equal(got, mgid, 16);
	assert_int_equal(mad_get_field(sa.rec, 0, IB_SA_MCM_JOIN_STATE_F), 1);
	assert_int_equal(mad_get_field(sa.rec, 0, IB_SA_MCM_QKEY_F), 0x01234567);
	ev = next_event(e->cli, UCMA_EV_MULTICAST_JOIN);
	assert_int_equal(ev.uid, 0x3c);
	assert_int_equal(ev.id, h);
	assert_int_equal(ev.param.ud.qp_num, 0xffffff);
	assert_int_equal(ev.param.ud.qkey, 0x01234567);
	assert_int_equal(ev.param.ud.ah_attr.dlid, 0xc005);
	assert_int_equal(ev.param.ud.ah_attr.sl, 2);
	assert_int_equal(ev.param.ud.ah_attr.is_global, 1);
	assert_memory_equal(ev.param.ud.ah_attr.grh.dgid, mgid, 16);
	assert_true(leave(e->cli, h, &n) > 0);
	assert_int_equal(n, 1);
	assert_int_equal(sa.deletes, 1);
	assert_int_equal(leave(e->cli, h, &n), -ENOENT);
	/* A client reregister (an SM that may have forgotten the group):
	 * the join ends, MULTICAST_ERROR -ENETRESET; its leave deletes
	 * nothing more. A change of another port leaves a join alone. */
	assert_true(join(e->cli, id, &g, sizeof(g), RDMA_MC_JOIN_FLAG_FULLMEMBER, &h) > 0);
	next_event(e->cli, UCMA_EV_MULTICAST_JOIN);
	port_changed(&fabric_find(e->f, "host1")->ports[1], PORT_CHANGED_REREG);
	no_event(e->cli);
	port_changed(&fabric_find(e->f, "host2")->ports[1], PORT_CHANGED_REREG);
	ev = next_event(e->cli, UCMA_EV_MULTICAST_ERROR);
	assert_int_equal((int)ev.status, -ENETRESET);
	assert_int_equal(ev.id, h);
	assert_true(leave(e->cli, h, &n) > 0);
	assert_int_equal(sa.deletes, 1);
	host_unregister_client(e->hw, &mc_sa_client, &sa);
}

/* What a join refuses, and how one fails: an SA status or a group of
 * another Q_Key (MULTICAST_ERROR, -EINVAL), no answer in 3 s
 * (-ETIMEDOUT); a failed join is left with no Delete; past
 * UCMA_MCS_MAX joins an id, ENOMEM. */
static void test_mcast_errors(void **state)
{
	struct env *e = *state;
	struct fake_mc_sa sa = { .e = e, .status = 0x0200 };
	struct sockaddr_in g = in4("224.1.2.3", 0);
	uint32_t id, rc, h, n;

	host_register_client(e->hw, &mc_sa_client, &sa);
	id = create_id(e->cli, RDMA_PS_UDP, IBV_QPT_UD, 0x11);
	assert_int_equal(join(e->cli, id, &g, sizeof(g), 0, &h), -EINVAL);	/* no port */
	assert_true(bind4(e->cli, id, "10.1.0.4", 0) > 0);
	assert_int_equal(join(e->cli, id, &g, sizeof(g) - 1, 0, &h), -EINVAL);
	assert_int_equal(join(e->cli, id, &g, sizeof(g), 2, &h), -EINVAL);
	assert_int_equal(join(e->cli, id + 1000, &g, sizeof(g), 0, &h), -ENOENT);
	rc = create_id(e->cli, RDMA_PS_TCP, IBV_QPT_RC, 0x12);
	assert_true(bind4(e->cli, rc, "10.1.0.4", 0) > 0);
	assert_int_equal(join(e->cli, rc, &g, sizeof(g), 0, &h), -EINVAL);	/* not UD */
	assert_true(join(e->cli, id, &g, sizeof(g), RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER, &h) > 0);
	assert_int_equal(mad_get_field(sa.rec, 0, IB_SA_MCM_JOIN_STATE_F), 8);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_MULTICAST_ERROR).status, -EINVAL);
	assert_int_equal(leave(e->srv, h, &n), -EINVAL);	/* another file's */
	assert_true(leave(e->cli, h, &n) > 0);
	assert_int_equal(sa.deletes, 0);
	sa.status = 0;
	sa.qkey = 0x0b1b;
	assert_true(join(e->cli, id, &g, sizeof(g), 0, &h) > 0);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_MULTICAST_ERROR).status, -EINVAL);
	sa.silent = true;
	assert_true(join(e->cli, id, &g, sizeof(g), 0, &h) > 0);
	advance(e, 2999000);
	no_event(e->cli);
	advance(e, 1000);
	assert_int_equal((int)next_event(e->cli, UCMA_EV_MULTICAST_ERROR).status, -ETIMEDOUT);
	/* UCMA_MCS_MAX joins an id, then ENOMEM. */
	id = create_id(e->cli, RDMA_PS_UDP, IBV_QPT_UD, 0x13);
	assert_true(bind4(e->cli, id, "10.1.0.4", 0) > 0);
	for (n = 0; n < UCMA_MCS_MAX; n++)
		assert_true(join(e->cli, id, &g, sizeof(g), 0, &h) > 0);
	assert_int_equal(join(e->cli, id, &g, sizeof(g), 0, &h), -ENOMEM);
	host_unregister_client(e->hw, &mc_sa_client, &sa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_table),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_disconnect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_rep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_disconnects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sa_route, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sa_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mcast_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mcast_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
