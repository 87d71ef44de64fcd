/* SPDX-License-Identifier: MIT */
/*
 * The SA of a configured fabric (kernel/sa.c) on a two-level fat tree,
 * whose leaves reach each other by every spine (loops a multicast tree
 * must not follow): joins from hosts on different leaves make one group
 * whose MulticastForwardingTable entries reach every member exactly once
 * from any member and visit no switch twice; leaves take the group and
 * its entries away; a GetTable answer is one RMPP transfer of every
 * record, 8-byte aligned; PortInfoRecord's CapabilityMask matches as
 * opensm's (every bit asked).
 */
#include "config.h"

#include <endian.h>

#include <infiniband/mad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include "fabric/configure.h"
#include "fabric/mcast.h"
#include "fabric/port.h"
#include "kernel/host.h"
#include "kernel/sa.h"
#include "kernel/sa_wire.h"
#include "testfab.h"

#define SA_HDR_LEN	56
#define NMEMBERS	4

struct env {
	struct fabric *f;
	struct timerq *tq;
	struct test_clock clock;
	struct host *hw;
	struct sa *sa;
	struct port *sm;
	struct port *hosts[NMEMBERS];	/* CA ports on different leaves */
	struct capture cap[NMEMBERS];
};

/* Keep what reaches a member's port, with its RMPP transfer (the
 * fabric lets go of its own reference once it is delivered). */
static enum upper_verdict keep(void *ctx, struct port *p, const struct mad_pkt *pkt)
{
	struct mad_pkt copy;

	(void)p;
	mad_pkt_copy(&copy, pkt);
	g_array_append_val(((struct capture *)ctx)->pkts, copy);
	return UPPER_TAKEN;
}

static bool leaf_free(struct env *e, unsigned k, struct node *leaf)
{
	unsigned j;

	for (j = 0; j < k; j++)
		if (e->hosts[j]->remote->node == leaf)
			return false;
	return leaf != e->sm->remote->node;
}

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);
	const char *why = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	unsigned i, k = 0;

	assert_int_equal(topo_gen_fattree2(out, 8, 4, &why), 0);	/* 8 leaves of 4 */
	fclose(out);
	e->f = load(text);
	free(text);
	for (i = 0; i < e->f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(e->f->nodes, i);

		if (node_is_switch(n))
			continue;
		if (!e->sm)
			e->sm = &n->ports[1];
		/* A host on each leaf but the SM's, while we need them. */
		else if (k < NMEMBERS && leaf_free(e, k, n->ports[1].remote->node))
			e->hosts[k++] = &n->ports[1];
	}
	assert_int_equal(k, NMEMBERS);
	assert_true(fabric_configure(e->f, e->sm) > 0);
	e->tq = timerq_new(test_clock_now, &e->clock);
	e->f->tq = e->tq;
	e->hw = host_new(e->f, e->tq);
	host_attach(e->hw, e->sm->node);
	e->sa = sa_new(e->hw);
	for (k = 0; k < NMEMBERS; k++) {
		assert_ptr_not_equal(e->hosts[k]->remote->node, e->sm->remote->node);
		e->cap[k].pkts = g_array_new(FALSE, TRUE, sizeof(struct mad_pkt));
		port_attach(e->hosts[k], &(struct port_upper){ .deliver = keep, .ctx = &e->cap[k] });
	}
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	unsigned k;

	sa_free(e->sa);
	host_free(e->hw);
	for (k = 0; k < NMEMBERS; k++) {
		for (unsigned i = 0; i < e->cap[k].pkts->len; i++)
			mad_pkt_release(captured(&e->cap[k], i));
		g_array_free(e->cap[k].pkts, TRUE);
	}
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e);
	return 0;
}

