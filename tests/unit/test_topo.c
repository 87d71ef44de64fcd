/* SPDX-License-Identifier: MIT */
/* Topology parser: both formats, GUID rules, and file:line errors. */
#include "config.h"

#include <errno.h>

#include <sys/stat.h>

#include <glib/gstdio.h>

#include "fabric/configure.h"
#include "fabric/port.h"
#include "testfab.h"

static void expect_error(const char *text, const char *msg)
{
	GError *err = NULL;
	struct fabric *f = topo_load_string(text, "t.net", TOPO_STRICT, &err);

	assert_null(f);
	assert_non_null(err);
	if (!strstr(err->message, msg))
		fail_msg("error \"%s\" lacks \"%s\"", err->message, msg);
	g_error_free(err);
}

static void test_default(void **state)
{
	struct fabric *f = topo_load_default(0);
	struct fabric_counts c;
	struct node *h1 = fabric_find(f, "host1");

	(void)state;
	fabric_count(f, &c);
	assert_int_equal(c.nodes, 6);
	assert_int_equal(c.switches, 2);
	assert_int_equal(c.cas, 4);
	assert_int_equal(c.links, 7);
	assert_string_equal(h1->desc, "host1 HCA-1");
	assert_ptr_equal(h1->ports[2].remote, &fabric_find(f, "leaf2")->ports[3]);
	assert_int_equal(h1->ports[1].state, PORT_INIT);
	assert_int_equal(h1->ports[1].phys_state, PHYS_LINKUP);
	assert_int_equal(fabric_find(f, "leaf1")->ports[3].state, PORT_DOWN);
	assert_int_equal(fabric_find(f, "leaf1")->ports[3].phys_state, PHYS_POLLING);
	fabric_free(f);
}

static void test_ibnetdiscover_format(void **state)
{
	struct fabric *f = load(
		"vendid=0x2c9\ndevid=0xc738\nsysimgguid=0x2c90000000099\n"
		"switchguid=0x2c90000000000(2c90000000000)\n"
		"Switch\t36 \"S-0002c90000000000\"\t\t# \"MF0;sw:SX6036/U1\" enhanced port 0 lid 1 lmc 0\n"
		"[1]\t\"H-0002c90000000100\"[1](2c90000000101) \t\t# \"node1 HCA-1\" lid 3 4xFDR\n"
		"\n"
		"vendid=0x2c9\ndevid=0x1003\nsysimgguid=0x2c90000000100\ncaguid=0x2c90000000100\n"
		"Ca\t2 \"H-0002c90000000100\"\t\t# \"node1 HCA-1\"\n"
		"[1](2c90000000101) \t\"S-0002c90000000000\"[1]\t\t# lid 3 lmc 0 \"MF0;sw:SX6036/U1\" lid 1 4xFDR\n");
	struct node *sw = fabric_find(f, "S-0002c90000000000");
	struct node *ca = fabric_find(f, "H-0002c90000000100");

	(void)state;
	assert_non_null(sw);
	assert_int_equal(sw->guid, 0x2c90000000000ULL);
	assert_int_equal(sw->sys_guid, 0x2c90000000099ULL);
	assert_int_equal(sw->device_id, 0xc738);
	assert_string_equal(sw->desc, "MF0;sw:SX6036/U1");
	assert_int_equal(sw->ports[0].lid, 1);
	assert_int_equal(ca->guid, 0x2c90000000100ULL);
	assert_int_equal(ca->ports[1].guid, 0x2c90000000101ULL);
	assert_int_equal(ca->ports[1].lid, 3);
	assert_int_equal(ca->device_id, 0x1003);
	assert_int_equal(ca->ports[1].width_active, WIDTH_4X);
	assert_int_equal(ca->ports[1].espeed_active, ESPEED_FDR);
	assert_ptr_equal(ca->ports[1].remote, &sw->ports[1]);
	assert_null(ca->ports[2].remote);
	assert_ptr_equal(fabric_lookup(f, "0x0002c90000000101"), ca);
	fabric_free(f);
}

