/* SPDX-License-Identifier: MIT */
/* Directed-route rules (IBA C14-9, C14-13), driven on raw SMP bytes. */
#include "config.h"

#include "fabric/smi.h"
#include "testfab.h"

static void test_source(void **state)
{
	static const uint8_t path[] = { 1, 7 };
	struct mad_pkt p = dr_smp(1, 0x11, 0, 2, path);
	unsigned out = 0;

	(void)state;
	/* C14-9:1: the first hop leaves by the sending port. */
	assert_int_equal(smi_send_request(p.mad, false, 1, 2, &out), SMI_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(dr_hop_ptr(p.mad), 1);
	p = dr_smp(1, 0x11, 0, 2, path);
	assert_int_equal(smi_send_request(p.mad, false, 2, 2, &out), SMI_DISCARD);
	/* hop count 0: for the local SMA. */
	p = dr_smp(1, 0x11, 0, 0, NULL);
	assert_int_equal(smi_send_request(p.mad, false, 1, 2, &out), SMI_LOCAL);
	assert_int_equal(dr_hop_ptr(p.mad), 1);
	/* 64 hops and more are never valid. */
	p = dr_smp(1, 0x11, 0, 0, NULL);
	p.mad[7] = 64;
	assert_int_equal(smi_send_request(p.mad, false, 1, 2, &out), SMI_DISCARD);
}

static void test_walk_out_and_back(void **state)
{
	/* CA port 1 -> switch A (in 1, out 7) -> switch B (in 7, out 2) -> CA. */
	static const uint8_t path[] = { 1, 7, 2 };
	struct mad_pkt p = dr_smp(1, 0x11, 0, 3, path);
	unsigned out = 0;

	(void)state;
	assert_int_equal(smi_send_request(p.mad, false, 1, 1, &out), SMI_FORWARD);
	assert_int_equal(smi_recv(p.mad, true, 1, 8, &out), SMI_FORWARD);	/* C14-9:2 */
	assert_int_equal(out, 7);
	assert_int_equal(dr_return_path(p.mad)[1], 1);
	assert_int_equal(smi_recv(p.mad, true, 7, 8, &out), SMI_FORWARD);
	assert_int_equal(out, 2);
	assert_int_equal(dr_return_path(p.mad)[2], 7);
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);	/* C14-9:3 */
	assert_int_equal(dr_hop_ptr(p.mad), 4);
	assert_int_equal(dr_return_path(p.mad)[3], 1);

	/* The responder sends it back the way it came (C14-13). */
	p.mad[3] = 0x81;
	assert_int_equal(smi_send_response(p.mad, false, 1, 1, false, &out), SMI_FORWARD);
	assert_true(dr_d_bit(p.mad));
	assert_int_equal(out, 1);
	assert_int_equal(smi_recv(p.mad, true, 2, 8, &out), SMI_FORWARD);
	assert_int_equal(out, 7);
	assert_int_equal(smi_recv(p.mad, true, 7, 8, &out), SMI_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);
	assert_int_equal(dr_hop_ptr(p.mad), 0);
}

static void test_discards(void **state)
{
	static const uint8_t path[] = { 1, 9, 1 };
	struct mad_pkt p = dr_smp(1, 0x11, 0, 3, path);
	unsigned out = 0;

	(void)state;
	smi_send_request(p.mad, false, 1, 1, &out);
	/* A CA is never an intermediate hop. */
	struct mad_pkt q = p;
	assert_int_equal(smi_recv(q.mad, false, 1, 2, &out), SMI_DISCARD);
	/* A next port beyond the switch's ports. */
	assert_int_equal(smi_recv(p.mad, true, 1, 8, &out), SMI_DISCARD);
	/* C14-9:1: hop_ptr 0 arriving at a CA. */
	p = dr_smp(1, 0x11, 0, 2, path);
	assert_int_equal(smi_recv(p.mad, false, 1, 2, &out), SMI_DISCARD);
	/* Unreasonable hop pointer (C14-9:5). */
	p = dr_smp(1, 0x11, 0, 1, path);
	p.mad[6] = 5;
	assert_int_equal(smi_recv(p.mad, true, 1, 8, &out), SMI_DISCARD);
}

