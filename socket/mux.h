/* SPDX-License-Identifier: MIT */
/*
 * The fast path's channels over one byte stream (lib/mux_wire.h): both
 * ends of `--remote ssh://` run this, the attaching host in a child of
 * `ibemu run` (socket/remote.c), the owner's host as `ibemu bridge`
 * (cli/cmd_bridge.c).
 */
#ifndef IBEMU_SOCKET_MUX_H
#define IBEMU_SOCKET_MUX_H

#include <stdbool.h>

/*
 * Carry channel 0 (@first, a connected SOCK_SEQPACKET socket) and every
 * channel passed along it over the stream read from @in and written to
 * @out, until channel 0 is closed on either side (0, once what was
 * written has gone) or the stream ends or breaks (-EPIPE, or -EPROTO for
 * a frame that breaks lib/mux_wire.h, said on stderr). Every channel's
 * socket is closed when it returns. @owner: the owner's side (odd
 * channel numbers). Blocks; a process of its own runs it.
 */
int mux_run(int in, int out, int first, bool owner);

#endif