static void test_ibsim_format(void **state)
{
	/* One-sided links, ibsim options, no GUIDs given: deterministic ones. */
	struct fabric *f = load("vendid=0x15b3\n"
				"Switch 8 \"s1\"\n[1] \"h1\"[1] w=12x s=DDR\n[2] \"h2\"[2]\n\n"
				"Hca 2 \"h1\"\n\nHca 2 \"h2\"\n");
	struct node *h1 = fabric_find(f, "h1"), *h2 = fabric_find(f, "h2");

	(void)state;
	assert_string_equal(h1->desc, "h1");	/* the id when no description */
	assert_int_equal(h1->ports[1].width_active, WIDTH_12X);
	assert_int_equal(h1->ports[1].speed_active, SPEED_DDR);
	assert_int_equal(h2->ports[2].width_active, WIDTH_4X);
	assert_int_equal(h2->ports[2].speed_active, SPEED_QDR);
	assert_int_equal(h1->guid, 0x0002c90300000100ULL);
	assert_int_equal(h2->guid, h1->guid + 3);	/* past h1's port GUIDs */
	assert_int_equal(fabric_find(f, "s1")->guid, 0x0002c90200000100ULL);
	/* ibsim's sticky vendid= is no ibnetdiscover ids block: the
	 * SystemImageGUID stays the node GUID, as ibsim has it. */
	assert_int_equal(h2->vendor_id, 0x15b3);
	assert_int_equal(fabric_find(f, "s1")->sys_guid, 0x0002c90200000100ULL);
	fabric_free(f);
}

static void test_ibsim_masks(void **state)
{
	/* ibsim's numbers are enable masks (IBA 14.2.5.6), the best one wins:
	 * w=2 is 4x, w=8 12x, w=3 4x; s=1 SDR, s=5 QDR; e=2 EDR; the width=,
	 * speed= and extspeed= settings the same. */
	struct fabric *f = load("width=1\nspeed=2\n"
				"Switch 8 \"s1\"\n[1] \"h1\"[1] w=2 s=1\n[2] \"h1\"[2] w=8 s=5\n"
				"[3] \"h2\"[1] w=3 e=2\n[4] \"h2\"[2]\n\n"
				"Hca 2 \"h1\"\n\nHca 2 \"h2\"\n");
	struct node *h1 = fabric_find(f, "h1"), *h2 = fabric_find(f, "h2");

	(void)state;
	assert_int_equal(h1->ports[1].width_active, WIDTH_4X);
	assert_int_equal(h1->ports[1].speed_active, SPEED_SDR);
	assert_int_equal(h1->ports[2].width_active, WIDTH_12X);
	assert_int_equal(h1->ports[2].speed_active, SPEED_QDR);
	assert_int_equal(h2->ports[1].width_active, WIDTH_4X);
	assert_int_equal(h2->ports[1].espeed_active, ESPEED_EDR);
	assert_int_equal(h2->ports[2].width_active, WIDTH_1X);	/* width=1 */
	assert_int_equal(h2->ports[2].speed_active, SPEED_DDR);	/* speed=2 */
	assert_int_equal(h2->ports[2].espeed_active, 0);
	fabric_free(f);

	f = load("extspeed=9\nSwitch 2 \"s\"\n[1] \"h\"[1]\n[2] \"g\"[1] s=1 e=0\n\n"
		 "Hca 1 \"h\"\n\nHca 1 \"g\"\n");
	assert_int_equal(fabric_find(f, "h")->ports[1].espeed_active, ESPEED_NDR);
	/* e=0: no extended speed, and s=1 stays SDR */
	assert_int_equal(fabric_find(f, "g")->ports[1].speed_active, SPEED_SDR);
	fabric_free(f);
}

/*
 * What published ibnetdiscover dumps hold (issue "Real fabrics"): the man
 * page's example, where two cables read 1x on one end and 4x on the other
 * and a switch has no sysimgguid= line; `ibnetdiscover -g` grouping and
 * [ext N] ports; ids of 0; CA port GUIDs named only by the far end; a
 * switch port GUID in switchguid=(...); an uncabled ConnectX-5; FDR10.
 */
