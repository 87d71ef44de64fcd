/* SPDX-License-Identifier: MIT */
/*
 * `ibemu run --hosts NAME=NODE,...`: a virtual cluster (docs/virtual-cluster.md).
 * Each host is CAs of the fabric with a view of its own: its hostname, its
 * HCAs alone under /dev/infiniband and /sys/class/infiniband* (numbered
 * from ibemu0, umad0, uverbs0), its interfaces with its ports' addresses,
 * cabled to one bridge; the rest of the machine shared. The first host is
 * the run's own (its CAs are what --attach would name) and runs the
 * command; the others are attached here as a remote host's are
 * (socket/attach.h), their trees mounted under /dev/.ibemu/hosts for their
 * keepers to bind (hostns.h). /dev/.ibemu/bin/ssh is this ibemu: `ssh
 * HOST CMD` runs CMD on HOST, so MPI launchers work unchanged.
 */
#ifndef IBEMU_NS_VHOSTS_H
#define IBEMU_NS_VHOSTS_H

#include <glib.h>

#include "ctl/ctl.h"

/* Where a run keeps the hosts' trees, sockets, scratch and ssh. */
#define VHOSTS_DIR	"/dev/.ibemu"
#define VHOSTS_BIN	VHOSTS_DIR "/bin"
/* Each host's fast path socket, bound here in its mount namespace: the
 * $IBEMU_FAST of every program on every host. One path for all, as
 * launchers pass their environment on to the ranks they start (MPICH's
 * hydra passes all of it): a host's own socket named there would be
 * another host's on the next. */
#define VHOSTS_FAST	VHOSTS_DIR "/fast/self"
/* At most this many hosts in a run (one keeper process each). */
#define VHOSTS_MAX	256

struct vhosts;

/* Parse @spec; NULL with @err saying what is wrong. */
struct vhosts *vhosts_parse(const char *spec, GError **err);
/* The first host's nodes (NULL-terminated, vhosts' own): the run's --attach. */
char **vhosts_first_nodes(struct vhosts *vh);

/*
 * In the run's mount namespace, its /dev made: the other hosts attached
 * through @att, their trees mounted, /etc/hosts and ssh prepared. @hw is
 * the run's own host's ports and @ipoib its interfaces' IPoIB,
 * @fast_sock its fast path; @env gets the hosts for `ibemu ctl hosts`.
 * 0, or -1 with @err.
 */
struct attach_owner;
struct host;
struct ipoib_links;
int vhosts_setup(struct vhosts *vh, struct attach_owner *att, struct host *hw,
		 struct ipoib_links *ipoib, const char *fast_sock, struct ctl_env *env,
		 GError **err);
/* @envp with the run's ssh (VHOSTS_BIN) first on PATH, unless it is on it
 * (g_environ_setenv's). */
char **vhosts_path(char **envp);
/* The init's plan (nsinit_spawn), then: the init has it (our copy of
 * its registration socket closes), and: it is ready (their pids read). */
struct hostns_plan *vhosts_plan(struct vhosts *vh);
void vhosts_spawned(struct vhosts *vh);
/* ... and their InfiniBand interfaces taken (ns/ipoib.h ipoib_tap_open)
 * and carried over the fabric. */
void vhosts_ready(struct vhosts *vh);
/* Unmount the trees and free; before attach_owner_free(). */
void vhosts_free(struct vhosts *vh);

#endif
