/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one MAD of any bytes sent into a configured fabric from
 * host1's port, through the directed-route rules, LID routing, P_Key and
 * M_Key checks, to the SMA and PMA of whichever node it reaches, and the
 * response back. Input: byte 0 picks the LRH fields (DLID among the
 * fabric's LIDs and the permissive LID, P_Key), the rest is the MAD. The
 * fabric is loaded afresh each time, so a Set cannot leak into the next.
 */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "tests/fuzz/fuzz.h"

#include "fabric/configure.h"
#include "fabric/route.h"
#include "topologies/topo.h"

static enum upper_verdict sink(void *ctx, struct port *p, const struct mad_pkt *pkt)
{
	(void)ctx;
	(void)p;
	(void)pkt;
	return UPPER_TAKEN;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t dlids[] = { 0xffff, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0xc000 };
	struct port_upper up = { .deliver = sink };
	struct mad_pkt pkt = { 0 };
	struct fabric *f;
	struct port *p;

	if (size < 1)
		return 0;
	f = topo_load_default(0);
	p = &fabric_find(f, "host1")->ports[1];
	port_attach(p, &up);
	fabric_configure(f, p);
	memcpy(pkt.mad, data + 1, MIN(size - 1, sizeof(pkt.mad)));
	pkt.dlid = dlids[data[0] % G_N_ELEMENTS(dlids)];
	pkt.slid = pkt.dlid == 0xffff ? 0xffff : p->lid;
	pkt.dqp = pkt.mad[1] == 0x01 || pkt.mad[1] == 0x81 ? 0 : 1;
	pkt.qkey = 0x80010000;
	pkt.pkey = data[0] & 0x80 ? 0x7fff : 0xffff;
	fabric_send(f, p, &pkt);
	fabric_drain(f);
	fabric_free(f);
	return 0;
}
