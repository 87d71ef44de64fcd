/* SPDX-License-Identifier: MIT */
/*
 * IPoIB's datagram mode (kernel/ipoib_link.c, docs/ipoib.md) between
 * host1 and host3 (ipoib_env.h): the broadcast group joined at the SA,
 * an Ethernet ARP request going out as IPoIB's and coming in as
 * Ethernet's, the reply to the MAC that stands for the asker, an IPv4
 * frame to the neighbour, IPv6's neighbour discovery with its
 * link-layer options in each form, and what a host's kernel or a hostile
 * sender may give that is dropped: frames cut short, past the MTU, ARP
 * of another hardware type, and a flood of ARP from 2,000 forged
 * addresses, of which the neighbour table keeps 1,024.
 */
#include "config.h"

#include "ipoib_env.h"

/* The group joined, the request and its answer in both forms. */
static void test_arp(void **state)
{
	struct env *e = *state;
	uint8_t f[64], g[64], mac_a[6], mac_b[6];
	char *st = ipoib_links_status(e->a.ip);

	assert_non_null(strstr(st, "ipoib: ib0: QPN 0x"));
	assert_non_null(strstr(st, "broadcast group joined"));
	g_free(st);
	eth_arp(f, 1, bcast, kmac_a, 0x0a010003, zero, 0x0a010005);
	from_kernel(e, &e->a, f, 42);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), 42);
	assert_memory_equal(g, bcast, 6);	/* a request: to everyone */
	assert_int_equal(get_be16(g, 12), 0x0806);
	assert_int_equal(get_be16(g, 14), 1);	/* Ethernet's form again */
	assert_int_equal(g[18], 6);
	assert_int_equal(get_be32(g, 28), 0x0a010003);
	assert_int_equal(get_be32(g, 38), 0x0a010005);
	memcpy(mac_a, g + 22, 6);
	assert_int_equal(mac_a[0] & 3, 2);	/* local, unicast */
	assert_memory_equal(g + 6, mac_a, 6);
	assert_memory_not_equal(mac_a, kmac_a, 6);	/* it stands for A's IPoIB address */
	/* B learnt A: its table holds A's address (host1 port 1's GUID). */
	st = ipoib_links_status(e->b.ip);
	assert_non_null(strstr(st, ":fe:80:00:00:00:00:00:00:00:02:c9:03:00:00:01:01 as "));
	g_free(st);

	eth_arp(f, 2, mac_a, kmac_b, 0x0a010005, mac_a, 0x0a010003);
	from_kernel(e, &e->b, f, 42);
	assert_int_equal(to_kernel(&e->a, g, sizeof(g)), 42);
	memcpy(mac_b, g + 22, 6);
	assert_memory_equal(g, mac_a, 6);	/* to A's interface's MAC */
	assert_int_equal(get_be16(g, 20), 2);
	assert_memory_equal(g + 32, mac_a, 6);	/* THA: A */
	assert_memory_not_equal(mac_b, mac_a, 6);
	resolve(e, mac_a, mac_b);		/* the same MACs each time */
	assert_memory_equal(g + 22, mac_b, 6);
}

/* IPv4 to the neighbour: the packet whole, to B's MAC. */
static void test_ipv4(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], f[2100], g[2100];
	unsigned i;

	resolve(e, mac_a, mac_b);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, kmac_a, 6);
	put_be16(f, 12, 0x0800);
	for (i = 14; i < 14 + 2044; i++)
		f[i] = (uint8_t)i;
	from_kernel(e, &e->a, f, 14 + 2044);	/* IPoIB's MTU exactly */
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), 14 + 2044);
	assert_memory_equal(g, mac_b, 6);
	assert_int_equal(get_be16(g, 12), 0x0800);
	assert_memory_equal(g + 14, f + 14, 2044);
	/* To a MAC nobody stands for: nothing goes. */
	f[5] ^= 1;
	from_kernel(e, &e->a, f, 100);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), -1);
}

