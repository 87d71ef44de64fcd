/* SPDX-License-Identifier: MIT */
/*
 * The SMA and the packet engine, through fabric_send() from host1 port 1 of
 * the default fabric: attributes, statuses, Set rules, LID routing, M_Key.
 */
#include "config.h"

#include <infiniband/mad.h>

#include "fabric/configure.h"
#include "fabric/port.h"
#include "testfab.h"

struct env {
	struct fabric *f;
	struct capture cap;
	struct port *host;
	struct timerq *tq;	/* when a test gives the fabric one */
};

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = topo_load_default(0);
	e->host = &fabric_find(e->f, "host1")->ports[1];
	capture_attach(&e->cap, e->host);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	g_array_free(e->cap.pkts, TRUE);
	fabric_free(e->f);	/* cancels its timers: before the queue goes */
	timerq_free(e->tq);
	g_free(e);
	return 0;
}

/* Send @p and return the one response (fails if there is not exactly one). */
static struct mad_pkt *ask(struct env *e, struct mad_pkt p)
{
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 1);
	return captured(&e->cap, 0);
}

static uint16_t status15(const struct mad_pkt *r)
{
	return mad_status(r->mad) & 0x7fff;
}

static void test_local_nodeinfo(void **state)
{
	struct env *e = *state;
	struct mad_pkt *r = ask(e, dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 0, NULL));

	assert_int_equal(mad_method(r->mad), 0x81);
	assert_true(dr_d_bit(r->mad));
	assert_int_equal(status15(r), 0);
	assert_int_equal(r->slid, 0xffff);	/* a local completion */
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_NODE_TYPE_F), 1);
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_NODE_LOCAL_PORT_F), 1);
	assert_int_equal(mad_get_field64(smp_data(r->mad), 0, IB_NODE_PORT_GUID_F),
			 0x0002c90300000101ULL);
}

static void test_remote_nodedesc(void **state)
{
	static const uint8_t path[] = { 1, 7, 2 };
	struct env *e = *state;
	struct mad_pkt *r = ask(e, dr_smp(1, UMAD_SM_ATTR_NODE_DESC, 0, 3, path));

	assert_string_equal((char *)smp_data(r->mad), "host4 HCA-1");
	assert_int_equal(dr_hop_ptr(r->mad), 0);
	assert_int_equal(dr_return_path(r->mad)[3], 1);
}

static void test_statuses(void **state)
{
	static const uint8_t to_leaf1[] = { 1 };
	struct env *e = *state;
	struct mad_pkt p;

	/* An attribute nobody implements: 0x000C. */
	assert_int_equal(status15(ask(e, dr_smp(1, 0xff00, 0, 0, NULL))), 0x000c);
	/* SwitchInfo and LFT exist on switches only. */
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_SWITCH_INFO, 0, 0, NULL))), 0x000c);
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_SWITCH_INFO, 0, 1, to_leaf1))), 0);
	/* Bad modifiers: 0x001C. */
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, 9, 0, NULL))), 0x001c);
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_LINEAR_FT, 768, 1, to_leaf1))), 0x001c);
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_PKEY_TABLE, 2, 0, NULL))), 0x001c);
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_VL_ARB_TABLE, 5 << 16, 0, NULL))), 0x001c);
	/* NodeInfo cannot be Set. */
	assert_int_equal(status15(ask(e, dr_smp(2, UMAD_SM_ATTR_NODE_INFO, 0, 0, NULL))), 0x000c);
	/* A class version the SMA does not speak: 0x0004. */
	p = dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 0, NULL);
	p.mad[2] = 2;
	assert_int_equal(status15(ask(e, p)), 0x0004);
	/* SMInfo is not the SMA's: with no SM agent the kernel says 0x000C. */
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_SM_INFO, 0, 1, to_leaf1))), 0x000c);
	/* PortInfoExtended is refused; MlnxExtPortInfo is answered. */
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO_EXT, 1, 0, NULL))), 0x000c);
	assert_int_equal(status15(ask(e, dr_smp(1, UMAD_SM_ATTR_MLNX_EXT_PORT_INFO, 1, 0, NULL))), 0);
}

static struct mad_pkt portinfo_set(struct env *e, unsigned nhops, const uint8_t *path,
				   unsigned port, unsigned field, unsigned value)
{
	struct mad_pkt *r = ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, port, nhops, path));
	struct mad_pkt p = dr_smp(2, UMAD_SM_ATTR_PORT_INFO, port, nhops, path);

	memcpy(smp_data(p.mad), smp_data(r->mad), 64);
	/* A Get returns the current state; Set means "no change" by 0. */
	mad_set_field(smp_data(p.mad), 0, IB_PORT_STATE_F, 0);
	mad_set_field(smp_data(p.mad), 0, IB_PORT_PHYS_STATE_F, 0);
	mad_set_field(smp_data(p.mad), 0, field, value);
	return p;
}

