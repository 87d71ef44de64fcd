/* SPDX-License-Identifier: MIT */
/*
 * Work in another process's network namespace: sockets and TAP devices
 * stay in the namespace they were made in, and setns(2) moves only the
 * calling thread, so a thread of ours joins it, does the work and ends.
 */
#ifndef IBEMU_NS_NETNS_H
#define IBEMU_NS_NETNS_H

/* Run @fn(@arg) on a thread in the network namespace of process @pid;
 * 0 once it has run, or -errno (no such process, setns refused). */
int netns_run(int pid, void (*fn)(void *arg), void *arg);

#endif
