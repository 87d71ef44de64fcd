/* SPDX-License-Identifier: MIT */
/*
 * An offline stand-in for a subnet manager's first sweep, for users who
 * want LID-routed tools without running one: LIDs for every switch and
 * connected CA port (keeping LIDs the topology gave), min-hop linear
 * forwarding tables, every linked port Active, and the SM LID set to @sm.
 */
#ifndef IBEMU_FABRIC_CONFIGURE_H
#define IBEMU_FABRIC_CONFIGURE_H

#include "fabric/fabric.h"

#define FABRIC_MAX_UCAST_LID 0xbfff	/* 0xc000 and up are multicast */

/* Returns the highest LID assigned. @sm may be NULL (SM LID stays 0).
 * Ports past the 49151 unicast LIDs get none: check fabric_lids_needed(). */
unsigned fabric_configure(struct fabric *f, struct port *sm);
/* Every CA port a RoCE port (PORT_LINK_ETH; docs/roce.md). */
void fabric_set_roce(struct fabric *f);
/* Marks each network (cabled component) with RoCE ports node->eth_net;
 * false with @err when one has InfiniBand CA ports too. */
bool fabric_roce_networks(struct fabric *f, GError **err);
/* Whether any node is on a RoCE network (after fabric_roce_networks). */
bool fabric_has_roce(const struct fabric *f);
/* Configures the RoCE networks alone, as fabric_configure the whole (no
 * SM; LIDs from the top of the unicast range down, which no program
 * sees). fabric_configure leaves them out where there are some. */
unsigned fabric_configure_roce(struct fabric *f);
/* How many LIDs the sweep gives: one per switch, one per cabled CA port. */
unsigned fabric_lids_needed(const struct fabric *f);

#endif
