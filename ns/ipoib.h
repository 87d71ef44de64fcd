/* SPDX-License-Identifier: MIT */
/*
 * The run's network (`ibemu run --ipoib`, docs/rdmacm.md "Interfaces"):
 * a network namespace of the run's own, with lo up and one interface per
 * port of the run's HCAs, named ib0, ib1, ... in port order as IPoIB names
 * them, carrying the port's IPv4 address (/16, the default plan's port
 * plane) and fe80::GUID, the addresses the connection manager maps to that
 * port. Programs that find RDMA devices through their interfaces
 * (libfabric's verbs provider: getifaddrs, then rdma_bind_addr on each
 * address) see them as on a host with IPoIB; TCP between the addresses
 * works, as all are local. Nothing else reaches the network from the run.
 *
 * One host's interfaces carry no IPoIB traffic through the fabric: they
 * are dummy devices (a bridge with no ports where the kernel has no
 * dummy driver), and their state does not follow the port's. A virtual
 * cluster's hosts' do (ipoib_tap_open, docs/ipoib.md).
 *
 * Planned in the parent (it reads the host's ports and allocates);
 * applied in the run's init between fork and exec, with system calls and
 * stack buffers only.
 */
#ifndef IBEMU_NS_IPOIB_H
#define IBEMU_NS_IPOIB_H

#include <stdint.h>

struct host;
struct ipoib_plan;

/* The interfaces for @h's CA ports (none but lo when it has none, or @h
 * is NULL: an attached host's, whose interfaces are not made yet). */
struct ipoib_plan *ipoib_plan(const struct host *h);
void ipoib_plan_free(struct ipoib_plan *p);
/* run --hosts: host number @index's, a RoCE interface a veth whose other
 * end (h<index>p<k>) is in the run's network; @index -1: as ipoib_plan. */
struct ipoib_plan *ipoib_plan_host(const struct host *h, int index);
/* The first IPv4 address of @p (host order), or 0. */
uint32_t ipoib_plan_ip4(const struct ipoib_plan *p);

/*
 * In a new network namespace of the caller's: lo up, the interfaces of
 * @p, and /sys/class/net showing them (a sysfs of this namespace mounted
 * on @scratch, its net directories bound over /sys's, @scratch left as it
 * was). Returns 0, or -errno with *@what naming the step that failed.
 */
int ipoib_apply(const struct ipoib_plan *p, const char *scratch, const char **what);

/*
 * run --hosts (docs/virtual-cluster.md): the run's network is a switch,
 * a bridge with lo beside it and no address, made in a new network
 * namespace by ipoib_fabric() (*@bridge its index); each host has a
 * namespace of its own (ipoib_apply_host(), from the run's network),
 * where its RoCE ports' interfaces are veths cabled to that bridge and
 * its InfiniBand ports' TAP devices (below). The hosts reach
 * each other's addresses as a cluster's nodes do over IPoIB, and see no
 * one else's interfaces. Same returns as ipoib_apply().
 */
int ipoib_fabric(int *bridge, const char **what);
int ipoib_apply_host(const struct ipoib_plan *p, int bridge, const char *scratch,
		     const char **what);
/*
 * A host's InfiniBand interfaces are not veths but TAP devices, which
 * the emulator carries over the fabric (kernel/ipoib_link.h): the host
 * makes them, persistent, and the emulator takes interface @name of
 * process @pid's network: its fd (non-blocking), the device now gone
 * when the fd closes; or -errno. Where the kernel has no tun driver the
 * host makes a veth as for a RoCE port, and this fails.
 */
int ipoib_tap_open(int pid, const char *name);
/* Interface @name of process @pid's network takes MTU @mtu (IPoIB's mode
 * changed): 0 or -errno. */
int ipoib_tap_set_mtu(int pid, const char *name, unsigned mtu);
/* A new interface @name of process @pid's network (a child, ibN.8001):
 * a TAP device, up, of MTU @mtu, gone when the fd returned (non-blocking)
 * closes; or -errno. */
int ipoib_tap_add(int pid, const char *name, unsigned mtu);

#endif
