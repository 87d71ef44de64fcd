/* SPDX-License-Identifier: MIT */
/*
 * The IPoIB tests' fabric (test_ipoib.c, test_ipoib_cm.c): host1 and host3
 * of the configured default fabric, each a host of its own with the
 * emulator's SA, each interface a socket pair standing in for its TAP
 * (one frame a read).
 */
#ifndef IBEMU_TESTS_IPOIB_ENV_H
#define IBEMU_TESTS_IPOIB_ENV_H

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/verbs_wire.h"
#include "fabric/configure.h"
#include "fabric/packet.h"
#include "fabric/port.h"
#include "kernel/ipoib_link.h"
#include "kernel/sa.h"
#include "kernel/uverbs.h"
#include "testfab.h"

struct side {
	struct host *hw;
	struct uverbs *uv;
	struct ipoib_links *ip;
	int kernel;		/* the host's end of the stand-in TAP */
	struct port *port;
};

struct env {
	struct test_clock clock;
	struct fabric *f;
	struct timerq *tq;
	struct sa *sa;
	struct side a, b;	/* host1, host3 */
};

static void side_up(struct env *e, struct side *s, const char *node)
{
	int sv[2];

	s->hw = host_new(e->f, e->tq);
	host_attach(s->hw, fabric_find(e->f, node));
	s->ip = ipoib_links_new(s->hw);
	s->uv = uverbs_new(s->hw);
	ipoib_links_set_verbs(s->ip, s->uv);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	s->kernel = sv[1];
	s->port = &fabric_find(e->f, node)->ports[1];
	assert_int_equal(ipoib_link_add(s->ip, s->port, sv[0]), 0);
}

static void side_down(struct side *s)
{
	ipoib_links_free(s->ip);
	uverbs_free(s->uv);
	host_free(s->hw);
	if (s->kernel >= 0)
		close(s->kernel);
}

/* The loop's idle work (what arrived, read from the QPs) and the timers;
 * bounded, so that a source that never settles fails a test, not hangs it. */
static void turn(struct env *e)
{
	unsigned i, j;

	for (i = 0; i < 8; i++)
		for (j = 0; j < 1000 && g_main_context_iteration(NULL, FALSE); j++)
			;
	timerq_run(e->tq);
}

static int setup(void **state)
{
	struct env *e = g_new0(struct env, 1);

	e->f = configured_default(&e->clock, &e->tq);
	side_up(e, &e->a, "host1");
	side_up(e, &e->b, "host3");
	e->sa = sa_new(e->a.hw);	/* at the SM LID, host1's */
	turn(e);			/* the joins */
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	sa_free(e->sa);
	side_down(&e->a);
	side_down(&e->b);
	timerq_free(e->tq);
	fabric_free(e->f);
	g_free(e);
	return 0;
}

/* The host's kernel sends @len bytes; the loop takes them. */
static void from_kernel(struct env *e, struct side *s, const uint8_t *f, size_t len)
{
	assert_int_equal(write(s->kernel, f, len), (ssize_t)len);
	turn(e);
}

/* What the host's kernel got: its length, or -1 for nothing. */
static ssize_t to_kernel(struct side *s, uint8_t *buf, size_t n)
{
	return read(s->kernel, buf, n);
}

static void eth_arp(uint8_t f[42], uint16_t op, const uint8_t dst[6], const uint8_t src[6],
		    uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put_be16(f, 12, 0x0806);
	put_be16(f, 14, 1);
	put_be16(f, 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put_be16(f, 20, op);
	memcpy(f + 22, src, 6);
	put_be32(f, 28, spa);
	memcpy(f + 32, tha, 6);
	put_be32(f, 38, tpa);
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zero[6];
static const uint8_t kmac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };	/* the kernels' own, ignored */
static const uint8_t kmac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };

/* A resolved pair: A asked for B, B answered. Returns A's and B's MACs. */
static void resolve(struct env *e, uint8_t mac_a[6], uint8_t mac_b[6])
{
	uint8_t f[64], g[64];

	eth_arp(f, 1, bcast, kmac_a, 0x0a010003, zero, 0x0a010005);
	from_kernel(e, &e->a, f, 42);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), 42);
	memcpy(mac_a, g + 22, 6);
	eth_arp(f, 2, mac_a, kmac_b, 0x0a010005, mac_a, 0x0a010003);
	from_kernel(e, &e->b, f, 42);
	assert_int_equal(to_kernel(&e->a, g, sizeof(g)), 42);
	memcpy(mac_b, g + 22, 6);
}

#endif
