/* SPDX-License-Identifier: MIT */
/*
 * The run's network watched for addresses (docs/roce.md, "Addresses"): a
 * RoCE port's IPv4 GIDs, and the address the RDMA CM maps to it, follow
 * its interface's IPv4 address as `ip addr` changes it, as the kernel's
 * roce_gid_mgmt follows inetaddr events; each change raises GID_CHANGE.
 * A port has up to ROCE_IP4_SLOTS IPv4 addresses, each a pair of GIDs
 * where the kernel would put it (fabric/port.h port_set_roce_ip4).
 */
#ifndef IBEMU_NS_NETWATCH_H
#define IBEMU_NS_NETWATCH_H

#include <sys/types.h>

struct host;
struct netwatch;

/* Watch the network namespace of process @pid (the run's init) for @h's
 * RoCE ports; NULL (said in the log) where it cannot: the GIDs stay. */
struct netwatch *netwatch_new(pid_t pid, struct host *h);
void netwatch_free(struct netwatch *w);

#endif
