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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icrc_is_crc32_of_masked_lrh),
		cmocka_unit_test(test_icrc_ignores_variant_fields),
		cmocka_unit_test(test_vcrc_covers_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