static void test_real_dumps(void **state)
{
	struct fabric *f = load(
		"Non-Chassis Nodes\n\n"
		"vendid=0x8f1\ndevid=0x5a06\nsysimgguid=0x5442ba00003000\n"
		"switchguid=0x5442ba00003080(5442ba00003081)\n"
		"Switch  24 \"S-005442ba00003080\"         # \"ISR9024 Voltaire\" base port 0 lid 6 lmc 0\n"
		"[22]    \"H-0008f10403961354\"[1](8f10403961355)         # \"MT23108\" lid 4 4xSDR\n"
		"[10]    \"S-0008f10400410015\"[1]         # \"SW-6IB4 Voltaire\" lid 3 4xSDR\n"
		"\n"
		"Chassis 1 (guid 0x2c90000001234)\n\n"
		"vendid=0x0\ndevid=0x0\n"
		"switchguid=0x8f10400410015(8f10400410015)\n"
		"Switch  8 \"S-0008f10400410015\"          # \"SW-6IB4 Voltaire\" base port 0 lid 3 lmc 0\n"
		"[1][ext 7]     \"S-005442ba00003080\"[10]                # \"ISR9024 Voltaire\" lid 6 1xSDR\n"
		"[2]     \"H-0002c90300000500\"[1][ext 2](2c90300000501)   # \"cx3\" lid 9 4xFDR10\n"
		"\n"
		"vendid=0x2c9\ndevid=0x5a44\ncaguid=0x8f10403961354\n"
		"Ca      2 \"H-0008f10403961354\"          # \"MT23108\"\n"
		"\n"
		"vendid=0x2c9\ndevid=0x1003\ncaguid=0x2c90300000500\n"
		"Ca      1 \"H-0002c90300000500\"          # \"cx3\"\n"
		"\n"
		"vendid=0x2c9\ndevid=0x1017\nsysimgguid=0x98039b0300aaaa00\ncaguid=0x98039b0300aaaa00\n"
		"Ca      1 \"H-98039b0300aaaa00\"          # \"uncabled cx5\"\n");
	struct node *isr = fabric_find(f, "S-005442ba00003080");
	struct node *sw6 = fabric_find(f, "S-0008f10400410015");
	struct node *mt = fabric_find(f, "H-0008f10403961354");
	struct node *cx3 = fabric_find(f, "H-0002c90300000500");
	struct node *cx5 = fabric_find(f, "H-98039b0300aaaa00");

	(void)state;
	/* The ends disagree (4x, 1x): the link trained to the lower. */
	assert_int_equal(isr->ports[10].width_active, WIDTH_1X);
	assert_int_equal(sw6->ports[1].width_active, WIDTH_1X);
	assert_int_equal(isr->ports[22].width_active, WIDTH_4X);
	/* No sysimgguid= in an ids block: SystemImageGUID 0. */
	assert_int_equal(isr->sys_guid, 0x5442ba00003000ULL);
	assert_int_equal(sw6->sys_guid, 0);
	assert_int_equal(sw6->vendor_id, 0);
	assert_int_equal(sw6->device_id, 0);
	assert_int_equal(isr->ports[0].guid, 0x5442ba00003081ULL);
	assert_int_equal(isr->ports[5].guid, 0x5442ba00003081ULL);
	assert_int_equal(isr->guid, 0x5442ba00003080ULL);
	/* Port GUIDs the far end named. */
	assert_int_equal(mt->ports[1].guid, 0x8f10403961355ULL);
	assert_int_equal(cx3->ports[1].guid, 0x2c90300000501ULL);
	/* An mlx5 CA's port 1 is its node GUID, cabled or not. */
	assert_int_equal(cx5->ports[1].guid, 0x98039b0300aaaa00ULL);
	assert_null(cx5->ports[1].remote);
	/* FDR10: QDR to PortInfo, FDR10 to Mellanox's attribute. */
	assert_int_equal(cx3->ports[1].speed_active, SPEED_QDR);
	assert_int_equal(cx3->ports[1].espeed_active, 0);
	assert_int_equal(cx3->ports[1].mspeed_active, MSPEED_FDR10);
	assert_int_equal(sw6->ports[2].mspeed_supported, MSPEED_FDR10);
	assert_string_equal(port_speed_name(&sw6->ports[2]), "FDR10");
	assert_string_equal(port_host_speed(&cx3->ports[1])->name, "FDR10");
	fabric_free(f);
}

