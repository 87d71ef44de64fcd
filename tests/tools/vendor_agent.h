/* SPDX-License-Identifier: MIT */
/*
 * The agent the RMPP test tools talk through: vendor class 0x31, an RMPP
 * class (range 2, OUI 00:14:05), with the kernel doing RMPP.
 */
#ifndef IBEMU_TESTS_VENDOR_AGENT_H
#define IBEMU_TESTS_VENDOR_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/umad.h>

#define CLASS		0x31
#define HDR_LEN		40	/* MAD + RMPP + reserved + OUI */

/* Open @ca's first port and register for @methods (bit N: method N). */
static inline int open_agent(const char *ca, int *fd, uint32_t methods)
{
	long mask[16 / sizeof(long)] = { 0 };
	uint8_t oui[3] = { 0x00, 0x14, 0x05 };

	mask[0] = methods;
	*fd = umad_open_port((char *)ca, 0);
	if (*fd < 0)
		return -1;
	return umad_register_oui(*fd, CLASS, 1, oui, mask);
}

/* Data bytes [0, @d) are @pattern(i, @seed)? 0, or -1 said on stderr. */
static inline int check_pattern(const uint8_t *data, size_t d,
				uint8_t (*pattern)(size_t, unsigned), unsigned seed)
{
	size_t i;

	for (i = 0; i < d; i++)
		if (data[i] != pattern(i, seed)) {
			fprintf(stderr, "byte %zu differs\n", i);
			return -1;
		}
	return 0;
}

#endif
