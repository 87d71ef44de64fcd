/* SPDX-License-Identifier: MIT */
/*
 * smp_set: send one directed-route SubnSet with libibmad, as an SM would,
 * and print the returned attribute in hex. infiniband-diags has no such
 * tool; the tests use it to program switches and ports over the wire.
 *
 *   smp_set DRPATH ATTR MOD HEX   e.g. smp_set 0,1 0x19 0 "ff ff 00 ..."
 *
 * Missing trailing bytes of the 64-byte attribute are zero. $SMP_MKEY, when
 * set, is the M_Key the SMP carries (default 0).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

int main(int argc, char **argv)
{
	int classes[] = { IB_SMI_CLASS, IB_SMI_DIRECT_CLASS };
	uint8_t data[IB_SMP_DATA_SIZE] = { 0 };
	struct ibmad_port *port;
	ib_portid_t portid = { 0 };
	char *s, *end;
	int i = 0, status = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DRPATH ATTR MOD HEX\n", argv[0]);
		return 2;
	}
	for (s = argv[4]; *s && i < IB_SMP_DATA_SIZE; s = end) {
		unsigned long v = strtoul(s, &end, 16);

		if (end == s)
			break;
		data[i++] = (uint8_t)v;
	}
	port = mad_rpc_open_port(NULL, 0, classes, 2);
	if (port && getenv("SMP_MKEY"))
		smp_mkey_set(port, strtoull(getenv("SMP_MKEY"), NULL, 0));
	if (!port || str2drpath(&portid.drpath, argv[1], 0, 0) < 0) {
		fprintf(stderr, "smp_set: cannot open port or parse path\n");
		return 1;
	}
	portid.lid = 0xffff;
	if (!smp_set_status_via(data, &portid, (unsigned)strtoul(argv[2], NULL, 0),
				(unsigned)strtoul(argv[3], NULL, 0), 0, &status, port)) {
		fprintf(stderr, "smp_set: no response (status 0x%x)\n", status);
		return 1;
	}
	for (i = 0; i < IB_SMP_DATA_SIZE; i++)
		printf("%02x%s", data[i], i % 16 == 15 ? "\n" : " ");
	mad_rpc_close_port(port);
	return status ? 3 : 0;
}