/* Send an SA request from member @k's port and return the answer. */
static struct mad_pkt *ask(struct env *e, unsigned k, uint8_t method, uint16_t attr,
			   uint64_t comp, const uint8_t *rec, size_t len)
{
	struct mad_pkt p = { 0 };
	unsigned before = e->cap[k].pkts->len;

	p.mad[0] = 1;
	p.mad[1] = UMAD_CLASS_SUBN_ADM;
	p.mad[2] = UMAD_SA_CLASS_VERSION;
	p.mad[3] = method;
	mad_set_tid(p.mad, 0x77 + before);
	mad_set_attr_id(p.mad, attr);
	put_be64(p.mad, 48, comp);
	memcpy(p.mad + SA_HDR_LEN, rec, len);
	p.slid = e->hosts[k]->lid;
	p.dlid = e->sm->sm_lid;
	p.sqp = p.dqp = 1;
	p.qkey = 0x80010000u;
	p.pkey = PKEY_DEFAULT;
	fabric_send(e->f, e->hosts[k], &p);
	assert_int_equal(e->cap[k].pkts->len, before + 1);
	return captured(&e->cap[k], before);
}

static void mcr(struct env *e, unsigned k, uint8_t *rec, const uint8_t *mgid)
{
	uint8_t gid[16];

	memset(rec, 0, IB_SA_DATA_SIZE);
	port_gid(e->hosts[k], 0, gid);
	mad_set_array(rec, 0, IB_SA_MCM_MGID_F, (void *)mgid);
	mad_set_array(rec, 0, IB_SA_MCM_PORTGID_F, gid);
	mad_set_field(rec, 0, IB_SA_MCM_QKEY_F, 0x1234);
	mad_set_field(rec, 0, IB_SA_MCM_PKEY_F, PKEY_DEFAULT);
	rec[MCR_SCOPE_JOIN_OFF] = 1;	/* FullMember */
}

/* Is @p's MFT bit for @mlid set at switch @n? */
static bool mft_has(struct node *n, uint16_t mlid, unsigned p)
{
	unsigned positions = n->nports / 16 + 1;

	return n->sw->mft &&
	       n->sw->mft[(size_t)(mlid - 0xc000) * positions + p / 16] >> (p % 16) & 1;
}

/* Flood a packet from CA port @from as the switches forward it (out of
 * every MFT port but the one it came in by); count arrivals at each CA
 * port in @hits and fail if a switch sees it twice (a loop). */
static void flood(struct fabric *f, struct port *from, uint16_t mlid, GHashTable *hits)
{
	GQueue q = G_QUEUE_INIT;
	GHashTable *seen = g_hash_table_new(NULL, NULL);

	g_queue_push_tail(&q, from->remote);
	while (!g_queue_is_empty(&q)) {
		struct port *in = g_queue_pop_head(&q);
		struct node *n = in->node;
		unsigned o;

		if (!node_is_switch(n)) {
			g_hash_table_insert(hits, in, GUINT_TO_POINTER(
				GPOINTER_TO_UINT(g_hash_table_lookup(hits, in)) + 1));
			continue;
		}
		assert_false(g_hash_table_contains(seen, n));
		g_hash_table_add(seen, n);
		for (o = 1; o <= n->nports; o++)
			if (&n->ports[o] != in && n->ports[o].remote && mft_has(n, mlid, o))
				g_queue_push_tail(&q, n->ports[o].remote);
	}
	g_hash_table_destroy(seen);
}

