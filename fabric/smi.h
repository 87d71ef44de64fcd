/* SPDX-License-Identifier: MIT */
/*
 * Directed-route SMP processing (IBA vol 1 14.2.2, C14-9 outgoing and
 * C14-13 returning), as pure functions over the 256-byte SMP. They update
 * hop_ptr and return_path as the rules say and tell the caller what to do;
 * route.c does it. docs/umad.md §5.3 lists the same rules. The SMP is a
 * MAD_BUF (fabric/packet.h): struct umad_smp is laid over it.
 */
#ifndef IBEMU_FABRIC_SMI_H
#define IBEMU_FABRIC_SMI_H

#include <stdbool.h>
#include <stdint.h>

enum smi_action {
	SMI_DISCARD,
	SMI_FORWARD,	/* send out of port *out */
	SMI_LOCAL,	/* give to the SMA (requests) or the SM (responses) */
	SMI_LID_ROUTE,	/* LID-route to *out (DrSLID or DrDLID) */
	SMI_REPLY_LID,	/* responder: LID-route back to the request's SLID */
};

/* A DR SMP arrived on @in_port of a node with @nports ports. */
enum smi_action smi_recv(uint8_t *smp, bool is_switch, unsigned in_port,
			 unsigned nports, unsigned *out);
/*
 * The host attached at @port originates a DR request (its DrSLID is the
 * permissive LID). DISCARD here is the kernel's write() EINVAL.
 */
enum smi_action smi_send_request(uint8_t *smp, bool is_switch, unsigned port,
				 unsigned nports, unsigned *out);
/*
 * A host or firmware agent at @port sends a returning (D bit set) SMP:
 * C14-13 as the kernel applies it when sending. DISCARD here is the
 * kernel's write() EINVAL.
 */
enum smi_action smi_send_returning(uint8_t *smp, bool is_switch, unsigned port,
				   unsigned nports, unsigned *out);
/*
 * Turn a request handled here, which arrived on @port, into its response
 * (sets the D bit) and route it back. @arrived_by_lid: the request reached
 * us LID-routed (DrDLID leg).
 */
enum smi_action smi_send_response(uint8_t *smp, bool is_switch, unsigned port,
				  unsigned nports, bool arrived_by_lid,
				  unsigned *out);

#endif
