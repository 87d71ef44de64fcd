/* SPDX-License-Identifier: MIT */
/* The control commands: one table, one handler each (see ctl.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/ctl.h"
#include "emulator/scenario.h"
#include "fabric/port.h"
#include "topologies/topo.h"

struct ctl_cmd;
typedef int (*ctl_fn)(struct ctl_env *env, char **argv, bool json, GString *out);

struct ctl_cmd {
	const char *name, *sub;	/* sub NULL: no subcommand */
	ctl_fn fn;
	const char *usage;
};

static int err(GString *out, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int err(GString *out, const char *fmt, ...)
{
	va_list ap;

	g_string_truncate(out, 0);
	va_start(ap, fmt);
	g_string_append_vprintf(out, fmt, ap);
	va_end(ap);
	g_string_append_c(out, '\n');
	return -1;
}

static unsigned nargs(char **argv)
{
	return g_strv_length(argv);
}

/* "NODE/PORT", NODE by id or GUID. */
static struct port *parse_port(struct ctl_env *env, const char *s, GString *out)
{
	const char *slash = strrchr(s, '/');
	char *name, *end;
	struct node *n;
	unsigned long num;

	if (!slash) {
		err(out, "error: \"%s\" is not NODE/PORT", s);
		return NULL;
	}
	name = g_strndup(s, (gsize)(slash - s));
	n = fabric_lookup(env->fabric, name);
	g_free(name);
	num = strtoul(slash + 1, &end, 10);
	if (!n || *end || slash[1] == 0 || num > n->nports) {
		err(out, "error: no port \"%s\" in the fabric", s);
		return NULL;
	}
	return &n->ports[num];
}

static struct node *parse_node(struct ctl_env *env, const char *s, GString *out)
{
	struct node *n = fabric_lookup(env->fabric, s);

	if (!n)
		err(out, "error: no node \"%s\" in the fabric", s);
	return n;
}

/*
 * A field of our /proc/self/status in kB (VmHWM, VmRSS), 0 if unknown.
 * Inside a run the daemon's /proc entry is out of sight (nsinit.h): status
 * says these for tests and benchmarks.
 */
static unsigned long status_kb(const char *field)
{
	char *text = NULL, *p;
	unsigned long kb = 0;

	if (g_file_get_contents("/proc/self/status", &text, NULL, NULL) &&
	    (p = strstr(text, field)))
		kb = strtoul(p + strlen(field) + 1, NULL, 10);
	g_free(text);
	return kb;
}

static unsigned open_fds(void)
{
	GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
	unsigned n = 0;

	while (d && g_dir_read_name(d))
		n++;
	if (d)
		g_dir_close(d);
	return n ? n - 1 : 0;	/* not the one reading the directory */
}

static int cmd_status(struct ctl_env *env, char **argv, bool json, GString *out)
{
	struct fabric_counts c;

	(void)argv;
	fabric_count(env->fabric, &c);
	if (json)
		g_string_append_printf(out, "{\"nodes\": %u, \"switches\": %u, \"cas\": %u, "
				       "\"links\": %u, \"delivered\": %" G_GUINT64_FORMAT
				       ", \"dropped\": %" G_GUINT64_FORMAT ", \"faults\": %u, \"seed\": %u, "
				       "\"peak_rss_kb\": %lu, \"rss_kb\": %lu, \"open_fds\": %u}\n",
				       c.nodes, c.switches, c.cas, c.links, env->fabric->delivered,
				       env->fabric->dropped, env->fabric->faults.rules->len,
				       env->fabric->faults.seed, status_kb("VmHWM:"), status_kb("VmRSS:"),
				       open_fds());
	else
		g_string_append_printf(out, "%u nodes (%u switches, %u CAs), %u links; "
				       "%" G_GUINT64_FORMAT " MADs delivered, %" G_GUINT64_FORMAT
				       " dropped; %u fault rules; seed %u; peak RSS %.1f MB\n",
				       c.nodes, c.switches, c.cas, c.links, env->fabric->delivered,
				       env->fabric->dropped, env->fabric->faults.rules->len,
				       env->fabric->faults.seed, status_kb("VmHWM:") / 1024.0);
	return 0;
}

/* Who this emulator is (ibemu list): name, pid, mode, topology, nodes. */
static int cmd_info(struct ctl_env *env, char **argv, bool json, GString *out)
{
	char *topo = g_strescape(env->topology ? env->topology : "", NULL);

	(void)argv;
	if (json)
		g_string_append_printf(out, "{\"name\": \"%s\", \"pid\": %d, \"mode\": \"%s\", "
				       "\"topology\": \"%s\", \"attached\": \"%s\"}\n",
				       env->name ? env->name : "", (int)getpid(),
				       env->mode ? env->mode : "", topo,
				       env->attached ? env->attached : "");
	else
		g_string_append_printf(out, "%s\t%d\t%s\t%s\t%s\n", env->name ? env->name : "-",
				       (int)getpid(), env->mode ? env->mode : "-",
				       env->topology ? env->topology : "-",
				       env->attached ? env->attached : "-");
	g_free(topo);
	return 0;
}

static int cmd_nodes(struct ctl_env *env, char **argv, bool json, GString *out)
{
	unsigned i;

	(void)argv;
	if (json)
		g_string_append(out, "[");
	for (i = 0; i < env->fabric->nodes->len; i++) {
		struct node *n = g_ptr_array_index(env->fabric->nodes, i);
		static const char *const types[] = { "", "CA", "Switch", "Router" };

		if (json)
			g_string_append_printf(out, "%s{\"id\": \"%s\", \"type\": \"%s\", \"guid\": \"0x%016" G_GINT64_MODIFIER "x\", \"ports\": %u, \"lid\": %u, \"on\": %s}",
					       i ? ", " : "", n->id, types[n->type], n->guid, n->nports,
					       port_info_port(&n->ports[node_is_switch(n) ? 0 : 1])->lid,
					       n->off ? "false" : "true");
		else
			g_string_append_printf(out, "%-8s %-20s 0x%016" G_GINT64_MODIFIER "x ports %u%s\n",
					       types[n->type], n->id, n->guid, n->nports,
					       n->off ? " (off)" : "");
	}
	if (json)
		g_string_append(out, "]\n");
	return 0;
}

static int cmd_port(struct ctl_env *env, char **argv, bool json, GString *out)
{
	struct port *p, *ip;

	if (nargs(argv) != 2)
		return err(out, "usage: port NODE/PORT");
	if (!(p = parse_port(env, argv[1], out)))
		return -1;
	ip = port_info_port(p);
	if (json)
		g_string_append_printf(out, "{\"port\": \"%s/%u\", \"guid\": \"0x%016" G_GINT64_MODIFIER "x\", "
				       "\"state\": \"%s\", \"phys_state\": \"%s\", \"lid\": %u, \"lmc\": %u, "
				       "\"sm_lid\": %u, \"cap_mask\": \"0x%08x\", \"remote\": \"%s%s%u\"}\n",
				       p->node->id, p->num, p->guid, port_state_name(p->state),
				       phys_state_name(p->phys_state), ip->lid, ip->lmc, ip->sm_lid,
				       ip->cap_mask, p->remote ? p->remote->node->id : "",
				       p->remote ? "/" : "", p->remote ? p->remote->num : 0);
	else
		g_string_append_printf(out, "%s/%u guid 0x%016" G_GINT64_MODIFIER "x state %s phys %s lid %u lmc %u sm_lid %u cap_mask 0x%08x remote %s%s%u\n",
				       p->node->id, p->num, p->guid, port_state_name(p->state),
				       phys_state_name(p->phys_state), ip->lid, ip->lmc, ip->sm_lid,
				       ip->cap_mask, p->remote ? p->remote->node->id : "-",
				       p->remote ? "/" : "", p->remote ? p->remote->num : 0);
	return 0;
}

static int cmd_dump(struct ctl_env *env, char **argv, bool json, GString *out)
{
	bool dot = argv[1] && !strcmp(argv[1], "--dot");

	if (json)
		return err(out, "error: dump writes the topology format; --json is not available");
	if (argv[1] && !dot)
		return err(out, "usage: dump [--dot]");
	if (dot)
		topo_dot(env->fabric, out, true);
	else
		topo_dump(env->fabric, out);
	return 0;
}

/* pid: the emulator's; pid init: that of the run's init, whose PID
 * namespace `ibemu exec` joins. */
static int cmd_pid(struct ctl_env *env, char **argv, bool json, GString *out)
{
	int pid = (int)getpid();

	if (nargs(argv) > 2 || (argv[1] && strcmp(argv[1], "init")))
		return err(out, "usage: pid [init]");
	if (argv[1] && !(pid = env->init_pid))
		return err(out, "error: this emulator runs no command (ibemu start)");
	g_string_append_printf(out, json ? "{\"pid\": %d}\n" : "%d\n", pid);
	return 0;
}

static int cmd_seed(struct ctl_env *env, char **argv, bool json, GString *out)
{
	(void)argv;
	g_string_append_printf(out, json ? "{\"seed\": %u}\n" : "%u\n", env->fabric->faults.seed);
	return 0;
}

static int cmd_events(struct ctl_env *env, char **argv, bool json, GString *out)
{
	GPtrArray *log = env->fabric->faults.log;
	unsigned i;

	(void)argv;
	if (json)
		g_string_append(out, "[");
	for (i = 0; i < log->len; i++) {
		if (json) {
			char *e = g_strescape(g_ptr_array_index(log, i), NULL);

			g_string_append_printf(out, "%s\"%s\"", i ? ", " : "", e);
			g_free(e);
		} else
			g_string_append_printf(out, "%s\n", (char *)g_ptr_array_index(log, i));
	}
	if (json)
		g_string_append(out, "]\n");
	return 0;
}

static int cmd_link(struct ctl_env *env, char **argv, bool json, GString *out)
{
	bool up = !strcmp(argv[1], "up");
	struct port *p;

	(void)json;
	if (nargs(argv) != 3)
		return err(out, "usage: link down|up NODE/PORT");
	if (!(p = parse_port(env, argv[2], out)))
		return -1;
	if (!p->remote)
		return err(out, "error: %s has no cable", argv[2]);
	port_cable_set(p, up);
	fault_log(&env->fabric->faults, "link %s %s/%u", up ? "up" : "down", p->node->id, p->num);
	g_string_append_printf(out, "link %s/%u %s\n", p->node->id, p->num, up ? "up" : "down");
	return 0;
}

static int cmd_port_phys(struct ctl_env *env, char **argv, bool json, GString *out)
{
	bool enable = !strcmp(argv[1], "enable");
	struct port *p;

	(void)json;
	if (nargs(argv) != 3)
		return err(out, "usage: port disable|enable NODE/PORT");
	if (!(p = parse_port(env, argv[2], out)))
		return -1;
	if (p->num == 0)
		return err(out, "error: port 0 cannot be disabled");
	/* As PortInfo:PortPhysicalState 3 (Disabled) / 2 (Polling) would. */
	port_set_phys(p, enable ? PHYS_POLLING : PHYS_DISABLED);
	fault_log(&env->fabric->faults, "port %s %s/%u", argv[1], p->node->id, p->num);
	g_string_append_printf(out, "port %s/%u %sd\n", p->node->id, p->num, argv[1]);
	return 0;
}

/* guid NODE 0x... (node GUID) or guid NODE/PORT 0x... (a CA port's GUID) */
static int cmd_guid(struct ctl_env *env, char **argv, bool json, GString *out)
{
	struct port *p = NULL;
	struct node *n;
	uint64_t guid;
	char *end;

	(void)json;
	if (nargs(argv) != 3)
		return err(out, "usage: guid NODE[/PORT] GUID");
	guid = g_ascii_strtoull(argv[2], &end, 0);
	if (*end || !guid)
		return err(out, "error: bad GUID \"%s\"", argv[2]);
	if (strchr(argv[1], '/')) {
		if (!(p = parse_port(env, argv[1], out)))
			return -1;
		if (node_is_switch(p->node))
			return err(out, "error: switch ports carry the switch GUID; change the node's");
		p->guid = guid;
		port_changed(p);
	} else {
		if (!(n = parse_node(env, argv[1], out)))
			return -1;
		fabric_set_node_guid(env->fabric, n, guid);
	}
	/* Duplicate GUIDs are allowed on purpose: SMs must cope with them. */
	fault_log(&env->fabric->faults, "guid %s %s", argv[1], argv[2]);
	g_string_append_printf(out, "%s guid %s\n", argv[1], argv[2]);
	return 0;
}

/* lid NODE/PORT LID [LMC]: as if an SM had set it (switches: port 0). */
static int cmd_lid(struct ctl_env *env, char **argv, bool json, GString *out)
{
	unsigned n = nargs(argv);
	unsigned long lid, lmc = 0;
	struct port *p, *ip;
	char *end;

	(void)json;
	if (n != 3 && n != 4)
		return err(out, "usage: lid NODE/PORT LID [LMC]");
	if (!(p = parse_port(env, argv[1], out)))
		return -1;
	lid = strtoul(argv[2], &end, 0);
	if (*end || lid >= 0xc000)
		return err(out, "error: \"%s\" is not a unicast LID", argv[2]);
	if (n == 4 && ((lmc = strtoul(argv[3], &end, 0)) > 7 || *end))
		return err(out, "error: LMC is 0..7");
	ip = port_info_port(p);
	ip->lid = (uint16_t)lid;
	ip->lmc = (uint8_t)lmc;
	port_changed(ip);
	fault_log(&env->fabric->faults, "lid %s %lu lmc %lu", argv[1], lid, lmc);
	g_string_append_printf(out, "%s lid %lu lmc %lu\n", argv[1], lid, lmc);
	return 0;
}

static int cmd_node(struct ctl_env *env, char **argv, bool json, GString *out)
{
	bool on = !strcmp(argv[1], "on");
	struct node *n;

	(void)json;
	if (nargs(argv) != 3)
		return err(out, "usage: node off|on NODE");
	if (!(n = parse_node(env, argv[2], out)))
		return -1;
	node_power(n, on);
	fault_log(&env->fabric->faults, "node %s %s", on ? "on" : "off", n->id);
	g_string_append_printf(out, "node %s %s\n", n->id, on ? "on" : "off");
	return 0;
}

#define COUNTER(name, field) { name, G_STRUCT_OFFSET(struct port_counters, field) }
static const struct { const char *name; glong offset; } counter_fields[] = {
	COUNTER("SymbolErrorCounter", symbol_err),
	COUNTER("LinkErrorRecoveryCounter", link_err_recovery),
	COUNTER("LinkDownedCounter", link_downed),
	COUNTER("PortRcvErrors", rcv_err),
	COUNTER("PortRcvRemotePhysicalErrors", rcv_remote_phys_err),
	COUNTER("PortRcvSwitchRelayErrors", rcv_switch_relay_err),
	COUNTER("PortXmitDiscards", xmit_discards),
	COUNTER("PortXmitConstraintErrors", xmit_constraint_err),
	COUNTER("PortRcvConstraintErrors", rcv_constraint_err),
	COUNTER("LocalLinkIntegrityErrors", local_link_integrity_err),
	COUNTER("ExcessiveBufferOverrunErrors", excessive_buf_overrun_err),
	COUNTER("VL15Dropped", vl15_dropped),
	COUNTER("PortXmitWait", xmit_wait),
};

static int cmd_counters(struct ctl_env *env, char **argv, bool json, GString *out)
{
	unsigned n = nargs(argv), i;
	struct port *p;

	if (n != 2 && n != 5)
		return err(out, "usage: counters NODE/PORT [set|bump FIELD N]");
	if (!(p = parse_port(env, argv[1], out)))
		return -1;
	if (n == 5) {
		char *end;
		unsigned long v = strtoul(argv[4], &end, 0);

		if (*end || (strcmp(argv[2], "set") && strcmp(argv[2], "bump")))
			return err(out, "usage: counters NODE/PORT [set|bump FIELD N]");
		for (i = 0; i < G_N_ELEMENTS(counter_fields); i++)
			if (!g_ascii_strcasecmp(argv[3], counter_fields[i].name))
				break;
		if (i == G_N_ELEMENTS(counter_fields))
			return err(out, "error: no counter \"%s\" (e.g. SymbolErrorCounter)", argv[3]);
		{
			uint32_t *c = G_STRUCT_MEMBER_P(&p->counters, counter_fields[i].offset);

			*c = argv[2][0] == 's' ? (uint32_t)v : *c + (uint32_t)v;
		}
		fault_log(&env->fabric->faults, "counters %s/%u %s %s %lu", p->node->id, p->num,
			  argv[2], counter_fields[i].name, v);
	}
	if (json)
		g_string_append(out, "{");
	for (i = 0; i < G_N_ELEMENTS(counter_fields); i++)
		g_string_append_printf(out, json ? "%s\"%s\": %u" : "%s%s %u\n",
				       json && i ? ", " : "", counter_fields[i].name,
				       G_STRUCT_MEMBER(uint32_t, &p->counters, counter_fields[i].offset));
	g_string_append_printf(out, json ? ", \"PortXmitPkts\": %" G_GUINT64_FORMAT ", \"PortRcvPkts\": %" G_GUINT64_FORMAT "}\n" :
			       "PortXmitPkts %" G_GUINT64_FORMAT "\nPortRcvPkts %" G_GUINT64_FORMAT "\n",
			       p->counters.xmit_pkts, p->counters.rcv_pkts);
	return 0;
}

/* Names for classes, methods and attributes in fault rules. */
static const struct { const char *name; int value; } class_names[] = {
	{ "smp", 0x01 }, { "lid", 0x01 }, { "dr", 0x81 }, { "sa", 0x03 },
	{ "perf", 0x04 }, { "pma", 0x04 }, { "cm", 0x07 },
}, method_names[] = {
	{ "get", 0x01 }, { "set", 0x02 }, { "send", 0x03 }, { "trap", 0x05 },
	{ "report", 0x06 }, { "trap_repress", 0x07 }, { "gettable", 0x12 },
	{ "getmulti", 0x14 }, { "delete", 0x15 }, { "getresp", 0x81 },
	{ "gettableresp", 0x92 },
}, attr_names[] = {
	{ "NodeDescription", 0x10 }, { "NodeDesc", 0x10 }, { "NodeInfo", 0x11 },
	{ "SwitchInfo", 0x12 }, { "GUIDInfo", 0x14 }, { "PortInfo", 0x15 },
	{ "P_KeyTable", 0x16 }, { "PKeyTable", 0x16 }, { "SLtoVLMappingTable", 0x17 },
	{ "VLArbitrationTable", 0x18 }, { "LinearForwardingTable", 0x19 },
	{ "LFT", 0x19 }, { "MulticastForwardingTable", 0x1b }, { "MFT", 0x1b },
	{ "SMInfo", 0x20 }, { "LedInfo", 0x31 }, { "Notice", 0x02 },
	{ "ClassPortInfo", 0x01 }, { "PortCounters", 0x12 },
	{ "PortCountersExtended", 0x1d }, { "NodeRecord", 0x11 },
	{ "PathRecord", 0x35 }, { "MCMemberRecord", 0x38 },
};

#define LOOKUP(table, s, v) lookup_name(table, G_N_ELEMENTS(table), s, v)
static bool lookup_name(const void *table, unsigned n, const char *s, int *v)
{
	const struct { const char *name; int value; } *t = table;
	char *end;
	unsigned i;

	for (i = 0; i < n; i++)
		if (!g_ascii_strcasecmp(t[i].name, s)) {
			*v = t[i].value;
			return true;
		}
	*v = (int)strtol(s, &end, 0);
	return *s && !*end && *v >= 0;
}

static int cmd_fault_add(struct ctl_env *env, char **argv, bool json, GString *out)
{
	static const char *const actions[] = { "drop", "delay", "duplicate", "corrupt",
					       "status", "reorder" };
	struct fault_rule *r = g_new(struct fault_rule, 1);
	unsigned i, n = nargs(argv);
	char *end;

	fault_rule_defaults(r);
	if (n < 3)
		goto usage;
	for (i = 0; i < G_N_ELEMENTS(actions) && strcmp(argv[2], actions[i]); i++)
		;
	if (i == G_N_ELEMENTS(actions))
		goto usage;
	r->action = i;
	i = 3;
	if (r->action == FAULT_DELAY || r->action == FAULT_STATUS ||
	    r->action == FAULT_CORRUPT || r->action == FAULT_REORDER) {
		bool optional = r->action == FAULT_CORRUPT || r->action == FAULT_REORDER;

		if (i < n && argv[i][0] != '-') {
			r->arg = (unsigned)strtoul(argv[i], &end, 0);
			if (*end) {
				g_free(r);
				return err(out, "error: bad value \"%s\" for %s", argv[i], argv[2]);
			}
			i++;
		} else if (!optional) {
			const char *want = r->action == FAULT_DELAY ? "milliseconds" :
					   "a MAD status such as 0x1c";

			g_free(r);
			return err(out, "error: %s needs a value (%s)", argv[2], want);
		} else if (r->action == FAULT_CORRUPT)
			r->arg = 64;	/* the first byte of attribute data */
		else
			r->arg = 100;	/* reorder: hold at most 100 ms */
	}
	for (; i < n; i++) {
		const char *o = argv[i], *v = i + 1 < n ? argv[i + 1] : NULL;
		int x;

		if (!strcmp(o, "--dr")) { r->route = 1; continue; }
		if (!strcmp(o, "--lid")) { r->route = 0; continue; }
		if (!v)
			goto usage;
		i++;
		if (!strcmp(o, "--node")) {
			if (!(r->node = parse_node(env, v, out))) {
				g_free(r);
				return -1;
			}
		} else if (!strcmp(o, "--port")) {
			r->port = (int)strtol(v, &end, 10);
			if (*end) goto bad_value;
		} else if (!strcmp(o, "--class")) {
			if (!LOOKUP(class_names, v, &x)) goto bad_value;
			r->mgmt_class = x;
		} else if (!strcmp(o, "--method")) {
			if (!LOOKUP(method_names, v, &x)) goto bad_value;
			r->method = x;
		} else if (!strcmp(o, "--attr")) {
			if (!LOOKUP(attr_names, v, &x)) goto bad_value;
			r->attr = x;
		} else if (!strcmp(o, "--mod")) {
			r->attr_mod = (int64_t)strtoul(v, &end, 0);
			if (*end) goto bad_value;
		} else if (!strcmp(o, "--jitter")) {
			r->jitter = (unsigned)strtoul(v, &end, 10);
			if (*end) goto bad_value;
		} else if (!strcmp(o, "--dir")) {
			if (!strcmp(v, "req"))
				r->direction = 0;
			else if (!strcmp(v, "resp"))
				r->direction = 1;
			else
				goto bad_value;
		} else if (!strcmp(o, "--slid") || !strcmp(o, "--dlid")) {
			long lid = strtol(v, &end, 0);

			if (*end || lid < 0 || lid > 0xffff) goto bad_value;
			*(o[2] == 's' ? &r->slid : &r->dlid) = (int)lid;
		} else if (!strcmp(o, "--tid")) {
			r->tid = (int64_t)(strtoull(v, &end, 0) & 0xffffffff);
			if (*end) goto bad_value;
		} else if (!strcmp(o, "--after") || !strcmp(o, "--before")) {
			/* Milliseconds from now, on the emulator's clock. */
			uint64_t t = strtoull(v, &end, 10) * 1000 +
				     (env->tq ? timerq_now(env->tq) : 0);

			if (*end) goto bad_value;
			*(o[2] == 'a' ? &r->after_us : &r->before_us) = t;
		} else if (!strcmp(o, "--prob")) {
			r->prob = g_ascii_strtod(v, &end);
			if (*end || r->prob < 0 || r->prob > 1) goto bad_value;
		} else if (!strcmp(o, "--count")) {
			r->count = (unsigned)strtoul(v, &end, 10);
			if (*end) goto bad_value;
		} else if (!strcmp(o, "--nth")) {
			r->nth = (unsigned)strtoul(v, &end, 10);
			if (*end) goto bad_value;
		} else
			goto usage;
		continue;
bad_value:
		g_free(r);
		return err(out, "error: bad value \"%s\" for %s", v ? v : argv[i], o);
	}
	fault_add(&env->fabric->faults, r);
	fault_log(&env->fabric->faults, "fault add %u %s", r->id, fault_action_name(r->action));
	g_string_append_printf(out, json ? "{\"id\": %u}\n" : "fault %u added\n", r->id);
	return 0;
usage:
	g_free(r);
	return err(out, "usage: fault add drop|delay MS [--jitter MS]|duplicate|reorder [MS]|"
		   "corrupt [BYTE]|status CODE [--node N] [--port P] [--class C] [--method M] "
		   "[--attr A] [--mod X] [--dr|--lid] [--dir req|resp] [--slid L] [--dlid L] "
		   "[--tid T] [--after MS] [--before MS] [--prob P] [--count N] [--nth N]");
}

static int cmd_fault_list(struct ctl_env *env, char **argv, bool json, GString *out)
{
	GPtrArray *rules = env->fabric->faults.rules;
	unsigned i;

	(void)argv;
	if (json)
		g_string_append(out, "[");
	for (i = 0; i < rules->len; i++) {
		struct fault_rule *r = g_ptr_array_index(rules, i);

		g_string_append_printf(out, json ?
				       "%s{\"id\": %u, \"action\": \"%s\", \"arg\": %u, \"node\": \"%s\", \"port\": %d, \"class\": %d, \"method\": %d, \"attr\": %d, \"prob\": %g, \"count\": %u, \"nth\": %u, \"matches\": %u, \"hits\": %u}" :
				       "%s%u %s %u node %s port %d class %d method %d attr %d prob %g count %u nth %u: matches %u hits %u\n",
				       json && i ? ", " : "", r->id, fault_action_name(r->action), r->arg,
				       r->node ? r->node->id : "*", r->port, r->mgmt_class, r->method,
				       r->attr, r->prob, r->count, r->nth, r->matches, r->hits);
	}
	if (json)
		g_string_append(out, "]\n");
	return 0;
}

static int cmd_fault_del(struct ctl_env *env, char **argv, bool json, GString *out)
{
	char *end;
	unsigned long id;

	(void)json;
	if (nargs(argv) != 3)
		return err(out, "usage: fault del ID");
	id = strtoul(argv[2], &end, 10);
	if (*end || !fault_del(&env->fabric->faults, (unsigned)id))
		return err(out, "error: no fault rule %s", argv[2]);
	fault_log(&env->fabric->faults, "fault del %lu", id);
	g_string_append_printf(out, "fault %lu deleted\n", id);
	return 0;
}

static int cmd_scenario(struct ctl_env *env, char **argv, bool json, GString *out)
{
	GError *e = NULL;
	struct scenario *sc;

	(void)json;
	if (nargs(argv) != 2)
		return err(out, "usage: scenario FILE");
	if (env->scenario_depth >= SCENARIO_MAX_DEPTH)
		return err(out, "error: scenarios started by scenarios %u deep: not starting %s",
			   SCENARIO_MAX_DEPTH, argv[1]);
	sc = scenario_load(argv[1], &e);
	if (!sc) {
		err(out, "error: %s", e->message);
		g_error_free(e);
		return -1;
	}
	g_string_append_printf(out, "scenario %s started (%u steps)\n", argv[1], scenario_steps(sc));
	scenario_start(sc, env);
	if (scenario_steps(sc))
		g_ptr_array_add(env->scenarios, sc);
	else
		scenario_free(sc);
	return 0;
}

static const struct ctl_cmd commands[] = {
	{ "status", NULL, cmd_status, "status" },
	{ "info", NULL, cmd_info, "info" },
	{ "nodes", NULL, cmd_nodes, "nodes" },
	{ "dump", NULL, cmd_dump, "dump [--dot]" },
	{ "seed", NULL, cmd_seed, "seed" },
	{ "pid", NULL, cmd_pid, "pid [init]" },
	{ "events", NULL, cmd_events, "events" },
	{ "link", "down", cmd_link, "link down NODE/PORT" },
	{ "link", "up", cmd_link, "link up NODE/PORT" },
	{ "port", "disable", cmd_port_phys, "port disable NODE/PORT" },
	{ "port", "enable", cmd_port_phys, "port enable NODE/PORT" },
	/* after its subcommands: the first entry that matches runs */
	{ "port", NULL, cmd_port, "port NODE/PORT" },
	{ "guid", NULL, cmd_guid, "guid NODE[/PORT] GUID" },
	{ "lid", NULL, cmd_lid, "lid NODE/PORT LID [LMC]" },
	{ "node", "off", cmd_node, "node off NODE" },
	{ "node", "on", cmd_node, "node on NODE" },
	{ "counters", NULL, cmd_counters, "counters NODE/PORT [set|bump FIELD N]" },
	{ "fault", "add", cmd_fault_add, "fault add ACTION ... (see ibemu ctl help)" },
	{ "fault", "list", cmd_fault_list, "fault list" },
	{ "fault", "del", cmd_fault_del, "fault del ID" },
	{ "scenario", NULL, cmd_scenario, "scenario FILE" },
};

int ctl_run(struct ctl_env *env, char **argv, GString *out)
{
	GPtrArray *args = g_ptr_array_new();
	bool json = false;
	unsigned i;
	int ret;

	for (i = 0; argv[i]; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			g_ptr_array_add(args, argv[i]);
	}
	g_ptr_array_add(args, NULL);
	argv = (char **)args->pdata;
	if (!argv[0] || !strcmp(argv[0], "help")) {
		ret = argv[0] ? 0 : -1;	/* argv is args' storage */
		for (i = 0; i < G_N_ELEMENTS(commands); i++)
			g_string_append_printf(out, "%s\n", commands[i].usage);
		g_ptr_array_free(args, TRUE);
		return ret;
	}
	for (i = 0; i < G_N_ELEMENTS(commands); i++) {
		const struct ctl_cmd *c = &commands[i];

		if (strcmp(c->name, argv[0]))
			continue;
		if (c->sub && (!argv[1] || strcmp(c->sub, argv[1])))
			continue;
		ret = c->fn(env, argv, json, out);
		g_ptr_array_free(args, TRUE);
		return ret;
	}
	ret = err(out, "error: unknown command \"%s%s%s\" (try: ibemu ctl help)", argv[0],
		  argv[1] ? " " : "", argv[1] ? argv[1] : "");
	g_ptr_array_free(args, TRUE);
	return ret;
}
