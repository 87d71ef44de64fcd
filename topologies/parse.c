/* SPDX-License-Identifier: MIT */
/*
 * Topology parser; the format is described in topo.h. Nodes are created as
 * their header lines are read; links are collected and made once every node
 * is known, because a port line may name a node defined further down.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/port.h"
#include "lib/progress.h"
#include "topologies/topo.h"

#define MAX_INCLUDE_DEPTH 8
/* Skipped lines warned about one by one; the rest are counted. */
#define MAX_SKIP_WARNINGS 10

enum { IDS_VENDID = 1, IDS_DEVID = 2, IDS_GUID = 4, IDS_BLOCK = 7 };

G_DEFINE_QUARK(ibemu-topology-error, topo_error)

struct link_decl {
	struct node *n;
	unsigned port;
	char *remote;
	unsigned rport;
	uint64_t rguid;			/* the remote CA port's GUID; 0 = not given */
	uint8_t width;			/* 0 = not given on this line */
	struct lspeed sp;		/* .speed 0 = not given */
	uint8_t def_width;		/* width= and speed= in force here */
	struct lspeed def_sp;
	char *where;			/* "file:line" */
};

struct parser {
	struct fabric *f;
	unsigned flags;			/* TOPO_ */
	GPtrArray *links;		/* struct link_decl * */
	GHashTable *named;		/* CA ports whose GUID a line gave */
	uint32_t vendid;		/* sticky, as in ibsim, once given */
	uint16_t devid;
	bool have_vendid, have_devid;
	/*
	 * What of an ibnetdiscover record's ids block (vendid=, devid=,
	 * [sysimgguid=], switchguid=/caguid=/rtguid=) came since the last
	 * header, IDS_ bits. ibnetdiscover leaves sysimgguid= out only when
	 * SystemImageGUID is 0 (infiniband-diags ibnetdiscover.c out_ids);
	 * an ibsim file's sticky vendid= alone does not say that.
	 */
	unsigned ids_seen;
	bool have_sysimgguid;
	uint64_t sysimgguid;		/* for the next node only */
	uint64_t sw_port_guid;		/* switchguid=G(P): P, for the next switch */
	unsigned eth_line;		/* link_layer=Ethernet's line, for the next
					 * node only (a CA); 0: none */
	uint64_t guid_next[4];		/* by enum node_type */
	unsigned skipped;		/* lines that are not topology */
	struct topo_budget budget;	/* what includes may still read */
	uint8_t def_width;
	struct lspeed def_sp;
	struct node *cur;		/* node whose port lines we read */
	int depth;
	GHashTable *addr_where;		/* port with addr= -> "file:line", owned */
};

static void link_decl_free(gpointer p)
{
	struct link_decl *l = p;

	g_free(l->remote);
	g_free(l->where);
	g_free(l);
}

