/* SPDX-License-Identifier: MIT */
/*
 * Many hosts over ssh (docs/many-hosts.md): the fast path's channels
 * (abi/fast_wire.h), each a SOCK_SEQPACKET socket whose messages may carry
 * an fd, carried over one byte stream: ssh's standard input and output
 * between `ibemu run --remote ssh://...` on the attaching host and
 * `ibemu bridge NAME` beside the owning emulator.
 *
 * The stream is a sequence of frames: a struct mux_hdr (little-endian),
 * then `len` bytes of a datagram, then for MUX_FD_MEMFD `aux` bytes of the
 * memfd that came beside it. Each side first sends MUX_HELLO. Channel 0 is
 * there from the start: on the owner's side the bridge's connection to the
 * emulator's fast socket, on the attaching side the attachment's channel
 * (FAST_HOST's). Every other channel is a socket passed beside a message
 * (a data socket in FAST_OPEN's answer, a connection in FAST_ADOPT): the
 * side that received it names a new channel (MUX_FD_NEW; the attaching
 * side's numbers are even, the owner's odd) and the other side passes on
 * one end of a new socketpair in its place. A socket that is the far end
 * of a channel already (a data socket passed back in FAST_ATTACH) is sent
 * as that channel (MUX_FD_CHAN), and the other side passes on the socket
 * it holds for it, so the emulator knows its own data socket again.
 *
 * The carried messages are as the emulator writes them, in its byte order:
 * both hosts must share one (checked at hello).
 *
 * Flow: a side reads a channel's datagrams only while less than
 * MUX_WINDOW bytes of it are unacknowledged; the other side acknowledges
 * (MUX_ACK) what it has delivered to the channel's socket, so a program
 * that reads nothing stops its own channel and no other, and what waits
 * on either side is bounded.
 */
#ifndef IBEMU_LIB_MUX_WIRE_H
#define IBEMU_LIB_MUX_WIRE_H

#include <stdint.h>

#define MUX_VERSION	1
#define MUX_BYTE_ORDER	0x01020304u	/* MUX_HELLO's chan, in the sender's order */
#define MUX_WINDOW	(4u << 20)	/* unacknowledged bytes per channel */
#define MUX_FRAME_MAX	(1u << 30)	/* a frame's length, header included */

enum mux_kind {
	MUX_HELLO = 1,	/* aux: MUX_VERSION; chan: MUX_BYTE_ORDER, host order */
	MUX_MSG = 2,	/* a datagram for chan's socket */
	MUX_CLOSE = 3,	/* chan's socket was closed on the sender's side */
	MUX_ACK = 4,	/* aux: bytes of chan's frames delivered */
};

enum mux_fd {
	MUX_FD_NONE = 0,
	MUX_FD_MEMFD = 1,	/* aux: the memfd's length; its bytes follow */
	MUX_FD_NEW = 2,		/* aux: the new channel its socket is */
	MUX_FD_CHAN = 3,	/* aux: the channel whose far end it is */
};

struct mux_hdr {
	uint32_t chan;
	uint32_t len;		/* the datagram's bytes, following */
	uint32_t aux;
	uint8_t kind;		/* enum mux_kind */
	uint8_t fd;		/* enum mux_fd */
	uint16_t reserved;
};

#endif