/* What the kernel may give that is not sent: each dropped, counted. */
static void test_dropped(void **state)
{
	struct env *e = *state;
	uint8_t mac_a[6], mac_b[6], f[2100], g[2100];
	char *st;

	resolve(e, mac_a, mac_b);
	memset(f, 0, sizeof(f));
	memcpy(f, mac_b, 6);
	from_kernel(e, &e->a, f, 10);			/* shorter than a header */
	put_be16(f, 12, 0x0800);
	from_kernel(e, &e->a, f, 14 + 2045);		/* past the MTU */
	put_be16(f, 12, 0x86dd);
	from_kernel(e, &e->a, f, 14 + 39);		/* IPv6 shorter than its header */
	eth_arp(f, 1, bcast, kmac_a, 0x0a010003, zero, 0x0a010005);
	f[18] = 8;					/* not Ethernet's hlen */
	from_kernel(e, &e->a, f, 42);
	from_kernel(e, &e->a, f, 20);			/* ARP cut short */
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), -1);
	st = ipoib_links_status(e->a.ip);
	assert_non_null(strstr(st, " 5 dropped"));
	g_free(st);
}

/* An IPv6 neighbour solicitation from A's kernel with its Ethernet
 * source link-layer option; @ns the ICMPv6 bytes' start. */
static size_t ns_frame(uint8_t *f, const uint8_t src_mac[6])
{
	static const uint8_t dst[16] = { 0xff, 0x02, [11] = 1, 0xff, 0, 0, 5 };
	static const uint8_t src[16] = { 0xfe, 0x80, [8] = 0, 2, 0xc9, 3, 0, 0, 1, 1 };
	uint8_t *ip = f + 14, *m = ip + 40;

	memset(f, 0, 14 + 40 + 32);
	memcpy(f, (uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 5 }, 6);
	memcpy(f + 6, src_mac, 6);
	put_be16(f, 12, 0x86dd);
	ip[0] = 0x60;
	put_be16(ip, 4, 32);
	ip[6] = 58;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	m[0] = 135;				/* NS */
	memcpy(m + 8, (uint8_t[16]){ 0xfe, 0x80, [8] = 0, 2, 0xc9, 3, 0, 0, 1, 6 }, 16);
	m[24] = 1;				/* SLLA, 8 bytes */
	m[25] = 1;
	memcpy(m + 26, src_mac, 6);
	return 14 + 40 + 32;
}

/* ICMPv6's checksum over the packet at @ip: 0 when it is right. */
static uint16_t csum6(const uint8_t *ip, size_t len)
{
	uint32_t sum = (uint32_t)(len - 40) + 58;
	size_t i;

	for (i = 8; i < len; i += 2)
		sum += i + 1 < len ? get_be16(ip, i) : (uint32_t)ip[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv6 neighbour discovery: the link-layer option IPoIB's on the wire,
 * Ethernet's at each end, the checksum right at each. */
static void test_ipv6_nd(void **state)
{
	struct env *e = *state;
	uint8_t f[256], g[256], mac_a[6], mac_b[6];
	size_t n = ns_frame(f, kmac_a);
	char *st;

	put_be16(f + 14 + 40, 2, csum6(f + 14, n - 14));	/* as the kernel sends it */
	from_kernel(e, &e->a, f, n);
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), (ssize_t)n);
	assert_memory_equal(g, f, 6);			/* 33:33:ff:00:00:05 */
	assert_int_equal(get_be16(g + 14, 4), 32);	/* the same length again */
	assert_int_equal(g[14 + 40 + 24], 1);
	assert_int_equal(g[14 + 40 + 25], 1);
	memcpy(mac_a, g + 14 + 40 + 26, 6);		/* A's stand-in, not its kernel's */
	assert_memory_not_equal(mac_a, kmac_a, 6);
	assert_int_equal(mac_a[0] & 3, 2);
	assert_int_equal(csum6(g + 14, n - 14), 0);
	st = ipoib_links_status(e->b.ip);		/* B learnt A from the option */
	assert_non_null(strstr(st, ":02:c9:03:00:00:01:01 as "));
	g_free(st);

	/* B's advertisement, unicast to A's stand-in, its target option. */
	memcpy(g, mac_a, 6);
	memcpy(g + 6, kmac_b, 6);
	g[14 + 40] = 136;				/* NA */
	g[14 + 40 + 24] = 2;				/* TLLA */
	memcpy(g + 14 + 40 + 26, kmac_b, 6);
	memcpy(g + 14 + 24, g + 14 + 8, 16);		/* to A */
	put_be16(g + 14 + 40, 2, 0);
	put_be16(g + 14 + 40, 2, csum6(g + 14, n - 14));
	from_kernel(e, &e->b, g, n);
	assert_int_equal(to_kernel(&e->a, f, sizeof(f)), (ssize_t)n);
	resolve(e, mac_a, mac_b);
	assert_memory_equal(f + 14 + 40 + 26, mac_b, 6);	/* B's stand-in */
	assert_int_equal(csum6(f + 14, n - 14), 0);
}