static void test_join_tree(void **state)
{
	struct env *e = *state;
	uint8_t rec[IB_SA_DATA_SIZE], mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff };
	struct mad_pkt *a;
	uint16_t mlid = 0;
	unsigned k, j, i;

	mgid[15] = 7;
	for (k = 0; k < NMEMBERS; k++) {
		mcr(e, k, rec, mgid);
		a = ask(e, k, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC,
			MCR_MGID | MCR_PORT_GID | MCR_QKEY | MCR_PKEY | MCR_JOIN_STATE | MCR_TCLASS |
			MCR_FLOW_LABEL | MCR_SL, rec,
			IB_SA_DATA_SIZE);
		assert_int_equal(mad_status(a->mad), 0);
		assert_int_equal(mad_method(a->mad), UMAD_METHOD_GET_RESP);
		if (!k)
			mlid = (uint16_t)mad_get_field(a->mad + SA_HDR_LEN, 0, IB_SA_MCM_MLID_F);
		assert_int_equal(mad_get_field(a->mad + SA_HDR_LEN, 0, IB_SA_MCM_MLID_F), mlid);
		assert_int_equal(mad_get_field(a->mad + SA_HDR_LEN, 0, IB_SA_MCM_QKEY_F), 0x1234);
	}
	assert_int_equal(mlid, 0xc000);
	for (k = 0; k < NMEMBERS; k++) {
		GHashTable *hits = g_hash_table_new(NULL, NULL);

		flood(e->f, e->hosts[k], mlid, hits);
		for (j = 0; j < NMEMBERS; j++)
			if (j != k)
				assert_int_equal(GPOINTER_TO_UINT(g_hash_table_lookup(hits,
									e->hosts[j])), 1);
		g_hash_table_destroy(hits);
	}
	/* Another Q_Key for the same MGID: refused. */
	mcr(e, 0, rec, mgid);
	mad_set_field(rec, 0, IB_SA_MCM_QKEY_F, 0x9999);
	a = ask(e, 0, UMAD_METHOD_SET, UMAD_SA_ATTR_MCMEMBER_REC,
		MCR_MGID | MCR_PORT_GID | MCR_QKEY | MCR_JOIN_STATE, rec, IB_SA_DATA_SIZE);
	assert_int_equal(mad_status(a->mad), UMAD_SA_STATUS_REQ_INVALID << 8);
	/* Every member leaves: the group and every MFT bit of it go. */
	for (k = 0; k < NMEMBERS; k++) {
		mcr(e, k, rec, mgid);
		a = ask(e, k, UMAD_SA_METHOD_DELETE, UMAD_SA_ATTR_MCMEMBER_REC,
			MCR_MGID | MCR_PORT_GID | MCR_JOIN_STATE, rec, IB_SA_DATA_SIZE);
		assert_int_equal(mad_status(a->mad), 0);
		assert_int_equal(mad_method(a->mad), UMAD_SA_METHOD_DELETE_RESP);
	}
	for (i = 0; i < e->f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(e->f->nodes, i);

		for (j = 1; node_is_switch(n) && j <= n->nports; j++)
			assert_false(mft_has(n, mlid, j));
	}
	memset(rec, 0, sizeof(rec));
	a = ask(e, 0, UMAD_SA_METHOD_GET_TABLE, UMAD_SA_ATTR_MCMEMBER_REC, 0, rec, sizeof(rec));
	assert_int_equal(mad_status(a->mad), 0);
	assert_non_null(a->rmpp);
	assert_int_equal(g_bytes_get_size(a->rmpp), SA_HDR_LEN);	/* no group */
}

/* The RoCE networks' groups (fabric/mcast.c), on the same fat tree made
 * an Ethernet network: no SA, a QP attached at a port makes it a member;
 * a flood from any member, and from a port that is none (a sender that
 * only sends), reaches every member once, no switch twice; two QPs at one
 * port count twice; the last leave clears every bit. */
