/* SPDX-License-Identifier: MIT */
/*
 * MAD agents and the per-port registration tables (docs/umad.md §4.1-4.3):
 * (class version, class[, OUI]) -> method -> agent, shared by every file
 * open on the port, so one process's registration blocks another's.
 */
#ifndef IBEMU_KERNEL_AGENT_H
#define IBEMU_KERNEL_AGENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct umad_file;

struct umad_agent {
	struct umad_file *file;
	unsigned id;		/* index in the file's agent table */
	uint32_t hi_tid;	/* upper 32 TID bits of this agent's requests */
	uint8_t qpn, mgmt_class, class_version, rmpp_version;
	uint32_t oui, flags;
	uint8_t method_mask[16];	/* bit m = method m */
	GQueue sends;		/* struct umad_send *, awaiting responses */
};

struct agent_table;	/* one per port */

struct agent_table *agent_table_new(void);
void agent_table_free(struct agent_table *t);

struct agent_reg {
	uint32_t qpn;
	uint8_t mgmt_class, class_version, rmpp_version;
	uint32_t oui, flags;
	uint8_t method_mask[16];
};

/* The checks of docs/umad.md §4.3 that depend on the request alone; 0 or -errno. */
int agent_reg_validate(const struct agent_reg *r, bool v2);
/* Claim the methods for @a; -EINVAL on a method conflict, -ENOMEM if the
 * vendor class has no free OUI slot. */
int agent_table_add(struct agent_table *t, struct umad_agent *a);
void agent_table_remove(struct agent_table *t, struct umad_agent *a);
/* The agent that receives an unsolicited MAD, or NULL. */
struct umad_agent *agent_table_find(struct agent_table *t, uint8_t mgmt_class,
				    uint8_t class_version, uint8_t method,
				    uint32_t oui);

bool mgmt_class_is_rmpp(uint8_t mgmt_class);
bool mgmt_class_is_vendor2(uint8_t mgmt_class);

#endif
