/* SPDX-License-Identifier: MIT */
/*
 * The Congestion Control agent (IBA Annex A10), in firmware on switches
 * (port 0) and CA ports: cc.c.
 */
#ifndef IBEMU_FABRIC_CC_H
#define IBEMU_FABRIC_CC_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "fabric/fabric.h"

/* A CC MAD (Get or Set) to the agent of port @p: true with the answer in
 * @resp, false when it is dropped (a CC_Key violation). */
bool cc_process(struct port *p, const uint8_t *req, uint8_t *resp);
/* The agent's state let go (with its port). */
void cc_free(struct port *p);

#endif
