/* SPDX-License-Identifier: MIT */
/*
 * ib_umad semantics (docs/umad.md §3, §4 and §7) driven directly on the default
 * fabric with a hand-driven clock: registration rules, write and read
 * errors, TID rewriting, response matching, timeouts and retries,
 * unsolicited delivery across files, the kernel's 0x000C reply, issm.
 */
#include "config.h"

#include <errno.h>

#include "fabric/configure.h"
#include "fabric/port.h"
#include "kernel/umad.h"
#include "kernel/umad_abi.h"
#include "testfab.h"

struct env {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct host *hw;
	struct umad_host *h;
	struct umad_dev *dev;	/* host1 port 1 */
	struct umad_file *a, *b;
};

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = topo_load_default(0);
	e->tq = timerq_new(test_clock_now, &e->clock);
	e->hw = host_new(e->f, e->tq);
	host_attach(e->hw, fabric_find(e->f, "host1"));
	e->h = umad_host_new(e->hw);
	e->dev = umad_host_dev(e->h, 0);
	e->a = umad_open(e->dev);
	e->b = umad_open(e->dev);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e->a)
		umad_release(e->a);
	if (e->b)
		umad_release(e->b);
	umad_host_free(e->h);
	host_free(e->hw);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e);
	return 0;
}

static void advance_ms(struct env *e, unsigned ms)
{
	e->clock.now_us += ms * 1000ull;
	timerq_run(e->tq);
}

static int reg(struct umad_file *f, uint8_t qpn, uint8_t mgmt_class, uint8_t version,
	       uint8_t rmpp, uint32_t methods)
{
	struct umad_abi_reg_req r = { .qpn = qpn, .mgmt_class = mgmt_class,
				      .mgmt_class_version = version, .rmpp_version = rmpp,
				      .oui = { 0x00, 0x14, 0x05 } };
	size_t out = 0;
	int ret;

	r.method_mask[0] = methods;
	ret = umad_ioctl(f, UMAD_IOC_REGISTER_AGENT, &r, &out);
	return ret < 0 ? ret : (int)r.id;
}

static int enable_pkey(struct umad_file *f)
{
	size_t out;

	return umad_ioctl(f, UMAD_IOC_ENABLE_PKEY, NULL, &out);
}

/* A write buffer: 64-byte header then the MAD. */
struct wbuf {
	struct umad_abi_hdr hdr;
	uint8_t mad[256];
};

static struct wbuf dr_write(unsigned agent, uint16_t attr, unsigned nhops,
			    const uint8_t *path, unsigned timeout, unsigned retries)
{
	struct wbuf w = { 0 };
	struct mad_pkt p = dr_smp(1, attr, 0, nhops, path);

	w.hdr.id = agent;
	w.hdr.timeout_ms = timeout;
	w.hdr.retries = retries;
	w.hdr.lid = htobe16(0xffff);
	memcpy(w.mad, p.mad, 256);
	mad_set_tid(w.mad, 0xdeadbeefcafe0001ULL);
	return w;
}

static void test_register_rules(void **state)
{
	struct env *e = *state;
	int i;

	assert_int_equal(enable_pkey(e->a), 0);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	assert_int_equal(reg(e->a, 0, 0x01, 1, 0, 0), 1);	/* lowest free id */
	assert_int_equal(reg(e->a, 2, 0x81, 1, 0, 0), -EINVAL);	/* qpn 0/1 */
	assert_int_equal(reg(e->a, 1, 0x81, 1, 0, 0), -EINVAL);	/* SMP on QP1 */
	assert_int_equal(reg(e->a, 0, 0x03, 2, 0, 0), -EINVAL);	/* GMP on QP0 */
	assert_int_equal(reg(e->a, 1, 0x03, 2, 2, 0), -EINVAL);	/* rmpp 2 */
	assert_int_equal(reg(e->a, 0, 0x81, 1, 1, 0), -EINVAL);	/* rmpp, no RMPP class */
	assert_int_equal(reg(e->a, 1, 0x50, 1, 0, 0), -EINVAL);	/* class >= 0x50 */
	assert_int_equal(reg(e->a, 1, 0x04, 0x83, 0, 0), -EINVAL);	/* version */
	assert_int_equal(reg(e->a, 1, 0x03, 2, 1, 0), 2);
	/* ENABLE_PKEY once an agent exists: EINVAL. */
	assert_int_equal(enable_pkey(e->a), -EINVAL);
	for (i = 3; i < 32; i++)
		assert_int_equal(reg(e->a, 1, 0, 0, 0, 0), i);
	assert_int_equal(reg(e->a, 1, 0, 0, 0, 0), -ENOMEM);	/* 32 agents */
}

