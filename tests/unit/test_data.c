/* SPDX-License-Identifier: MIT */
/*
 * Data packets at the packet engine (docs/verbs.md "Data path"): from host1
 * port 1 of the configured default fabric to host3 (leaf1, leaf2): routed
 * and counted by their wire size, refused by the destination's P_Key table
 * and by a port that is not Active, and which fault rules act on them.
 */
#include "config.h"

#include "abi/verbs_wire.h"
#include "fabric/configure.h"
#include "fabric/pma.h"
#include "fabric/port.h"
#include "testfab.h"

struct env {
	struct fabric *f;
	struct port *from, *to;
	unsigned got;
	struct verbs_wire_pkt last;
};

static enum upper_verdict sink(void *ctx, struct port *p, const struct mad_pkt *pkt)
{
	struct env *e = ctx;

	assert_ptr_equal(p, e->to);
	memcpy(&e->last, g_bytes_get_data(pkt->data, NULL), sizeof(e->last));
	e->got++;
	return UPPER_TAKEN;
}

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = topo_load_default(0);
	assert_true(fabric_configure(e->f, NULL) > 0);
	e->from = &fabric_find(e->f, "host1")->ports[1];
	e->to = &fabric_find(e->f, "host3")->ports[1];
	port_attach(e->to, &(struct port_upper){ .data = sink, .ctx = e });
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	fabric_free(e->f);
	g_free(e);
	return 0;
}

/* A SEND_ONLY of @len bytes from host1 to host3 with BTH P_Key @pkey. */
static void send_data(struct env *e, unsigned len, uint16_t pkey)
{
	size_t size = sizeof(struct verbs_wire_pkt) + len;
	struct verbs_wire_pkt *w = g_malloc0(size);
	struct mad_pkt p = { 0 };

	w->rec.type = VERBS_REC_PKT;
	w->rec.len = (uint32_t)size;
	w->opcode = OP_RC_SEND_ONLY;
	w->slid = p.slid = e->from->lid;
	w->dlid = p.dlid = e->to->lid;
	w->pkey = p.pkey = pkey;
	w->sqpn = p.sqp = 0x40;
	w->dqpn = p.dqp = 0x41;
	w->len = len;
	p.data = g_bytes_new_take(w, size);
	fabric_send(e->f, e->from, &p);
	g_bytes_unref(p.data);
}

static void test_delivered_and_counted(void **state)
{
	struct env *e = *state;
	struct port *last_hop = &fabric_find(e->f, "leaf2")->ports[1];
	uint64_t words = last_hop->counters.xmit_data, pkts = last_hop->counters.xmit_pkts;

	send_data(e, 1024, PKEY_DEFAULT);
	assert_int_equal(e->got, 1);
	assert_int_equal(e->last.dqpn, 0x41);
	assert_int_equal(e->last.len, 1024);
	/* LRH 8 + BTH 12 + 1024 + ICRC 4 + VCRC 2 = 1050 bytes: 263 words. */
	assert_int_equal(last_hop->counters.xmit_data - words, 263);
	assert_int_equal(last_hop->counters.xmit_pkts - pkts, 1);
	assert_int_equal(e->to->counters.rcv_pkts, 1);
}

static void test_pkey_refused(void **state)
{
	struct env *e = *state;

	send_data(e, 8, 0x8005);
	assert_int_equal(e->got, 0);
	assert_int_equal(e->to->pkey_violations, 1);
}

static void test_port_not_active(void **state)
{
	struct env *e = *state;

	/* Non-SMPs need Active (IBA 7.2; an Armed receiver takes them). */
	port_set_state(e->to, PORT_INIT);
	send_data(e, 8, PKEY_DEFAULT);
	assert_int_equal(e->got, 0);
}

/* One packet under a rule of @a for @mgmt_class at leaf2: whether it
 * arrived; the rule's hits in *@hits. */
static bool under_rule(struct env *e, enum fault_action a, int mgmt_class, unsigned *hits)
{
	struct fault_rule *r = g_new(struct fault_rule, 1);
	unsigned got = e->got;

	fault_rule_defaults(r);
	r->action = a;
	r->mgmt_class = mgmt_class;
	r->node = fabric_find(e->f, "leaf2");
	fault_add(&e->f->faults, r);
	send_data(e, 8, PKEY_DEFAULT);
	*hits = r->hits;
	fault_del(&e->f->faults, r->id);
	return e->got > got;
}