static void test_portinfo_set(void **state)
{
	static const uint8_t to_leaf1[] = { 1 };
	struct env *e = *state;
	struct node *leaf1 = fabric_find(e->f, "leaf1");
	struct mad_pkt *r;

	/* Init -> Active is not a transition: rejected, nothing changes. */
	r = ask(e, portinfo_set(e, 1, to_leaf1, 2, IB_PORT_STATE_F, PORT_ACTIVE));
	assert_int_equal(status15(r), 0x001c);
	assert_int_equal(leaf1->ports[2].state, PORT_INIT);
	/* Init -> Armed -> Active is. */
	r = ask(e, portinfo_set(e, 1, to_leaf1, 2, IB_PORT_STATE_F, PORT_ARMED));
	assert_int_equal(status15(r), 0);
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_PORT_STATE_F), PORT_ARMED);
	r = ask(e, portinfo_set(e, 1, to_leaf1, 2, IB_PORT_STATE_F, PORT_ACTIVE));
	assert_int_equal(leaf1->ports[2].state, PORT_ACTIVE);
	/* Down retrains the cable: both ends come back in Init. */
	ask(e, portinfo_set(e, 1, to_leaf1, 2, IB_PORT_STATE_F, PORT_DOWN));
	assert_int_equal(leaf1->ports[2].state, PORT_INIT);
	assert_int_equal(leaf1->ports[2].remote->state, PORT_INIT);
	/* A switch's LID lives on port 0 and shows on every port. */
	ask(e, portinfo_set(e, 1, to_leaf1, 0, IB_PORT_LID_F, 0x42));
	assert_int_equal(leaf1->ports[0].lid, 0x42);
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, 5, 1, to_leaf1));
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_PORT_LID_F), 0x42);
	/* Disabling the peer's port takes ours down. */
	ask(e, portinfo_set(e, 1, to_leaf1, 7, IB_PORT_PHYS_STATE_F, PHYS_DISABLED));
	assert_int_equal(leaf1->ports[7].phys_state, PHYS_DISABLED);
	assert_int_equal(leaf1->ports[7].remote->phys_state, PHYS_POLLING);
	assert_int_equal(leaf1->ports[7].remote->state, PORT_DOWN);
}

/*
 * PortInfo's modifier on an EDR link (IBA 14.2.5.6): bit 31 is
 * SMSupportsExtendedSpeeds, not part of the port number; bits 8-30 are
 * ignored; LinkSpeedExtEnabled is applied only with bit 31 (30 disables,
 * 31 means "as supported", a bit the port lacks is invalid).
 */
static void test_portinfo_ext_speeds(void **state)
{
	static const uint8_t to_sw[] = { 1 };
	struct env *e = *state;
	struct node *sw;
	struct mad_pkt p, *r;

	fabric_free(e->f);
	e->f = load("speed=EDR\nSwitch 4 \"sw\"\n[1] \"h\"[1]\n\nCa 1 \"h\"\n[1] \"sw\"[1]\n");
	e->host = &fabric_find(e->f, "h")->ports[1];
	g_array_free(e->cap.pkts, TRUE);
	capture_attach(&e->cap, e->host);
	sw = fabric_find(e->f, "sw");
	assert_int_equal(sw->ports[1].espeed_supported, ESPEED_FDR | ESPEED_EDR);

	/* A Get with bit 31 (and reserved bits) names port 1. */
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, 0x80000001, 1, to_sw));
	assert_int_equal(status15(r), 0);
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F), ESPEED_EDR);
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, 0x7fffff01, 1, to_sw));
	assert_int_equal(status15(r), 0);
	/* The port number is still checked. */
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_PORT_INFO, 0x80000005, 1, to_sw));
	assert_int_equal(status15(r), 0x001c);

	/* Without bit 31 the field is ignored. */
	p = portinfo_set(e, 1, to_sw, 1, IB_PORT_LINK_SPEED_EXT_ENABLED_F, ESPEED_FDR);
	assert_int_equal(status15(ask(e, p)), 0);
	assert_int_equal(sw->ports[1].espeed_enabled, ESPEED_FDR | ESPEED_EDR);
	/* With it, a Set applies, 30 disables, 31 restores. */
	p = portinfo_set(e, 1, to_sw, 1, IB_PORT_LINK_SPEED_EXT_ENABLED_F, ESPEED_FDR);
	p.mad[20] |= 0x80;
	assert_int_equal(status15(ask(e, p)), 0);
	assert_int_equal(sw->ports[1].espeed_enabled, ESPEED_FDR);
	p = portinfo_set(e, 1, to_sw, 1, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 30);
	p.mad[20] |= 0x80;
	assert_int_equal(status15(ask(e, p)), 0);
	assert_int_equal(sw->ports[1].espeed_enabled, 0);
	p = portinfo_set(e, 1, to_sw, 1, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 31);
	p.mad[20] |= 0x80;
	r = ask(e, p);
	assert_int_equal(status15(r), 0);
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F),
			 ESPEED_FDR | ESPEED_EDR);
	/* HDR is not supported here: invalid, nothing changes. */
	p = portinfo_set(e, 1, to_sw, 1, IB_PORT_LINK_SPEED_EXT_ENABLED_F, ESPEED_HDR);
	p.mad[20] |= 0x80;
	assert_int_equal(status15(ask(e, p)), 0x001c);
	assert_int_equal(sw->ports[1].espeed_enabled, ESPEED_FDR | ESPEED_EDR);
}