/* A dump that begins with ibnetdiscover's stderr loads, skipping those
 * lines (a record goes on past them); --strict refuses them. */
static void test_stray_lines(void **state)
{
	static const char text[] =
		"ibwarn: [123] _do_madrpc: recv failed: Connection timed out\n"
		"Switch 2 \"s\"\n"
		"ibwarn: [123] handle_port: Query remote node info failed\n"
		"[1] \"h\"[1]\n\nCa 1 \"h\"\n";
	GError *err = NULL;
	struct fabric *f = topo_load_string(text, "t.net", 0, &err);

	(void)state;
	assert_non_null(f);
	assert_non_null(fabric_find(f, "h")->ports[1].remote);
	fabric_free(f);
	expect_error(text, "t.net:1: unrecognized line \"ibwarn: [123] _do_madrpc");
}

static void test_include(void **state)
{
	char *dir = g_dir_make_tmp("ibemu-topo-XXXXXX", NULL);
	char *inc = g_build_filename(dir, "inc.net", NULL);
	char *top = g_build_filename(dir, "top.net", NULL);
	GError *err = NULL;
	struct fabric *f;

	(void)state;
	g_file_set_contents(inc, "Ca 1 \"h\"\n[1] \"s\"[1]\n", -1, NULL);
	g_file_set_contents(top, "Switch 2 \"s\"\n\ninclude \"inc.net\"\n", -1, NULL);
	f = topo_load_file(top, 0, &err);
	assert_non_null(f);
	assert_non_null(fabric_find(f, "h")->ports[1].remote);
	fabric_free(f);
	g_file_set_contents(top, "include \"missing.net\"\n", -1, NULL);
	f = topo_load_file(top, 0, &err);
	assert_null(f);
	assert_non_null(strstr(err->message, "top.net:1: cannot include"));
	g_error_free(err);
	g_unlink(inc);
	g_unlink(top);
	g_rmdir(dir);
	g_free(inc);
	g_free(top);
	g_free(dir);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("Switch 4 \"s\"\n[1] \"x\"[1]\n", "t.net:2: node \"x\" is not defined");
	expect_error("Switch 4 \"s\"\n[5] \"h\"[1]\n", "t.net:2: node \"s\" has no port 5");
	expect_error("Switch 4 \"s\"\n[1] \"h\"[3]\n\nCa 1 \"h\"\n", "t.net:2: node \"h\" has no port 3");
	expect_error("Switch 4 \"s\"\n[1] \"h\"[1]\n\nCa 1 \"h\"\n[1] \"s\"[2]\n",
		     "t.net:5: \"h\"[1] is already linked to \"s\"[1]");
	expect_error("Switch 4 \"s\"\n[1] \"h\"[1](20)\n\nCa 1 \"h\"\n[1](21) \"s\"[1]\n",
		     "t.net:2: \"h\"[1] has port GUID 20 here but 21 on its own line");
	expect_error("Ca 1 \"h\"\n\nCa 2 \"h\"\n", "t.net:3: node \"h\" is defined twice");
	expect_error("caguid=0x10\nCa 1 \"a\"\ncaguid=0x10\nCa 1 \"b\"\n", "t.net:4: node \"b\": GUID");
	expect_error("Switch 4 \"s\"\nbogus line\n", "t.net:2: unrecognized line");
	expect_error("[1] \"s\"[1]\n", "t.net:1: port line outside a node record");
	expect_error("Switch 4 \"s\"\n[1] \"s\"[1]\n", "t.net:2: port is linked to itself");
	expect_error("Switch 4 \"s\"\n[1] \"h\"[1] w=3x\n", "t.net:2: bad link width");
	expect_error("width=7x\n", "t.net:1: bad width");
	expect_error("Switch 0 \"s\"\n", "t.net:1: node \"s\": port count 0");
	expect_error("# only a comment\n", "no nodes defined");
	/* Numbers are read whole and range-checked, never wrapped. */
	expect_error("Switch 4 \"s\"\n[1] \"h\"[4294967297]\n\nCa 1 \"h\"\n",
		     "t.net:2: remote port 4294967297 is not 1..254");
	expect_error("Switch 4 \"s\" # \"d\" enhanced port 0 lid 99999999999 lmc 0\n",
		     "t.net:1: LID 99999999999 is not unicast");
	expect_error("Ca 1 \"h\"\n[1] \"s\"[1] # lid 3 lmc 9 \"x\" lid 1 4xQDR\n\nSwitch 2 \"s\"\n",
		     "t.net:2: LMC 9 is not 0..7");
	expect_error("caguid=0x0\nCa 1 \"h\"\n", "t.net:1: caguid=0: a GUID of 0 is not valid");
	expect_error("switchguid=0x10(0)\nSwitch 1 \"s\"\n", "t.net:1: GUID \"0\" is not valid");
	expect_error("Ca 1 \"h\"\n[1](0) \"s\"[1]\n\nSwitch 2 \"s\"\n", "t.net:2: GUID \"0\" is not valid");
	expect_error("Ca 1 \"h\"\n[1](12345678901234567) \"s\"[1]\n\nSwitch 2 \"s\"\n",
		     "t.net:2: GUID \"12345678901234567\" is not valid");
}

