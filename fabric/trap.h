/* SPDX-License-Identifier: MIT */
/*
 * Traps that nodes raise on their own (IBA 14.2.5.1, Notice): a switch
 * whose port changes link state sets SwitchInfo:PortStateChange and sends
 * Trap 128 to its SM LID, as hardware does; the SM's TrapRepress is taken
 * by the SMA. Traps are sent once (not repeated until repressed).
 */
#ifndef IBEMU_FABRIC_TRAP_H
#define IBEMU_FABRIC_TRAP_H

#include "fabric/fabric.h"

void trap_link_state_changed(struct port *p);

#endif
