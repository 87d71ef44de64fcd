/* SPDX-License-Identifier: MIT */
/*
 * Two fabrics in one process, each with its verbs devices and traffic
 * (kernel/uverbs_priv.h's struct uverbs_net): what one's contexts hold,
 * its direct path's inboxes, grants and their revocation, and what went
 * that way in its PMA, touch nothing of the other's
 * (kernel/uverbs_direct.c, docs/verbs.md "The direct path").
 */
#include "config.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/verbs_inbox.h"
#include "abi/verbs_wire.h"
#include "fabric/configure.h"
#include "fabric/fabric.h"
#include "fabric/port.h"
#include "kernel/uverbs.h"
#include "testfab.h"

#define QKEY	0x11111111u

/* One fabric: host1 (ibemu0) sends to host3 (ibemu1), two hops apart. */
struct world {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct host *hw;
	struct uverbs *uv;
	struct uverbs_ctx *tx, *rx;
	uint32_t tx_qpn, rx_qpn;
	uint16_t rx_lid;
};

static bool all_read(void *arg)
{
	(void)arg;
	return true;
}

static uint32_t new_ud_qp(struct uverbs_ctx *c)
{
	struct verbs_ioc_qp a = { .type = 4 /* IBV_QPT_UD */ };

	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_CREATE, &a), 0);
	a.qkey = QKEY;
	a.port = 1;
	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_SET, &a), 0);
	return a.qpn;
}

static void world_make(struct world *w, bool roce)
{
	w->f = topo_load_default(0);
	if (roce) {	/* as `ibemu run --roce` (cli/emulator.c) */
		fabric_set_roce(w->f);
		assert_true(fabric_roce_networks(w->f, NULL));
		assert_true(fabric_configure_roce(w->f) > 0);
	} else {
		assert_true(fabric_configure(w->f, NULL) > 0);
	}
	w->tq = timerq_new(test_clock_now, &w->clock);
	w->hw = host_new(w->f, w->tq);
	host_attach(w->hw, fabric_find(w->f, "host1"));
	host_attach(w->hw, fabric_find(w->f, "host3"));
	w->uv = uverbs_new(w->hw);
	assert_int_equal(uverbs_ndevs(w->uv), 2);
	w->tx = uverbs_ctx_open(uverbs_dev(w->uv, 0));
	w->rx = uverbs_ctx_open(uverbs_dev(w->uv, 1));
	w->tx_qpn = new_ud_qp(w->tx);
	w->rx_qpn = new_ud_qp(w->rx);
	w->rx_lid = fabric_find(w->f, "host3")->ports[1].lid;
	uverbs_ctx_set_direct(w->rx, all_read, NULL);
}

static void world_up(struct world *w)
{
	world_make(w, false);
}

static void world_down(struct world *w)
{
	uverbs_ctx_close(w->tx);
	uverbs_ctx_close(w->rx);
	uverbs_free(w->uv);
	host_free(w->hw);
	timerq_free(w->tq);
	fabric_free(w->f);
}

static int setup(void **state)
{
	struct world *w = g_new0(struct world, 2);

	world_up(&w[0]);
	world_up(&w[1]);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	world_down(&w[0]);
	world_down(&w[1]);
	g_free(w);
	return 0;
}

/* The header of a UD SEND of @len bytes from @w's sender to its receiver. */
static struct verbs_wire_pkt header(const struct world *w, uint32_t len)
{
	return (struct verbs_wire_pkt){
		.rec = { VERBS_REC_PKT, (uint32_t)(sizeof(struct verbs_wire_pkt) + len) },
		.port = 1,
		.opcode = OP_UD_SEND_ONLY,
		.dlid = w->rx_lid,
		.sqpn = w->tx_qpn,
		.dqpn = w->rx_qpn,
		.qkey = QKEY,
		.len = len,
	};
}