/* A NUL byte once ended a file silently, the rest unread. */
static void test_nul_byte(void **state)
{
	static const char text[] = "Switch 2 \"s\"\n[1] \"h\"[1]\n\0\nCa 1 \"h\"\n";
	char *dir = g_dir_make_tmp("ibemu-topo-XXXXXX", NULL);
	char *path = g_build_filename(dir, "nul.net", NULL);
	GError *err = NULL;

	(void)state;
	g_file_set_contents(path, text, sizeof(text) - 1, NULL);
	assert_null(topo_load_file(path, 0, &err));
	assert_non_null(strstr(err->message, "nul.net:3: a NUL byte"));
	g_error_free(err);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}

/*
 * Includes are budgeted: ten files each including the next ten times,
 * nine deep (10^9 reads once) stop at TOPO_MAX_FILES; /dev/zero and a
 * FIFO are refused as not regular files, with the including line.
 */
static void test_include_budget(void **state)
{
	char *dir = g_dir_make_tmp("ibemu-topo-XXXXXX", NULL);
	GError *err = NULL;
	struct fabric *f;
	char name[32], *path, *fifo;
	unsigned i;

	(void)state;
	for (i = 0; i <= 8; i++) {
		GString *t = g_string_new(i == 0 ? "Switch 2 \"s\"\n\n" : "");
		unsigned k;

		for (k = 0; i < 8 && k < 10; k++)
			g_string_append_printf(t, "include \"n%u.net\"\n", i + 1);
		g_snprintf(name, sizeof(name), "n%u.net", i);
		path = g_build_filename(dir, name, NULL);
		g_file_set_contents(path, t->str, -1, NULL);
		g_free(path);
		g_string_free(t, TRUE);
	}
	path = g_build_filename(dir, "n0.net", NULL);
	f = topo_load_file(path, 0, &err);
	assert_null(f);
	assert_non_null(strstr(err->message, "more than 1000 topology files read in all"));
	g_clear_error(&err);

	g_file_set_contents(path, "Switch 2 \"s\"\n\ninclude \"/dev/zero\"\n", -1, NULL);
	assert_null(topo_load_file(path, 0, &err));
	assert_non_null(strstr(err->message, "n0.net:3: cannot include \"/dev/zero\": not a regular file"));
	g_clear_error(&err);

	fifo = g_build_filename(dir, "fifo", NULL);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	g_file_set_contents(path, "include \"fifo\"\n", -1, NULL);
	assert_null(topo_load_file(path, 0, &err));
	assert_non_null(strstr(err->message, "n0.net:1: cannot include \"fifo\": not a regular file"));
	g_clear_error(&err);
	/* The top file may not be a device either (a pipe it may). */
	assert_null(topo_load_file("/dev/zero", 0, &err));
	assert_non_null(strstr(err->message, "/dev/zero: not a regular file or a pipe"));
	g_clear_error(&err);

	g_unlink(fifo);
	for (i = 0; i <= 8; i++) {
		char *p;

		g_snprintf(name, sizeof(name), "n%u.net", i);
		p = g_build_filename(dir, name, NULL);
		g_unlink(p);
		g_free(p);
	}
	g_rmdir(dir);
	g_free(fifo);
	g_free(path);
	g_free(dir);
}

