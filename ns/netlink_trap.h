/* SPDX-License-Identifier: MIT */
/*
 * The netlink trap (docs/verbs.md "Discovery"): libibverbs and librdmacm
 * ask the kernel's RDMA netlink first and scan sysfs only when that socket
 * cannot be opened; a kernel with ib_core (or one that loads it on that
 * socket) would hide the emulated devices. A seccomp filter makes
 * socket(AF_NETLINK, *, NETLINK_RDMA) fail with EPROTONOSUPPORT, as on a
 * kernel without ib_core, for the calling process and all it starts
 * (inherited across fork and exec, static binaries too).
 */
#ifndef IBEMU_NS_NETLINK_TRAP_H
#define IBEMU_NS_NETLINK_TRAP_H

/* Async-signal-safe (for between fork and exec): 0 or -errno. Sets
 * no_new_privs only where installing needs it (no CAP_SYS_ADMIN in the
 * user namespace). */
int netlink_trap_install(void);

#endif