static bool fail(GError **err, const char *file, unsigned line,
		 const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static bool fail(GError **err, const char *file, unsigned line,
		 const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(err, TOPO_ERROR, 1, "%s:%u: %s", file, line, msg);
	g_free(msg);
	return false;
}

/*
 * ibsim's link options and settings (w=, s=, e=, width=, speed=,
 * extspeed=) are enable masks in PortInfo's encodings (LinkWidthEnabled,
 * LinkSpeedEnabled, LinkSpeedExtEnabled; IBA 14.2.5.6), and ibsim brings
 * a link up at the best value enabled. Bare numbers are read that way;
 * names ("4x", "QDR") are ibemu's own spelling of the same.
 */
static uint8_t mask_best(unsigned long mask, const uint8_t *order, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

/* @s as a whole decimal number, or -1. */
static long bare_number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	return end != s && !*end && g_ascii_isdigit(*s) && v <= 255 ? (long)v : -1;
}

/* A lane count (1, 2, 4, 8, 12) -> WIDTH_ bit; 0 if none. */
static uint8_t lanes_width(unsigned long lanes)
{
	switch (lanes) {
	case 1: return WIDTH_1X;
	case 2: return WIDTH_2X;
	case 4: return WIDTH_4X;
	case 8: return WIDTH_8X;
	case 12: return WIDTH_12X;
	default: return 0;
	}
}

/* "4x", "12X", or an ibsim mask 1..31 ("2" is 4x) -> WIDTH_ bit; 0 if
 * not a width. */
static uint8_t parse_width(const char *s)
{
	static const uint8_t best[] = { WIDTH_12X, WIDTH_8X, WIDTH_4X, WIDTH_2X, WIDTH_1X };
	long v = bare_number(s);
	char *end;

	if (v >= 0)
		return v <= 31 ? mask_best((unsigned long)v, best, G_N_ELEMENTS(best)) : 0;
	v = (long)strtoul(s, &end, 10);
	return end != s && !g_ascii_strcasecmp(end, "x") ? lanes_width((unsigned long)v) : 0;
}

/* "QDR", "FDR10", "FDR", the lane rate "2.5", "10", "14", "25", or an
 * ibsim LinkSpeedEnabled mask 1..7 ("4" is QDR; "0" too, as ibsim takes it:
 * the extended speed is left as it was, a mask says nothing of it); false
 * if none. */
static bool parse_speed(const char *s, struct lspeed *sp)
{
	static const uint8_t best[] = { SPEED_QDR, SPEED_DDR, SPEED_SDR };
	const struct link_speed *t;
	long v = bare_number(s);

	if (v >= 0 && v <= 7) {
		sp->speed = v ? mask_best((unsigned long)v, best, G_N_ELEMENTS(best)) : SPEED_QDR;
		sp->mspeed = 0;
		return true;
	}
	for (t = link_speeds; t->name; t++)
		if (!g_ascii_strcasecmp(s, t->name) || (t->lane_gbps && !strcmp(s, t->lane_gbps))) {
			*sp = t->sp;
			return true;
		}
	return false;
}

/* e= and extspeed=: an ibsim LinkSpeedExtEnabled mask 0..15 ("2" is EDR,
 * "0" none), or a name as for s=; false if neither. */
static bool parse_espeed(const char *s, struct lspeed *sp)
{
	static const uint8_t best[] = { ESPEED_NDR, ESPEED_HDR, ESPEED_EDR, ESPEED_FDR };
	long v = bare_number(s);

	if (v >= 0 && v <= 15) {
		sp->espeed = mask_best((unsigned long)v, best, G_N_ELEMENTS(best));
		if (sp->espeed) {
			sp->speed = SPEED_QDR;	/* the extended speeds need QDR enabled */
			sp->mspeed = 0;
		}
		return true;
	}
	return parse_speed(s, sp);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = g_ascii_strtoull(s, &end, 0);
	return !errno && end != s && (*end == 0 || *end == '(' ||
				      g_ascii_isspace(*end));
}

/*
 * "lid N" or "lid N lmc M" at @s, after blanks (ibnetdiscover's comments):
 * 0 if it is not there, 1 or 2 for what was read, -1 (and @err) for a LID
 * that is not unicast or an LMC past 7. Numbers of any length are read
 * whole: 99999999999 is refused, not wrapped.
 */
static int lid_lmc(const char *s, uint16_t *lid, uint8_t *lmc, const char *file,
		   unsigned line, GError **err)
{
	guint64 v;
	char *end;

	while (g_ascii_isspace(*s))
		s++;
	if (strncmp(s, "lid ", 4) || !g_ascii_isdigit(s[4]))
		return 0;
	errno = 0;
	v = g_ascii_strtoull(s + 4, &end, 10);
	if (errno || v >= 0xc000) {
		fail(err, file, line, "LID %.*s is not unicast (0..49151)", (int)(end - s - 4), s + 4);
		return -1;
	}
	*lid = (uint16_t)v;
	if (strncmp(end, " lmc ", 5) || !g_ascii_isdigit(end[5]))
		return 1;
	s = end + 5;
	errno = 0;
	v = g_ascii_strtoull(s, &end, 10);
	if (errno || v > 7) {
		fail(err, file, line, "LMC %.*s is not 0..7", (int)(end - s), s);
		return -1;
	}
	*lmc = (uint8_t)v;
	return 2;
}

/* A GUID in hex (no 0x: ibnetdiscover's parentheses), not 0 (IBA 4.1.1:
 * 0 is no GUID), 16 digits at most. */
static bool hex_guid(const char *s, uint64_t *g, const char *file, unsigned line, GError **err)
{
	char *end;

	errno = 0;
	*g = g_ascii_strtoull(s, &end, 16);
	if (errno || *end || !*g)
		return fail(err, file, line, "GUID \"%s\" is not valid (1..ffffffffffffffff)", s);
	return true;
}

/* Look for "4xQDR" style tokens in an ibnetdiscover comment. */
static void comment_link_speed(const char *c, uint8_t *w, struct lspeed *sp)
{
	static GRegex *re;	/* compiled once, like parse_text()'s */
	GMatchInfo *mi;

	if (!re)
		re = g_regex_new("\\b(\\d+)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR)\\b", 0, 0, NULL);

	if (g_regex_match(re, c, 0, &mi)) {
		char *wd = g_match_info_fetch(mi, 1), *spd = g_match_info_fetch(mi, 2);

		*w = lanes_width(strtoul(wd, NULL, 10));
		parse_speed(spd, sp);
		g_free(wd);
		g_free(spd);
	}
	g_match_info_free(mi);
}

/* key=val, and for switchguid= the "(portguid)" that may follow (or ""). */
static bool parse_directive(struct parser *ps, const char *key, const char *val,
			    const char *paren, const char *file, unsigned line, GError **err)
{
	uint64_t v;

	if (!strcmp(key, "width")) {
		if (!(ps->def_width = parse_width(val)))
			return fail(err, file, line, "bad width \"%s\" (1x 2x 4x 8x 12x, or an ibsim mask 1..31)", val);
		return true;
	}
	if (!strcmp(key, "speed") || !strcmp(key, "extspeed")) {
		if (!(key[0] == 's' ? parse_speed : parse_espeed)(val, &ps->def_sp))
			return fail(err, file, line, "bad %s \"%s\" (SDR..NDR, FDR10, or an ibsim mask)", key, val);
		return true;
	}
	/* link_layer=Ethernet: the next CA's ports are RoCE ports
	 * (docs/roce.md); InfiniBand, the default, says so. */
	if (!strcmp(key, "link_layer")) {
		if (!g_ascii_strcasecmp(val, "Ethernet"))
			ps->eth_line = line;
		else if (!g_ascii_strcasecmp(val, "InfiniBand"))
			ps->eth_line = 0;
		else
			return fail(err, file, line, "bad link_layer \"%s\" (Ethernet or InfiniBand)", val);
		return true;
	}
	if (!parse_u64(val, &v))
		return fail(err, file, line, "bad number \"%s\" for %s", val, key);
	/* A node GUID of 0 is no GUID (IBA 4.1.1); SystemImageGUID 0 is
	 * "none", as ibnetdiscover has it. */
	if (!v && strcmp(key, "sysimgguid") &&
	    (g_str_has_suffix(key, "guid") || !strcmp(key, "hcaguids")))
		return fail(err, file, line, "%s=0: a GUID of 0 is not valid", key);
	if (!strcmp(key, "vendid")) {
		ps->vendid = (uint32_t)v;
		ps->have_vendid = true;
		ps->ids_seen |= IDS_VENDID;
	} else if (!strcmp(key, "devid")) {
		ps->devid = (uint16_t)v;
		ps->have_devid = true;
		ps->ids_seen |= IDS_DEVID;
	} else if (!strcmp(key, "sysimgguid")) {
		ps->sysimgguid = v;
		ps->have_sysimgguid = true;
	} else if (!strcmp(key, "switchguid")) {
		ps->guid_next[NODE_SWITCH] = v;
		/* ibnetdiscover writes the port GUID (NodeInfo:PortGUID) in
		 * parentheses; the same as the node GUID on most switches. */
		ps->sw_port_guid = 0;
		if (*paren) {
			char *hex = g_strndup(paren + 1, strlen(paren) - 2);
			bool ok = hex_guid(hex, &ps->sw_port_guid, file, line, err);

			g_free(hex);
			if (!ok)
				return false;
		}
		ps->ids_seen |= IDS_GUID;
	} else if (!strcmp(key, "caguid") || !strcmp(key, "hcaguids")) {
		ps->guid_next[NODE_CA] = v;
		ps->ids_seen |= IDS_GUID;
	} else if (!strcmp(key, "rtguid")) {
		ps->guid_next[NODE_ROUTER] = v;
		ps->ids_seen |= IDS_GUID;
	} else
		return fail(err, file, line, "unknown setting \"%s\"", key);
	return true;
}

/* ConnectX-4 and later (mlx5; and BlueField): port 1's GUID is the node
 * GUID. Earlier HCAs number ports from node GUID + 1. */
static bool port_guid_is_node_guid(const struct node *n)
{
	return n->vendor_id == 0x02c9 &&
	       ((n->device_id >= 0x1011 && n->device_id <= 0x10ff) ||
		(n->device_id >= 0xa2d2 && n->device_id <= 0xa2ff));
}

/* What the ids before a node's header say of it: kept as written (a 0
 * too), defaults only where the file says nothing. */
static void node_identity(struct parser *ps, struct node *n)
{
	unsigned i;

	if (ps->have_vendid)
		n->vendor_id = ps->vendid;
	if (ps->have_devid)
		n->device_id = ps->devid;
	if (ps->have_sysimgguid)
		n->sys_guid = ps->sysimgguid;
	else if (ps->ids_seen == IDS_BLOCK)
		n->sys_guid = 0;
	if (node_is_switch(n) && ps->sw_port_guid)
		for (i = 0; i <= n->nports; i++)
			n->ports[i].guid = ps->sw_port_guid;
	if (!node_is_switch(n) && port_guid_is_node_guid(n))
		for (i = 1; i <= n->nports; i++)
			n->ports[i].guid = n->guid + i - 1;
	ps->have_sysimgguid = false;
	ps->ids_seen = 0;
	ps->sw_port_guid = 0;
}

static bool parse_header(struct parser *ps, GMatchInfo *mi, const char *file,
			 unsigned line, GError **err)
{
	char *kind = g_match_info_fetch(mi, 1), *ports = g_match_info_fetch(mi, 2);
	char *id = g_match_info_fetch(mi, 3), *rest = g_match_info_fetch(mi, 4);
	enum node_type type = !strcmp(kind, "Switch") ? NODE_SWITCH :
			      !strcmp(kind, "Rt") ? NODE_ROUTER : NODE_CA;
	unsigned long nports = strtoul(ports, NULL, 10);
	uint64_t guid = ps->guid_next[type];
	struct node *n = NULL;
	const char *hash = strchr(rest, '#');
	bool ok = false;

	if (nports < 1 || nports > 254) {
		fail(err, file, line, "node \"%s\": port count %s is not 1..254", id, ports);
		goto out;
	}
	if (fabric_find(ps->f, id)) {
		fail(err, file, line, "node \"%s\" is defined twice", id);
		goto out;
	}
	/* Node GUIDs only: a hash lookup (port GUIDs would mean a scan). */
	if (g_hash_table_contains(ps->f->by_guid, &guid)) {
		fail(err, file, line, "node \"%s\": GUID 0x%016" G_GINT64_MODIFIER "x is already used", id, guid);
		goto out;
	}
	n = fabric_add_node(ps->f, type, id, (uint8_t)nports, guid);
	if (!n) {
		fail(err, file, line, "node \"%s\" cannot be added", id);
		goto out;
	}
	/* GUIDs advance past this node's port GUIDs (guid + 1..nports). */
	ps->guid_next[type] = guid + (type == NODE_SWITCH ? 1 : nports + 1);
	node_identity(ps, n);
	if (ps->eth_line) {
		unsigned k;

		if (type != NODE_CA) {
			fail(err, file, ps->eth_line, "link_layer=Ethernet: \"%s\" is a %s; only a CA's "
			     "ports can be Ethernet", id, type == NODE_SWITCH ? "switch" : "router");
			goto out;
		}
		for (k = 1; k <= n->nports; k++)
			n->ports[k].link = PORT_LINK_ETH;
		fabric_roce_gids_changed(ps->f);
		ps->eth_line = 0;
	}
	if (hash) {
		const char *q1 = strchr(hash, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
		const char *tail = q2 ? q2 + 1 : hash + 1;

		if (q1 && q2)
			g_strlcpy(n->desc, q1 + 1, MIN(sizeof(n->desc), (size_t)(q2 - q1)));
		if (type == NODE_SWITCH) {
			const char *l = strstr(tail, "lid ");

			n->sw->enhanced_port0 = !strstr(tail, "base port 0");
			if (l && lid_lmc(l, &n->ports[0].lid, &n->ports[0].lmc, file, line, err) < 0)
				goto out;
		}
	}
	ps->cur = n;
	ok = true;
out:
	g_free(kind);
	g_free(ports);
	g_free(id);
	g_free(rest);
	return ok;
}

/* addr=A.B.C.D: the CA or router port's IPv4 address (docs/rdmacm.md
 * "Addresses"); one no port may have is refused here, one another port
 * has once the whole file is read (check_addrs). */
static bool parse_addr(struct parser *ps, struct link_decl *l, const char *val,
		       const char *file, unsigned line, GError **err)
{
	struct port *p = &l->n->ports[l->port];
	struct in_addr a;
	uint32_t v;

	if (node_is_switch(l->n))
		return fail(err, file, line, "addr= on a switch port: only CA and router ports have addresses");
	if (inet_pton(AF_INET, val, &a) != 1)
		return fail(err, file, line, "bad address \"%s\" (addr=A.B.C.D)", val);
	v = be32toh(a.s_addr);
	if (!port_ip4_valid(v, ps->f->loopback_addrs))
		return fail(err, file, line, ps->f->loopback_addrs ?
			    "addr=%s: on this machine's network (--host-network, CUSE mode) a port's address is in 127.0.0.0/8, which never leaves it" :
			    "addr=%s: not an address a port may have (0, loopback, multicast, class E; loopback only with --host-network)", val);
	p->ip4 = v;
	fabric_roce_gids_changed(ps->f);
	g_hash_table_insert(ps->addr_where, p, g_strdup_printf("%s:%u", file, line));
	return true;
}

static bool parse_options(struct parser *ps, struct link_decl *l, const char *rest,
			  const char *file, unsigned line, GError **err)
{
	char **tok = g_strsplit_set(rest, " \t", -1);
	bool ok = true;
	unsigned i;

	for (i = 0; tok[i] && ok; i++) {
		if (!*tok[i])
			continue;
		if (tok[i][0] == '#')
			break;
		if (g_str_has_prefix(tok[i], "w=")) {
			if (!(l->width = parse_width(tok[i] + 2)))
				ok = fail(err, file, line, "bad link width \"%s\"", tok[i]);
		} else if (g_str_has_prefix(tok[i], "s=") || g_str_has_prefix(tok[i], "e=")) {
			if (!(tok[i][0] == 's' ? parse_speed : parse_espeed)(tok[i] + 2, &l->sp))
				ok = fail(err, file, line, "bad link speed \"%s\"", tok[i]);
		} else if (g_str_has_prefix(tok[i], "addr=")) {
			ok = parse_addr(ps, l, tok[i] + 5, file, line, err);
		} else
			ok = fail(err, file, line, "unexpected \"%s\" on a port line", tok[i]);
	}
	g_strfreev(tok);
	return ok;
}

static bool parse_port_line(struct parser *ps, GMatchInfo *mi, const char *file,
			    unsigned line, GError **err)
{
	char *pnum = g_match_info_fetch(mi, 1), *pguid = g_match_info_fetch(mi, 4);
	char *remote = g_match_info_fetch(mi, 5), *rnum = g_match_info_fetch(mi, 7);
	char *rguid = g_match_info_fetch(mi, 10), *rest = g_match_info_fetch(mi, 11);
	struct node *n = ps->cur;
	struct link_decl *l;
	unsigned long port = strtoul(pnum, NULL, 10);
	unsigned long rport = *rnum ? strtoul(rnum, NULL, 10) : 1;
	uint64_t rg = 0;
	const char *hash = strchr(rest, '#');
	bool ok = false;

	if (port < 1 || port > n->nports) {
		fail(err, file, line, "node \"%s\" has no port %s (it has 1..%u)",
		     n->id, pnum, n->nports);
		goto out;
	}
	/* The remote port is checked against its node once known; here
	 * only the range, so that 4294967297 is not read as 1. */
	if (rport < 1 || rport > 254) {
		fail(err, file, line, "remote port %s is not 1..254", rnum);
		goto out;
	}
	if (*rguid && !hex_guid(rguid, &rg, file, line, err))
		goto out;
	l = g_new0(struct link_decl, 1);
	l->n = n;
	l->port = (unsigned)port;
	l->remote = g_strdup(remote);
	l->rport = (unsigned)rport;
	l->rguid = rg;
	l->where = g_strdup_printf("%s:%u", file, line);
	l->def_width = ps->def_width;
	l->def_sp = ps->def_sp;
	g_ptr_array_add(ps->links, l);
	if (!parse_options(ps, l, rest, file, line, err))
		goto out;
	if (*pguid && !node_is_switch(n)) {
		uint64_t g;

		if (!hex_guid(pguid, &g, file, line, err))
			goto out;
		n->ports[port].guid = g;
		g_hash_table_add(ps->named, &n->ports[port]);
	}
	if (hash) {
		uint8_t w = 0;
		struct lspeed sp = { 0, 0, 0 };
		const char *q = strchr(hash, '"');
		const char *own = strstr(hash, "lid");

		comment_link_speed(hash, &w, &sp);
		if (w && !l->width)
			l->width = w;
		if (sp.speed && !l->sp.speed)
			l->sp = sp;
		/* A CA's own LID comes before the remote's description. */
		if (!node_is_switch(n) && own && (!q || own < q) &&
		    lid_lmc(hash + 1, &n->ports[port].lid, &n->ports[port].lmc, file, line, err) < 0)
			goto out;
	}
	ok = true;
out:
	g_free(pnum);
	g_free(pguid);
	g_free(remote);
	g_free(rnum);
	g_free(rguid);
	g_free(rest);
	return ok;
}

static bool parse_text(struct parser *ps, char *text, size_t len, const char *file,
		       const char *dir, GError **err);

static bool parse_include(struct parser *ps, const char *line_text,
			  const char *file, unsigned line, const char *dir,
			  GError **err)
{
	const char *q1 = strchr(line_text, '"'), *q2 = q1 ? strchr(q1 + 1, '"') : NULL;
	char *name, *path, *text, *why = NULL;
	size_t len;
	bool ok;

	if (!q2)
		return fail(err, file, line, "include needs a quoted file name");
	if (ps->depth >= MAX_INCLUDE_DEPTH)
		return fail(err, file, line, "includes nested deeper than %d", MAX_INCLUDE_DEPTH);
	name = g_strndup(q1 + 1, (gsize)(q2 - q1 - 1));
	path = g_path_is_absolute(name) ? g_strdup(name) : g_build_filename(dir, name, NULL);
	if (!(text = topo_read(path, false, &ps->budget, &len, &why))) {
		fail(err, file, line, "cannot include \"%s\": %s", name, why);
		g_free(why);
		g_free(name);
		g_free(path);
		return false;
	}
	ps->depth++;
	{
		char *subdir = g_path_get_dirname(path);

		ok = parse_text(ps, text, len, path, subdir, err);
		g_free(subdir);
	}
	ps->depth--;
	g_free(text);
	g_free(name);
	g_free(path);
	return ok;
}

/*
 * A line that is no topology (a dump that begins with ibnetdiscover's own
 * "ibwarn: ..." on stderr, a note someone added) is skipped with a
 * warning naming it; the first few each, then one count at the end.
 */
static void skip_line(struct parser *ps, const char *file, unsigned line, const char *text)
{
	if (++ps->skipped <= MAX_SKIP_WARNINGS)
		g_warning("%s:%u: skipped, not topology: \"%.60s\" (--strict refuses it)",
			  file, line, text);
}

/* g_regex_match() that frees the match info of an earlier try first. */
static bool match(GRegex *re, const char *line, GMatchInfo **mi)
{
	g_match_info_free(*mi);
	*mi = NULL;
	return g_regex_match(re, line, 0, mi);
}

/* Parse @text (@len bytes), cutting its lines in place. */
static bool parse_text(struct parser *ps, char *text, size_t len, const char *file,
		       const char *dir, GError **err)
{
	static GRegex *re_header, *re_port, *re_set, *re_group;
	/*
	 * Lines are cut in place with memchr: g_strsplit() searches with
	 * strstr(), which sanitizers check by measuring the whole rest of the
	 * text each time, quadratic on a 50,000-node file.
	 */
	char *copy = text, *end = copy + len, *line, *next, *p;
	struct progress *prog;
	unsigned i, nlines = 1;
	char *what;
	bool ok = true;

	if (!re_header) {
		re_header = g_regex_new("^(Switch|Hca|Ca|Rt)\\s+(\\d+)\\s+\"([^\"]+)\"(.*)$", 0, 0, NULL);
		/* [port][ext N](guid) "remote"[port][ext N] (guid) rest: the
		 * [ext N] of `ibnetdiscover -g` (chassis external ports) are
		 * read and ignored. */
		re_port = g_regex_new("^\\[(\\d+)\\](\\[ext \\d+\\])?(\\(([0-9a-fA-Fx]+)\\))?\\s*"
				      "\"([^\"]+)\"(\\[(\\d+)\\])?(\\[ext \\d+\\])?"
				      "\\s*(\\(([0-9a-fA-Fx]+)\\))?(.*)$", 0, 0, NULL);
		/* `ibnetdiscover -g` groups nodes under these lines. */
		re_group = g_regex_new("^(Non-Chassis Nodes|Chassis \\d+( \\(guid 0x[0-9a-fA-F]+\\))?)$",
				       0, 0, NULL);
		re_set = g_regex_new("^([a-z_]+)\\s*=\\s*([^\\s(]+)(\\([0-9a-fA-Fx]+\\))?", 0, 0, NULL);
	}
	ps->cur = NULL;
	for (p = copy; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		nlines++;
	what = g_strdup_printf("reading %s", file);
	prog = progress_new(what, "lines", nlines);
	for (i = 0, line = copy; ok && line; i++, line = next) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *l;
		unsigned lineno = i + 1;
		GMatchInfo *mi = NULL;

		next = nl ? nl + 1 : NULL;
		if (memchr(line, 0, (size_t)((nl ? nl : end) - line))) {
			/* Once the rest of the file went unread, silently. */
			ok = fail(err, file, lineno, "a NUL byte: a topology file is text");
			break;
		}
		if (nl)
			*nl = 0;
		l = g_strstrip(line);

		if (!(i & 1023))
			progress_update(prog, i);

		if (*l == 0) {
			ps->cur = NULL;	/* a blank line ends the record */
			continue;
		}
		if (*l == '#')
			continue;
		if (*l == '[') {
			if (!ps->cur)
				ok = fail(err, file, lineno, "port line outside a node record");
			else if (match(re_port, l, &mi))
				ok = parse_port_line(ps, mi, file, lineno, err);
			else
				ok = fail(err, file, lineno, "malformed port line (want [port] \"node\"[port])");
		} else if (match(re_header, l, &mi)) {
			ok = parse_header(ps, mi, file, lineno, err);
		} else if (g_str_has_prefix(l, "include")) {
			ps->cur = NULL;
			ok = parse_include(ps, l, file, lineno, dir, err);
		} else if (match(re_set, l, &mi)) {
			char *k = g_match_info_fetch(mi, 1), *v = g_match_info_fetch(mi, 2);
			char *paren = g_match_info_fetch(mi, 3);

			ps->cur = NULL;
			ok = parse_directive(ps, k, v, paren ? paren : "", file, lineno, err);
			g_free(k);
			g_free(v);
			g_free(paren);
		} else if (match(re_group, l, &mi)) {
			ps->cur = NULL;	/* ibnetdiscover -g: the grouping is not kept */
		} else if (ps->flags & TOPO_STRICT) {
			ok = fail(err, file, lineno, "unrecognized line \"%.40s\"", l);
		} else {
			/* The record goes on: stderr lines can land mid-record. */
			skip_line(ps, file, lineno, l);
		}
		g_match_info_free(mi);
	}
	progress_done(prog);
	g_free(what);
	return ok;
}

/*
 * The second end of a cable names a width or speed (or both): where the
 * first named one too and they differ, the link trained to the lower of
 * the two. A dump of a degraded link shows just that (the man page's
 * example: 1xSDR on one side, 4xSDR on the other); it is evidence, not a
 * contradiction, so it loads, and -v says what was taken.
 */
static void second_end(struct link_decl *l, struct link_decl *other, struct port *a,
		       struct port *b)
{
	uint8_t w = other->width ? other->width : other->def_width;
	struct lspeed sp = other->sp.speed ? other->sp : other->def_sp;

	if (l->width && l->width != w) {
		if (other->width)
			g_message("%s: width %ux, %ux at %s: the link trained to %ux", l->where,
				  width_lanes(l->width), width_lanes(other->width), other->where,
				  MIN(width_lanes(l->width), width_lanes(other->width)));
		if (!other->width || width_lanes(l->width) < width_lanes(w))
			w = l->width;
	}
	if (l->sp.speed && memcmp(&l->sp, &sp, sizeof(sp))) {
		const struct link_speed *mine = link_speed_of(l->sp), *theirs = link_speed_of(sp);

		if (other->sp.speed)
			g_message("%s: speed %s, %s at %s: the link trained to %s", l->where,
				  mine->name, theirs->name, other->where,
				  mine->deci < theirs->deci ? mine->name : theirs->name);
		if (!other->sp.speed || mine->deci < theirs->deci)
			sp = l->sp;
	}
	a->width_active = b->width_active = w;
	port_set_speed(a, sp);
	port_set_speed(b, sp);
}

/*
 * A port line names the remote CA port's GUID in parentheses; where that
 * port's own line gave none (a dump written from one side, or cut), it is
 * the port's GUID. Two different GUIDs for one port cannot both be real.
 */
static bool remote_guid(struct parser *ps, struct link_decl *l, struct port *b, GError **err)
{
	if (g_hash_table_contains(ps->named, b)) {
		if (b->guid == l->rguid)
			return true;
		g_set_error(err, TOPO_ERROR, 1, "%s: \"%s\"[%u] has port GUID %" G_GINT64_MODIFIER
			    "x here but %" G_GINT64_MODIFIER "x on its own line", l->where,
			    b->node->id, b->num, l->rguid, b->guid);
		return false;
	}
	b->guid = l->rguid;
	fabric_roce_gids_changed(b->node->fabric);
	g_hash_table_add(ps->named, b);
	return true;
}

/* Make the cables. Each may be declared on one end or both. */
static bool make_links(struct parser *ps, GError **err)
{
	GHashTable *decl = g_hash_table_new(NULL, NULL);	/* port -> decl */
	struct progress *prog = progress_new("connecting ports", "cables", ps->links->len);
	bool ok = true;
	unsigned i;

	for (i = 0; ok && i < ps->links->len; i++) {
		struct link_decl *l = g_ptr_array_index(ps->links, i);
		struct node *r = fabric_find(ps->f, l->remote);
		struct port *a = &l->n->ports[l->port], *b;
		struct link_decl *other;

		if (!(i & 1023))
			progress_update(prog, i);
		if (!r) {
			g_set_error(err, TOPO_ERROR, 1, "%s: node \"%s\" is not defined", l->where, l->remote);
			ok = false;
			break;
		}
		if (l->rport < 1 || l->rport > r->nports) {
			g_set_error(err, TOPO_ERROR, 1, "%s: node \"%s\" has no port %u (it has 1..%u)",
				    l->where, r->id, l->rport, r->nports);
			ok = false;
			break;
		}
		b = &r->ports[l->rport];
		if (a == b) {
			g_set_error(err, TOPO_ERROR, 1, "%s: port is linked to itself", l->where);
			ok = false;
			break;
		}
		if (l->rguid && !node_is_switch(r) && !remote_guid(ps, l, b, err)) {
			ok = false;
			break;
		}
		if (!a->remote && !b->remote) {
			fabric_link(a, b, l->width ? l->width : l->def_width,
				    l->sp.speed ? l->sp : l->def_sp);
			g_hash_table_insert(decl, a, l);
			g_hash_table_insert(decl, b, l);
			continue;
		}
		other = g_hash_table_lookup(decl, a->remote ? (gpointer)a : (gpointer)b);
		if (a->remote != b || b->remote != a) {
			struct port *busy = a->remote ? a : b;

			g_set_error(err, TOPO_ERROR, 1,
				    "%s: \"%s\"[%u] is already linked to \"%s\"[%u] (%s)",
				    l->where, busy->node->id, busy->num,
				    busy->remote->node->id, busy->remote->num,
				    other ? other->where : "?");
			ok = false;
			break;
		}
		second_end(l, other, a, b);
	}
	progress_done(prog);
	g_hash_table_destroy(decl);
	return ok;
}

/* No two ports have one address, given (addr=) or the default plan's:
 * the second in file order is named, by its addr= line (or the first's,
 * when the second has the plan's). */
static bool check_addrs(struct parser *ps, GError **err)
{
	GHashTable *seen;
	bool ok = true;

	if (!g_hash_table_size(ps->addr_where))
		return true;
	seen = g_hash_table_new(NULL, NULL);
	for (unsigned i = 0; ok && i < ps->f->nodes->len; i++) {
		struct node *n = g_ptr_array_index(ps->f->nodes, i);

		for (unsigned j = 1; !node_is_switch(n) && j <= n->nports && ok; j++) {
			struct port *p = &n->ports[j], *o;
			uint32_t a = port_ip4(p);
			const char *where;

			o = g_hash_table_lookup(seen, GUINT_TO_POINTER(a));
			if (!o) {
				g_hash_table_insert(seen, GUINT_TO_POINTER(a), p);
				continue;
			}
			where = g_hash_table_lookup(ps->addr_where, p);
			g_set_error(err, TOPO_ERROR, 1, "%s: addr=" IP4_FMT " is \"%s\"[%u]'s too",
				    where ? where : (char *)g_hash_table_lookup(ps->addr_where, o),
				    IP4_PARTS(a),
				    (where ? o : p)->node->id, (where ? o : p)->num);
			ok = false;
		}
	}
	g_hash_table_destroy(seen);
	return ok;
}

/* Load from @text (@len bytes), which is cut up on the way (a file's
 * buffer is not copied: at 50,000 nodes that is 8 MB more at the peak).
 * @budget: what reading @text took already. */
static struct fabric *load_buffer(char *text, size_t len, const char *name, unsigned flags,
				  struct topo_budget budget, GError **err)
{
	struct parser ps = {
		.f = fabric_new(),
		.flags = flags,
		.links = g_ptr_array_new_with_free_func(link_decl_free),
		.named = g_hash_table_new(NULL, NULL),
		.def_width = WIDTH_4X,
		.def_sp = { SPEED_QDR, 0, 0 },
		/* Deterministic GUIDs for nodes the file gives none for. */
		.guid_next = { 0, 0x0002c90300000100ULL, 0x0002c90200000100ULL,
			       0x0002c90400000100ULL },
		.budget = budget,
	};
	char *dir = g_path_get_dirname(name);
	bool ok;

	ps.addr_where = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	ps.f->loopback_addrs = flags & TOPO_LOOPBACK_ADDRS;
	ok = parse_text(&ps, text, len, name, dir, err) && make_links(&ps, err) &&
	     check_addrs(&ps, err);
	if (ps.skipped > MAX_SKIP_WARNINGS)
		g_warning("%s: %u lines skipped in all, not topology", name, ps.skipped);
	if (ok && ps.f->nodes->len == 0)
		ok = fail(err, name, 1, "no nodes defined");
	g_free(dir);
	g_ptr_array_free(ps.links, TRUE);
	g_hash_table_destroy(ps.named);
	g_hash_table_destroy(ps.addr_where);
	if (!ok) {
		fabric_free(ps.f);
		return NULL;
	}
	return ps.f;
}

struct fabric *topo_load_file(const char *path, unsigned flags, GError **err)
{
	struct topo_budget budget = { 0, 0 };
	char *text, *why = NULL;
	struct fabric *f;
	size_t len;

	if (!(text = topo_read(path, true, &budget, &len, &why))) {
		g_set_error(err, TOPO_ERROR, 2, "%s: %s", path, why);
		g_free(why);
		return NULL;
	}
	f = load_buffer(text, len, path, flags, budget, err);
	g_free(text);
	return f;
}

struct fabric *topo_load_string(const char *text, const char *name, unsigned flags,
				GError **err)
{
	struct topo_budget budget = { strlen(text), 1 };
	char *copy = g_strdup(text);
	struct fabric *f = load_buffer(copy, budget.bytes, name, flags, budget, err);

	g_free(copy);
	return f;
}

struct fabric *topo_load_default(unsigned flags)
{
	GError *err = NULL;
	struct fabric *f = topo_load_string(topo_default_text, "(built-in default fabric)",
					    TOPO_STRICT | flags, &err);

	/* The text is part of the program; a failure is a build bug. */
	g_assert_no_error(err);
	return f;
}
