/* SPDX-License-Identifier: MIT */
/*
 * IPoIB's connected mode (kernel/ipoib_cm.c, docs/ipoib.md) between host1
 * and host3 (ipoib_env.h): the mode file's words as ib_ipoib takes them
 * and the MTU each sets; a 30,000-byte datagram whole over an RC
 * connection each way, made with REQ, REP and RTU through the fabric;
 * a packet lost mid-message (a drop rule) failing the connection (retry
 * count 0), the datagram lost and the next on a new connection; a lost
 * ACK failing it on the timer; and what a hostile peer may send: a flood
 * of REQs (connections bounded), a REQ with no room in its private data,
 * a SEND from a QP not the connected one. And P_Key child interfaces
 * (create_child, delete_child): the words they take, the names, the
 * bound, a child whose P_Key the port lacks sending nothing.
 */
#include "config.h"

#include "fabric/fault.h"
#include "kernel/cm_wire.h"
#include "ipoib_env.h"

#define BIG	30000

static char mtu_name[16], added[16];
static unsigned mtu_set;
static int child_kernel = -1;	/* the last child's host end */

static int fake_set_mtu(int pid, const char *name, unsigned mtu)
{
	(void)pid;
	g_strlcpy(mtu_name, name, sizeof(mtu_name));
	mtu_set = mtu;
	return 0;
}

static int fake_add_if(int pid, const char *name, unsigned mtu)
{
	int sv[2];

	(void)pid;
	assert_int_equal(mtu, 2044);
	g_strlcpy(added, name, sizeof(added));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	if (child_kernel >= 0)
		close(child_kernel);
	child_kernel = sv[1];
	return sv[0];
}

static const struct ipoib_host_ops fake_ops = { .set_mtu = fake_set_mtu, .add_if = fake_add_if };

static void connected(struct env *e)
{
	ipoib_links_set_host(e->a.ip, 1, &fake_ops);
	ipoib_links_set_host(e->b.ip, 1, &fake_ops);
	assert_int_equal(ipoib_port_set_mode(e->a.port, "connected\n"), 0);
	assert_int_equal(ipoib_port_set_mode(e->b.port, "connected\n"), 0);
}

/* An IPv4 frame of @len IP bytes to @dst, its bytes numbered from @seed. */
static void ip_frame(uint8_t *f, const uint8_t dst[6], size_t len, unsigned seed)
{
	size_t i;

	memcpy(f, dst, 6);
	memcpy(f + 6, kmac_a, 6);
	put_be16(f, 12, 0x0800);
	for (i = 14; i < 14 + len; i++)
		f[i] = (uint8_t)(i + seed);
}

