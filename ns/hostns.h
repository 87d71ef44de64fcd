/* SPDX-License-Identifier: MIT */
/*
 * The hosts of `ibemu run --hosts` in the run's init (docs/virtual-cluster.md):
 * for each, a keeper process, in the run's PID namespace, that holds the
 * host's own mount, UTS, IPC and network namespaces: its hostname, only its HCAs
 * in /dev/infiniband and /sys/class/infiniband*, its interfaces cabled to
 * the run's bridge (ipoib.h), System V IPC of its own. The command starts in the first host's;
 * `ibemu exec --host NAME` (and the run's ssh) join another's.
 *
 * Planned in the parent (ns/vhosts.c: it allocates and formats);
 * applied in the init between fork and exec, with system calls only.
 */
#ifndef IBEMU_NS_HOSTNS_H
#define IBEMU_NS_HOSTNS_H

#include <sys/types.h>

struct ipoib_plan;

#define HOSTNS_NAME	64	/* a hostname's length (HOST_NAME_MAX) */
#define HOSTNS_PATH	160
/* Device files a host has that libibverbs and librdmacm open as
 * character devices (nsmode.c): uverbsN and rdma_cm. */
#define HOSTNS_CDEVS	33

/* Its tree's directories and where they go (dev/ on /dev/infiniband,
 * infiniband/ on /sys/class/infiniband, ...), and its fast path socket
 * on the path every host's programs name (vhosts.h). */
#define HOSTNS_BINDS	6

struct hostns_host {
	char name[HOSTNS_NAME + 1];
	/* Its FUSE tree (dev/, infiniband*), mounted by the run; none for
	 * the run's own host, whose tree is in place already. */
	char tree[HOSTNS_PATH];
	char bind[HOSTNS_BINDS][2][HOSTNS_PATH];
	unsigned nbind;
	char cdevs[HOSTNS_CDEVS][HOSTNS_PATH];	/* /dev/infiniband/uverbs0 ... */
	unsigned ncdevs;
	struct ipoib_plan *net;			/* its interfaces */
	pid_t pid;				/* its keeper, once the init made it */
};

/* What a keeper tells the run (on reg_fd, with its credentials): which
 * host it holds, and its pid as the run's PID namespace sees it. */
struct hostns_reg {
	unsigned index;
	int ns_pid;
};

struct hostns_plan {
	int reg_fd;			/* keepers register here */
	char hosts_file[HOSTNS_PATH];	/* bound over /etc/hosts */
	char scratch[HOSTNS_PATH];	/* an empty directory for a moment's mounts */
	unsigned n;
	struct hostns_host h[];
};

/*
 * In the init (in @p, its copy of the plan), once its mount namespace
 * and /proc are made: /etc/hosts, the run's network (the bridge), and a
 * keeper per host (its pid in h[k].pid), each ready before this returns;
 * then the hosts' trees leave the init's own view. 0, or -1 having said
 * why on stderr. Keepers close every fd of the init's but 0-2.
 */
int hostns_start(struct hostns_plan *p);
/* In a child of the init: join the namespaces of the host whose keeper
 * is @pid, staying in the same directory. 0 or -errno. */
int hostns_join(pid_t pid);

#endif
