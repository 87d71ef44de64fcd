/* SPDX-License-Identifier: MIT */
/*
 * A verbs context's inbox (docs/verbs.md "The direct path"): rings into
 * which other contexts write their packets for it themselves, past the
 * daemon, while the daemon has found nothing on their way that needs it
 * (no fault rule, no capture, links and routes as they were when it said
 * yes). One memfd the daemon makes when a first sender asks for the
 * context, mapped by the context and by each sender the daemon gives it
 * to; the context's main ring (verbs_ring.h) stays the daemon's.
 *
 * Each of VERBS_INBOX_SUBS sub-rings has one writer at a time: one
 * sender context, on one path (source port, destination LID, SL), which
 * the daemon binds it to. The sender writes records as the daemon would
 * have delivered them (port, slid, P_Key and its index as the receiving
 * port sees them: the daemon says them in the grant) at head, the
 * context reads them at tail, as in verbs_ring.h (indexes only grow; a
 * record never wraps; a PAD record or a short gap fills an end).
 *
 * Grants: the daemon writes @grant (nonzero: a generation of its own)
 * when it binds a sub-ring, and 0 to take it back. A sender sets @busy,
 * then reads @grant: the one it holds, it writes and counts, then clears
 * @busy; any other, it writes nothing here and asks the daemon. The
 * daemon, having cleared @grant, waits until @busy is clear: from then on
 * nothing more comes in that way, and @packets/@dwords (the sender's
 * count, which the PMA counters of every port on the path take) are
 * whole. Sequentially consistent, as verbs_ring.h's flags.
 *
 * Wake-ups: the context's reader sets @sleeping before it waits; a sender
 * that finds it set clears it and writes the eventfd the daemon gave with
 * the inbox.
 *
 * Header only, for both ends; all in the host's byte order.
 */
#ifndef IBEMU_LIB_VERBS_INBOX_H
#define IBEMU_LIB_VERBS_INBOX_H

#include <stdint.h>

#include "lib/verbs_ring.h"

#define VERBS_INBOX_SUBS	8
#define VERBS_SUB_DATA		(1u << 18)	/* a power of two: 256 KiB */

struct verbs_sub {
	uint64_t head;		/* the sender's */
	uint8_t pad0[56];
	uint64_t tail;		/* the receiving context's */
	uint8_t pad1[56];
	uint32_t grant;		/* the daemon's: 0, or the binding's generation */
	uint32_t busy;		/* the sender's: writing */
	uint64_t packets, dwords;	/* the sender's: what it wrote, for the PMA */
	uint8_t pad2[4096 - 152];
	uint8_t data[VERBS_SUB_DATA];
};
_Static_assert(sizeof(struct verbs_sub) == 4096 + VERBS_SUB_DATA, "a sub-ring's layout");

struct verbs_inbox {
	uint32_t sleeping;	/* the context's reader waits on its eventfd */
	uint32_t active;	/* the daemon's: sub-rings ever bound, a bit each */
	uint8_t pad[4096 - 8];
	struct verbs_sub sub[VERBS_INBOX_SUBS];
};

#define VERBS_INBOX_BYTES	sizeof(struct verbs_inbox)

/* FAST_VDIRECT's answer (lib/fast_wire.h): the sub-ring @sub of inbox
 * @peer (FAST_VINBOX maps it) while its grant is @grant; the fields of
 * each record written there as the daemon would have set them. */
struct verbs_direct_grant {
	uint64_t peer;
	uint32_t grant;
	uint8_t sub, rx_port;
	uint16_t rx_pkey_index;
	uint16_t slid, pkey;
	uint32_t reserved;
};

#endif
