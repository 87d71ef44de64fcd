/* SPDX-License-Identifier: MIT */
/*
 * Multicast forwarding (mcast.c): a group's tree in the switches'
 * MulticastForwardingTables, for an SA's groups (kernel/sa_mcast.c) and
 * for the RoCE networks' groups, which the QPs attached to an IP
 * multicast address make (docs/roce.md "Multicast").
 */
#ifndef IBEMU_FABRIC_MCAST_H
#define IBEMU_FABRIC_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define FABRIC_MLID_FIRST	0xc000	/* IBA 4.1.1 */
#define FABRIC_MCAST_MLIDS	1024	/* the most any MFT here holds */

/* Rewrites every switch's entry for @mlid on the networks of its kind
 * (@eth_net: the RoCE ones, else the InfiniBand ones): a tree by breadth
 * from the switch of the first member, at each switch the ports toward
 * a member (its own cable, a child whose subtree has one, the parent
 * when some member is outside it). No members: the entries cleared.
 * @members: a group's array, each element beginning with its port
 * (struct port *). */
void fabric_mcast_program(struct fabric *f, uint16_t mlid, bool eth_net, const GArray *members);

/* A multicast GID: IPv6 multicast (ff00::/8) or IPv4-mapped 224.0.0.0/4. */
bool fabric_gid_is_mcast(const uint8_t gid[16]);

/* RoCE port @p has one more QP attached to @mgid: the group of its
 * network gets an MLID and @p its tree. -1 when no MLID is left. */
int fabric_roce_mcast_join(struct fabric *f, struct port *p, const uint8_t mgid[16]);
/* One QP less; the last takes @p out of the group (and the group away). */
void fabric_roce_mcast_leave(struct fabric *f, struct port *p, const uint8_t mgid[16]);
/* The MLID a packet to @mgid from @from travels on, or 0 (no member). */
uint16_t fabric_roce_mcast_mlid(struct fabric *f, const struct port *from, const uint8_t mgid[16]);
/* Every RoCE group's tree again (a link changed). */
void fabric_roce_mcast_reprogram(struct fabric *f);
void fabric_roce_mcast_free(struct fabric *f);

#endif
