/* SPDX-License-Identifier: MIT */
/*
 * A minimal libibumad program: NodeInfo of a remote port by directed route.
 *
 *   cc -o nodeinfo nodeinfo.c -libumad
 *   ibemu run -- ./nodeinfo 0,1,7,1
 *
 * It opens the first port, registers for directed-route SMPs, sends one
 * SubnGet(NodeInfo) with a 1 s timeout and 2 retries, and prints the node's
 * type, GUID and the port the SMP arrived on.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

int main(int argc, char **argv)
{
	static const char *const types[] = { "?", "CA", "Switch", "Router" };
	uint8_t *mad, hops = 0;
	void *umad;
	uint64_t guid;
	char *path, *tok;
	int fd, agent, len = 256;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DR_PATH   (like 0,1,7,1)\n", argv[0]);
		return 2;
	}
	fd = umad_open_port(NULL, 0);
	agent = fd < 0 ? -1 : umad_register(fd, 0x81, 1, 0, NULL);
	if (agent < 0) {
		fprintf(stderr, "cannot open the port (no /dev/infiniband/umad0?)\n");
		return 1;
	}
	umad = umad_alloc(1, umad_size() + 256);
	mad = umad_get_mad(umad);
	mad[0] = 1;		/* base version */
	mad[1] = 0x81;		/* directed-route SMP */
	mad[2] = 1;
	mad[3] = 0x01;		/* Get */
	mad[15] = 1;		/* TID */
	mad[17] = 0x11;		/* NodeInfo */
	memset(mad + 32, 0xff, 4);	/* DrSLID, DrDLID: permissive */
	path = strdup(argv[1]);
	for (tok = strtok(path, ","); tok; tok = strtok(NULL, ","))
		if (hops++ > 0)	/* the first element is this node */
			mad[128 + hops - 1] = (uint8_t)atoi(tok);
	mad[7] = hops ? hops - 1 : 0;	/* hop count */
	free(path);
	umad_set_addr(umad, 0xffff, 0, 0, 0);
	if (umad_send(fd, agent, umad, 256, 1000, 2) < 0 ||
	    umad_recv(fd, umad, &len, 5000) < 0 || umad_status(umad)) {
		fprintf(stderr, "no answer from %s\n", argv[1]);
		umad_free(umad);
		return 1;
	}
	memcpy(&guid, mad + 64 + 12, 8);
	printf("%s node GUID 0x%016llx, %u ports, SMP arrived on port %u\n",
	       types[mad[64 + 2] < 4 ? mad[64 + 2] : 0],
	       (unsigned long long)be64toh(guid), mad[64 + 3], mad[64 + 36]);
	umad_free(umad);
	return 0;
}