static void test_rules(void **state)
{
	struct env *e = *state;
	struct node *leaf2 = fabric_find(e->f, "leaf2");
	unsigned hits;

	/* A MAD rule does not touch data; --class data and a rule naming
	 * no class do. */
	assert_true(under_rule(e, FAULT_DROP, UMAD_CLASS_SUBN_LID_ROUTED, &hits));
	assert_int_equal(hits, 0);
	assert_false(under_rule(e, FAULT_DROP, FAULT_CLASS_DATA, &hits));
	assert_int_equal(hits, 1);
	assert_false(under_rule(e, FAULT_DROP, FAULT_ANY, &hits));
	assert_int_equal(hits, 1);
	/* Corrupt: a bad ICRC where it arrives, counted in PortRcvErrors
	 * (from leaf1 on port 7 or 8, whichever the LFT chose). */
	assert_false(under_rule(e, FAULT_CORRUPT, FAULT_CLASS_DATA, &hits));
	assert_int_equal(hits, 1);
	assert_int_equal(leaf2->ports[7].counters.rcv_err + leaf2->ports[8].counters.rcv_err, 1);
}

/*
 * The direct path's view of the engine (fabric_data_path): the way it
 * names is the one fabric_send() takes (every port it names counts the
 * packet it sends), and it refuses what the engine would drop.
 */
static void test_data_path(void **state)
{
	struct env *e = *state;
	struct port *hops[8], *dest = NULL;
	uint64_t before[8];
	unsigned n = 0, i;

	assert_null(fabric_data_path(e->from, e->to->lid, PKEY_DEFAULT, hops, 8, &n, &dest));
	assert_ptr_equal(dest, e->to);
	assert_int_equal(n, 3);		/* host1/1, leaf1 to leaf2, leaf2/1 */
	assert_ptr_equal(hops[0], e->from);
	assert_ptr_equal(hops[2], &fabric_find(e->f, "leaf2")->ports[1]);
	for (i = 0; i < n; i++)
		before[i] = hops[i]->counters.xmit_pkts;
	send_data(e, 8, PKEY_DEFAULT);
	assert_int_equal(e->got, 1);
	for (i = 0; i < n; i++)
		assert_int_equal(hops[i]->counters.xmit_pkts, before[i] + 1);
	/* What the engine would drop. */
	assert_string_equal(fabric_data_path(e->from, e->to->lid, 0x8005, hops, 8, &n, &dest),
			    "P_Key not in the port's table");
	assert_string_equal(fabric_data_path(e->from, 0x500, PKEY_DEFAULT, hops, 8, &n, &dest),
			    "no LFT entry");
	assert_string_equal(fabric_data_path(e->from, e->to->lid, PKEY_DEFAULT, hops, 2, &n,
					     &dest), "hop limit");
	port_set_state(e->to, PORT_INIT);
	assert_string_equal(fabric_data_path(e->from, e->to->lid, PKEY_DEFAULT, hops, 8, &n,
					     &dest), "port not active");
}

static unsigned revoked, synced;
static void on_revoke(void *ctx) { (void)ctx; revoked++; }
static void on_sync(void *ctx) { (void)ctx; synced++; }
static void on_free(void *ctx) { (void)ctx; }

/* The direct path hears of a port's change before it takes effect, and is
 * asked for its counts before the PMA's are read; a rule makes the
 * fabric not quiet. */
static void test_shortcut_hooks(void **state)
{
	struct env *e = *state;
	struct fault_rule *r = g_new(struct fault_rule, 1);
	uint64_t v;

	static const struct fabric_verbs_ops ops = { on_revoke, on_sync, on_free };
	static int net;

	e->f->verbs = &net;
	e->f->verbs_ops = &ops;
	revoked = synced = 0;
	assert_true(fabric_quiet(e->f));
	port_set_state(e->to, PORT_INIT);
	assert_true(revoked >= 1);
	assert_true(pma_query(e->to, 0x0012, IB_PC_EXT_XMT_BYTES_F, &v));
	assert_int_equal(synced, 1);
	fault_rule_defaults(r);
	fault_add(&e->f->faults, r);
	assert_false(fabric_quiet(e->f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_delivered_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkey_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_not_active, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_data_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shortcut_hooks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
