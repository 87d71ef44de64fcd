/* SPDX-License-Identifier: MIT */
/*
 * The CRCs a capture writes (ctl/capture.c, IBA 7.8): the ICRC is
 * CRC-32 with the LRH and the variant fields as 1s (checked against zlib's
 * CRC-32 of the masked bytes, computed outside: python3 zlib.crc32), the
 * VCRC covers every byte.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "ctl/capture.h"
#include "ctl/capture_roce.h"

/* "123456789" after an LRH: its fifth byte is where a BTH's Resv8a is,
 * so it counts as 1s too: zlib.crc32(b"\xff" * 8 + b"1234\xff6789"). */
static void test_icrc_is_crc32_of_masked_lrh(void **state)
{
	uint8_t pkt[8 + 9] = { 0x12, 0x34, 0x00, 0x05, 0x00, 0x09, 0x00, 0x07 };

	(void)state;
	memcpy(pkt + 8, "123456789", 9);
	assert_int_equal(ib_icrc(pkt, sizeof(pkt)), 0x812c9b70);
}

/* The variant fields do not count: LRH (VL, LIDs), GRH TClass, FlowLabel,
 * HopLmt, BTH Resv8a; a payload byte does. */
static void test_icrc_ignores_variant_fields(void **state)
{
	uint8_t a[8 + 40 + 12 + 8], b[sizeof(a)];
	uint32_t c;

	(void)state;
	memset(a, 0x5a, sizeof(a));
	a[1] = 0x03;			/* LNH: GRH follows */
	a[8] = 0x60;			/* IPVer 6 */
	c = ib_icrc(a, sizeof(a));
	memcpy(b, a, sizeof(a));
	b[0] = 0xf0;			/* VL 15 */
	b[2] = 0x01;			/* DLID */
	b[8] = 0x6f;			/* TClass high nibble */
	b[9] = b[10] = b[11] = 0;	/* TClass, FlowLabel */
	b[15] = 1;			/* HopLmt */
	b[48 + 4] = 0;			/* BTH Resv8a */
	assert_int_equal(ib_icrc(b, sizeof(b)), c);
	b[48 + 5] ^= 1;			/* DestQP */
	assert_int_not_equal(ib_icrc(b, sizeof(b)), c);
}

static void test_vcrc_covers_every_byte(void **state)
{
	uint8_t p[30];
	unsigned i;
	uint16_t c;

	(void)state;
	for (i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)i;
	c = ib_vcrc(p, sizeof(p));
	assert_int_equal(c, 0x213c);	/* reflected 0x100B, init and final 0xFFFF */
	p[0] = 0xf0;			/* even the VL */
	assert_int_not_equal(ib_vcrc(p, sizeof(p)), c);
}

/* An RC Send Only of 4 payload bytes from QP 0x12 to QP 0x40 as the
 * fabric writes it: LRH, a GRH between two IPv4-mapped GIDs with
 * TClass @tclass and HopLmt @hop, BTH, payload, ICRC, VCRC. */
static size_t ib_pkt(uint8_t *p, uint8_t tclass, uint8_t hop)
{
	static const uint8_t sgid[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 3 };
	static const uint8_t dgid[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 5 };
	size_t n = 8 + 40 + 12 + 4;

	memset(p, 0, n + 6);
	p[1] = 0x03;
	p[8] = (uint8_t)(0x60 | tclass >> 4);
	p[9] = (uint8_t)(tclass << 4);
	p[12 + 1] = 12 + 4 + 4;		/* PayLen */
	p[14] = 0x1b;
	p[15] = hop;
	memcpy(p + 16, sgid, 16);
	memcpy(p + 32, dgid, 16);
	p[48] = 0x04;			/* RC Send Only */
	p[48 + 2] = p[48 + 3] = 0xff;	/* P_Key */
	p[48 + 7] = 0x40;		/* DestQP */
	memcpy(p + 60, "data", 4);
	return n + 4 + 2;
}

static unsigned be16(const uint8_t *b) { return (unsigned)b[0] << 8 | b[1]; }

/* RoCE v2 over IPv4 (Annex A17): the headers, a valid IPv4 checksum, UDP
 * to 4791 from a port in 0xC000-0xFFFF, an ICRC that the variant IP
 * fields do not change and the BTH does, a valid FCS. */
static void test_roce_v2_frame(void **state)
{
	struct roce_ends e = { .src_mac = { 2, 0, 0, 0, 0, 3 }, .dst_mac = { 2, 0, 0, 0, 0, 5 },
			       .v2 = true, .sqp = 0x12 };
	uint8_t ib[128], f[192], g[192];
	size_t len = ib_pkt(ib, 0, 64), n, m, i;
	uint32_t sum = 0;

	(void)state;
	n = roce_frame(&e, ib, len, f);
	assert_int_equal(n, 14 + 20 + 8 + 12 + 4 + 4 + 4);
	assert_int_equal(be16(f + 12), 0x0800);
	assert_int_equal(f[14], 0x45);
	assert_int_equal(be16(f + 16), 20 + 8 + 12 + 4 + 4);
	assert_int_equal(f[14 + 8], 64);		/* TTL: the hop limit */
	assert_int_equal(f[14 + 9], 17);
	assert_memory_equal(f + 14 + 12, "\x0a\x01\x00\x03\x0a\x01\x00\x05", 8);
	for (i = 0; i < 20; i += 2)
		sum += be16(f + 14 + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);			/* the IPv4 checksum holds */
	assert_true(be16(f + 34) >= 0xc000);
	assert_int_equal(be16(f + 36), 4791);
	assert_int_equal(be16(f + 38), 8 + 12 + 4 + 4);
	assert_int_equal(f[42], 0x04);
	assert_memory_equal(f + 54, "data", 4);
	/* The FCS: the CRC-32 of a frame with its FCS is the residue. */
	assert_int_equal(eth_crc32(f, n), 0x2144df1c);
	/* Another TClass and hop limit: TOS, TTL and the IP checksum
	 * change, the ICRC (f[58..61]) does not. */
	len = ib_pkt(ib, 0xa0, 3);
	m = roce_frame(&e, ib, len, g);
	assert_int_equal(m, n);
	assert_int_equal(g[15], 0xa0);
	assert_int_equal(g[22], 3);
	assert_memory_equal(g + 58, f + 58, 4);
	ib[48 + 7] = 0x41;				/* another DestQP */
	roce_frame(&e, ib, len, g);
	assert_memory_not_equal(g + 58, f + 58, 4);
	assert_int_equal(eth_crc32(g, m), 0x2144df1c);
}

/* RoCE v1 (Annex A16): EtherType 0x8915, then the GRH and the rest of
 * the packet with its InfiniBand ICRC; no LRH, no VCRC. */
static void test_roce_v1_frame(void **state)
{
	struct roce_ends e = { .v2 = false };
	uint8_t ib[128], f[192];
	size_t len = ib_pkt(ib, 0, 64), n;

	(void)state;
	n = roce_frame(&e, ib, len, f);
	assert_int_equal(n, 14 + len - 8 - 2 + 4);
	assert_int_equal(be16(f + 12), 0x8915);
	assert_memory_equal(f + 14, ib + 8, len - 8 - 2);
	assert_int_equal(eth_crc32(f, n), 0x2144df1c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icrc_is_crc32_of_masked_lrh),
		cmocka_unit_test(test_icrc_ignores_variant_fields),
		cmocka_unit_test(test_vcrc_covers_every_byte),
		cmocka_unit_test(test_roce_v2_frame),
		cmocka_unit_test(test_roce_v1_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
