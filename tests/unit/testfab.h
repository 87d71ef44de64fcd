/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the unit tests: load a fabric from text, capture what
 * reaches a port's host, build directed-route and LID-routed SMPs, and a
 * hand-driven clock.
 */
#ifndef IBEMU_TESTS_TESTFAB_H
#define IBEMU_TESTS_TESTFAB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "fabric/configure.h"
#include "fabric/fabric.h"
#include "fabric/route.h"
#include "topologies/topo.h"

static inline struct fabric *load(const char *text)
{
	GError *err = NULL;
	struct fabric *f = topo_load_string(text, "test.net", TOPO_STRICT, &err);

	if (!f)
		fail_msg("topology: %s", err->message);
	return f;
}

/* A host that records every MAD delivered to it. */
struct capture {
	GArray *pkts;		/* struct mad_pkt */
	bool claim;		/* claim requests (as an agent would) */
};

static inline enum upper_verdict capture_deliver(void *ctx, struct port *p,
						const struct mad_pkt *pkt)
{
	struct capture *c = ctx;

	(void)p;
	g_array_append_val(c->pkts, *pkt);
	return mad_is_response(pkt->mad) || c->claim ? UPPER_TAKEN : UPPER_UNCLAIMED;
}

static inline void capture_attach(struct capture *c, struct port *p)
{
	struct port_upper up = { .deliver = capture_deliver, .ctx = c };

	c->pkts = g_array_new(FALSE, TRUE, sizeof(struct mad_pkt));
	port_attach(p, &up);
}

static inline struct mad_pkt *captured(struct capture *c, unsigned i)
{
	return i < c->pkts->len ? &g_array_index(c->pkts, struct mad_pkt, i) : NULL;
}

/* A DR SMP request: path "0,1,7" style is given as hop ports. */
static inline struct mad_pkt dr_smp(uint8_t method, uint16_t attr, uint32_t mod,
				    unsigned nhops, const uint8_t *hops)
{
	struct mad_pkt p = { 0 };
	unsigned i;

	p.mad[0] = 1;
	p.mad[1] = UMAD_CLASS_SUBN_DIRECTED_ROUTE;
	p.mad[2] = 1;
	p.mad[3] = method;
	p.mad[7] = (uint8_t)nhops;
	mad_set_tid(p.mad, 0x1234);
	p.mad[16] = attr >> 8;
	p.mad[17] = attr & 0xff;
	p.mad[20] = mod >> 24;
	p.mad[21] = (mod >> 16) & 0xff;
	p.mad[22] = (mod >> 8) & 0xff;
	p.mad[23] = mod & 0xff;
	p.mad[32] = p.mad[33] = p.mad[34] = p.mad[35] = 0xff;
	for (i = 0; i < nhops; i++)
		p.mad[128 + 1 + i] = hops[i];
	p.dlid = p.slid = LID_PERMISSIVE;
	return p;
}

static inline struct mad_pkt lid_smp(uint8_t method, uint16_t attr, uint32_t mod,
				     uint16_t slid, uint16_t dlid)
{
	struct mad_pkt p = dr_smp(method, attr, mod, 0, NULL);

	p.mad[1] = UMAD_CLASS_SUBN_LID_ROUTED;
	memset(p.mad + 32, 0, 4);
	p.slid = slid;
	p.dlid = dlid;
	return p;
}

struct test_clock {
	uint64_t now_us;
};

static inline uint64_t test_clock_now(void *ctx)
{
	return ((struct test_clock *)ctx)->now_us;
}

/* The default fabric configured as --configured does (the SM LID
 * host1's), its timers on @clock's queue, made in *@tq. */
static inline struct fabric *configured_default(struct test_clock *clock, struct timerq **tq)
{
	struct fabric *f = topo_load_default(0);

	assert_true(fabric_configure(f, &fabric_find(f, "host1")->ports[1]) > 0);
	*tq = timerq_new(test_clock_now, clock);
	f->tq = *tq;
	return f;
}

#endif