static void test_roce_tree(void **state)
{
	struct env *e = *state;
	const uint8_t mgid[16] = { [10] = 0xff, [11] = 0xff, 224, 1, 2, 3 };
	struct port *outsider = e->sm;
	GError *err = NULL;
	uint16_t mlid;
	unsigned k, j, i;

	fabric_set_roce(e->f);
	assert_true(fabric_roce_networks(e->f, &err));
	assert_true(fabric_gid_is_mcast(mgid));
	assert_int_equal(fabric_roce_mcast_mlid(e->f, outsider, mgid), 0);
	for (k = 0; k < NMEMBERS; k++)
		assert_int_equal(fabric_roce_mcast_join(e->f, e->hosts[k], mgid), 0);
	assert_int_equal(fabric_roce_mcast_join(e->f, e->hosts[0], mgid), 0);	/* a 2nd QP */
	mlid = fabric_roce_mcast_mlid(e->f, outsider, mgid);
	assert_true(mlid >= FABRIC_MLID_FIRST);
	for (k = 0; k <= NMEMBERS; k++) {
		GHashTable *hits = g_hash_table_new(NULL, NULL);

		flood(e->f, k < NMEMBERS ? e->hosts[k] : outsider, mlid, hits);
		for (j = 0; j < NMEMBERS; j++)
			if (j != k)
				assert_int_equal(GPOINTER_TO_UINT(g_hash_table_lookup(hits,
									e->hosts[j])), 1);
		assert_null(g_hash_table_lookup(hits, outsider));	/* not a member */
		g_hash_table_destroy(hits);
	}
	for (k = 0; k < NMEMBERS; k++)
		fabric_roce_mcast_leave(e->f, e->hosts[k], mgid);
	assert_int_equal(fabric_roce_mcast_mlid(e->f, outsider, mgid), mlid);	/* host 0's 2nd QP */
	fabric_roce_mcast_leave(e->f, e->hosts[0], mgid);
	assert_int_equal(fabric_roce_mcast_mlid(e->f, outsider, mgid), 0);
	for (i = 0; i < e->f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(e->f->nodes, i);

		for (j = 1; node_is_switch(n) && j <= n->nports; j++)
			assert_false(mft_has(n, mlid, j));
	}
}

/* GetTable(NodeRecord): every end port's record, 108 bytes each on 112. */
static void test_get_table(void **state)
{
	struct env *e = *state;
	uint8_t rec[IB_SA_DATA_SIZE] = { 0 };
	struct mad_pkt *a = ask(e, 1, UMAD_SA_METHOD_GET_TABLE, UMAD_SA_ATTR_NODE_REC, 0, rec,
				sizeof(rec));
	/* A record a node: a switch's port 0, a CA's one port. */
	unsigned ends = e->f->nodes->len;
	const uint8_t *m;
	gsize len;

	assert_int_equal(mad_method(a->mad), UMAD_SA_METHOD_GET_TABLE_RESP);
	assert_non_null(a->rmpp);
	m = g_bytes_get_data(a->rmpp, &len);
	assert_int_equal(len, SA_HDR_LEN + ends * 112);
	assert_int_equal(get_be16(m, 44), 112 / 8);	/* AttributeOffset */
	assert_true(m[24 + 2] & 0x01);			/* RMPP flags: Active */
	/* The records are the SMA's: the last one's NodeInfo is a CA's. */
	assert_int_equal(mad_get_field((void *)(m + SA_HDR_LEN + (ends - 1) * 112), 4,
				       IB_NODE_TYPE_F), NODE_CA);
}

/* PortInfoRecord by CapabilityMask: every bit asked must be set. */
static void test_capmask(void **state)
{
	struct env *e = *state;
	uint8_t rec[IB_SA_DATA_SIZE] = { 0 };
	struct mad_pkt *a;

	port_set_cap_bits(e->hosts[2], CAP_IS_SM, 0);
	mad_set_field(rec, 4, IB_PORT_CAPMASK_F, CAP_IS_SM);
	a = ask(e, 0, UMAD_METHOD_GET, UMAD_SA_ATTR_PORT_INFO_REC, 1ull << 7, rec, sizeof(rec));
	assert_int_equal(mad_status(a->mad), 0);
	assert_int_equal(mad_get_field(a->mad + SA_HDR_LEN, 0, IB_SA_NR_LID_F), e->hosts[2]->lid);
	port_set_cap_bits(e->hosts[2], 0, CAP_IS_SM);
	a = ask(e, 0, UMAD_METHOD_GET, UMAD_SA_ATTR_PORT_INFO_REC, 1ull << 7, rec, sizeof(rec));
	assert_int_equal(mad_status(a->mad), UMAD_SA_STATUS_NO_RECORDS << 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_join_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roce_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capmask, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