static unsigned count(const char *s, const char *what)
{
	unsigned n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void assert_status(struct side *s, const char *what, unsigned n)
{
	char *st = ipoib_links_status(s->ip);

	if (count(st, what) != n)
		fail_msg("%u times \"%s\" in:\n%s", count(st, what), what, st);
	g_free(st);
}

static void test_mode(void **state)
{
	struct env *e = *state;
	struct port *none = &fabric_find(e->f, "host2")->ports[1];
	char *m = ipoib_port_mode(e->a.port);

	assert_string_equal(m, "datagram\n");
	g_free(m);
	ipoib_links_set_host(e->a.ip, 1, &fake_ops);
	/* ipoib_set_mode: the words with their newline, nothing else. */
	assert_int_equal(ipoib_port_set_mode(e->a.port, "connected"), -EINVAL);
	assert_int_equal(ipoib_port_set_mode(e->a.port, "Connected\n"), -EINVAL);
	assert_int_equal(mtu_set, 0);
	assert_int_equal(ipoib_port_set_mode(e->a.port, "connected\n"), 0);
	assert_string_equal(mtu_name, "ib0");
	assert_int_equal(mtu_set, 65520);
	m = ipoib_port_mode(e->a.port);
	assert_string_equal(m, "connected\n");
	g_free(m);
	assert_status(&e->a, "connected mode, MTU 65520", 1);
	assert_int_equal(ipoib_port_set_mode(e->a.port, "datagram\n"), 0);
	assert_int_equal(mtu_set, 2044);
	/* A port no interface of the fabric's is on. */
	assert_null(ipoib_port_mode(none));
	assert_int_equal(ipoib_port_set_mode(none, "connected\n"), -EOPNOTSUPP);
}

/* Both in connected mode, resolved, @f and @g room for a big frame; A
 * sends one, numbered from @seed, to B: what B's kernel got (or -1). */
static void big_setup(struct env *e, uint8_t mac_a[6], uint8_t mac_b[6], uint8_t **f,
		      uint8_t **g)
{
	connected(e);
	resolve(e, mac_a, mac_b);
	*f = g_malloc(14 + BIG);
	*g = g_malloc(14 + BIG + 64);
}

static ssize_t big_a_to_b(struct env *e, const uint8_t mac_b[6], uint8_t *f, uint8_t *g,
			  unsigned seed)
{
	ip_frame(f, mac_b, BIG, seed);
	from_kernel(e, &e->a, f, 14 + BIG);
	turn(e);
	return to_kernel(&e->b, g, 14 + BIG + 64);
}

static void test_big(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], *f, *g;

	big_setup(e, mac_a, mac_b, &f, &g);
	assert_int_equal(big_a_to_b(e, mac_b, f, g, 0), 14 + BIG);
	assert_memory_equal(g, mac_b, 6);
	assert_memory_equal(g + 6, mac_a, 6);	/* from A's own stand-in MAC */
	assert_memory_equal(g + 14, f + 14, BIG);
	assert_status(&e->a, "connection out: ", 1);
	assert_status(&e->a, "up, 1 messages sent", 1);
	assert_status(&e->b, "connection in: ", 1);
	assert_status(&e->b, "up, 1 messages received", 1);
	/* And back, on B's connection to A. */
	ip_frame(f, mac_a, BIG - 1, 7);
	from_kernel(e, &e->b, f, 14 + BIG - 1);
	assert_int_equal(to_kernel(&e->a, g, 14 + BIG + 64), 14 + BIG - 1);
	assert_memory_equal(g + 14, f + 14, BIG - 1);
	assert_status(&e->b, "connection out: ", 1);
	/* Past connected mode's MTU: not sent. */
	g_free(f);
	f = g_malloc(14 + 65521);
	ip_frame(f, mac_b, 65521, 0);
	from_kernel(e, &e->a, f, 14 + 65521);
	assert_int_equal(to_kernel(&e->b, g, 64), -1);
	g_free(f);
	g_free(g);
}

static struct fault_rule *drop_data(struct env *e, uint16_t slid, unsigned nth)
{
	struct fault_rule *r = g_new0(struct fault_rule, 1);

	fault_rule_defaults(r);
	r->action = FAULT_DROP;
	r->mgmt_class = FAULT_CLASS_DATA;
	r->slid = slid;
	r->count = 1;
	r->nth = nth;
	fault_add(&e->f->faults, r);
	return r;
}

/* A packet lost mid-message: B NAKs the next, A's connection fails
 * (retry count 0) and goes with a DREQ; the datagram is lost (TCP's to
 * resend), the next one goes on a new connection. */
static void test_lost(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], *f, *g;

	big_setup(e, mac_a, mac_b, &f, &g);
	assert_int_equal(big_a_to_b(e, mac_b, f, g, 0), 14 + BIG);
	drop_data(e, e->a.port->lid, 3);
	assert_int_equal(big_a_to_b(e, mac_b, f, g, 1), -1);
	assert_status(&e->a, "connection out: ", 0);	/* failed, let go */
	assert_status(&e->b, "connection in: ", 0);	/* the DREQ */
	assert_int_equal(big_a_to_b(e, mac_b, f, g, 2), 14 + BIG);
	assert_memory_equal(g + 14, f + 14, BIG);
	assert_status(&e->a, "up, 1 messages sent", 1);
	g_free(f);
	g_free(g);
}

/* The ACK lost: no word in the local ACK timeout (2.1 s), the connection
 * fails. */
static void test_ack_lost(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], f[200], g[300];

	connected(e);
	resolve(e, mac_a, mac_b);
	drop_data(e, e->b.port->lid, 1);
	ip_frame(f, mac_b, 100, 0);
	from_kernel(e, &e->a, f, 14 + 100);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), 14 + 100);	/* delivered */
	assert_status(&e->a, "connection out: ", 1);
	e->clock.now_us += 2000 * 1000;
	turn(e);
	assert_status(&e->a, "connection out: ", 1);	/* not yet */
	e->clock.now_us += 200 * 1000;
	turn(e);
	assert_status(&e->a, "connection out: ", 0);
}

