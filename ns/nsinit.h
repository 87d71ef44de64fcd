/* SPDX-License-Identifier: MIT */
/*
 * The command of `ibemu run` in a PID namespace of its own, under an init
 * of ours: whatever the command starts, directly or through `ibemu exec`,
 * ends with the run, even when ibemu itself is SIGKILLed or crashes (the
 * init dies with it, PR_SET_PDEATHSIG, and the kernel ends every process
 * of a namespace whose init is gone). An orphaned opensm once spun on the
 * vanished devices writing 300 MB of log in 19 s.
 *
 * The init forwards SIGTERM and SIGHUP to the command, reaps every orphan,
 * and once the command has exited sends SIGTERM to all that is left, waits
 * for them at most 2 s, and exits with the command's status (128 + N for
 * signal N): the kernel kills what remains.
 */
#ifndef IBEMU_NS_NSINIT_H
#define IBEMU_NS_NSINIT_H

#include <glib.h>
#include <sys/types.h>

struct hostns_plan;
struct ipoib_plan;

/*
 * Start @argv (searched in PATH) with @envp under a new init; returns the
 * init's pid (a child of ours), or -1 with @err set. The caller's own PID
 * namespace does not change. With @net, the init makes the run's network
 * first (ipoib.h); with @hosts, the hosts' namespaces, and the command
 * starts on the first (hostns.h); if it cannot, it says why and the run
 * exits with 1.
 * *@ready reads end of file once the init has made its namespaces (or
 * died): until then, joining them (`ibemu exec`) would join the caller's.
 */
pid_t nsinit_spawn(char **argv, char **envp, const struct ipoib_plan *net,
		   struct hostns_plan *hosts, int *ready, GError **err);

#endif
