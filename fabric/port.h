/* SPDX-License-Identifier: MIT */
/*
 * Port behaviour that is not one attribute: defaults per node type, the
 * logical and physical link state machine as a SubnSet(PortInfo) drives it
 * (IBA 7.2 and 14.2.5.6), and the rate as the kernel's sysfs shows it.
 */
#ifndef IBEMU_FABRIC_PORT_H
#define IBEMU_FABRIC_PORT_H

#include <stddef.h>

#include "fabric/fabric.h"

void port_init_defaults(struct port *p);

/* Can this port move to @state (PortInfo:PortState, 0 = no change)? */
bool port_state_change_valid(const struct port *p, unsigned state);
/* Apply a valid state change; a link that goes Down retrains to Init. */
void port_set_state(struct port *p, unsigned state);
/* PortPhysicalState 2 (Polling: enable) or 3 (Disabled); 0 = no change. */
bool port_phys_change_valid(const struct port *p, unsigned phys);
void port_set_phys(struct port *p, unsigned phys);

/* The control plane pulls or restores the cable at @p (both ends). */
void port_cable_set(struct port *p, bool up);
/* Power a node off (it answers nothing; its cables go dark) or on. */
void node_power(struct node *n, bool on);

/* Tell the attached host (if any) that this port's visible state changed. */
void port_changed(struct port *p);

/* Active rate in deci-Gb/s x width, as kernel sysfs.c:rate_show. */
unsigned port_rate_deci_gbps(const struct port *p);
/* "40 Gb/sec (4X QDR)" without the newline. */
void port_rate_string(const struct port *p, char *buf, size_t len);
unsigned width_lanes(unsigned width_bit);
const char *port_state_name(unsigned state);
const char *phys_state_name(unsigned phys);

/* Does @lid address this port, given its base LID and LMC? */
bool port_owns_lid(const struct port *p, uint16_t lid);

#endif