static void test_method_conflict_across_files(void **state)
{
	struct env *e = *state;
	uint32_t id = 7;
	size_t out;

	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 1u << 1), 0);	/* Get */
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 1u << 1), -EINVAL);
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 1u << 2), 0);	/* Set is free */
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 0), 1);	/* empty mask */
	assert_int_equal(umad_ioctl(e->b, UMAD_IOC_UNREGISTER_AGENT, &id, &out), -EINVAL);
	umad_release(e->a);	/* close frees the methods at once */
	e->a = NULL;
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 1u << 1), 2);
	assert_int_equal(umad_ioctl(e->b, 0x1b99, NULL, &out), -ENOTTY);
}

static void test_register_agent2_flags(void **state)
{
	struct env *e = *state;
	struct umad_abi_reg_req2 r = { .qpn = 1, .mgmt_class = 0x03,
				       .mgmt_class_version = 2, .flags = 0x6 };
	size_t out = 0;

	/* Unknown flags: EINVAL, and the supported ones are written back. */
	assert_int_equal(umad_ioctl(e->a, UMAD_IOC_REGISTER_AGENT2, &r, &out), -EINVAL);
	assert_int_equal(out, sizeof(r));
	assert_int_equal(r.flags, UMAD_REG_FLAGS_CAP);
	r.flags = 0;
	assert_int_equal(umad_ioctl(e->a, UMAD_IOC_REGISTER_AGENT2, &r, &out), 0);
	assert_int_equal(umad_hdr_size(e->a), 64);	/* v2 implies P_Key mode */
}

static void test_write_errors(void **state)
{
	static const uint8_t bad_path[] = { 2 };
	struct env *e = *state;
	struct wbuf w;

	enable_pkey(e->a);
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 0, NULL, 0, 0);
	assert_int_equal(umad_write(e->a, &w, 64 + 35), -EINVAL);	/* < hdr + 36 */
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), -EIO);	/* no agent 0 */
	w.hdr.id = 32;
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), -EINVAL);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 1, bad_path, 0, 0);
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), -EINVAL);	/* C14-9:1 */
	assert_int_equal(umad_write(e->a, &w, sizeof(w) + 1), -EINVAL);	/* > 256 */
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 0, NULL, 0, 0);
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
}

static void test_response_matching(void **state)
{
	struct env *e = *state;
	struct wbuf w, r;
	uint8_t small[64 + 100];

	enable_pkey(e->a);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	assert_int_equal(umad_read(e->a, &r, sizeof(r)), -EAGAIN);
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 0, NULL, 100, 0);
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	assert_true(umad_readable(e->a));
	assert_int_equal(umad_read(e->a, small, sizeof(small)), -EINVAL);
	assert_true(umad_readable(e->a));	/* kept at the head */
	assert_int_equal(umad_read(e->a, &r, sizeof(r)), 320);
	assert_int_equal(r.hdr.id, 0);
	assert_int_equal(r.hdr.status, 0);
	assert_int_equal(r.hdr.length, 320);
	assert_int_equal(be16toh(r.hdr.lid), 0xffff);
	assert_int_equal(mad_method(r.mad), 0x81);
	/* Upper 32 TID bits are the agent's hi_tid; the low ones are ours. */
	assert_int_equal(mad_tid(r.mad) & 0xffffffff, 0xcafe0001);
	assert_int_not_equal(mad_tid(r.mad) >> 32, 0xdeadbeef);
	assert_false(umad_readable(e->a));
	/* The matched send is done: no timeout report follows. */
	advance_ms(e, 1000);
	assert_false(umad_readable(e->a));

	/* A send with timeout 0 expects nothing: its response is dropped. */
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 0, NULL, 0, 0);
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	assert_false(umad_readable(e->a));
}