/* link_layer=Ethernet: the next CA's ports RoCE ports, their network
 * marked, configured apart (LIDs from the top down, Active, no SM) while
 * the InfiniBand network stays for an SM; a dump read back says it. */
/* fabric_roce_port_by_gid's index: each RoCE port by each of its GIDs (the
 * link-local from its GUID, the IPv4-mapped from its address, both
 * types), nothing for an InfiniBand port's GID or an unset one, and it
 * follows an address and a GUID changed after it was made. */
static void test_roce_gid_index(void **state)
{
	const char *text =
		"Switch 4 \"eth\"\n[1] \"n1\"[1]\n[2] \"n2\"[1]\n[3] \"h1\"[1]\n\n"
		"link_layer=Ethernet\nCa 1 \"n1\"\n\n"
		"link_layer=Ethernet\nCa 1 \"n2\"\n\n"
		"Ca 1 \"h1\"\n";
	struct fabric *f = load(text);
	struct port *n1 = &fabric_find(f, "n1")->ports[1];
	struct port *n2 = &fabric_find(f, "n2")->ports[1];
	struct port *h1 = &fabric_find(f, "h1")->ports[1];
	uint8_t gid[16], old[16], zero[16] = { 0 };
	unsigned i;

	(void)state;
	for (i = 0; i < 4; i++) {
		port_gid(n1, i, gid);
		assert_ptr_equal(fabric_roce_port_by_gid(f, gid), n1);
		port_gid(n2, i, gid);
		assert_ptr_equal(fabric_roce_port_by_gid(f, gid), n2);
	}
	port_gid(h1, 0, gid);
	assert_null(fabric_roce_port_by_gid(f, gid));
	assert_null(fabric_roce_port_by_gid(f, zero));
	/* A new address: the old mapped GID names nobody, the new one n1. */
	port_gid(n1, 3, old);
	assert_int_equal(port_set_ip4(n1, 0x0a090909, NULL), 0);
	assert_null(fabric_roce_port_by_gid(f, old));
	port_gid(n1, 3, gid);
	assert_int_equal(gid[15], 9);
	assert_ptr_equal(fabric_roce_port_by_gid(f, gid), n1);
	/* A second address: GIDs 4/5, found by address and by GID; the
	 * first one's pair emptied leaves it there, and the CM's index moves
	 * to it (port_roce_v2_index). Another port's address: EEXIST. */
	assert_int_equal(port_set_roce_ip4(n1, 1, 0x0a080808), 0);
	port_gid(n1, 5, gid);
	assert_int_equal(gid[15], 8);
	assert_string_equal(port_gid_type(n1, 5), "RoCE v2");
	assert_string_equal(port_gid_type(n1, 4), "IB/RoCE v1");
	assert_null(port_gid_type(n1, 6));
	assert_ptr_equal(fabric_roce_port_by_gid(f, gid), n1);
	assert_ptr_equal(fabric_port_by_ip4(f, 0x0a080808), n1);
	assert_int_equal(port_set_roce_ip4(n2, 2, 0x0a080808), -EEXIST);
	assert_int_equal(port_set_roce_ip4(h1, 1, 0x0a070707), -EINVAL);	/* InfiniBand */
	assert_int_equal(port_roce_v2_index(n1), 3);
	port_clear_ip4(n1);
	assert_null(port_gid_type(n1, 3));
	assert_int_equal(port_roce_v2_index(n1), 5);
	assert_int_equal(port_ip4(n1), 0x0a080808);
	assert_int_equal(port_set_roce_ip4(n1, 1, 0), 0);
	assert_null(fabric_roce_port_by_gid(f, gid));
	assert_int_equal(port_ip4(n1), 0);
	assert_null(fabric_port_by_ip4(f, 0));
	assert_int_equal(port_set_ip4(n1, 0x0a090909, NULL), 0);
	/* A new GUID: a new MAC, a new link-local GID. */
	port_gid(n2, 1, old);
	port_set_guid(n2, 0x0002c90300abcdefull);
	assert_null(fabric_roce_port_by_gid(f, old));
	port_gid(n2, 1, gid);
	assert_ptr_equal(fabric_roce_port_by_gid(f, gid), n2);
	fabric_free(f);
}

