/* SPDX-License-Identifier: MIT */
/*
 * What a run keeps to itself besides its devices and sysfs: what its
 * programs write under /run, /var/log and /var/cache (opensm's log and
 * guid2lid cache, ibacm's sockets, pid files). Each gets a writable
 * overlay in the run's mount namespace: the machine's files stay
 * readable, what is written goes to a tmpfs that ends with the run
 * (README "Running commands"). Mounts below those directories (/run/user/N,
 * /run/lock) are moved onto the overlay, so they are still there.
 *
 * Planned in the parent (it reads /proc/self/mountinfo and allocates);
 * applied in the run's init between fork and exec, with mkdir and mount
 * only.
 */
#ifndef IBEMU_NS_NSPRIVATE_H
#define IBEMU_NS_NSPRIVATE_H

struct ns_private;

/* The plan for this process's mounts as they are now; a tmpfs mounted on
 * @scratch will hold the layers (a directory that something else is
 * mounted over afterwards: the run's init uses /proc). */
struct ns_private *ns_private_plan(const char *scratch);
/*
 * Apply it, in a mount namespace of the caller's own (private). A
 * directory that cannot be overlaid stays the machine's, and one line
 * says so on stderr.
 */
void ns_private_apply(const struct ns_private *p);

#endif