static void test_timeout_and_retries(void **state)
{
	static const uint8_t dead_end[] = { 1, 3 };
	struct env *e = *state;
	uint64_t dropped = e->f->dropped;
	struct wbuf w, r;

	enable_pkey(e->a);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 2, dead_end, 100, 2);
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	assert_int_equal(e->f->dropped, dropped + 1);
	/* A second request with the same TID while outstanding: EINVAL. */
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), -EINVAL);
	advance_ms(e, 99);
	assert_int_equal(e->f->dropped, dropped + 1);
	advance_ms(e, 1);	/* first retry */
	assert_int_equal(e->f->dropped, dropped + 2);
	advance_ms(e, 100);	/* second retry */
	assert_int_equal(e->f->dropped, dropped + 3);
	advance_ms(e, 99);
	assert_false(umad_readable(e->a));	/* not before 100 x (2 + 1) */
	advance_ms(e, 1);
	assert_true(umad_readable(e->a));
	assert_int_equal(e->f->dropped, dropped + 3);	/* R + 1 sends */
	assert_int_equal(umad_read(e->a, &r, 64 + 23), -EINVAL);
	assert_int_equal(umad_read(e->a, &r, sizeof(r)), 64 + 24);
	assert_int_equal(r.hdr.status, ETIMEDOUT);
	assert_int_equal(r.hdr.timeout_ms, 100);
	assert_int_equal(r.hdr.retries, 2);
	assert_int_equal(mad_tid(r.mad) & 0xffffffff, 0xcafe0001);
	assert_int_not_equal(mad_tid(r.mad) >> 32, 0xdeadbeef);	/* rewritten */
}

static void test_unsolicited_and_unclaimed(void **state)
{
	struct env *e = *state;
	struct wbuf w, r;

	enable_pkey(e->a);
	enable_pkey(e->b);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	/* No SM agent: SMInfo Get gets the kernel's 0x000C reply. */
	w = dr_write(0, UMAD_SM_ATTR_SM_INFO, 0, NULL, 100, 0);
	umad_write(e->a, &w, sizeof(w));
	assert_int_equal(umad_read(e->a, &r, sizeof(r)), 320);
	assert_int_equal(mad_status(r.mad) & 0x7fff, 0x000c);

	/* An SM agent in another file takes SMInfo Get, and answers it. */
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 1u << 1), 0);
	w.mad[15]++;
	umad_write(e->a, &w, sizeof(w));
	assert_false(umad_readable(e->a));
	assert_int_equal(umad_read(e->b, &r, sizeof(r)), 320);
	assert_int_equal(mad_attr_id(r.mad), UMAD_SM_ATTR_SM_INFO);
	r.hdr.id = 0;
	r.mad[3] = 0x81;	/* GetResp with the request's full TID */
	r.mad[4] |= 0x80;	/* and the D bit, as libibmad sets it */
	assert_int_equal(umad_write(e->b, &r, sizeof(r)), sizeof(r));
	assert_int_equal(umad_read(e->a, &r, sizeof(r)), 320);
	assert_int_equal(mad_method(r.mad), 0x81);
	assert_int_equal(mad_status(r.mad) & 0x7fff, 0);
}

/*
 * A file nobody reads: past its packet or byte limit what arrives is
 * dropped and counted as dropped, not delivered (issue #12 items 3, 17).
 */
static void test_recv_queue_limits(void **state)
{
	struct env *e = *state;
	uint64_t delivered, dropped;
	struct wbuf w, r;
	unsigned i;

	enable_pkey(e->a);
	enable_pkey(e->b);
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	assert_int_equal(reg(e->b, 0, 0x81, 1, 0, 1u << 1), 0);	/* SMInfo Get */
	w = dr_write(0, UMAD_SM_ATTR_SM_INFO, 0, NULL, 0, 0);
	umad_host_set_recv_limits(e->h, 2, 1u << 20);
	delivered = e->f->delivered;
	dropped = e->f->dropped;
	for (i = 0; i < 3; i++) {
		w.mad[15]++;
		assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	}
	assert_int_equal(e->f->delivered, delivered + 2);
	assert_int_equal(e->f->dropped, dropped + 1);
	/* The byte limit: 256 bytes a packet, 600 allowed, two queued. */
	umad_host_set_recv_limits(e->h, 100, 600);
	w.mad[15]++;
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	assert_int_equal(e->f->dropped, dropped + 2);
	for (i = 0; i < 2; i++)
		assert_int_equal(umad_read(e->b, &r, sizeof(r)), 320);
	assert_false(umad_readable(e->b));
	/* Read, there is room again. */
	w.mad[15]++;
	assert_int_equal(umad_write(e->a, &w, sizeof(w)), sizeof(w));
	assert_int_equal(e->f->delivered, delivered + 3);
	assert_true(umad_readable(e->b));
}

