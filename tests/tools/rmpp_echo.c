/* SPDX-License-Identifier: MIT */
/*
 * rmpp_echo: a kernel-RMPP agent talking to another, with libibumad only.
 *
 *   rmpp_echo server CA                wait for one request, answer it
 *   rmpp_echo client CA LID SEGS RSEGS send SEGS segments, want RSEGS back
 *
 * Vendor class 0x31 (OUI 00:14:05, an RMPP class) carries 216 data bytes a
 * segment. Both ends read with a 256-byte buffer first, so the long reads
 * go through ENOSPC and a second read, as saquery does. Data patterns are
 * checked byte for byte. The client prints "ok sent=N got=M".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "vendor_agent.h"

#define SEG_DATA	(256 - HDR_LEN)

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)(i * 7 + seed + (i >> 8));
}

/* Read one message of any length, through the ENOSPC protocol. */
static void *recv_long(int fd, int *len)
{
	int size = 256;
	void *umad = umad_alloc(1, umad_size() + size);
	int r = umad_recv(fd, umad, &size, 10000);

	if (r == -ENOSPC) {
		umad_free(umad);
		umad = umad_alloc(1, umad_size() + size);
		r = umad_recv(fd, umad, &size, 10000);
	}
	if (r < 0 || umad_status(umad)) {
		fprintf(stderr, "recv failed: %d status %d\n", r, umad_status(umad));
		exit(1);
	}
	*len = size;
	return umad;
}

static int send_long(int fd, int agent, uint16_t lid, uint8_t method,
		     uint64_t tid, uint32_t mod, unsigned segs, unsigned seed,
		     int timeout)
{
	size_t d = (size_t)segs * SEG_DATA, i;
	void *umad = umad_alloc(1, umad_size() + HDR_LEN + d);
	uint8_t *mad = umad_get_mad(umad);
	uint64_t be = __builtin_bswap64(tid);
	int r;

	memset(mad, 0, HDR_LEN + d);
	mad[0] = 1;
	mad[1] = CLASS;
	mad[2] = 1;
	mad[3] = method;
	memcpy(mad + 8, &be, 8);
	mad[17] = 0x10;		/* an attribute of our own */
	mad[20] = mod >> 24;
	mad[21] = (mod >> 16) & 0xff;
	mad[22] = (mod >> 8) & 0xff;
	mad[23] = mod & 0xff;
	mad[24] = 1;		/* RMPP version 1 */
	mad[25] = 1;		/* DATA */
	mad[26] = 1;		/* Active: the kernel does the rest */
	mad[37] = 0x00;
	mad[38] = 0x14;
	mad[39] = 0x05;
	for (i = 0; i < d; i++)
		mad[HDR_LEN + i] = pattern(i, seed);
	umad_set_addr(umad, lid, 1, 0, 0x80010000);
	r = umad_send(fd, agent, umad, (int)(HDR_LEN + d), timeout, 0);
	umad_free(umad);
	return r;
}

static int check(const uint8_t *mad, int len, unsigned segs, unsigned seed)
{
	size_t d = (size_t)segs * SEG_DATA;

	if ((size_t)len != HDR_LEN + d) {
		fprintf(stderr, "length %d, want %zu\n", len, HDR_LEN + d);
		return -1;
	}
	return check_pattern(mad + HDR_LEN, d, pattern, seed);
}

int main(int argc, char **argv)
{
	int fd, agent, len;
	void *umad;
	uint8_t *mad;

	if (argc == 3 && !strcmp(argv[1], "server")) {
		unsigned segs, rsegs;
		uint64_t tid;

		agent = open_agent(argv[2], &fd, 1u << 2);	/* Set */
		if (agent < 0)
			return 1;
		printf("ready\n");
		fflush(stdout);
		umad = recv_long(fd, &len);
		mad = umad_get_mad(umad);
		/* The request says in its attribute modifier what to send back. */
		segs = mad[22];
		rsegs = mad[23];
		if (check(mad, len, segs, 1))
			return 1;
		memcpy(&tid, mad + 8, 8);
		if (send_long(fd, agent, be16toh(((struct ib_user_mad *)umad)->addr.lid),
			      0x82, __builtin_bswap64(tid), 0, rsegs, 2, 0) < 0)
			return 1;
		printf("served %u segments, answered %u\n", segs, rsegs);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "client")) {
		unsigned segs = atoi(argv[4]), rsegs = atoi(argv[5]);

		agent = open_agent(argv[2], &fd, 0);
		if (agent < 0)
			return 1;
		/* The modifier tells the server what to expect and send back. */
		if (send_long(fd, agent, (uint16_t)atoi(argv[3]), 0x02, 0x77,
			      segs << 8 | rsegs, segs, 1, 5000) < 0) {
			perror("send");
			return 1;
		}
		umad = recv_long(fd, &len);
		mad = umad_get_mad(umad);
		if (check(mad, len, rsegs, 2))
			return 1;
		printf("ok sent=%u got=%u rmpp_flags=0x%x\n", segs, rsegs, mad[26] & 7);
		return 0;
	}
	fprintf(stderr, "usage: %s server CA | client CA LID SEGS RSEGS\n", argv[0]);
	return 2;
}