static void test_combined_route(void **state)
{
	/* LID-routed to a switch (DrSLID = requester LID 3), then DR 7, 1. */
	static const uint8_t path[] = { 7, 1 };
	struct mad_pkt p = dr_smp(1, 0x10, 0, 2, path);
	unsigned out = 0;

	(void)state;
	p.mad[32] = 0;
	p.mad[33] = 3;
	assert_int_equal(smi_recv(p.mad, true, 1, 8, &out), SMI_FORWARD);
	assert_int_equal(out, 7);
	assert_int_equal(smi_recv(p.mad, true, 7, 8, &out), SMI_FORWARD);
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);
	assert_int_equal(smi_send_response(p.mad, false, 1, 1, false, &out), SMI_FORWARD);
	assert_int_equal(smi_recv(p.mad, true, 1, 8, &out), SMI_FORWARD);
	/* At the start of the DR part the response is LID-routed to DrSLID. */
	assert_int_equal(smi_recv(p.mad, true, 7, 8, &out), SMI_LID_ROUTE);
	assert_int_equal(out, 3);
	assert_int_equal(dr_hop_ptr(p.mad), 0);
	/* ... and the requester takes it (C14-13:4). */
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);
}

static void test_drdlid(void **state)
{
	/* DR one hop to a switch, then LID-routed to DrDLID 9. */
	static const uint8_t path[] = { 1 };
	struct mad_pkt p = dr_smp(1, 0x10, 0, 1, path);
	unsigned out = 0;

	(void)state;
	p.mad[34] = 0;
	p.mad[35] = 9;
	assert_int_equal(smi_send_request(p.mad, false, 1, 1, &out), SMI_FORWARD);
	assert_int_equal(smi_recv(p.mad, true, 4, 8, &out), SMI_LID_ROUTE);
	assert_int_equal(out, 9);
	/* At the destination, hop_ptr is hop_cnt + 1 (C14-9:4). */
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);
	assert_int_equal(smi_send_response(p.mad, false, 1, 1, true, &out), SMI_REPLY_LID);
	/* Back at the switch the DR part resumes (C14-13:1). */
	assert_int_equal(smi_recv(p.mad, true, 2, 8, &out), SMI_FORWARD);
	assert_int_equal(out, 4);
	assert_int_equal(smi_recv(p.mad, false, 1, 1, &out), SMI_LOCAL);
}

/* An SM at a CA port answers a DR request (C14-13, as at write time). */
static void test_host_agent_response(void **state)
{
	static const uint8_t path[] = { 3, 1 };
	struct mad_pkt p = dr_smp(0x81, 0x20, 0, 2, path);
	unsigned out = 0;

	(void)state;
	p.mad[4] = 0x80;	/* D */
	p.mad[6] = 3;		/* hop_cnt + 1, as received */
	dr_return_path(p.mad)[2] = 1;
	dr_return_path(p.mad)[1] = 5;
	struct mad_pkt q = p;
	assert_int_equal(smi_send_returning(q.mad, false, 1, 1, &out), SMI_FORWARD);
	assert_int_equal(out, 1);
	assert_int_equal(dr_hop_ptr(q.mad), 2);
	/* Not by another port of the CA (the kernel's write() EINVAL). */
	q = p;
	assert_int_equal(smi_send_returning(q.mad, false, 2, 2, &out), SMI_DISCARD);
	/* A CA is no intermediate hop (C14-13:2); home is local (C14-13:4). */
	q = p;
	q.mad[6] = 2;
	assert_int_equal(smi_send_returning(q.mad, false, 1, 1, &out), SMI_DISCARD);
	q.mad[6] = 0;
	assert_int_equal(smi_send_returning(q.mad, false, 1, 1, &out), SMI_LOCAL);
	/* Without the D bit it is no response at all. */
	q = p;
	q.mad[4] = 0;
	assert_int_equal(smi_send_returning(q.mad, false, 1, 1, &out), SMI_DISCARD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_walk_out_and_back),
		cmocka_unit_test(test_discards),
		cmocka_unit_test(test_combined_route),
		cmocka_unit_test(test_drdlid),
		cmocka_unit_test(test_host_agent_response),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
