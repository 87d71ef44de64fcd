/* SPDX-License-Identifier: MIT */
/*
 * The Subnet Management Agent in every node's firmware: answers SubnGet and
 * SubnSet for the attributes of docs/umad.md §5.5 from the typed node and port
 * state, LID-routed and directed-route alike.
 */
#ifndef IBEMU_FABRIC_SMA_H
#define IBEMU_FABRIC_SMA_H

#include "fabric/fabric.h"

enum sma_result {
	SMA_REPLY,	/* @resp holds the GetResp to send back */
	SMA_CONSUMED,	/* taken, no reply (TrapRepress, M_Key violation) */
	SMA_PASS,	/* not for firmware: SMInfo, Trap, responses */
};

/* @in: the port the SMP arrived on (port 0 when a switch's host sent it). */
enum sma_result sma_process(struct node *n, struct port *in,
			    const uint8_t *req, uint8_t *resp);

/* The name of an SMP attribute, for logs; NULL if not one we know. */
const char *sma_attr_name(uint16_t attr_id);

#endif