/* The host's end goes (its namespace did): the interface stops being
 * watched, rather than wake the loop for ever, and the other goes on. */
static void test_tap_gone(void **state)
{
	struct env *e = *state;
	uint8_t f[64], g[64];

	close(e->a.kernel);
	e->a.kernel = -1;
	turn(e);
	assert_false(g_main_context_pending(NULL));
	eth_arp(f, 1, bcast, kmac_b, 0x0a010005, zero, 0x0a010003);
	from_kernel(e, &e->b, f, 42);	/* to A's group membership, A's end gone */
	assert_int_equal(to_kernel(&e->b, g, sizeof(g)), -1);
	assert_false(g_main_context_pending(NULL));
}

/* A sender of forged IPoIB ARP: 2,000 addresses, 1,024 kept. */
static void test_arp_flood(void **state)
{
	struct env *e = *state;
	struct uverbs_ctx *c = uverbs_ctx_open(uverbs_dev(e->a.uv, 0));
	struct verbs_ioc_qp q = { .type = 4 };
	_Alignas(struct verbs_wire_pkt) uint8_t buf[sizeof(struct verbs_wire_pkt) + 4 + 56] = { 0 };
	uint8_t g[64];
	struct verbs_wire_pkt *w = (struct verbs_wire_pkt *)buf;
	uint8_t *arp = buf + sizeof(*w) + 4, mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff };
	unsigned i, n = 0, lines = 0;
	char *st, *p;

	memset(mgid + 12, 0xff, 4);
	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_CREATE, &q), 0);
	q.qkey = IPOIB_QKEY;
	q.port = 1;
	assert_int_equal(uverbs_ctx_ioctl(c, VERBS_IOC_QP_SET, &q), 0);
	w->rec.type = VERBS_REC_PKT;
	w->rec.len = sizeof(buf);
	w->port = 1;
	w->opcode = OP_UD_SEND_ONLY;
	w->sqpn = q.qpn;
	w->qkey = IPOIB_QKEY;
	w->dqpn = VERBS_QPN_MCAST;
	st = ipoib_links_status(e->b.ip);
	assert_non_null(p = strstr(st, "(MLID 0x"));
	w->dlid = (uint16_t)strtoul(p + 8, NULL, 16);	/* the group's */
	g_free(st);
	w->flags = VERBS_PKT_GRH;
	memcpy(w->dgid, mgid, 16);
	w->len = 4 + 56;
	put_be16(buf + sizeof(*w), 0, 0x0806);
	put_be16(arp, 0, 32);
	put_be16(arp, 2, 0x0800);
	arp[4] = 20;
	arp[5] = 4;
	put_be16(arp, 6, 1);
	for (i = 0; i < 2000; i++) {
		put_be32(arp, 8, 0x00100000 + i);	/* QPN: forged, each other */
		arp[12] = 0xfe;
		arp[13] = 0x80;
		put_be32(arp, 28, 0x0a0a0000 + i);	/* SPA */
		put_be32(arp, 52, 0x0a010005);		/* TPA: B */
		assert_int_equal(uverbs_ctx_write(c, buf, sizeof(buf)), (ssize_t)sizeof(buf));
		turn(e);
		while (to_kernel(&e->b, g, sizeof(g)) > 0)
			n++;
	}
	uverbs_ctx_close(c);
	assert_int_equal(n, 1024);	/* the rest not learnt, not given on */
	st = ipoib_links_status(e->b.ip);
	for (p = st; (p = strstr(p, "neighbour ")); p++)
		lines++;
	assert_int_equal(lines, 1024);
	assert_non_null(strstr(st, " 976 dropped"));
	g_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_arp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_nd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tap_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arp_flood, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
