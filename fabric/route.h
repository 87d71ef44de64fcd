/* SPDX-License-Identifier: MIT */
/*
 * The packet engine: carries MADs across cables, through switches' linear
 * forwarding tables and the directed-route rules, to the firmware agents and
 * the attached hosts. Packets in flight wait in fabric->events and are
 * processed in order, so nothing recurses through the fabric.
 */
#ifndef IBEMU_FABRIC_ROUTE_H
#define IBEMU_FABRIC_ROUTE_H

#include "fabric/fabric.h"

/* Process every packet in flight; fabric_send() calls it too. */
void fabric_drain(struct fabric *f);
/* Drop every packet in flight (teardown). */
void fabric_events_clear(struct fabric *f);

#endif
