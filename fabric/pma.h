/* SPDX-License-Identifier: MIT */
/*
 * The Performance Management Agent in every node's firmware (class 0x04,
 * IBA 16.1; `ibemu ctl counters`, README "Faults, events and the control
 * plane"): ClassPortInfo, PortCounters and
 * PortCountersExtended (Get, and Set to clear by CounterSelect),
 * PortXmitDataSL, PortRcvDataSL and the error details; PortSelect 0xFF
 * (all ports) on switches.
 */
#ifndef IBEMU_FABRIC_PMA_H
#define IBEMU_FABRIC_PMA_H

#include <infiniband/mad.h>

#include "fabric/fabric.h"

/* Answer a PerfMgt Get or Set that arrived at @in; fills @resp. */
void pma_process(struct node *n, struct port *in, const uint8_t *req,
		 uint8_t *resp);

/*
 * Ask @p's own PMA for @attr (PortCounters or PortCountersExtended) with
 * PortSelect = @p, as the kernel's sysfs asks the HCA (get_perf_mad():
 * process_mad, nothing on the wire), and read @field of the answer into
 * @val. False if the PMA answered with a status.
 */
bool pma_query(struct port *p, uint16_t attr, enum MAD_FIELDS field, uint64_t *val);

/* Count @packets of @dwords 32-bit words on SL @sl leaving @out for @in. */
void pma_count(struct port *out, struct port *in, unsigned packets,
	       unsigned dwords, unsigned sl, bool multicast);
/* The same, of @words in all (packets of different sizes). */
void pma_count_words(struct port *out, struct port *in, uint64_t packets, uint64_t words,
		     unsigned sl, bool multicast);

/*
 * The counters of PortCounters (IBA Table 247), in CounterSelect bit
 * order: where a port keeps each, its width on the wire (it saturates
 * there), and its libibmad field. `ibemu ctl counters` names them so.
 */
struct counter_field {
	const char *name;	/* as IBA and perfquery name it */
	glong offset;		/* into struct port_counters */
	bool wide;		/* uint64_t there (else uint32_t) */
	glong base;		/* wide: the PortCounters view is this less base */
	unsigned bits;		/* width in PortCounters */
	enum MAD_FIELDS field;
	uint64_t max;		/* what a port can hold */
};
extern const struct counter_field counter_fields[];
extern const unsigned counter_fields_n;
/* By name, any case; NULL if none. */
const struct counter_field *counter_field_find(const char *name);
uint64_t counter_get(const struct port_counters *c, const struct counter_field *f);
/* Set it to @v, or add @v (saturating at f->max). */
void counter_change(struct port_counters *c, const struct counter_field *f, bool set, uint64_t v);

#endif