static void test_old_header(void **state)
{
	struct env *e = *state;
	uint8_t buf[56 + 256];
	struct wbuf w;

	/* Without ENABLE_PKEY the header is 56 bytes. */
	assert_int_equal(reg(e->a, 0, 0x81, 1, 0, 0), 0);
	assert_int_equal(umad_hdr_size(e->a), 56);
	w = dr_write(0, UMAD_SM_ATTR_NODE_INFO, 0, NULL, 100, 0);
	memcpy(buf, &w.hdr, 56);
	memcpy(buf + 56, w.mad, 256);
	assert_int_equal(umad_write(e->a, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(umad_read(e->a, buf, sizeof(buf)), 56 + 256);
	assert_int_equal(buf[56 + 3], 0x81);
}

/* A 3-segment vendor RMPP send from a kernel-RMPP agent to a user-RMPP
 * agent on the same port (HCA loopback): the receiver sees 3 segments. */
static void test_user_rmpp_sees_segments(void **state)
{
	struct env *e = *state;
	struct umad_abi_reg_req2 r2 = { .qpn = 1, .mgmt_class = 0x31,
					.mgmt_class_version = 1, .flags = UMAD_REG_USER_RMPP,
					.oui = 0x001405, .rmpp_version = 1 };
	struct umad_abi_reg_req r1 = { .qpn = 1, .mgmt_class = 0x31,
				       .mgmt_class_version = 1, .rmpp_version = 1,
				       .oui = { 0x00, 0x14, 0x05 } };
	size_t out, d = 2 * 216 + 100, i;
	uint8_t buf[64 + 40 + 2 * 216 + 100] = { 0 }, rd[64 + 256];
	struct umad_abi_hdr *hdr = (void *)buf;
	uint8_t *mad = buf + 64;

	fabric_configure(e->f, umad_dev_port(e->dev));
	enable_pkey(e->a);
	r2.method_mask[0] = 1u << 2;	/* Set */
	assert_int_equal(umad_ioctl(e->b, UMAD_IOC_REGISTER_AGENT2, &r2, &out), 0);
	assert_int_equal(umad_ioctl(e->a, UMAD_IOC_REGISTER_AGENT, &r1, &out), 0);
	hdr->qpn = htobe32(1);
	hdr->qkey = htobe32(0x80010000);
	hdr->lid = htobe16(umad_dev_port(e->dev)->lid);
	mad[0] = 1; mad[1] = 0x31; mad[2] = 1; mad[3] = 0x02;
	mad[24] = 1; mad[25] = 1; mad[26] = 1;	/* RMPP Active */
	mad[38] = 0x14; mad[39] = 0x05;
	for (i = 0; i < d; i++)
		mad[40 + i] = (uint8_t)i;
	assert_int_equal(umad_write(e->a, buf, sizeof(buf)), sizeof(buf));
	for (i = 1; i <= 3; i++) {
		assert_int_equal(umad_read(e->b, rd, sizeof(rd)), 64 + 256);
		assert_int_equal(rd[64 + 31], i);			/* SegmentNumber */
		assert_int_equal(rd[64 + 26] & 7, 1 | (i == 1 ? 2 : 0) | (i == 3 ? 4 : 0));
		assert_int_equal(rd[64 + 40], (uint8_t)((i - 1) * 216));	/* its data */
	}
	assert_false(umad_readable(e->b));
}

static void test_issm(void **state)
{
	struct env *e = *state;
	struct port *p = umad_dev_port(e->dev);

	assert_int_equal(umad_issm_open(e->dev), 0);
	assert_true(p->cap_mask & CAP_IS_SM);
	assert_int_equal(umad_issm_open(e->dev), -EAGAIN);
	umad_issm_close(e->dev);
	assert_false(p->cap_mask & CAP_IS_SM);
	assert_int_equal(umad_issm_open(e->dev), 0);
	umad_issm_close(e->dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_method_conflict_across_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_agent2_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_response_matching, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_and_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsolicited_and_unclaimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_queue_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_rmpp_sees_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_issm, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
