/* SPDX-License-Identifier: MIT */
/*
 * The Performance Management Agent in every node's firmware (class 0x04,
 * umad-spec §5.6): ClassPortInfo, PortCounters and PortCountersExtended,
 * Get and Set (clear by CounterSelect), PortSelect 0xFF on switches.
 */
#ifndef IBEMU_FABRIC_PMA_H
#define IBEMU_FABRIC_PMA_H

#include "fabric/fabric.h"

/* Answer a PerfMgt Get or Set that arrived at @in; fills @resp. */
void pma_process(struct node *n, struct port *in, const uint8_t *req,
		 uint8_t *resp);

/* Count @packets of @dwords 32-bit words on SL @sl leaving @out for @in. */
void pma_count(struct port *out, struct port *in, unsigned packets,
	       unsigned dwords, unsigned sl, bool multicast);

#endif