/* A CM MAD from host1's port to B, as a hostile process there could
 * make one with umad. */
static void send_cm(struct env *e, const uint8_t *m)
{
	struct mad_pkt pkt = { 0 };

	memcpy(pkt.mad, m, MAD_SIZE);
	pkt.slid = e->a.port->lid;
	pkt.dlid = e->b.port->lid;
	pkt.sqp = pkt.dqp = 1;
	pkt.qkey = 0x80010000u;
	pkt.pkey = 0xffff;
	fabric_send(e->f, e->a.port, &pkt);
}

static void forged_req(uint8_t *m, uint32_t comm_id, uint32_t bqpn, uint32_t mtu)
{
	memset(m, 0, MAD_SIZE);
	m[0] = 1;
	m[1] = CM_CLASS;
	m[2] = CM_CLASS_VERSION;
	m[3] = CM_METHOD_SEND;
	put_be16(m, 16, CM_ATTR_REQ);
	cm_put(m, CM_REQ_LOCAL_COMM_ID, comm_id);
	cm_put(m, CM_REQ_SERVICE_ID, 0x1000000000000000ull | bqpn);
	cm_put(m, CM_REQ_LOCAL_QPN, 0x100000 + comm_id);
	cm_put(m, CM_REQ_PRIMARY_LOCAL_LID, 1);
	put_be32(m, CM_REQ_PRIVATE, 0x123456);
	put_be32(m, CM_REQ_PRIVATE + 4, mtu);
}

/* Interface @name's UD QPN, from B's status. */
static uint32_t b_qpn(struct env *e, const char *name)
{
	char *st = ipoib_links_status(e->b.ip), *at;
	char key[32];
	unsigned q = 0;

	g_snprintf(key, sizeof(key), "%s: QPN 0x", name);
	assert_non_null(at = strstr(st, key));
	assert_int_equal(sscanf(at + strlen(key), "%x", &q), 1);
	g_free(st);
	return q;
}

static void test_hostile(void **state)
{
	struct env *e = *state;
	MAD_BUF(m);
	uint32_t q = b_qpn(e, "ib0");
	uint8_t mac_a[6], mac_b[6];
	unsigned i;

	/* 300 REQs from forged peers: at most 256 held, the least used let
	 * go for each past it. */
	for (i = 1; i <= 300; i++) {
		forged_req(m, i, q, 65524);
		send_cm(e, m);
	}
	turn(e);
	assert_status(&e->b, "connection in: ", 256);
	/* The same REQ again: no new connection (the REP again). */
	send_cm(e, m);
	assert_status(&e->b, "connection in: ", 256);
	/* No room for a message in its private data: refused. */
	forged_req(m, 1000, q, 4);
	send_cm(e, m);
	assert_status(&e->b, "connection in: ", 256);
	/* Another's service ID: not ours to take. */
	forged_req(m, 1001, q + 1, 65524);
	send_cm(e, m);
	assert_status(&e->b, "connection in: ", 256);
	/* Datagrams still go both ways. */
	resolve(e, mac_a, mac_b);
}

/* REQs naming every interface of one HCA: half its QPs at most, so
 * that its programs keep the other half. */
static void test_hostile_children(void **state)
{
	struct env *e = *state;
	MAD_BUF(m);
	uint32_t q = b_qpn(e, "ib0"), q1, q2;
	int k1, k2;
	unsigned i;

	ipoib_links_set_host(e->b.ip, 1, &fake_ops);
	assert_int_equal(ipoib_port_create_child(e->b.port, "0x8001\n"), 0);
	k1 = child_kernel;
	child_kernel = -1;
	assert_int_equal(ipoib_port_create_child(e->b.port, "0x8002\n"), 0);
	k2 = child_kernel;
	child_kernel = -1;
	q1 = b_qpn(e, "ib0.8001");
	q2 = b_qpn(e, "ib0.8002");
	/* 256 on the parent, 256 on one child: the HCA's 512. */
	for (i = 1; i <= 256; i++) {
		forged_req(m, i, q, 65524);
		send_cm(e, m);
		forged_req(m, 1000 + i, q1, 65524);
		send_cm(e, m);
	}
	turn(e);
	assert_status(&e->b, "connection in: ", 512);
	/* The other child, with room of its own (none held), gets none. */
	for (i = 1; i <= 10; i++) {
		forged_req(m, 2000 + i, q2, 65524);
		send_cm(e, m);
	}
	turn(e);
	assert_status(&e->b, "connection in: ", 512);
	/* The parent lets its least used go for each new one. */
	forged_req(m, 3001, q, 65524);
	send_cm(e, m);
	turn(e);
	assert_status(&e->b, "connection in: ", 512);
	close(k1);
	close(k2);
}

