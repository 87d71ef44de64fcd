/* SPDX-License-Identifier: MIT */
/*
 * The Subnet Administrator of a fabric configured without a subnet
 * manager (`--configured`; docs/umad.md "The SA without an SM"): what
 * opensm's SA answers, answered by the emulator at the SM's port, for
 * saquery, the rdma_cm, ibacm, perftest -g and monitoring agents. It is a
 * client of the host after the MAD layer: a program that registers for
 * the SA class there (opensm) answers instead, as the SA it is.
 *
 * It answers NodeRecord, PortInfoRecord, SwitchInfoRecord, LinkRecord,
 * GUIDInfoRecord, P_KeyTableRecord, LinearForwardingTableRecord,
 * MulticastForwardingTableRecord, SLtoVL and VLArbitration table records,
 * PathRecord (Get, GetTable),
 * MCMemberRecord (joins and leaves, which make and drop groups and
 * program the switches' MulticastForwardingTables), ServiceRecord
 * (register, query, delete), InformInfo (subscriptions, kept, listed,
 * and the traps the SMAs send reported to them), MultiPathRecord,
 * SMInfoRecord and ClassPortInfo; any other attribute gets status 0x000C.
 */
#ifndef IBEMU_KERNEL_SA_H
#define IBEMU_KERNEL_SA_H

#include <infiniband/sa.h>

#include "kernel/host.h"

struct sa;

struct sa *sa_new(struct host *h);
void sa_free(struct sa *sa);

/*
 * The PathRecord an SM gives from CA port @s to CA port @d with @pkey
 * (IBA 15.2.5.16): LIDs, GIDs, the MTU and rate of the narrowest link on
 * the way the switches' tables give, the subnet timeout as the packet
 * lifetime, SL 0. False when a packet would not get there (a link that
 * is not Active, no route, a P_Key the far port lacks).
 */
bool sa_path(struct port *s, struct port *d, uint16_t pkey, struct ibv_path_record *pr);
/* IB rate encoding (IBA Table 205) of a link's active rate. */
uint8_t sa_rate_code(const struct port *p);

#endif