static void test_tables(void **state)
{
	static const uint8_t to_leaf1[] = { 1 };
	struct env *e = *state;
	struct mad_pkt p = dr_smp(2, UMAD_SM_ATTR_LINEAR_FT, 1, 1, to_leaf1);
	struct mad_pkt *r;
	unsigned i;

	for (i = 0; i < 64; i++)
		smp_data(p.mad)[i] = (uint8_t)(i % 9);
	assert_int_equal(status15(ask(e, p)), 0);
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_LINEAR_FT, 1, 1, to_leaf1));
	assert_memory_equal(smp_data(r->mad), smp_data(p.mad), 64);
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_LINEAR_FT, 2, 1, to_leaf1));
	assert_int_equal(smp_data(r->mad)[0], 0xff);	/* unset: no route */

	p = dr_smp(2, UMAD_SM_ATTR_MCAST_FT, 3, 1, to_leaf1);
	smp_data(p.mad)[2] = 0x01;
	smp_data(p.mad)[3] = 0x82;
	ask(e, p);
	r = ask(e, dr_smp(1, UMAD_SM_ATTR_MCAST_FT, 3, 1, to_leaf1));
	assert_int_equal(smp_data(r->mad)[2], 0x01);
	assert_int_equal(smp_data(r->mad)[3], 0x82);

	p = dr_smp(2, UMAD_SM_ATTR_PKEY_TABLE, 0, 0, NULL);
	smp_data(p.mad)[0] = 0xff;
	smp_data(p.mad)[1] = 0xff;
	smp_data(p.mad)[2] = 0x80;
	smp_data(p.mad)[3] = 0x01;
	ask(e, p);
	assert_int_equal(e->host->pkeys[1], 0x8001);

	p = dr_smp(2, UMAD_SM_ATTR_GUID_INFO, 0, 0, NULL);
	memset(smp_data(p.mad), 0x11, 16);
	r = ask(e, p);
	/* GUID 0 is the port GUID and stays; GUID 1 takes the new value. */
	assert_int_equal(e->host->guid, 0x0002c90300000101ULL);
	assert_int_equal(e->host->alias_guids[0], 0x1111111111111111ULL);
}

static void test_lid_routed(void **state)
{
	struct env *e = *state;
	struct mad_pkt *r;

	fabric_configure(e->f, e->host);
	/* host3 got LID 6; leaf2 is 2 (see default.net order). */
	r = ask(e, lid_smp(1, UMAD_SM_ATTR_NODE_DESC, 0, e->host->lid, 6));
	assert_string_equal((char *)smp_data(r->mad), "host3 HCA-1");
	assert_int_equal(r->slid, 6);
	r = ask(e, lid_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, e->host->lid, 2));
	assert_int_equal(mad_get_field(smp_data(r->mad), 0, IB_NODE_TYPE_F), 2);
	/* LID-routed to ourselves: HCA loopback. */
	r = ask(e, lid_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, e->host->lid, e->host->lid));
	assert_int_equal(r->slid, e->host->lid);
}

