/* SPDX-License-Identifier: MIT */
/*
 * `ibemu run --remote WHERE --attach NODE...`: this run's host is a host
 * of another emulator's fabric (docs/many-hosts.md). It asks that emulator
 * for the nodes (FAST_HOST on its fast socket), mirrors the mock sysfs it
 * serves for them into a vfs of our own (each attribute read there, live)
 * and hands our programs' fast path connections over to it, on which the
 * library reaches the umad files. The attachment ends when we do.
 */
#ifndef IBEMU_SOCKET_REMOTE_H
#define IBEMU_SOCKET_REMOTE_H

#include <glib.h>

#include "dev/vfs.h"

struct remote;

/* WHERE: an emulator's name on this host, unix:PATH of its fast socket
 * (one bind-mounted into a container, say), or ssh://[user@]host[:port]/
 * NAME (socket/remote_ssh.h). NULL with @err (one line, the emulator's own
 * words when it refused, ssh's when it could not connect). */
struct remote *remote_attach(const char *where, char **nodes, GError **err);
/*
 * Listen on @path: a connection to it is handed to the emulator
 * (FAST_ADOPT), which serves it from then on: no hop through us. In `run
 * --remote` it is our programs' $IBEMU_FAST, REMOTE_FAST_SOCK, in the
 * run's own /dev (a tmpfs of its mount namespace, ns/nsmode.c: it goes
 * with the namespace, also on SIGKILL), listened on inside the namespace
 * once mounted; in `start --remote` our control socket's place, where
 * `ibemu ctl` reaches the emulator's (FAST_CTL). -1 with @err.
 */
#define REMOTE_FAST_SOCK	"/dev/.ibemu-fast"
int remote_listen(struct remote *r, const char *path, GError **err);
/* A connection to the fast socket of WHERE (a name or unix:PATH); -1
 * with @err ("cannot reach the emulator at PATH: why"). */
int remote_connect(const char *where, GError **err);
/* The mirror of its sysfs, built at attach: "infiniband", ... */
struct vfs *remote_vfs(struct remote *r);
/* The attachment's channel: it hangs up when the emulator is gone. */
int remote_lifeline(const struct remote *r);
/* Why the lifeline's watch fired with @cond, for the log (g_free). */
char *remote_gone_why(int fd, GIOCondition cond);
/* The emulator has gone (the lifeline hung up): every call on the umad
 * and verbs files fails EIO from now on, and the reads blocked on them are
 * answered EIO now, before the caller tears the files down. */
void remote_gone(struct remote *r);
void remote_free(struct remote *r);

#endif