/* A SEND to B's connection from a QP that is not its peer's: dropped,
 * never delivered. */
static void test_forged_send(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], f[200], g[300];
	uint8_t buf[sizeof(struct verbs_wire_pkt) + 104];
	struct verbs_wire_pkt w = { 0 };
	struct uverbs_ctx *c;
	struct verbs_ioc_qp qp = { .type = 2 };
	char *st;
	unsigned bq = 0;

	connected(e);
	resolve(e, mac_a, mac_b);
	ip_frame(f, mac_b, 100, 0);
	from_kernel(e, &e->a, f, 14 + 100);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), 14 + 100);
	st = ipoib_links_status(e->b.ip);
	assert_int_equal(sscanf(strstr(st, "connection in: QP 0x"), "connection in: QP 0x%x", &bq),
			 1);
	g_free(st);
	c = uverbs_ctx_open(uverbs_dev(e->a.uv, 0));
	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_CREATE, &qp), 0);
	qp.port = 1;
	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_SET, &qp), 0);
	w.rec.type = VERBS_REC_PKT;
	w.rec.len = sizeof(buf);
	w.port = 1;
	w.opcode = OP_RC_SEND_ONLY;
	w.dlid = e->b.port->lid;
	w.sqpn = qp.qpn;
	w.dqpn = bq;
	w.psn = 1;	/* the next B expects: the first message had one packet */
	w.len = 104;
	memcpy(buf, &w, sizeof(w));
	put_be16(buf, sizeof(w), 0x0800);
	memcpy(buf + sizeof(w) + 4, f + 14, 100);
	assert_int_equal(uverbs_ctx_write(c, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	turn(e);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), -1);
	assert_status(&e->b, "up, 1 messages received", 1);
	uverbs_ctx_close(c);
}

/* create_child and delete_child: the P_Keys they take, the names, the
 * bounds. */
static void test_children(void **state)
{
	struct env *e = *state;
	unsigned i;
	char buf[16];

	assert_int_equal(ipoib_port_create_child(e->a.port, "0x8001\n"), -EOPNOTSUPP);
	ipoib_links_set_host(e->a.ip, 1, &fake_ops);
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x8000\n"), -EINVAL);
	assert_int_equal(ipoib_port_create_child(e->a.port, "0\n"), -EINVAL);
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x10000\n"), -EINVAL);
	assert_int_equal(ipoib_port_create_child(e->a.port, "pkey\n"), -EINVAL);
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x8001\n"), 0);
	assert_string_equal(added, "ib0.8001");
	assert_int_equal(ipoib_port_create_child(e->a.port, "32769\n"), -ENOTUNIQ);	/* 0x8001 */
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x2\n"), 0);
	assert_string_equal(added, "ib0.0002");
	assert_status(&e->a, "ipoib: ib0.8001: QPN 0x", 1);
	assert_status(&e->a, "P_Key 0x8002", 1);
	/* Its P_Key not in the port's table (no SM gave it): its broadcast
	 * goes nowhere. */
	assert_int_equal(write(child_kernel, (uint8_t[60]){ [0 ... 5] = 0xff, [12] = 8, 6 }, 60), 60);
	turn(e);
	assert_status(&e->a, " 1 dropped", 1);
	for (i = 3; i <= 64; i++) {
		g_snprintf(buf, sizeof(buf), "%u\n", 0x8000 + i);
		assert_int_equal(ipoib_port_create_child(e->a.port, buf), 0);
	}
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x8041\n"), -EMLINK);
	assert_int_equal(ipoib_port_delete_child(e->a.port, "0x8001\n"), 0);
	assert_status(&e->a, "ipoib: ib0.8001:", 0);
	assert_int_equal(ipoib_port_delete_child(e->a.port, "0x8001\n"), -ENODEV);
	assert_int_equal(ipoib_port_delete_child(e->a.port, "x\n"), -EINVAL);
	assert_int_equal(ipoib_port_create_child(e->a.port, "0x8041\n"), 0);	/* room again */
	close(child_kernel);
	child_kernel = -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_children, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_children, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
