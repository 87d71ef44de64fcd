/* SPDX-License-Identifier: MIT */
/*
 * Traps that nodes raise on their own (IBA 14.2.5.1, Notice): a switch
 * whose port changes link state sets SwitchInfo:PortStateChange and sends
 * Trap 128 to its SM LID, as hardware does; an SMP with a wrong M_Key makes
 * the port send Trap 256; the SM's TrapRepress is taken
 * by the SMA. Traps are sent once (not repeated until repressed).
 */
#ifndef IBEMU_FABRIC_TRAP_H
#define IBEMU_FABRIC_TRAP_H

#include "fabric/fabric.h"

void trap_link_state_changed(struct port *p);
/* Trap 256, Bad M_Key: @req failed the M_Key check of @ip's PortInfo
 * (IBA 14.2.4.1); @in is the port it arrived on. */
void trap_bad_mkey(struct port *ip, struct port *in, const uint8_t *req);

#endif