/* A packet through the engine: queued at the receiver, then read. */
static void send_and_read(struct world *w)
{
	uint8_t rec[sizeof(struct verbs_wire_pkt) + 64] = { 0 }, got[sizeof(rec) + 64];
	struct verbs_wire_pkt h = header(w, 64);

	memcpy(rec, &h, sizeof(h));
	assert_int_equal(uverbs_ctx_write(w->tx, rec, sizeof(rec)), sizeof(rec));
	assert_true(uverbs_ctx_readable(w->rx));
	assert_int_equal(uverbs_ctx_read(w->rx, got, sizeof(got)), sizeof(rec));
}

/* What the receiver's transport reads (the records that tell it to map
 * its inbox and sub-rings): a grant waits for its queue to be empty. */
static void drain(struct world *w)
{
	uint8_t buf[4096];

	while (uverbs_ctx_read(w->rx, buf, sizeof(buf)) > 0)
		;
}

/* A grant for @w's packets: its sub-ring mapped in *@sub. */
static struct verbs_direct_grant grant(struct world *w, struct verbs_ring **sub)
{
	struct verbs_direct_grant g;
	struct verbs_wire_pkt h = header(w, 64);
	uint32_t len;
	int fd;

	assert_int_equal(uverbs_direct_grant(w->tx, &h, sizeof(h), &g, &len, &fd), 0);
	assert_int_equal(len, sizeof(g));
	*sub = mmap(NULL, VERBS_SUB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(*sub != MAP_FAILED);
	return g;
}

/* Each fabric's contexts hold their own bytes, flow on their own. */
static void test_queues_apart(void **state)
{
	struct world *w = *state;
	uint8_t rec[sizeof(struct verbs_wire_pkt) + 64] = { 0 };
	struct verbs_wire_pkt h = header(&w[0], 64);

	memcpy(rec, &h, sizeof(h));
	assert_int_equal(uverbs_ctx_write(w[0].tx, rec, sizeof(rec)), sizeof(rec));
	assert_int_equal(uverbs_rx_bytes_all(w[0].f), sizeof(rec));
	assert_int_equal(uverbs_rx_bytes_all(w[1].f), 0);
	assert_false(uverbs_ctx_readable(w[1].rx));
	send_and_read(&w[1]);
	assert_int_equal(uverbs_rx_bytes_all(w[0].f), sizeof(rec));
	assert_int_equal(w[1].f->delivered, 1);
}

/* Grants are numbered per fabric; a change on one takes back its own. */
static void test_grants_apart(void **state)
{
	struct world *w = *state;
	struct verbs_ring *sub0, *sub1;
	struct verbs_direct_grant g0, g1;

	send_and_read(&w[0]);
	send_and_read(&w[1]);
	g0 = grant(&w[0], &sub0);
	g1 = grant(&w[1], &sub1);
	/* Each fabric's first inbox, first grant. */
	assert_int_equal(g0.peer, 1);
	assert_int_equal(g1.peer, 1);
	assert_int_equal(g0.grant, 1);
	assert_int_equal(g1.grant, 1);
	assert_int_equal(g1.slid, fabric_find(w[1].f, "host1")->ports[1].lid);
	assert_int_equal(sub0->grant, 1);
	assert_int_equal(sub1->grant, 1);

	fabric_changed(w[1].f);	/* an SMP Set there, say */
	assert_int_equal(sub1->closed, 1);
	assert_int_equal(sub1->grant, 0);
	assert_int_equal(sub0->closed, 0);
	assert_int_equal(sub0->grant, 1);
	fabric_changed(w[0].f);
	assert_int_equal(sub0->closed, 1);
	munmap(sub0, VERBS_SUB_BYTES);
	munmap(sub1, VERBS_SUB_BYTES);
}

/* What a receiver took that way reaches its own fabric's counters. */
static void test_counted_apart(void **state)
{
	struct world *w = *state;
	struct verbs_inbox_ask own = { 0 };
	struct verbs_direct_grant g;
	struct verbs_inbox *page;
	struct verbs_ring *sub;
	struct port *last0 = &fabric_find(w[0].f, "leaf2")->ports[1];
	struct port *last1 = &fabric_find(w[1].f, "leaf2")->ports[1];
	uint64_t words0, words1 = last1->counters.xmit_data;
	int fd;

	send_and_read(&w[0]);
	words0 = last0->counters.xmit_data;
	g = grant(&w[0], &sub);
	assert_int_equal(uverbs_direct_fd(w[0].rx, VERBS_INBOX_PAGE, &own, sizeof(own), &fd), 0);
	page = mmap(NULL, VERBS_INBOX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(page != MAP_FAILED);
	/* The receiver's own count of what it took: 3 packets, 60 words. */
	page->bind[g.sub].packets = 3;
	page->bind[g.sub].dwords = 60;
	fabric_sync(w[0].f);
	fabric_sync(w[1].f);
	assert_int_equal(w[0].f->direct_packets, 3);
	assert_int_equal(w[1].f->direct_packets, 0);
	assert_int_equal(last0->counters.xmit_data, words0 + 60);
	assert_int_equal(last1->counters.xmit_data, words1);
	munmap(page, VERBS_INBOX_BYTES);
	munmap(sub, VERBS_SUB_BYTES);
}

/* The receiver's inbox goes with its context; a grant asked for later
 * finds none on its fabric and makes a new one. */
static void test_forget(void **state)
{
	struct world *w = *state;
	struct verbs_inbox_ask own = { 0 };
	struct verbs_direct_grant g;
	struct verbs_ring *sub;
	int fd;

	send_and_read(&w[0]);
	g = grant(&w[0], &sub);
	munmap(sub, VERBS_SUB_BYTES);
	uverbs_ctx_set_direct(w[0].rx, NULL, NULL);	/* its transport's ring went */
	assert_int_equal(uverbs_direct_fd(w[0].rx, VERBS_INBOX_PAGE, &own, sizeof(own), &fd),
			 -ENOENT);
	{
		struct verbs_wire_pkt h = header(&w[0], 64);
		uint32_t len;

		assert_int_equal(uverbs_direct_grant(w[0].tx, &h, sizeof(h), &g, &len, &fd),
				 -EAGAIN);
	}
	uverbs_ctx_set_direct(w[0].rx, all_read, NULL);
	drain(&w[0]);
	g = grant(&w[0], &sub);
	assert_int_equal(g.peer, 2);
	munmap(sub, VERBS_SUB_BYTES);
}

/* On RoCE: @w's UD header with a GRH from GID index @sgid_index to the
 * receiver's GID @dgid_index; the GIDs and the version as a hostile
 * sender would write them. */
static struct verbs_wire_pkt roce_header(const struct world *w, unsigned sgid_index,
					 unsigned dgid_index)
{
	struct verbs_wire_pkt h = header(w, 64);

	h.dlid = 0;	/* RoCE has none: the DGID's port is the way */
	h.flags = VERBS_PKT_GRH | VERBS_PKT_ROCE_V2;
	h.sgid_index = (uint8_t)sgid_index;
	h.grh_hop_limit = 64;
	memset(h.sgid, 0xaa, 16);
	port_gid(&fabric_find(w->f, "host3")->ports[1], dgid_index, h.dgid);
	return h;
}

static void took(void *ctx, const struct verbs_wire_pkt *p, const char *payload)
{
	(void)payload;
	memcpy(ctx, p, sizeof(*p));
}

/*
 * RoCE packets take the direct path: the binding routes by the DGID's
 * port and holds the GIDs the daemon would set (the sender's port's at
 * its index, not what it wrote) and the version of that index's type; a
 * packet with another SGID index, or none, is not let through; an
 * InfiniBand GRH and RoCE multicast stay the daemon's.
 */
static void test_roce(void **state)
{
	struct world *w = *state, r = { 0 };
	struct port *tx_port, *rx_port;
	struct verbs_inbox_ask own = { 0 };
	struct verbs_direct_grant g;
	struct verbs_wire_pkt h, got;
	struct verbs_inbox *page;
	struct verbs_bind b;
	uint8_t gid[16], rec[sizeof(h) + 64] = { 0 };
	uint32_t len;
	int fd;

	/* InfiniBand (the setup's world): a GRH is the daemon's. */
	send_and_read(&w[0]);
	h = header(&w[0], 64);
	h.flags = VERBS_PKT_GRH;
	assert_int_equal(uverbs_direct_grant(w[0].tx, &h, sizeof(h), &g, &len, &fd), -EAGAIN);

	world_make(&r, true);
	tx_port = &fabric_find(r.f, "host1")->ports[1];
	rx_port = &fabric_find(r.f, "host3")->ports[1];
	/* Through the engine first (the receiver reads all it holds). */
	h = roce_header(&r, 0, 1);
	memcpy(rec, &h, sizeof(h));
	assert_int_equal(uverbs_ctx_write(r.tx, rec, sizeof(rec)), sizeof(rec));
	drain(&r);
	/* GID 0 is RoCE v1: the grant's binding says v1, whatever the
	 * sender's flags said, and the true GIDs. */
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), 0);
	assert_int_equal(g.rx_port, 1);
	close(fd);
	assert_int_equal(uverbs_direct_fd(r.rx, VERBS_INBOX_PAGE, &own, sizeof(own), &fd), 0);
	page = mmap(NULL, VERBS_INBOX_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(page != MAP_FAILED);
	close(fd);
	assert_true(verbs_bind_read(&page->bind[g.sub], g.grant, &b));
	assert_int_equal(b.grh, 1);
	assert_int_equal(b.roce_v2, 0);
	assert_int_equal(b.dlid, rx_port->lid);
	port_gid(tx_port, 0, gid);
	assert_memory_equal(b.sgid, gid, 16);
	port_gid(rx_port, 1, gid);
	assert_memory_equal(b.dgid, gid, 16);
	/* What the receiver takes: the binding's GIDs and version. */
	memset(&got, 0, sizeof(got));
	verbs_sub_records(&b, (const char *)rec, sizeof(rec), took, &got);
	assert_int_equal(got.sqpn, r.tx_qpn);
	assert_int_equal(got.flags & (VERBS_PKT_GRH | VERBS_PKT_ROCE_V2), VERBS_PKT_GRH);
	port_gid(tx_port, 0, gid);
	assert_memory_equal(got.sgid, gid, 16);
	assert_int_equal(got.dlid, rx_port->lid);
	/* Another SGID index, or no GRH: not let through. */
	memset(&got, 0, sizeof(got));
	h.sgid_index = 1;
	memcpy(rec, &h, sizeof(h));
	verbs_sub_records(&b, (const char *)rec, sizeof(rec), took, &got);
	h.sgid_index = 0;
	h.flags = 0;
	memcpy(rec, &h, sizeof(h));
	verbs_sub_records(&b, (const char *)rec, sizeof(rec), took, &got);
	assert_int_equal(got.sqpn, 0);
	/* GID 1 is RoCE v2: another binding, which says so. */
	drain(&r);
	h = roce_header(&r, 1, 1);
	h.flags = VERBS_PKT_GRH;
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), 0);
	close(fd);
	assert_true(verbs_bind_read(&page->bind[g.sub], g.grant, &b));
	assert_int_equal(b.roce_v2, 1);
	/* A GID nobody has, a multicast one, an index with no GID: refused
	 * (with nothing queued for the receiver, which alone would be). */
	drain(&r);
	h = roce_header(&r, 1, 1);
	h.dgid[15] ^= 0x55;
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), -EAGAIN);
	h = roce_header(&r, 1, 1);
	memset(h.dgid, 0, 16);
	memcpy(h.dgid + 10, "\xff\xff\xe0\x01\x02\x03", 6);	/* ::ffff:224.1.2.3 */
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), -EAGAIN);
	h = roce_header(&r, GUIDS_PER_PORT - 1, 1);
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), -EAGAIN);
	/* ... and the way they were refused for is the only one: */
	h = roce_header(&r, 1, 2);
	assert_int_equal(uverbs_direct_grant(r.tx, &h, sizeof(h), &g, &len, &fd), 0);
	close(fd);
	munmap(page, VERBS_INBOX_BYTES);
	world_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_queues_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counted_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
