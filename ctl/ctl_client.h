/* SPDX-License-Identifier: MIT */
/*
 * The control socket's client side: the protocol is in ctl/ctl.c.
 */
#ifndef IBEMU_CTL_CTL_CLIENT_H
#define IBEMU_CTL_CTL_CLIENT_H

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * Send @argv to the emulator at @path (its control socket, or a fast
 * socket: FAST_CTL, as in `ibemu run --remote`) and wait
 * at most @timeout_s for the whole answer: 0 (the command succeeded) or 1
 * (it failed), its text in *answer; -1 with @err when no complete answer
 * came (none, cut short, timed out).
 */
#define CTL_TIMEOUT_S	30
int ctl_exchange(const char *path, int argc, char **argv, unsigned timeout_s,
		 char **answer, GError **err);
/* The same, printing the answer (stdout) or the error (stderr): exit status. */
int ctl_client(const char *path, int argc, char **argv, unsigned timeout_s);
/* `wait sm-up|active [--timeout S]`: ask again while the emulator says
 * "not yet" (ctl/ctl_show.c), for at most S s (default 60): 0 once
 * it says up, 1 with the last reason when time ran out. */
int ctl_client_wait(const char *path, int argc, char **argv, unsigned timeout_s);
/* A Unix socket of @type connected to @path, each send and receive
 * bounded by @timeout_s (0: not); -1 with @err ("cannot reach the
 * emulator at PATH: why"). Also the fast socket's (socket/remote.c). */
int ctl_connect(const char *path, int type, unsigned timeout_s, GError **err);
/*
 * The pid of the process that listens at @path (SO_PEERCRED: a listener's
 * credentials are taken at listen(2)), or -1 with @err when none does.
 * *@handover (if given) says whether it is a hand-over socket (SOCK_
 * SEQPACKET: an attached host's, `ibemu start --remote`, whose connections
 * reach the owning emulator, socket/remote.h): its commands are the owner's,
 * its pid is the attached host's daemon.
 */
pid_t ctl_listener_pid(const char *path, bool *handover, GError **err);
/* The answer of a command that succeeded, else NULL and @err. */
char *ctl_ask(const char *path, int argc, char **argv, GError **err);

#endif