/* GMPs with a P_Key the receiver does not hold are dropped and counted. */
static void test_pkey_check(void **state)
{
	struct env *e = *state;
	struct port *host3 = &fabric_find(e->f, "host3")->ports[1];
	struct mad_pkt p = lid_smp(1, 0x12 /* PortCounters */, 0, 0, 0);
	uint64_t dropped;

	fabric_configure(e->f, e->host);
	p.mad[1] = UMAD_CLASS_PERF_MGMT;
	p.slid = e->host->lid;
	p.dlid = host3->lid;
	p.sqp = p.dqp = 1;
	p.pkey = 0xffff;
	assert_int_equal(status15(ask(e, p)), 0);	/* the default P_Key passes */
	p.pkey = 0x8001;
	dropped = e->f->dropped;
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 0);
	assert_int_equal(e->f->dropped, dropped + 1);
	assert_int_equal(host3->pkey_violations, 1);
	/* Two limited members cannot talk; a full member may talk to one.
	 * (The answer carries the same P_Key back: host1 must hold it too.) */
	host3->pkeys[1] = 0x0001;
	e->host->pkeys[1] = 0x8001;
	assert_int_equal(status15(ask(e, p)), 0);	/* 0x8001 to 0x0001 */
	p.pkey = 0x0001;
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 0);
	assert_int_equal(host3->pkey_violations, 2);
}

static void test_dead_end_and_mkey(void **state)
{
	static const uint8_t dead[] = { 1, 3 };
	struct env *e = *state;
	struct mad_pkt p = dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 2, dead);
	uint64_t dropped = e->f->dropped;

	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 0);
	assert_int_equal(e->f->dropped, dropped + 1);

	/* M_Key with protect bits 2: a wrong key is dropped and counted. */
	e->host->mkey = 0xabc;
	e->host->mkey_protect = 2;
	p = dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 0, NULL);
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 0);
	assert_int_equal(e->host->mkey_violations, 1);
	p.mad[31] = 0xbc;
	p.mad[30] = 0x0a;
	assert_int_equal(status15(ask(e, p)), 0);
}

/*
 * A wrong M_Key makes the port raise Trap 256 to its SM (here host1 itself,
 * the SM LID --configured gives) and starts the lease: when it runs out with
 * no SMP bearing the key, protection goes (IBA 14.2.4.2); the right key
 * stops it.
 */
static void test_mkey_lease_and_trap(void **state)
{
	struct env *e = *state;
	struct test_clock clock = { .now_us = 1 };
	struct mad_pkt p = dr_smp(1, UMAD_SM_ATTR_NODE_INFO, 0, 0, NULL);
	struct mad_pkt *trap;
	uint8_t *d;

	e->f->tq = e->tq = timerq_new(test_clock_now, &clock);
	fabric_configure(e->f, e->host);
	e->host->mkey = 0x1122334455667788ull;
	e->host->mkey_protect = 2;
	e->host->mkey_lease = 2;
	p.mad[24] = 0xee;	/* a wrong key */
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	assert_int_equal(e->cap.pkts->len, 1);	/* no answer, the trap */
	trap = captured(&e->cap, 0);
	assert_int_equal(mad_method(trap->mad), UMAD_METHOD_TRAP);
	assert_int_equal(mad_attr_id(trap->mad), UMAD_ATTR_NOTICE);
	d = smp_data(trap->mad);
	assert_int_equal(mad_get_field(d, 0, IB_NOTICE_TRAP_NUMBER_F), 256);
	assert_int_equal(mad_get_field(d, 0, IB_NOTICE_TYPE_F), 2);	/* security */
	assert_int_equal(mad_get_field(d, 0, IB_NOTICE_ISSUER_LID_F), e->host->lid);
	assert_int_equal(d[10 + 6], 1);				/* Method: Get */
	assert_int_equal(d[10 + 9], UMAD_SM_ATTR_NODE_INFO);	/* AttributeID */
	assert_int_equal(d[10 + 14], 0xee);			/* the key given */
	assert_int_equal(d[10 + 22], 0x80);			/* DR, 0 hops */
	assert_int_equal(e->host->mkey_violations, 1);

	/* 1.9 s: still protected; 2.1 s: the lease has run out. */
	clock.now_us += 1900000;
	timerq_run(e->f->tq);
	assert_int_equal(e->host->mkey_protect, 2);
	clock.now_us += 200000;
	timerq_run(e->f->tq);
	assert_int_equal(e->host->mkey_protect, 0);
	p.mad[24] = 0;
	assert_int_equal(status15(ask(e, p)), 0);	/* a Get without the key */

	/* The right key while the lease runs stops it. */
	e->host->mkey_protect = 2;
	p.mad[24] = 0xee;
	g_array_set_size(e->cap.pkts, 0);
	fabric_send(e->f, e->host, &p);
	memcpy(p.mad + 24, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	assert_int_equal(status15(ask(e, p)), 0);
	clock.now_us += 5000000;
	timerq_run(e->f->tq);
	assert_int_equal(e->host->mkey_protect, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_local_nodeinfo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_nodedesc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_statuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_portinfo_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_portinfo_ext_speeds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lid_routed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pkey_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_end_and_mkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkey_lease_and_trap, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