static void test_link_layer(void **state)
{
	const char *text =
		"Switch 4 \"ib\"\n[1] \"h1\"[1]\n\n"
		"Switch 4 \"eth\"\n[1] \"n1\"[1]\n[2] \"n2\"[1]\n\n"
		"Ca 1 \"h1\"\n\n"
		"link_layer=Ethernet\nCa 1 \"n1\"\n\n"
		"link_layer=Ethernet\nCa 1 \"n2\"\n";
	GError *err = NULL;
	struct fabric *f = topo_load_string(text, "t.net", TOPO_STRICT, &err);
	struct node *h1, *n1, *n2, *eth, *ib;
	GString *out = g_string_new(NULL);

	(void)state;
	assert_non_null(f);
	h1 = fabric_find(f, "h1");
	n1 = fabric_find(f, "n1");
	n2 = fabric_find(f, "n2");
	eth = fabric_find(f, "eth");
	ib = fabric_find(f, "ib");
	assert_false(port_is_roce(&h1->ports[1]));
	assert_true(port_is_roce(&n1->ports[1]));
	assert_true(fabric_roce_networks(f, &err));
	assert_true(n1->eth_net && n2->eth_net && eth->eth_net);
	assert_false(h1->eth_net || ib->eth_net);
	fabric_configure_roce(f);
	assert_int_equal(eth->ports[0].lid, FABRIC_MAX_UCAST_LID);
	assert_true(n1->ports[1].lid > 0xbf00 && n2->ports[1].lid > 0xbf00);
	assert_int_equal(n1->ports[1].state, PORT_ACTIVE);
	assert_int_equal(n1->ports[1].sm_lid, 0);
	assert_int_equal(h1->ports[1].lid, 0);
	assert_int_not_equal(h1->ports[1].state, PORT_ACTIVE);
	/* The SM's sweep, stood for: the InfiniBand network alone. */
	fabric_configure(f, &h1->ports[1]);
	assert_int_equal(h1->ports[1].state, PORT_ACTIVE);
	assert_true(h1->ports[1].lid && h1->ports[1].lid < 0x100);
	assert_int_equal(n1->ports[1].sm_lid, 0);
	topo_dump(f, out);
	fabric_free(f);
	f = topo_load_string(out->str, "dump.net", TOPO_STRICT, &err);
	assert_non_null(f);
	assert_true(port_is_roce(&fabric_find(f, "n2")->ports[1]));
	assert_false(port_is_roce(&fabric_find(f, "h1")->ports[1]));
	g_string_free(out, TRUE);
	fabric_free(f);
	expect_error("Ca 1 \"a\"\n\nlink_layer=Ethernet\nSwitch 2 \"s\"\n",
		     "t.net:3: link_layer=Ethernet: \"s\" is a switch");
	expect_error("link_layer=RoCE\nCa 1 \"a\"\n", "t.net:1: bad link_layer \"RoCE\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_ibnetdiscover_format),
		cmocka_unit_test(test_ibsim_format),
		cmocka_unit_test(test_ibsim_masks),
		cmocka_unit_test(test_real_dumps),
		cmocka_unit_test(test_stray_lines),
		cmocka_unit_test(test_include),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_include_budget),
		cmocka_unit_test(test_link_layer),
		cmocka_unit_test(test_roce_gid_index),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
