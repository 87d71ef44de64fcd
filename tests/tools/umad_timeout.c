/* SPDX-License-Identifier: MIT */
/*
 * umad_timeout: send one directed-route NodeInfo with libibumad's own
 * umad_send(timeout_ms, retries) and report what comes back and when.
 *
 *   umad_timeout TIMEOUT_MS RETRIES PORT,PORT,...   (the DR path, "0,1,3")
 *
 * Prints "status=N elapsed_ms=M" and exits 0 when a packet was read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int timeout, retries, fd, agent, len, hops = 0;
	uint8_t path[64] = { 0 };
	void *umad;
	uint8_t *mad;
	char *tok, *s;
	double t0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s TIMEOUT_MS RETRIES DRPATH\n", argv[0]);
		return 2;
	}
	timeout = atoi(argv[1]);
	retries = atoi(argv[2]);
	s = argv[3];
	while ((tok = strsep(&s, ",")) && hops < 63) {
		if (hops == 0 && atoi(tok) == 0) {
			hops = 1;	/* leading 0 is the local node */
			continue;
		}
		path[hops++] = (uint8_t)atoi(tok);
	}
	hops = hops ? hops - 1 : 0;
	if (umad_init() < 0 || (fd = umad_open_port(NULL, 0)) < 0) {
		perror("umad_open_port");
		return 1;
	}
	agent = umad_register(fd, IB_SMI_DIRECT_CLASS, 1, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "umad_register failed\n");
		return 1;
	}
	umad = umad_alloc(1, umad_size() + IB_MAD_SIZE);
	mad = umad_get_mad(umad);
	mad[0] = 1;			/* base version */
	mad[1] = IB_SMI_DIRECT_CLASS;
	mad[2] = 1;
	mad[3] = IB_MAD_METHOD_GET;
	mad[7] = (uint8_t)hops;		/* hop count */
	mad[15] = 0x42;			/* TID */
	mad[17] = IB_ATTR_NODE_INFO;
	mad[32] = mad[33] = mad[34] = mad[35] = 0xff;	/* DrSLID/DrDLID */
	memcpy(mad + 128, path, sizeof(path));
	umad_set_addr(umad, 0xffff, 0, 0, 0);
	t0 = now_ms();
	if (umad_send(fd, agent, umad, IB_MAD_SIZE, timeout, retries) < 0) {
		perror("umad_send");
		return 1;
	}
	len = IB_MAD_SIZE;
	if (umad_recv(fd, umad, &len, -1) < 0) {
		perror("umad_recv");
		return 1;
	}
	printf("status=%d elapsed_ms=%.0f mad_status=0x%04x\n", umad_status(umad),
	       now_ms() - t0, (mad[4] << 8 | mad[5]) & 0x7fff);
	return 0;
}
