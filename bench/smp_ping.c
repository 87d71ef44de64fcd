/* SPDX-License-Identifier: MIT */
/*
 * smp_ping: directed-route NodeInfo round trips through libibumad, one at a
 * time, as fast as they come back: what every diag and SM does per SMP.
 * Prints round trips per second and the median and 99th percentile
 * latency. The same binary runs under ibsim (LD_PRELOAD=libumad2sim.so)
 * and under ibemu, so the two are compared on equal terms.
 *
 *   smp_ping SECONDS [HOPS...]     e.g. smp_ping 2 1 3   (0,1,3: two hops)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>

#include "latency.h"

#define MAD_SIZE 256

int main(int argc, char **argv)
{
	uint8_t *buf, *mad;
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	uint64_t *lat = malloc(sizeof(*lat) * 4000000), start, end, n = 0, tid = 1;
	int fd, agent, i, hops = argc > 2 ? argc - 2 : 0;

	if (umad_init() < 0 || (fd = umad_open_port(NULL, 0)) < 0) {
		fprintf(stderr, "smp_ping: cannot open a umad port\n");
		return 1;
	}
	/* After the open: it decides the header size (ENABLE_PKEY). */
	buf = calloc(1, umad_size() + MAD_SIZE);
	mad = umad_get_mad(buf);
	agent = umad_register(fd, 0x81, 1, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "smp_ping: cannot register a DR SMP agent\n");
		return 1;
	}
	start = now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	while (now_ns() < end && n < 4000000) {
		uint64_t t0 = now_ns();
		int len = MAD_SIZE, r1, r2 = 0;

		memset(buf, 0, umad_size() + MAD_SIZE);
		umad_set_addr(buf, 0xffff, 0, 0, 0);
		mad[0] = 1; mad[1] = 0x81; mad[2] = 1; mad[3] = 1;	/* SubnGet */
		mad[7] = (uint8_t)hops;
		for (i = 0; i < 8; i++)
			mad[8 + i] = (uint8_t)(++tid >> (56 - 8 * i));
		mad[17] = 0x11;						/* NodeInfo */
		mad[32] = mad[33] = mad[34] = mad[35] = 0xff;		/* DrSLID/DrDLID */
		for (i = 0; i < hops; i++)
			mad[128 + 1 + i] = (uint8_t)atoi(argv[2 + i]);
		if ((r1 = umad_send(fd, agent, buf, MAD_SIZE, 1000, 0)) < 0 ||
		    (r2 = umad_recv(fd, buf, &len, 1000)) < 0 || umad_status(buf)) {
			fprintf(stderr, "smp_ping: round trip %llu failed (send %d, recv %d, status %d)\n",
				(unsigned long long)n, r1, r2, umad_status(buf));
			return 1;
		}
		lat[n++] = now_ns() - t0;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("%llu round trips in %.2f s: %.0f/s, p50 %.1f us, p99 %.1f us\n",
	       (unsigned long long)n, (now_ns() - start) / 1e9, n / ((now_ns() - start) / 1e9),
	       lat[n / 2] / 1e3, lat[n * 99 / 100] / 1e3);
	return 0;
}
